// png:DIR datasets: class folders become labels in sorted order; every PNG colour type and
// bit depth decodes to the model's channels; corrupt, cut-short, empty, wrong-size and
// not-PNG files each fail with their path and what is wrong, or, with skip_bad_samples,
// are left out and counted. The PNGs are written here with libpng.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset.h"

#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define WIDTH 3
#define HEIGHT 4

static char tmp_root[256];

// One image of one colour type and depth, every pixel the same stored sample `level`
// (of 2^depth - 1) in each colour channel, opaque.
typedef struct Kind {
    const char *name;
    int color_type, bit_depth;
    unsigned level;
    int expect;  // the 8-bit value it must decode to
} Kind;

static const Kind KINDS[] = {
    {"a_gray1", PNG_COLOR_TYPE_GRAY, 1, 1, 255},
    {"b_gray2", PNG_COLOR_TYPE_GRAY, 2, 2, 170},
    {"c_gray4", PNG_COLOR_TYPE_GRAY, 4, 5, 85},
    {"d_gray8", PNG_COLOR_TYPE_GRAY, 8, 77, 77},
    {"e_gray16", PNG_COLOR_TYPE_GRAY, 16, 257 * 200, 200},
    {"f_gray_alpha8", PNG_COLOR_TYPE_GRAY_ALPHA, 8, 90, 90},
    {"g_gray_alpha16", PNG_COLOR_TYPE_GRAY_ALPHA, 16, 257 * 10, 10},
    {"h_rgb8", PNG_COLOR_TYPE_RGB, 8, 33, 33},
    {"i_rgb16", PNG_COLOR_TYPE_RGB, 16, 257 * 99, 99},
    {"j_rgba8", PNG_COLOR_TYPE_RGB_ALPHA, 8, 140, 140},
    {"k_rgba16", PNG_COLOR_TYPE_RGB_ALPHA, 16, 257 * 250, 250},
    {"l_palette1", PNG_COLOR_TYPE_PALETTE, 1, 60, 60},
    {"m_palette2", PNG_COLOR_TYPE_PALETTE, 2, 61, 61},
    {"n_palette4", PNG_COLOR_TYPE_PALETTE, 4, 62, 62},
    {"o_palette8", PNG_COLOR_TYPE_PALETTE, 8, 63, 63},
};
#define KIND_COUNT ((int)(sizeof KINDS / sizeof KINDS[0]))

static int samples_per_pixel(int color_type) {
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    default: return 1;
    }
}

// Packs one row of samples at the kind's depth (big-endian for 16 bits, MSB-first below 8).
static void fill_row(const Kind *k, int width, png_bytep row) {
    int spp = samples_per_pixel(k->color_type), n = width * spp;
    unsigned max = (1u << k->bit_depth) - 1;
    int is_alpha_channel;
    memset(row, 0, (size_t)(n * k->bit_depth + 7) / 8);
    for (int i = 0; i < n; i++) {
        is_alpha_channel = (spp == 2 || spp == 4) && i % spp == spp - 1;
        unsigned v = k->color_type == PNG_COLOR_TYPE_PALETTE ? 0 : is_alpha_channel ? max
                                                                                  : k->level;
        if (k->bit_depth == 16) {
            row[2 * i] = (png_byte)(v >> 8);
            row[2 * i + 1] = (png_byte)v;
        } else if (k->bit_depth == 8) {
            row[i] = (png_byte)v;
        } else {
            int bit = i * k->bit_depth;
            row[bit / 8] |= (png_byte)(v << (8 - k->bit_depth - bit % 8));
        }
    }
}

static void write_png(const char *path, const Kind *k, int width, int height) {
    FILE *f = fopen(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep row = calloc((size_t)width * 8, 1);
    if (!f || !png || !info || !row || setjmp(png_jmpbuf(png))) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, k->bit_depth, k->color_type,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (k->color_type == PNG_COLOR_TYPE_PALETTE) {
        png_color palette[2] = {{(png_byte)k->level, (png_byte)k->level, (png_byte)k->level},
                                {0, 0, 0}};
        png_set_PLTE(png, info, palette, 2);
    }
    png_write_info(png, info);
    fill_row(k, width, row);
    for (int y = 0; y < height; y++) png_write_row(png, row);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    fclose(f);
}

static void make_folder(const char *path) {
    if (mkdir(path, 0700) != 0) {
        perror(path);
        exit(1);
    }
}

static void path_of(char *out, size_t size, const char *a, const char *b) {
    snprintf(out, size, "%s/%s", a, b);
}

// root/SPLIT/CLASS/image.png for every kind: one image per class.
static void write_split(const char *root, const char *split) {
    char folder[512], class_folder[768], file[1024];
    path_of(folder, sizeof folder, root, split);
    make_folder(folder);
    for (int i = 0; i < KIND_COUNT; i++) {
        path_of(class_folder, sizeof class_folder, folder, KINDS[i].name);
        make_folder(class_folder);
        path_of(file, sizeof file, class_folder, "image.png");
        write_png(file, &KINDS[i], WIDTH, HEIGHT);
    }
}

static void every_kind_decodes_to_the_models_channels(void) {
    char root[512];
    path_of(root, sizeof root, tmp_root, "kinds");
    make_folder(root);
    write_split(root, "train");
    write_split(root, "test");
    char spec[600];
    snprintf(spec, sizeof spec, "png:%s", root);
    for (int channels = 1; channels <= 3; channels += 2) {
        DatasetOptions options = {.channels = channels, .height = HEIGHT, .width = WIDTH};
        Status st;
        status_clear(&st);
        Dataset ds;
        int skipped = -1;
        CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, &skipped, &st), 0);
        if (st.code) fprintf(stderr, "  %s: %s\n", st.file, st.message);
        CHECK_INT_EQ(ds.count, KIND_COUNT);
        CHECK_INT_EQ(skipped, 0);
        CHECK_INT_EQ(ds.class_count, KIND_COUNT);
        size_t sample = dataset_sample_size(&ds);
        CHECK_INT_EQ(sample, (size_t)channels * WIDTH * HEIGHT);
        for (int i = 0; i < ds.count && i < KIND_COUNT; i++) {
            CHECK_INT_EQ(ds.labels[i], i);  // one class per kind, in sorted order
            CHECK(strcmp(ds.class_names[i], KINDS[i].name) == 0);
            for (size_t v = 0; v < sample; v++) {
                int got = ds.images[(size_t)i * sample + v];
                if (got != KINDS[i].expect)
                    fprintf(stderr, "  %s, %d channel(s), value %zu: %d, expected %d\n",
                            KINDS[i].name, channels, v, got, KINDS[i].expect);
                CHECK_NEAR(got, KINDS[i].expect, 1);  // luminance of gray RGB may round
            }
        }
        dataset_free(&ds);
        CHECK_INT_EQ(dataset_load_with(spec, "test", &options, &ds, &skipped, &st), 0);
        CHECK_INT_EQ(ds.count, KIND_COUNT);
        dataset_free(&ds);
    }
}

static void write_bytes(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n) exit(1);
    fclose(f);
}

static void read_file(const char *path, unsigned char **bytes, size_t *n) {
    FILE *f = fopen(path, "rb");
    *bytes = malloc(1 << 16);
    if (!f || !*bytes) exit(1);
    *n = fread(*bytes, 1, 1 << 16, f);
    fclose(f);
}

// A broken file of each kind, beside a good one, and the error it must give.
typedef struct Broken {
    const char *name;
    const char *message;
} Broken;

static const Broken BROKEN[] = {
    {"corrupt.png", "cannot decode PNG"},
    {"truncated.png", "unexpected end of file"},
    {"empty.png", "not a PNG file: only 0 bytes long"},
    {"wrong_size.png", "image is 5x5 pixels (WxH), but the model takes 3x4"},
    {"text.png", "does not start with the PNG signature"},
};
#define BROKEN_COUNT ((int)(sizeof BROKEN / sizeof BROKEN[0]))

static void write_broken(const char *folder, int which) {
    char good[1024], path[1024];
    path_of(good, sizeof good, folder, "good.png");
    path_of(path, sizeof path, folder, BROKEN[which].name);
    unsigned char *bytes = NULL;
    size_t n = 0;
    read_file(good, &bytes, &n);
    if (which == 0) {
        bytes[n - 20] ^= 0x55;  // inside the IDAT data: its CRC no longer matches
        write_bytes(path, bytes, n);
    } else if (which == 1) {
        write_bytes(path, bytes, n / 2);
    } else if (which == 2) {
        write_bytes(path, bytes, 0);
    } else if (which == 3) {
        write_png(path, &KINDS[3], 5, 5);
    } else {
        write_bytes(path, "just some text\n", 15);
    }
    free(bytes);
}

// root/train/x/good.png (+ the broken ones asked for).
static void write_bad_root(const char *root, int first, int last) {
    char train[512], folder[768], good[1024];
    make_folder(root);
    path_of(train, sizeof train, root, "train");
    make_folder(train);
    path_of(folder, sizeof folder, train, "x");
    make_folder(folder);
    path_of(good, sizeof good, folder, "good.png");
    write_png(good, &KINDS[3], WIDTH, HEIGHT);
    for (int i = first; i <= last; i++) write_broken(folder, i);
}

static void each_broken_file_fails_with_its_path(void) {
    for (int i = 0; i < BROKEN_COUNT; i++) {
        char root[512], spec[600];
        snprintf(root, sizeof root, "%s/broken%d", tmp_root, i);
        write_bad_root(root, i, i);
        snprintf(spec, sizeof spec, "png:%s", root);
        DatasetOptions options = {.channels = 1, .height = HEIGHT, .width = WIDTH};
        Status st;
        status_clear(&st);
        Dataset ds;
        CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.file, BROKEN[i].name);
        CHECK_CONTAINS(st.message, BROKEN[i].message);
        CHECK(st.hint[0] != '\0');
        CHECK(ds.images == NULL && ds.count == 0);
    }
}

static void skip_leaves_broken_files_out_and_counts_them(void) {
    char root[512], spec[600];
    snprintf(root, sizeof root, "%s/all_broken", tmp_root);
    write_bad_root(root, 0, BROKEN_COUNT - 1);
    snprintf(spec, sizeof spec, "png:%s", root);
    DatasetOptions options = {.channels = 3, .height = HEIGHT, .width = WIDTH,
                              .skip_bad_samples = 1};
    Status st;
    status_clear(&st);
    Dataset ds;
    int skipped = 0;
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, &skipped, &st), 0);
    CHECK_INT_EQ(ds.count, 1);
    CHECK_INT_EQ(skipped, BROKEN_COUNT);
    dataset_free(&ds);
}

static void one_folder_of_classes_has_no_test_split(void) {
    char root[512], spec[600];
    snprintf(root, sizeof root, "%s/flat", tmp_root);
    make_folder(root);
    write_split(root, "cats");  // root/cats/CLASS/image.png: classes are one level down
    snprintf(spec, sizeof spec, "png:%s/cats", root);
    CHECK(!dataset_has_test_split(spec));
    Status st;
    status_clear(&st);
    Dataset ds;
    DatasetOptions options = {0};  // the first image's size, 1 channel
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), 0);
    CHECK_INT_EQ(ds.count, KIND_COUNT);
    CHECK_INT_EQ(ds.width, WIDTH);
    CHECK_INT_EQ(ds.height, HEIGHT);
    dataset_free(&ds);
    CHECK_INT_EQ(dataset_load_with(spec, "test", &options, &ds, NULL, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "has no test split");
    CHECK_CONTAINS(st.hint, "--val-split");
}

static void missing_and_empty_folders_are_named(void) {
    char spec[600], root[512];
    Status st;
    Dataset ds;
    DatasetOptions options = {0};
    snprintf(spec, sizeof spec, "png:%s/nowhere", tmp_root);
    status_clear(&st);
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "nowhere");
    snprintf(root, sizeof root, "%s/empty", tmp_root);
    make_folder(root);
    snprintf(spec, sizeof spec, "png:%s", root);
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "no class folders");
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/trainer-test-png-folders-XXXXXX");
    if (!mkdtemp(tmp_root)) return 1;
    every_kind_decodes_to_the_models_channels();
    each_broken_file_fails_with_its_path();
    skip_leaves_broken_files_out_and_counts_them();
    one_folder_of_classes_has_no_test_split();
    missing_and_empty_folders_are_named();
    char command[400];
    snprintf(command, sizeof command, "rm -rf '%s'", tmp_root);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_exit_code("test_png_folders");
}
