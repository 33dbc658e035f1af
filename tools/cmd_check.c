#include <stdio.h>
#include <string.h>

#include "core/memory_plan.h"
#include "core/precision_check.h"
#include "diagnostics/check_report.h"
#include "tools/cli.h"

static const OptionSpec check_options[] = {
    {"--batch", "N", "batch size for the memory plan (default: the model's train batch=)"},
    {"--device", "DEV", "plan for this device: cpu (default; needs no GPU), cuda, cuda:N"},
    {"--memory-limit", "SIZE", "find the largest batch for this limit (bytes, 512M, 2G, or a "
                               "fraction like 0.5) instead of the device's memory"},
    {"--data", "SPEC", "validate every split a run would read and include the copies "
                       "training keeps on the device: fashion-mnist, idx:DIR, cifar10:DIR, "
                       "png:DIR or csv:FILE"},
    {"--train-limit", "N", "with --data: N training samples only (see --limit-order)"},
    {"--test-limit", "N", "with --data: N test samples only (see --limit-order)"},
    DATA_OPTION_SPECS,
    DATA_TRANSFORM_OPTION_SPECS,
    PRECISION_OPTION_SPEC,
    NO_FUSE_OPTION_SPEC,
    {NULL, NULL, NULL},
};

const Command check_command = {
    .name = "check",
    .usage = "MODEL [--batch N] [--device DEV] [--memory-limit SIZE] [--data SPEC]",
    .summary = "validate a model file and print its layers, shapes, parameters and memory plan",
    .options = check_options,
    .run = run_check,
};

static int load_data(const Command *cmd, const ParsedArgs *args, const Graph *g,
                     const RunConfig *config, RunData *data, MemoryPlanOptions *options,
                     Status *st) {
    TRY(load_run_data(cmd, args, g, config, NULL, data, st));
    TRY(resolve_run_normalization(config, g->path, data, st));
    TRY(check_augment_option(cmd, args, config, data, st));
    TRY(check_run_data(g, config, data, st));
    options->train_samples = data->train.count;
    options->test_samples = data->has_val ? data->val.count : data->test.count;
    // f32 and streamed datasets are staged, so they hold no device copy.
    options->sample_bytes = data->train.features || data->train.paths
                                ? 0 : dataset_sample_size(&data->train);
    return 0;
}

static void print_data_verdict(const char *spec, const RunData *data) {
    char source[4096];
    printf("data %s: valid, %d train", dataset_spec_source(spec, &data->train, source,
                                                           sizeof source), data->train.count);
    if (data->has_val) printf(", %d val", data->val.count);
    if (data->has_test) printf(", %d test", data->test.count);
    printf(" samples\n");
    print_run_data_notes(data, 0);
    print_run_data_notes(data, 1);
}

// The precision the plan is for. Checking on the CPU by default (no --device) must not
// refuse a model meant for a GPU: then a precision the CPU lacks is planned as on a GPU,
// and `refused` says why the CPU itself would not run it.
typedef struct CheckPrecision {
    Precision computed;
    char refused[sizeof ((Status *)0)->message];  // "" when the device runs it
} CheckPrecision;

static void print_check_precision(const RunConfig *config, const CheckPrecision *p,
                                  const Device *device) {
    if (!p->refused[0]) {
        print_precision(&config->precision, p->computed, device->name);
        return;
    }
    print_precision(&config->precision, p->computed, "a GPU");
    printf("  not on %s: %s; train on a GPU (--device cuda)\n", device->name, p->refused);
}

// The device (for its workspace sizes and memory) and, with --data, the datasets are
// opened before anything is printed, so that a bad --device or --data prints only its error.
static int check_with(const Command *cmd, const ParsedArgs *args, Graph *g,
                      const RunConfig *config, int batch, Device *device,
                      const CheckPrecision *checked, Status *st) {
    CheckPrecision precision = *checked;
    MemoryPlanOptions options = {.batch = batch, .optimizer = &config->optimizer,
                                 .limit = device->alloc.limit,
                                 .precision = precision.computed};
    RunData data = {0};
    int have_data = args_get(cmd, args, "--data") != NULL || config->data.spec[0];
    // The reading options are checked with no data to read too: a typo is one either way.
    DatasetOptions reading;
    int rc = dataset_options_from_args(cmd, args, g, &reading, st);
    if (!rc && have_data) rc = load_data(cmd, args, g, config, &data, &options, st);
    MemoryPlan plan;
    if (!rc) rc = memory_plan(g, device->backend, &options, &plan, st);
    if (!rc) {
        rc = check_write_model(&stdout_text, g, config, device, st);
        if (!rc) print_check_precision(config, &precision, device);
        if (!rc) check_write_plan(&stdout_text, config, &plan, have_data);
        memory_plan_free(&plan);
        if (!rc) rc = check_write_largest_batch(&stdout_text, g, device, &options, st);
        if (!rc && have_data) print_data_verdict(data_spec_from_args(cmd, args, config), &data);
        if (!rc) print_run_normalization(config, &data);
    }
    run_data_free(&data);
    return rc;
}

int run_check(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    if (load_model(cmd, args, &file, &g, &config, &st)) return report_failure(&st);
    int rc = apply_data_transform_overrides(cmd, args, &config, &st);
    if (!rc) rc = precision_from_args(cmd, args, &config.precision, &st);
    // Checking needs no GPU: the plan is for the CPU unless --device names another; there a
    // precision the CPU lacks is kept as a note, and the plan stays the GPU's.
    Status refusal;
    status_clear(&refusal);  // run_open fills it only when it kept a refusal
    RunSetup setup = {.purpose = RUN_CHECK, .config = &config,
                      .keep_refusal = !args_get(cmd, args, "--device"), .refusal = &refusal};
    RunRequest request = {.precision = &config.precision};
    Run run;
    memset(&run, 0, sizeof run);
    if (!rc) rc = open_run(cmd, args, &setup, &request, &g, &run, &st);
    else graph_free(&g);
    if (!rc) {
        CheckPrecision precision = {.computed = run.precision};
        snprintf(precision.refused, sizeof precision.refused, "%s", refusal.message);
        rc = check_with(cmd, args, &run.graphs[0], &config, run.batch, &run.devices[0],
                        &precision, &st);
    }
    int exit_code = rc ? report_failure(&st) : 0;
    run_close(&run);
    model_file_free(&file);
    return exit_code;
}
