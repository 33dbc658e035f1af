// images:DIR (png:DIR is the same reader), image folders: DIR/train/CLASS/* and
// DIR/test/CLASS/*, or DIR/CLASS/* alone (all training data; --val-split holds some out). Classes are the folder names in
// byte order, numbered from 0, so the same folders always give the same labels; the test
// split takes its numbers from the training split's folders.
//
// The files are the PNGs (*.png) and JPEGs (*.jpg, *.jpeg), in any mix; upper case too.
// Images are decoded by data/image.c to the model's channels and size (resized with
// --resize) and kept as bytes like
// every other image dataset (value * 255, rounded: exact for 8-bit gray and colour, the
// nearest byte for luminance and for 16-bit samples).
#define _POSIX_C_SOURCE 200809L

#include "base/directories.h"
#include "base/escape.h"
#include "data/dataset.h"
#include "data/image.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PNG_MAX_CLASSES 256  // labels are bytes
#define PNG_FOLDER_HINT                                                                   \
    "an images:DIR folder holds DIR/train/CLASS/*.png and DIR/test/CLASS/*.png (or .jpg), " \
    "or DIR/CLASS/*.png split with --val-split"

typedef struct NameList {
    char **names;
    int count;
} NameList;

// A name read from the disk, escaped for a message: folder and file names are bytes anyone
// chose, and an escape sequence in them would drive the terminal that shows the error.
typedef struct Escaped {
    char text[4 * 256 + 8];
} Escaped;

static const char *escaped(const char *name, Escaped *out) {
    return text_escape(name, strlen(name), out->text, sizeof out->text);
}

static void names_free(NameList *list) {
    for (int i = 0; list->names && i < list->count; i++) free(list->names[i]);
    free(list->names);
    list->names = NULL;
    list->count = 0;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// Whether the entry NAME of DIR is what the list wants: class folders, or PNG files.
static int wanted(const char *dir, const char *name, int folders) {
    if (name[0] == '.') return 0;
    if (!folders) return image_file_name(name);
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path_is_directory(path);
}

static int add_name(NameList *list, const char *name) {
    char **grown = realloc(list->names, (size_t)(list->count + 1) * sizeof *grown);
    if (!grown) return -1;
    list->names = grown;
    list->names[list->count] = strdup(name);
    if (!list->names[list->count]) return -1;
    list->count++;
    return 0;
}

// The sub-folders (folders = 1) or the image files (0) of DIR, sorted.
static int list_folder(const char *dir, int folders, NameList *list, Status *st) {
    list->names = NULL;
    list->count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "cannot list the folder: %s",
                       strerror(errno));
        status_hint(st, "%s", PNG_FOLDER_HINT);
        return STATUS_BAD_INPUT;
    }
    int rc = 0;
    Escaped shown;
    for (struct dirent *e; !rc && (e = readdir(d));)
        if (wanted(dir, e->d_name, folders) && add_name(list, e->d_name))
            rc = status_out_of_host_memory(st, 0, "listing %s", escaped(dir, &shown));
    closedir(d);
    if (rc) names_free(list);
    else if (list->count) qsort(list->names, (size_t)list->count, sizeof *list->names,
                                compare_names);
    return rc;
}

static int check_classes(const char *root, const NameList *classes, Status *st) {
    if (classes->count == 0) {
        status_fail_at(st, STATUS_BAD_INPUT, root, 0, 0, "no class folders in %s", root);
        status_hint(st, "%s", PNG_FOLDER_HINT);
        return STATUS_BAD_INPUT;
    }
    if (classes->count > PNG_MAX_CLASSES) {
        status_fail_at(st, STATUS_BAD_INPUT, root, 0, 0, "%d class folders; at most %d are "
                       "supported", classes->count, PNG_MAX_CLASSES);
        status_hint(st, "%s", PNG_FOLDER_HINT);
        return STATUS_BAD_INPUT;
    }
    for (int i = 0; i < classes->count; i++) {
        if (strlen(classes->names[i]) < 64) continue;
        Escaped name;
        status_fail_at(st, STATUS_BAD_INPUT, root, 0, 0, "class folder name '%.40s...' is "
                       "longer than 63 bytes", escaped(classes->names[i], &name));
        status_hint(st, "rename the folder");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int class_index(const NameList *classes, const char *name) {
    for (int i = 0; i < classes->count; i++)
        if (strcmp(classes->names[i], name) == 0) return i;
    return -1;
}

// One image file of the split, and the label it gets.
typedef struct PngFile {
    char *path;
    int label;
} PngFile;

typedef struct PngSplit {
    PngFile *files;
    int count;
} PngSplit;

static void split_free(PngSplit *split) {
    for (int i = 0; split->files && i < split->count; i++) free(split->files[i].path);
    free(split->files);
}

static int add_file(PngSplit *split, const char *folder, const char *name, int label) {
    PngFile *grown = realloc(split->files, (size_t)(split->count + 1) * sizeof *grown);
    if (!grown) return -1;
    split->files = grown;
    size_t size = strlen(folder) + strlen(name) + 2;
    char *path = malloc(size);
    if (!path) return -1;
    snprintf(path, size, "%s/%s", folder, name);
    split->files[split->count++] = (PngFile){path, label};
    return 0;
}

// Every PNG of ROOT/CLASS for each class folder under ROOT, labelled by `classes`.
static int collect_files(const char *root, const NameList *classes, PngSplit *split,
                         Status *st) {
    NameList here, files;
    TRY(list_folder(root, 1, &here, st));
    int rc = 0;
    for (int c = 0; !rc && c < here.count; c++) {
        int label = class_index(classes, here.names[c]);
        char folder[2048];
        snprintf(folder, sizeof folder, "%s/%s", root, here.names[c]);
        if (label < 0) {
            Escaped name;
            rc = status_fail_at(st, STATUS_BAD_INPUT, folder, 0, 0, "class folder '%s' is "
                                "not among the training split's classes",
                                escaped(here.names[c], &name));
            status_hint(st, "the test split's class folders must also be in train/");
            break;
        }
        rc = list_folder(folder, 0, &files, st);
        for (int f = 0; !rc && f < files.count; f++)
            if (add_file(split, folder, files.names[f], label))
                rc = status_out_of_host_memory(st, 0, "listing the class folders");
        names_free(&files);
    }
    names_free(&here);
    return rc;
}

static int fail_no_images(const char *root, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, root, 0, 0, "no .png or .jpg files in the class folders "
                   "of %s", root);
    status_hint(st, "%s", PNG_FOLDER_HINT);
    return STATUS_BAD_INPUT;
}

// How many headers choose_shape reads to pick a split's size: enough that one odd image
// (the first, say) is outvoted, few enough to cost nothing beside decoding the split.
#define SIZE_SAMPLE_COUNT 64

// The size most of the split's images have, from the headers of up to SIZE_SAMPLE_COUNT
// files spread over the split (the earliest wins a tie); `reference` is one image of that
// size, named when another size is refused. The first file alone would not do: an odd or
// unreadable first image would make every good one wrong, even under --on-bad-sample skip.
static int most_common_size(const PngSplit *split, int skip_bad_samples, Dataset *out,
                            char *reference, size_t reference_size, Status *st) {
    int sampled = split->count < SIZE_SAMPLE_COUNT ? split->count : SIZE_SAMPLE_COUNT;
    int widths[SIZE_SAMPLE_COUNT], heights[SIZE_SAMPLE_COUNT], files[SIZE_SAMPLE_COUNT];
    int readable = 0, best = -1, best_votes = 0;
    Status first_failure;
    status_clear(&first_failure);
    for (int s = 0; s < sampled; s++) {
        int i = (int)((long long)s * split->count / sampled);
        Status bad;
        status_clear(&bad);
        if (image_read_size(split->files[i].path, &widths[readable], &heights[readable],
                            &bad)) {
            if (!first_failure.code) first_failure = bad;
            continue;
        }
        files[readable++] = i;
    }
    for (int r = 0; r < readable; r++) {
        int votes = 0;
        for (int other = 0; other < readable; other++)
            votes += widths[other] == widths[r] && heights[other] == heights[r];
        if (votes > best_votes) best = r, best_votes = votes;
    }
    if (best < 0) {
        if (!skip_bad_samples) return (*st = first_failure).code;
        if (sampled == split->count)
            status_fail_at(st, STATUS_BAD_INPUT, split->files[0].path, 0, 0, "all %d images "
                           "were unreadable and skipped", split->count);
        else
            status_fail_at(st, STATUS_BAD_INPUT, split->files[0].path, 0, 0, "the %d images "
                           "read for the split's size (of %d) were all unreadable", sampled,
                           split->count);
        status_hint(st, "run with --on-bad-sample fail to see the first one's error");
        return STATUS_BAD_INPUT;
    }
    out->width = widths[best];
    out->height = heights[best];
    snprintf(reference, reference_size, "%s", split->files[files[best]].path);
    return 0;
}

// The sample shape: the model's, or else (`reference` then names an image of it) the size
// most of the split's images have, in 1 channel.
static int choose_shape(const PngSplit *split, const DatasetOptions *options, Dataset *out,
                        char *reference, size_t reference_size, Status *st) {
    out->channels = options->channels > 0 ? options->channels : 1;
    out->height = options->height;
    out->width = options->width;
    reference[0] = '\0';
    out->resize = options->resize && out->height > 0 && out->width > 0;
    if (out->height > 0 && out->width > 0) return 0;
    return most_common_size(split, options->skip_bad_samples, out, reference, reference_size,
                            st);
}

// dataset_png_decode, with the failure's place left raw (dataset_load_png escapes it).
static int decode_file(const Dataset *ds, const char *path, float *values, uint8_t *out,
                       Status *st) {
    return image_read_bytes(path, ds->channels, ds->height, ds->width, ds->resize, values,
                            out, st);
}

int dataset_png_decode(const Dataset *ds, const char *path, float *values, uint8_t *out,
                       Status *st) {
    return status_escape_place(st, decode_file(ds, path, values, out, st));
}

// An image of another size than the split's: the model's size, or (no model, as in `data
// info`, or a flat input) the most common one, named by an image of it instead of a model.
static int wrong_size(const Dataset *ds, const char *path, int width, int height,
                      const char *reference, Status *st) {
    if (!reference) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "image is %dx%d pixels (WxH), but the "
                       "model takes %dx%d", width, height, ds->width, ds->height);
        status_hint(st, "add --resize model to resize images as they are read, or resize the "
                        "image to %dx%d, e.g. `convert IMAGE -resize %dx%d! out.png`",
                    ds->width, ds->height, ds->width, ds->height);
        return STATUS_BAD_INPUT;
    }
    Escaped like;
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "image is %dx%d pixels (WxH), but the "
                   "split's images are %dx%d (the most common size; e.g. %s)", width, height,
                   ds->width, ds->height, escaped(reference, &like));
    status_hint(st, "give every image of the folder one size, e.g. `convert IMAGE -resize "
                    "%dx%d! out.png`, or train with --resize HxW", ds->width, ds->height);
    return STATUS_BAD_INPUT;
}

// A streamed split checks only each file's header here (an image, the split's size or one
// --resize takes); the pixels are decoded when a batch needs them.
static int check_header(const Dataset *ds, const char *path, const char *reference,
                        Status *st) {
    int width, height;
    TRY(image_read_size(path, &width, &height, st));
    if (width == ds->width && height == ds->height) return 0;
    if (ds->resize && (long long)width * height <= IMAGE_MAX_PIXELS) return 0;
    return wrong_size(ds, path, width, height, reference, st);
}

// Decodes file i of the split into out->images. image_read_sample words a size mismatch for
// the model; when the size is the split's own, the header is read again to say so.
static int decode_kept(const PngFile *file, const char *reference, float *pixels,
                       Dataset *out, Status *st) {
    int rc = decode_file(out, file->path, pixels,
                         out->images + (size_t)out->count * dataset_sample_size(out), st);
    int width, height;
    Status header;
    status_clear(&header);
    if (rc && reference && !image_read_size(file->path, &width, &height, &header) &&
        (width != out->width || height != out->height))
        rc = wrong_size(out, file->path, width, height, reference, st);
    return rc;
}

// Keeps file i of the split: decoded into out->images, or (streaming) its path.
static int keep_file(PngSplit *split, int i, int stream, const char *reference,
                     float *pixels, Dataset *out, Status *st) {
    PngFile *file = &split->files[i];
    if (stream) {
        TRY(check_header(out, file->path, reference, st));
        out->paths[out->count] = file->path;
        file->path = NULL;  // owned by the dataset now
        out->path_count = out->count + 1;
    } else {
        TRY(decode_kept(file, reference, pixels, out, st));
    }
    out->labels[out->count++] = (uint8_t)file->label;
    return 0;
}

// Whether the split is streamed: asked for, or (auto) when its decoded images would take
// more than half of the machine's memory.
static int decide_streaming(const DatasetOptions *options, const PngSplit *split,
                            const Dataset *out) {
    if (options->decode != DECODE_AUTO) return options->decode == DECODE_STREAM;
    double bytes = (double)split->count * (double)dataset_sample_size(out);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 && bytes > 0.5 * (double)pages * (double)page;
}

// Decodes every file into out->images (or keeps the paths of a streamed split); bad files
// fail, or are counted when skipping.
static int decode_all(PngSplit *split, const DatasetOptions *options, int stream,
                      const char *reference, Dataset *out, int *skipped, Status *st) {
    size_t sample = dataset_sample_size(out);
    float *pixels = malloc(sample * sizeof *pixels);
    if (stream) out->paths = calloc((size_t)split->count, sizeof *out->paths);
    else out->images = malloc((size_t)split->count * sample);
    out->labels = malloc((size_t)split->count);
    if (!pixels || !(out->images || out->paths) || !out->labels) {
        free(pixels);
        return status_out_of_host_memory(
            st, sample * sizeof *pixels +
                    (size_t)split->count * ((stream ? sizeof *out->paths : sample) + 1),
            "for %d images", split->count);
    }
    int rc = 0;
    for (int i = 0; !rc && i < split->count; i++) {
        Status bad;
        status_clear(&bad);
        if (keep_file(split, i, stream, reference[0] ? reference : NULL, pixels, out, &bad)) {
            if (options->skip_bad_samples && bad.code == STATUS_BAD_INPUT) (*skipped)++;
            else rc = (*st = bad).code;
        }
    }
    free(pixels);
    if (!rc && out->count == 0) {
        rc = status_fail_at(st, STATUS_BAD_INPUT, split->files[0].path, 0, 0, "all %d images "
                            "were unreadable and skipped", split->count);
        status_hint(st, "run with --on-bad-sample fail to see the first one's error");
    }
    return rc;
}

static int keep_class_names(const NameList *classes, Dataset *out, Status *st) {
    out->class_names = calloc((size_t)classes->count, sizeof *out->class_names);
    if (!out->class_names)
        return status_out_of_host_memory(st, (size_t)classes->count * sizeof *out->class_names,
                                         "for %d class names", classes->count);
    for (int i = 0; i < classes->count; i++)
        snprintf(out->class_names[i], sizeof out->class_names[i], "%s", classes->names[i]);
    out->class_count = classes->count;
    return 0;
}

static int load_split(const char *classes_root, const char *root, const DatasetOptions *options,
                      Dataset *out, int *skipped, Status *st) {
    NameList classes;
    TRY(list_folder(classes_root, 1, &classes, st));
    PngSplit split = {0};
    int rc = check_classes(classes_root, &classes, st);
    if (!rc) rc = collect_files(root, &classes, &split, st);
    if (!rc && split.count == 0) rc = fail_no_images(root, st);
    // Streaming moves each path into the dataset: the reference image's name is copied.
    char reference[2048];
    if (!rc) rc = choose_shape(&split, options, out, reference, sizeof reference, st);
    int stream = 0;
    if (!rc) stream = decide_streaming(options, &split, out);
    if (!rc) rc = decode_all(&split, options, stream, reference, out, skipped, st);
    if (!rc) rc = keep_class_names(&classes, out, st);
    if (!rc) out->label_max = dataset_largest_label(out->labels, out->count);
    split_free(&split);
    names_free(&classes);
    return rc;
}

int dataset_load_png(const char *spec, const char *split, const DatasetOptions *options,
                     Dataset *out, int *skipped, Status *st) {
    // Messages name the spec as the user spelled it: images:DIR or png:DIR.
    const char *kind = dataset_image_folder(spec) == 4 ? "png" : "images";
    const char *dir = spec + dataset_image_folder(spec);
    TRY(dataset_check_folder(dir, kind, PNG_FOLDER_HINT, st));
    char train[1024], root[1024];
    snprintf(train, sizeof train, "%s/train", dir);
    int test = strcmp(split, "test") == 0;
    if (!path_is_directory(train)) {
        if (test) {
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "%s:%s has no test split (no "
                           "train/ and test/ folders)", kind, dir);
            // Read by train and eval alike: the hint fits both.
            status_hint(st, "hold out part of the training data with --val-split F: 0.1 to "
                        "train; to evaluate, the F (and --seed) the run trained with");
            return STATUS_BAD_INPUT;
        }
        snprintf(train, sizeof train, "%s", dir);  // DIR/CLASS/*.png: all training data
    }
    snprintf(root, sizeof root, test ? "%s/test" : "%s", test ? dir : train);
    dataset_set_source(out, root);
    return status_escape_place(st, load_split(train, root, options, out, skipped, st));
}
