// `trainer data info SPEC`: what a dataset holds, per split: the sample shape, samples per
// class (with the class names of a png:DIR), the value range, mean and std
// (data/dataset_describe.c).
// `trainer data export SPEC images:DIR` (or png:DIR): the dataset as PNG class folders
// (data/dataset_export.c), which --data images:DIR reads back.
#define _POSIX_C_SOURCE 200809L  // fileno

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/escape.h"
#include "base/suggest.h"
#include "data/dataset_export.h"
#include "data/dataset_stats.h"
#include "tools/cli.h"

static const OptionSpec data_options[] = {
    {"--channels", "N", "images:DIR: read images as 1 (gray, the default) or 3 (RGB) channels"},
    {"--on-bad-sample", "fail|skip", "an unreadable image stops (fail, the default) or is left "
                                     "out and counted (skip)"},
    {"--limit", "N", "N samples of each split (see --limit-order)"},
    {"--train-limit", "N", "N training samples (overrides --limit)"},
    {"--test-limit", "N", "N test samples (overrides --limit)"},
    LIMIT_ORDER_OPTION_SPEC,
    {"--force", NULL, "export: write into a folder that is not empty"},
    {NULL, NULL, NULL},
};

const Command data_command = {
    .name = "data",
    .usage = "info SPEC [--limit N] [--train-limit N] [--test-limit N] [--channels N]\n"
             "                         [--on-bad-sample fail|skip]\n"
             "       trainer data export SPEC images:DIR [--limit N] [--train-limit N] [--test-limit N]\n"
             "                           [--force] [--channels N]",
    .summary = "describe a dataset (samples per class, shape, values), or export it as PNGs",
    .options = data_options,
    .run = run_data,
};

// The class names are the dataset's own (a png:DIR's folders) or, for Fashion-MNIST and
// CIFAR-10, the ones their files do not hold.
static void print_split(const char *spec, const char *split, const Dataset *ds, int skipped) {
    const char *names[256];
    int named = dataset_class_name_list(spec, ds, names);
    dataset_describe(&stdout_text, split, ds, names, named, skipped);
}

static int is_action(const ParsedArgs *args, const char *action, int positionals) {
    return args->positional_count == positionals && strcmp(args->positionals[0], action) == 0;
}

static int check_usage(const Command *cmd, const ParsedArgs *args, Status *st) {
    if (is_action(args, "info", 2)) return 0;
    // The destination is spelled as --data reads it back: images:DIR, or its alias png:DIR.
    const char *target = args->positional_count == 3 ? args->positionals[2] : NULL;
    if (is_action(args, "export", 3) && dataset_image_folder(target) &&
        target[dataset_image_folder(target)])
        return 0;
    if (is_action(args, "export", 3)) {
        status_fail(st, STATUS_BAD_INPUT, "trainer data export writes images:DIR, not '%s'",
                    target);
        status_hint(st, "e.g. trainer data export fashion-mnist images:/tmp/fashion-png");
        return STATUS_BAD_INPUT;
    }
    static const char *const actions[] = {"info", "export", NULL};
    const char *typed = args->positional_count ? args->positionals[0] : NULL;
    const char *near = typed ? suggest(typed, actions) : NULL;
    if (near && strcmp(near, typed) != 0) {
        char escaped[256];
        status_fail(st, STATUS_BAD_INPUT, "trainer data: unknown action '%s'",
                    text_escape(typed, strlen(typed), escaped, sizeof escaped));
        status_hint(st, "did you mean 'trainer data %s'? See `trainer data --help`", near);
        return STATUS_BAD_INPUT;
    }
    status_fail(st, STATUS_BAD_INPUT, "trainer data takes `info SPEC` or `export SPEC images:DIR`");
    status_hint(st, "e.g. trainer data info fashion-mnist; see `trainer data --help`");
    return STATUS_BAD_INPUT;
}

// What both actions read: the images' channels, --on-bad-sample, and each split's limit.
static int read_options(const Command *cmd, const ParsedArgs *args, DatasetOptions *options,
                        long limits[2], Status *st) {
    memset(options, 0, sizeof *options);
    long limit = 0;
    TRY(args_int(cmd, args, "--limit", 1, 1000000000, &limit, NULL, st));
    limits[0] = limits[1] = limit;
    TRY(args_int(cmd, args, "--train-limit", 1, 1000000000, &limits[0], NULL, st));
    TRY(args_int(cmd, args, "--test-limit", 1, 1000000000, &limits[1], NULL, st));
    long channels = 1;
    TRY(args_int(cmd, args, "--channels", 1, 3, &channels, NULL, st));
    if (channels == 2) {
        status_fail(st, STATUS_BAD_INPUT, "--channels 2: must be 1 or 3");
        status_hint(st, "--channels 1 reads images as gray, --channels 3 as RGB");
        return STATUS_BAD_INPUT;
    }
    options->channels = (int)channels;
    options->on_notice = print_notice_line;
    return args_on_bad_sample(cmd, args, &options->skip_bad_samples, st);
}

// The option that limits split i: --train-limit or --test-limit when given, else --limit.
static const char *limit_option(const Command *cmd, const ParsedArgs *args, int i) {
    const char *own = i == 0 ? "--train-limit" : "--test-limit";
    return args_get(cmd, args, own) ? own : "--limit";
}

// Reads split i (0: train, 1: test) of the spec, cut to its limit. --channels chooses how
// PNGs are read; any other source has its own channels, which another count cannot change.
static int read_split(const Command *cmd, const ParsedArgs *args, const DatasetOptions *options,
                      const long limits[2], int i, Dataset *ds, int *skipped, Status *st) {
    static const char *const names[2] = {"train", "test"};
    const char *spec = args->positionals[1];
    TRY(dataset_load_with(spec, names[i], options, ds, skipped, st));
    if (args_get(cmd, args, "--channels") && !dataset_image_folder(spec) &&
        ds->channels != options->channels) {
        status_fail(st, STATUS_BAD_INPUT, "--channels %d: %s has %d channel%s of its own",
                    options->channels, spec, ds->channels, ds->channels == 1 ? "" : "s");
        status_hint(st, "--channels chooses how images:DIR images are read; leave it out here");
        dataset_free(ds);
        return STATUS_BAD_INPUT;
    }
    // No run here, so no run's seed: a stratified limit is drawn from seed 1, the model
    // files' default, so `data export --train-limit N` keeps what `train` would.
    SplitLimit how = {limits[i], limit_option(cmd, args, i), i == 0 ? "training" : "test",
                      LIMIT_STRATIFIED, 1};
    int cut = 0, rc = args_limit_order(cmd, args, &how.order, st);
    if (!rc) rc = apply_split_limit(ds, &how, &cut, st);
    if (rc) dataset_free(ds);
    return rc;
}

static int describe(const Command *cmd, const ParsedArgs *args, Status *st) {
    const char *spec = args->positionals[1];
    DatasetOptions options;
    long limits[2];
    TRY(read_options(cmd, args, &options, limits, st));
    const char *splits[2] = {"train", "test"};
    for (int i = 0; i < (dataset_has_test_split(spec) ? 2 : 1); i++) {
        Dataset ds;
        int skipped = 0;
        TRY(read_split(cmd, args, &options, limits, i, &ds, &skipped, st));
        print_split(spec, splits[i], &ds, skipped);
        dataset_free(&ds);
    }
    return 0;
}

// A line redrawn on a terminal at most 5 times a second; nothing when stderr is a file.
typedef struct ExportLine {
    int terminal;
    double last_draw;
} ExportLine;

static void draw_progress(void *context, const char *split, int done, int total) {
    ExportLine *line = context;
    if (!line->terminal) return;
    double now = monotonic_seconds();
    if (done < total && now - line->last_draw < 0.2) return;
    line->last_draw = now;
    fprintf(stderr, "\r%s: %d/%d images%s", split, done, total, done == total ? "\n" : "");
    fflush(stderr);
}

static void print_written(void *context, const ExportedSplit *split) {
    const Dataset *ds = split->ds;
    printf("%s: %d image%s of %dx%dx%d in %d class folder%s under %s (%.1f s)\n", split->name,
           ds->count, ds->count == 1 ? "" : "s", ds->channels, ds->height, ds->width,
           split->folders, split->folders == 1 ? "" : "s", split->where, split->seconds);
    // The next split's line starts afresh.
    ((ExportLine *)context)->last_draw = 0;
}

// Both splits are read before any is written: the class folders' label width comes from
// the largest label of either.
typedef struct ExportSplits {
    Dataset sets[2];
    const char *names[2];
    int count;
} ExportSplits;

static void export_splits_free(ExportSplits *splits) {
    for (int i = 0; i < splits->count; i++) dataset_free(&splits->sets[i]);
}

static int read_splits(const Command *cmd, const ParsedArgs *args, ExportSplits *splits,
                       Status *st) {
    const char *spec = args->positionals[1];
    DatasetOptions options;
    long limits[2];
    TRY(read_options(cmd, args, &options, limits, st));
    splits->names[0] = "train";
    splits->names[1] = "test";
    for (int i = 0; i < (dataset_has_test_split(spec) ? 2 : 1); i++) {
        int skipped = 0;
        TRY(read_split(cmd, args, &options, limits, i, &splits->sets[i], &skipped, st));
        splits->count++;
        if (skipped) print_notice("%s: skipped %d unreadable sample%s", splits->names[i],
                                  skipped, skipped == 1 ? "" : "s");
    }
    return 0;
}

// DIR of the destination images:DIR (or png:DIR), which check_usage accepted.
static const char *export_folder(const ParsedArgs *args) {
    return args->positionals[2] + dataset_image_folder(args->positionals[2]);
}

static int write_splits(const Command *cmd, const ParsedArgs *args, const ExportSplits *splits,
                        Status *st) {
    const char *spec = args->positionals[1], *dir = export_folder(args);
    ExportLine line = {isatty(fileno(stderr)), 0};
    ExportHooks hooks = {draw_progress, print_written, &line};
    TRY(dataset_export_splits(spec, splits->sets, splits->names, splits->count, dir,
                              args_get(cmd, args, "--force") != NULL, &hooks, st));
    printf("read it with --data images:%s\n", dir);
    return 0;
}

static int export_png(const Command *cmd, const ParsedArgs *args, Status *st) {
    // Before reading, so the refusal costs no waiting.
    TRY(dataset_export_check_target(args->positionals[1], export_folder(args), st));
    ExportSplits splits = {0};
    int rc = read_splits(cmd, args, &splits, st);
    if (!rc) rc = write_splits(cmd, args, &splits, st);
    export_splits_free(&splits);
    return rc;
}

int run_data(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (check_usage(cmd, args, &st)) return report_failure(&st);
    int rc = is_action(args, "info", 2) ? describe(cmd, args, &st) : export_png(cmd, args, &st);
    return rc ? report_failure(&st) : 0;
}
