// libFuzzer target for the walk of an image folder: images:DIR's class folders and files
// (data/dataset_png.c) and predict's folder arguments (data/predict_inputs.c). Folder and
// file names are bytes anyone chose. The input is the tree, one file a line: the line's
// first byte picks its content (a 2x2 gray PNG, a 2x2 colour PNG, a 3x2 gray PNG, or bytes
// that are no image), the rest is its path under DIR, at most 3 names deep ("." and ".."
// and empty names left out). The tree is read as images:DIR's train split in gray at the
// size most images have, its test split in colour at 2x2 with bad samples skipped, and as
// predict's folder. Whatever the names: no crash, no read outside them, no leak, a refusal
// is STATUS_BAD_INPUT in words with no raw escape byte, and an accepted split's labels are
// its class folders'.
#define _XOPEN_SOURCE 700  // nftw
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/dataset.h"
#include "data/image.h"
#include "data/predict_inputs.h"

enum { MAX_FILES = 12, MAX_DEPTH = 3 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b)) abort();
}

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *at) {
    (void)info, (void)flag, (void)at;
    remove(path);
    return 0;
}

// One file of the tree: `kind` picks what it holds.
static void write_file(const char *path, int kind) {
    static const uint8_t pixels[3 * 3 * 2] = {0, 64, 128, 255, 32, 96, 160, 224, 16, 48, 80, 112};
    Status st;
    status_clear(&st);
    if (kind == 3) {
        FILE *f = fopen(path, "wb");
        if (f) fputs("not an image", f), fclose(f);
        return;
    }
    int channels = kind == 1 ? 3 : 1, width = kind == 2 ? 3 : 2;
    image_write_png(path, channels, 2, width, pixels, &st);  // a folder there: passed over
}

// PATH (length bytes, no NUL) under root: its folders made, its file written.
static void add_path(const char *root, const uint8_t *path, size_t length, int kind) {
    char full[1024];
    size_t at = (size_t)snprintf(full, sizeof full, "%s", root);
    int depth = 0;
    for (size_t i = 0; i < length && depth < MAX_DEPTH;) {
        size_t end = i;
        while (end < length && path[end] != '/') end++;
        size_t n = end - i;
        int skip = n == 0 || (n == 1 && path[i] == '.') ||
                   (n == 2 && path[i] == '.' && path[i + 1] == '.') || n > 200;
        if (!skip) {
            if (at + 1 + n + 1 > sizeof full) return;
            if (depth) mkdir(full, 0700);  // the root exists; a file there: the write fails
            full[at++] = '/';
            memcpy(full + at, path + i, n);
            at += n;
            full[at] = '\0';
            depth++;
        }
        i = end + 1;
    }
    if (depth) write_file(full, kind);
}

static void check_split(const char *spec, const char *split, const DatasetOptions *options) {
    Dataset ds;
    memset(&ds, 0, sizeof ds);
    Status st;
    status_clear(&st);
    int skipped = 0;
    int rc = dataset_load_png(spec, split, options, &ds, &skipped, &st);
    if (rc) check_refusal(rc, &st);
    else if (ds.count <= 0 || ds.class_count <= 0 || ds.label_max >= ds.class_count) abort();
    dataset_free(&ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (memchr(data, '\0', size)) return 0;  // no name holds a NUL
    char root[256], spec[300];
    snprintf(root, sizeof root, "%s/tree", fuzz_dir());
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (mkdir(root, 0700) != 0) abort();
    int files = 0;
    for (size_t i = 0; i < size && files < MAX_FILES; files++) {
        size_t end = i;
        while (end < size && data[end] != '\n') end++;
        if (end > i) add_path(root, data + i + 1, end - i - 1, data[i] & 3);
        i = end + 1;
    }
    snprintf(spec, sizeof spec, "images:%s", root);
    DatasetOptions gray = {.channels = 1, .decode = DECODE_UPFRONT};
    DatasetOptions colour = {.channels = 3, .height = 2, .width = 2, .skip_bad_samples = 1,
                             .decode = DECODE_UPFRONT};
    check_split(spec, "train", &gray);
    check_split(spec, "test", &colour);
    InputList list;
    memset(&list, 0, sizeof list);
    Status st;
    status_clear(&st);
    const char *names[] = {root};
    int rc = predict_collect_inputs(names, 1, &list, &st);
    if (rc) check_refusal(rc, &st);
    else if (list.count <= 0) abort();
    input_list_free(&list);
    return 0;
}
