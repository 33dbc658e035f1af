// Named datasets: turn a --data spec and a split into a Dataset in host memory.
//
// The spec is user input typed on a command line, so a near miss gets a suggestion and
// a missing dataset gets the command that installs it.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"
#include "data/dataset_guess.h"
#include "base/directories.h"
#include "base/escape.h"
#include "base/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_FORMS "'fashion-mnist', 'idx:DIR', 'cifar10:DIR', 'images:DIR' or 'csv:FILE'"

const char *dataset_expand_home(const char *path, char *out, size_t size) {
    const char *home = getenv("HOME");
    int tilde = path[0] == '~' && (path[1] == '/' || path[1] == '\0');
    if (tilde && home && home[0] && (size_t)snprintf(out, size, "%s%s", home, path + 1) < size)
        return out;
    // Whole or not at all: a path cut to fit `out` could name another file that exists.
    return (size_t)snprintf(out, size, "%s", path) < size ? out : path;
}

// Appends `length` bytes of `text` at *used; room is the caller's to have made.
static void append_bytes(char *out, size_t *used, const char *text, size_t length) {
    memcpy(out + *used, text, length);
    *used += length;
    out[*used] = '\0';
}

int dataset_spec_next_path(const char *spec, const char **part, size_t *length) {
    int idx = strncmp(spec, "idx:", 4) == 0, csv = strncmp(spec, "csv:", 4) == 0;
    if (!*part) {
        const char *colon = strchr(spec, ':');
        if (!colon) return 0;
        *part = colon + 1;
    } else {
        const char *end = *part + *length;
        if (!idx || *end != ',') return 0;
        *part = end + 1;
    }
    const char *end = idx ? strchr(*part, ',') : csv ? strstr(*part, ",label=") : NULL;
    *length = end ? (size_t)(end - *part) : strlen(*part);
    return 1;
}

// Whether a spec's path starts with the `~` that dataset_expand_home expands.
static int starts_with_tilde(const char *part, size_t length) {
    return length && part[0] == '~' && (length == 1 || part[1] == '/');
}

char *dataset_expand_spec(const char *spec) {
    const char *home = getenv("HOME");
    size_t home_length = home ? strlen(home) : 0, tildes = 0, length = 0;
    const char *part = NULL;
    // Sized by the paths there are: an idx: list may have any number of parts (a spec of
    // more than four is refused later, by its reader, with the form expected).
    while (dataset_spec_next_path(spec, &part, &length)) tildes += starts_with_tilde(part, length);
    char *out = malloc(strlen(spec) + tildes * home_length + 1);
    if (!out) return NULL;
    const char *copied = spec;  // what lies before `copied` is in `out`
    size_t used = 0;
    out[0] = '\0';
    for (part = NULL; home_length && dataset_spec_next_path(spec, &part, &length);) {
        if (!starts_with_tilde(part, length)) continue;
        append_bytes(out, &used, copied, (size_t)(part - copied));
        append_bytes(out, &used, home, home_length);
        copied = part + 1;
    }
    append_bytes(out, &used, copied, strlen(copied));
    return out;
}

const char *dataset_class_name_shown(const Dataset *ds, int c, char *out) {
    const char *raw = c >= 0 && c < ds->class_count ? ds->class_names[c] : "";
    return text_escape(raw, strnlen(raw, sizeof ds->class_names[0]), out, DATASET_SHOWN_NAME);
}

static int starts_with_ignoring_case(const char *s, const char *prefix) {
    for (; *prefix; s++, prefix++)
        if (tolower((unsigned char)*s) != *prefix) return 0;
    return 1;
}

// The kinds whose hint is their spec alone: "the folder holds HOLDS: pass --data SPEC:PATH".
static const struct {
    DatasetGuess guess;
    const char *holds, *spec;
} SPEC_ONLY_HINTS[] = {
    {DATASET_GUESS_IMAGES, "class folders of images", "images"},
    {DATASET_GUESS_CIFAR10, "CIFAR-10 batch files", "cifar10"},
    {DATASET_GUESS_IDX, "IDX files", "idx"},
};

// A path given without its kind: the hint names the spec its contents call for. 0 when the
// path says nothing (not there, or a file of no known kind).
static int hint_from_contents(const char *path, Status *st) {
    const char *kinds = "IDX files (idx:DIR), CIFAR-10 batches (cifar10:DIR) or class folders "
                        "of images (images:DIR)";
    DatasetGuess guess = dataset_guess(path);
    for (size_t i = 0; i < sizeof SPEC_ONLY_HINTS / sizeof SPEC_ONLY_HINTS[0]; i++) {
        if (SPEC_ONLY_HINTS[i].guess != guess) continue;
        status_hint(st, "the folder holds %s: pass --data %s:%s", SPEC_ONLY_HINTS[i].holds,
                    SPEC_ONLY_HINTS[i].spec, path);
        return 1;
    }
    switch (guess) {
    case DATASET_GUESS_LOOSE_IMAGES:
        status_hint(st, "the folder holds images, not class folders of them: to train, sort "
                    "them into %s/CLASS/ and pass --data images:%s; to classify them, "
                    "trainer predict MODEL --weights W %s", path, path, path);
        return 1;
    case DATASET_GUESS_CSV:
        status_hint(st, "a CSV table: pass --data csv:%s (its label column: csv:%s,label=NAME)",
                    path, path);
        return 1;
    case DATASET_GUESS_EMPTY_FOLDER:
        status_hint(st, "the folder is empty; a dataset folder holds %s", kinds);
        return 1;
    case DATASET_GUESS_UNKNOWN_FOLDER:
        status_hint(st, "the folder holds no dataset trainer reads: %s (docs/data.md)", kinds);
        return 1;
    case DATASET_GUESS_IMAGES:  // SPEC_ONLY_HINTS
    case DATASET_GUESS_CIFAR10:
    case DATASET_GUESS_IDX:
    case DATASET_GUESS_NONE: break;
    }
    return 0;
}

static int fail_unknown_spec(const char *spec, Status *st) {
    status_fail(st, STATUS_BAD_INPUT,
                "unknown dataset '%s'; expected %s", spec, SPEC_FORMS);
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
    } else if (hint_from_contents(spec, st)) {
    } else {
        status_hint(st, "accepted: fashion-mnist (apt-get install dataset-fashion-mnist), "
                        "idx:DIR, cifar10:DIR, images:DIR or csv:FILE (see docs/data.md)");
    }
    return STATUS_BAD_INPUT;
}

static int check_split(const char *split, Status *st) {
    if (split && (strcmp(split, "train") == 0 || strcmp(split, "test") == 0)) return 0;
    const char *typed = split ? split : "(none)";
    status_fail(st, STATUS_BAD_INPUT, "unknown split '%s'; expected 'train' or 'test'", typed);
    if (split && suggest_is_near_miss(split, "train")) status_hint(st, "did you mean 'train'?");
    else if (split && suggest_is_near_miss(split, "test")) status_hint(st, "did you mean 'test'?");
    return STATUS_BAD_INPUT;
}

static int has_prefix(const char *spec, const char *prefix) {
    return strncmp(spec, prefix, strlen(prefix)) == 0;
}

static const char *const fashion_mnist_names[] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot",
};
static const char *const cifar10_names[] = {
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
};

const char *const *dataset_known_class_names(const char *spec, int *count) {
    *count = 10;
    if (spec && strcmp(spec, "fashion-mnist") == 0) return fashion_mnist_names;
    if (spec && has_prefix(spec, "cifar10:")) return cifar10_names;
    *count = 0;
    return NULL;
}

int dataset_has_test_split(const char *spec) {
    if (spec && has_prefix(spec, "csv:")) return 0;
    size_t kind = dataset_image_folder(spec);
    if (!kind) return 1;
    char dir[4096], test[4112];
    const char *root = dataset_expand_home(spec + kind, dir, sizeof dir);
    // A folder that is not there (a typo) is the loader's to report: "no test split" would
    // send the user to --val-split, and only then to the path.
    if (!path_is_directory(root)) return 1;
    snprintf(test, sizeof test, "%s/test", root);
    return path_is_directory(test);
}

const char *dataset_spec_source(const char *spec, const Dataset *train, char *out,
                                size_t size) {
    size_t kind = dataset_image_folder(spec);
    if (!kind) return train->source;
    return dataset_expand_home(spec + kind, out, size);
}

static int load_by_spec(const char *spec, const char *split, const DatasetOptions *options,
                        Dataset *out, int *skipped, Status *st) {
    if (strcmp(spec, "fashion-mnist") == 0 || has_prefix(spec, "idx:"))
        return dataset_load_idx(spec, split, options, out, st);
    if (has_prefix(spec, "cifar10:")) return dataset_load_cifar10(spec + 8, split, out, st);
    if (dataset_image_folder(spec))
        return dataset_load_png(spec, split, options, out, skipped, st);
    if (has_prefix(spec, "csv:") && strcmp(split, "test") == 0) {
        status_fail(st, STATUS_BAD_INPUT, "%s has no test split: a CSV file is all training "
                    "data", spec);
        // Read by train and eval alike: the hint fits both.
        status_hint(st, "hold out part of it with --val-split F: 0.1 to train; to evaluate, "
                    "the F (and --seed) the run trained with");
        return STATUS_BAD_INPUT;
    }
    if (has_prefix(spec, "csv:")) return dataset_load_csv(spec + 4, out, st);
    return fail_unknown_spec(spec, st);
}

int dataset_load_with(const char *spec, const char *split, const DatasetOptions *options,
                      Dataset *out, int *skipped, Status *st) {
    memset(out, 0, sizeof *out);
    int none = 0;
    if (!skipped) skipped = &none;
    *skipped = 0;
    if (!spec || !spec[0]) {
        status_fail(st, STATUS_BAD_INPUT, "no dataset given; expected %s", SPEC_FORMS);
        status_hint(st, "pass --data fashion-mnist or --data idx:DIR");
        return STATUS_BAD_INPUT;
    }
    TRY(check_split(split, st));
    char *expanded = dataset_expand_spec(spec);
    if (!expanded) return status_out_of_host_memory(st, 0, "expanding the data spec");
    int rc = load_by_spec(expanded, split, options, out, skipped, st);
    free(expanded);
    if (rc) dataset_free(out);
    return rc;
}

int dataset_load(const char *spec, const char *split, Dataset *out, Status *st) {
    DatasetOptions options = {0};
    return dataset_load_with(spec, split, &options, out, NULL, st);
}

// An empty Dataset shaped like `from`, with room for `count` samples.
static int allocate_like(const Dataset *from, int count, Dataset *to, Status *st) {
    memset(to, 0, sizeof *to);
    dataset_set_source(to, from->source);
    to->channels = from->channels;
    to->height = from->height;
    to->width = from->width;
    to->resize = from->resize;  // a streamed split decodes (and resizes) as it did
    size_t values = (size_t)count * dataset_sample_size(from);
    if (from->features) to->features = malloc(values * sizeof *to->features);
    else if (from->paths) to->paths = calloc((size_t)count, sizeof *to->paths);
    else to->images = malloc(values);
    to->labels = malloc((size_t)count);
    if (from->label_places && !(to->label_places = malloc((size_t)count * sizeof
                                                          *to->label_places))) {
        dataset_free(to);
        return status_out_of_host_memory(st, (size_t)count * sizeof *to->label_places,
                                         "splitting %s", from->source);
    }
    size_t names = (size_t)from->class_count * sizeof *from->class_names;
    if (names && (to->class_names = malloc(names))) {
        memcpy(to->class_names, from->class_names, names);
        to->class_count = from->class_count;
    }
    if ((to->features || to->images || to->paths) && to->labels && (!names || to->class_names))
        return 0;
    dataset_free(to);
    return status_out_of_host_memory(st, 0, "splitting %s", from->source);
}

// Appends sample `index` of `from` to `to` (same shape and kind).
static void append_sample(const Dataset *from, int index, Dataset *to) {
    size_t sample = dataset_sample_size(from);
    if (from->features)
        memmove(to->features + (size_t)to->count * sample,
                from->features + (size_t)index * sample, sample * sizeof *from->features);
    else if (from->paths)
        to->paths[to->count] = from->paths[index];  // the path moves; `from` forgets it below
    else
        memmove(to->images + (size_t)to->count * sample, from->images + (size_t)index * sample,
                sample);
    if (from->label_places) to->label_places[to->count] = from->label_places[index];
    to->labels[to->count++] = from->labels[index];
}

// Each class's share of `take` samples of `count`: count_c * take / count, rounded so that
// the shares sum to `take` (largest remainders first, the lower class on a tie): every
// class gets its exact share rounded down or up.
static void class_quotas(const uint8_t *labels, int count, int take, int *quota) {
    long long members[256] = {0};
    for (int i = 0; i < count; i++) members[labels[i]]++;
    int given = 0, rounded_up[256] = {0};
    for (int c = 0; c < 256; c++) {
        quota[c] = (int)(members[c] * take / count);
        given += quota[c];
    }
    // The remainders' fractions sum to take - given, so that many classes have one.
    for (; given < take; given++) {
        int best = -1;
        long long best_left = 0;
        for (int c = 0; c < 256; c++) {
            long long left = members[c] * take % count;
            if (!rounded_up[c] && left > best_left) best = c, best_left = left;
        }
        rounded_up[best] = 1;
        quota[best]++;
    }
}

// Which samples are chosen: `take` of `count`, each class its share (class_quotas), the
// members of a class drawn uniformly by walking a seeded Fisher-Yates permutation. Random,
// not the first: class folders and many CSV files are sorted by class.
static int choose_stratified(const uint8_t *labels, int count, int take, uint64_t seed,
                             uint8_t **chosen, Status *st) {
    int *order = malloc((size_t)count * sizeof *order);
    *chosen = calloc((size_t)count, 1);
    if (!order || !*chosen) {
        free(order);
        free(*chosen);
        return status_out_of_host_memory(st, (size_t)count * (sizeof *order + 1), "for the split");
    }
    int quota[256];
    class_quotas(labels, count, take, quota);
    for (int i = 0; i < count; i++) order[i] = i;
    Rng rng;
    rng_seed(&rng, seed * 7919u + 17u);
    for (int i = 0; i < count; i++) {
        int j = i + (int)rng_below(&rng, (uint32_t)(count - i));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
        if (quota[labels[order[i]]] > 0) {
            quota[labels[order[i]]]--;
            (*chosen)[order[i]] = 1;
        }
    }
    free(order);
    return 0;
}

int dataset_split_off(Dataset *train, double fraction, uint64_t seed, Dataset *val,
                      Status *st) {
    memset(val, 0, sizeof *val);
    int held = (int)(train->count * fraction + 0.5);
    if (!(fraction > 0 && fraction < 1) || held < 1 || held >= train->count) {
        status_fail(st, STATUS_BAD_INPUT, "--val-split %g of %d training sample%s leaves %d "
                    "for validation and %d for training; each needs at least one", fraction,
                    train->count, train->count == 1 ? "" : "s", held, train->count - held);
        // A fraction this split can take, worked out from its size: "0.1" fails for 4
        // samples as much as the one given did.
        int fitting = (int)(train->count * 0.1 + 0.5);
        if (fitting < 1) fitting = 1;
        if (train->count < 2)
            status_hint(st, "a validation split needs at least 2 samples; add samples, or "
                            "use data with a test split");
        else
            status_hint(st, "e.g. --val-split %g holds out %d of the %d", (double)fitting /
                        train->count, fitting, train->count);
        return STATUS_BAD_INPUT;
    }
    uint8_t *chosen = NULL;
    TRY(choose_stratified(train->labels, train->count, held, seed, &chosen, st));
    int rc = allocate_like(train, held, val, st);
    int count = train->count;
    train->count = 0;  // compacted in place: a kept sample only ever moves down
    for (int i = 0; !rc && i < count; i++) append_sample(train, i, chosen[i] ? val : train);
    if (rc) train->count = count;
    // Each path now lives in exactly one of the two (the kept ones compacted to the front).
    if (!rc && train->paths) {
        train->path_count = train->count;
        val->path_count = val->count;
    }
    free(chosen);
    train->label_max = dataset_largest_label(train->labels, train->count);
    val->label_max = dataset_largest_label(val->labels, val->count);
    return rc;
}

int dataset_truncate(Dataset *ds, int count) {
    if (count <= 0 || count >= ds->count) return 0;
    // The buffers keep their size; only the visible prefix shrinks. label_max is
    // recomputed so it stays "the largest label present".
    ds->count = count;
    ds->label_max = dataset_largest_label(ds->labels, count);
    for (int i = count; ds->paths && i < ds->path_count; i++) free(ds->paths[i]);
    if (ds->paths) ds->path_count = count;
    return 1;
}

int dataset_limit(Dataset *ds, int count, DatasetLimitOrder order, uint64_t seed, int *cut,
                  Status *st) {
    *cut = 0;
    if (count <= 0 || count >= ds->count) return 0;
    if (order == LIMIT_FIRST) {
        *cut = dataset_truncate(ds, count);
        return 0;
    }
    uint8_t *chosen = NULL;
    // Another stream than the validation split's, which is drawn from the same seed next.
    TRY(choose_stratified(ds->labels, ds->count, count, seed ^ 0x9e3779b97f4a7c15ull, &chosen,
                          st));
    int all = ds->count;
    ds->count = 0;  // compacted in place: a kept sample only ever moves down
    for (int i = 0; i < all; i++) {
        if (chosen[i]) append_sample(ds, i, ds);
        else if (ds->paths) free(ds->paths[i]);
    }
    if (ds->paths) ds->path_count = ds->count;
    ds->label_max = dataset_largest_label(ds->labels, ds->count);
    free(chosen);
    *cut = 1;
    return 0;
}

int sample_scratch_open(const Dataset *ds, SampleScratch *s, Status *st) {
    memset(s, 0, sizeof *s);
    if (!ds->paths) return 0;
    size_t sample = dataset_sample_size(ds);
    s->values = malloc(sample * sizeof *s->values);
    s->bytes = malloc(sample);
    if (s->values && s->bytes) return 0;
    sample_scratch_close(s);
    return status_out_of_host_memory(st, sample * (sizeof *s->values + 1), "for decoding %s",
                                     ds->source);
}

void sample_scratch_close(SampleScratch *s) {
    free(s->values);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

int dataset_sample_bytes(const Dataset *ds, int index, SampleScratch *s, const uint8_t **bytes,
                         Status *st) {
    if (!ds->paths) {
        *bytes = ds->images + (size_t)index * dataset_sample_size(ds);
        return 0;
    }
    int rc = dataset_png_decode(ds, ds->paths[index], s->values, s->bytes, st);
    *bytes = s->bytes;
    // The file's own hint (what is wrong with it) stays first; this one says why training
    // met it only now.
    if (rc == STATUS_BAD_INPUT)
        status_hint_append(st, "%swith --decode stream only each file's header is checked "
                           "before training; --decode upfront reads every image first (and "
                           "--on-bad-sample skip can leave damaged ones out)",
                           st->hint[0] ? "; " : "");
    return rc;
}

void dataset_free(Dataset *ds) {
    if (!ds) return;
    free(ds->images);
    free(ds->features);
    for (int i = 0; ds->paths && i < ds->path_count; i++) free(ds->paths[i]);
    free(ds->paths);
    free(ds->labels);
    free(ds->label_places);
    free(ds->class_names);
    memset(ds, 0, sizeof *ds);
}
