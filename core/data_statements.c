#include "core/data_statements.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_list(const char *path, const ModelStatement *s, const ModelAttr *a,
                     const char *problem, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->value_column, "%s=%s: %s", a->key,
                   a->value, problem);
    status_hint(st, "one value for every channel, or one per channel, in the units of values "
                    "/ 255: e.g. `normalize mean=0.4914,0.4822,0.4465 std=0.2470,0.2435,0.2616`");
    return STATUS_BAD_INPUT;
}

// "0.4914,0.4822,0.4465": 1 to NORMALIZE_GIVEN_MAX finite numbers; std's must be above 0,
// since they divide.
static int read_list(const char *path, const ModelStatement *s, const ModelAttr *a,
                     int positive, double *values, int *count, Status *st) {
    const char *p = a->value;
    for (*count = 0;; p++) {
        if (*count == NORMALIZE_GIVEN_MAX)
            return fail_list(path, s, a, "more than 4 values (one per channel at most)", st);
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || !isfinite(v) || fabs(v) > 1e6)
            return fail_list(path, s, a, "expected numbers separated by commas", st);
        if (positive && !(v > 0)) return fail_list(path, s, a, "every std must be above 0", st);
        values[(*count)++] = v;
        if (*end == '\0') return 0;
        p = end;
    }
}

int normalize_read_statement(const char *path, const ModelStatement *s, NormalizeConfig *out,
                             Status *st) {
    static const char *const keys[] = {"mean", "std", NULL};
    memset(out, 0, sizeof *out);
    out->line = s->line;
    TRY(model_check_keys(path, s, keys, st));
    const ModelAttr *mean = model_attr_find(s, "mean"), *std = model_attr_find(s, "std");
    int has_values = mean || std;
    if (s->choice[0] && strcmp(s->choice, "auto") != 0 && strcmp(s->choice, "none") != 0) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->choice_column,
                       "unknown normalization '%s'", s->choice);
        status_hint(st, "normalize auto, normalize none, or normalize mean=M std=S");
        return STATUS_BAD_INPUT;
    }
    if (s->choice[0] && has_values) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->choice_column,
                       "normalize %s takes no mean= or std=", s->choice);
        status_hint(st, "either `normalize auto` (computed on the training split) or "
                        "`normalize mean=M std=S`");
        return STATUS_BAD_INPUT;
    }
    if (s->choice[0]) {
        out->kind = strcmp(s->choice, "auto") == 0 ? NORMALIZE_AUTO : NORMALIZE_NONE;
        return 0;
    }
    if (!mean || !std) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->kind_column,
                       "normalize needs %s", !mean && !std ? "auto, none, or mean= and std="
                                                          : !mean ? "mean= beside std="
                                                                  : "std= beside mean=");
        status_hint(st, "e.g. `normalize auto`, or `normalize mean=0.2860 std=0.3530`");
        return STATUS_BAD_INPUT;
    }
    int means, stds;
    TRY(read_list(path, s, mean, 0, out->mean, &means, st));
    TRY(read_list(path, s, std, 1, out->std, &stds, st));
    if (means != stds) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, std->value_column,
                       "mean= has %d value%s but std= has %d", means, means == 1 ? "" : "s",
                       stds);
        status_hint(st, "give as many std values as mean values");
        return STATUS_BAD_INPUT;
    }
    out->kind = NORMALIZE_GIVEN;
    out->given = means;
    return 0;
}

int augment_read_statement(const char *path, const ModelStatement *s, AugmentConfig *out,
                           Status *st) {
    static const char *const keys[] = {"crop", "flip", NULL};
    memset(out, 0, sizeof *out);
    out->line = s->line;
    TRY(model_check_keys(path, s, keys, st));
    if (s->choice[0] && (strcmp(s->choice, "none") != 0 || s->attr_count)) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->choice_column,
                       strcmp(s->choice, "none") == 0 ? "augment none takes no keys"
                                                      : "unknown augmentation '%s'",
                       s->choice);
        status_hint(st, "augment crop=4 flip=true (a random crop of the image padded by 4 "
                        "pixels, and a random left-right flip), or augment none");
        return STATUS_BAD_INPUT;
    }
    long crop;
    TRY(model_attr_int(path, s, "crop", 0, 0, 1024, &crop, st));
    TRY(model_attr_bool(path, s, "flip", 0, &out->flip, st));
    out->crop_padding = (int)crop;
    if (!s->choice[0] && !s->attr_count) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->kind_column,
                       "augment names no augmentation");
        status_hint(st, "augment crop=4 flip=true, or augment none");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

const char *augment_describe(const AugmentConfig *augment, char *buf, size_t size) {
    if (!augment->crop_padding && !augment->flip)
        snprintf(buf, size, "none");
    else if (!augment->flip)
        snprintf(buf, size, "crop=%d", augment->crop_padding);
    else if (!augment->crop_padding)
        snprintf(buf, size, "flip=true");
    else
        snprintf(buf, size, "crop=%d flip=true", augment->crop_padding);
    return buf;
}
