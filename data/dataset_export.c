// `trainer data export SPEC png:DIR`: a dataset written as PNG class folders, the layout
// png:DIR reads (data/dataset_png.c), so that the PNG path can be checked against the
// original on real images.
//
// png:DIR numbers classes by their folder names in byte order. The folders are named so
// that this order is the label order and every label comes back as it was:
// - a dataset with folder names of its own (png:) keeps them: they sort in label order;
// - Fashion-MNIST and CIFAR-10 get their class names after the label, zero-padded to
//   one width ("0_T-shirt_top", ..., "9_Ankle_boot");
// - any other dataset gets the zero-padded label alone ("0", "1", ...).
// Every class folder is made, even one the split (or its --limit) has no sample of: an
// absent folder would renumber the classes after it.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset_export.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/directories.h"
#include "data/image.h"

static int digits(int value) {
    int n = 1;
    for (; value >= 10; value /= 10) n++;
    return n;
}

// A class name as a folder name: '/' would make a sub-folder and blanks need quoting.
static void folder_safe(char *name) {
    for (; *name; name++)
        if (*name == '/' || *name == ' ') *name = '_';
}

void dataset_export_folders(const char *spec, const Dataset *ds, int label_max,
                            ExportFolders *out) {
    int known = 0;
    const char *const *names = dataset_known_class_names(spec, &known);
    int count = label_max + 1;
    if (count < known) count = known;
    if (ds->class_count > count) count = ds->class_count;
    out->count = count;
    int width = digits(count - 1);
    for (int c = 0; c < count; c++) {
        char *folder = out->names[c];
        size_t size = sizeof out->names[c];
        // Every name fits: a class name is under 64 bytes and a label under 4 digits.
        int n;
        if (c < ds->class_count) n = snprintf(folder, size, "%s", ds->class_names[c]);
        else if (c < known) n = snprintf(folder, size, "%0*d_%s", width, c,
                                                          names[c]);
        else n = snprintf(folder, size, "%0*d", width, c);
        if (n >= (int)size) folder[size - 1] = '\0';
        folder_safe(folder);
    }
}

static int is_empty_folder(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int empty = 1;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int fail_make(const char *dir, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "cannot create the folder: %s",
                   strerror(errno));
    status_hint(st, "export into a folder you can write to");
    return STATUS_BAD_INPUT;
}

int dataset_export_prepare(const char *dir, int force, Status *st) {
    char expanded[4096];
    dir = dataset_expand_home(dir, expanded, sizeof expanded);
    struct stat sb;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && !force && !is_empty_folder(dir)) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "the folder is not empty");
        status_hint(st, "export into a new or empty folder, or pass --force to write into "
                        "it (files of the same names are replaced, others stay)");
        return STATUS_BAD_INPUT;
    }
    return make_directories(dir) ? fail_make(dir, st) : 0;
}

static int check_exportable(const Dataset *ds, Status *st) {
    if (ds->features) {
        status_fail_at(st, STATUS_BAD_INPUT, ds->source, 0, 0, "a csv: dataset holds numeric "
                       "features, not images; it cannot be written as PNG");
        status_hint(st, "export image datasets: fashion-mnist, idx:, cifar10:, png:");
        return STATUS_BAD_INPUT;
    }
    if (ds->channels == 1 || ds->channels == 3) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, ds->source, 0, 0, "images of %d channels cannot be "
                   "written as PNG (1: gray, 3: RGB)", ds->channels);
    status_hint(st, "export a gray or RGB dataset");
    return STATUS_BAD_INPUT;
}

static int make_class_folders(const char *dir, const ExportFolders *folders, Status *st) {
    char path[4096];
    for (int c = 0; c < folders->count; c++) {
        snprintf(path, sizeof path, "%s/%s", dir, folders->names[c]);
        if (make_directories(path)) return fail_make(path, st);
    }
    return 0;
}

// One sample's channel planes (CHW, as a Dataset keeps them) as PNG rows (HWC).
static void interleave(const Dataset *ds, const uint8_t *chw, uint8_t *hwc) {
    size_t plane = (size_t)ds->height * (size_t)ds->width;
    for (size_t i = 0; i < plane; i++)
        for (int c = 0; c < ds->channels; c++) hwc[i * ds->channels + c] = chw[c * plane + i];
}

int dataset_export_split(const Dataset *ds, const ExportFolders *folders, const char *dir,
                         ExportProgress progress, void *context, Status *st) {
    char expanded[4096];
    dir = dataset_expand_home(dir, expanded, sizeof expanded);
    TRY(check_exportable(ds, st));
    TRY(make_class_folders(dir, folders, st));
    size_t sample = dataset_sample_size(ds);
    uint8_t *rows = malloc(sample);
    if (!rows) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    // Names keep the sample's index in the split, so png:'s name order within a class is
    // the split's order and a file can be traced back to its sample.
    int width = digits(ds->count > 0 ? ds->count - 1 : 0);
    if (width < 5) width = 5;
    char path[4096];
    int rc = 0;
    for (int i = 0; !rc && i < ds->count; i++) {
        int label = ds->labels[i];
        const char *folder = label < folders->count ? folders->names[label] : "unknown";
        if (snprintf(path, sizeof path, "%s/%s/%0*d.png", dir, folder, width, i) >=
            (int)sizeof path) {
            rc = status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "the folder's path is too "
                                "long for its image files");
            status_hint(st, "export into a folder with a shorter path");
            break;
        }
        interleave(ds, ds->images + (size_t)i * sample, rows);
        rc = image_write_png(path, ds->channels, ds->height, ds->width, rows, st);
        if (progress && (!rc || i + 1 == ds->count)) progress(context, i + 1, ds->count);
    }
    free(rows);
    return rc;
}
