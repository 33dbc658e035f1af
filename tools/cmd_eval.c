#include <stdio.h>
#include <string.h>

#include "core/train.h"
#include "data/dataset_stats.h"
#include "tools/cli.h"

static const OptionSpec eval_options[] = {
    {"--weights", "FILE", "safetensors weights: from `trainer train --save`, or a checkpoint "
                          "(required)"},
    {"--data", "SPEC", "fashion-mnist (default), idx:DIR, cifar10:DIR or png:DIR"},
    {"--on-bad-sample", "fail|skip", "an unreadable image stops the run (fail, the default) "
                                     "or is left out and counted (skip)"},
    {"--batch", "N", "evaluation batch size (default: the model's train batch=)"},
    {"--test-limit", "N", "evaluate on the first N test samples only"},
    {"--val-split", "F", "evaluate on the validation split `train --val-split F` held out "
                         "(give the run's F, --seed and --train-limit)"},
    {"--seed", "N", "with --val-split: the run's seed, which chose the split (default: the "
                    "model file's train seed=)"},
    {"--train-limit", "N", "with --val-split: the run's --train-limit, applied before the "
                           "split"},
    DEVICE_OPTION_SPECS,
    {NULL, NULL, NULL},
};

const Command eval_command = {
    .name = "eval",
    .usage = "MODEL --weights FILE [options]",
    .summary = "measure loss and accuracy of trained weights on a dataset's test split (or "
                "the validation split --val-split held out)",
    .options = eval_options,
    .run = run_eval,
};

// What eval measures: the test split, or the validation split a run held out, which
// --val-split F (with the run's --seed and --train-limit) chooses again as train did.
typedef struct EvalSplit {
    double fraction;  // 0: the test split
    const char *name; // "test" or "val", for the result line
} EvalSplit;

// The split to evaluate: --val-split; else the test split; else, for a spec without one, the
// model file's `data val_split=` (the split a run of it evaluated on). With neither, refused
// here with a hint that fits eval (data/'s own hint names the option both commands take).
static int choose_split(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                        EvalSplit *split, Status *st) {
    int given = 0;
    split->fraction = 0;
    split->name = "test";
    TRY(args_float_in(cmd, args, "--val-split", 0.0, 1.0, RANGE_OPEN, &split->fraction,
                      &given, st));
    const char *spec = data_spec_from_args(cmd, args, config);
    const char *test_limit = args_get(cmd, args, "--test-limit");
    if (given && test_limit) {
        status_fail(st, STATUS_BAD_INPUT, "--test-limit %s limits the test split, but "
                    "--val-split %g evaluates the validation split", test_limit,
                    split->fraction);
        status_hint(st, "drop --test-limit; --train-limit, as the run had it, sizes the "
                    "training data the validation split is drawn from");
        return STATUS_BAD_INPUT;
    }
    if (!given && dataset_has_test_split(spec)) {
        // Without a split to choose, these would be ignored: say so rather than measure
        // something else than the user meant.
        const char *unused = args_get(cmd, args, "--seed") ? "--seed" :
                             args_get(cmd, args, "--train-limit") ? "--train-limit" : NULL;
        if (!unused) return 0;
        status_fail(st, STATUS_BAD_INPUT, "%s %s chooses the validation split with "
                    "--val-split, but this eval measures %s's test split", unused,
                    args_get(cmd, args, unused), spec);
        status_hint(st, "add the run's --val-split F to evaluate its validation split, or "
                    "drop %s", unused);
        return STATUS_BAD_INPUT;
    }
    if (!given) split->fraction = config->data.val_split;
    if (split->fraction > 0) {
        split->name = "val";
        return 0;
    }
    status_fail(st, STATUS_BAD_INPUT, "dataset %s has no test split to evaluate on", spec);
    status_hint(st, "evaluate the part `trainer train --val-split F` held out: give eval the "
                "same --val-split F, and the run's --seed and --train-limit if it had them");
    return STATUS_BAD_INPUT;
}

// The validation split exactly as train makes it (tools/common.c, load_run_data): the
// training split, cut by --train-limit, then dataset_split_off with the same seed.
static int load_validation(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                           const DatasetOptions *options, double fraction, Dataset *val,
                           int *skipped, Status *st) {
    Dataset train;
    TRY(load_dataset_from_args(cmd, args, config, "train", "--train-limit", options, &train,
                               skipped, st));
    int rc = dataset_split_off(&train, fraction, (uint64_t)config->train.seed, val, st);
    dataset_free(&train);
    return rc;
}

static int eval_with(const Command *cmd, const ParsedArgs *args, Graph *g,
                     const RunConfig *config, Device *d, const EvalSplit *split,
                     Dataset *test, Status *st) {
    const char *weights = args_get(cmd, args, "--weights");
    long batch = config->train.batch;
    TRY(args_int(cmd, args, "--batch", 1, 1 << 20, &batch, NULL, st));
    TRY(graph_check_dataset(g, test, split->fraction ? "the validation set" : "the test set",
                            st));
    TRY(graph_init_params(g, d->backend, &d->alloc, 0, st));
    CheckpointLoaded loaded;
    TRY(load_weights(g, d->backend, weights, &loaded, st));
    // The samples normalized as in training: by what the weights file records.
    RunConfig evaluated = *config;
    Normalization normalization;
    int rc = weights_normalization(config, g->path, weights, &loaded, dataset_stat_groups(test),
                                   &normalization, st);
    int recorded = loaded.inputs.normalization.count > 0;
    checkpoint_loaded_free(&loaded);
    if (rc) return rc;
    if (normalization.count) {
        evaluated.normalization = &normalization;
        char source[1100];
        snprintf(source, sizeof source, "as recorded in %s", weights);
        print_data_transform(NULL, &normalization, recorded ? source : "given");
    }
    EvalResult result;
    rc = evaluate_model(g, &evaluated, d, test, (int)batch, &result, st);
    normalization_free(&normalization);
    if (rc) return rc;
    printf("%s loss %.4f  accuracy %.4f  (%d samples of %s", split->name, result.loss,
           result.accuracy, result.samples, test->source);
    if (split->fraction)
        printf(", held out by --val-split %g with seed %ld", split->fraction, config->train.seed);
    printf(")\n");
    return 0;
}

int run_eval(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    Device device;
    Dataset test = {0};
    if (load_model(cmd, args, &file, &g, &config, &st)) return report_failure(&st);
    int device_open = 0, rc = 0;
    if (!args_get(cmd, args, "--weights")) {
        // Checked before the device and the data, so the mistake costs no waiting.
        rc = status_fail(&st, STATUS_BAD_INPUT, "trainer eval needs --weights FILE");
        status_hint(&st, "train with `trainer train %s --save FILE` first", g.path);
    }
    // --seed as train reads it: it chose the validation split.
    long seed = 0;
    int seed_given = 0;
    if (!rc) rc = args_int(cmd, args, "--seed", 0, 0x7fffffffL, &seed, &seed_given, &st);
    if (!rc && seed_given) config.train.seed = seed;
    // Only --precision: the model file's `train precision=` is about training.
    PrecisionConfig precision = {0};
    if (!rc) rc = precision_from_args(cmd, args, &precision, &st);
    if (!rc) rc = open_device_with_precision(cmd, args, args_get(cmd, args, "--device"),
                                             &precision, 0, &device, &st);
    if (!rc) device_open = 1;
    if (!rc) rc = check_device_precision(&g, &precision, &device, NULL, &st);
    DatasetOptions options;
    if (!rc) rc = dataset_options_from_args(cmd, args, &g, &options, &st);
    int skipped = 0;
    EvalSplit split;
    if (!rc) rc = choose_split(cmd, args, &config, &split, &st);
    if (!rc && split.fraction)
        rc = load_validation(cmd, args, &config, &options, split.fraction, &test, &skipped, &st);
    else if (!rc)
        rc = load_dataset_from_args(cmd, args, &config, "test", "--test-limit", &options, &test,
                                    &skipped, &st);
    if (!rc && skipped) printf("skipped %d unreadable sample%s (--on-bad-sample skip)\n",
                               skipped, skipped == 1 ? "" : "s");
    if (!rc) rc = eval_with(cmd, args, &g, &config, &device, &split, &test, &st);
    int exit_code = rc ? report_failure(&st) : 0;
    dataset_free(&test);
    graph_free(&g);
    if (device_open) device_close(&device);
    model_file_free(&file);
    return exit_code;
}
