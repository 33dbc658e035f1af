#include "core/checkpoint_inputs.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/utf8.h"
#include "data/image.h"

// 9 significant digits give a float back exactly.
static char *format_values(const float *values, int count) {
    size_t size = (size_t)count * 20 + 1;
    char *text = malloc(size);
    if (text) normalization_format(values, count, 9, text, size);
    return text;
}

// JSON, because a folder's name may hold any byte but NUL and '/'. A name that is not
// UTF-8 keeps its other bytes as \xNN text (checkpoint_class_name_as_written): a header
// holding them raw is one Python's safetensors refuses to open.
static char *format_names(const CheckpointInputs *in) {
    cJSON *array = cJSON_CreateArray();
    for (int i = 0; array && i < in->class_count; i++) {
        char written[CHECKPOINT_CLASS_NAME_WRITTEN_MAX];
        checkpoint_class_name_as_written(in->class_names[i], written, sizeof written);
        cJSON *name = cJSON_CreateString(written);
        if (!name) {
            cJSON_Delete(array);
            return NULL;
        }
        cJSON_AddItemToArray(array, name);
    }
    char *text = array ? cJSON_PrintUnformatted(array) : NULL;
    cJSON_Delete(array);
    return text;
}

void checkpoint_class_name_as_written(const char *name, char *out, size_t size) {
    utf8_escape_invalid(name, out, size);
}

int checkpoint_inputs_format(const CheckpointInputs *in, char **mean, char **std,
                             char **class_names, Status *st) {
    *mean = *std = *class_names = NULL;
    const Normalization *n = in ? in->normalization : NULL;
    int failed = 0;
    if (n && n->count > 0) {
        *mean = format_values(n->mean, n->count);
        *std = format_values(n->std, n->count);
        failed = !*mean || !*std;
    }
    if (in && in->class_count > 0) {
        *class_names = format_names(in);
        failed |= !*class_names;
    }
    if (!failed) return 0;
    free(*mean);
    free(*std);
    free(*class_names);
    *mean = *std = *class_names = NULL;
    return status_out_of_host_memory(st, 0, "for checkpoint metadata");
}

int held_out_same(const HeldOutSplit *a, const HeldOutSplit *b) {
    if (!(a->fraction > 0) || !(b->fraction > 0)) return !(a->fraction > 0) && !(b->fraction > 0);
    // The order matters only where a limit cut the data.
    int same_order = !a->train_limit || a->limit_order_unknown || b->limit_order_unknown ||
                     a->limit_order == b->limit_order;
    return a->fraction == b->fraction && a->seed == b->seed &&
           a->train_limit == b->train_limit && same_order;
}

int held_out_same_data(const HeldOutSplit *a, const HeldOutSplit *b) {
    return !a->samples || !b->samples || a->samples == b->samples;
}

void held_out_describe(const HeldOutSplit *split, char *text, size_t size) {
    if (!(split->fraction > 0)) {
        snprintf(text, size, "no validation split");
        return;
    }
    int used = snprintf(text, size, "--val-split %g with seed %ld", split->fraction,
                        split->seed);
    if (split->train_limit && used > 0 && (size_t)used < size)
        snprintf(text + used, size - (size_t)used, " of %ld training samples "
                 "(--train-limit%s)", split->train_limit,
                 split->limit_order == LIMIT_FIRST ? ", --limit-order first" : "");
}

static void add_short(CheckpointInputsEntry *out, int *count, const char *key,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_short(CheckpointInputsEntry *out, int *count, const char *key,
                      const char *fmt, ...) {
    CheckpointInputsEntry *e = &out[(*count)++];
    e->key = key;
    va_list values;
    va_start(values, fmt);
    vsnprintf(e->value, sizeof e->value, fmt, values);
    va_end(values);
}

int checkpoint_inputs_short_entries(const CheckpointInputs *in,
                                    CheckpointInputsEntry out[CHECKPOINT_INPUTS_SHORT_KEYS]) {
    int count = 0;
    if (!in) return 0;
    if (in->resize_height > 0)
        add_short(out, &count, "resize", "%dx%d", in->resize_height, in->resize_width);
    else
        add_short(out, &count, "resize", "none");
    const HeldOutSplit *h = &in->held_out;
    if (!(h->fraction > 0)) {
        add_short(out, &count, "val_split", "0");
        return count;
    }
    // 17 significant digits: the double back exactly, so the split is drawn the same.
    add_short(out, &count, "val_split", "%.17g", h->fraction);
    add_short(out, &count, "val_split_seed", "%ld", h->seed);
    if (h->train_limit > 0) {
        add_short(out, &count, "train_limit", "%ld", h->train_limit);
        add_short(out, &count, "train_limit_order", "%s",
                  h->limit_order == LIMIT_FIRST ? "first" : "stratified");
    }
    if (h->samples > 0) add_short(out, &count, "val_split_of", "%ld", h->samples);
    return count;
}

static int bad_value(const char *path, const char *key, const char *value, const char *expected,
                     Status *st) {
    char escaped[96];
    text_escape(value, strlen(value), escaped, sizeof escaped);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "checkpoint metadata '%s' is '%s'; "
                   "expected %s", key, escaped, expected);
    status_hint(st, "the file was changed after trainer wrote it; save the weights again with "
                    "`trainer train --save FILE`");
    return STATUS_BAD_INPUT;
}

static int read_normalization(const Safetensors *file, const char *path, Normalization *out,
                              Status *st) {
    const char *mean = safetensors_metadata(file, "normalize_mean");
    const char *std = safetensors_metadata(file, "normalize_std");
    if (!mean && !std) return 0;
    if (!mean || !std)
        return bad_value(path, mean ? "normalize_std" : "normalize_mean", "", "a list of numbers "
                         "beside the other", st);
    int count = 1;
    for (const char *p = mean; *p; p++) count += *p == ',';
    if (count > 1 << 20) return bad_value(path, "normalize_mean", mean, "at most 1048576 values",
                                          st);
    double zero = 0;
    TRY(normalization_from_values(&zero, &zero, 1, count, out, st));
    if (normalization_parse(mean, out->mean, count))
        return bad_value(path, "normalize_mean", mean, "numbers separated by commas", st);
    if (normalization_parse(std, out->std, count))
        return bad_value(path, "normalize_std", std, "as many numbers as normalize_mean", st);
    for (int g = 0; g < count; g++)
        if (!(out->std[g] > 0))
            return bad_value(path, "normalize_std", std, "numbers above 0", st);
    return 0;
}

static int read_names(const Safetensors *file, const char *path, LoadedInputs *out, Status *st) {
    const char *text = safetensors_metadata(file, "class_names");
    if (!text) return 0;
    // Whole: cJSON_Parse would take '["a","b"]x' as the array and ignore the rest.
    cJSON *array = cJSON_ParseWithOpts(text, NULL, 1);
    int count = cJSON_IsArray(array) ? cJSON_GetArraySize(array) : -1;
    int ok = count > 0 && count <= 256;
    if (ok) out->class_names = calloc((size_t)count, sizeof *out->class_names);
    for (int i = 0; ok && out->class_names && i < count; i++) {
        const cJSON *name = cJSON_GetArrayItem(array, i);
        ok = cJSON_IsString(name) &&
             strlen(name->valuestring) < CHECKPOINT_CLASS_NAME_WRITTEN_MAX;
        if (ok)
            snprintf(out->class_names[i], CHECKPOINT_CLASS_NAME_WRITTEN_MAX, "%s",
                     name->valuestring);
    }
    cJSON_Delete(array);
    if (ok && !out->class_names)
        return status_out_of_host_memory(st, (size_t)count * sizeof *out->class_names,
                                         "for %d class names", count);
    if (!ok) return bad_value(path, "class_names", text, "a JSON array of 1 to 256 names of "
                              "under 64 bytes", st);
    out->class_count = count;
    return 0;
}

// A whole number in [min, max] from metadata `key`; absent: *value 0.
static int read_whole_number(const Safetensors *file, const char *path, const char *key,
                             long min, long max, long *value, Status *st) {
    const char *text = safetensors_metadata(file, key);
    *value = 0;
    if (!text) return 0;
    char *end = NULL;
    errno = 0;
    long number = strtol(text, &end, 10);
    if (end == text || *end || errno || number < min || number > max) {
        char expected[64];
        snprintf(expected, sizeof expected, "a whole number from %ld to %ld", min, max);
        return bad_value(path, key, text, expected, st);
    }
    *value = number;
    return 0;
}

static int read_held_out(const Safetensors *file, const char *path, LoadedInputs *in,
                         Status *st) {
    HeldOutSplit *out = &in->held_out;
    const char *fraction = safetensors_metadata(file, "val_split");
    if (!fraction) return 0;
    char *end = NULL;
    double value = strtod(fraction, &end);
    if (end == fraction || *end || !(value >= 0 && value < 1))
        return bad_value(path, "val_split", fraction, "0 (none) or a number between 0 and 1",
                         st);
    in->held_out_recorded = 1;
    if (value == 0) return 0;
    out->fraction = value;
    if (!safetensors_metadata(file, "val_split_seed"))
        return bad_value(path, "val_split_seed", "", "the seed beside val_split", st);
    TRY(read_whole_number(file, path, "val_split_seed", 0, 0x7fffffffL, &out->seed, st));
    TRY(read_whole_number(file, path, "val_split_of", 1, 1000000000L, &out->samples, st));
    TRY(read_whole_number(file, path, "train_limit", 1, 100000000L, &out->train_limit, st));
    // Absent: a file written before the order was recorded. It is drawn stratified, the
    // default, and not held against a run that gives --limit-order first.
    const char *order = safetensors_metadata(file, "train_limit_order");
    out->limit_order_unknown = !order && out->train_limit;
    if (!order || strcmp(order, "stratified") == 0) return 0;
    if (strcmp(order, "first") != 0)
        return bad_value(path, "train_limit_order", order, "stratified or first", st);
    out->limit_order = LIMIT_FIRST;
    return 0;
}

// "HxW" or "none"; absent (a file written before resizes were recorded): none.
static int read_resize(const Safetensors *file, const char *path, LoadedInputs *in,
                       Status *st) {
    const char *text = safetensors_metadata(file, "resize");
    in->resize_recorded = text != NULL;
    if (!text || strcmp(text, "none") == 0) return 0;
    if (!image_size_parse(text, &in->resize_height, &in->resize_width))
        return bad_value(path, "resize", text, "none or HxW, each from 1 to 65535 (28x28)", st);
    return 0;
}

int checkpoint_inputs_read(const Safetensors *file, const char *path, LoadedInputs *out,
                           Status *st) {
    memset(out, 0, sizeof *out);
    int rc = read_normalization(file, path, &out->normalization, st);
    if (!rc) rc = read_names(file, path, out, st);
    if (!rc) rc = read_held_out(file, path, out, st);
    if (!rc) rc = read_resize(file, path, out, st);
    if (rc) checkpoint_inputs_free(out);
    return rc;
}

void checkpoint_inputs_free(LoadedInputs *in) {
    normalization_free(&in->normalization);
    free(in->class_names);
    memset(in, 0, sizeof *in);
}
