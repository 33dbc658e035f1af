#include <stdio.h>

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
    DEVICE_OPTION_SPECS,
    {NULL, NULL, NULL},
};

const Command eval_command = {
    .name = "eval",
    .usage = "MODEL --weights FILE [options]",
    .summary = "measure loss and accuracy of trained weights on a dataset's test split",
    .options = eval_options,
    .run = run_eval,
};

static int eval_with(const Command *cmd, const ParsedArgs *args, Graph *g,
                     const RunConfig *config, Device *d, Dataset *test, Status *st) {
    const char *weights = args_get(cmd, args, "--weights");
    long batch = config->train.batch;
    TRY(args_int(cmd, args, "--batch", 1, 1 << 20, &batch, NULL, st));
    TRY(graph_check_dataset(g, test, "the test set", st));
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
    printf("test loss %.4f  accuracy %.4f  (%d samples of %s)\n", result.loss, result.accuracy,
           result.samples, test->source);
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
    if (!rc) rc = load_dataset_from_args(cmd, args, &config, "test", "--test-limit", &options,
                                         &test, &skipped, &st);
    if (!rc && skipped) printf("skipped %d unreadable sample%s (--on-bad-sample skip)\n",
                               skipped, skipped == 1 ? "" : "s");
    if (!rc) rc = eval_with(cmd, args, &g, &config, &device, &test, &st);
    int exit_code = rc ? report_failure(&st) : 0;
    dataset_free(&test);
    graph_free(&g);
    if (device_open) device_close(&device);
    model_file_free(&file);
    return exit_code;
}
