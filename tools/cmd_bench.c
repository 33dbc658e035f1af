// `trainer bench BENCHMARK`: what this device and its libraries deliver, beside the card's
// theoretical peak. Here the arguments are read, the benchmarks called (diagnostics/bench.c:
// bench_run) with a progress line on a terminal, and their reports printed: as tables
// (diagnostics/bench_text.c), or with --json as one object (diagnostics/bench_json.c).
#define _POSIX_C_SOURCE 200809L  // fileno
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/lever.h"
#include "base/suggest.h"
#include "base/text_out.h"
#include "core/step_graph.h"
#include "diagnostics/bench.h"
#include "tools/cli.h"

static const OptionSpec bench_options[] = {
    {"--device", "DEV", "cpu, auto (default: a GPU if usable, else cpu), cuda, cuda:N"},
    {"--repeats", "N", "timed repeats; each figure is their median (default 5)"},
    {"--warmup", "N", "untimed runs before the first repeat (train: steps; default 3)"},
    {"--json", NULL, "print one JSON object instead of tables"},
    {"--sizes", "LIST", "gemm: N or MxNxK, comma-separated (default 1024,4096,8192 on a GPU, "
                        "256,512,1024 on the CPU)"},
    {"--precisions", "LIST", "gemm: some of fp32,tf32,bf16,fp16 (default all)"},
    {"--bytes", "LIST", "memory: bytes per copy, e.g. 64M,1G (default 256M on a GPU, 64M on "
                        "the CPU)"},
    {"--batch", "N", "conv: samples (default 128 on a GPU, 8 on the CPU); train: instead of "
                     "the model file's batch"},
    {"--steps", "N", "train: steps per timed repeat (default 20)"},
    {"--per-layer", NULL, "train: also the forward and backward time of every layer"},
    {"--threads", "N", "CPU threads for BLAS (default: all cores)"},
    {"--no-tf32", NULL, "conv, train: keep fp32 math in full fp32 on GPUs with TF32"},
    {"--precision", "P", "train: fp32, tf32, bf16 or fp16, as trainer train takes it (default: "
                         "the model file's train precision=, else tf32 where the GPU has it)"},
    CUDA_GRAPH_OPTION_SPEC,
    {"--no-fuse", NULL, "train: run each act= activation as its own pass (to compare with the "
                        "fused default)"},
    {"--without", "LIST", "train, on a GPU: turn CUDA levers off, to measure each alone: some "
                          "of " LEVER_NAMES_TEXT " (docs/cli.md)"},
    {"--layout", "nchw|nhwc", "train, on a GPU: how images between convolutions lie: nchw (the "
                              "default) or nhwc, as cuDNN's tensor-core convolutions read them"},
    {NULL, NULL, NULL},
};

const Command bench_command = {
    .name = "bench",
    .usage = "gemm|memory|conv|all [options]  or  trainer bench train MODEL [options]",
    .summary = "measure GEMM, memory, convolution and training speed beside the device's peak",
    .options = bench_options,
    .run = run_bench,
};

// The benchmarks, and as bits (1 << index) which of them read an option.
static const char *const benchmarks[] = {"gemm", "memory", "conv", "train", "all", NULL};
enum { GEMM = 1, MEMORY = 2, CONV = 4, TRAIN = 8, ALL = 16 };

typedef struct BenchArgs {
    BenchRequest request;
    unsigned benchmark_bit;    // 1 << its index in benchmarks[]
    const char *model;         // train
    CudaGraphMode cuda_graph;  // train
    int json;
    int no_fuse;               // train: --no-fuse
    int fused_layers;   // train: layers that run their act= activation (graph_fuse_activations)
    unsigned disabled_levers;  // train: --without, as the device opened with it
    int nhwc_layers;    // train: layers holding NHWC images (--layout nhwc, graph_set_layouts)
} BenchArgs;

static int usage_error(Status *st, const char *hint, const char *message) {
    status_fail(st, STATUS_BAD_INPUT, "%s", message);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// ---- reading the arguments ------------------------------------------------------------

static int read_benchmark(const ParsedArgs *args, BenchArgs *a, Status *st) {
    if (args->positional_count == 0)
        return usage_error(st, "trainer bench gemm, memory, conv or all; trainer bench train "
                           "MODEL for a model's training steps", "trainer bench needs a "
                           "benchmark");
    const char *name = a->request.benchmark = args->positionals[0];
    for (int i = 0; benchmarks[i]; i++)
        if (strcmp(name, benchmarks[i]) == 0) a->benchmark_bit = 1u << i;
    if (!a->benchmark_bit) {
        const char *near = suggest(name, benchmarks);
        if (near)
            status_fail(st, STATUS_BAD_INPUT, "unknown benchmark '%s'; did you mean '%s'?",
                        name, near);
        else
            status_fail(st, STATUS_BAD_INPUT, "unknown benchmark '%s'", name);
        status_hint(st, "benchmarks: gemm, memory, conv, train MODEL, all");
        return STATUS_BAD_INPUT;
    }
    int wanted = a->benchmark_bit == TRAIN ? 2 : 1;
    if (a->benchmark_bit == TRAIN && args->positional_count < 2)
        return usage_error(st, "e.g. trainer bench train models/lenet.model",
                           "trainer bench train needs a model file");
    if (args->positional_count > wanted) {
        status_fail(st, STATUS_BAD_INPUT, "trainer bench %s: unexpected argument '%s'", name,
                    args->positionals[wanted]);
        status_hint(st, "usage: trainer bench gemm|memory|conv|all [options], trainer bench "
                        "train MODEL [options]");
        return STATUS_BAD_INPUT;
    }
    if (a->benchmark_bit == TRAIN) a->model = args->positionals[1];
    return 0;
}

// An option given to a benchmark that does not read it is a mistake worth saying.
static int check_option_scopes(const Command *cmd, const ParsedArgs *args, const BenchArgs *a,
                               Status *st) {
    static const struct { const char *option; unsigned readers; } scopes[] = {
        {"--sizes", GEMM | ALL}, {"--precisions", GEMM | ALL}, {"--bytes", MEMORY | ALL},
        {"--steps", TRAIN}, {"--precision", TRAIN}, {"--per-layer", TRAIN},
        {"--cuda-graph", TRAIN}, {"--no-fuse", TRAIN}, {"--without", TRAIN},
        {"--layout", TRAIN}, {"--batch", CONV | TRAIN | ALL},
    };
    for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++) {
        if (!args_get(cmd, args, scopes[i].option) || scopes[i].readers & a->benchmark_bit)
            continue;
        const char *readers[5];
        int count = 0;
        for (int b = 0; benchmarks[b]; b++)
            if (scopes[i].readers & 1u << b) readers[count++] = benchmarks[b];
        char list[128];
        text_join(readers, count, ", ", "", list, sizeof list);
        status_fail(st, STATUS_BAD_INPUT, "%s does not apply to trainer bench %s",
                    scopes[i].option, a->request.benchmark);
        status_hint(st, "%s applies to trainer bench %s", scopes[i].option, list);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int read_args(const Command *cmd, const ParsedArgs *args, BenchArgs *a, Status *st) {
    memset(a, 0, sizeof *a);
    BenchRequest *r = &a->request;
    TRY(read_benchmark(args, a, st));
    TRY(check_option_scopes(cmd, args, a, st));
    TRY(cuda_graph_mode_read(args_get(cmd, args, "--cuda-graph"), &a->cuda_graph, st));
    const struct { const char *option; long min, max, fallback; int *out; } numbers[] = {
        {"--repeats", 1, BENCH_MAX_REPEATS, 5, &r->options.repeats},
        {"--warmup", 0, 1000, 3, &r->options.warmup},
        {"--steps", 1, 100000, 20, &r->steps},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
        long value = numbers[i].fallback;
        TRY(args_int(cmd, args, numbers[i].option, numbers[i].min, numbers[i].max, &value, NULL,
                     st));
        *numbers[i].out = (int)value;
    }
    r->per_layer = args_get(cmd, args, "--per-layer") != NULL;
    a->json = args_get(cmd, args, "--json") != NULL;
    r->options.no_tf32 = args_get(cmd, args, "--no-tf32") != NULL;
    a->no_fuse = args_get(cmd, args, "--no-fuse") != NULL;
    return bench_request_read_lists(args_get(cmd, args, "--sizes"),
                                    args_get(cmd, args, "--precisions"),
                                    args_get(cmd, args, "--bytes"), r, st);
}

// ---- progress -------------------------------------------------------------------------

// One line on stderr, redrawn in place, when stderr is a terminal; cleared before results.
typedef struct Progress {
    int enabled, drawn;
} Progress;

static void show_progress(void *user, const char *what) {
    Progress *p = user;
    if (!p->enabled) return;
    fprintf(stderr, "\r\033[Kbench: %s ...", what);
    fflush(stderr);
    p->drawn = 1;
}

static void clear_progress(Progress *p) {
    if (!p->drawn) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->drawn = 0;
}

// ---- running --------------------------------------------------------------------------

static int load_bench_model(const BenchArgs *a, ModelFile *file, Graph *g, RunConfig *config,
                            Status *st) {
    char found[4096];
    return run_build_model(resolve_model_path(a->model, found, sizeof found), a->no_fuse, file,
                           g, config, st);
}

static void print_reports(const BenchArgs *a, const BenchDevice *dev, const BenchReports *r) {
    BenchRun run = {.benchmark = a->request.benchmark, .device = dev,
                    .options = &a->request.options, .gemm = r->gemm, .memory = r->memory,
                    .conv = r->conv, .train = r->has_train ? &r->train : NULL,
                    .disabled_levers = a->disabled_levers, .nhwc_layers = a->nhwc_layers,
                    .fused_layers = a->fused_layers};
    if (!a->json) {
        bench_text(&stdout_text, &run);
        return;
    }
    print_and_delete_json(bench_json(&run), 0);
}

int run_bench(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    BenchArgs a;
    if (read_args(cmd, args, &a, &st)) return report_failure(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    int have_model = 0;
    if (a.model) {
        if (load_bench_model(&a, &file, &g, &config, &st)) return report_failure(&st);
        config.cuda_graph = a.cuda_graph;
        have_model = 1;
        for (int i = 0; i < g.count; i++) a.fused_layers += g.layers[i]->fused_activation != NULL;
    }
    // A model is benchmarked in the precision `trainer train` would run it in: the model
    // file's, or --precision, checked against the device, with its 16-bit storage.
    PrecisionConfig precision = have_model ? config.precision : (PrecisionConfig){0};
    int rc = precision_from_args(cmd, args, &precision, &st);
    // bench_train reads the run's precision from config, as the training loop does (fp16's
    // loss scaling): --precision over the model file's.
    if (!rc && have_model) config.precision = precision;
    Run run;
    memset(&run, 0, sizeof run);
    RunSetup setup = {.purpose = have_model ? RUN_BENCH : RUN_DEVICE_ONLY,
                      .config = have_model ? &config : NULL};
    RunRequest request = {.precision = &precision};
    if (!rc) rc = open_run(cmd, args, &setup, &request, have_model ? &g : NULL, &run, &st);
    else if (have_model) graph_free(&g);
    Device *device = &run.devices[0];
    Graph *opened = have_model ? &run.graphs[0] : NULL;
    a.request.batch = run.batch;  // --batch, else train's model file's; conv's: below
    if (!rc && have_model) a.nhwc_layers = graph_nhwc_layers(opened);
    if (run.devices_open) a.disabled_levers = device->disabled_levers;
    BenchDevice dev;
    if (!rc && have_model)
        rc = step_graphs_check_device(config.cuda_graph, device->backend, &st);
    if (!rc) rc = bench_device_describe(device, &dev, &st);
    if (!rc) bench_request_defaults(&a.request, &dev);
    Progress progress = {.enabled = isatty(fileno(stderr))};
    a.request.options.on_progress = show_progress;
    a.request.options.user = &progress;
    BenchReports reports;
    memset(&reports, 0, sizeof reports);
    if (!rc) rc = bench_run(device, &dev, &a.request, opened, &config, &reports, &st);
    clear_progress(&progress);
    if (!rc) print_reports(&a, &dev, &reports);
    if (!rc) rc = bench_memory_measured(reports.memory, &st);
    flush_stdout();
    bench_reports_free(&reports);
    run_close(&run);
    if (have_model) model_file_free(&file);
    return rc ? report_failure(&st) : 0;
}
