// Named datasets: turn a --data spec and a split into a Dataset in host memory.
//
// The spec is user input typed on a command line, so a near miss gets a suggestion and
// a missing dataset gets the command that installs it.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"
#include "base/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define FASHION_MNIST_ENV "TRAINER_FASHION_MNIST_DIR"
#define FASHION_MNIST_HINT \
    "install it: apt-get install dataset-fashion-mnist (or pass --data idx:DIR)"
#define IDX_FOLDER_HINT                                                                  \
    "an idx:DIR folder must hold train-images-idx3-ubyte, train-labels-idx1-ubyte, "    \
    "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each optionally ending in .gz"

static int is_directory(const char *path, int *err) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        *err = errno;
        return 0;
    }
    *err = S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
    return *err == 0;
}

static int starts_with_ignoring_case(const char *s, const char *prefix) {
    for (; *prefix; s++, prefix++)
        if (tolower((unsigned char)*s) != *prefix) return 0;
    return 1;
}

static int fail_unknown_spec(const char *spec, Status *st) {
    status_fail(st, STATUS_BAD_INPUT,
                "unknown dataset '%s'; expected 'fashion-mnist' or 'idx:DIR'", spec);
    int err = 0;
    if (suggest_is_near_miss(spec, "fashion-mnist")) {
        status_hint(st, "did you mean 'fashion-mnist'?");
    } else if (suggest_is_near_miss(spec, "mnist")) {
        status_hint(st, "plain MNIST is not bundled; put its four IDX files in a folder "
                        "and pass --data idx:DIR");
    } else if (starts_with_ignoring_case(spec, "idx")) {
        // "idx DIR", "idx=DIR", "IDX:DIR": the folder is there, the form is not.
        const char *rest = spec + 3;
        if (*rest && strchr(" =:", *rest)) rest++;
        status_hint(st, "did you mean 'idx:%s'? write it lower-case, the folder right "
                        "after the colon",
                    *rest ? rest : "DIR");
    } else if (is_directory(spec, &err)) {
        status_hint(st, "to read the IDX files in that folder, pass --data idx:%s", spec);
    } else {
        status_hint(st, "accepted: fashion-mnist (apt-get install dataset-fashion-mnist), "
                        "or idx:DIR for a folder of MNIST-style IDX files");
    }
    return STATUS_BAD_INPUT;
}

// Resolves the spec to the folder that holds the IDX files, checking that it exists.
static int resolve_folder(const char *spec, char *dir, size_t size, int *is_fashion,
                          Status *st) {
    int err = 0;
    *is_fashion = 0;
    if (strcmp(spec, "fashion-mnist") == 0) {
        // The override lets tests (and people with a copy elsewhere) point at another
        // folder without touching the system one.
        const char *env = getenv(FASHION_MNIST_ENV);
        int overridden = env && env[0];
        const char *path = overridden ? env : FASHION_MNIST_DIR;
        *is_fashion = 1;
        if ((size_t)snprintf(dir, size, "%s", path) >= size) {
            status_fail(st, STATUS_BAD_INPUT, "%s is too long (%zu characters)",
                        FASHION_MNIST_ENV, strlen(path));
            return STATUS_BAD_INPUT;
        }
        if (!is_directory(dir, &err)) {
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "Fashion-MNIST not found in %s",
                           dir);
            if (overridden)
                status_hint(st, "%s is set to this folder; unset it, or %s", FASHION_MNIST_ENV,
                            FASHION_MNIST_HINT);
            else
                status_hint(st, FASHION_MNIST_HINT);
            return STATUS_BAD_INPUT;
        }
        return 0;
    }
    if (strncmp(spec, "idx:", 4) == 0) {
        const char *path = spec + 4;
        if (!path[0]) {
            status_fail(st, STATUS_BAD_INPUT, "dataset 'idx:' names no folder");
            status_hint(st, "write idx:DIR, e.g. --data idx:/data/mnist");
            return STATUS_BAD_INPUT;
        }
        if ((size_t)snprintf(dir, size, "%s", path) >= size) {
            status_fail(st, STATUS_BAD_INPUT, "dataset folder path is too long (%zu characters)",
                        strlen(path));
            return STATUS_BAD_INPUT;
        }
        if (!is_directory(dir, &err)) {
            if (err == ENOTDIR)
                status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0,
                               "idx: expects a folder, but this is a file");
            else
                status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0,
                               "cannot open the dataset folder: %s", strerror(err));
            status_hint(st, "%s", IDX_FOLDER_HINT);
            return STATUS_BAD_INPUT;
        }
        return 0;
    }
    return fail_unknown_spec(spec, st);
}

// The split's file prefix: the IDX distribution calls the test split "t10k".
static int split_prefix(const char *split, const char **prefix, Status *st) {
    if (split && strcmp(split, "train") == 0) *prefix = "train";
    else if (split && strcmp(split, "test") == 0) *prefix = "t10k";
    else {
        const char *typed = split ? split : "(none)";
        status_fail(st, STATUS_BAD_INPUT, "unknown split '%s'; expected 'train' or 'test'",
                    typed);
        if (split && suggest_is_near_miss(split, "train")) status_hint(st, "did you mean 'train'?");
        else if (split && suggest_is_near_miss(split, "test")) status_hint(st, "did you mean 'test'?");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// DIR/NAME if it exists, else DIR/NAME.gz if that does; the plain file wins when both
// are there because it reads faster.
static int find_idx_file(const char *dir, const char *name, int is_fashion, char *path,
                         size_t size, Status *st) {
    const char *suffixes[2] = {"", ".gz"};
    for (int i = 0; i < 2; i++) {
        if ((size_t)snprintf(path, size, "%s/%s%s", dir, name, suffixes[i]) >= size) {
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0,
                           "dataset folder path is too long to hold %s", name);
            return STATUS_BAD_INPUT;
        }
        struct stat sb;
        if (stat(path, &sb) == 0) return 0;
    }
    snprintf(path, size, "%s/%s", dir, name);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "missing %s (or %s.gz) in %s", name, name,
                   dir);
    if (is_fashion)
        status_hint(st, "the installed dataset is incomplete; reinstall it: "
                        "apt-get install --reinstall dataset-fashion-mnist");
    else
        status_hint(st, "%s", IDX_FOLDER_HINT);
    return STATUS_BAD_INPUT;
}

static int largest_label(const uint8_t *labels, int count) {
    int max = 0;
    for (int i = 0; i < count; i++)
        if (labels[i] > max) max = labels[i];
    return max;
}

int dataset_load(const char *spec, const char *split, Dataset *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (!spec || !spec[0]) {
        status_fail(st, STATUS_BAD_INPUT, "no dataset given; expected 'fashion-mnist' or "
                                          "'idx:DIR'");
        status_hint(st, "pass --data fashion-mnist or --data idx:DIR");
        return STATUS_BAD_INPUT;
    }
    const char *prefix = NULL;
    TRY(split_prefix(split, &prefix, st));
    char dir[512];
    int is_fashion = 0;
    TRY(resolve_folder(spec, dir, sizeof dir, &is_fashion, st));

    char name[64], images_path[1024], labels_path[1024];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    TRY(find_idx_file(dir, name, is_fashion, images_path, sizeof images_path, st));
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    TRY(find_idx_file(dir, name, is_fashion, labels_path, sizeof labels_path, st));

    uint8_t *images = NULL, *labels = NULL;
    int count = 0, rows = 0, cols = 0, label_count = 0;
    TRY(idx_read_images(images_path, &images, &count, &rows, &cols, st));
    int rc = idx_read_labels(labels_path, &labels, &label_count, st);
    if (rc) {
        free(images);
        return rc;
    }
    if (count != label_count) {
        free(images);
        free(labels);
        status_fail_at(st, STATUS_BAD_INPUT, images_path, 0, 0,
                       "image and label counts differ: %s holds %d images but %s holds %d "
                       "labels",
                       images_path, count, labels_path, label_count);
        status_hint(st, "the two files come from different downloads or splits; "
                        "re-install or re-download the dataset");
        return STATUS_BAD_INPUT;
    }

    snprintf(out->source, sizeof out->source, "%s", dir);
    out->count = count;
    out->channels = 1;
    out->height = rows;
    out->width = cols;
    out->images = images;
    out->labels = labels;
    out->label_max = largest_label(labels, count);
    return 0;
}

void dataset_truncate(Dataset *ds, int count) {
    if (count <= 0 || count >= ds->count) return;
    // The buffers keep their size; only the visible prefix shrinks. label_max is
    // recomputed so it stays "the largest label present".
    ds->count = count;
    ds->label_max = largest_label(ds->labels, count);
}

void dataset_free(Dataset *ds) {
    if (!ds) return;
    free(ds->images);
    free(ds->labels);
    memset(ds, 0, sizeof *ds);
}
