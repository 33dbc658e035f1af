#include "data/transform.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset_stats.h"

static int allocate(Normalization *n, int count, Status *st) {
    memset(n, 0, sizeof *n);
    n->mean = calloc((size_t)count, sizeof *n->mean);
    n->std = calloc((size_t)count, sizeof *n->std);
    if (!n->mean || !n->std) {
        normalization_free(n);
        return status_out_of_host_memory(st, 2 * (size_t)count * sizeof *n->mean,
                                         "for %d normalization values", count);
    }
    n->count = count;
    return 0;
}

int normalization_compute(const Dataset *ds, Normalization *out, int *constant_groups,
                          Status *st) {
    int groups = dataset_stat_groups(ds);
    double *sums = calloc((size_t)groups * 2, sizeof *sums);
    if (!sums)
        return status_out_of_host_memory(st, (size_t)groups * 2 * sizeof *sums,
                                         "for the normalization's sums");
    int rc = allocate(out, groups, st);
    if (!rc) rc = dataset_group_stats(ds, sums, sums + groups, st);
    if (rc) normalization_free(out);
    if (!rc) {
        int constant = 0;
        for (int g = 0; g < groups; g++) {
            out->mean[g] = (float)sums[g];
            out->std[g] = (float)sums[groups + g];
            if (!(out->std[g] > 0)) {
                out->std[g] = 1;
                constant++;
            }
        }
        if (constant_groups) *constant_groups = constant;
    }
    free(sums);
    return rc;
}

int normalization_from_values(const double *mean, const double *std, int given, int count,
                              Normalization *out, Status *st) {
    if (given != 1 && given != count) {
        status_fail(st, STATUS_BAD_INPUT, "normalization gives %d values, but the data has %d "
                    "%s", given, count, count == 1 ? "channel" : "channels (or features)");
        status_hint(st, "give one mean and std for all, or %d of each (e.g. `normalize auto` "
                    "computes them)", count);
        return STATUS_BAD_INPUT;
    }
    TRY(allocate(out, count, st));
    for (int g = 0; g < count; g++) {
        out->mean[g] = (float)mean[given == 1 ? 0 : g];
        out->std[g] = (float)std[given == 1 ? 0 : g];
    }
    return 0;
}

int normalization_copy(const Normalization *from, Normalization *out, Status *st) {
    TRY(allocate(out, from->count, st));
    memcpy(out->mean, from->mean, (size_t)from->count * sizeof *out->mean);
    memcpy(out->std, from->std, (size_t)from->count * sizeof *out->std);
    return 0;
}

void normalization_free(Normalization *n) {
    free(n->mean);
    free(n->std);
    memset(n, 0, sizeof *n);
}

void normalization_format(const float *values, int count, int digits, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int g = 0; g < count && used < size; g++) {
        int n = snprintf(buf + used, size - used, "%s%.*g", g ? "," : "", digits,
                         (double)values[g]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

int normalization_parse(const char *text, float *values, int count) {
    const char *p = text;
    for (int g = 0; g < count; g++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v)) return -1;
        values[g] = (float)v;
        p = end;
        if (g + 1 < count && *p++ != ',') return -1;
    }
    return *p ? -1 : 0;
}

uint64_t data_transform_epoch_key(uint64_t seed, int epoch) {
    return sample_transform_hash(seed * 0x2545F4914F6CDD1Dull, (uint64_t)epoch);
}

int data_transform_check(const DataTransform *t, const Dataset *ds, Status *st) {
    if (!t) return 0;
    const Normalization *n = t->normalization;
    if (n && n->count != dataset_stat_groups(ds)) {
        status_fail(st, STATUS_BAD_INPUT, "the normalization has %d values, but %s has %d %s",
                    n->count, ds->source, dataset_stat_groups(ds),
                    ds->features ? "features" : "channels");
        status_hint(st, "give one mean and std, or one per %s (`normalize auto` computes them)",
                    ds->features ? "feature" : "channel");
        return STATUS_BAD_INPUT;
    }
    if (ds->features && (t->crop_padding || t->flip)) {
        status_fail(st, STATUS_BAD_INPUT, "augmentation (crop, flip) needs images, but %s holds "
                    "CSV features", ds->source);
        status_hint(st, "leave out the augment statement (or --augment none) for CSV data");
        return STATUS_BAD_INPUT;
    }
    if (!ds->features && ds->channels > SAMPLE_TRANSFORM_MAX_CHANNELS)
        return status_fail(st, STATUS_BAD_INPUT, "%s has %d channels; at most %d can be "
                           "gathered", ds->source, ds->channels, SAMPLE_TRANSFORM_MAX_CHANNELS);
    int smaller = ds->height < ds->width ? ds->height : ds->width;
    if (t->crop_padding >= smaller && !ds->features) {
        status_fail(st, STATUS_BAD_INPUT, "augment crop=%d shifts %s's %dx%d images by their "
                    "whole size", t->crop_padding, ds->source, ds->height, ds->width);
        status_hint(st, "a crop padding of about 1/8 of the side is usual: crop=%d",
                    smaller / 8 > 0 ? smaller / 8 : 1);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

void byte_scale_shift(const Normalization *n, int c, float *scale, float *shift) {
    // Without normalization exactly the bytes / 255 of before: a shift of 0 adds nothing.
    *scale = n ? 1.0f / (255.0f * n->std[c]) : 1.0f / 255.0f;
    *shift = n ? -n->mean[c] / n->std[c] : 0.0f;
}

void data_transform_for_bytes(const DataTransform *t, const Dataset *ds, SampleTransform *out) {
    memset(out, 0, sizeof *out);
    out->channels = ds->channels;
    out->height = ds->height;
    out->width = ds->width;
    const Normalization *n = t ? t->normalization : NULL;
    for (int c = 0; c < ds->channels && c < SAMPLE_TRANSFORM_MAX_CHANNELS; c++)
        byte_scale_shift(n, c, &out->channel_scale[c], &out->channel_shift[c]);
    if (t) {
        out->crop_padding = t->crop_padding;
        out->flip = t->flip;
        out->augment_key = t->augment_key;
    }
}
