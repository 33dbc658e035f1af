// `trainer bench`'s reports as tables (diagnostics/bench.h): under a header naming the
// device, its peaks and how the figures were measured, one table per benchmark run, each
// figure beside its peak.
#include <math.h>
#include <stdio.h>

#include "base/lever.h"
#include "core/alloc.h"
#include "diagnostics/bench.h"

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

static void header_text(const TextOut *out, const char *what, const BenchDevice *d,
                        const BenchOptions *o, const char *run, const char *runs) {
    text_printf(out, "trainer bench %s on %s (%s)\n", what, d->name, d->detail);
    if (d->peak_tflops[BENCH_FP32] > 0.0) {
        char text[BENCH_PRECISION_COUNT][32], memory[32];
        text_printf(out, "peak (theoretical, dense, at the max SM clock): fp32 %s, tf32 %s, "
                    "bf16 %s, fp16 %s TFLOP/s; memory %s GB/s\n",
                    peak_text(d->peak_tflops[0], text[0], 32),
                    peak_text(d->peak_tflops[1], text[1], 32),
                    peak_text(d->peak_tflops[2], text[2], 32),
                    peak_text(d->peak_tflops[3], text[3], 32),
                    peak_text(d->peak_memory_gbs, memory, sizeof memory));
    } else {
        text_printf(out, "peak: unknown (%s)\n", d->peak_unknown);
    }
    text_printf(out, "each figure: the median of %d timed repeat%s after %d warm-up %s; %s\n\n",
                o->repeats, o->repeats == 1 ? "" : "s", o->warmup, o->warmup == 1 ? run : runs,
                d->is_gpu ? "device time (CUDA events)"
                          : "monotonic clock (a CPU op is done when it returns)");
}

// A measured row's figures after its name and size columns: time, rate (TFLOP/s or GB/s),
// the peak and the share of it reached.
static void figures_text(const TextOut *out, double median_ms, double rate, double peak) {
    char time[32], rate_text[32], peak_shown[32], share[32];
    text_printf(out, " %10s %9s %9s %8s\n", duration(median_ms, time, sizeof time),
                sig(rate, rate_text, sizeof rate_text),
                peak_text(peak, peak_shown, sizeof peak_shown),
                of_peak(rate, peak, share, sizeof share));
}

static void gemm_text(const TextOut *out, const BenchGemmReport *r, const BenchDevice *d) {
    text_printf(out, "%-9s %-17s %10s %9s %9s %8s\n", "precision", "size (MxNxK)", "time",
                "TFLOP/s", "peak", "of peak");
    for (int i = 0; i < r->row_count; i++) {
        const BenchGemmRow *g = &r->rows[i];
        char size[48];
        snprintf(size, sizeof size, "%dx%dx%d", g->size.m, g->size.n, g->size.k);
        if (!g->available) {
            text_printf(out, "%-9s %-17s %s\n", bench_precision_name(g->precision), size,
                        g->unavailable);
            continue;
        }
        text_printf(out, "%-9s %-17s", bench_precision_name(g->precision), size);
        figures_text(out, g->median_ms, g->tflops, g->peak_tflops);
    }
    // The sets are capped at 16: small sizes stay in cache however many rotate, and the
    // footnote says so rather than claim what it did not do.
    char cache[32];
    int cached = 0;
    for (int i = 0; i < r->row_count; i++)
        cached += r->rows[i].available && r->rows[i].input_bytes < 2 * d->cache_bytes;
    text_put(out, "A, B and C rotate through up to 16 sets (--json: input_sets), so that a GEMM "
                  "does not find its inputs in cache: ");
    if (cached)
        text_printf(out, "at %d of these sizes even all 16 fit in twice the last cache (%s), "
                    "so %s partly the cache's.\n", cached,
                    alloc_format_bytes(d->cache_bytes, cache, sizeof cache),
                    cached == 1 ? "its figure is" : "their figures are");
    else
        text_printf(out, "together they outgrow twice the last cache (%s).\n",
                    alloc_format_bytes(d->cache_bytes, cache, sizeof cache));
}

static void memory_text(const TextOut *out, const BenchMemoryReport *r, const BenchDevice *d) {
    text_printf(out, "%-24s %10s %10s %9s %9s %8s\n", "copy", "size", "time", "GB/s", "peak",
                "of peak");
    const char *peak_note = NULL;
    for (int i = 0; i < r->row_count; i++) {
        const BenchCopyRow *c = &r->rows[i];
        char size[32];
        alloc_format_bytes(c->bytes, size, sizeof size);
        if (!c->available) {
            text_printf(out, "%-24s %10s  %s\n", bench_copy_name(c->kind), size, c->unavailable);
            continue;
        }
        text_printf(out, "%-24s %10s", bench_copy_name(c->kind), size);
        figures_text(out, c->median_ms, c->gbs, c->peak_gbs);
        if (c->peak_gbs == 0.0 && c->kind != BENCH_COPY_DEVICE_TO_DEVICE)
            peak_note = c->peak_unknown;
    }
    text_printf(out, "GB/s: 10^9 bytes per second; device-to-device counts each byte twice "
                "(read and written)%s.\n",
                d->is_gpu ? "" : "; on the CPU that copy is a memmove in host memory");
    if (peak_note) text_printf(out, "host <-> device peak unknown: %s.\n", peak_note);
}

static void conv_text(const TextOut *out, const BenchConvReport *r, const BenchDevice *d) {
    const char *f32_math = r->row_count && r->rows[0].precision == BENCH_TF32
                               ? "tf32 math (cuDNN may use TF32 tensor cores; not with --no-tf32)"
                               : "fp32 math";
    text_printf(out, "batch %d; per shape and op: f32 data in %s, then bf16 and fp16 data with "
                "fp32 sums%s; each beside its precision's peak\n", r->batch, f32_math,
                d->is_gpu ? ""
                          : " (the CPU widens them to f32 and rounds each 16-bit result back)");
    text_printf(out, "%-30s %-16s %-9s %10s %9s %9s %8s  %s\n", "shape (in->out channels)", "op",
                "precision", "time", "TFLOP/s", "peak", "of peak", "algorithm");
    for (int i = 0; i < r->row_count; i++) {
        const BenchConvRow *c = &r->rows[i];
        const char *precision = bench_precision_name(c->precision);
        if (!c->available) {
            text_printf(out, "%-30s %-16s %-9s %s\n", c->shape, bench_conv_op_name(c->op),
                        precision, c->unavailable);
            continue;
        }
        char time[32], rate[32], peak[32], share[32];
        text_printf(out, "%-30s %-16s %-9s %10s %9s %9s %8s  %s\n", c->shape,
                    bench_conv_op_name(c->op), precision,
                    duration(c->median_ms, time, sizeof time), sig(c->tflops, rate, sizeof rate),
                    peak_text(c->peak_tflops, peak, sizeof peak),
                    of_peak(c->tflops, c->peak_tflops, share, sizeof share), c->algorithm);
    }
}

// A layer's time, or what the timer could not resolve.
static const char *layer_time(double ms, char *buf, size_t size) {
    return ms > 0.0 ? duration(ms, buf, size) : "<resolution";
}

// The notes under the per-layer table: what "(in LAYER)" and "<resolution" mean, when a
// row shows them.
static void layer_notes(const TextOut *out, const BenchTrainReport *r) {
    int unresolved = r->optimizer_ms <= 0.0, fused = 0;
    for (int i = 0; i < r->layer_count; i++) {
        fused |= r->layers[i].fused_into[0] != '\0';
        unresolved |= !r->layers[i].fused_into[0] &&
                      (r->layers[i].forward_ms <= 0.0 || r->layers[i].backward_ms <= 0.0);
    }
    if (fused)
        text_put(out, "(in LAYER): an activation LAYER computes (fused), its time in LAYER's "
                      "row; --no-fuse times it apart.\n");
    if (unresolved)
        text_put(out, "<resolution: below the timer's resolution (a layer that launches no "
                      "work).\n");
}

static void layers_text(const TextOut *out, const BenchTrainReport *r) {
    double total = r->optimizer_ms;
    for (int i = 0; i < r->layer_count; i++)
        if (!r->layers[i].fused_into[0])
            total += r->layers[i].forward_ms + r->layers[i].backward_ms;
    text_printf(out, "\nper layer: the median of %d more steps, with a timer mark between every "
                "two layers\n", r->per_layer_steps);
    text_printf(out, "%-20s %-22s %12s %12s %8s\n", "layer", "kind", "forward", "backward",
                "of step");
    for (int i = 0; i < r->layer_count; i++) {
        const BenchLayerTime *l = &r->layers[i];
        char forward[32], backward[32], share[32];
        if (l->fused_into[0]) {  // its time is in the row of the layer computing it
            char kind[96];
            snprintf(kind, sizeof kind, "%s (in %s)", l->kind, l->fused_into);
            text_printf(out, "%-20s %-22s %12s %12s %8s\n", l->name, kind, "-", "-", "-");
            continue;
        }
        snprintf(share, sizeof share, "%.1f%%",
                 total > 0.0 ? 100.0 * (l->forward_ms + l->backward_ms) / total : 0.0);
        text_printf(out, "%-20s %-22s %12s %12s %8s\n", l->name, l->kind,
                    layer_time(l->forward_ms, forward, sizeof forward),
                    layer_time(l->backward_ms, backward, sizeof backward), share);
    }
    char update[32], share[32], sum[32], kind[64];
    snprintf(share, sizeof share, "%.1f%%", total > 0.0 ? 100.0 * r->optimizer_ms / total : 0.0);
    // Under fp16 the update's time holds the gradients' check and unscale: say so.
    snprintf(kind, sizeof kind, "%s%s", r->optimizer, r->loss_scale > 0.0 ? " + fp16 scan" : "");
    text_printf(out, "%-20s %-22s %12s %12s %8s\n", "(update)", kind, "",
                layer_time(r->optimizer_ms, update, sizeof update), share);
    text_printf(out, "%-20s %-22s %25s\n", "(sum)", "", duration(total, sum, sizeof sum));
    layer_notes(out, r);
}

// On a GPU, which levers (base/lever.h) ran and how the images between convolutions lay
// (graph_set_layouts), so that a saved log says what it measured.
static void gpu_settings_text(const TextOut *out, unsigned disabled_levers, int nhwc_layers) {
    char names[256];
    if (!disabled_levers)
        text_put(out, "levers: all on (--without LIST to turn some off)\n");
    else
        text_printf(out, "levers: OFF (--without): %s\n",
                    lever_set_format(disabled_levers, names, sizeof names));
    if (nhwc_layers)
        text_printf(out, "layout: NHWC for %d layer%s (--layout nhwc)\n", nhwc_layers,
                    nhwc_layers == 1 ? "" : "s");
    else
        text_put(out, "layout: NCHW (--layout nhwc to compare)\n");
}

static void train_text(const TextOut *out, const BenchRun *run) {
    const BenchTrainReport *r = run->train;
    const BenchOptions *o = run->options;
    char step[32], flops[32], tflops[32], peak[32], share[32];
    text_printf(out, "batch %d, optimizer %s; %d timed repeat%s of %d step%s on synthetic data "
                "(random inputs and labels, rotated on the device)\n", r->batch, r->optimizer,
                o->repeats, o->repeats == 1 ? "" : "s", r->steps, r->steps == 1 ? "" : "s");
    text_printf(out, "fusion: %d act= activation%s computed inside the layer before%s\n",
                run->fused_layers, run->fused_layers == 1 ? "" : "s",
                run->fused_layers ? " (--no-fuse to compare)" : "");
    if (run->device->is_gpu) gpu_settings_text(out, run->disabled_levers, run->nhwc_layers);
    char count[32];
    text_printf(out, "samples/s   %s  (repeats:",
                format_count((long)(r->samples_per_second + 0.5), count, sizeof count));
    for (int i = 0; i < o->repeats; i++)
        text_printf(out, " %s", format_count((long)(r->repeat_samples_per_second[i] + 0.5),
                                             count, sizeof count));
    text_printf(out, ")\nstep        %s\n", duration(r->step_ms, step, sizeof step));
    text_printf(out, "TFLOP/s     %s  (3 x %s MFLOP forward per sample, %s math); ",
                sig(r->tflops, tflops, sizeof tflops),
                sig(r->forward_flops_per_sample / 1e6, flops, sizeof flops),
                bench_precision_name(r->precision));
    if (r->peak_tflops > 0.0)
        text_printf(out, "peak %s, %s of it\n", peak_text(r->peak_tflops, peak, sizeof peak),
                    of_peak(r->tflops, r->peak_tflops, share, sizeof share));
    else
        text_put(out, "peak unknown\n");
    if (r->loss_scale > 0.0)
        text_printf(out, "fp16 loss scaling  final scale %.10g, %ld of %ld steps skipped "
                    "(warm-up included; an overflow skips the update, as in training)\n",
                    r->loss_scale, r->skipped_steps, r->steps_run);
    if (r->cuda_graph[0]) text_printf(out, "cuda graph  %s\n", r->cuda_graph);
    if (r->layers) layers_text(out, r);
}

void bench_text(const TextOut *out, const BenchRun *run) {
    const BenchDevice *dev = run->device;
    int sections = 0;
    if (run->gemm) {
        header_text(out, "gemm", dev, run->options, "run", "runs");
        gemm_text(out, run->gemm, dev);
        sections++;
    }
    if (run->memory) {
        if (sections++) text_put(out, "\n");
        header_text(out, "memory", dev, run->options, "copy", "copies");
        memory_text(out, run->memory, dev);
    }
    if (run->conv) {
        if (sections++) text_put(out, "\n");
        header_text(out, "conv", dev, run->options, "run", "runs");
        conv_text(out, run->conv, dev);
    }
    if (run->train) {
        char what[600];
        snprintf(what, sizeof what, "train %s", run->train->model);
        header_text(out, what, dev, run->options, "step", "steps");
        train_text(out, run);
    }
}
