// What every benchmark shares: the device's description and peaks, timers, medians, and
// how many input sets to rotate through.
#define _POSIX_C_SOURCE 200809L  // sysconf
#include "diagnostics/bench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/precision.h"
#include "base/text_out.h"
#include "kernels/cuda/cuda_bench.h"

static const char *const bench_precision_names[BENCH_PRECISION_COUNT] = {"fp32", "tf32", "bf16",
                                                                   "fp16"};

const char *bench_precision_name(BenchPrecision p) {
    return p >= 0 && p < BENCH_PRECISION_COUNT ? bench_precision_names[p] : "?";
}

int bench_precision_parse(const char *name) {
    for (int p = 0; p < BENCH_PRECISION_COUNT; p++)
        if (strcmp(name, bench_precision_names[p]) == 0) return p;
    return -1;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median, not the best: the best of a few runs rewards a lucky one, and on a shared
// machine the slow outliers are as real as the fast ones.
double bench_median(double *values, int count) {
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

// The CPU's last-level cache; 32 MiB (a server core complex's L3) when sysconf has no
// answer.
static size_t cpu_cache_bytes(void) {
    long bytes = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return bytes > 0 ? (size_t)bytes : (size_t)32 << 20;
}

static void describe_cpu(BenchDevice *out) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(out->name, sizeof out->name, "cpu");
    snprintf(out->detail, sizeof out->detail, "%ld core%s, OpenBLAS %s kernels", cores,
             cores == 1 ? "" : "s", cpu_blas_core_name());
    snprintf(out->peak_unknown, sizeof out->peak_unknown,
             "trainer knows no CPU's peak FLOP/s or memory bandwidth");
    out->cache_bytes = cpu_cache_bytes();
}

int bench_device_describe(const Device *d, BenchDevice *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (d->backend->kind != BACKEND_CUDA) {
        describe_cpu(out);
        return 0;
    }
    out->is_gpu = 1;
    CudaBenchDevice *gpu = &out->gpu;
    TRY(cuda_bench_device(d->backend, gpu, st));
    snprintf(out->name, sizeof out->name, "%s %s", d->name, gpu->name);
    snprintf(out->detail, sizeof out->detail,
             "compute %d.%d, %d SMs, SM clock %d MHz (max), memory %d MHz x %d-bit, L2 %zu MiB",
             gpu->compute_major, gpu->compute_minor, gpu->multiprocessors,
             gpu->clock_khz / 1000, gpu->memory_clock_khz / 1000, gpu->memory_bus_bits,
             gpu->l2_bytes >> 20);
    for (int p = 0; p < BENCH_PRECISION_COUNT; p++) {
        const char *why = "";
        out->peak_tflops[p] = bench_peak_tflops(gpu, (BenchPrecision)p, &why);
        // The fp32 peak's reason covers the whole card; a missing tensor precision is
        // that row's own business.
        if (p == BENCH_FP32 && out->peak_tflops[p] == 0.0)
            snprintf(out->peak_unknown, sizeof out->peak_unknown, "%s", why);
    }
    out->peak_memory_gbs = bench_peak_memory_gbs(gpu);
    // An L2 the driver does not report: H100's 50 MiB, the largest of the table's cards.
    out->cache_bytes = gpu->l2_bytes ? gpu->l2_bytes : (size_t)50 << 20;
    return 0;
}

// BenchPrecision lists fp32, tf32, bf16, fp16 in Precision's order, one after its default.
_Static_assert(PRECISION_FP16 - PRECISION_FP32 == BENCH_FP16 &&
                   PRECISION_BF16 - PRECISION_FP32 == BENCH_BF16 &&
                   PRECISION_TF32 - PRECISION_FP32 == BENCH_TF32,
               "BenchPrecision follows Precision's order");
static Precision as_precision(BenchPrecision p) {
    return (Precision)(PRECISION_FP32 + (int)p);
}

const char *bench_gpu_lacks(const BenchDevice *dev, BenchPrecision p, char *buf, size_t size) {
    int floor = precision_min_compute(as_precision(p));
    if (!dev->is_gpu || dev->gpu.compute_major * 10 + dev->gpu.compute_minor >= floor)
        return NULL;
    snprintf(buf, size, "needs compute capability %d.%d or newer (this card: %d.%d)",
             floor / 10, floor % 10, dev->gpu.compute_major, dev->gpu.compute_minor);
    return buf;
}

int bench_input_sets(const BenchDevice *dev, size_t set_bytes, int max) {
    if (set_bytes == 0) return 1;
    size_t wanted = (2 * dev->cache_bytes + set_bytes - 1) / set_bytes;
    if (wanted < 1) wanted = 1;
    return wanted > (size_t)max ? max : (int)wanted;
}

int bench_timer_open(const Backend *b, BenchTimer *t, Status *st) {
    memset(t, 0, sizeof *t);
    t->backend = b;
    if (!b->timer_create || !b->timer_record || !b->timer_elapsed || !b->timer_destroy) {
        status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no device timer", b->name);
        status_hint(st, "this build's backend lacks the timer ops trainer bench needs");
        return STATUS_RUNTIME_ERROR;
    }
    TRY(b->timer_create(b, &t->start, st));
    int rc = b->timer_create(b, &t->stop, st);
    if (rc) bench_timer_close(t);
    return rc;
}

int bench_timer_start(BenchTimer *t, Status *st) {
    return t->backend->timer_record(t->backend, t->start, st);
}

int bench_timer_stop(BenchTimer *t, double *ms, Status *st) {
    TRY(t->backend->timer_record(t->backend, t->stop, st));
    return t->backend->timer_elapsed(t->backend, t->start, t->stop, ms, st);
}

void bench_timer_close(BenchTimer *t) {
    if (t->start) t->backend->timer_destroy(t->backend, t->start);
    if (t->stop) t->backend->timer_destroy(t->backend, t->stop);
    t->start = t->stop = NULL;
}

void bench_progress(const BenchOptions *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    text_say(o->on_progress, o->user, fmt, ap);
    va_end(ap);
}

// text_say's line to the backend's profiler (the backend's op takes the Backend, not a
// user pointer).
static void push_range(void *backend, const char *name) {
    const Backend *b = backend;
    b->range_push(b, name);
}

void bench_range_push(const Backend *b, const char *fmt, ...) {
    if (!b->range_push) return;
    va_list ap;
    va_start(ap, fmt);
    text_say(push_range, (void *)b, fmt, ap);
    va_end(ap);
}

void bench_range_pop(const Backend *b) {
    if (b->range_pop) b->range_pop(b);
}
