#define _DEFAULT_SOURCE  // sysconf's _SC_PHYS_PAGES
#include <cblas.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernels/cpu/cpu_ops.h"

// 64-byte alignment: a cache line, and what AVX-512 loads want.
enum { CPU_ALIGNMENT = 64 };

static int cpu_raw_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    size_t rounded = (bytes + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT;
    *ptr = aligned_alloc(CPU_ALIGNMENT, rounded ? rounded : CPU_ALIGNMENT);
    if (!*ptr)
        return status_fail(st, STATUS_OUT_OF_MEMORY, "cpu: malloc of %zu bytes failed: %s", bytes,
                           strerror(errno));
    return 0;
}

static void cpu_raw_free(const Backend *b, void *ptr) { free(ptr); }

static size_t cpu_total_memory(const Backend *b) {
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? (size_t)pages * (size_t)page_size : 0;
}

static int cpu_copy(const Backend *b, void *dst, const void *src, size_t bytes, Status *st) {
    if (bytes) memmove(dst, src, bytes);
    return 0;
}

static int cpu_fill(const Backend *b, float *x, float value, size_t n, Status *st) {
    if (value == 0.0f) {
        memset(x, 0, n * sizeof *x);
    } else {
        for (size_t i = 0; i < n; i++) x[i] = value;
    }
    return 0;
}

static int cpu_synchronize(const Backend *b, Status *st) { return 0; }

// The CPU's "device" is host memory and its copies are memmove, finished on return: a
// pinned buffer is ordinary memory and its fence is always passed.
static int cpu_pinned_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    size_t rounded = (bytes + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT;
    *ptr = aligned_alloc(CPU_ALIGNMENT, rounded ? rounded : CPU_ALIGNMENT);
    if (!*ptr)
        return status_fail(st, STATUS_RUNTIME_ERROR, "cpu: no host memory for a %zu-byte staging "
                           "buffer: %s", bytes, strerror(errno));
    return 0;
}

static void cpu_pinned_free(const Backend *b, void *ptr) { free(ptr); }

static int cpu_pinned_fence(const Backend *b, void *ptr, Status *st) { return 0; }

static int cpu_pinned_wait(const Backend *b, void *ptr, Status *st) { return 0; }

// A CPU op has finished when it returns (OpenBLAS and our thread pool join before
// returning), so the clock read when the mark is placed is when the work before it ended.
static int cpu_timer_create(const Backend *b, void **timer, Status *st) {
    *timer = calloc(1, sizeof(struct timespec));
    if (!*timer) return status_fail(st, STATUS_RUNTIME_ERROR, "cpu: no host memory for a timer");
    return 0;
}

static int cpu_timer_record(const Backend *b, void *timer, Status *st) {
    clock_gettime(CLOCK_MONOTONIC, (struct timespec *)timer);
    return 0;
}

static int cpu_timer_elapsed(const Backend *b, void *start, void *end, double *ms, Status *st) {
    const struct timespec *t0 = start, *t1 = end;
    *ms = (double)(t1->tv_sec - t0->tv_sec) * 1e3 + (double)(t1->tv_nsec - t0->tv_nsec) * 1e-6;
    return 0;
}

static void cpu_timer_destroy(const Backend *b, void *timer) { free(timer); }

// Every op of BACKEND_OPS is the function cpu_<op>, so the table is expanded from that list
// and an op added to it fails to compile here until the CPU reference exists. The three
// copies are one memmove on the CPU.
#define cpu_copy_to_device cpu_copy
#define cpu_copy_to_host cpu_copy
#define cpu_copy_on_device cpu_copy
#define CPU_OP(op) .op = cpu_##op,
static const Backend cpu_backend_table = {
    .name = "cpu",
    .kind = BACKEND_CPU,
    BACKEND_OPS(CPU_OP)
    // make_current and range_push/pop stay NULL: one device, no profiler.
    .pinned_alloc = cpu_pinned_alloc,
    .pinned_free = cpu_pinned_free,
    .pinned_fence = cpu_pinned_fence,
    .pinned_wait = cpu_pinned_wait,
    .timer_create = cpu_timer_create,
    .timer_record = cpu_timer_record,
    .timer_elapsed = cpu_timer_elapsed,
    .timer_destroy = cpu_timer_destroy,
};

const Backend *cpu_backend(void) { return &cpu_backend_table; }

void cpu_backend_set_threads(int threads) {
    if (threads > 0) openblas_set_num_threads(threads);
}

const char *cpu_blas_core_name(void) {
    const char *core = openblas_get_corename();
    return core ? core : "unknown";
}

const char *cpu_blas_better_core(void) {
    // OpenBLAS 0.3.21 does not know newer Xeons (e.g. family 6 model 207) and falls back
    // to its SSE3 "Prescott" kernels, 3-4x slower than the AVX-512 ones the CPU can run.
    const char *core = openblas_get_corename();
    if (!core || strcasecmp(core, "prescott") != 0) return NULL;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void cpu_backend_flush_denormals(void) {
#if defined(__SSE__)
    // Late in training, Adam's second moments and small activations drift into denormal
    // range, where x86 arithmetic is ~100x slower; flushing them to zero changes no
    // result that matters and keeps every epoch as fast as the first.
    _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ | DAZ
#endif
}
