// Normalization and augmentation from the model file and the command line, made values
// for a run (train, check) or taken from a weights file (eval, predict).
#include <stdio.h>
#include <string.h>

#include "core/data_statements.h"
#include "data/dataset_stats.h"
#include "tools/cli.h"

static int read_normalize(const char *path, const ModelStatement *s, void *out, Status *st) {
    return normalize_read_statement(path, s, out, st);
}

static int read_augment(const char *path, const ModelStatement *s, void *out, Status *st) {
    return augment_read_statement(path, s, out, st);
}

int apply_data_transform_overrides(const Command *cmd, const ParsedArgs *args,
                                   RunConfig *config, Status *st) {
    // The statement read from an option is on line 1 of its own text, not of the model
    // file: line 0 keeps later errors from pointing into the model file.
    const char *normalize = args_get(cmd, args, "--normalize");
    if (normalize) {
        TRY(read_statement_option("--normalize", "normalize", normalize, read_normalize,
                                  &config->data.normalize, st));
        config->data.normalize.line = 0;
    }
    const char *augment = args_get(cmd, args, "--augment");
    if (augment) {
        TRY(read_statement_option("--augment", "augment", augment, read_augment,
                                  &config->data.augment, st));
        config->data.augment.line = 0;
    }
    return 0;
}

int check_augment_option(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                         const RunData *data, Status *st) {
    const char *augment = args_get(cmd, args, "--augment");
    if (!augment) return 0;
    DataTransform t = {.crop_padding = config->data.augment.crop_padding,
                       .flip = config->data.augment.flip};
    if (!data_transform_check(&t, &data->train, st)) return 0;
    st->file[0] = '\0';
    st->line = st->column = 0;
    status_prefix(st, "--augment '%s': ", augment);
    return st->code;
}

// A given normalization's errors point at the statement, or name the option (line 0: the
// values came from --normalize).
static int from_given(const NormalizeConfig *n, int groups, const char *model_path,
                      Normalization *out, Status *st) {
    int rc = normalization_from_values(n->mean, n->std, n->given, groups, out, st);
    if (rc && n->line) {
        snprintf(st->file, sizeof st->file, "%s", model_path);
        st->line = n->line;
        st->column = 1;
    } else if (rc) {
        status_prefix(st, "--normalize: ");
    }
    return rc;
}

int resolve_run_normalization(const RunConfig *config, const char *model_path, RunData *data,
                              Status *st) {
    const NormalizeConfig *n = &config->data.normalize;
    const Dataset *train = &data->train;
    if (n->kind == NORMALIZE_NONE) return 0;
    if (n->kind == NORMALIZE_GIVEN) {
        TRY(from_given(n, dataset_stat_groups(train), model_path, &data->normalization, st));
        snprintf(data->normalization_source, sizeof data->normalization_source, "given");
        return 0;
    }
    int constant = 0;
    TRY(normalization_compute(train, &data->normalization, &constant, st));
    snprintf(data->normalization_source, sizeof data->normalization_source,
             "computed on %d training samples%s", train->count,
             constant ? "; constant ones keep std 1" : "");
    return 0;
}

int weights_normalization(const RunConfig *config, const char *model_path,
                          const char *weights_path, const CheckpointLoaded *loaded, int groups,
                          Normalization *out, Status *st) {
    memset(out, 0, sizeof *out);
    const Normalization *recorded = &loaded->inputs.normalization;
    const NormalizeConfig *n = &config->data.normalize;
    if (recorded->count > 0) {
        if (recorded->count != groups) {
            status_fail_at(st, STATUS_BAD_INPUT, weights_path, 0, 0, "records a normalization "
                           "of %d values, but the data has %d channels (or features)",
                           recorded->count, groups);
            status_hint(st, "evaluate on data shaped like the training data");
            return STATUS_BAD_INPUT;
        }
        return normalization_copy(recorded, out, st);
    }
    if (n->kind == NORMALIZE_GIVEN) return from_given(n, groups, model_path, out, st);
    if (n->kind == NORMALIZE_NONE) return 0;
    status_fail_at(st, STATUS_BAD_INPUT, model_path, n->line, 1, "normalize auto, but %s records "
                   "no normalization to evaluate with", weights_path);
    status_hint(st, "save the weights again with this trainer (`trainer train --save FILE` "
                    "records the mean and std), or write them in the model: `normalize mean=M "
                    "std=S` (`trainer data info` prints them)");
    return STATUS_BAD_INPUT;
}

void print_data_transform(const RunConfig *config, const Normalization *n, const char *how) {
    if (n && n->count > 0) {
        enum { SHOWN = 4 };  // a CSV file may have hundreds of features
        int shown = n->count < SHOWN ? n->count : SHOWN;
        char mean[128], std[128];
        normalization_format(n->mean, shown, 4, mean, sizeof mean);
        normalization_format(n->std, shown, 4, std, sizeof std);
        const char *more = n->count > SHOWN ? ",..." : "";
        printf("normalize: mean %s%s std %s%s (%d value%s, %s)\n", mean, more, std, more,
               n->count, n->count == 1 ? "" : "s", how);
    }
    const AugmentConfig *a = config ? &config->data.augment : NULL;
    if (a && (a->crop_padding || a->flip)) {
        char text[64];
        printf("augment: %s (training samples only, seeded by the run's seed)\n",
               augment_describe(a, text, sizeof text));
    }
}
