// `trainer bench BENCHMARK`: what this device and its libraries deliver, beside the card's
// theoretical peak. diagnostics/bench*.c measures and returns reports; here the arguments
// are read and the reports printed as tables, or with --json as one object
// (diagnostics/bench_json.c).
#define _POSIX_C_SOURCE 200809L  // fileno
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/lever.h"
#include "base/suggest.h"
#include "core/step_graph.h"
#include "diagnostics/bench.h"
#include "diagnostics/bench_json.h"
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

static const char *const benchmarks[] = {"gemm", "memory", "conv", "train", "all", NULL};

typedef struct BenchArgs {
    const char *benchmark;
    const char *model;  // train
    BenchOptions options;
    BenchGemmSize sizes[BENCH_MAX_SIZES];
    int size_count;     // 0: the device's default
    unsigned precisions;
    size_t bytes[BENCH_MAX_SIZES];
    int byte_count;     // 0: the device's default
    int batch;          // 0: the default (conv) or the model file's (train)
    int steps;
    int per_layer;
    CudaGraphMode cuda_graph;  // train
    int json;
    int no_fuse;        // train: --no-fuse
    int fused_layers;   // train: layers that run their act= activation (graph_fuse_activations)
    unsigned disabled_levers;  // train: --without, as the device opened with it
    int nhwc_layers;    // train: layers holding NHWC images (--layout nhwc, graph_set_layouts)
} BenchArgs;

static int is(const BenchArgs *a, const char *name) { return strcmp(a->benchmark, name) == 0; }

static int usage_error(Status *st, const char *hint, const char *message) {
    status_fail(st, STATUS_BAD_INPUT, "%s", message);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// ---- reading the arguments ------------------------------------------------------------

enum { ITEM_UNREADABLE = 1, ITEM_OUT_OF_RANGE = 2 };  // what parse returns on failure

// The items of a comma-separated list, each handed to parse; at most BENCH_MAX_SIZES.
static int each_item(const char *option, const char *list, int (*parse)(const char *, void *, int),
                     void *out, int *count, Status *st) {
    char copy[512];
    snprintf(copy, sizeof copy, "%s", list);
    *count = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*count == BENCH_MAX_SIZES) {
            status_fail(st, STATUS_BAD_INPUT, "%s %s: more than %d items", option, list,
                        BENCH_MAX_SIZES);
            status_hint(st, "run trainer bench again for the rest");
            return STATUS_BAD_INPUT;
        }
        int failed = parse(item, out, (*count)++);
        if (failed) {
            status_fail(st, STATUS_BAD_INPUT, failed == ITEM_OUT_OF_RANGE
                        ? "%s %s: '%s' is out of range" : "%s %s: cannot read '%s'", option,
                        list, item);
            return STATUS_BAD_INPUT;
        }
    }
    if (*count == 0) {
        status_fail(st, STATUS_BAD_INPUT, "%s: no items given", option);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int parse_dimension(const char **text, int *out) {
    char *end;
    errno = 0;
    long value = strtol(*text, &end, 10);
    if (end == *text) return ITEM_UNREADABLE;
    if (errno || value < 1 || value > 65536) return ITEM_OUT_OF_RANGE;
    *out = (int)value;
    *text = end;
    return 0;
}

// "4096" (square) or "MxNxK".
static int parse_gemm_size(const char *item, void *out, int index) {
    BenchGemmSize *s = &((BenchGemmSize *)out)[index];
    const char *p = item;
    int failed = parse_dimension(&p, &s->m);
    if (failed) return failed;
    if (!*p) {
        s->n = s->k = s->m;
        return 0;
    }
    if (*p++ != 'x') return ITEM_UNREADABLE;
    if ((failed = parse_dimension(&p, &s->n))) return failed;
    if (*p++ != 'x') return ITEM_UNREADABLE;
    if ((failed = parse_dimension(&p, &s->k))) return failed;
    return *p != '\0' ? ITEM_UNREADABLE : 0;
}

static int parse_precision(const char *item, void *out, int index) {
    int p = bench_precision_parse(item);
    if (p < 0) return 1;
    *(unsigned *)out |= 1u << p;
    return 0;
}

// "64M", "1G", "512K", "1048576": binary multiples, 4 bytes to 64 GiB.
static int parse_bytes(const char *item, void *out, int index) {
    char *end;
    errno = 0;
    double value = strtod(item, &end);
    if (end == item) return ITEM_UNREADABLE;
    if (errno || !(value > 0.0)) return ITEM_OUT_OF_RANGE;
    double unit = 1.0;
    switch (*end) {
    case 'K': case 'k': unit = 1024.0; end++; break;
    case 'M': case 'm': unit = 1024.0 * 1024.0; end++; break;
    case 'G': case 'g': unit = 1024.0 * 1024.0 * 1024.0; end++; break;
    default: break;
    }
    if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
    double bytes = value * unit;
    if (*end) return ITEM_UNREADABLE;
    if (bytes < 4.0 || bytes > 64.0 * 1024 * 1024 * 1024) return ITEM_OUT_OF_RANGE;
    ((size_t *)out)[index] = (size_t)bytes;
    return 0;
}

static int read_benchmark(const Command *cmd, const ParsedArgs *args, BenchArgs *a,
                          Status *st) {
    if (args->positional_count == 0)
        return usage_error(st, "trainer bench gemm, memory, conv or all; trainer bench train "
                           "MODEL for a model's training steps", "trainer bench needs a "
                           "benchmark");
    a->benchmark = args->positionals[0];
    int known = 0;
    for (int i = 0; benchmarks[i]; i++) known |= strcmp(a->benchmark, benchmarks[i]) == 0;
    if (!known) {
        const char *near = suggest(a->benchmark, benchmarks);
        if (near)
            status_fail(st, STATUS_BAD_INPUT, "unknown benchmark '%s'; did you mean '%s'?",
                        a->benchmark, near);
        else
            status_fail(st, STATUS_BAD_INPUT, "unknown benchmark '%s'", a->benchmark);
        status_hint(st, "benchmarks: gemm, memory, conv, train MODEL, all");
        return STATUS_BAD_INPUT;
    }
    int wanted = is(a, "train") ? 2 : 1;
    if (is(a, "train") && args->positional_count < 2)
        return usage_error(st, "e.g. trainer bench train models/lenet.model",
                           "trainer bench train needs a model file");
    if (args->positional_count > wanted) {
        status_fail(st, STATUS_BAD_INPUT, "trainer bench %s: unexpected argument '%s'",
                    a->benchmark, args->positionals[wanted]);
        status_hint(st, "usage: trainer bench gemm|memory|conv|all [options], trainer bench "
                        "train MODEL [options]");
        return STATUS_BAD_INPUT;
    }
    if (is(a, "train")) a->model = args->positionals[1];
    return 0;
}

// An option given to a benchmark that does not read it is a mistake worth saying.
static int only_for(const Command *cmd, const ParsedArgs *args, const BenchArgs *a,
                    const char *option, const char *const *names, Status *st) {
    if (!args_get(cmd, args, option)) return 0;
    for (int i = 0; names[i]; i++)
        if (is(a, names[i])) return 0;
    char list[128] = "";
    for (int i = 0; names[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 names[i]);
    status_fail(st, STATUS_BAD_INPUT, "%s does not apply to trainer bench %s", option,
                a->benchmark);
    status_hint(st, "%s applies to trainer bench %s", option, list);
    return STATUS_BAD_INPUT;
}

static int read_args(const Command *cmd, const ParsedArgs *args, BenchArgs *a, Status *st) {
    memset(a, 0, sizeof *a);
    TRY(read_benchmark(cmd, args, a, st));
    static const char *const gemm[] = {"gemm", "all", NULL};
    static const char *const memory[] = {"memory", "all", NULL};
    static const char *const train[] = {"train", NULL};
    static const char *const batch[] = {"conv", "train", "all", NULL};
    TRY(only_for(cmd, args, a, "--sizes", gemm, st));
    TRY(only_for(cmd, args, a, "--precisions", gemm, st));
    TRY(only_for(cmd, args, a, "--bytes", memory, st));
    TRY(only_for(cmd, args, a, "--steps", train, st));
    TRY(only_for(cmd, args, a, "--precision", train, st));
    TRY(only_for(cmd, args, a, "--per-layer", train, st));
    TRY(only_for(cmd, args, a, "--cuda-graph", train, st));
    TRY(cuda_graph_from_args(cmd, args, &a->cuda_graph, st));
    TRY(only_for(cmd, args, a, "--no-fuse", train, st));
    TRY(only_for(cmd, args, a, "--without", train, st));
    TRY(only_for(cmd, args, a, "--layout", train, st));
    TRY(only_for(cmd, args, a, "--batch", batch, st));
    long value = 5;
    TRY(args_int(cmd, args, "--repeats", 1, BENCH_MAX_REPEATS, &value, NULL, st));
    a->options.repeats = (int)value;
    value = 3;
    TRY(args_int(cmd, args, "--warmup", 0, 1000, &value, NULL, st));
    a->options.warmup = (int)value;
    value = 20;
    TRY(args_int(cmd, args, "--steps", 1, 100000, &value, NULL, st));
    a->steps = (int)value;
    value = 0;
    TRY(args_int(cmd, args, "--batch", 1, 1 << 20, &value, NULL, st));
    a->batch = (int)value;
    a->per_layer = args_get(cmd, args, "--per-layer") != NULL;
    a->json = args_get(cmd, args, "--json") != NULL;
    a->options.no_tf32 = args_get(cmd, args, "--no-tf32") != NULL;
    a->no_fuse = args_get(cmd, args, "--no-fuse") != NULL;
    const char *text = args_get(cmd, args, "--sizes");
    if (text && each_item("--sizes", text, parse_gemm_size, a->sizes, &a->size_count, st)) {
        status_hint(st, "sizes are N (N x N x N) or MxNxK, 1 to 65536 each: "
                        "--sizes 1024,4096x4096x1024");
        return STATUS_BAD_INPUT;
    }
    a->precisions = (1u << BENCH_PRECISION_COUNT) - 1;
    text = args_get(cmd, args, "--precisions");
    int count = 0;
    if (text) {
        a->precisions = 0;
        if (each_item("--precisions", text, parse_precision, &a->precisions, &count, st)) {
            status_hint(st, "precisions: fp32, tf32, bf16, fp16, comma-separated");
            return STATUS_BAD_INPUT;
        }
    }
    text = args_get(cmd, args, "--bytes");
    if (text && each_item("--bytes", text, parse_bytes, a->bytes, &a->byte_count, st)) {
        status_hint(st, "bytes per copy, 4 bytes to 64 GiB, with K, M or G for KiB, MiB, "
                        "GiB: --bytes 64M,1G");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// Defaults that depend on the device: what a GPU finishes in seconds takes the CPU minutes.
static void device_defaults(BenchArgs *a, const BenchDevice *dev) {
    static const int gpu_sizes[] = {1024, 4096, 8192}, cpu_sizes[] = {256, 512, 1024};
    if (a->size_count == 0) {
        for (int i = 0; i < 3; i++) {
            int n = dev->is_gpu ? gpu_sizes[i] : cpu_sizes[i];
            a->sizes[i] = (BenchGemmSize){n, n, n};
        }
        a->size_count = 3;
    }
    if (a->byte_count == 0) {
        a->bytes[0] = (size_t)(dev->is_gpu ? 256 : 64) << 20;
        a->byte_count = 1;
    }
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

// ---- text -----------------------------------------------------------------------------

// Decimals for three significant digits: 1070, 66.9, 0.0512; never "0.00" for a small
// positive figure.
static int sig_decimals(double value) {
    int decimals = value > 0.0 ? 2 - (int)floor(log10(value)) : 2;
    return decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
}

static const char *sig(double value, char *buf, size_t size) {
    snprintf(buf, size, "%.*f", sig_decimals(value), value);
    return buf;
}

// A duration with its unit: "31.0 ns", "4.21 us", "1.23 ms", "2.10 s".
static const char *duration(double ms, char *buf, size_t size) {
    double value = ms >= 1000.0 ? ms / 1000.0 : ms >= 1.0 ? ms : ms >= 1e-3 ? ms * 1e3 : ms * 1e6;
    const char *unit = ms >= 1000.0 ? "s" : ms >= 1.0 ? "ms" : ms >= 1e-3 ? "us" : "ns";
    snprintf(buf, size, "%.*f %s", sig_decimals(value), value, unit);
    return buf;
}

static const char *peak_text(double peak, char *buf, size_t size) {
    return peak > 0.0 ? sig(peak, buf, size) : "unknown";
}

static const char *of_peak(double measured, double peak, char *buf, size_t size) {
    if (peak > 0.0) snprintf(buf, size, "%.1f%%", 100.0 * measured / peak);
    else snprintf(buf, size, "-");
    return buf;
}

static void print_header(const char *what, const BenchDevice *d, const BenchOptions *o,
                         const char *run, const char *runs) {
    printf("trainer bench %s on %s (%s)\n", what, d->name, d->detail);
    if (d->peak_tflops[BENCH_FP32] > 0.0) {
        char text[BENCH_PRECISION_COUNT][32], memory[32];
        printf("peak (theoretical, dense, at the max SM clock): fp32 %s, tf32 %s, bf16 %s, "
               "fp16 %s TFLOP/s; memory %s GB/s\n",
               peak_text(d->peak_tflops[0], text[0], 32), peak_text(d->peak_tflops[1], text[1], 32),
               peak_text(d->peak_tflops[2], text[2], 32), peak_text(d->peak_tflops[3], text[3], 32),
               peak_text(d->peak_memory_gbs, memory, sizeof memory));
    } else {
        printf("peak: unknown (%s)\n", d->peak_unknown);
    }
    printf("each figure: the median of %d timed repeat%s after %d warm-up %s; %s\n\n",
           o->repeats, o->repeats == 1 ? "" : "s", o->warmup, o->warmup == 1 ? run : runs,
           d->is_gpu ? "device time (CUDA events)" : "monotonic clock (a CPU op is done when it "
                                                     "returns)");
}

// A measured row's figures after its name and size columns: time, rate (TFLOP/s or GB/s),
// the peak and the share of it reached.
static void print_figures(double median_ms, double rate, double peak) {
    char time[32], rate_text[32], peak_shown[32], share[32];
    printf(" %10s %9s %9s %8s\n", duration(median_ms, time, sizeof time),
           sig(rate, rate_text, sizeof rate_text), peak_text(peak, peak_shown, sizeof peak_shown),
           of_peak(rate, peak, share, sizeof share));
}

static void print_gemm(const BenchGemmReport *r, const BenchDevice *d) {
    printf("%-9s %-17s %10s %9s %9s %8s\n", "precision", "size (MxNxK)", "time", "TFLOP/s",
           "peak", "of peak");
    for (int i = 0; i < r->row_count; i++) {
        const BenchGemmRow *g = &r->rows[i];
        char size[48];
        snprintf(size, sizeof size, "%dx%dx%d", g->size.m, g->size.n, g->size.k);
        if (!g->available) {
            printf("%-9s %-17s %s\n", bench_precision_name(g->precision), size, g->unavailable);
            continue;
        }
        printf("%-9s %-17s", bench_precision_name(g->precision), size);
        print_figures(g->median_ms, g->tflops, g->peak_tflops);
    }
    // The sets are capped at 16: small sizes stay in cache however many rotate, and the
    // footnote says so rather than claim what it did not do.
    char cache[32];
    int cached = 0;
    for (int i = 0; i < r->row_count; i++)
        cached += r->rows[i].available && r->rows[i].input_bytes < 2 * d->cache_bytes;
    printf("A, B and C rotate through up to 16 sets (--json: input_sets), so that a GEMM does "
           "not find its inputs in cache: ");
    if (cached)
        printf("at %d of these sizes even all 16 fit in twice the last cache (%s), so %s "
               "partly the cache's.\n", cached,
               alloc_format_bytes(d->cache_bytes, cache, sizeof cache),
               cached == 1 ? "its figure is" : "their figures are");
    else
        printf("together they outgrow twice the last cache (%s).\n",
               alloc_format_bytes(d->cache_bytes, cache, sizeof cache));
}

static void print_memory(const BenchMemoryReport *r, const BenchDevice *d) {
    printf("%-24s %10s %10s %9s %9s %8s\n", "copy", "size", "time", "GB/s", "peak", "of peak");
    const char *peak_note = NULL;
    for (int i = 0; i < r->row_count; i++) {
        const BenchCopyRow *c = &r->rows[i];
        char size[32];
        alloc_format_bytes(c->bytes, size, sizeof size);
        if (!c->available) {
            printf("%-24s %10s  %s\n", bench_copy_name(c->kind), size, c->unavailable);
            continue;
        }
        printf("%-24s %10s", bench_copy_name(c->kind), size);
        print_figures(c->median_ms, c->gbs, c->peak_gbs);
        if (c->peak_gbs == 0.0 && c->kind != BENCH_COPY_DEVICE_TO_DEVICE)
            peak_note = c->peak_unknown;
    }
    printf("GB/s: 10^9 bytes per second; device-to-device counts each byte twice (read and "
           "written)%s.\n", d->is_gpu ? "" : "; on the CPU that copy is a memmove in host memory");
    if (peak_note) printf("host <-> device peak unknown: %s.\n", peak_note);
}

static void print_conv(const BenchConvReport *r, const BenchDevice *d) {
    const char *f32_math = r->row_count && r->rows[0].precision == BENCH_TF32
                               ? "tf32 math (cuDNN may use TF32 tensor cores; not with --no-tf32)"
                               : "fp32 math";
    printf("batch %d; per shape and op: f32 data in %s, then bf16 and fp16 data with fp32 "
           "sums%s; each beside its precision's peak\n", r->batch, f32_math,
           d->is_gpu ? "" : " (the CPU widens them to f32 and rounds each 16-bit result back)");
    printf("%-30s %-16s %-9s %10s %9s %9s %8s  %s\n", "shape (in->out channels)", "op",
           "precision", "time", "TFLOP/s", "peak", "of peak", "algorithm");
    for (int i = 0; i < r->row_count; i++) {
        const BenchConvRow *c = &r->rows[i];
        const char *precision = bench_precision_name(c->precision);
        if (!c->available) {
            printf("%-30s %-16s %-9s %s\n", c->shape, bench_conv_op_name(c->op), precision,
                   c->unavailable);
            continue;
        }
        char time[32], rate[32], peak[32], share[32];
        printf("%-30s %-16s %-9s %10s %9s %9s %8s  %s\n", c->shape, bench_conv_op_name(c->op),
               precision, duration(c->median_ms, time, sizeof time),
               sig(c->tflops, rate, sizeof rate), peak_text(c->peak_tflops, peak, sizeof peak),
               of_peak(c->tflops, c->peak_tflops, share, sizeof share), c->algorithm);
    }
}

// A layer's time, or what the timer could not resolve.
static const char *layer_time(double ms, char *buf, size_t size) {
    return ms > 0.0 ? duration(ms, buf, size) : "<resolution";
}

static void print_layers(const BenchTrainReport *r) {
    double total = r->optimizer_ms;
    for (int i = 0; i < r->layer_count; i++)
        if (!r->layers[i].fused_into[0])
            total += r->layers[i].forward_ms + r->layers[i].backward_ms;
    printf("\nper layer: the median of %d more steps, with a timer mark between every two "
           "layers\n", r->per_layer_steps);
    printf("%-20s %-22s %12s %12s %8s\n", "layer", "kind", "forward", "backward", "of step");
    for (int i = 0; i < r->layer_count; i++) {
        const BenchLayerTime *l = &r->layers[i];
        char forward[32], backward[32], share[32];
        if (l->fused_into[0]) {  // its time is in the row of the layer computing it
            char kind[96];
            snprintf(kind, sizeof kind, "%s (in %s)", l->kind, l->fused_into);
            printf("%-20s %-22s %12s %12s %8s\n", l->name, kind, "-", "-", "-");
            continue;
        }
        snprintf(share, sizeof share, "%.1f%%",
                 total > 0.0 ? 100.0 * (l->forward_ms + l->backward_ms) / total : 0.0);
        printf("%-20s %-22s %12s %12s %8s\n", l->name, l->kind,
               layer_time(l->forward_ms, forward, sizeof forward),
               layer_time(l->backward_ms, backward, sizeof backward), share);
    }
    char update[32], share[32], sum[32], kind[64];
    snprintf(share, sizeof share, "%.1f%%", total > 0.0 ? 100.0 * r->optimizer_ms / total : 0.0);
    // Under fp16 the update's time holds the gradients' check and unscale: say so.
    snprintf(kind, sizeof kind, "%s%s", r->optimizer, r->loss_scale > 0.0 ? " + fp16 scan" : "");
    printf("%-20s %-22s %12s %12s %8s\n", "(update)", kind, "",
           layer_time(r->optimizer_ms, update, sizeof update), share);
    printf("%-20s %-22s %25s\n", "(sum)", "", duration(total, sum, sizeof sum));
    int unresolved = r->optimizer_ms <= 0.0, fused = 0;
    for (int i = 0; i < r->layer_count; i++) {
        fused |= r->layers[i].fused_into[0] != '\0';
        unresolved |= !r->layers[i].fused_into[0] &&
                      (r->layers[i].forward_ms <= 0.0 || r->layers[i].backward_ms <= 0.0);
    }
    if (fused)
        printf("(in LAYER): an activation LAYER computes (fused), its time in LAYER's row; "
               "--no-fuse times it apart.\n");
    if (unresolved)
        printf("<resolution: below the timer's resolution (a layer that launches no work).\n");
}

// On a GPU, which levers (base/lever.h) ran, so that a saved log says what it measured.
static void print_levers(unsigned disabled) {
    char names[256];
    if (!disabled) {
        printf("levers: all on (--without LIST to turn some off)\n");
        return;
    }
    printf("levers: OFF (--without): %s\n", lever_set_format(disabled, names, sizeof names));
}

// On a GPU, how the images between convolutions lay (graph_set_layouts).
static void print_layout(int nhwc_layers) {
    if (nhwc_layers)
        printf("layout: NHWC for %d layer%s (--layout nhwc)\n", nhwc_layers,
               nhwc_layers == 1 ? "" : "s");
    else
        printf("layout: NCHW (--layout nhwc to compare)\n");
}

static void print_train(const BenchTrainReport *r, const BenchOptions *o, int fused_layers,
                        int gpu, unsigned disabled_levers, int nhwc_layers) {
    char rate[32], step[32], flops[32], tflops[32], peak[32], share[32];
    printf("batch %d, optimizer %s; %d timed repeat%s of %d step%s on synthetic data (random "
           "inputs and labels, rotated on the device)\n", r->batch, r->optimizer, o->repeats,
           o->repeats == 1 ? "" : "s", r->steps, r->steps == 1 ? "" : "s");
    printf("fusion: %d act= activation%s computed inside the layer before%s\n", fused_layers,
           fused_layers == 1 ? "" : "s", fused_layers ? " (--no-fuse to compare)" : "");
    if (gpu) print_levers(disabled_levers);
    if (gpu) print_layout(nhwc_layers);
    printf("samples/s   %s  (repeats:", format_count((long)(r->samples_per_second + 0.5), rate,
                                                    sizeof rate));
    for (int i = 0; i < o->repeats; i++)
        printf(" %s", format_count((long)(r->repeat_samples_per_second[i] + 0.5), rate,
                                   sizeof rate));
    printf(")\nstep        %s\n", duration(r->step_ms, step, sizeof step));
    printf("TFLOP/s     %s  (3 x %s MFLOP forward per sample, %s math); ",
           sig(r->tflops, tflops, sizeof tflops),
           sig(r->forward_flops_per_sample / 1e6, flops, sizeof flops),
           bench_precision_name(r->precision));
    if (r->peak_tflops > 0.0)
        printf("peak %s, %s of it\n", peak_text(r->peak_tflops, peak, sizeof peak),
               of_peak(r->tflops, r->peak_tflops, share, sizeof share));
    else
        printf("peak unknown\n");
    if (r->loss_scale > 0.0)
        printf("fp16 loss scaling  final scale %.10g, %ld of %ld steps skipped (warm-up "
               "included; an overflow skips the update, as in training)\n", r->loss_scale,
               r->skipped_steps, r->steps_run);
    if (r->cuda_graph[0]) printf("cuda graph  %s\n", r->cuda_graph);
    if (r->layers) print_layers(r);
}

// ---- running --------------------------------------------------------------------------

static int load_bench_model(const BenchArgs *a, ModelFile *file, Graph *g, RunConfig *config,
                            Status *st) {
    char found[4096];
    return run_build_model(resolve_model_path(a->model, found, sizeof found), a->no_fuse, file,
                           g, config, st);
}

typedef struct BenchReports {
    BenchGemmReport *gemm;
    BenchMemoryReport *memory;
    BenchConvReport *conv;
    BenchTrainReport train;
    int has_train;
} BenchReports;

static void reports_free(BenchReports *r) {
    free(r->gemm);
    free(r->memory);
    free(r->conv);
    bench_train_report_free(&r->train);
}

static int run_benchmarks(BenchArgs *a, Device *d, const BenchDevice *dev, Graph *g,
                          const RunConfig *config, BenchReports *r, Status *st) {
    int all = is(a, "all");
    if (all || is(a, "gemm")) {
        r->gemm = calloc(1, sizeof *r->gemm);
        if (!r->gemm) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
        TRY(bench_gemm(d, dev, &a->options, a->sizes, a->size_count, a->precisions, r->gemm,
                       st));
    }
    if (all || is(a, "memory")) {
        r->memory = calloc(1, sizeof *r->memory);
        if (!r->memory) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
        TRY(bench_memory(d, dev, &a->options, a->bytes, a->byte_count, r->memory, st));
    }
    if (all || is(a, "conv")) {
        r->conv = calloc(1, sizeof *r->conv);
        if (!r->conv) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
        int batch = a->batch ? a->batch : dev->is_gpu ? 128 : 8;
        TRY(bench_conv(d, dev, &a->options, batch, r->conv, st));
    }
    if (is(a, "train")) {
        int batch = a->batch ? a->batch : config->train.batch;
        r->has_train = 1;
        TRY(bench_train(d, dev, &a->options, g, config, batch, a->steps, a->per_layer,
                        &r->train, st));
    }
    return 0;
}

static void print_reports(const BenchArgs *a, const BenchDevice *dev, const BenchReports *r) {
    if (a->json) {
        BenchRun run = {.benchmark = a->benchmark, .device = dev, .options = &a->options,
                        .gemm = r->gemm, .memory = r->memory, .conv = r->conv,
                        .train = r->has_train ? &r->train : NULL,
                        .disabled_levers = a->disabled_levers, .nhwc_layers = a->nhwc_layers};
        cJSON *root = bench_json(&run);
        json_print(stdout, root, 0);
        cJSON_Delete(root);
        return;
    }
    int sections = 0;
    if (r->gemm) {
        print_header("gemm", dev, &a->options, "run", "runs");
        print_gemm(r->gemm, dev);
        sections++;
    }
    if (r->memory) {
        if (sections++) printf("\n");
        print_header("memory", dev, &a->options, "copy", "copies");
        print_memory(r->memory, dev);
    }
    if (r->conv) {
        if (sections++) printf("\n");
        print_header("conv", dev, &a->options, "run", "runs");
        print_conv(r->conv, dev);
    }
    if (r->has_train) {
        char what[600];
        snprintf(what, sizeof what, "train %s", r->train.model);
        print_header(what, dev, &a->options, "step", "steps");
        print_train(&r->train, &a->options, a->fused_layers, dev->is_gpu, a->disabled_levers,
                    a->nhwc_layers);
    }
}

// Exit 0 says "measured": a memory benchmark whose every copy was refused (out of memory
// at the sizes asked) printed its reasons and measured nothing, so it fails, with them.
static int check_memory_measured(const BenchMemoryReport *r, Status *st) {
    const char *reason = NULL;
    for (int i = 0; r && i < r->row_count; i++) {
        if (r->rows[i].available) return 0;
        if (!reason || strncmp(reason, "no device", 9) == 0) reason = r->rows[i].unavailable;
    }
    if (!r || !r->row_count) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "bench memory measured nothing: %s", reason);
    status_hint(st, "give smaller sizes, e.g. --bytes 64M,256M");
    return STATUS_RUNTIME_ERROR;
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
    if (!rc && have_model) a.nhwc_layers = graph_nhwc_layers(opened);
    if (run.devices_open) a.disabled_levers = device->disabled_levers;
    BenchDevice dev;
    if (!rc && have_model)
        rc = step_graphs_check_device(config.cuda_graph, device->backend, &st);
    if (!rc) rc = bench_device_describe(device, &dev, &st);
    if (!rc) device_defaults(&a, &dev);
    Progress progress = {.enabled = isatty(fileno(stderr))};
    a.options.on_progress = show_progress;
    a.options.user = &progress;
    BenchReports reports;
    memset(&reports, 0, sizeof reports);
    if (!rc) rc = run_benchmarks(&a, device, &dev, opened, &config, &reports, &st);
    clear_progress(&progress);
    if (!rc) print_reports(&a, &dev, &reports);
    if (!rc) rc = check_memory_measured(reports.memory, &st);
    flush_stdout();
    reports_free(&reports);
    run_close(&run);
    if (have_model) model_file_free(&file);
    return rc ? report_failure(&st) : 0;
}
