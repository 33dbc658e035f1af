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
#define _XOPEN_SOURCE 700  // realpath

#include "data/dataset_export.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/directories.h"
#include "base/escape.h"
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

// Appends path component `name` (`length` bytes) to the absolute path `out` (of *used
// bytes) as mkdir -p would reach it: "." stays, ".." goes up one (the folder does not
// exist, so it is no link to follow back).
static void append_component(char *out, size_t *used, const char *name, size_t length) {
    if (length == 1 && name[0] == '.') return;
    if (length == 2 && name[0] == '.' && name[1] == '.') {
        char *up = strrchr(out, '/');
        *used = up == out ? 1 : (size_t)(up - out);
        out[*used] = '\0';
        return;
    }
    if (!(*used == 1 && out[0] == '/')) out[(*used)++] = '/';
    memcpy(out + *used, name, length);
    *used += length;
    out[*used] = '\0';
}

// `path` made absolute with every link resolved, as realpath(3) does, but for a path whose
// last parts do not exist yet: those are appended to the real path of what exists. Returns
// a malloc'ed string, or NULL when that cannot be known. A loop, not a recursion per
// missing part: a destination of thousands of new folders must not run out of stack.
static char *real_path_to_be(const char *path) {
    char *head = path[0] ? strdup(path) : NULL;  // "" names no folder
    if (!head) return NULL;
    size_t cut = strlen(head);  // path[cut..] is what is not known to exist
    char *real = NULL;
    for (;;) {
        real = realpath(cut ? head : ".", NULL);
        if (real || errno != ENOENT || cut == 0) break;
        size_t before = cut;
        while (cut > 1 && head[cut - 1] == '/') cut--;  // trailing slashes
        while (cut > 0 && head[cut - 1] != '/') cut--;  // the last name
        while (cut > 1 && head[cut - 1] == '/') cut--;  // the slashes before it, not a root
        if (cut == before) break;                       // nothing shorter to try
        head[cut] = '\0';
    }
    free(head);
    if (!real) return NULL;
    const char *tail = path + cut;
    size_t used = strlen(real);
    // Each name of the tail gains at most one '/', which the tail's own separators or the
    // one more byte pay for.
    char *out = malloc(used + strlen(tail) + 2);
    if (out) {
        memcpy(out, real, used + 1);
        while (*tail) {
            size_t length = strcspn(tail, "/");
            if (length) append_component(out, &used, tail, length);
            tail += length + (tail[length] == '/');
        }
    }
    free(real);
    return out;
}

// Whether `inner` is `outer` or lies inside it (both real paths).
static int is_within(const char *inner, const char *outer) {
    size_t n = strlen(outer);
    if (strcmp(outer, "/") == 0) return 1;
    return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

// A real path as a message shows it: escaped (link targets are bytes from the disk).
// Allocated; NULL when out of memory.
static char *shown_path(const char *path) {
    size_t size = 4 * strlen(path) + 1;  // \xNN at most per byte
    char *out = malloc(size);
    return out ? (char *)text_escape(path, strlen(path), out, size) : NULL;
}

// Refuses `target` (the destination's real path to be) when it is, lies inside or holds
// `place`, a path `spec` reads; a place that does not exist is left to its reader.
static int check_place(const char *place, const char *target, const char *dir,
                       const char *spec, Status *st) {
    char *source = realpath(place, NULL);
    if (!source) return 0;
    const char *how = strcmp(source, target) == 0 ? "is"
                      : is_within(target, source) ? "lies inside"
                      : is_within(source, target) ? "holds" : NULL;
    int rc = 0;
    if (how) {
        char *target_shown = shown_path(target), *source_shown = shown_path(source);
        if (!target_shown || !source_shown) {
            rc = status_out_of_host_memory(st, 0, "naming the export's folders");
        } else {
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "the destination %s %s %s, which "
                           "%s reads from", target_shown, how, source_shown, spec);
            status_hint(st, "export into a folder outside %s and not holding it: an export "
                        "into its own source replaces and adds images there", source_shown);
            rc = STATUS_BAD_INPUT;
        }
        free(target_shown);
        free(source_shown);
    }
    free(source);
    return rc;
}

int dataset_export_check_target(const char *spec, const char *dir, Status *st) {
    char expanded_dir[4096];
    dir = dataset_expand_home(dir, expanded_dir, sizeof expanded_dir);
    char *target = real_path_to_be(dir);
    if (!target) return 0;  // not knowable: making the folder will say what is wrong
    char *expanded_spec = dataset_expand_spec(spec);
    if (!expanded_spec) {
        free(target);
        return status_out_of_host_memory(st, 0, "expanding the data spec");
    }
    int rc = 0;
    if (strcmp(expanded_spec, "fashion-mnist") == 0)
        rc = check_place(dataset_fashion_mnist_dir(), target, dir, spec, st);
    // The places a spec reads: its folder, or each file it names (idx:'s, csv:FILE), each
    // copied whole (a part cut short would be another path).
    const char *part = NULL;
    size_t length = 0;
    while (!rc && dataset_spec_next_path(expanded_spec, &part, &length)) {
        char *place = strndup(part, length);
        rc = place ? check_place(place, target, dir, spec, st)
                   : status_out_of_host_memory(st, length + 1, "expanding the data spec");
        free(place);
    }
    free(expanded_spec);
    free(target);
    return rc;
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
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, folders->names[c]) >= sizeof path) {
            // Cut short, it would name another folder to make.
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "the folder's path is too long "
                           "for its class folders");
            status_hint(st, "export into a folder with a shorter path");
            return STATUS_BAD_INPUT;
        }
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
    if (!rows) return status_out_of_host_memory(st, sample, "for a sample");
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

// ---- every split of a spec ----------------------------------------------------------------

typedef struct SplitProgress {
    const ExportHooks *hooks;
    const char *split;
} SplitProgress;

static void split_progress(void *context, int done, int total) {
    const SplitProgress *p = context;
    p->hooks->progress(p->hooks->context, p->split, done, total);
}

int dataset_export_splits(const char *spec, const Dataset *sets, const char *const *names,
                          int count, const char *dir, int force, const ExportHooks *hooks,
                          Status *st) {
    TRY(dataset_export_prepare(dir, force, st));
    int label_max = 0;
    for (int i = 0; i < count; i++)
        if (sets[i].label_max > label_max) label_max = sets[i].label_max;
    static ExportFolders folders;
    dataset_export_folders(spec, &sets[0], label_max, &folders);
    for (int i = 0; i < count; i++) {
        // A spec with no test split is written as it is read: DIR/CLASS/*.png.
        char where[4096];
        snprintf(where, sizeof where, count == 2 ? "%s/%s" : "%s", dir, names[i]);
        SplitProgress progress = {hooks, names[i]};
        double start = monotonic_seconds();
        TRY(dataset_export_split(&sets[i], &folders, where,
                                 hooks->progress ? split_progress : NULL, &progress, st));
        ExportedSplit written = {names[i], &sets[i], where, folders.count,
                                 monotonic_seconds() - start};
        if (hooks->written) hooks->written(hooks->context, &written);
    }
    return 0;
}
