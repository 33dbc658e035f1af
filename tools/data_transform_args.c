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

// "given", "computed on N training samples", as the run header says where they came from.
static const char *normalization_how(const RunData *data, char *out, size_t size) {
    switch (data->normalization_source) {
    case NORMALIZATION_FROM_GIVEN: return "given";
    case NORMALIZATION_FROM_RESUMED: return "as recorded in the checkpoint resumed";
    case NORMALIZATION_FROM_COMPUTED:
        snprintf(out, size, "computed on %d training samples%s", data->normalization_samples,
                 data->normalization_constant ? "; constant ones keep std 1" : "");
        return out;
    case NORMALIZATION_FROM_NONE: break;
    }
    return "";
}

void print_run_normalization(const RunConfig *config, const RunData *data) {
    char how[128];
    print_data_transform(config, &data->normalization, normalization_how(data, how, sizeof how));
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
