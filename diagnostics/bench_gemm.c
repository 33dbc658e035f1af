// `trainer bench gemm`: C = A B at each size and precision, in TFLOP/s beside the peak.
//
// On a GPU every precision goes through cuBLAS's GemmEx (kernels/cuda/cuda_bench.cu) with
// its own handle, so fp32 is fp32 even where training would allow TF32. On the CPU the
// backend's gemm op (OpenBLAS sgemm) is fp32 only: the other precisions are rows that say
// so.
#include "diagnostics/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "kernels/cuda/cuda_bench.h"

// A timed repeat runs enough GEMMs to last about this long, so that the two timer marks
// around it (half a microsecond of resolution on a GPU, and a launch of their own) are a
// rounding error; and no more than GEMM_MAX_PER_REPEAT, for tiny sizes.
static const double GEMM_REPEAT_MS = 20.0;
enum { GEMM_MAX_PER_REPEAT = 10000, GEMM_MAX_INPUT_SETS = 16 };

static size_t element_bytes(BenchPrecision p) {
    return p == BENCH_BF16 || p == BENCH_FP16 ? 2 : 4;
}

typedef struct GemmBuffers {
    Allocator *alloc;
    void *a[GEMM_MAX_INPUT_SETS], *b[GEMM_MAX_INPUT_SETS], *c[GEMM_MAX_INPUT_SETS];
    int sets;
} GemmBuffers;

static void buffers_free(GemmBuffers *g) {
    for (int i = 0; i < g->sets; i++) {
        alloc_put(g->alloc, g->a[i]);
        alloc_put(g->alloc, g->b[i]);
        alloc_put(g->alloc, g->c[i]);
    }
    g->sets = 0;
    alloc_release_cache(g->alloc);
}

// n random floats in [-1, 1) into device memory at x: through the host on the CPU (whose
// device memory is host memory), by a kernel on the GPU in the precision's own type.
static int fill_random(const Backend *b, BenchPrecision p, void *x, size_t n, uint64_t seed,
                       Status *st) {
    if (b->kind == BACKEND_CUDA) return cuda_bench_fill(b, p, x, n, seed, st);
    float *host = malloc(n * sizeof *host);
    if (!host) return status_out_of_host_memory(st, n * sizeof *host, "for a GEMM's inputs");
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) host[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    int rc = b->copy_to_device(b, x, host, n * sizeof *host, st);
    free(host);
    return rc;
}

static int buffers_alloc(Device *d, BenchPrecision p, const BenchGemmSize *s, int sets,
                         GemmBuffers *g, Status *st) {
    const Backend *b = d->backend;
    size_t e = element_bytes(p);
    size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
    memset(g, 0, sizeof *g);
    g->alloc = &d->alloc;
    for (int i = 0; i < sets; i++) {
        TRY(alloc_get(g->alloc, na * e, &g->a[i], st));
        int rc = alloc_get(g->alloc, nb * e, &g->b[i], st);
        if (!rc) rc = alloc_get(g->alloc, nc * e, &g->c[i], st);
        if (rc) {
            alloc_put(g->alloc, g->a[i]);
            if (g->b[i]) alloc_put(g->alloc, g->b[i]);
            return rc;
        }
        g->sets = i + 1;
        TRY(fill_random(b, p, g->a[i], na, 2 * (uint64_t)i + 1, st));
        TRY(fill_random(b, p, g->b[i], nb, 2 * (uint64_t)i + 2, st));
    }
    return 0;
}

static int run_gemm(const Backend *b, CudaBenchGemm *cuda, BenchPrecision p,
                    const BenchGemmSize *s, const GemmBuffers *g, int set, Status *st) {
    if (cuda) return cuda_bench_gemm(cuda, p, s->m, s->n, s->k, g->a[set], g->b[set],
                                     g->c[set], st);
    GemmArgs args = {.m = s->m, .n = s->n, .k = s->k, .lda = s->k, .ldb = s->n, .ldc = s->n,
                     .alpha = 1.0f, .beta = 0.0f};
    return b->gemm(b, &args, &(GemmTensors){.a = g->a[set], .bm = g->b[set], .c = g->c[set]}, st);
}

// Warm-up, a one-GEMM calibration of how many fit a repeat, then the timed repeats.
static int measure(Device *d, CudaBenchGemm *cuda, const BenchOptions *o, BenchGemmRow *row,
                   const GemmBuffers *g, Status *st) {
    const Backend *b = d->backend;
    BenchTimer timer;
    TRY(bench_timer_open(b, &timer, st));
    int rc = 0, next = 0;
    for (int i = 0; !rc && i < o->warmup; i++, next++)
        rc = run_gemm(b, cuda, row->precision, &row->size, g, next % g->sets, st);
    double one_ms = 0.0;
    if (!rc) rc = bench_timer_start(&timer, st);
    if (!rc) rc = run_gemm(b, cuda, row->precision, &row->size, g, next++ % g->sets, st);
    if (!rc) rc = bench_timer_stop(&timer, &one_ms, st);
    double per = one_ms > 0.0 ? ceil(GEMM_REPEAT_MS / one_ms) : GEMM_MAX_PER_REPEAT;
    row->per_repeat = per < 1.0 ? 1 : per > GEMM_MAX_PER_REPEAT ? GEMM_MAX_PER_REPEAT : (int)per;
    double ms[BENCH_MAX_REPEATS];
    bench_range_push(b, "bench gemm %s %dx%dx%d", bench_precision_name(row->precision),
                     row->size.m, row->size.n, row->size.k);
    for (int r = 0; !rc && r < o->repeats; r++) {
        rc = bench_timer_start(&timer, st);
        for (int i = 0; !rc && i < row->per_repeat; i++, next++)
            rc = run_gemm(b, cuda, row->precision, &row->size, g, next % g->sets, st);
        if (!rc) rc = bench_timer_stop(&timer, &ms[r], st);
        if (!rc) ms[r] /= row->per_repeat;
    }
    bench_range_pop(b);
    bench_timer_close(&timer);
    if (rc) return rc;
    row->median_ms = bench_median(ms, o->repeats);
    if (row->median_ms <= 0.0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "gemm %s %dx%dx%d: the timer measured "
                           "%g ms", bench_precision_name(row->precision), row->size.m,
                           row->size.n, row->size.k, row->median_ms);
    row->tflops = 2.0 * row->size.m * row->size.n * row->size.k / (row->median_ms * 1e-3) / 1e12;
    row->available = 1;
    return 0;
}

// Why precision p cannot be measured on this device; NULL when it can.
static const char *unavailable_reason(const BenchDevice *dev, BenchPrecision p, char *buf,
                                      size_t size) {
    if (!dev->is_gpu)
        return p == BENCH_FP32 ? NULL : "not available on the CPU (its gemm is fp32 only)";
    return bench_gpu_lacks(dev, p, buf, size);
}

static int measure_row(Device *d, const BenchDevice *dev, CudaBenchGemm *cuda,
                       const BenchOptions *o, BenchGemmRow *row, Status *st) {
    const char *why = unavailable_reason(dev, row->precision, row->unavailable,
                                         sizeof row->unavailable);
    if (why) {
        if (why != row->unavailable) snprintf(row->unavailable, sizeof row->unavailable, "%s", why);
        return 0;
    }
    const BenchGemmSize *s = &row->size;
    size_t e = element_bytes(row->precision);
    size_t set_bytes = ((size_t)s->m * s->k + (size_t)s->k * s->n + (size_t)s->m * s->n) * e;
    row->input_sets = bench_input_sets(dev, set_bytes, GEMM_MAX_INPUT_SETS);
    row->input_bytes = set_bytes * (size_t)row->input_sets;
    bench_progress(o, "gemm %s %dx%dx%d", bench_precision_name(row->precision), s->m, s->n,
                   s->k);
    GemmBuffers g;
    int rc = buffers_alloc(d, row->precision, s, row->input_sets, &g, st);
    if (!rc) rc = measure(d, cuda, o, row, &g, st);
    buffers_free(&g);
    if (rc == STATUS_OUT_OF_MEMORY) {
        // A size the device cannot hold is a row that says so; the other sizes still run.
        snprintf(row->unavailable, sizeof row->unavailable, "out of memory for %zu MiB of "
                 "inputs", row->input_bytes >> 20);
        status_clear(st);
        return 0;
    }
    return rc;
}

int bench_gemm(Device *d, const BenchDevice *dev, const BenchOptions *o,
               const BenchGemmSize *sizes, int size_count, unsigned precisions,
               BenchGemmReport *out, Status *st) {
    memset(out, 0, sizeof *out);
    CudaBenchGemm *cuda = NULL;
    if (dev->is_gpu) TRY(cuda_bench_gemm_open(d->backend, &cuda, st));
    int rc = 0;
    for (int i = 0; !rc && i < size_count && i < BENCH_MAX_SIZES; i++)
        for (int p = 0; !rc && p < BENCH_PRECISION_COUNT; p++) {
            if (!(precisions & (1u << p))) continue;
            BenchGemmRow *row = &out->rows[out->row_count++];
            row->precision = (BenchPrecision)p;
            row->size = sizes[i];
            row->peak_tflops = dev->peak_tflops[p];
            rc = measure_row(d, dev, cuda, o, row, st);
        }
    cuda_bench_gemm_close(cuda);
    return rc;
}
