// `trainer data info SPEC`: what a dataset holds, per split: the sample shape, samples per
// class (with the class names of a png:DIR), the value range, mean and std.
#include <stdio.h>
#include <string.h>

#include "data/dataset_stats.h"
#include "tools/cli.h"

static const OptionSpec data_options[] = {
    {"--channels", "N", "png:DIR: read images as 1 (gray, the default) or 3 (RGB) channels"},
    {"--on-bad-sample", "fail|skip", "an unreadable image stops (fail, the default) or is left "
                                     "out and counted (skip)"},
    {NULL, NULL, NULL},
};

const Command data_command = {
    .name = "data",
    .usage = "info SPEC [--channels N] [--on-bad-sample fail|skip]",
    .summary = "describe a dataset: samples per class, shape, value range, mean and std",
    .options = data_options,
    .run = run_data,
};

static void print_split(const char *split, const Dataset *ds, int skipped) {
    DatasetStats stats;
    dataset_stats(ds, &stats);
    printf("%s: %d samples of %dx%dx%d from %s%s\n", split, stats.count, ds->channels,
           ds->height, ds->width, ds->source, ds->features ? " (f32 features)" : "");
    for (int c = 0; c <= ds->label_max; c++) {
        const char *name = c < ds->class_count ? ds->class_names[c] : "";
        printf("  class %3d %-16s %8d\n", c, name, stats.per_class[c]);
    }
    printf("  values %.4f to %.4f, mean %.4f, std %.4f\n", stats.min, stats.max, stats.mean,
           stats.std);
    if (skipped) printf("  skipped %d unreadable sample%s\n", skipped, skipped == 1 ? "" : "s");
}

static int check_usage(const Command *cmd, const ParsedArgs *args, Status *st) {
    if (args->positional_count == 2 && strcmp(args->positionals[0], "info") == 0) return 0;
    status_fail(st, STATUS_BAD_INPUT, "trainer data takes `info SPEC`");
    status_hint(st, "usage: trainer data %s, e.g. trainer data info fashion-mnist", cmd->usage);
    return STATUS_BAD_INPUT;
}

static int describe(const Command *cmd, const ParsedArgs *args, Status *st) {
    const char *spec = args->positionals[1];
    DatasetOptions options = {0};
    long channels = 1;
    TRY(args_int(cmd, args, "--channels", 1, 3, &channels, NULL, st));
    if (channels == 2) return status_fail(st, STATUS_BAD_INPUT, "--channels must be 1 or 3");
    options.channels = (int)channels;
    const char *bad = args_get(cmd, args, "--on-bad-sample");
    options.skip_bad_samples = bad && strcmp(bad, "skip") == 0;
    const char *splits[2] = {"train", "test"};
    for (int i = 0; i < (dataset_has_test_split(spec) ? 2 : 1); i++) {
        Dataset ds;
        int skipped = 0;
        TRY(dataset_load_with(spec, splits[i], &options, &ds, &skipped, st));
        print_split(splits[i], &ds, skipped);
        dataset_free(&ds);
    }
    return 0;
}

int run_data(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (check_usage(cmd, args, &st) || describe(cmd, args, &st)) return report_failure(&st);
    return 0;
}
