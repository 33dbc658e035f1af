// The PNG writer and `trainer data export`'s library half: gray and RGB images come back
// from png_read_sample byte for byte; class folders are named so that png:DIR gives every
// label back (class names after the label, every folder made even when empty); a folder
// that is not empty is refused unless forced; what cannot be written names its file.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset_export.h"
#include "data/image.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

static char tmp_root[256];

static void written_images_read_back_exactly(void) {
    enum { W = 5, H = 3 };
    uint8_t rgb[H * W * 3];
    for (int i = 0; i < H * W * 3; i++) rgb[i] = (uint8_t)(i * 37 + 11);
    char path[512];
    Status st;
    status_clear(&st);
    float out[3 * H * W];
    for (int channels = 1; channels <= 3; channels += 2) {
        snprintf(path, sizeof path, "%s/image%d.png", tmp_root, channels);
        CHECK_INT_EQ(image_write_png(path, channels, H, W, rgb, &st), 0);
        CHECK_INT_EQ(png_read_sample(path, channels, H, W, out, &st), 0);
        // The file holds rows of interleaved samples; the reader gives channel planes.
        for (int p = 0; p < H * W; p++)
            for (int c = 0; c < channels; c++)
                CHECK_INT_EQ(lrintf(out[c * H * W + p] * 255.0f), rgb[p * channels + c]);
    }
    CHECK_INT_EQ(image_write_png(path, 2, H, W, rgb, &st), STATUS_BAD_INPUT);
    snprintf(path, sizeof path, "%s/no/such/folder/x.png", tmp_root);
    CHECK_INT_EQ(image_write_png(path, 1, H, W, rgb, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "no/such/folder/x.png");
}

static void folders_sort_in_label_order(void) {
    Dataset ds = {0};
    static ExportFolders folders;
    dataset_export_folders("fashion-mnist", &ds, 3, &folders);
    CHECK_INT_EQ(folders.count, 10);  // every class, though only 0-3 are present
    CHECK(strcmp(folders.names[0], "0_T-shirt_top") == 0);
    CHECK(strcmp(folders.names[9], "9_Ankle_boot") == 0);
    dataset_export_folders("cifar10:/x", &ds, 9, &folders);
    CHECK(strcmp(folders.names[1], "1_automobile") == 0);
    dataset_export_folders("idx:/x", &ds, 12, &folders);
    CHECK_INT_EQ(folders.count, 13);
    CHECK(strcmp(folders.names[2], "02") == 0);  // "2" would sort after "12"
    CHECK(strcmp(folders.names[12], "12") == 0);
    char names[2][64] = {"cat", "dog"};
    ds.class_names = names;
    ds.class_count = 2;
    dataset_export_folders("png:/x", &ds, 1, &folders);
    CHECK_INT_EQ(folders.count, 2);
    CHECK(strcmp(folders.names[1], "dog") == 0);  // a png: source keeps its own names
}

// Six 3x2x2 samples of labels 2, 0, 1, 2, 0, 1 in an idx:-like dataset with 3 classes.
static void an_export_reads_back_with_its_labels(void) {
    enum { COUNT = 6, SAMPLE = 3 * 2 * 2 };
    uint8_t images[COUNT * SAMPLE], labels[COUNT] = {2, 0, 1, 2, 0, 1};
    for (int i = 0; i < COUNT * SAMPLE; i++) images[i] = (uint8_t)(i * 5);
    Dataset ds = {.count = COUNT, .channels = 3, .height = 2, .width = 2, .images = images,
                  .labels = labels, .label_max = 2};
    snprintf(ds.source, sizeof ds.source, "test");
    char dir[512], spec[600];
    snprintf(dir, sizeof dir, "%s/export", tmp_root);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(dataset_export_prepare(dir, 0, &st), 0);
    static ExportFolders folders;
    dataset_export_folders("idx:/x", &ds, 2, &folders);
    CHECK_INT_EQ(dataset_export_split(&ds, &folders, dir, NULL, NULL, &st), 0);
    CHECK_INT_EQ(dataset_export_prepare(dir, 0, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "not empty");
    CHECK_INT_EQ(dataset_export_prepare(dir, 1, &st), 0);

    snprintf(spec, sizeof spec, "png:%s", dir);
    DatasetOptions options = {.channels = 3, .height = 2, .width = 2};
    Dataset back;
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &back, NULL, &st), 0);
    if (back.count != COUNT) {
        CHECK_INT_EQ(back.count, COUNT);
        return;
    }
    // png: reads class by class, each in index order: samples 1, 4, 2, 5, 0, 3.
    const int order[COUNT] = {1, 4, 2, 5, 0, 3};
    for (int i = 0; i < COUNT; i++) {
        CHECK_INT_EQ(back.labels[i], labels[order[i]]);
        CHECK(memcmp(back.images + i * SAMPLE, images + order[i] * SAMPLE, SAMPLE) == 0);
    }
    dataset_free(&back);

    ds.features = (float *)images;  // a csv: dataset holds features: refused
    CHECK_INT_EQ(dataset_export_split(&ds, &folders, dir, NULL, NULL, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "not images");
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/trainer-test-export-XXXXXX");
    if (!mkdtemp(tmp_root)) return 1;
    written_images_read_back_exactly();
    folders_sort_in_label_order();
    an_export_reads_back_with_its_labels();
    char command[400];
    snprintf(command, sizeof command, "rm -rf '%s'", tmp_root);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_exit_code("test_dataset_export");
}
