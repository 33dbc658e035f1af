#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/eval_nonfinite.h"
#include "core/eval_report.h"
#include "core/eval_split.h"
#include "core/train.h"
#include "data/dataset_stats.h"
#include "data/result_output.h"
#include "tools/cli.h"
#include "tools/result_sink.h"

static const OptionSpec eval_options[] = {
    {"--weights", "FILE", "safetensors weights: from `trainer train --save`, or a checkpoint "
                          "(required)"},
    {"--data", "SPEC", "fashion-mnist (default), idx:DIR, cifar10:DIR, png:DIR or csv:FILE "
                       "(a spec without a test split needs --val-split)"},
    {"--on-bad-sample", "fail|skip", "an unreadable image stops the run (fail, the default) "
                                     "or is left out and counted (skip)"},
    {"--batch", "N", "evaluation batch size (default: the model's train batch=)"},
    {"--test-limit", "N", "evaluate on N test samples only (see --limit-order)"},
    {"--val-split", "F", "evaluate on the validation split `train --val-split F` held out "
                         "(default: the split the weights record, on a dataset without a "
                         "test split)"},
    {"--seed", "N", "with --val-split: the seed that chose the split (default: the one the "
                    "weights record, else the model file's train seed=)"},
    {"--train-limit", "N", "with --val-split: the run's --train-limit, applied before the "
                           "split (default: the one the weights record)"},
    {"--per-class", NULL, "also print each class's samples, accuracy and precision, and the "
                          "confusion matrix (rows: true class, columns: predicted)"},
    {"--output", "FILE", "write the per-class figures and the confusion matrix to FILE.csv "
                         "(a row per class) or FILE.json (the result with the matrix)"},
    RESULT_OPTION_SPECS,
    LIMIT_ORDER_OPTION_SPEC,
    RESIZE_AS_RECORDED_OPTION_SPEC,
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

// The split to evaluate (core/eval_split.c); then, for a validation split, its seed, limit
// and limit order when given.
static int choose_split(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                        const HeldOutSplit *recorded, EvalSplit *split, Status *st) {
    EvalSplitAsk ask = {.spec = data_spec_from_args(cmd, args, config),
                        .test_limit = args_get(cmd, args, "--test-limit"),
                        .seed = args_get(cmd, args, "--seed"),
                        .train_limit = args_get(cmd, args, "--train-limit")};
    TRY(args_float_in(cmd, args, "--val-split", 0.0, 1.0, RANGE_OPEN, &ask.val_split,
                      &ask.val_split_given, st));
    TRY(eval_split_choose(&ask, config, recorded, split, st));
    if (!(split->held.fraction > 0)) return 0;
    TRY(args_int(cmd, args, "--seed", 0, 0x7fffffffL, &split->held.seed, NULL, st));
    TRY(args_int(cmd, args, "--train-limit", 1, 100000000, &split->held.train_limit, NULL,
                 st));
    if (!args_get(cmd, args, "--limit-order")) return 0;
    return args_limit_order(cmd, args, &split->held.limit_order, st);
}

// A limit at or past the training split's size cuts nothing: it becomes 0, as train
// records it, so that it compares equal to no limit.
static int load_validation(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                           const DatasetOptions *options, EvalSplit *split, Dataset *val,
                           int *skipped, Status *st) {
    Dataset train;
    TRY(load_data_split(cmd, args, config, "train", options, &train, skipped, st));
    SplitLimit how = {split->held.train_limit, "--train-limit", "training",
                      split->held.limit_order, (uint64_t)split->held.seed};
    int cut = 0, rc = apply_split_limit(&train, &how, &cut, st);
    if (rc) {
        dataset_free(&train);
        return rc;
    }
    if (!cut) {
        split->held.train_limit = 0;
        split->held.limit_order = LIMIT_STRATIFIED;
    }
    split->held.samples = train.count;
    rc = dataset_split_off(&train, split->held.fraction, (uint64_t)split->held.seed, val, st);
    dataset_free(&train);
    return rc;
}

// A progress line on a terminal while the samples are evaluated.
static void draw_progress(void *user, const char *split, int done, int total) {
    progress_update_eval(user, split, done, total);
}

// The class names a weights file records, into list (room for 256); how many.
static int recorded_class_names(const LoadedInputs *recorded, const char **list) {
    int count = recorded->class_count < 256 ? recorded->class_count : 256;
    for (int k = 0; k < count; k++) list[k] = recorded->class_names[k];
    return count;
}

static void print_result(const EvalSplit *split, const Dataset *test, const EvalResult *result);
static void emit_run_event(const Command *cmd, const ParsedArgs *args, const Graph *g,
                           const char *spec, const EvalSplit *split, const Device *d,
                           const Dataset *test);
static int report_result(const char *output, const EvalSplit *split, const EvalResult *result,
                         const Confusion *confusion, const ClassLabels *labels, Status *st);

// Evaluates the opened run's replica 0 on `test` in batches of the run's (--batch, else the
// model file's).
static int eval_with(const Command *cmd, const ParsedArgs *args, Run *run,
                     const RunConfig *config, const EvalSplit *split, Dataset *test,
                     Status *st) {
    Graph *g = &run->graphs[0];
    Device *d = &run->devices[0];
    const CheckpointLoaded *loaded = &run->loaded;
    const char *weights = args_get(cmd, args, "--weights");
    int batch = run->batch;
    TRY(graph_check_dataset(g, test, split->held.fraction ? "the validation set"
                                                          : "the test set", st));
    const char *spec = data_spec_from_args(cmd, args, config), *names[256];
    int classes = dataset_class_name_list(spec, test, names);
    TRY(check_recorded_classes(&loaded->inputs, names, classes, weights, spec, 0,
                               &printed_notice, st));
    // The samples normalized as in training: by what the weights file records.
    RunConfig evaluated = *config;
    Normalization normalization;
    TRY(weights_normalization(config, g->path, weights, loaded, dataset_stat_groups(test),
                              &normalization, st));
    if (normalization.count) {
        evaluated.normalization = &normalization;
        char source[1100];
        snprintf(source, sizeof source, "as recorded in %s", weights);
        print_data_transform(NULL, &normalization,
                             loaded->inputs.normalization.count > 0 ? source : "given");
    }
    emit_run_event(cmd, args, g, spec, split, d, test);
    // Per-class figures only when asked: counting them copies every batch's scores back.
    const char *output = args_get(cmd, args, "--output");
    int per_class = args_get(cmd, args, "--per-class") || output;
    Confusion confusion = {0};
    EvalResult result;
    ProgressBar bar;
    progress_init(&bar, stderr);
    TrainHooks hooks = {.user = &bar, .on_eval_batch = draw_progress, .eval_split = split->name};
    int stopped = 0;
    int rc = per_class ? confusion_open(&confusion, graph_classes(g), batch, st) : 0;
    if (!rc)
        rc = evaluate_model_stoppable(g, &evaluated, d, test, batch, &hooks, &stopped,
                                      per_class ? &confusion : NULL, &result, st);
    progress_clear(&bar);
    normalization_free(&normalization);
    if (!rc && !isfinite(result.loss))
        rc = eval_nonfinite_loss(g, d, split->name, &result, loaded, weights, st);
    // Data that names no classes (idx:, csv:) is shown by the names the weights record.
    if (!classes) classes = recorded_class_names(&loaded->inputs, names);
    ClassLabels labels = {names, classes};
    if (!rc) print_result(split, test, &result);
    if (!rc && args_get(cmd, args, "--per-class"))
        eval_report_text(&stdout_text, &confusion, &labels);
    if (!rc) rc = report_result(output, split, &result, per_class ? &confusion : NULL, &labels,
                                st);
    confusion_close(&confusion);
    return rc;
}

static void print_result(const EvalSplit *split, const Dataset *test, const EvalResult *result) {
    char loss[16];
    printf("%s loss %s  accuracy %.4f  (%d sample%s of %s", split->name,
           loss_text(result->loss, loss, sizeof loss), result->accuracy, result->samples,
           result->samples == 1 ? "" : "s", test->source);
    const HeldOutSplit *held = &split->held;
    if (held->train_limit)
        printf(", held out of %s%ld", held->limit_order == LIMIT_FIRST ? "the first " : "",
               held->train_limit);
    if (held->fraction)
        printf("%sby --val-split %g with seed %ld", held->train_limit ? " " : ", held out ",
               held->fraction, held->seed);
    printf(")\n");
}

// {"event": "run"}: what is measured, before the measuring.
static void emit_run_event(const Command *cmd, const ParsedArgs *args, const Graph *g,
                           const char *spec, const EvalSplit *split, const Device *d,
                           const Dataset *test) {
    if (!result_sink_json()) return;
    RunRecord run = {.command = "eval", .model = g->path, .data = spec, .split = split->name,
                     .weights = args_get(cmd, args, "--weights"), .device = d->name,
                     .samples = test->count};
    result_emit(run_record_json(&run));
}

// {"event": "result"} on stdout under --json, and the --output file: the same fields.
static int report_result(const char *output, const EvalSplit *split, const EvalResult *result,
                         const Confusion *confusion, const ClassLabels *labels, Status *st) {
    if (!result_sink_json() && !output) return 0;
    cJSON *event = eval_result_json(split->name, result, confusion, labels);
    int rc = output ? eval_report_write(output, event, confusion, labels, st) : 0;
    result_emit(event);
    return rc;
}

int run_eval(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    Dataset test = {0};
    if (result_sink_open(cmd, args, &st)) return report_failure(&st);
    if (load_model(cmd, args, &file, &g, &config, &st))
        return result_sink_close(report_failure(&st));
    int rc = 0;
    const char *output = args_get(cmd, args, "--output");
    if (output) rc = eval_output_check(output, &st);
    if (!rc && !args_get(cmd, args, "--weights")) {
        // Checked before the device and the data, so the mistake costs no waiting.
        rc = status_fail(&st, STATUS_BAD_INPUT, "trainer eval needs --weights FILE");
        status_hint(&st, "train with `trainer train %s --save FILE` first", g.path);
    }
    // Only --precision: the model file's `train precision=` is about training. The weights
    // before the data: a file of another model fails without the wait, and the split they
    // record chooses the samples.
    PrecisionConfig precision = {0};
    if (!rc) rc = precision_from_args(cmd, args, &precision, &st);
    Run run;
    memset(&run, 0, sizeof run);
    RunSetup setup = {.purpose = RUN_EVAL, .config = &config,
                      .weights = args_get(cmd, args, "--weights")};
    RunRequest request = {.precision = &precision};
    if (!rc) rc = open_run(cmd, args, &setup, &request, &g, &run, &st);
    else graph_free(&g);
    if (!rc) print_weights_notes(setup.weights, run.graphs[0].path, &run.loaded);
    Graph *opened = &run.graphs[0];
    CheckpointLoaded *loaded = &run.loaded;
    // An image folder's images resized as the weights record, unless --resize says.
    DatasetOptions options;
    const char *spec = data_spec_from_args(cmd, args, &config);
    if (!rc)
        rc = dataset_options_for_weights(cmd, args, opened, spec, setup.weights,
                                         &loaded->inputs, &options, &st);
    int skipped = 0;
    EvalSplit split;
    if (!rc) rc = choose_split(cmd, args, &config, &loaded->inputs.held_out, &split, &st);
    if (!rc && split.held.fraction) {
        rc = load_validation(cmd, args, &config, &options, &split, &test, &skipped, &st);
        char notice[EVAL_SPLIT_NOTICE_MAX];
        if (!rc && eval_split_other(&split, &loaded->inputs.held_out,
                                    args_get(cmd, args, "--weights"), notice, sizeof notice))
            print_notice("%s", notice);
    } else if (!rc) {
        rc = load_dataset_from_args(cmd, args, &config, "test", "--test-limit", &options, &test,
                                    &skipped, &st);
    }
    if (!rc && skipped) printf("skipped %d unreadable sample%s (--on-bad-sample skip)\n",
                               skipped, skipped == 1 ? "" : "s");
    if (!rc) rc = eval_with(cmd, args, &run, &config, &split, &test, &st);
    int exit_code = rc ? report_failure(&st) : 0;
    dataset_free(&test);
    run_close(&run);
    model_file_free(&file);
    return result_sink_close(exit_code);
}
