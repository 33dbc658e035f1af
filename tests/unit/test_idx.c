// IDX readers and dataset_load: good files read back exactly, and every kind of bad
// file (wrong magic, wrong kind, zero dimension, short or long payload, short header,
// corrupted gzip, missing file or folder, mismatched counts, unknown spec) is
// STATUS_BAD_INPUT naming the file, what was expected and what was found.
//
// The test writes its own small files under a fresh /tmp folder, so it needs no dataset
// installed; the real Fashion-MNIST is checked only when it is there.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmp_root[256];

// ---- file helpers ------------------------------------------------------------------

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void write_file(const char *path, const uint8_t *bytes, size_t n, int gzip) {
    if (gzip) {
        gzFile gz = gzopen(path, "wb");
        CHECK(gz != NULL);
        if (!gz) return;
        if (n) CHECK_INT_EQ(gzwrite(gz, bytes, (unsigned)n), n);
        CHECK_INT_EQ(gzclose(gz), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (!f) return;
        if (n) CHECK_INT_EQ(fwrite(bytes, 1, n, f), n);
        fclose(f);
    }
}

// The pixel or label value at byte i of a payload: varied, and easy to check.
static uint8_t pattern(size_t i, int modulo) { return (uint8_t)((i * 7 + 3) % (size_t)modulo); }

// An images file: a 16-byte header for count x rows x cols, then `payload` bytes of the
// pattern (pass count*rows*cols for a well-formed file).
static size_t make_images(uint8_t *buf, uint32_t magic, uint32_t count, uint32_t rows,
                          uint32_t cols, size_t payload) {
    put_be32(buf, magic);
    put_be32(buf + 4, count);
    put_be32(buf + 8, rows);
    put_be32(buf + 12, cols);
    for (size_t i = 0; i < payload; i++) buf[16 + i] = pattern(i, 256);
    return 16 + payload;
}

static size_t make_labels(uint8_t *buf, uint32_t magic, uint32_t count, size_t payload,
                          int classes) {
    put_be32(buf, magic);
    put_be32(buf + 4, count);
    for (size_t i = 0; i < payload; i++) buf[8 + i] = pattern(i, classes);
    return 8 + payload;
}

static void path_in(char *out, size_t size, const char *dir, const char *name) {
    snprintf(out, size, "%s/%s", dir, name);
}

static void make_dir(const char *path) { CHECK_INT_EQ(mkdir(path, 0700), 0); }

// Removes the test's folder tree; it holds only what this test wrote.
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char child[512];
        path_in(child, sizeof child, path, e->d_name);
        struct stat sb;
        if (lstat(child, &sb) == 0 && S_ISDIR(sb.st_mode)) remove_tree(child);
        else unlink(child);
    }
    closedir(d);
    rmdir(path);
}

// Reads `path` as images expecting failure; checks the code, the file and the message.
static void expect_images_error(const char *path, const char *message, const char *hint) {
    Status st;
    status_clear(&st);
    uint8_t *pixels = (uint8_t *)1;
    int count = -1, rows = -1, cols = -1;
    int rc = idx_read_images(path, &pixels, &count, &rows, &cols, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, path);
    CHECK_CONTAINS(st.message, message);
    if (hint) CHECK_CONTAINS(st.hint, hint);
    CHECK(st.hint[0] != '\0');
    CHECK(pixels == NULL);
    CHECK_INT_EQ(count, 0);
}

static void expect_labels_error(const char *path, const char *message, const char *hint) {
    Status st;
    status_clear(&st);
    uint8_t *labels = (uint8_t *)1;
    int count = -1;
    int rc = idx_read_labels(path, &labels, &count, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, path);
    CHECK_CONTAINS(st.message, message);
    if (hint) CHECK_CONTAINS(st.hint, hint);
    CHECK(st.hint[0] != '\0');
    CHECK(labels == NULL);
    CHECK_INT_EQ(count, 0);
}

// ---- the readers on good files -----------------------------------------------------

static void good_images_read_back_exactly(int gzip) {
    uint8_t buf[16 + 3 * 4 * 5];
    size_t n = make_images(buf, 0x803, 3, 4, 5, 3 * 4 * 5);
    char path[512];
    path_in(path, sizeof path, tmp_root, gzip ? "good-images.gz" : "good-images");
    write_file(path, buf, n, gzip);

    Status st;
    status_clear(&st);
    uint8_t *pixels = NULL;
    int count = 0, rows = 0, cols = 0;
    CHECK_INT_EQ(idx_read_images(path, &pixels, &count, &rows, &cols, &st), 0);
    CHECK_INT_EQ(count, 3);
    CHECK_INT_EQ(rows, 4);
    CHECK_INT_EQ(cols, 5);
    int mismatches = 0;
    for (size_t i = 0; pixels && i < 60; i++) mismatches += pixels[i] != pattern(i, 256);
    CHECK(pixels != NULL);
    CHECK_INT_EQ(mismatches, 0);
    free(pixels);
}

static void good_labels_read_back_exactly(int gzip) {
    uint8_t buf[8 + 7];
    size_t n = make_labels(buf, 0x801, 7, 7, 10);
    char path[512];
    path_in(path, sizeof path, tmp_root, gzip ? "good-labels.gz" : "good-labels");
    write_file(path, buf, n, gzip);

    Status st;
    status_clear(&st);
    uint8_t *labels = NULL;
    int count = 0;
    CHECK_INT_EQ(idx_read_labels(path, &labels, &count, &st), 0);
    CHECK_INT_EQ(count, 7);
    int mismatches = 0;
    for (size_t i = 0; labels && i < 7; i++) mismatches += labels[i] != pattern(i, 10);
    CHECK(labels != NULL);
    CHECK_INT_EQ(mismatches, 0);
    free(labels);
}

// A payload big enough that the reader has to grow its buffer several times.
static void large_gzip_images_read_back_exactly(void) {
    const uint32_t count = 3000, side = 28;
    size_t payload = (size_t)count * side * side;
    uint8_t *buf = malloc(16 + payload);
    CHECK(buf != NULL);
    if (!buf) return;
    size_t n = make_images(buf, 0x803, count, side, side, payload);
    char path[512];
    path_in(path, sizeof path, tmp_root, "large-images.gz");
    write_file(path, buf, n, 1);
    free(buf);

    Status st;
    status_clear(&st);
    uint8_t *pixels = NULL;
    int got_count = 0, rows = 0, cols = 0;
    CHECK_INT_EQ(idx_read_images(path, &pixels, &got_count, &rows, &cols, &st), 0);
    CHECK_INT_EQ(got_count, 3000);
    int mismatches = 0;
    for (size_t i = 0; pixels && i < payload; i++) mismatches += pixels[i] != pattern(i, 256);
    CHECK_INT_EQ(mismatches, 0);
    free(pixels);
}

// ---- the readers on bad files ------------------------------------------------------

static void bad_magic_is_rejected(void) {
    uint8_t buf[16 + 4];
    size_t n = make_images(buf, 0x12345678u, 1, 2, 2, 4);
    char path[512];
    path_in(path, sizeof path, tmp_root, "bad-magic");
    write_file(path, buf, n, 0);
    expect_images_error(path, "not an IDX image file: magic 0x12345678, expected 0x00000803",
                        "not an IDX file");

    // Written little-endian by a careless tool.
    n = make_images(buf, 0x03080000u, 1, 2, 2, 4);
    write_file(path, buf, n, 0);
    expect_images_error(path, "magic 0x03080000", "little-endian");

    // A float IDX file: right layout, unsupported element type.
    n = make_images(buf, 0x00000D03u, 1, 2, 2, 4);
    write_file(path, buf, n, 0);
    expect_images_error(path, "magic 0x00000d03", "element type 0x0d");
}

static void labels_passed_as_images_is_named(void) {
    uint8_t buf[8 + 5];
    size_t n = make_labels(buf, 0x801, 5, 5, 10);
    char path[512];
    path_in(path, sizeof path, tmp_root, "train-labels-idx1-ubyte");
    write_file(path, buf, n, 0);
    expect_images_error(path, "not an IDX image file: magic 0x00000801, expected 0x00000803",
                        "this looks like a label file; check the file name");
}

static void images_passed_as_labels_is_named(void) {
    uint8_t buf[16 + 4];
    size_t n = make_images(buf, 0x803, 1, 2, 2, 4);
    char path[512];
    path_in(path, sizeof path, tmp_root, "train-images-idx3-ubyte");
    write_file(path, buf, n, 0);
    expect_labels_error(path, "not an IDX label file: magic 0x00000803, expected 0x00000801",
                        "this looks like an image file");
}

static void zero_or_absurd_dimensions_are_rejected(void) {
    uint8_t buf[16 + 4];
    char path[512];
    path_in(path, sizeof path, tmp_root, "zero-dim");

    size_t n = make_images(buf, 0x803, 1, 0, 4, 0);
    write_file(path, buf, n, 0);
    expect_images_error(path, "images of 0 rows by 4 columns (each must be 1 to 4096)", NULL);

    n = make_images(buf, 0x803, 0, 2, 2, 4);
    write_file(path, buf, n, 0);
    expect_images_error(path, "image count 0 is zero", NULL);

    n = make_images(buf, 0x803, 1, 2, 5000, 4);
    write_file(path, buf, n, 0);
    expect_images_error(path, "images of 2 rows by 5000 columns", NULL);

    // A count that would need terabytes must fail on the count, not on malloc.
    n = make_images(buf, 0x803, 0xFFFFFFFFu, 4096, 4096, 4);
    write_file(path, buf, n, 0);
    expect_images_error(path, "image count 4294967295 is implausibly large", NULL);

    n = make_labels(buf, 0x801, 0, 0, 10);
    write_file(path, buf, n, 0);
    expect_labels_error(path, "label count 0 is zero", NULL);
}

static void truncated_payload_says_expected_and_found(void) {
    uint8_t buf[16 + 60];
    size_t n = make_images(buf, 0x803, 3, 4, 5, 10);
    char path[512];
    path_in(path, sizeof path, tmp_root, "truncated-images");
    write_file(path, buf, n, 0);
    expect_images_error(path,
                        "truncated: header says 3 images of 4x5 (60 bytes) but the file "
                        "holds 10 bytes",
                        "re-install or re-download the dataset");

    // The largest plausible header with a tiny payload: must not try to allocate it all.
    n = make_images(buf, 0x803, 10000000, 4096, 4096, 8);
    write_file(path, buf, n, 0);
    expect_images_error(path, "(167772160000000 bytes) but the file holds 8 bytes", NULL);

    n = make_labels(buf, 0x801, 100, 7, 10);
    write_file(path, buf, n, 1);
    expect_labels_error(path, "truncated: header says 100 labels (100 bytes) but the file "
                              "holds 7 bytes", NULL);
}

static void trailing_bytes_are_rejected(void) {
    uint8_t buf[16 + 65];
    size_t n = make_images(buf, 0x803, 3, 4, 5, 65);
    char path[512];
    path_in(path, sizeof path, tmp_root, "long-images");
    write_file(path, buf, n, 0);
    expect_images_error(path, "header says 3 images of 4x5 (60 bytes) but the file holds 5 "
                              "more bytes", NULL);

    n = make_labels(buf, 0x801, 3, 4, 10);
    write_file(path, buf, n, 1);
    expect_labels_error(path, "trailing data: header says 3 labels (3 bytes) but the file "
                              "holds 1 more byte after them", NULL);
}

static void truncated_header_is_rejected(void) {
    const uint8_t three[3] = {0, 0, 8};
    char path[512];
    path_in(path, sizeof path, tmp_root, "short-header");
    write_file(path, three, sizeof three, 0);
    expect_images_error(path, "truncated header: an IDX image file starts with a 16-byte "
                              "header but the file holds only 3 bytes",
                        "re-download");

    // Right magic, then the file ends inside the dimensions.
    uint8_t buf[16 + 4];
    make_images(buf, 0x803, 1, 2, 2, 4);
    write_file(path, buf, 10, 0);
    expect_images_error(path, "16-byte header but the file holds only 10 bytes", NULL);

    write_file(path, buf, 0, 0);
    expect_labels_error(path, "8-byte header but the file holds only 0 bytes", "empty");
}

static void corrupted_gzip_reports_zlib_message(void) {
    // A valid gzip header (magic, deflate, no flags, mtime, xfl, OS) followed by bytes
    // that are not deflate data: 0xFF starts a block of the reserved type 3.
    uint8_t bad[32] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03};
    for (size_t i = 10; i < sizeof bad; i++) bad[i] = 0xFF;
    char path[512];
    path_in(path, sizeof path, tmp_root, "corrupt.gz");
    write_file(path, bad, sizeof bad, 0);
    expect_images_error(path, "corrupted gzip stream", "re-download");
    expect_images_error(path, "invalid block type", NULL);

    // A good gzip file cut in half: zlib reports the unexpected end.
    uint8_t buf[16 + 400];
    size_t n = make_images(buf, 0x803, 4, 10, 10, 400);
    path_in(path, sizeof path, tmp_root, "whole.gz");
    write_file(path, buf, n, 1);
    FILE *f = fopen(path, "rb");
    uint8_t gz[1024];
    size_t gz_len = f ? fread(gz, 1, sizeof gz, f) : 0;
    if (f) fclose(f);
    CHECK(gz_len > 40);
    path_in(path, sizeof path, tmp_root, "cut.gz");
    write_file(path, gz, gz_len / 2, 0);
    expect_images_error(path, "truncated gzip stream: zlib says 'unexpected end of file'",
                        "re-download");
}

static void missing_file_and_folder_are_named(void) {
    char path[512];
    path_in(path, sizeof path, tmp_root, "no-such-file");
    expect_images_error(path, "cannot open: No such file or directory", NULL);
    expect_labels_error(path, "cannot open: No such file or directory", NULL);
    expect_images_error(tmp_root, "is a directory", NULL);
}

// ---- dataset_load -------------------------------------------------------------------

// Writes an idx:DIR folder: train has `train_images`/`train_labels` samples (raw files),
// test has 5 of each (gzip files), all 3x4 images with labels below `classes`.
static void make_idx_folder(const char *dir, uint32_t train_images, uint32_t train_labels,
                            int classes) {
    uint8_t buf[16 + 64 * 12];
    char path[512];
    make_dir(dir);
    size_t n = make_images(buf, 0x803, train_images, 3, 4, (size_t)train_images * 12);
    path_in(path, sizeof path, dir, "train-images-idx3-ubyte");
    write_file(path, buf, n, 0);
    n = make_labels(buf, 0x801, train_labels, train_labels, classes);
    path_in(path, sizeof path, dir, "train-labels-idx1-ubyte");
    write_file(path, buf, n, 0);
    n = make_images(buf, 0x803, 5, 3, 4, 5 * 12);
    path_in(path, sizeof path, dir, "t10k-images-idx3-ubyte.gz");
    write_file(path, buf, n, 1);
    n = make_labels(buf, 0x801, 5, 5, classes);
    path_in(path, sizeof path, dir, "t10k-labels-idx1-ubyte.gz");
    write_file(path, buf, n, 1);
}

static void idx_folder_loads_both_splits(void) {
    char dir[512], spec[600];
    path_in(dir, sizeof dir, tmp_root, "good-folder");
    make_idx_folder(dir, 40, 40, 10);
    snprintf(spec, sizeof spec, "idx:%s", dir);

    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load(spec, "train", &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 40);
    CHECK_INT_EQ(ds.channels, 1);
    CHECK_INT_EQ(ds.height, 3);
    CHECK_INT_EQ(ds.width, 4);
    CHECK_INT_EQ(ds.label_max, 9);
    CHECK_CONTAINS(ds.source, dir);
    CHECK(ds.images && ds.images[13] == pattern(13, 256));
    CHECK(ds.labels && ds.labels[6] == pattern(6, 10));

    // Truncation keeps the prefix and label_max follows what is left: labels start
    // 3, 0, 7, 4, ...
    dataset_truncate(&ds, 3);
    CHECK_INT_EQ(ds.count, 3);
    CHECK_INT_EQ(ds.label_max, 7);
    dataset_truncate(&ds, 0);
    CHECK_INT_EQ(ds.count, 3);
    dataset_truncate(&ds, 99);
    CHECK_INT_EQ(ds.count, 3);
    dataset_free(&ds);
    CHECK(ds.images == NULL && ds.labels == NULL && ds.count == 0);
    dataset_free(&ds);  // freeing twice is harmless

    CHECK_INT_EQ(dataset_load(spec, "test", &ds, &st), 0);  // the .gz pair
    CHECK_INT_EQ(ds.count, 5);
    dataset_free(&ds);
}

// What on_notice heard: the count and the last line.
typedef struct Notices {
    int count;
    char last[1024];
} Notices;

static void hear_notice(void *user, const char *line) {
    Notices *heard = user;
    heard->count++;
    snprintf(heard->last, sizeof heard->last, "%s", line);
}

// A folder holding FILE and FILE.gz reads FILE; when the .gz unpacks to another size (its
// gzip trailer says, nothing is inflated) on_notice hears which one is read.
static void raw_and_gz_twins_read_the_raw_file(void) {
    char dir[512], spec[600], path[600];
    path_in(dir, sizeof dir, tmp_root, "twins-folder");
    make_idx_folder(dir, 40, 40, 10);
    snprintf(spec, sizeof spec, "idx:%s", dir);
    uint8_t buf[16 + 64 * 12];
    size_t n = make_images(buf, 0x803, 40, 3, 4, 40 * 12);
    path_in(path, sizeof path, dir, "train-images-idx3-ubyte.gz");
    write_file(path, buf, n, 1);

    Notices heard = {0};
    DatasetOptions options = {.on_notice = hear_notice, .notice_user = &heard};
    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), 0);
    CHECK_INT_EQ(heard.count, 0);  // the same size: nothing to say
    dataset_free(&ds);

    n = make_images(buf, 0x803, 64, 3, 4, 64 * 12);
    write_file(path, buf, n, 1);
    CHECK_INT_EQ(dataset_load_with(spec, "train", &options, &ds, NULL, &st), 0);
    CHECK_INT_EQ(ds.count, 40);  // the raw file's
    CHECK_INT_EQ(heard.count, 1);
    CHECK_CONTAINS(heard.last, dir);
    CHECK_CONTAINS(heard.last, "holds train-images-idx3-ubyte (496 bytes) and "
                               "train-images-idx3-ubyte.gz, which unpacks to 784 bytes: "
                               "train-images-idx3-ubyte is read");
    dataset_free(&ds);
    // No listener: the same load, nothing to tell.
    CHECK_INT_EQ(dataset_load(spec, "train", &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 40);
    dataset_free(&ds);
}

static void count_mismatch_names_both_files(void) {
    char dir[512], spec[600];
    path_in(dir, sizeof dir, tmp_root, "mismatch-folder");
    make_idx_folder(dir, 40, 39, 10);
    snprintf(spec, sizeof spec, "idx:%s", dir);

    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load(spec, "train", &ds, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "train-images-idx3-ubyte");
    CHECK_CONTAINS(st.message, "image and label counts differ");
    CHECK_CONTAINS(st.message, "train-images-idx3-ubyte holds 40 images");
    CHECK_CONTAINS(st.message, "train-labels-idx1-ubyte holds 39 labels");
    CHECK(ds.images == NULL && ds.labels == NULL);
    dataset_free(&ds);
}

// Two names that could both be the training images: the error names both, each escaped
// (a folder's names are anyone's bytes; an ESC in one would drive the terminal).
static void ambiguous_names_are_escaped(void) {
    char dir[512], spec[600], path[600];
    path_in(dir, sizeof dir, tmp_root, "ambiguous-folder");
    make_idx_folder(dir, 40, 40, 10);
    uint8_t buf[16 + 40 * 12];
    size_t n = make_images(buf, 0x803, 40, 3, 4, 40 * 12);
    path_in(path, sizeof path, dir, "x\033[1mtrain-images-idx3-ubyte");
    write_file(path, buf, n, 0);
    snprintf(spec, sizeof spec, "idx:%s", dir);
    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load(spec, "train", &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "two files could be the training images");
    CHECK_CONTAINS(st.message, "x\\x1b[1mtrain-images-idx3-ubyte");
    CHECK(strchr(st.message, '\033') == NULL);
    dataset_free(&ds);
}

static void bad_file_inside_folder_is_named(void) {
    char dir[512], spec[600], path[600];
    path_in(dir, sizeof dir, tmp_root, "broken-folder");
    make_idx_folder(dir, 4, 4, 10);
    snprintf(spec, sizeof spec, "idx:%s", dir);

    // Test labels missing altogether.
    path_in(path, sizeof path, dir, "t10k-labels-idx1-ubyte.gz");
    unlink(path);
    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load(spec, "test", &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, "t10k-labels-idx1-ubyte");
    CHECK_CONTAINS(st.message, "missing t10k-labels-idx1-ubyte (or t10k-labels-idx1-ubyte.gz)");
    CHECK_CONTAINS(st.hint, "train-images-idx3-ubyte");

    // Train images truncated: the reader's error comes through with the file's name.
    uint8_t buf[16 + 8];
    size_t n = make_images(buf, 0x803, 4, 3, 4, 8);
    path_in(path, sizeof path, dir, "train-images-idx3-ubyte");
    write_file(path, buf, n, 0);
    status_clear(&st);
    CHECK_INT_EQ(dataset_load(spec, "train", &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.file, path);
    CHECK_CONTAINS(st.message, "truncated: header says 4 images of 3x4 (48 bytes)");
    CHECK(ds.images == NULL);
}

static void expect_load_error(const char *spec, const char *split, const char *file,
                              const char *message, const char *hint) {
    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load(spec, split, &ds, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    if (file) CHECK_CONTAINS(st.file, file);
    CHECK_CONTAINS(st.message, message);
    if (hint) CHECK_CONTAINS(st.hint, hint);
    CHECK(ds.images == NULL && ds.labels == NULL && ds.count == 0);
}

static void unknown_spec_and_split_are_explained(void) {
    expect_load_error("fashion_mnist", "train", NULL,
                      "unknown dataset 'fashion_mnist'; expected 'fashion-mnist', 'idx:DIR'",
                      "did you mean 'fashion-mnist'?");
    expect_load_error("Fashion-MNIST", "train", NULL, "unknown dataset",
                      "did you mean 'fashion-mnist'?");
    expect_load_error("cifar10", "train", NULL, "unknown dataset 'cifar10'",
                      "idx:DIR");
    expect_load_error("mnist", "test", NULL, "unknown dataset 'mnist'", "idx:DIR");
    expect_load_error("idx=/data/mnist", "train", NULL, "unknown dataset",
                      "did you mean 'idx:/data/mnist'?");
    expect_load_error(tmp_root, "train", NULL, "unknown dataset", "pass --data idx:");
    expect_load_error("", "train", NULL, "no dataset given", NULL);
    expect_load_error("idx:", "train", NULL, "names no folder", NULL);
    expect_load_error("fashion-mnist", "validation", NULL,
                      "unknown split 'validation'; expected 'train' or 'test'", NULL);
    expect_load_error("fashion-mnist", "tset", NULL, "unknown split", "did you mean 'test'?");
}

static void missing_folders_are_explained(void) {
    char dir[512], spec[600];
    path_in(dir, sizeof dir, tmp_root, "no-such-folder");
    snprintf(spec, sizeof spec, "idx:%s", dir);
    expect_load_error(spec, "train", dir, "cannot open the dataset folder: No such file", "t10k-images");

    char file[512];
    path_in(file, sizeof file, tmp_root, "a-file");
    write_file(file, (const uint8_t *)"x", 1, 0);
    snprintf(spec, sizeof spec, "idx:%s", file);
    expect_load_error(spec, "test", file, "idx: expects a folder, but this is a file", NULL);

    const char *saved = getenv("TRAINER_FASHION_MNIST_DIR");
    char saved_copy[512] = "";
    if (saved) snprintf(saved_copy, sizeof saved_copy, "%s", saved);
    setenv("TRAINER_FASHION_MNIST_DIR", "/nonexistent", 1);
    expect_load_error("fashion-mnist", "train", "/nonexistent",
                      "Fashion-MNIST not found in /nonexistent",
                      "apt-get install dataset-fashion-mnist (or pass --data idx:DIR)");

    // The override also serves as a way to point at a copy elsewhere.
    char good[512];
    path_in(good, sizeof good, tmp_root, "fashion-copy");
    make_idx_folder(good, 8, 8, 10);
    setenv("TRAINER_FASHION_MNIST_DIR", good, 1);
    Status st;
    status_clear(&st);
    Dataset ds;
    CHECK_INT_EQ(dataset_load("fashion-mnist", "train", &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 8);
    dataset_free(&ds);

    if (saved_copy[0]) setenv("TRAINER_FASHION_MNIST_DIR", saved_copy, 1);
    else unsetenv("TRAINER_FASHION_MNIST_DIR");
}

static void real_fashion_mnist_test_split_loads(void) {
    const char *env = getenv("TRAINER_FASHION_MNIST_DIR");
    const char *dir = env && env[0] ? env : "/usr/share/datasets/fashion-mnist";
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        fprintf(stderr, "test_idx: note: %s absent; skipping the real Fashion-MNIST check\n",
                dir);
        return;
    }
    Status st;
    status_clear(&st);
    Dataset ds;
    int rc = dataset_load("fashion-mnist", "test", &ds, &st);
    if (rc) fprintf(stderr, "test_idx: %s: %s (%s)\n", st.file, st.message, st.hint);
    CHECK_INT_EQ(rc, 0);
    CHECK_INT_EQ(ds.count, 10000);
    CHECK_INT_EQ(ds.channels, 1);
    CHECK_INT_EQ(ds.height, 28);
    CHECK_INT_EQ(ds.width, 28);
    CHECK_INT_EQ(ds.label_max, 9);
    dataset_free(&ds);
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/trainer-test-idx-XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    good_images_read_back_exactly(0);
    good_images_read_back_exactly(1);
    good_labels_read_back_exactly(0);
    good_labels_read_back_exactly(1);
    large_gzip_images_read_back_exactly();
    bad_magic_is_rejected();
    labels_passed_as_images_is_named();
    images_passed_as_labels_is_named();
    zero_or_absurd_dimensions_are_rejected();
    truncated_payload_says_expected_and_found();
    trailing_bytes_are_rejected();
    truncated_header_is_rejected();
    corrupted_gzip_reports_zlib_message();
    missing_file_and_folder_are_named();
    idx_folder_loads_both_splits();
    raw_and_gz_twins_read_the_raw_file();
    count_mismatch_names_both_files();
    bad_file_inside_folder_is_named();
    ambiguous_names_are_escaped();
    unknown_spec_and_split_are_explained();
    missing_folders_are_explained();
    real_fashion_mnist_test_split_loads();
    remove_tree(tmp_root);
    return test_exit_code("test_idx");
}
