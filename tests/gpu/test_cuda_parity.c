// The CUDA backend against the CPU reference, op by op: every entry of the op table
// (BACKEND_OPS in kernels/backend.h is the checklist)
// on random inputs of several shapes: odd sizes, batch 1, and larger ones. ggml's
// test-backend-ops does the same for its backends.
//
// How each op is checked
// - Device outputs start as NaN bytes, copied in with copy_to_device, so an op that skips
//   an element, or reads an output it should only write (beta = 0, accumulate = 0),
//   leaves or makes a NaN. Every device buffer also sits between two 256-byte guard
//   zones that are checked after every op, so a write past either end is caught.
// - accumulate = 0 and 1 for every op that has the flag; gemm's and sum_rows' beta 0, 1
//   and other values; gemm with padded leading dimensions (the padding holds NaN).
// - Error of an element = |gpu - cpu| / magnitude, where the magnitude is what f32
//   rounding error scales with: for sums (gemm, conv, pooling, reductions) the sum of the
//   |terms|, computed by running the CPU op on |inputs| as tests/unit/test_gemm.c and
//   test_conv.c do, so a result near 0 made of large terms of both signs does not fail a
//   correct op; for elementwise ops the size of the operands. Each op's largest error
//   is printed at the end.
// - FP32 pass (the CUDA backend opened with allow_tf32 = 0): every op below 1e-4. The
//   same f32 math summed in another order differs by ~1e-7..1e-5 of the magnitude;
//   TF32 differs by ~1e-3 and fails this pass, as it must when TF32 was turned off
//   (cuDNN's CUDNN_DEFAULT_MATH allows TF32 on sm_80+: fp32 needs CUDNN_FMA_MATH). So
//   do FFT and Winograd algorithms (2.7e-4 on an H100's backward-filter), which the
//   backend therefore never runs in FP32 (kernels/cuda/cuda_conv2d.cu argues it). The
//   tolerance stays: a direct sum over K terms is off by ~sqrt(K) * 6e-8 of the sum of
//   |terms| in practice, under 5e-6 for K = 6,272 (LeNet's second layer at batch 32)
//   and 5.4e-5 for the largest K here, 802,816 (the first layer's weight and bias
//   gradients at batch 1024); that is the figure for one long sequential sum, and the
//   blocked and tree-shaped sums both backends run stay well below it. Each convolution
//   case prints the algorithms cuDNN ran, and a failure names them.
// - TF32 pass (allow_tf32 = 1, trainer's default unless --no-tf32): gemm and conv again,
//   below 1e-2. TF32 keeps 11 significant bits of each input (relative rounding error up
//   to 2^-11 ~ 4.9e-4), so each product is off by up to ~1e-3 of |a*b| and a sum by up to
//   ~1e-3 of the sum of its |terms|: 1e-2 leaves a 10x margin, while a wrong index,
//   transpose, stride or padding is off by O(1). Before sm_80 there is no TF32 and this
//   pass runs f32 math.
// - Bit for bit: dropout masks (both backends hash (seed, index) with dropout_uniform),
//   maxpool's output and argmax (ties go to the first maximum in row-major window order,
//   and a NaN wins its window, as on the CPU and in PyTorch), maxpool's input gradient
//   (sums of dy in the CPU's order), a loss's hits (row_stats), copies, fill.
// - A NULL entry in the CUDA table is a failure that names the op, not a skip.
//
// Skipped (exit 77) only when cuda_backend_open answers STATUS_NO_DEVICE: no driver, no
// GPU, or a build without CUDA.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "conv_cases.h"
#include "base/lever.h"
#include "base/rng.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_batchnorm_rows_split.h"
#include "kernels/cuda/cuda_device.h"

#define FP32_RTOL 1e-4
#define TF32_RTOL 1e-2
// More elements than one launch of 65535 blocks x 256 threads covers, so grid-stride
// loops must go round more than once.
#define BIG_N ((size_t)65535 * 256 + 4099)
#define GUARD_BYTES 256     // also keeps every buffer 256-byte aligned, as cudaMalloc's are
#define POISON_BYTE 0xFF    // as floats every word is a NaN; as int32 it is -1
#define CANARY_BYTE 0xA5

static const Backend *gpu;  // the backend under test
static const Backend *cpu;  // the reference
static double rtol = FP32_RTOL;
static const char *pass_name = "fp32";
static int device_broken;   // a device call failed so that nothing more can be tested
static Rng rng;
static char shape[1024];     // the case being run, for messages
static unsigned char canary[GUARD_BYTES];

// ---- per-op results --------------------------------------------------------------------

typedef struct OpStat {
    const char *op;
    const char *pass;
    long checks;
    int failed;
    double max_err;
    double tol;
} OpStat;

enum { MAX_STATS = 128, MAX_OPS = 64, MAX_BLOCKS = 512 };
static OpStat stats[MAX_STATS];
static int stat_count;
static const char *exercised[MAX_OPS];
static int exercised_count;
static const char *absent[MAX_OPS];
static int absent_count;

static OpStat *stat_for(const char *op) {
    for (int i = 0; i < stat_count; i++)
        if (strcmp(stats[i].op, op) == 0 && strcmp(stats[i].pass, pass_name) == 0) return &stats[i];
    static OpStat overflow;
    if (stat_count == MAX_STATS) return &overflow;
    stats[stat_count] = (OpStat){.op = op, .pass = pass_name, .tol = rtol};
    return &stats[stat_count++];
}

static void record(const char *op, double err, int failed) {
    OpStat *s = stat_for(op);
    s->checks++;
    if (isnan(err)) err = INFINITY;
    if (err > s->max_err) s->max_err = err;
    if (failed) {
        s->failed++;
        test_failures++;
    }
}

static int listed(const char *const *list, int count, const char *op) {
    for (int i = 0; i < count; i++)
        if (strcmp(list[i], op) == 0) return 1;
    return 0;
}

// Marks `op` as covered by this test; a NULL entry is reported (once) as a failure.
static int require_op(const char *op, int present) {
    if (!listed(exercised, exercised_count, op) && exercised_count < MAX_OPS)
        exercised[exercised_count++] = op;
    if (present) return 1;
    if (!listed(absent, absent_count, op) && absent_count < MAX_OPS) {
        absent[absent_count++] = op;
        fprintf(stderr, "FAIL %s: the %s op table has no %s (a NULL entry: not implemented)\n",
                op, gpu->name, op);
        test_failures++;
    }
    return 0;
}
#define HAVE(op) require_op(#op, gpu->op != NULL)
#define REQUIRE(op) \
    do { if (!HAVE(op)) return; } while (0)

// ---- host buffers, freed at the end of each case ----------------------------------------

static void *host_blocks[MAX_BLOCKS];
static int host_count;

static void *host_alloc(size_t bytes) {
    void *p = host_count < MAX_BLOCKS ? malloc(bytes ? bytes : 1) : NULL;
    if (!p) {
        fprintf(stderr, "test_cuda_parity: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    host_blocks[host_count++] = p;
    return p;
}

static float *floats(size_t n) { return host_alloc(n * sizeof(float)); }

static float *uniform(size_t n, float lo, float hi) {
    float *x = floats(n);
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&rng);
    return x;
}

static float *poisoned(size_t n) {
    float *x = floats(n);
    memset(x, POISON_BYTE, n * sizeof *x);
    return x;
}

static float *zeros(size_t n) {
    float *x = floats(n);
    memset(x, 0, n * sizeof *x);
    return x;
}

static float *copy_of(const float *x, size_t n) {
    float *y = floats(n);
    memcpy(y, x, n * sizeof *y);
    return y;
}

static float *absolute(const float *x, size_t n) {
    float *y = floats(n);
    for (size_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
    return y;
}

// Gradients as training produces them: mostly O(1), some exactly zero.
static float *gradients(size_t n) {
    float *g = uniform(n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i += 19) g[i] = 0.0f;
    return g;
}

// ---- device buffers, between guard zones, freed at the end of each case -----------------

typedef struct DeviceBlock {
    unsigned char *base;
    size_t bytes;
} DeviceBlock;
static DeviceBlock dev_blocks[MAX_BLOCKS];
static int dev_count;

static void report_device_failure(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "FAIL %s [%s]: %s", what, shape, text);
    test_failures++;
    device_broken = 1;
}

static void *dev_alloc(size_t bytes) {
    if (device_broken) return NULL;
    if (dev_count == MAX_BLOCKS) {
        fprintf(stderr, "test_cuda_parity: more than %d device buffers in one case\n", MAX_BLOCKS);
        exit(1);
    }
    Status st;
    status_clear(&st);
    void *base = NULL;
    if (gpu->raw_alloc(gpu, bytes + 2 * GUARD_BYTES, &base, &st)) {
        report_device_failure("raw_alloc", &st);
        return NULL;
    }
    unsigned char *b = base;
    dev_blocks[dev_count++] = (DeviceBlock){b, bytes};
    if (gpu->copy_to_device(gpu, b, canary, GUARD_BYTES, &st) ||
        gpu->copy_to_device(gpu, b + GUARD_BYTES + bytes, canary, GUARD_BYTES, &st)) {
        report_device_failure("copy_to_device", &st);
        return NULL;
    }
    return b + GUARD_BYTES;
}

static void upload(void *dst, const void *src, size_t bytes) {
    if (device_broken || !dst || !bytes) return;
    Status st;
    status_clear(&st);
    if (gpu->copy_to_device(gpu, dst, src, bytes, &st)) report_device_failure("copy_to_device", &st);
}

static void download(void *dst, const void *src, size_t bytes) {
    if (device_broken || !src || !bytes) return;
    Status st;
    status_clear(&st);
    if (gpu->copy_to_host(gpu, dst, src, bytes, &st)) report_device_failure("copy_to_host", &st);
}

static void *dev_copy(const void *host, size_t bytes) {
    void *d = dev_alloc(bytes);
    upload(d, host, bytes);
    return d;
}

static void *dev_poisoned(size_t bytes) {
    void *host = host_alloc(bytes);
    memset(host, POISON_BYTE, bytes);
    return dev_copy(host, bytes);
}

static float *dev_floats(const float *host, size_t n) { return dev_copy(host, n * sizeof *host); }
static float *dev_poison_floats(size_t n) { return dev_poisoned(n * sizeof(float)); }

// A buffer from the device into new host memory (poison when the device is broken).
static float *fetch(const float *d, size_t n) {
    float *h = poisoned(n);
    download(h, d, n * sizeof *h);
    return h;
}

// x rounded to `dtype` in place (so the reference and the magnitudes see the stored
// values), and those values as the device stores them: 2 bytes each, or x itself for f32.
static void *stored(float *x, size_t n, DType dtype) {
    if (dtype == DTYPE_F32) return x;
    uint16_t *bits = host_alloc((n ? n : 1) * sizeof *bits);
    for (size_t i = 0; i < n; i++) {
        bits[i] = dtype == DTYPE_BF16 ? f32_to_bf16(x[i]) : f32_to_f16(x[i]);
        x[i] = dtype == DTYPE_BF16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
    }
    return bits;
}

// n values stored as `dtype` (host memory), widened to f32.
static float *widened(const void *x, size_t n, DType dtype) {
    if (dtype == DTYPE_F32) return copy_of(x, n);
    float *out = floats(n);
    const uint16_t *bits = x;
    for (size_t i = 0; i < n; i++)
        out[i] = dtype == DTYPE_BF16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
    return out;
}

// n device values stored as `dtype`, widened to f32.
static float *fetch_widened(const void *d, size_t n, DType dtype) {
    void *host = host_alloc((n ? n : 1) * dtype_size(dtype));
    download(host, d, n * dtype_size(dtype));
    return widened(host, n, dtype);
}

// After every op: the guard zones around every live buffer must be as they were.
static void check_guards(const char *op) {
    unsigned char got[GUARD_BYTES];
    for (int i = 0; i < dev_count && !device_broken; i++) {
        for (int side = 0; side < 2; side++) {
            unsigned char *at = dev_blocks[i].base + (side ? GUARD_BYTES + dev_blocks[i].bytes : 0);
            Status st;
            status_clear(&st);
            if (gpu->copy_to_host(gpu, got, at, GUARD_BYTES, &st)) {
                report_device_failure("copy_to_host", &st);
                return;
            }
            if (memcmp(got, canary, GUARD_BYTES) == 0) continue;
            fprintf(stderr, "FAIL %s [%s]: wrote outside its buffers: the guard zone %s a "
                    "%zu-byte buffer changed\n", op, shape, side ? "after" : "before",
                    dev_blocks[i].bytes);
            record(op, INFINITY, 1);
            upload(at, canary, GUARD_BYTES);
        }
    }
}

static void end_case(void) {
    for (int i = 0; i < dev_count; i++) gpu->raw_free(gpu, dev_blocks[i].base);
    dev_count = 0;
    for (int i = 0; i < host_count; i++) free(host_blocks[i]);
    host_count = 0;
}

// ---- calling ops -------------------------------------------------------------------------

// An op's status, then a synchronize, so that an asynchronous fault is pinned to this op,
// then the guard zones.
static int gpu_done(const char *op, int rc, const Status *st) {
    if (rc) {
        char text[2048];
        status_format(st, text, sizeof text);
        fprintf(stderr, "FAIL %s [%s]: returned %d: %s", op, shape, rc, text);
        record(op, INFINITY, 1);
    }
    Status sync;
    status_clear(&sync);
    if (gpu->synchronize && gpu->synchronize(gpu, &sync)) {
        report_device_failure(op, &sync);
        return 1;
    }
    check_guards(op);
    return rc || device_broken;
}

static int cpu_done(const char *op, int rc, const Status *st) {
    if (rc) {
        char text[2048];
        status_format(st, text, sizeof text);
        fprintf(stderr, "FAIL the CPU reference %s [%s]: %s", op, shape, text);
        test_failures++;
    }
    return rc;
}

// Both need a `Status st` in scope; GPU_CALL calls nothing once the device is broken.
#define GPU_CALL(op, ...) \
    (device_broken ? 1 : gpu_done(#op, gpu->op(gpu, __VA_ARGS__, &st), &st))
#define CPU_CALL(op, ...) cpu_done(#op, cpu->op(cpu, __VA_ARGS__, &st), &st)

// ---- comparing ---------------------------------------------------------------------------

// err_i = |got_i - want_i| / scale_i with scale_i = mag[i], or |want_i| when mag is NULL.
// A non-finite reference must be matched exactly (NaN by any NaN).
static void compare(const char *op, const char *what, const float *got, const float *want,
                    const float *mag, size_t n) {
    if (device_broken) return;
    double worst = 0.0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i], err;
        if (!isfinite(w)) err = ((isnan(w) && isnan(g)) || g == w) ? 0.0 : INFINITY;
        else if (!isfinite(g)) err = INFINITY;
        else err = fabs(g - w) / ((mag ? fabs((double)mag[i]) : fabs(w)) + 1e-30);
        if (err > worst) worst = err;
        if (!(err <= rtol)) {
            if (bad < 3)
                fprintf(stderr, "FAIL %s %s [%s] (%s): element %zu: gpu %.9g vs cpu %.9g "
                        "(magnitude %.3g, error %.3g > %.0e)\n", op, what, shape, pass_name, i,
                        g, w, mag ? (double)mag[i] : fabs(w), err, rtol);
            bad++;
        }
    }
    if (bad)
        fprintf(stderr, "FAIL %s %s [%s] (%s): %zu of %zu elements differ, largest error %.3g\n",
                op, what, shape, pass_name, bad, n, worst);
    record(op, worst, bad != 0);
}

// Bit for bit, 4-byte words; with nan_equal, any NaN also matches any NaN.
static void compare_exact(const char *op, const char *what, const void *got, const void *want,
                          size_t n, int as_int, int nan_equal) {
    if (device_broken) return;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t g, w;
        memcpy(&g, (const char *)got + 4 * i, 4);
        memcpy(&w, (const char *)want + 4 * i, 4);
        if (g == w) continue;
        float gf, wf;
        memcpy(&gf, &g, 4);
        memcpy(&wf, &w, 4);
        if (nan_equal && isnan(gf) && isnan(wf)) continue;
        if (bad < 3) {
            if (as_int)
                fprintf(stderr, "FAIL %s %s [%s]: element %zu: gpu %d vs cpu %d (must be equal)\n",
                        op, what, shape, i, (int32_t)g, (int32_t)w);
            else
                fprintf(stderr, "FAIL %s %s [%s]: element %zu: gpu %.9g (0x%08x) vs cpu %.9g "
                        "(0x%08x) (must be bit for bit equal)\n", op, what, shape, i, gf, g, wf, w);
        }
        bad++;
    }
    if (bad) fprintf(stderr, "FAIL %s %s [%s]: %zu of %zu elements differ\n", op, what, shape, bad, n);
    record(op, bad ? INFINITY : 0.0, bad != 0);
}

// ---- memory, copies, fill ------------------------------------------------------------------

static void test_total_memory(void) {
    REQUIRE(total_memory);
    snprintf(shape, sizeof shape, "-");
    size_t total = gpu->total_memory(gpu);
    printf("  total_memory: %zu MiB\n", total >> 20);
    if (total == 0) fprintf(stderr, "FAIL total_memory: reported 0 bytes\n");
    record("total_memory", 0.0, total == 0);
}

static void test_raw_alloc(void) {
    REQUIRE(raw_alloc);
    REQUIRE(raw_free);
    static const size_t sizes[] = {0, 1, 3, 4096, ((size_t)1 << 20) + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !device_broken; i++) {
        snprintf(shape, sizeof shape, "%zu bytes", sizes[i]);
        Status st;
        status_clear(&st);
        void *p = NULL;
        int rc = gpu->raw_alloc(gpu, sizes[i], &p, &st);
        int bad = rc != 0 || p == NULL || (uintptr_t)p % 16 != 0;
        if (bad)
            fprintf(stderr, "FAIL raw_alloc [%s]: rc %d, pointer %p (want 0 and a 16-byte aligned "
                    "pointer, what vectorized kernels load through): %s\n", shape, rc, p, st.message);
        record("raw_alloc", 0.0, bad);
        if (!rc && p) gpu->raw_free(gpu, p);
    }
    // More than the device has: a status the allocator can act on, and nothing sticky.
    size_t total = gpu->total_memory ? gpu->total_memory(gpu) : 0;
    size_t huge = total ? total * 4 : (size_t)1 << 50;
    snprintf(shape, sizeof shape, "%zu bytes, 4x the device", huge);
    Status st;
    status_clear(&st);
    void *p = NULL;
    int rc = gpu->raw_alloc(gpu, huge, &p, &st);
    int bad = rc != STATUS_OUT_OF_MEMORY || p != NULL || st.message[0] == '\0';
    if (bad)
        fprintf(stderr, "FAIL raw_alloc [%s]: rc %d (%s), pointer %p; want STATUS_OUT_OF_MEMORY, "
                "NULL and a message\n", shape, rc, status_code_name((StatusCode)rc), p);
    else
        printf("  raw_alloc of %zu GiB: out of memory, as it should be: %s\n", huge >> 30, st.message);
    record("raw_alloc", 0.0, bad);
    if (!rc && p) gpu->raw_free(gpu, p);
    snprintf(shape, sizeof shape, "1 MiB after an out-of-memory");
    status_clear(&st);
    p = NULL;
    rc = gpu->raw_alloc(gpu, (size_t)1 << 20, &p, &st);
    if (rc) fprintf(stderr, "FAIL raw_alloc [%s]: %s\n", shape, st.message);
    record("raw_alloc", 0.0, rc != 0);
    if (!rc && p) gpu->raw_free(gpu, p);
}

static void test_synchronize(void) {
    REQUIRE(synchronize);
    snprintf(shape, sizeof shape, "idle stream");
    Status st;
    status_clear(&st);
    int rc = gpu->synchronize(gpu, &st);
    if (rc) fprintf(stderr, "FAIL synchronize [%s]: %s\n", shape, st.message);
    record("synchronize", 0.0, rc != 0);
}

// Byte for byte; the first differing byte is printed.
static void compare_bytes(const char *op, const char *what, const unsigned char *got,
                          const unsigned char *want, size_t n) {
    if (device_broken) return;
    size_t i = 0;
    while (i < n && got[i] == want[i]) i++;
    if (i < n)
        fprintf(stderr, "FAIL %s %s [%s]: byte %zu of %zu is 0x%02x, want 0x%02x\n", op, what,
                shape, i, n, got[i], want[i]);
    record(op, i < n ? INFINITY : 0.0, i < n);
}

// Bytes at odd offsets and odd lengths, host -> device -> device -> host; the bytes around
// each destination must keep what they held.
static void copy_case(size_t bytes, size_t offset) {
    snprintf(shape, sizeof shape, "%zu bytes at offset %zu", bytes, offset);
    Status st;
    status_clear(&st);
    size_t span = bytes + offset + 8;
    unsigned char *src = host_alloc(bytes), *want = host_alloc(span), *got = host_alloc(span);
    for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)rng_below(&rng, 256);
    memset(want, POISON_BYTE, span);
    memcpy(want + offset, src, bytes);
    unsigned char *a = dev_poisoned(span), *b = dev_poisoned(span);
    if (!GPU_CALL(copy_to_device, a + offset, src, bytes)) {
        memset(got, 0, span);
        download(got, a, span);
        compare_bytes("copy_to_device", "bytes", got, want, span);
    }
    if (!GPU_CALL(copy_on_device, b + offset, a + offset, bytes)) {
        memset(got, 0, span);
        download(got, b, span);
        compare_bytes("copy_on_device", "bytes", got, want, span);
    }
    // Into the middle of a host buffer: the host bytes around it stay.
    memset(got, 0x5A, span);
    memset(want, 0x5A, span);
    memcpy(want + offset, src, bytes);
    if (!GPU_CALL(copy_to_host, got + offset, b + offset, bytes))
        compare_bytes("copy_to_host", "bytes", got, want, span);
}

// Zero-byte copies and a copy onto itself change nothing.
static void copy_no_op_case(void) {
    snprintf(shape, sizeof shape, "0 bytes, and dst == src");
    Status st;
    status_clear(&st);
    enum { BYTES = 64 };
    unsigned char src[BYTES], got[BYTES], want[BYTES];
    for (int i = 0; i < BYTES; i++) src[i] = (unsigned char)(i * 7 + 1);
    unsigned char *a = dev_copy(src, BYTES), *b = dev_poisoned(BYTES);
    if (device_broken) return;
    memset(want, POISON_BYTE, BYTES);
    if (!GPU_CALL(copy_on_device, b, a, 0)) {
        download(got, b, BYTES);
        compare_bytes("copy_on_device", "0 bytes", got, want, BYTES);
    }
    if (!GPU_CALL(copy_to_device, b, src, 0)) {
        download(got, b, BYTES);
        compare_bytes("copy_to_device", "0 bytes", got, want, BYTES);
    }
    if (!GPU_CALL(copy_on_device, a, a, BYTES)) {
        download(got, a, BYTES);
        compare_bytes("copy_on_device", "onto itself", got, src, BYTES);
    }
    memset(got, 0x5A, BYTES);
    memset(want, 0x5A, BYTES);
    if (!GPU_CALL(copy_to_host, got, a, 0)) compare_bytes("copy_to_host", "0 bytes", got, want, BYTES);
}

static void test_copies(void) {
    REQUIRE(copy_to_device);
    REQUIRE(copy_to_host);
    REQUIRE(copy_on_device);
    static const size_t sizes[] = {1, 3, 4, 1001, ((size_t)1 << 20) + 5};
    static const size_t offsets[] = {0, 1, 5, 256};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            copy_case(sizes[s], offsets[o]);
            end_case();
        }
    copy_no_op_case();
    end_case();
}

// fill of n floats starting `offset` floats into a poisoned buffer: the CPU's result,
// bit for bit, and nothing outside [offset, offset + n).
static void fill_case(size_t n, size_t offset, float value) {
    snprintf(shape, sizeof shape, "n=%zu at offset %zu, value %g", n, offset, value);
    Status st;
    status_clear(&st);
    size_t span = n + offset + 7;
    float *d = dev_poison_floats(span);
    float *want = poisoned(span);
    if (GPU_CALL(fill, d + offset, value, n)) return;
    CPU_CALL(fill, want + offset, value, n);
    compare_exact("fill", "values", fetch(d, span), want, span, 0, 0);
}

static void test_fill(void) {
    REQUIRE(fill);
    static const size_t sizes[] = {0, 1, 7, 1000, 65537, BIG_N};
    static const float values[] = {0.0f, -0.0f, 3.25f, -1e30f};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            fill_case(sizes[s], s % 2 ? 3 : 0, values[v]);
            end_case();
        }
}

// ---- data ---------------------------------------------------------------------------------

// A batch gathered from a byte dataset on the device: `count` random sample indices
// (repeats included) into `samples` samples of `sample_size` bytes. Labels run 0-9 against
// 8 classes, so the bad-label check (labels 8 and 9 become 0, the smallest such sample
// index is reported) is compared too.
// t: the sample's geometry, per-channel scale and shift, and augmentation.
static void gather_case(int samples, const SampleTransform *t, int count) {
    size_t sample_size = (size_t)t->channels * t->height * t->width;
    snprintf(shape, sizeof shape, "%d samples of %dx%dx%d, batch %d, scale %g shift %g, crop %d "
             "flip %d", samples, t->channels, t->height, t->width, count,
             (double)t->channel_scale[0], (double)t->channel_shift[0], t->crop_padding, t->flip);
    Status st;
    status_clear(&st);
    size_t bytes = (size_t)samples * sample_size, n = (size_t)count * sample_size;
    uint8_t *images = host_alloc(bytes), *labels = host_alloc((size_t)samples);
    int32_t *indices = host_alloc((size_t)count * sizeof *indices + 1);
    for (size_t i = 0; i < bytes; i++) images[i] = (uint8_t)rng_below(&rng, 256);
    for (int i = 0; i < samples; i++) labels[i] = (uint8_t)rng_below(&rng, 10);
    for (int k = 0; k < count; k++) indices[k] = (int32_t)rng_below(&rng, (uint32_t)samples);
    if (count > 1) indices[count - 1] = indices[0];
    uint8_t *d_images = dev_copy(images, bytes), *d_labels = dev_copy(labels, (size_t)samples);
    int32_t *d_indices = dev_copy(indices, (size_t)count * sizeof *indices);
    float *d_out = dev_poison_floats(n + 1);
    int32_t *d_out_labels = dev_poisoned(((size_t)count + 1) * sizeof(int32_t));
    const int classes = 8;
    int32_t want_bad = INT32_MAX, got_bad = 0;
    int32_t *d_bad = dev_copy(&want_bad, sizeof want_bad);
    GatherArgs gather = {.count = count, .sample_size = sample_size, .classes = classes,
                         .transform = *t};
    if (GPU_CALL(gather_samples, &gather, &(GatherSamplesTensors){.images = d_images,
                 .labels = d_labels, .indices = d_indices, .out_images = d_out,
                 .out_labels = d_out_labels, .first_bad_sample = d_bad}))
        return;
    float *want = poisoned(n + 1);
    int32_t *want_labels = host_alloc(((size_t)count + 1) * sizeof *want_labels);
    int32_t *got_labels = host_alloc(((size_t)count + 1) * sizeof *got_labels);
    memset(want_labels, POISON_BYTE, ((size_t)count + 1) * sizeof *want_labels);
    CPU_CALL(gather_samples, &gather, &(GatherSamplesTensors){.images = images, .labels = labels,
             .indices = indices, .out_images = want, .out_labels = want_labels,
             .first_bad_sample = &want_bad});
    download(got_labels, d_out_labels, ((size_t)count + 1) * sizeof *got_labels);
    download(&got_bad, d_bad, sizeof got_bad);
    compare_exact("gather_samples", "first bad-label sample", &got_bad, &want_bad, 1, 1, 0);
    // A byte times the scale plus the shift: a rounding or two, relative to itself; a crop
    // or flip misplaced would be off by whole bytes. The element after the batch must keep
    // its poison.
    compare("gather_samples", "images", fetch(d_out, n + 1), want, NULL, n + 1);
    compare_exact("gather_samples", "labels", got_labels, want_labels, (size_t)count + 1, 1, 0);
}

static SampleTransform plain_transform(int channels, int height, int width) {
    SampleTransform t = {.channels = channels, .height = height, .width = width};
    for (int c = 0; c < channels; c++) t.channel_scale[c] = 1.0f / 255.0f;
    return t;
}

static void test_gather_samples(void) {
    REQUIRE(gather_samples);
    static const struct { int samples, channels, height, width, count; } cases[] = {
        {1, 1, 1, 1, 1}, {10, 1, 1, 5, 0}, {37, 1, 3, 5, 8}, {1000, 1, 28, 28, 128},
        {600, 3, 32, 32, 1}, {5000, 1, 28, 28, 1024}, {300, 1, 1, 1, 257},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        SampleTransform t = plain_transform(cases[i].channels, cases[i].height, cases[i].width);
        gather_case(cases[i].samples, &t, cases[i].count);
        end_case();
    }
    SampleTransform half = plain_transform(1, 28, 28);
    half.channel_scale[0] = 0.5f;
    gather_case(50, &half, 64);
    end_case();
    // Normalized per channel (CIFAR-10's mean and std), then cropped and flipped as
    // training does: every sample's offsets come from the key and its index alone.
    static const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, std[3] = {0.2470f, 0.2435f,
                                                                         0.2616f};
    SampleTransform cifar = plain_transform(3, 32, 32);
    for (int c = 0; c < 3; c++) {
        cifar.channel_scale[c] = 1.0f / (255.0f * std[c]);
        cifar.channel_shift[c] = -mean[c] / std[c];
    }
    gather_case(600, &cifar, 256);
    end_case();
    cifar.crop_padding = 4;
    cifar.flip = 1;
    cifar.augment_key = 0x1234567890abcdefull;
    gather_case(600, &cifar, 256);
    end_case();
    SampleTransform odd = plain_transform(1, 7, 5);  // not square, padding past half of it
    odd.crop_padding = 3;
    odd.flip = 1;
    odd.augment_key = 99;
    gather_case(100, &odd, 64);
    end_case();
}

// Optional ops (NULL on the CPU, so in BACKEND_OTHER_OPS): profiler ranges
// must at least nest without failing the stream.
static void test_ranges(void) {
    if (!gpu->range_push || !gpu->range_pop) {
        printf("  range_push/range_pop: not provided (optional)\n");
        return;
    }
    snprintf(shape, sizeof shape, "nested ranges");
    gpu->range_push(gpu, "test_cuda_parity");
    gpu->range_push(gpu, "inner");
    gpu->range_pop(gpu);
    gpu->range_pop(gpu);
    Status st;
    status_clear(&st);
    int rc = gpu->synchronize ? gpu->synchronize(gpu, &st) : 0;
    if (rc) fprintf(stderr, "FAIL range_push/range_pop [%s]: %s\n", shape, st.message);
    record("range_push/range_pop", 0.0, rc != 0);
}

// ---- linear algebra ------------------------------------------------------------------------

// rows x cols values with stride ld: the padding columns get NaN, which a GEMM that uses
// a wrong leading dimension would read.
static void poison_padding(float *x, int rows, int cols, int ld) {
    for (int r = 0; r < rows; r++)
        if (ld > cols) memset(x + (size_t)r * ld + cols, POISON_BYTE, (size_t)(ld - cols) * sizeof *x);
}

// The m x n block of a matrix with leading dimension ld, packed; or its padding columns.
static float *pack(const float *c, int m, int n, int ld, int padding) {
    int width = padding ? ld - n : n;
    float *out = floats((size_t)m * (size_t)(width > 0 ? width : 0) + 1);
    for (int i = 0; i < m; i++)
        memcpy(out + (size_t)i * width, c + (size_t)i * ld + (padding ? n : 0),
               (size_t)width * sizeof *out);
    return out;
}

static void gemm_case(int ta, int tb, int m, int n, int k, float alpha, float beta, int pad) {
    snprintf(shape, sizeof shape, "ta=%d tb=%d m=%d n=%d k=%d alpha=%g beta=%g ld+%d", ta, tb, m,
             n, k, alpha, beta, pad);
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)m * ldc;
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    poison_padding(a, a_rows, a_cols, lda);
    poison_padding(bm, b_rows, b_cols, ldb);
    // beta = 0: C is output only and starts as NaN everywhere. Otherwise it holds values,
    // and its padding columns a sentinel; either way the padding must come back unchanged.
    float *c0 = beta == 0.0f ? poisoned(nc) : uniform(nc, -1.0f, 1.0f);
    if (beta != 0.0f)
        for (size_t i = 0; i < nc; i++)
            if ((int)(i % (size_t)ldc) >= n) c0[i] = 1234.5f;
    float *da = dev_floats(a, na), *db = dev_floats(bm, nb), *dc = dev_floats(c0, nc);
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k, .lda = lda,
                     .ldb = ldb, .ldc = ldc, .alpha = alpha, .beta = beta};
    if (GPU_CALL(gemm, &args, &(GemmTensors){.a = da, .bm = db, .c = dc})) return;
    float *got = fetch(dc, nc), *want = copy_of(c0, nc);
    CPU_CALL(gemm, &args, &(GemmTensors){.a = a, .bm = bm, .c = want});
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.alpha = fabsf(alpha);
    magnitude.beta = fabsf(beta);
    CPU_CALL(gemm, &magnitude, &(GemmTensors){.a = absolute(a, na), .bm = absolute(bm, nb),
             .c = cmag});
    compare("gemm", "C", pack(got, m, n, ldc, 0), pack(want, m, n, ldc, 0), pack(cmag, m, n, ldc, 0),
            (size_t)m * n);
    if (pad)
        compare_exact("gemm", "C padding columns", pack(got, m, n, ldc, 1), pack(c0, m, n, ldc, 1),
                      (size_t)m * pad, 0, 0);
}

static void test_gemm(void) {
    REQUIRE(gemm);
    // Odd sizes, vectors, batch 1, and the MLP's own products (784 inputs, 256 units).
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 17, 9}, {5, 3, 1}, {64, 10, 33},
        {1, 10, 256}, {128, 256, 784}, {256, 784, 128}, {1024, 10, 256}, {129, 257, 1025},
    };
    static const struct { float alpha, beta; int pad; } variants[] = {
        {1.0f, 0.0f, 0}, {1.0f, 1.0f, 0}, {-0.5f, 0.3f, 3}, {2.5f, 0.0f, 2},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
                gemm_case(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                          variants[v].alpha, variants[v].beta, variants[v].pad);
                end_case();
            }
}

static void add_bias_rows_case(int rows, int cols) {
    snprintf(shape, sizeof shape, "rows=%d cols=%d", rows, cols);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *y0 = uniform(n, -1.0f, 1.0f), *bias = uniform((size_t)cols, -1.0f, 1.0f);
    float *dy = dev_floats(y0, n), *dbias = dev_floats(bias, (size_t)cols);
    if (GPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = dy, .bias = dbias, .rows = rows,
                 .cols = cols})) return;
    float *want = copy_of(y0, n), *mag = absolute(y0, n);
    CPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = want, .bias = bias, .rows = rows,
                                               .cols = cols});
    CPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = mag, .bias = absolute(bias, (size_t)cols),
             .rows = rows, .cols = cols});
    compare("add_bias_rows", "y", fetch(dy, n), want, mag, n);
}

static void test_add_bias_rows(void) {
    REQUIRE(add_bias_rows);
    static const int shapes[][2] = {{1, 1}, {3, 5}, {1, 1000}, {1000, 1}, {128, 10}, {257, 129},
                                    {1024, 256}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        add_bias_rows_case(shapes[s][0], shapes[s][1]);
        end_case();
    }
}

// x stored as `dtype` (f32, or bf16/f16 activations), out f32.
static void sum_rows_case(int rows, int cols, float beta, DType dtype) {
    snprintf(shape, sizeof shape, "%s rows=%d cols=%d beta=%g", dtype_name(dtype), rows, cols,
             beta);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *x = uniform(n, -1.0f, 1.0f);
    void *x_stored = stored(x, n, dtype);
    float *out0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    void *dx = dev_copy(x_stored, n * dtype_size(dtype));
    float *dout = dev_floats(out0, (size_t)cols);
    if (GPU_CALL(sum_rows, &(SumRowsArgs){.out = dout, .x = dx, .x_dtype = dtype, .rows = rows,
                 .cols = cols, .beta = beta})) return;
    float *want = copy_of(out0, (size_t)cols);
    float *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(out0, (size_t)cols);
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = want, .x = x_stored, .x_dtype = dtype, .rows = rows,
             .cols = cols, .beta = beta});
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(x, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("sum_rows", "out", fetch(dout, (size_t)cols), want, mag, (size_t)cols);
}

static void test_sum_rows(void) {
    REQUIRE(sum_rows);
    // Past 256 rows the rows are split over blocks (cuda_column_sums.h): 257 is two chunks,
    // the second one row short; 60000 x 1 is 235.
    static const int shapes[][2] = {{1, 1}, {1, 17}, {4, 6}, {1000, 3}, {4096, 10}, {129, 1000},
                                    {60000, 1}, {257, 33}};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
            sum_rows_case(shapes[s][0], shapes[s][1], betas[b], DTYPE_F32);
            end_case();
        }
    // Three chunks' partials of 131072 columns would not fit the scratch: two longer ones.
    sum_rows_case(520, 131072, 1.0f, DTYPE_F32);
    end_case();
}

static void accumulate_case(size_t n) {
    snprintf(shape, sizeof shape, "n=%zu", n);
    Status st;
    status_clear(&st);
    size_t span = n + 1;  // one more, which must stay as it was
    float *x = uniform(span, -1.0f, 1.0f), *y0 = uniform(span, -1.0f, 1.0f);
    float *dx = dev_floats(x, span), *dy = dev_floats(y0, span);
    const void *d_sources[1] = {dx};
    if (GPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = dy, .x = d_sources,
                 .count = 1, .n = n, .accumulate = 1})) return;
    float *want = copy_of(y0, span), *mag = absolute(y0, span);
    const void *sources[1] = {x}, *mag_sources[1] = {absolute(x, span)};
    CPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = want, .x = sources, .count = 1,
             .n = n, .accumulate = 1});
    CPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = mag, .x = mag_sources,
             .count = 1, .n = n, .accumulate = 1});
    float *got = fetch(dy, span);
    compare("accumulate", "y", got, want, mag, span);
    compare_exact("accumulate", "the element after n", got + n, y0 + n, 1, 0, 0);
}

static void test_accumulate(void) {
    REQUIRE(accumulate);
    static const size_t sizes[] = {0, 1, 7, 1000, ((size_t)1 << 20) + 1, BIG_N};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        accumulate_case(sizes[s]);
        end_case();
    }
}

// ---- elementwise ---------------------------------------------------------------------------

static const char *const activation_names[ACTIVATION_COUNT] = {"relu", "leaky_relu", "sigmoid",
                                                               "tanh", "gelu"};

// Inputs over the range where every activation bends, with exact zeros (relu's kink).
static float *activation_inputs(size_t n) {
    float *x = uniform(n, -6.0f, 6.0f);
    for (size_t i = 0; i < n; i += 17) x[i] = 0.0f;
    return x;
}

static void activation_forward_case(ActivationKind kind, float slope, size_t n) {
    snprintf(shape, sizeof shape, "%s slope=%g n=%zu", activation_names[kind], slope, n);
    Status st;
    status_clear(&st);
    float *x = activation_inputs(n);
    float *dx = dev_floats(x, n), *dy = dev_poison_floats(n);
    if (GPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = dx, .y = dy, .n = n})) return;
    float *want = poisoned(n);
    CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
             .dtype = DTYPE_F32, .x = x, .y = want, .n = n});
    // Sigmoid is well conditioned everywhere: relative to its value. The others relative
    // to max(|x|, |y|): gelu's 1 + erf(x / sqrt 2) cancels for negative x, so its error
    // scales with x, not with the small result.
    float *mag = NULL;
    if (kind != ACTIVATION_SIGMOID) {
        mag = floats(n);
        for (size_t i = 0; i < n; i++) mag[i] = fmaxf(fabsf(x[i]), fabsf(want[i]));
    }
    compare("activation_forward", "y", fetch(dy, n), want, mag, n);
}

static void activation_backward_case(ActivationKind kind, float slope, size_t n, int accumulate) {
    snprintf(shape, sizeof shape, "%s slope=%g n=%zu accumulate=%d", activation_names[kind], slope,
             n, accumulate);
    Status st;
    status_clear(&st);
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    float *dx0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_x = dev_floats(x, n), *d_y = dev_floats(y, n), *d_dy = dev_floats(dy, n);
    float *d_dx = dev_floats(dx0, n);
    if (GPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = d_x, .y = d_y, .dy = d_dy, .dx = d_dx, .n = n,
                 .accumulate = accumulate}))
        return;
    float *want = copy_of(dx0, n);
    CPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = kind, .slope = slope,
             .dtype = DTYPE_F32, .x = x, .y = y, .dy = dy, .dx = want, .n = n,
             .accumulate = accumulate});
    // |f'| <= 1.13 for all five, and f' is computed from O(1) values: the error scales
    // with |dy| (plus what was there).
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fabsf(dy[i]) + (accumulate ? fabsf(dx0[i]) : 0.0f);
    compare("activation_backward", "dx", fetch(d_dx, n), want, mag, n);
}

static void test_activations(void) {
    static const size_t sizes[] = {1, 7, 1000, 65537};
    if (HAVE(activation_forward)) {
        for (int kind = 0; kind < ACTIVATION_COUNT; kind++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                activation_forward_case((ActivationKind)kind, 0.2f, sizes[s]);
                end_case();
            }
        activation_forward_case(ACTIVATION_LEAKY_RELU, 0.01f, 1001);
        end_case();
        activation_forward_case(ACTIVATION_RELU, 0.0f, BIG_N);
        end_case();
    }
    if (HAVE(activation_backward)) {
        for (int kind = 0; kind < ACTIVATION_COUNT; kind++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int acc = 0; acc <= 1; acc++) {
                    activation_backward_case((ActivationKind)kind, 0.2f, sizes[s], acc);
                    end_case();
                }
        activation_backward_case(ACTIVATION_LEAKY_RELU, 0.01f, 1001, 1);
        end_case();
    }
}

// ---- fused bias and activation -------------------------------------------------------------

// Every activation the fused ops take, and none (bias only): cuBLASLt and cuDNN fuse some,
// the rest take the unfused path inside the op; each is compared with the CPU's composition.
static const FusedActivation fused_activations[] = {
    {0, ACTIVATION_RELU, 0.0f},         {1, ACTIVATION_RELU, 0.0f},
    {1, ACTIVATION_LEAKY_RELU, 0.2f},   {1, ACTIVATION_SIGMOID, 0.0f},
    {1, ACTIVATION_TANH, 0.0f},         {1, ACTIVATION_GELU, 0.0f},
};
enum { FUSED_ACTIVATIONS = sizeof fused_activations / sizeof fused_activations[0] };

static const char *fused_name(const FusedActivation *act) {
    return act->apply ? activation_names[act->kind] : "none";
}

// The error of an activated sum: every activation here has |f'| <= 1.13, so an error in
// the sum passes through at most that large, and f's own rounding is relative to |f|. So
// the magnitude is the larger of the sum's (the CPU op on |inputs|, no activation) and the
// result's.
static float *fused_magnitude(const float *sum_magnitude, const float *want, size_t n) {
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fmaxf(sum_magnitude[i], fabsf(want[i]));
    return mag;
}

// host's n floats on the device, `offset` floats into a buffer: offset 1 starts 4 bytes past
// an allocation's alignment, a pointer no fused epilogue may be handed as it is.
static float *dev_floats_at(const float *host, size_t n, int offset) {
    float *staged = zeros(n + (size_t)offset);
    memcpy(staged + offset, host, n * sizeof *host);
    return dev_floats(staged, n + (size_t)offset) + offset;
}

static void gemm_bias_activation_case(int ta, int tb, int m, int n, int k, float beta, int pad,
                                      int with_bias, const FusedActivation *act, int offset) {
    snprintf(shape, sizeof shape, "ta=%d tb=%d m=%d n=%d k=%d beta=%g ld+%d bias=%d act=%s%s", ta,
             tb, m, n, k, beta, pad, with_bias, fused_name(act),
             offset ? " (every pointer 4 bytes past 256-byte alignment)" : "");
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)m * ldc;
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    float *bias = uniform((size_t)n, -1.0f, 1.0f);
    poison_padding(a, a_rows, a_cols, lda);
    poison_padding(bm, b_rows, b_cols, ldb);
    float *c0 = beta == 0.0f ? poisoned(nc) : uniform(nc, -1.0f, 1.0f);
    if (beta != 0.0f)
        for (size_t i = 0; i < nc; i++)
            if ((int)(i % (size_t)ldc) >= n) c0[i] = 1234.5f;
    float *da = dev_floats_at(a, na, offset), *db = dev_floats_at(bm, nb, offset);
    float *dc = dev_floats_at(c0, nc, offset);
    float *dbias = with_bias ? dev_floats_at(bias, (size_t)n, offset) : NULL;
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k, .lda = lda,
                     .ldb = ldb, .ldc = ldc, .alpha = 1.0f, .beta = beta};
    if (GPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = da, .bm = db,
                 .bias = dbias, .c = dc}, act)) return;
    float *got = fetch(dc, nc), *want = copy_of(c0, nc);
    CPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = a, .bm = bm,
             .bias = with_bias ? bias : NULL, .c = want}, act);
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.beta = fabsf(beta);
    FusedActivation none = {0};
    CPU_CALL(gemm_bias_activation, &magnitude, &(GemmBiasActivationTensors){.a = absolute(a, na),
             .bm = absolute(bm, nb), .bias = with_bias ? absolute(bias, (size_t)n) : NULL, .c = cmag
             }, &none);
    float *want_packed = pack(want, m, n, ldc, 0);
    compare("gemm_bias_activation", "C", pack(got, m, n, ldc, 0), want_packed,
            fused_magnitude(pack(cmag, m, n, ldc, 0), want_packed, (size_t)m * n), (size_t)m * n);
    if (pad)
        compare_exact("gemm_bias_activation", "C padding columns", pack(got, m, n, ldc, 1),
                      pack(c0, m, n, ldc, 1), (size_t)m * pad, 0, 0);
}

static void test_gemm_bias_activation(void) {
    REQUIRE(gemm_bias_activation);
    // Odd sizes, batch 1, and the dense layers of mlp and lenet (x W^T: ta=0, tb=1); mlp's
    // last layer at batch 128 takes the bias epilogue with no activation.
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 17, 9}, {128, 256, 784}, {1024, 10, 256},
        {1024, 256, 3136}, {129, 257, 1025}, {128, 10, 128},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int a = 0; a < FUSED_ACTIVATIONS; a++)
            for (int with_bias = 0; with_bias <= 1; with_bias++) {
                gemm_bias_activation_case(0, 1, shapes[s][0], shapes[s][1], shapes[s][2], 0.0f, 0,
                                          with_bias, &fused_activations[a], 0);
                end_case();
            }
    // Operands and bias off the 256-byte alignment cuBLASLt's heuristic assumes: the op
    // must run its unfused path (a misaligned bias in a fused epilogue can fault), and
    // still match.
    for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
        gemm_bias_activation_case(0, 1, 33, 65, 17, 0.0f, 0, 1, &fused_activations[a], 1);
        end_case();
    }
    // The other transposes, beta and padded leading dimensions, on the smaller shapes.
    for (size_t s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++)
            for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
                gemm_bias_activation_case(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                                          0.5f, 3, 1, &fused_activations[a], 0);
                end_case();
            }
}

// dx = dy * f'(y) and the column sums of dx. y comes from the CPU's forward of inputs with
// exact zeros (relu's kink). dx is relative to |dy| (|f'| <= 1 for these four); the bias
// gradient to the sum of |dx| plus what beta keeps, as sum_rows' case.
static void activation_bias_backward_case(const FusedActivation *act, int rows, int cols,
                                          float beta, int with_bias) {
    snprintf(shape, sizeof shape, "%s rows=%d cols=%d beta=%g bias=%d", fused_name(act), rows,
             cols, beta, with_bias);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    float *db0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    float *d_y = dev_floats(y, n), *d_dy = dev_floats(dy, n), *d_dx = dev_poison_floats(n);
    float *d_db = with_bias ? dev_floats(db0, (size_t)cols) : NULL;
    if (GPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = DTYPE_F32, .y = d_y, .dy = d_dy, .dx = d_dx, .dbias = d_db, .rows = rows,
                 .cols = cols, .beta = beta})) return;
    float *want_dx = poisoned(n), *want_db = copy_of(db0, (size_t)cols);
    CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){.dtype = DTYPE_F32,
             .y = y, .dy = dy, .dx = want_dx, .dbias = with_bias ? want_db : NULL, .rows = rows,
             .cols = cols, .beta = beta});
    float *got_dx = fetch(d_dx, n);
    compare("activation_bias_backward", "dx", got_dx, want_dx, absolute(dy, n), n);
    // The op promises the unfused GPU ops' bits (activation_backward from y, then sum_rows),
    // so that a dense layer trains the same fused or not: check it exactly.
    float *u_dx = dev_poison_floats(n);
    if (GPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = d_y, .y = d_y, .dy = d_dy,
                 .dx = u_dx, .n = n, .accumulate = 0}))
        return;
    compare_exact("activation_bias_backward", "dx vs activation_backward on the GPU", got_dx,
                  fetch(u_dx, n), n, 0, 0);
    if (!with_bias) return;
    float *got_db = fetch(d_db, (size_t)cols);
    float *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(db0, (size_t)cols);
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(want_dx, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("activation_bias_backward", "dbias", got_db, want_db, mag, (size_t)cols);
    float *u_db = dev_floats(db0, (size_t)cols);
    if (GPU_CALL(sum_rows, &(SumRowsArgs){.out = u_db, .x = u_dx, .x_dtype = DTYPE_F32,
                 .rows = rows, .cols = cols, .beta = beta})) return;
    compare_exact("activation_bias_backward", "dbias vs sum_rows on the GPU", got_db,
                  fetch(u_db, (size_t)cols), (size_t)cols, 0, 0);
}

static void test_activation_bias_backward(void) {
    REQUIRE(activation_bias_backward);
    // Odd shapes, one row or column, more columns than one block's tile, the dense layers
    // of mlp and lenet at batch 1024, and rows split into two chunks, one row short.
    static const int shapes[][2] = {{1, 1}, {3, 5}, {1, 1000}, {1000, 1}, {129, 257},
                                    {1024, 256}, {1024, 128}, {60000, 3}, {257, 33}};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    for (int a = 1; a < FUSED_ACTIVATIONS; a++) {
        if (fused_activations[a].kind == ACTIVATION_GELU) continue;  // not from its output
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t k = 0; k < sizeof betas / sizeof betas[0]; k++) {
                activation_bias_backward_case(&fused_activations[a], shapes[s][0], shapes[s][1],
                                              betas[k], 1);
                end_case();
            }
        activation_bias_backward_case(&fused_activations[a], 37, 41, 0.0f, 0);
        end_case();
    }
}

static void dropout_forward_case(size_t n, float rate, uint64_t seed) {
    snprintf(shape, sizeof shape, "n=%zu rate=%g seed=%llu", n, rate, (unsigned long long)seed);
    Status st;
    status_clear(&st);
    float *x = uniform(n, -2.0f, 2.0f);
    float *d_x = dev_floats(x, n), *d_y = dev_poison_floats(n), *d_mask = dev_poison_floats(n);
    if (GPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = d_x, .y = d_y,
                 .mask = d_mask, .n = n, .rate = rate, .seed = seed})) return;
    float *want_y = poisoned(n), *want_mask = poisoned(n);
    CPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x, .y = want_y,
             .mask = want_mask, .n = n, .rate = rate, .seed = seed});
    compare_exact("dropout_forward", "mask", fetch(d_mask, n), want_mask, n, 0, 0);
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fabsf(x[i]) / (1.0f - rate);
    compare("dropout_forward", "y", fetch(d_y, n), want_y, mag, n);
}

static void dropout_backward_case(size_t n, float rate, uint64_t seed, int accumulate) {
    snprintf(shape, sizeof shape, "n=%zu rate=%g seed=%llu accumulate=%d", n, rate,
             (unsigned long long)seed, accumulate);
    Status st;
    status_clear(&st);
    float *x = uniform(n, -2.0f, 2.0f), *y = floats(n), *mask = floats(n);
    if (CPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x, .y = y,
                 .mask = mask, .n = n, .rate = rate, .seed = seed})) return;
    float *dy = uniform(n, -1.0f, 1.0f);
    float *dx0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_dy = dev_floats(dy, n), *d_mask = dev_floats(mask, n), *d_dx = dev_floats(dx0, n);
    if (GPU_CALL(dropout_backward, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = d_dy,
                 .mask = d_mask, .dx = d_dx, .n = n, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, n);
    CPU_CALL(dropout_backward, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = dy, .mask = mask,
             .dx = want, .n = n, .accumulate = accumulate});
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++)
        mag[i] = fabsf(dy[i] * mask[i]) + (accumulate ? fabsf(dx0[i]) : 0.0f);
    compare("dropout_backward", "dx", fetch(d_dx, n), want, mag, n);
}

static void test_dropout(void) {
    static const size_t sizes[] = {1, 1001, 65537};
    static const float rates[] = {0.0f, 0.1f, 0.5f, 0.9f};
    static const uint64_t seeds[] = {0, 1, 0xDEADBEEFCAFEF00Dull};
    if (HAVE(dropout_forward)) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
                for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
                    dropout_forward_case(sizes[s], rates[r], seeds[k]);
                    end_case();
                }
        dropout_forward_case(BIG_N, 0.5f, 0x9E3779B97F4A7C15ull);
        end_case();
    }
    if (HAVE(dropout_backward)) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int acc = 0; acc <= 1; acc++) {
                dropout_backward_case(sizes[s], 0.5f, 7, acc);
                end_case();
                dropout_backward_case(sizes[s], 0.1f, 0xDEADBEEFCAFEF00Dull, acc);
                end_case();
            }
    }
}

// ---- losses --------------------------------------------------------------------------------

// rows x classes scores, offset + U(-5, 5), rerolled until each row has one largest value,
// so argmax (row_stats' second column) is well defined on any backend.
static float *scores(int rows, int classes, float offset) {
    float *z = floats((size_t)rows * classes);
    for (int r = 0; r < rows; r++) {
        float *row = z + (size_t)r * classes;
        for (;;) {
            int best = 0, tied = 0;
            for (int c = 0; c < classes; c++) row[c] = offset - 5.0f + 10.0f * rng_uniform(&rng);
            for (int c = 1; c < classes; c++) {
                if (row[c] > row[best]) best = c, tied = 0;
                else if (row[c] == row[best]) tied = 1;
            }
            if (!tied) break;
        }
    }
    return z;
}

static int32_t *labels_for(int rows, int classes) {
    int32_t *labels = host_alloc((size_t)rows * sizeof *labels);
    for (int r = 0; r < rows; r++) labels[r] = (int32_t)rng_below(&rng, (uint32_t)classes);
    return labels;
}

// A loss op's [rows][2] row_stats as its two columns: each row's loss, and whether it was
// right.
static void split_row_stats(const float *row_stats, int rows, float **loss, float **correct) {
    *loss = floats((size_t)rows);
    *correct = floats((size_t)rows);
    for (int r = 0; r < rows; r++) {
        (*loss)[r] = row_stats[2 * (size_t)r];
        (*correct)[r] = row_stats[2 * (size_t)r + 1];
    }
}

static const int loss_shapes[][2] = {{1, 1}, {1, 10}, {7, 3}, {128, 10}, {33, 1000}, {5, 4099},
                                     {1024, 10}};
enum { LOSS_SHAPES = sizeof loss_shapes / sizeof loss_shapes[0] };

// with_gradient: the forward training runs, which also writes the logits' gradient; it
// must be the CPU's, and bit for bit what the GPU's own backward makes from its probs.
static void softmax_forward_case(int rows, int classes, float offset, int with_gradient) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d logits %+g + U(-5,5) gradient=%d", rows,
             classes, offset, with_gradient);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float scale = 1.0f / (float)rows;
    float *z = scores(rows, classes, offset);
    int32_t *labels = labels_for(rows, classes);
    float *d_z = dev_floats(z, n), *d_probs = dev_poison_floats(n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    float *d_stats = dev_poison_floats(2 * (size_t)rows);
    float *d_grad = with_gradient ? dev_poison_floats(n) : NULL;
    if (GPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = d_z,
                 .labels = d_labels, .rows = rows, .classes = classes, .probs = d_probs,
                 .row_stats = d_stats, .dlogits = d_grad, .scale = scale}))
        return;
    float *probs = poisoned(n), *row_stats = poisoned(2 * (size_t)rows), *loss, *correct;
    float *grad = with_gradient ? poisoned(n) : NULL;
    CPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = z,
             .labels = labels, .rows = rows, .classes = classes, .probs = probs,
             .row_stats = row_stats, .dlogits = grad, .scale = scale});
    split_row_stats(row_stats, rows, &loss, &correct);
    float *gpu_loss, *gpu_correct;
    split_row_stats(fetch(d_stats, 2 * (size_t)rows), rows, &gpu_loss, &gpu_correct);
    // Probabilities relative to themselves (exp and a division, no cancellation). The loss
    // is log(sum) + (max - z[label]), two terms >= 0, so relative too, except that a float
    // log(sum) near log(1) is off by ~6e-8 absolute: hence the 0.01.
    float *loss_mag = floats((size_t)rows);
    for (int r = 0; r < rows; r++) loss_mag[r] = fabsf(loss[r]) + 0.01f;
    compare("softmax_cross_entropy_forward", "probs", fetch(d_probs, n), probs, NULL, n);
    compare("softmax_cross_entropy_forward", "row_stats (loss)", gpu_loss, loss, loss_mag,
            (size_t)rows);
    compare_exact("softmax_cross_entropy_forward", "row_stats (correct)", gpu_correct, correct,
                  (size_t)rows, 0, 0);
    if (!with_gradient) return;
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++)
        mag[i] = (probs[i] + (labels[i / (size_t)classes] == (int32_t)(i % (size_t)classes))) * scale;
    float *gpu_grad = fetch(d_grad, n);
    compare("softmax_cross_entropy_forward", "dlogits", gpu_grad, grad, mag, n);
    float *d_backward = dev_poison_floats(n);
    if (GPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){
                 .probs = d_probs, .labels = d_labels, .rows = rows, .classes = classes,
                 .scale = scale, .dlogits = d_backward, .accumulate = 0}))
        return;
    compare_exact("softmax_cross_entropy_forward", "dlogits (= the GPU's backward)", gpu_grad,
                  fetch(d_backward, n), n, 0, 0);
}

static void softmax_backward_case(int rows, int classes, int accumulate) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d accumulate=%d", rows, classes, accumulate);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *z = scores(rows, classes, 0.0f), *probs = floats(n);
    float *row_stats = floats(2 * (size_t)rows);
    int32_t *labels = labels_for(rows, classes);
    if (CPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = z,
                 .labels = labels, .rows = rows, .classes = classes, .probs = probs,
                 .row_stats = row_stats, .dlogits = NULL, .scale = 0.0f}))
        return;
    float scale = 1.0f / (float)rows;
    float *d0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_probs = dev_floats(probs, n), *d_d = dev_floats(d0, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    if (GPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){
                 .probs = d_probs, .labels = d_labels, .rows = rows, .classes = classes,
                 .scale = scale, .dlogits = d_d, .accumulate = accumulate}))
        return;
    float *want = copy_of(d0, n), *mag = floats(n);
    CPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){.probs = probs,
             .labels = labels, .rows = rows, .classes = classes, .scale = scale, .dlogits = want,
             .accumulate = accumulate});
    for (size_t i = 0; i < n; i++)
        mag[i] = (probs[i] + (labels[i / (size_t)classes] == (int32_t)(i % (size_t)classes))) * scale +
                 (accumulate ? fabsf(d0[i]) : 0.0f);
    compare("softmax_cross_entropy_backward", "dlogits", fetch(d_d, n), want, mag, n);
}

static void mse_forward_case(int rows, int classes) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d", rows, classes);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *y = scores(rows, classes, 0.0f);
    for (size_t i = 0; i < n; i++) y[i] *= 0.3f;  // around the one-hot targets
    int32_t *labels = labels_for(rows, classes);
    float *d_y = dev_floats(y, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    float *d_stats = dev_poison_floats(2 * (size_t)rows);
    if (GPU_CALL(mse_forward, &(MseForwardArgs){.predictions = d_y, .labels = d_labels,
                 .rows = rows, .classes = classes, .row_stats = d_stats})) return;
    float *row_stats = poisoned(2 * (size_t)rows), *loss, *correct, *gpu_loss, *gpu_correct;
    CPU_CALL(mse_forward, &(MseForwardArgs){.predictions = y, .labels = labels, .rows = rows,
             .classes = classes, .row_stats = row_stats});
    split_row_stats(row_stats, rows, &loss, &correct);
    split_row_stats(fetch(d_stats, 2 * (size_t)rows), rows, &gpu_loss, &gpu_correct);
    // A sum of squares: every term >= 0, so relative to the result.
    compare("mse_forward", "row_stats (loss)", gpu_loss, loss, NULL, (size_t)rows);
    compare_exact("mse_forward", "row_stats (correct)", gpu_correct, correct, (size_t)rows, 0, 0);
}

static void mse_backward_case(int rows, int classes, int accumulate) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d accumulate=%d", rows, classes, accumulate);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *y = uniform(n, -1.5f, 1.5f);
    int32_t *labels = labels_for(rows, classes);
    float scale = 1.0f / (float)rows;
    float *d0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_y = dev_floats(y, n), *d_d = dev_floats(d0, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    if (GPU_CALL(mse_backward, &(MseBackwardArgs){.predictions = d_y, .labels = d_labels,
                 .rows = rows, .classes = classes, .scale = scale, .dpredictions = d_d,
                 .accumulate = accumulate})) return;
    float *want = copy_of(d0, n), *mag = floats(n);
    CPU_CALL(mse_backward, &(MseBackwardArgs){.predictions = y, .labels = labels, .rows = rows,
             .classes = classes, .scale = scale, .dpredictions = want, .accumulate = accumulate});
    for (size_t i = 0; i < n; i++)
        mag[i] = 2.0f * (fabsf(y[i]) + 1.0f) * scale + (accumulate ? fabsf(d0[i]) : 0.0f);
    compare("mse_backward", "dpredictions", fetch(d_d, n), want, mag, n);
}

static void test_losses(void) {
    if (HAVE(softmax_cross_entropy_forward)) {
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int with_gradient = 0; with_gradient <= 1; with_gradient++) {
                softmax_forward_case(loss_shapes[s][0], loss_shapes[s][1], 0.0f, with_gradient);
                end_case();
            }
        // Far from 0, where exp() without subtracting the row's max overflows (+100) or
        // underflows to a zero sum (-100).
        for (int with_gradient = 0; with_gradient <= 1; with_gradient++) {
            softmax_forward_case(64, 10, 100.0f, with_gradient);
            end_case();
            softmax_forward_case(64, 10, -100.0f, with_gradient);
            end_case();
        }
    }
    if (HAVE(softmax_cross_entropy_backward))
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                softmax_backward_case(loss_shapes[s][0], loss_shapes[s][1], acc);
                end_case();
            }
    if (HAVE(mse_forward))
        for (int s = 0; s < LOSS_SHAPES; s++) {
            mse_forward_case(loss_shapes[s][0], loss_shapes[s][1]);
            end_case();
        }
    if (HAVE(mse_backward))
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                mse_backward_case(loss_shapes[s][0], loss_shapes[s][1], acc);
                end_case();
            }
}

// ---- batch normalisation -------------------------------------------------------------------

typedef struct BnShape {
    int n, channels, spatial;
} BnShape;

// n * spatial == 1 (one value per channel: running statistics stay), dense layers
// (spatial 1), conv layers (spatial H*W), a large batch and a large image. Then the
// many-blocks-per-channel kernels (more than 16 384 values per channel, see
// cuda_channel_reduce.h): cnn-bn's two batchnorms at batch 1024 (49 and 13 blocks per
// channel), one sample of one channel (2 blocks), one channel whose 8 chunks end inside a
// sample's run, chunks not a multiple of the block (3 of 11 000), and spatial 1 (4 blocks).
// Then the channels-last rows kernels (cuda_batchnorm_rows.cu: spatial 1, at least 2^18
// values): cnn-bn's two batchnorms in NHWC at batch 128 (rows = n * h * w; 196 and 98
// chunks), five channels (51 threads each, one idle), 301 channels (two tiles of 151, the
// second with an idle thread), two channels (128 threads each), and 4000 channels over 16
// tiles, whose chunks the scratch cuts from 22 to 15.
static const BnShape bn_shapes[] = {
    {1, 1, 1}, {1, 3, 1}, {2, 3, 1}, {7, 1, 3}, {4, 5, 49}, {1, 8, 15},
    {128, 16, 1}, {3, 2, 1000}, {16, 32, 196},
    {1024, 32, 784}, {1024, 64, 196}, {1, 1, 16385}, {3, 1, 40000}, {33, 5, 1000},
    {50000, 3, 1},
    {100352, 32, 1}, {25088, 64, 1}, {70000, 5, 1}, {1500, 301, 1}, {131072, 2, 1},
    {1400, 4000, 1},
};
enum { BN_SHAPES = sizeof bn_shapes / sizeof bn_shapes[0] };

// Activations whose channels differ in mean (up to +-3) and spread (0.5 to 2), so a
// statistic taken over the wrong values shows.
static float *bn_input(const BnShape *s) {
    float *offset = uniform((size_t)s->channels, -3.0f, 3.0f);
    float *spread = uniform((size_t)s->channels, 0.5f, 2.0f);
    size_t count = (size_t)s->n * s->channels * s->spatial;
    float *x = floats(count);
    for (size_t i = 0; i < count; i++) {
        size_t c = i / (size_t)s->spatial % (size_t)s->channels;
        x[i] = offset[c] + spread[c] * (2.0f * rng_uniform(&rng) - 1.0f);
    }
    return x;
}

static size_t bn_channel(const BnShape *s, size_t i) {
    return i / (size_t)s->spatial % (size_t)s->channels;
}

// |gamma| (|xhat| + 1) + |beta|: what y = gamma * xhat + beta's error scales with, where
// xhat itself is off by ~1e-7 (and by ~1e-7 of one standard deviation from the mean).
static float *bn_output_magnitude(const BnShape *s, const float *x, const float *gamma,
                                  const float *beta, const float *mean, const float *invstd) {
    size_t count = (size_t)s->n * s->channels * s->spatial;
    float *mag = floats(count);
    for (size_t i = 0; i < count; i++) {
        size_t c = bn_channel(s, i);
        mag[i] = fabsf(gamma[c]) * (fabsf((x[i] - mean[c]) * invstd[c]) + 1.0f) + fabsf(beta[c]);
    }
    return mag;
}

static void batchnorm_training_case(const BnShape *s) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d", s->n, s->channels, s->spatial);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float momentum = 0.1f, eps = 1e-5f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm0 = uniform(c, -1.0f, 1.0f), *rv0 = uniform(c, 0.5f, 2.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm0, c), *d_rv = dev_floats(rv0, c);
    float *d_mean = dev_poison_floats(c), *d_invstd = dev_poison_floats(c);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = momentum, .eps = eps};
    if (GPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    float *y = poisoned(count), *rm = copy_of(rm0, c), *rv = copy_of(rv0, c);
    float *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    // The mean's error scales with the channel's spread; the running mean's with what it
    // is made of; the variance and 1/std are sums of squares, relative to themselves.
    float *mean_mag = floats(c), *rm_mag = floats(c);
    for (size_t k = 0; k < c; k++) {
        mean_mag[k] = fabsf(mean[k]) + 1.0f / invstd[k];
        rm_mag[k] = (1.0f - momentum) * fabsf(rm0[k]) + momentum * mean_mag[k];
    }
    compare("batchnorm_forward_training", "y", fetch(d_y, count), y,
            bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    compare("batchnorm_forward_training", "save_mean", fetch(d_mean, c), mean, mean_mag, c);
    compare("batchnorm_forward_training", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    compare("batchnorm_forward_training", "running_mean", fetch(d_rm, c), rm, rm_mag, c);
    compare("batchnorm_forward_training", "running_var", fetch(d_rv, c), rv, NULL, c);
}

static void batchnorm_inference_case(const BnShape *s, int save) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d save=%s", s->n, s->channels,
             s->spatial, save ? "yes" : "NULL");
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float eps = 1e-5f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm, c), *d_rv = dev_floats(rv, c);
    float *d_mean = save ? dev_poison_floats(c) : NULL, *d_invstd = save ? dev_poison_floats(c) : NULL;
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial, .eps = eps};
    if (GPU_CALL(batchnorm_forward_inference, &args, &(BatchnormForwardTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    float *y = poisoned(count), *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_forward_inference, &args, &(BatchnormForwardTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    compare("batchnorm_forward_inference", "y", fetch(d_y, count), y,
            bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    if (save) {
        compare_exact("batchnorm_forward_inference", "save_mean (= running_mean)", fetch(d_mean, c),
                      mean, c, 0, 0);
        compare("batchnorm_forward_inference", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    }
    compare_exact("batchnorm_forward_inference", "running_mean (read only)", fetch(d_rm, c), rm,
                  c, 0, 0);
    compare_exact("batchnorm_forward_inference", "running_var (read only)", fetch(d_rv, c), rv, c, 0, 0);
}

static void batchnorm_backward_case(const BnShape *s, int batch_statistics, int with_dx,
                                    int accumulate_dx, int accumulate_params) {
    snprintf(shape, sizeof shape,
             "n=%d channels=%d spatial=%d batch_statistics=%d dx=%s accumulate_dx=%d "
             "accumulate_params=%d", s->n, s->channels, s->spatial, batch_statistics,
             with_dx ? "yes" : "NULL", accumulate_dx, accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f);
    float *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    // The saved statistics come from the CPU's forward, so only backward is compared.
    float *mean = floats(c), *invstd = floats(c), *scratch = floats(count);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = batch_statistics,
                          .accumulate_dx = accumulate_dx, .accumulate_params = accumulate_params};
    int rc = batch_statistics
                 ? CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){
                            .x = x, .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm,
                            .running_var = rv, .save_mean = mean, .save_invstd = invstd})
                 : CPU_CALL(batchnorm_forward_inference, &args, &(BatchnormForwardTensors){
                            .x = x, .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm,
                            .running_var = rv, .save_mean = mean, .save_invstd = invstd});
    if (rc) return;
    float *dx0 = accumulate_dx ? uniform(count, -1.0f, 1.0f) : poisoned(count);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count), *d_gamma = dev_floats(gamma, c);
    float *d_mean = dev_floats(mean, c), *d_invstd = dev_floats(invstd, c);
    float *d_dx = with_dx ? dev_floats(dx0, count) : NULL;
    float *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    if (GPU_CALL(batchnorm_backward, &args, &(BatchnormBackwardTensors){.x = d_x, .dy = d_dy,
                 .gamma = d_gamma, .save_mean = d_mean, .save_invstd = d_invstd, .dx = d_dx,
                 .dgamma = d_dg, .dbeta = d_db}))
        return;
    float *dx = copy_of(dx0, count), *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_backward, &args, &(BatchnormBackwardTensors){.x = x, .dy = dy,
                 .gamma = gamma, .save_mean = mean, .save_invstd = invstd,
                 .dx = with_dx ? dx : NULL, .dgamma = dg, .dbeta = db}))
        return;
    // Per channel: sum |dy| and sum |dy * xhat| (what dbeta's and dgamma's errors scale
    // with); dx's terms are dy, mean(dy) and xhat * mean(dy * xhat), times gamma * invstd.
    double *abs_dy = host_alloc(c * sizeof(double)), *abs_dy_xhat = host_alloc(c * sizeof(double));
    memset(abs_dy, 0, c * sizeof(double));
    memset(abs_dy_xhat, 0, c * sizeof(double));
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        abs_dy[k] += fabs((double)dy[i]);
        abs_dy_xhat[k] += fabs((double)dy[i] * ((x[i] - mean[k]) * invstd[k]));
    }
    float *dg_mag = floats(c), *db_mag = floats(c), *dx_mag = floats(count);
    for (size_t k = 0; k < c; k++) {
        db_mag[k] = (float)abs_dy[k] + (accumulate_params ? fabsf(db0[k]) : 0.0f);
        dg_mag[k] = (float)abs_dy_xhat[k] + (accumulate_params ? fabsf(dg0[k]) : 0.0f);
    }
    double m = (double)s->n * s->spatial;
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        double xhat = fabs((double)(x[i] - mean[k]) * invstd[k]);
        double terms = fabs(dy[i]);
        if (batch_statistics) terms += abs_dy[k] / m + xhat * abs_dy_xhat[k] / m;
        dx_mag[i] = (float)(fabs((double)gamma[k] * invstd[k]) * terms) +
                    (accumulate_dx ? fabsf(dx0[i]) : 0.0f);
    }
    compare("batchnorm_backward", "dbeta", fetch(d_db, c), db, db_mag, c);
    compare("batchnorm_backward", "dgamma", fetch(d_dg, c), dg, dg_mag, c);
    if (with_dx) compare("batchnorm_backward", "dx", fetch(d_dx, count), dx, dx_mag, count);
}

// ---- --sync-batchnorm's split ops: each op fed the same inputs on both backends ----

static double *dev_doubles_poisoned(size_t n) { return dev_poisoned(n * sizeof(double)); }

static double *fetch_doubles(const double *d, size_t n) {
    double *h = host_alloc(n * sizeof *h);
    memset(h, POISON_BYTE, n * sizeof *h);
    download(h, d, n * sizeof *h);
    return h;
}

// Two per-channel sums and the count, as floats for compare(): the sums against the sums
// of magnitudes in `mag` (2 * channels), the count exactly.
static void compare_channel_sums(const char *op, const double *got, const double *want,
                                 const float *mag, size_t c) {
    float *g = floats(2 * c), *w = floats(2 * c);
    for (size_t k = 0; k < 2 * c; k++) {
        g[k] = (float)got[k];
        w[k] = (float)want[k];
    }
    compare(op, "sums", g, w, mag, 2 * c);
    float gc = (float)got[2 * c], wc = (float)want[2 * c];
    compare_exact(op, "count", &gc, &wc, 1, 0, 0);
}

// batchnorm_channel_sums, then batchnorm_forward_with_sums from each backend's own sums
// (one rank's chain; the sum over ranks in between is NCCL's, not an op). `empty`: the
// second op on a share of no samples (n = 0) with the whole batch's sums, where only the
// saved and running statistics are written.
static void batchnorm_sync_forward_case(const BnShape *s, int empty) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d%s", s->n, s->channels, s->spatial,
             empty ? " (forward_with_sums on an empty share)" : "");
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    const float momentum = 0.1f;
    float *x = bn_input(s), *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm0 = uniform(c, -1.0f, 1.0f), *rv0 = uniform(c, 0.5f, 2.0f);
    float *d_x = dev_floats(x, count), *d_y = dev_poison_floats(count);
    float *d_gamma = dev_floats(gamma, c), *d_beta = dev_floats(beta, c);
    float *d_rm = dev_floats(rm0, c), *d_rv = dev_floats(rv0, c);
    float *d_mean = dev_poison_floats(c), *d_invstd = dev_poison_floats(c);
    double *d_sums = dev_doubles_poisoned(2 * c + 1);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = momentum, .eps = 1e-5f};
    BatchnormArgs share = args;
    share.n = empty ? 0 : s->n;
    if (GPU_CALL(batchnorm_channel_sums, &args, d_x, d_sums) ||
        GPU_CALL(batchnorm_forward_with_sums, &share, &(BatchnormForwardWithSumsTensors){.x = d_x,
                 .y = d_y, .gamma = d_gamma, .beta = d_beta, .sums = d_sums, .running_mean = d_rm,
                 .running_var = d_rv, .save_mean = d_mean, .save_invstd = d_invstd}))
        return;
    double *sums = host_alloc((2 * c + 1) * sizeof *sums);
    float *y = poisoned(count), *rm = copy_of(rm0, c), *rv = copy_of(rv0, c);
    float *mean = poisoned(c), *invstd = poisoned(c);
    if (CPU_CALL(batchnorm_channel_sums, &args, x, sums) ||
        CPU_CALL(batchnorm_forward_with_sums, &share, &(BatchnormForwardWithSumsTensors){.x = x,
                 .y = y, .gamma = gamma, .beta = beta, .sums = sums, .running_mean = rm,
                 .running_var = rv, .save_mean = mean, .save_invstd = invstd}))
        return;
    float *sums_mag = floats(2 * c), *mean_mag = floats(c), *rm_mag = floats(c);
    memset(sums_mag, 0, 2 * c * sizeof *sums_mag);
    for (size_t i = 0; i < count; i++) {
        sums_mag[bn_channel(s, i)] += fabsf(x[i]);
        sums_mag[c + bn_channel(s, i)] += x[i] * x[i];
    }
    for (size_t k = 0; k < c; k++) {
        mean_mag[k] = fabsf(mean[k]) + 1.0f / invstd[k];
        rm_mag[k] = (1.0f - momentum) * fabsf(rm0[k]) + momentum * mean_mag[k];
    }
    compare_channel_sums("batchnorm_channel_sums", fetch_doubles(d_sums, 2 * c + 1), sums,
                         sums_mag, c);
    if (!empty)
        compare("batchnorm_forward_with_sums", "y", fetch(d_y, count), y,
                bn_output_magnitude(s, x, gamma, beta, mean, invstd), count);
    else
        compare_exact("batchnorm_forward_with_sums", "y (untouched)", fetch(d_y, count),
                      poisoned(count), count, 0, 0);
    compare("batchnorm_forward_with_sums", "save_mean", fetch(d_mean, c), mean, mean_mag, c);
    // 1/std from sum x^2 / m - mean^2: relative to itself, as the two-pass one.
    compare("batchnorm_forward_with_sums", "save_invstd", fetch(d_invstd, c), invstd, NULL, c);
    compare("batchnorm_forward_with_sums", "running_mean", fetch(d_rm, c), rm, rm_mag, c);
    compare("batchnorm_forward_with_sums", "running_var", fetch(d_rv, c), rv, NULL, c);
}

// batchnorm_backward_channel_sums (with dgamma and dbeta), then
// batchnorm_backward_data_with_sums from each backend's own sums.
static void batchnorm_sync_backward_case(const BnShape *s, int accumulate_dx,
                                         int accumulate_params) {
    snprintf(shape, sizeof shape, "n=%d channels=%d spatial=%d accumulate_dx=%d "
             "accumulate_params=%d", s->n, s->channels, s->spatial, accumulate_dx,
             accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f);
    float *gamma = uniform(c, -1.5f, 1.5f), *beta = uniform(c, -1.0f, 1.0f);
    float *rm = uniform(c, -3.0f, 3.0f), *rv = uniform(c, 0.25f, 4.0f);
    float *mean = floats(c), *invstd = floats(c), *scratch = floats(count);
    BatchnormArgs args = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                          .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = 1,
                          .accumulate_dx = accumulate_dx, .accumulate_params = accumulate_params};
    if (CPU_CALL(batchnorm_forward_training, &args, &(BatchnormForwardTensors){.x = x,
                 .y = scratch, .gamma = gamma, .beta = beta, .running_mean = rm, .running_var = rv,
                 .save_mean = mean, .save_invstd = invstd}))
        return;
    float *dx0 = accumulate_dx ? uniform(count, -1.0f, 1.0f) : poisoned(count);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count), *d_gamma = dev_floats(gamma, c);
    float *d_mean = dev_floats(mean, c), *d_invstd = dev_floats(invstd, c);
    float *d_dx = dev_floats(dx0, count), *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    double *d_sums = dev_doubles_poisoned(2 * c + 1);
    if (GPU_CALL(batchnorm_backward_channel_sums, &args, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_sums, .dgamma = d_dg, .dbeta = d_db}) ||
        GPU_CALL(batchnorm_backward_data_with_sums, &args, &(BatchnormBackwardDataWithSumsTensors){
                 .x = d_x, .dy = d_dy, .gamma = d_gamma, .save_mean = d_mean,
                 .save_invstd = d_invstd, .sums = d_sums, .dx = d_dx}))
        return;
    double *sums = host_alloc((2 * c + 1) * sizeof *sums);
    float *dx = copy_of(dx0, count), *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_backward_channel_sums, &args, &(BatchnormBackwardChannelSumsTensors){
                 .x = x, .dy = dy, .save_mean = mean, .save_invstd = invstd, .sums = sums,
                 .dgamma = dg, .dbeta = db}) ||
        CPU_CALL(batchnorm_backward_data_with_sums, &args, &(BatchnormBackwardDataWithSumsTensors){
                 .x = x, .dy = dy, .gamma = gamma, .save_mean = mean, .save_invstd = invstd,
                 .sums = sums, .dx = dx}))
        return;
    // The magnitudes batchnorm_backward_case argues, per channel and per element.
    double *abs_dy = host_alloc(c * sizeof(double)), *abs_dy_xhat = host_alloc(c * sizeof(double));
    memset(abs_dy, 0, c * sizeof(double));
    memset(abs_dy_xhat, 0, c * sizeof(double));
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        abs_dy[k] += fabs((double)dy[i]);
        abs_dy_xhat[k] += fabs((double)dy[i] * ((x[i] - mean[k]) * invstd[k]));
    }
    float *sums_mag = floats(2 * c), *dg_mag = floats(c), *db_mag = floats(c);
    float *dx_mag = floats(count);
    for (size_t k = 0; k < c; k++) {
        sums_mag[k] = (float)abs_dy[k];
        sums_mag[c + k] = (float)abs_dy_xhat[k];
        db_mag[k] = (float)abs_dy[k] + (accumulate_params ? fabsf(db0[k]) : 0.0f);
        dg_mag[k] = (float)abs_dy_xhat[k] + (accumulate_params ? fabsf(dg0[k]) : 0.0f);
    }
    double m = (double)s->n * s->spatial;
    for (size_t i = 0; i < count; i++) {
        size_t k = bn_channel(s, i);
        double xhat = fabs((double)(x[i] - mean[k]) * invstd[k]);
        double terms = fabs(dy[i]) + abs_dy[k] / m + xhat * abs_dy_xhat[k] / m;
        dx_mag[i] = (float)(fabs((double)gamma[k] * invstd[k]) * terms) +
                    (accumulate_dx ? fabsf(dx0[i]) : 0.0f);
    }
    compare_channel_sums("batchnorm_backward_channel_sums", fetch_doubles(d_sums, 2 * c + 1), sums,
                         sums_mag, c);
    compare("batchnorm_backward_channel_sums", "dbeta", fetch(d_db, c), db, db_mag, c);
    compare("batchnorm_backward_channel_sums", "dgamma", fetch(d_dg, c), dg, dg_mag, c);
    compare("batchnorm_backward_data_with_sums", "dx", fetch(d_dx, count), dx, dx_mag, count);
}

// A rank with no samples in the step (n = 0): its forward and backward sums are zeros with
// a count of 0, dgamma and dbeta are zeros (or left as they were, accumulate_params), and
// backward_data_with_sums (given the whole batch's sums) leaves dx alone. All exact: the
// CPU writes the same zeros, and a launch of zero blocks would fail instead.
static void batchnorm_sync_empty_case(const BnShape *s, int accumulate_params) {
    snprintf(shape, sizeof shape, "n=0 (of %d) channels=%d spatial=%d accumulate_params=%d",
             s->n, s->channels, s->spatial, accumulate_params);
    Status st;
    status_clear(&st);
    size_t count = (size_t)s->n * s->channels * s->spatial, c = (size_t)s->channels;
    size_t words = 2 * (2 * c + 1);  // the sums as 32-bit words, for compare_exact
    float *x = bn_input(s), *dy = uniform(count, -1.0f, 1.0f), *gamma = uniform(c, -1.5f, 1.5f);
    float *mean = uniform(c, -1.0f, 1.0f), *invstd = uniform(c, 0.5f, 2.0f);
    float *dg0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    float *db0 = accumulate_params ? uniform(c, -1.0f, 1.0f) : poisoned(c);
    BatchnormArgs whole = {.n = s->n, .channels = s->channels, .spatial = s->spatial,
                           .momentum = 0.1f, .eps = 1e-5f, .batch_statistics = 1,
                           .accumulate_params = accumulate_params};
    BatchnormArgs empty = whole;
    empty.n = 0;
    float *d_x = dev_floats(x, count), *d_dy = dev_floats(dy, count);
    float *d_gamma = dev_floats(gamma, c), *d_mean = dev_floats(mean, c);
    float *d_invstd = dev_floats(invstd, c), *d_dg = dev_floats(dg0, c), *d_db = dev_floats(db0, c);
    float *d_dx = dev_poison_floats(count);
    double *d_forward = dev_doubles_poisoned(2 * c + 1), *d_backward = dev_doubles_poisoned(2 * c + 1);
    double *d_whole = dev_doubles_poisoned(2 * c + 1);
    if (GPU_CALL(batchnorm_channel_sums, &empty, d_x, d_forward) ||
        GPU_CALL(batchnorm_backward_channel_sums, &empty, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_backward, .dgamma = d_dg, .dbeta = d_db}) ||
        GPU_CALL(batchnorm_backward_channel_sums, &whole, &(BatchnormBackwardChannelSumsTensors){
                 .x = d_x, .dy = d_dy, .save_mean = d_mean, .save_invstd = d_invstd,
                 .sums = d_whole, .dgamma = dev_poison_floats(c), .dbeta = dev_poison_floats(c)}) ||
        GPU_CALL(batchnorm_backward_data_with_sums, &empty, &(BatchnormBackwardDataWithSumsTensors){
                 .x = d_x, .dy = d_dy, .gamma = d_gamma, .save_mean = d_mean,
                 .save_invstd = d_invstd, .sums = d_whole, .dx = d_dx}))
        return;
    double *forward = host_alloc((2 * c + 1) * sizeof(double));
    double *backward = host_alloc((2 * c + 1) * sizeof(double));
    float *dg = copy_of(dg0, c), *db = copy_of(db0, c);
    if (CPU_CALL(batchnorm_channel_sums, &empty, x, forward) ||
        CPU_CALL(batchnorm_backward_channel_sums, &empty, &(BatchnormBackwardChannelSumsTensors){
                 .x = x, .dy = dy, .save_mean = mean, .save_invstd = invstd, .sums = backward,
                 .dgamma = dg, .dbeta = db}))
        return;
    compare_exact("batchnorm_channel_sums", "sums (empty share)",
                  fetch_doubles(d_forward, 2 * c + 1), forward, words, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "sums (empty share)",
                  fetch_doubles(d_backward, 2 * c + 1), backward, words, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "dgamma (empty share)", fetch(d_dg, c), dg,
                  c, 0, 0);
    compare_exact("batchnorm_backward_channel_sums", "dbeta (empty share)", fetch(d_db, c), db,
                  c, 0, 0);
    compare_exact("batchnorm_backward_data_with_sums", "dx (untouched)", fetch(d_dx, count),
                  poisoned(count), count, 0, 0);
}

static void test_batchnorm_sync(void) {
    if (HAVE(batchnorm_channel_sums) && HAVE(batchnorm_backward_channel_sums) &&
        HAVE(batchnorm_backward_data_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                batchnorm_sync_empty_case(&bn_shapes[s], acc);
                end_case();
            }
    if (HAVE(batchnorm_channel_sums) && HAVE(batchnorm_forward_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int empty = 0; empty <= 1; empty++) {
                batchnorm_sync_forward_case(&bn_shapes[s], empty);
                end_case();
            }
    if (HAVE(batchnorm_backward_channel_sums) && HAVE(batchnorm_backward_data_with_sums))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int acc = 0; acc < 4; acc++) {
                batchnorm_sync_backward_case(&bn_shapes[s], acc & 1, acc >> 1);
                end_case();
            }
}

// The six rows shapes the comment above bn_shapes names must reach the rows kernels: one
// that missed would pass here on the other kernels.
static void check_rows_shapes(void) {
    int rows = 0;
    for (int s = 0; s < BN_SHAPES; s++)
        rows += batchnorm_rows_take(bn_shapes[s].n, bn_shapes[s].channels, bn_shapes[s].spatial);
    if (rows != 6) {
        fprintf(stderr, "FAIL batchnorm: %d of the shapes take the channels-last rows kernels, "
                "where the comment above bn_shapes names 6\n", rows);
        test_failures++;
    }
}

static void test_batchnorm(void) {
    if (HAVE(batchnorm_forward_training))
        for (int s = 0; s < BN_SHAPES; s++) {
            batchnorm_training_case(&bn_shapes[s]);
            end_case();
        }
    if (HAVE(batchnorm_forward_inference))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int save = 0; save <= 1; save++) {
                batchnorm_inference_case(&bn_shapes[s], save);
                end_case();
            }
    if (HAVE(batchnorm_backward))
        for (int s = 0; s < BN_SHAPES; s++)
            for (int bs = 0; bs <= 1; bs++) {
                for (int acc = 0; acc < 4; acc++) {
                    batchnorm_backward_case(&bn_shapes[s], bs, 1, acc & 1, acc >> 1);
                    end_case();
                }
                batchnorm_backward_case(&bn_shapes[s], bs, 0, 0, bs);
                end_case();
            }
}

// ---- convolution ---------------------------------------------------------------------------

static const ConvCase conv_cases[] = {
    // n  c   h   w   f  kh kw sh sw ph pw dh dw g same bias
    CONV_CASES_BASIC,
    {2, 6, 9, 9, 6, 3, 3, 3, 3, 0, 0, 3, 3, 6, 0, 0},     // depthwise, dilation 3, stride 3
    {4, 8, 6, 6, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1},     // 1x1
    {2, 3, 6, 6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},     // 1x1 with padding: a zero border
    CONV_CASES_EVEN_SAME,
    {1, 3, 6, 5, 4, 2, 2, 1, 1, 0, 0, 2, 1, 1, 1, 1},     // even kernel, dilation 2x1, pad=same
    {2, 3, 9, 12, 4, 1, 5, 1, 2, 0, 2, 1, 1, 1, 0, 1},    // 1x5 kernel
    CONV_CASES_EDGES,
    {1, 2, 31, 1, 3, 3, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1},    // a 1-wide column image
    {2, 4, 6, 6, 4, 2, 2, 2, 2, 0, 0, 1, 1, 2, 0, 1},     // 2x2 stride 2 (patchify), groups 2
    {16, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1}, // CIFAR-sized
    {32, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1}, // LeNet's second layer, batch 32
    // LeNet-5's own layers, 1 -> 6 and 6 -> 16 channels: in NHWC, pixels of 1, 6 and 16
    // values, not the multiples of 8 tensor-core kernels like.
    {8, 1, 28, 28, 6, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 1},
    {8, 6, 12, 12, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 0},
    // The bias gradient's split reduction (cuda_channel_reduce.h, 16 384 values a block):
    // LeNet's two layers at batch 1024 (49 and 13 blocks per filter), then chunks that end
    // inside a sample's run and a last chunk shorter than the rest: 5 blocks of 78 255
    // values, one sample of one filter (3 blocks), 1x1 outputs (spatial 1, 2 blocks), and
    // a bias with one value per filter (one block: the direct kernel).
    {1024, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1},
    {1024, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1},
    {37, 2, 47, 45, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {1, 1, 200, 190, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {20000, 3, 3, 3, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 1},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1},
};
enum { CONV_CASES = sizeof conv_cases / sizeof conv_cases[0] };

// The CPU's answers for one case, computed once for every workspace size tried.
typedef struct ConvReference {
    float *y, *y_mag;
    float *dx[2], *dx_mag[2];          // [accumulate]
    float *dw[2], *dw_mag[2], *db[2], *db_mag[2];
} ConvReference;

static int conv_reference(const Conv2dGeometry *g, const ConvCase *k, const float *x,
                          const float *w, const float *bias, const float *dy, const float *dx0,
                          const float *dw0, const float *db0, ConvReference *r) {
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g->out_h * g->out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    size_t bytes = 0;
    if (CPU_CALL(conv2d_workspace_size, g, &bytes)) return 1;
    void *ws = host_alloc(bytes);
    const float *ax = absolute(x, nx), *aw = absolute(w, nw), *ady = absolute(dy, ny);
    const float *ab = absolute(bias, nb);
    r->y = poisoned(ny);
    r->y_mag = poisoned(ny);
    int rc = CPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = x, .w = w,
                      .bias = k->bias ? bias : NULL, .y = r->y, .workspace = ws,
                      .workspace_bytes = bytes});
    rc = rc || CPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = ax, .w = aw,
                        .bias = k->bias ? ab : NULL, .y = r->y_mag, .workspace = ws,
                        .workspace_bytes = bytes});
    for (int acc = 0; acc <= 1 && !rc; acc++) {
        r->dx[acc] = acc ? copy_of(dx0, nx) : poisoned(nx);
        r->dx_mag[acc] = acc ? absolute(dx0, nx) : poisoned(nx);
        r->dw[acc] = acc ? copy_of(dw0, nw) : poisoned(nw);
        r->dw_mag[acc] = acc ? absolute(dw0, nw) : poisoned(nw);
        r->db[acc] = acc ? copy_of(db0, nb) : poisoned(nb);
        r->db_mag[acc] = acc ? absolute(db0, nb) : poisoned(nb);
        rc = CPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = dy, .w = w,
                      .dx = r->dx[acc], .workspace = ws, .workspace_bytes = bytes, .accumulate = acc
                      }) ||
             CPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = ady, .w = aw,
                      .dx = r->dx_mag[acc], .workspace = ws, .workspace_bytes = bytes,
                      .accumulate = acc}) ||
             CPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = x, .dy = dy,
                      .dw = r->dw[acc], .dbias = k->bias ? r->db[acc] : NULL, .workspace = ws,
                      .workspace_bytes = bytes, .accumulate = acc}) ||
             CPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = ax, .dy = ady,
                      .dw = r->dw_mag[acc], .dbias = k->bias ? r->db_mag[acc] : NULL,
                      .workspace = ws, .workspace_bytes = bytes, .accumulate = acc});
    }
    return rc;
}

// The workspace sizes each case runs in: what conv2d_workspace_size asks for, that for
// batch 1, and conv2d_least_workspace's (none on a GPU in NCHW, the KRSC filter copy in
// NHWC: cuDNN's algorithms that need no more, or the direct kernels), which a run under a
// tight --memory-limit falls back to.
enum { CONV_WORKSPACE_FULL, CONV_WORKSPACE_ONE_SAMPLE, CONV_WORKSPACE_LEAST,
       CONV_WORKSPACE_SIZES };
static const char *const conv_workspace_names[] = {"full", "1-sample", "least"};

// Each case runs in both layouts (Conv2dGeometry.layout) against the one NCHW reference:
// the NHWC ops get the operands transposed and their results are transposed back, which
// is the layout contract itself (the same values, laid out otherwise), and the CPU's
// reference runs once per case rather than once per layout.
static const Layout conv_layouts[] = {LAYOUT_NCHW, LAYOUT_NHWC};
enum { CONV_LAYOUTS = sizeof conv_layouts / sizeof conv_layouts[0] };

// n images of channels x pixels f32 values moved from layout `from` into the other: a new
// copy, by the CPU's layout_convert (what flatten runs after NHWC images).
static float *conv_relaid(const float *src, int n, int channels, int pixels, Layout from) {
    Status st;
    status_clear(&st);
    float *dst = floats((size_t)n * channels * pixels);
    CPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = DTYPE_F32, .n = n, .channels = channels,
             .pixels = pixels, .from = from, .src = src, .dst = dst, .accumulate = 0});
    return dst;
}

// An NCHW operand as the ops get it in `layout` (itself in NCHW).
static const float *conv_laid_out(const float *nchw, int n, int channels, int pixels,
                                  Layout layout) {
    return layout == LAYOUT_NHWC ? conv_relaid(nchw, n, channels, pixels, LAYOUT_NCHW) : nchw;
}

// A device result in `layout` fetched into NCHW order, as the reference holds it.
static float *conv_fetch_nchw(const float *d, int n, int channels, int pixels, Layout layout) {
    float *h = fetch(d, (size_t)n * channels * pixels);
    return layout == LAYOUT_NHWC ? conv_relaid(h, n, channels, pixels, LAYOUT_NHWC) : h;
}

static void conv_variant(const Conv2dGeometry *g, const ConvCase *k, const char *base_shape,
                         int variant, const float *x_nchw, const float *w, const float *bias,
                         const float *dy_nchw, const float *dx0_nchw, const float *dw0,
                         const float *db0, const ConvReference *r) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "%s, layout %s, %s workspace", base_shape,
             layout_name(g->layout), conv_workspace_names[variant]);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g->out_h * g->out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    // The activations in g's layout; results come back in NCHW order to compare.
    int in_pixels = k->h * k->w, out_pixels = g->out_h * g->out_w;
    Layout lay = g->layout;
    const float *x = conv_laid_out(x_nchw, k->n, k->c, in_pixels, lay);
    const float *dy = conv_laid_out(dy_nchw, k->n, k->f, out_pixels, lay);
    const float *dx0 = conv_laid_out(dx0_nchw, k->n, k->c, in_pixels, lay);
    Conv2dGeometry sizing = *g;
    if (variant == CONV_WORKSPACE_ONE_SAMPLE) sizing.batch = 1;
    size_t bytes = 0;
    if (variant == CONV_WORKSPACE_LEAST) {
        REQUIRE(conv2d_least_workspace);
        if (GPU_CALL(conv2d_least_workspace, g, &bytes)) return;
        record("conv2d_least_workspace", 0.0, 0);
    } else {
        if (GPU_CALL(conv2d_workspace_size, &sizing, &bytes)) return;
        record("conv2d_workspace_size", 0.0, 0);
    }
    // Name the algorithms in the case, so that a failure says which one missed.
    char algorithms[512];
    if (cuda_conv2d_describe(gpu, g, bytes, algorithms, sizeof algorithms, &st) == 0) {
        printf("  %s: %s\n", shape, algorithms);
        size_t used = strlen(shape);
        snprintf(shape + used, sizeof shape - used, "; %s", algorithms);
    }
    // Workspace is scratch: an op must not count on it holding zeros.
    void *ws = dev_poisoned(bytes);
    float *d_x = dev_floats(x, nx), *d_w = dev_floats(w, nw), *d_bias = dev_floats(bias, nb);
    float *d_dy = dev_floats(dy, ny);
    if (HAVE(conv2d_forward)) {
        float *d_y = dev_poison_floats(ny);
        if (!GPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = d_x, .w = d_w,
                      .bias = k->bias ? d_bias : NULL, .y = d_y, .workspace = ws,
                      .workspace_bytes = bytes}))
            compare("conv2d_forward", "y", conv_fetch_nchw(d_y, k->n, k->f, out_pixels, lay),
                    r->y, r->y_mag, ny);
    }
    if (HAVE(conv2d_forward_bias_activation))
        for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
            const FusedActivation *act = &fused_activations[a];
            float *d_y = dev_poison_floats(ny);
            if (GPU_CALL(conv2d_forward_bias_activation, g, &(Conv2dForwardTensors){.x = d_x,
                         .w = d_w, .bias = k->bias ? d_bias : NULL, .y = d_y, .workspace = ws,
                         .workspace_bytes = bytes}, act))
                continue;
            float *want = copy_of(r->y, ny);
            if (act->apply && CPU_CALL(activation_forward, &(ActivationForwardArgs){
                                       .kind = act->kind, .slope = act->slope, .dtype = DTYPE_F32,
                                       .x = want, .y = want, .n = ny}))
                continue;
            char what[64];
            snprintf(what, sizeof what, "y (act=%s)", fused_name(act));
            compare("conv2d_forward_bias_activation", what,
                    conv_fetch_nchw(d_y, k->n, k->f, out_pixels, lay), want,
                    fused_magnitude(r->y_mag, want, ny), ny);
        }
    for (int acc = 0; acc <= 1; acc++) {
        if (HAVE(conv2d_backward_data)) {
            float *d_dx = acc ? dev_floats(dx0, nx) : dev_poison_floats(nx);
            if (!GPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = d_dy,
                          .w = d_w, .dx = d_dx, .workspace = ws, .workspace_bytes = bytes,
                          .accumulate = acc}))
                compare("conv2d_backward_data", acc ? "dx (accumulate)" : "dx",
                        conv_fetch_nchw(d_dx, k->n, k->c, in_pixels, lay),
                        r->dx[acc], r->dx_mag[acc], nx);
        }
        if (HAVE(conv2d_backward_filter)) {
            float *d_dw = acc ? dev_floats(dw0, nw) : dev_poison_floats(nw);
            float *d_db = acc ? dev_floats(db0, nb) : dev_poison_floats(nb);
            if (!GPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = d_x,
                          .dy = d_dy, .dw = d_dw, .dbias = k->bias ? d_db : NULL, .workspace = ws,
                          .workspace_bytes = bytes, .accumulate = acc})) {
                compare("conv2d_backward_filter", acc ? "dw (accumulate)" : "dw", fetch(d_dw, nw),
                        r->dw[acc], r->dw_mag[acc], nw);
                if (k->bias)
                    compare("conv2d_backward_filter", acc ? "dbias (accumulate)" : "dbias",
                            fetch(d_db, nb), r->db[acc], r->db_mag[acc], nb);
                else  // dbias NULL: nothing to write, and the poisoned buffer stays poisoned
                    compare_exact("conv2d_backward_filter", "unused dbias buffer", fetch(d_db, nb),
                                  acc ? db0 : poisoned(nb), nb, 0, 0);
            }
        }
    }
}

static void conv_case(const ConvCase *k, int workspace_sizes) {
    Conv2dGeometry g = conv_case_geometry(k);
    char base[256];
    snprintf(base, sizeof base,
             "n=%d x=%dx%dx%d filters=%d kernel=%dx%d stride=%dx%d pad=%s%dx%d dilation=%dx%d "
             "groups=%d bias=%d -> %dx%dx%d", k->n, k->c, k->h, k->w, k->f, k->kh, k->kw, k->sh,
             k->sw, k->same ? "same:" : "", g.pad_top, g.pad_left, k->dh, k->dw, k->groups, k->bias,
             k->f, g.out_h, g.out_w);
    snprintf(shape, sizeof shape, "%s", base);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g.out_h * g.out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    float *x = uniform(nx, -1.0f, 1.0f), *w = uniform(nw, -1.0f, 1.0f);
    float *bias = uniform(nb, -1.0f, 1.0f), *dy = uniform(ny, -1.0f, 1.0f);
    float *dx0 = uniform(nx, -1.0f, 1.0f), *dw0 = uniform(nw, -1.0f, 1.0f);
    float *db0 = uniform(nb, -1.0f, 1.0f);
    ConvReference r;
    if (conv_reference(&g, k, x, w, bias, dy, dx0, dw0, db0, &r)) return;
    for (int l = 0; l < CONV_LAYOUTS; l++) {
        Conv2dGeometry laid = g;
        laid.layout = conv_layouts[l];
        for (int v = 0; v < workspace_sizes && !device_broken; v++)
            conv_variant(&laid, k, base, v, x, w, bias, dy, dx0, dw0, db0, &r);
    }
}

static void test_conv(int workspace_sizes) {
    REQUIRE(conv2d_workspace_size);
    for (int i = 0; i < CONV_CASES; i++) {
        conv_case(&conv_cases[i], workspace_sizes);
        end_case();
    }
}

// ---- pooling -------------------------------------------------------------------------------

typedef struct PoolCase {
    int n, c, h, w, kh, kw, sh, sw, ph, pw;
} PoolCase;

static const PoolCase pool_cases[] = {
    {1, 1, 4, 4, 2, 2, 2, 2, 0, 0},      // the textbook 2x2
    {2, 3, 28, 28, 2, 2, 2, 2, 0, 0},    // LeNet
    {2, 3, 7, 7, 2, 2, 2, 2, 0, 0},      // odd input: the last row and column are dropped
    {1, 2, 5, 5, 3, 3, 1, 1, 1, 1},      // overlapping windows, padding 1
    {3, 2, 9, 11, 3, 3, 2, 2, 1, 1},     // overlapping, stride 2, padding
    {2, 4, 6, 8, 3, 2, 2, 1, 1, 1},      // non-square window and stride
    {1, 1, 1, 1, 1, 1, 1, 1, 0, 0},      // 1x1
    {2, 2, 7, 5, 4, 4, 3, 3, 2, 2},      // even window with padding size / 2
    {4, 8, 13, 13, 3, 3, 3, 3, 1, 0},    // padding on the rows only
    {1, 1, 2, 2, 3, 3, 1, 1, 1, 1},      // windows mostly padding
    {32, 32, 14, 14, 2, 2, 2, 2, 0, 0},  // LeNet's second pool, batch 32
    // Windows that do not overlap run max-pool backward's per-output kernel: lenet's and
    // cnn-bn's two pools at batch 1024, gaps between windows (stride > size), clipped
    // windows at both ends (padding), a 3x1 window, a one-row image whose last column is in
    // no window, and a window as large as the image.
    {1024, 32, 28, 28, 2, 2, 2, 2, 0, 0},
    {1024, 64, 14, 14, 2, 2, 2, 2, 0, 0},
    {2, 3, 9, 10, 2, 2, 3, 3, 0, 0},
    {2, 3, 7, 7, 2, 2, 2, 2, 1, 1},
    {3, 2, 5, 7, 3, 1, 3, 1, 1, 0},
    {1, 1, 1, 9, 1, 2, 1, 2, 0, 0},
    {5, 1, 3, 3, 3, 3, 3, 3, 0, 0},
    // global_avgpool's window (the whole image, core/layers/global_avgpool.c), with channel
    // counts that are not multiples of a warp, which NHWC's threads walk.
    {8, 16, 7, 7, 7, 7, 1, 1, 0, 0},
    {3, 37, 5, 6, 5, 6, 1, 1, 0, 0},
    {2, 33, 9, 9, 2, 2, 2, 2, 0, 0},
};
enum { POOL_CASES = sizeof pool_cases / sizeof pool_cases[0] };

enum { POOL_RANDOM, POOL_TIES, POOL_NEGATIVE, POOL_NAN };
static const char *const pool_input_names[] = {"random", "ties", "all negative", "with NaN"};

// The case's geometry with x, y, dx, dy and argmax in `layout`: both backends get the same
// one and read the same buffers in it (the CPU's NHWC transposes around its NCHW loops).
static Pool2dGeometry pool_geometry(const PoolCase *k, Layout layout) {
    return (Pool2dGeometry){.batch = k->n, .channels = k->c, .in_h = k->h, .in_w = k->w,
                            .out_h = (k->h + 2 * k->ph - k->kh) / k->sh + 1,
                            .out_w = (k->w + 2 * k->pw - k->kw) / k->sw + 1, .kernel_h = k->kh,
                            .kernel_w = k->kw, .stride_h = k->sh, .stride_w = k->sw,
                            .pad_top = k->ph, .pad_left = k->pw, .layout = layout};
}

static void pool_describe(const PoolCase *k, const Pool2dGeometry *g, const char *extra) {
    snprintf(shape, sizeof shape, "%s n=%d c=%d in=%dx%d window=%dx%d stride=%dx%d pad=%dx%d "
             "-> %dx%d%s", layout_name(g->layout), k->n, k->c, k->h, k->w, k->kh, k->kw, k->sh,
             k->sw, k->ph, k->pw, g->out_h, g->out_w, extra);
}

static float *pool_input(size_t n, int kind) {
    float *x = uniform(n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i++) {
        if (kind == POOL_TIES) x[i] = 0.5f * (float)((int)rng_below(&rng, 3) - 1);  // -0.5, 0, 0.5
        if (kind == POOL_NEGATIVE) x[i] = -1.0f - fabsf(x[i]);  // padding (0) must not win
        if (kind == POOL_NAN && i % 11 == 3) x[i] = NAN;
    }
    return x;
}

static void maxpool_forward_case(const PoolCase *k, Layout layout, int input) {
    Pool2dGeometry g = pool_geometry(k, layout);
    char extra[40];
    snprintf(extra, sizeof extra, ", %s input", pool_input_names[input]);
    pool_describe(k, &g, extra);
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = pool_input(nx, input);
    float *d_x = dev_floats(x, nx), *d_y = dev_poison_floats(ny);
    int32_t *d_arg = dev_poisoned(ny * sizeof(int32_t));
    if (GPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = d_x,
                 .y = d_y, .argmax = d_arg})) return;
    float *y = poisoned(ny);
    int32_t *arg = host_alloc(ny * sizeof *arg), *got_arg = host_alloc(ny * sizeof *got_arg);
    CPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y,
             .argmax = arg});
    download(got_arg, d_arg, ny * sizeof *got_arg);
    compare_exact("maxpool_forward", "y", fetch(d_y, ny), y, ny, 0, 1);
    compare_exact("maxpool_forward", "argmax", got_arg, arg, ny, 1, 0);
}

static void maxpool_backward_case(const PoolCase *k, Layout layout, int input, int accumulate) {
    Pool2dGeometry g = pool_geometry(k, layout);
    char extra[64];
    snprintf(extra, sizeof extra, ", %s input, accumulate=%d", pool_input_names[input], accumulate);
    pool_describe(k, &g, extra);
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = pool_input(nx, input), *y = floats(ny);
    int32_t *arg = host_alloc(ny * sizeof *arg);
    if (CPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y,
                 .argmax = arg})) return;
    // Some dy of -0: the CPU's 0 + -0 leaves +0 in dx, which a plain copy of dy would not.
    float *dy = uniform(ny, -1.0f, 1.0f);
    for (size_t i = 0; i < ny; i += 7) dy[i] = -0.0f;
    float *dx0 = accumulate ? uniform(nx, -1.0f, 1.0f) : poisoned(nx);
    float *d_dy = dev_floats(dy, ny), *d_dx = dev_floats(dx0, nx);
    int32_t *d_arg = dev_copy(arg, ny * sizeof *arg);
    if (GPU_CALL(maxpool_backward, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32, .dy = d_dy,
                 .argmax = d_arg, .dx = d_dx, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, nx);
    CPU_CALL(maxpool_backward, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
             .argmax = arg, .dx = want, .accumulate = accumulate});
    // Each dx is a sum of dy's in the CPU's order (a single dy where windows do not
    // overlap): bit for bit.
    compare_exact("maxpool_backward", "dx", fetch(d_dx, nx), want, nx, 0, 0);
}

static void avgpool_forward_case(const PoolCase *k, Layout layout) {
    Pool2dGeometry g = pool_geometry(k, layout);
    pool_describe(k, &g, "");
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = uniform(nx, -1.0f, 1.0f);
    float *d_x = dev_floats(x, nx), *d_y = dev_poison_floats(ny);
    if (GPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = d_x,
                 .y = d_y})) return;
    float *y = poisoned(ny), *mag = poisoned(ny);
    CPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y});
    CPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32,
             .x = absolute(x, nx), .y = mag});
    compare("avgpool_forward", "y", fetch(d_y, ny), y, mag, ny);
}

static void avgpool_backward_case(const PoolCase *k, Layout layout, int accumulate) {
    Pool2dGeometry g = pool_geometry(k, layout);
    pool_describe(k, &g, accumulate ? ", accumulate=1" : ", accumulate=0");
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *dy = uniform(ny, -1.0f, 1.0f);
    float *dx0 = accumulate ? uniform(nx, -1.0f, 1.0f) : poisoned(nx);
    float *d_dy = dev_floats(dy, ny), *d_dx = dev_floats(dx0, nx);
    if (GPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32, .dy = d_dy,
                 .dx = d_dx, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, nx), *mag = accumulate ? absolute(dx0, nx) : poisoned(nx);
    CPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
             .dx = want, .accumulate = accumulate});
    CPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32,
             .dy = absolute(dy, ny), .dx = mag, .accumulate = accumulate});
    compare("avgpool_backward", "dx", fetch(d_dx, nx), want, mag, nx);
}

// The input kinds a case runs: all of them, except for NHWC's batch-1024 cases, random
// only (NCHW runs their ties and NaNs; the layout changes the addressing, not the rule, and
// the CPU reference takes a while over 25.7 million values).
static int pool_last_input(const PoolCase *k, Layout layout) {
    return layout == LAYOUT_NHWC && k->n >= 1024 ? POOL_RANDOM : POOL_NAN;
}

// Every case in NCHW, then in NHWC.
static void test_pools(void) {
    for (int l = 0; l < 2; l++) {
        Layout layout = l ? LAYOUT_NHWC : LAYOUT_NCHW;
        if (HAVE(maxpool_forward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int in = POOL_RANDOM; in <= pool_last_input(&pool_cases[i], layout); in++) {
                    maxpool_forward_case(&pool_cases[i], layout, in);
                    end_case();
                }
        if (HAVE(maxpool_backward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int acc = 0; acc <= 1; acc++)
                    for (int in = POOL_RANDOM; in <= pool_last_input(&pool_cases[i], layout);
                         in++) {
                        maxpool_backward_case(&pool_cases[i], layout, in, acc);
                        end_case();
                    }
        if (HAVE(avgpool_forward))
            for (int i = 0; i < POOL_CASES; i++) {
                avgpool_forward_case(&pool_cases[i], layout);
                end_case();
            }
        if (HAVE(avgpool_backward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int acc = 0; acc <= 1; acc++) {
                    avgpool_backward_case(&pool_cases[i], layout, acc);
                    end_case();
                }
    }
}

// ---- layout_convert --------------------------------------------------------------------------

// A transpose, and with accumulate one f32 sum rounded once, on both backends: bit for bit.
static void layout_convert_case(DType dtype, int n, int channels, int pixels, Layout from,
                                int accumulate) {
    Layout to = from == LAYOUT_NHWC ? LAYOUT_NCHW : LAYOUT_NHWC;
    snprintf(shape, sizeof shape, "%s %s -> %s n=%d channels=%d pixels=%d accumulate=%d",
             dtype_name(dtype), layout_name(from), layout_name(to), n, channels, pixels,
             accumulate);
    Status st;
    status_clear(&st);
    size_t count = (size_t)n * channels * pixels, bytes = count * dtype_size(dtype);
    float *src = uniform(count, -3.0f, 3.0f), *dst0 = uniform(count, -3.0f, 3.0f);
    void *src_stored = stored(src, count, dtype), *dst_stored = stored(dst0, count, dtype);
    void *d_src = dev_copy(src_stored, bytes);
    void *d_dst = accumulate ? dev_copy(dst_stored, bytes) : dev_poisoned(bytes);
    if (GPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = dtype, .n = n, .channels = channels,
                 .pixels = pixels, .from = from, .src = d_src, .dst = d_dst,
                 .accumulate = accumulate}))
        return;
    void *want = host_alloc(bytes ? bytes : 1);
    memcpy(want, dst_stored, bytes);
    if (CPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = dtype, .n = n, .channels = channels,
                 .pixels = pixels, .from = from, .src = src_stored, .dst = want,
                 .accumulate = accumulate}))
        return;
    compare_exact("layout_convert", "dst", fetch_widened(d_dst, count, dtype),
                  widened(want, count, dtype), count, 0, 0);
}

// Both directions, accumulate 0 and 1, every storage type; channels and pixels on and off
// the kernel's 32 x 32 tiles, one channel, one pixel, no images, and more images than the
// kernel's grid depth (65535), which it takes in turns; and an image of more pixels than
// 65535 row tiles of 32 (2,097,120), whose row tiles the kernel also takes in turns.
static void test_layout_convert(void) {
    REQUIRE(layout_convert);
    static const int sizes[][3] = {{1, 1, 1},   {2, 1, 49},   {3, 37, 1},    {2, 33, 45},
                                   {4, 64, 196}, {2, 70, 1025}, {0, 3, 5},   {70001, 3, 5},
                                   {65537, 1, 2}, {1, 2, 2100000}};
    static const DType types[] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 3; t++)
            for (int l = 0; l < 2; l++)
                for (int acc = 0; acc <= 1; acc++) {
                    layout_convert_case(types[t], sizes[s][0], sizes[s][1], sizes[s][2],
                                        l ? LAYOUT_NHWC : LAYOUT_NCHW, acc);
                    end_case();
                }
}

// ---- norms ---------------------------------------------------------------------------------

// Both sum in double, in different orders: about n * 2^-53 apart relative to the sum, far
// below 1e-9 for every size here. A NaN or infinity in x must give a non-finite sum on both.
static const double SUM_SQUARES_RTOL = 1e-9;

static void sum_squares_case(size_t n, float planted) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "n=%zu planted %g", n, planted);
    float *x = uniform(n, -3.0f, 3.0f);
    if (planted != 0.0f) x[n / 2] = planted;
    float *d_x = dev_floats(x, n);
    double *d_sum = dev_alloc(sizeof(double));
    if (GPU_CALL(sum_squares, d_x, n, d_sum)) return;
    double got, want;
    download(&got, d_sum, sizeof got);
    CPU_CALL(sum_squares, x, n, &want);
    double err = isfinite(want) ? fabs(got - want) / (fabs(want) + 1e-300)
                                : (isfinite(got) ? INFINITY : 0.0);
    if (!(err <= SUM_SQUARES_RTOL))
        fprintf(stderr, "FAIL sum_squares [%s]: gpu %.17g vs cpu %.17g\n", shape, got, want);
    record("sum_squares", err, !(err <= SUM_SQUARES_RTOL));
}

// x * factor is one rounded product on both: equal bit for bit.
static void scale_case(size_t n, float factor) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "n=%zu factor %g", n, factor);
    float *x = uniform(n, -3.0f, 3.0f);
    float *d_x = dev_floats(x, n);
    if (GPU_CALL(scale, d_x, factor, n)) return;
    CPU_CALL(scale, x, factor, n);
    compare_exact("scale", "x", fetch(d_x, n), x, n, 0, 0);
}

static void test_norms(void) {
    // sum_squares splits past 16384 values (cuda_norm.cu): 65537 is five blocks, the last
    // of one value; the last size is a 4096 x 4096 gradient's, and then some.
    static const size_t sizes[] = {1, 1000, 16384, 65537, ((size_t)1 << 20) + 3,
                                   ((size_t)1 << 24) + 7};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (HAVE(sum_squares)) {
            sum_squares_case(sizes[s], 0.0f);
            end_case();
            sum_squares_case(sizes[s], NAN);
            end_case();
            sum_squares_case(sizes[s], INFINITY);
            end_case();
        }
        if (HAVE(scale)) {
            scale_case(sizes[s], 0.37f);
            end_case();
        }
    }
}

// ---- optimizers ----------------------------------------------------------------------------

enum { OPTIMIZER_STEPS = 5 };

static void sgd_case(size_t n, SgdHyper h) {
    Status st;
    status_clear(&st);
    int momentum = h.momentum != 0.0f;
    float *p = uniform(n, -1.0f, 1.0f);
    // Mid-training velocity; no buffer at all without momentum (core/optimizer.c keeps
    // no state then, so the op gets NULL).
    float *v = momentum ? uniform(n, -0.1f, 0.1f) : NULL;
    float *d_p = dev_floats(p, n), *d_v = momentum ? dev_floats(v, n) : NULL;
    for (int step = 1; step <= OPTIMIZER_STEPS && !device_broken; step++) {
        snprintf(shape, sizeof shape, "n=%zu lr=%g momentum=%g weight_decay=%g nesterov=%d step %d", n,
                 h.lr, h.momentum, h.weight_decay, h.nesterov, step);
        float *g = gradients(n);
        float *d_g = dev_floats(g, n);
        if (GPU_CALL(sgd_update, &(SgdUpdateTensors){.param = d_p, .grad = d_g, .velocity = d_v,
                     .n = n}, &h)) return;
        float *p_before = copy_of(p, n);
        CPU_CALL(sgd_update, &(SgdUpdateTensors){.param = p, .grad = g, .velocity = v, .n = n}, &h);
        // The step is lr times g + weight_decay * p and the velocity.
        float *p_mag = floats(n), *v_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            float vel = momentum ? fabsf(v[i]) : 0.0f;
            float grad = fabsf(g[i]) + h.weight_decay * fabsf(p_before[i]);
            p_mag[i] = fabsf(p_before[i]) + 2.0f * h.lr * (grad + vel);
            v_mag[i] = vel + grad;
        }
        compare("sgd_update", "param", fetch(d_p, n), p, p_mag, n);
        if (momentum) compare("sgd_update", "velocity", fetch(d_v, n), v, v_mag, n);
    }
}

static void adam_case(size_t n, AdamHyper h) {
    Status st;
    status_clear(&st);
    float *p = uniform(n, -1.0f, 1.0f), *m = zeros(n), *v = zeros(n);
    float *d_p = dev_floats(p, n), *d_m = dev_floats(m, n), *d_v = dev_floats(v, n);
    for (int step = 1; step <= OPTIMIZER_STEPS && !device_broken; step++) {
        h.step = step;
        snprintf(shape, sizeof shape, "n=%zu lr=%g betas=%g,%g eps=%g weight_decay=%g %s step %d", n,
                 h.lr, h.beta1, h.beta2, h.eps, h.weight_decay,
                 h.decoupled_weight_decay ? "AdamW" : "Adam", step);
        float *g = gradients(n);
        for (size_t i = 7; i < n; i += 23) g[i] = 1e-6f;  // v ~ 1e-12: eps dominates
        float *d_g = dev_floats(g, n);
        if (GPU_CALL(adam_update, &(AdamUpdateTensors){.param = d_p, .grad = d_g, .m = d_m,
                     .v = d_v, .n = n}, &h)) return;
        float *p_before = copy_of(p, n);
        CPU_CALL(adam_update, &(AdamUpdateTensors){.param = p, .grad = g, .m = m, .v = v, .n = n},
                 &h);
        // Adam's step is at most about lr * (1 - beta1) / sqrt(1 - beta2) (~3.2 lr) per
        // element; the moments are sums of O(|g|) terms; v is a sum of squares, relative.
        float *p_mag = floats(n), *m_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            p_mag[i] = fabsf(p_before[i]) + 4.0f * h.lr;
            m_mag[i] = fabsf(m[i]) + fabsf(g[i]) + h.weight_decay * fabsf(p_before[i]);
        }
        compare("adam_update", "param", fetch(d_p, n), p, p_mag, n);
        compare("adam_update", "m", fetch(d_m, n), m, m_mag, n);
        compare("adam_update", "v", fetch(d_v, n), v, NULL, n);
    }
}

static void test_optimizers(void) {
    static const size_t sizes[] = {1, 1000, 65537, ((size_t)1 << 20) + 3};
    static const SgdHyper sgd[] = {
        {.lr = 0.1f},
        {.lr = 0.05f, .momentum = 0.9f},
        {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = 1},
        {.lr = 0.1f, .weight_decay = 0.01f},
    };
    static const AdamHyper adam[] = {
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f,
         .decoupled_weight_decay = 1},
        {.lr = 0.001f, .beta1 = 0.5f, .beta2 = 0.9f, .eps = 1e-3f},
    };
    if (HAVE(sgd_update))
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof sgd / sizeof sgd[0]; k++) {
                sgd_case(sizes[s], sgd[k]);
                end_case();
            }
    if (HAVE(adam_update))
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof adam / sizeof adam[0]; k++) {
                adam_case(sizes[s], adam[k]);
                end_case();
            }
}

// ---- multi-tensor optimizer updates --------------------------------------------------------

// Tensors of a multi-tensor case lie in one buffer per array, each followed by MULTI_GAP
// poisoned (NaN) values, so a write past a tensor's end lands in a gap and shows as a
// number where the CPU's buffer still holds NaN.
enum { MULTI_GAP = 64, MULTI_MAX = 80 };

typedef struct MultiLayout {
    int count;
    size_t n[MULTI_MAX], at[MULTI_MAX];
    size_t total;
} MultiLayout;

static MultiLayout multi_layout(const size_t *sizes, int count) {
    MultiLayout l = {.count = count};
    for (int i = 0; i < count; i++) {
        l.n[i] = sizes[i];
        l.at[i] = l.total;
        l.total += sizes[i] + MULTI_GAP;
    }
    return l;
}

// `base` holds finite values inside the tensors, NaN in the gaps.
static void poison_gaps(const MultiLayout *l, float *base) {
    for (int i = 0; i < l->count; i++)
        memset(base + l->at[i] + l->n[i], POISON_BYTE, MULTI_GAP * sizeof *base);
}

static void multi_tensors(const MultiLayout *l, float *param, const float *grad, float *s0,
                          float *s1, OptimizerTensor *out) {
    for (int i = 0; i < l->count; i++)
        out[i] = (OptimizerTensor){.param = param + l->at[i], .grad = grad + l->at[i],
                                   .state = {s0 ? s0 + l->at[i] : NULL, s1 ? s1 + l->at[i] : NULL},
                                   .n = l->n[i]};
}

// `steps` updates of the tensors by sgd_update_multi (adam = 0) or adam_update_multi: on the
// GPU against the CPU's op (the per-tensor math: the tolerances of sgd_case and adam_case),
// and against the GPU's own per-tensor op on a second copy, bit for bit (both kernels call
// one element function).
static void multi_case(const char *what, const size_t *sizes, int count, int adam, SgdHyper sh,
                       AdamHyper ah, int steps) {
    Status st;
    status_clear(&st);
    MultiLayout l = multi_layout(sizes, count);
    size_t n = l.total;
    int states = adam ? 2 : sh.momentum != 0.0f ? 1 : 0;
    float *p = uniform(n, -1.0f, 1.0f), *s[2] = {NULL, NULL};
    poison_gaps(&l, p);
    for (int k = 0; k < states; k++) {
        s[k] = adam ? zeros(n) : uniform(n, -0.1f, 0.1f);  // Adam from zero, SGD mid-training
        poison_gaps(&l, s[k]);
    }
    // Set A runs the multi-tensor op, set B the per-tensor op, on the device.
    float *a_p = dev_floats(p, n), *b_p = dev_floats(p, n), *a_s[2] = {NULL, NULL};
    float *b_s[2] = {NULL, NULL};
    for (int k = 0; k < states; k++) {
        a_s[k] = dev_floats(s[k], n);
        b_s[k] = dev_floats(s[k], n);
    }
    float *d_g = dev_poison_floats(n);
    OptimizerTensor a_t[MULTI_MAX], b_t[MULTI_MAX], h_t[MULTI_MAX];
    multi_tensors(&l, a_p, d_g, a_s[0], a_s[1], a_t);
    multi_tensors(&l, b_p, d_g, b_s[0], b_s[1], b_t);
    for (int step = 1; step <= steps && !device_broken; step++) {
        ah.step = step;
        snprintf(shape, sizeof shape, "%s, %d tensors (%zu values in all), step %d", what, count,
                 n - (size_t)count * MULTI_GAP, step);
        float *g = gradients(n);
        upload(d_g, g, n * sizeof *g);
        int rc = adam ? GPU_CALL(adam_update_multi, a_t, count, &ah)
                      : GPU_CALL(sgd_update_multi, a_t, count, &sh);
        for (int i = 0; i < count && !rc; i++)
            rc = adam ? GPU_CALL(adam_update, &(AdamUpdateTensors){.param = b_t[i].param,
                                 .grad = b_t[i].grad, .m = b_t[i].state[0], .v = b_t[i].state[1],
                                 .n = b_t[i].n}, &ah)
                      : GPU_CALL(sgd_update, &(SgdUpdateTensors){.param = b_t[i].param,
                                 .grad = b_t[i].grad, .velocity = b_t[i].state[0], .n = b_t[i].n},
                                 &sh);
        if (rc) return;
        float *before = copy_of(p, n);
        multi_tensors(&l, p, g, s[0], s[1], h_t);
        if (adam ? CPU_CALL(adam_update_multi, h_t, count, &ah)
                 : CPU_CALL(sgd_update_multi, h_t, count, &sh))
            return;
        const char *op = adam ? "adam_update_multi" : "sgd_update_multi";
        compare_exact(op, "param (against the per-tensor op)", fetch(a_p, n), fetch(b_p, n), n,
                      0, 1);
        for (int k = 0; k < states; k++)
            compare_exact(op, "state (against the per-tensor op)", fetch(a_s[k], n),
                          fetch(b_s[k], n), n, 0, 1);
        // What the steps are made of, as in sgd_case and adam_case.
        float *p_mag = floats(n), *s_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            float wd_p = (adam ? ah.weight_decay : sh.weight_decay) * fabsf(before[i]);
            if (adam) {
                p_mag[i] = fabsf(before[i]) + 4.0f * ah.lr;
                s_mag[i] = fabsf(s[0][i]) + fabsf(g[i]) + wd_p;
            } else {
                float vel = states ? fabsf(s[0][i]) : 0.0f;
                p_mag[i] = fabsf(before[i]) + 2.0f * sh.lr * (fabsf(g[i]) + wd_p + vel);
                s_mag[i] = vel + fabsf(g[i]) + wd_p;
            }
        }
        compare(op, "param", fetch(a_p, n), p, p_mag, n);
        if (states) compare(op, adam ? "m" : "velocity", fetch(a_s[0], n), s[0], s_mag, n);
        if (states == 2) compare(op, "v", fetch(a_s[1], n), s[1], NULL, n);
    }
}

static void test_optimizers_multi(void) {
    // Empty, 1, a bias, around the 4096-value chunk of a block, lenet's largest tensor.
    static const size_t mixed[] = {0, 1, 10, 4095, 4096, 4097, 802816, 65537, 3};
    // More tensors than one launch's table holds (64).
    size_t many[70];
    for (int i = 0; i < 70; i++) many[i] = (size_t)(i * 37) % 5000 + 1;
    // One tensor past the largest table entry (64 Mi values, MULTI_PIECE in
    // kernels/cuda/cuda_optimizer.cu): entered in two pieces.
    static const size_t pieces[] = {((size_t)4096 * 16384) + 4099, 5};
    // The kernels' two paths (kernels/cuda/cuda_optimizer.cu): float4s where all of a
    // tensor's arrays are 16-byte aligned, one value at a time where not. The layout puts
    // these at offsets of 0, 1, 0, 0 and 2 floats past alignment: 3 chunks and 1 float4 and
    // 1 value; 1 float off, over 3 chunks; whole chunks; 513 float4s (3 for thread 0, 2 for
    // the others) and 2 values; and 6 values at 2 floats off.
    static const size_t aligned[] = {3 * 4096 + 5, 8195, 8192, 2054, 6};
    static const size_t aligned_offset[] = {0, 1, 0, 0, 2};
    MultiLayout aligned_layout = multi_layout(aligned, 5);
    for (int i = 0; i < 5; i++)
        if (aligned_layout.at[i] % 4 != aligned_offset[i]) {
            fprintf(stderr, "FAIL multi-tensor layout: tensor %d is %zu floats past alignment, "
                            "not %zu (MULTI_GAP changed?)\n",
                    i, aligned_layout.at[i] % 4, aligned_offset[i]);
            test_failures++;
        }
    static const SgdHyper sgd[] = {
        {.lr = 0.1f},
        {.lr = 0.05f, .momentum = 0.9f},
        {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = 1},
        {.lr = 0.1f, .weight_decay = 0.01f},
    };
    static const AdamHyper adam[] = {
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f,
         .decoupled_weight_decay = 1},
    };
    const SgdHyper no_sgd = {0};
    const AdamHyper no_adam = {0};
    if (HAVE(sgd_update_multi) && HAVE(sgd_update)) {
        for (size_t k = 0; k < sizeof sgd / sizeof sgd[0]; k++) {
            multi_case("sgd, mixed sizes", mixed, 9, 0, sgd[k], no_adam, 3);
            end_case();
            multi_case("sgd, 70 tensors", many, 70, 0, sgd[k], no_adam, 2);
            end_case();
            multi_case("sgd, aligned and not", aligned, 5, 0, sgd[k], no_adam, 2);
            end_case();
        }
        multi_case("sgd, a tensor in two pieces", pieces, 2, 0, sgd[2], no_adam, 1);
        end_case();
    }
    if (HAVE(adam_update_multi) && HAVE(adam_update)) {
        for (size_t k = 0; k < sizeof adam / sizeof adam[0]; k++) {
            multi_case("adam, mixed sizes", mixed, 9, 1, no_sgd, adam[k], 3);
            end_case();
            multi_case("adam, 70 tensors", many, 70, 1, no_sgd, adam[k], 2);
            end_case();
            multi_case("adam, aligned and not", aligned, 5, 1, no_sgd, adam[k], 2);
            end_case();
        }
        multi_case("adam, a tensor in two pieces", pieces, 2, 1, no_sgd, adam[2], 1);
        end_case();
    }
}

// ---- driver --------------------------------------------------------------------------------

// ---- activations stored in bf16 or f16 (--precision bf16|fp16) --------------------------
//
// The ops that read or write 16-bit activations, against the CPU reference on the same
// 16-bit inputs. Both widen exactly and compute in f32, so what differs is the f32
// arithmetic's order (1e-4 of the magnitude, as in the fp32 pass) and then, for a 16-bit
// result, the one rounding to nearest even of two values that close: up to one unit in
// the last place apart, 2^-8 of the value in bf16, 2^-11 in f16. storage_rtol holds it to
// twice that plus the f32 part; a wrong index or a missed rounding is off by far more.
static DType storage_dtype = DTYPE_BF16;

static double storage_rtol(DType result) {
    if (result == DTYPE_BF16) return 2.0 / 256.0 + FP32_RTOL;
    if (result == DTYPE_F16) return 2.0 / 2048.0 + FP32_RTOL;
    return FP32_RTOL;
}

// A GEMM or a fused GEMM with A and B in storage_dtype and C in c_dtype (f32 or the same).
static void gemm16_case(int ta, int tb, int m, int n, int k, float beta, int with_bias,
                        const FusedActivation *act, DType c_dtype) {
    snprintf(shape, sizeof shape, "%s ta=%d tb=%d m=%d n=%d k=%d beta=%g bias=%d act=%s C %s",
             dtype_name(storage_dtype), ta, tb, m, n, k, beta, with_bias,
             act ? fused_name(act) : "(plain gemm)", dtype_name(c_dtype));
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    size_t na = (size_t)a_rows * a_cols, nb = (size_t)b_rows * b_cols, nc = (size_t)m * n;
    size_t c_bytes = nc * dtype_size(c_dtype);
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    float *bias = uniform((size_t)n, -1.0f, 1.0f);
    float *c0 = uniform(nc, -1.0f, 1.0f);
    void *a16 = stored(a, na, storage_dtype), *b16 = stored(bm, nb, storage_dtype);
    void *c16 = stored(c0, nc, c_dtype);
    void *da = dev_copy(a16, na * dtype_size(storage_dtype));
    void *db = dev_copy(b16, nb * dtype_size(storage_dtype));
    void *dc = beta == 0.0f ? dev_poisoned(c_bytes) : dev_copy(c16, c_bytes);
    float *dbias = with_bias ? dev_floats(bias, (size_t)n) : NULL;
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k,
                     .lda = a_cols, .ldb = b_cols, .ldc = n, .alpha = 1.0f, .beta = beta,
                     .a_dtype = storage_dtype, .b_dtype = storage_dtype, .c_dtype = c_dtype};
    const char *op = act ? "gemm_bias_activation" : "gemm";
    int rc = act ? GPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = da,
                            .bm = db, .bias = dbias, .c = dc}, act)
                 : GPU_CALL(gemm, &args, &(GemmTensors){.a = da, .bm = db, .c = dc});
    if (rc) return;
    void *want16 = host_alloc(c_bytes);
    memcpy(want16, c16, c_bytes);
    if (act ? CPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = a16,
                       .bm = b16, .bias = with_bias ? bias : NULL, .c = want16}, act)
            : CPU_CALL(gemm, &args, &(GemmTensors){.a = a16, .bm = b16, .c = want16}))
        return;
    float *want = widened(want16, nc, c_dtype);
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.beta = fabsf(beta);
    magnitude.a_dtype = magnitude.b_dtype = magnitude.c_dtype = DTYPE_F32;
    FusedActivation none = {0};
    CPU_CALL(gemm_bias_activation, &magnitude, &(GemmBiasActivationTensors){.a = absolute(a, na),
             .bm = absolute(bm, nb), .bias = with_bias ? absolute(bias, (size_t)n) : NULL, .c = cmag
             }, &none);
    double saved = rtol;
    rtol = storage_rtol(c_dtype);
    compare(op, "C", fetch_widened(dc, nc, c_dtype), want, fused_magnitude(cmag, want, nc), nc);
    rtol = saved;
}

// convert widens, adds in f32 and rounds once on both backends: bit for bit equal.
static void convert_case(DType from, DType to, size_t n, int accumulate) {
    snprintf(shape, sizeof shape, "%s -> %s n=%zu accumulate=%d", dtype_name(from),
             dtype_name(to), n, accumulate);
    Status st;
    status_clear(&st);
    float *src = uniform(n, -3.0f, 3.0f), *dst0 = uniform(n, -3.0f, 3.0f);
    void *src_stored = stored(src, n, from), *dst_stored = stored(dst0, n, to);
    size_t dst_bytes = n * dtype_size(to);
    void *d_src = dev_copy(src_stored, n * dtype_size(from));
    void *d_dst = accumulate ? dev_copy(dst_stored, dst_bytes) : dev_poisoned(dst_bytes);
    if (GPU_CALL(convert, &(ConvertArgs){.src = d_src, .src_dtype = from, .dst = d_dst,
                 .dst_dtype = to, .n = n, .accumulate = accumulate})) return;
    void *want = host_alloc(dst_bytes ? dst_bytes : 1);
    memcpy(want, dst_stored, dst_bytes);
    if (CPU_CALL(convert, &(ConvertArgs){.src = src_stored, .src_dtype = from, .dst = want,
                 .dst_dtype = to, .n = n, .accumulate = accumulate})) return;
    compare_exact("convert", "dst", fetch_widened(d_dst, n, to), widened(want, n, to), n, 0, 0);
}

static void activation_bias_backward16_case(const FusedActivation *act, int rows, int cols,
                                            float beta, int with_bias) {
    snprintf(shape, sizeof shape, "%s %s rows=%d cols=%d beta=%g bias=%d",
             dtype_name(storage_dtype), fused_name(act), rows, cols, beta, with_bias);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols, bytes = n * dtype_size(storage_dtype);
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    void *y16 = stored(y, n, storage_dtype), *dy16 = stored(dy, n, storage_dtype);
    float *db0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    void *d_y = dev_copy(y16, bytes), *d_dy = dev_copy(dy16, bytes), *d_dx = dev_poisoned(bytes);
    float *d_db = with_bias ? dev_floats(db0, (size_t)cols) : NULL;
    if (GPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = storage_dtype, .y = d_y, .dy = d_dy, .dx = d_dx, .dbias = d_db,
                 .rows = rows, .cols = cols, .beta = beta}))
        return;
    void *want_dx = host_alloc(bytes);
    float *want_db = copy_of(db0, (size_t)cols);
    if (CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = storage_dtype, .y = y16, .dy = dy16, .dx = want_dx,
                 .dbias = with_bias ? want_db : NULL, .rows = rows, .cols = cols, .beta = beta}))
        return;
    double saved = rtol;
    rtol = storage_rtol(storage_dtype);
    compare("activation_bias_backward", "dx", fetch_widened(d_dx, n, storage_dtype),
            widened(want_dx, n, storage_dtype), absolute(dy, n), n);
    rtol = saved;
    if (!with_bias) return;
    // The bias gradient sums the unrounded f32 dx on both: the fp32 tolerance.
    float *dx_f32 = floats(n), *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(db0, (size_t)cols);
    CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){.dtype = DTYPE_F32,
             .y = y, .dy = dy, .dx = dx_f32, .dbias = NULL, .rows = rows, .cols = cols, .beta = 0.0f
             });
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(dx_f32, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("activation_bias_backward", "dbias", fetch(d_db, (size_t)cols), want_db, mag,
            (size_t)cols);
}

static void test_storage16(void) {
    static const int gemm_shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {64, 10, 33},
                                         {128, 256, 784}, {129, 257, 1025}, {1024, 10, 256}};
    static const float betas[] = {0.0f, 1.0f};
    for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++)
                for (int c16 = 0; c16 < 2; c16++) {
                    gemm16_case(t & 1, t >> 1, gemm_shapes[s][0], gemm_shapes[s][1],
                                gemm_shapes[s][2], betas[b], 0, NULL,
                                c16 ? storage_dtype : DTYPE_F32);
                    end_case();
                }
    // A dense layer's forward (C = act(x W^T + bias), C in the storage type) for every
    // fused activation, and its dW (C f32 from 16-bit dy and x).
    for (int a = 0; a < FUSED_ACTIVATIONS; a++)
        for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++) {
            gemm16_case(0, 1, gemm_shapes[s][0], gemm_shapes[s][1], gemm_shapes[s][2], 0.0f, 1,
                        &fused_activations[a], storage_dtype);
            end_case();
        }
    gemm16_case(0, 1, 65, 33, 17, 1.0f, 1, &fused_activations[1], DTYPE_F32);
    end_case();
    // A layer wider than the epilogue's 16-bit bias copy (1 << 17 values, cuda_gemm.cu)
    // runs unfused, its bias rounded the same way.
    gemm16_case(0, 1, 3, (1 << 17) + 3, 8, 0.0f, 1, &fused_activations[1], storage_dtype);
    end_case();
    static const int sum_shapes[][2] = {{1, 1}, {4, 6}, {4096, 10}, {129, 1000}, {60000, 1}};
    for (size_t s = 0; s < sizeof sum_shapes / sizeof sum_shapes[0]; s++)
        for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
            sum_rows_case(sum_shapes[s][0], sum_shapes[s][1], betas[b], storage_dtype);
            end_case();
        }
    static const DType types[] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};
    static const size_t lengths[] = {1, 1000, BIG_N};
    for (int from = 0; from < 3 && HAVE(convert); from++)
        for (int to = 0; to < 3; to++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
                convert_case(types[from], types[to], lengths[l], (int)(l & 1));
                end_case();
            }
    // The last: the wide MLP's hidden layers at batch 4096, rows in 16 chunks.
    static const int act_shapes[][2] = {{1, 1}, {3, 5}, {129, 257}, {1024, 256}, {4096, 4096}};
    for (int a = 1; a < FUSED_ACTIVATIONS; a++) {
        if (fused_activations[a].kind == ACTIVATION_GELU) continue;  // not from its output
        for (size_t s = 0; s < sizeof act_shapes / sizeof act_shapes[0]; s++) {
            activation_bias_backward16_case(&fused_activations[a], act_shapes[s][0],
                                            act_shapes[s][1], s & 1 ? 0.5f : 0.0f, 1);
            end_case();
        }
        activation_bias_backward16_case(&fused_activations[a], 37, 41, 0.0f, 0);
        end_case();
    }
}

// The words given on the command line (`test_cuda_parity conv2d pooling`): only the
// sections whose name holds one of them run, to check a few ops on a card in less time
// than the whole test (whose coverage check is then skipped). None: every section.
static char *const *only_words;
static int only_count;

// Starts a section; 0 when it does not run (the device failed earlier, or a word given
// on the command line leaves it out).
// `supports`: storage answers as the CPU's (both store f32, bf16 and f16 in either layout),
// GEMM and convolution answers as backend_supports_on gives for this GPU's compute
// capability (the CPU standing in answers as the CPU).
static void test_supports(int compute) {
    REQUIRE(supports);
    int wrong = 0;
    const Layout layouts[3] = {LAYOUT_NCHW, LAYOUT_NHWC, (Layout)7};
    for (int family = OP_FAMILY_STORAGE; family <= OP_FAMILY_MATMUL; family++)
        for (int dtype = 0; dtype < DTYPE_COUNT; dtype++)
            for (int l = 0; l < 3; l++) {
                OpFamily f = (OpFamily)family;
                int got = gpu->supports(gpu, f, (DType)dtype, layouts[l]);
                int want = f == OP_FAMILY_STORAGE
                               ? cpu->supports(cpu, f, (DType)dtype, layouts[l])
                               : backend_supports_on(gpu->kind == BACKEND_CUDA ? compute : 0, f,
                                                     (DType)dtype, layouts[l]);
                if (got == want) continue;
                fprintf(stderr, "FAIL supports [family %d, %s, layout %d]: gpu %d, want %d\n",
                        family, dtype_name((DType)dtype), (int)layouts[l], got, want);
                wrong++;
            }
    record("supports", wrong, wrong > 0);
}

static int section(const char *name) {
    if (device_broken) return 0;
    int wanted = only_count == 0;
    for (int i = 0; i < only_count && !wanted; i++) wanted = strstr(name, only_words[i]) != NULL;
    if (!wanted) return 0;
    printf("%s: %s\n", pass_name, name);
    fflush(stdout);
    return 1;
}

static void run_fp32_pass(int compute) {
    if (section("supports")) {
        test_supports(compute);
    }
    if (section("memory, copies, fill, synchronize")) {
        test_total_memory();
        test_raw_alloc();
        test_synchronize();
        test_copies();
        test_fill();
        test_ranges();
    }
    if (section("gather_samples")) {
        test_gather_samples();
    }
    if (section("gemm, add_bias_rows, sum_rows, accumulate")) {
        test_gemm();
        test_add_bias_rows();
        test_sum_rows();
        test_accumulate();
    }
    if (section("activations, dropout")) {
        test_activations();
    }
    if (section("gemm with bias and activation fused; their gradients in one pass")) {
        test_gemm_bias_activation();
        test_activation_bias_backward();
        test_dropout();
    }
    if (section("losses")) {
        test_losses();
    }
    if (section("batchnorm")) {
        test_batchnorm();
        test_batchnorm_sync();
    }
    if (section("conv2d")) {
        test_conv(CONV_WORKSPACE_SIZES);
    }
    if (section("pooling")) {
        test_pools();
    }
    if (section("layout_convert")) {
        test_layout_convert();
    }
    if (section("norms")) {
        test_norms();
    }
    if (section("optimizers")) {
        test_optimizers();
    }
    if (section("multi-tensor optimizers")) {
        test_optimizers_multi();
    }
}

static void print_summary(void) {
    printf("\n%-32s %5s %7s %12s %10s  %s\n", "op", "pass", "checks", "max rel err", "tolerance",
           "result");
    for (int i = 0; i < stat_count; i++) {
        const OpStat *s = &stats[i];
        printf("%-32s %5s %7ld %12.3g %10.0e  %s\n", s->op, s->pass, s->checks, s->max_err, s->tol,
               s->failed ? "FAIL" : "ok");
    }
    for (int i = 0; i < absent_count; i++)
        printf("%-32s %5s %7s %12s %10s  FAIL (NULL in the table)\n", absent[i], "-", "-", "-", "-");
}

// Every op of BACKEND_OPS must have been exercised here: a new op added to the table
// without a parity case fails this test.
static void check_coverage(void) {
#define OP_NAME(field) #field,
    static const char *const table_ops[] = {BACKEND_OPS(OP_NAME)};
    for (size_t i = 0; i < sizeof table_ops / sizeof table_ops[0]; i++) {
        if (listed(exercised, exercised_count, table_ops[i])) continue;
        fprintf(stderr, "FAIL: op %s of the table has no case in test_cuda_parity.c\n",
                table_ops[i]);
        test_failures++;
    }
}

static int open_backend(int allow_tf32, const Backend **out, int *skip) {
    Status st;
    status_clear(&st);
    CudaBackendOptions options = {.ordinal = 0, .allow_tf32 = allow_tf32};
    int rc = cuda_backend_open(&options, out, &st);
    if (!rc) return 0;
    char text[2048];
    status_format(&st, text, sizeof text);
    if (st.code == STATUS_NO_DEVICE && skip) {
        printf("skipped: no usable CUDA backend: %s", text);
        *skip = 1;
    } else {
        fprintf(stderr, "FAIL cuda_backend_open (allow_tf32 = %d): %s", allow_tf32, text);
        test_failures++;
    }
    return rc;
}

// ---- every lever off (base/lever.h; `--without`) ----
// Each lever's off path is the implementation it replaced, kept so that bench/levers_gpu.sh
// can measure the lever alone; it must still compute what the CPU does. In fp32, under
// the fp32 tolerances, with every lever off at once: the ops that have levers (conv2d's
// bias gradient and fused forward, batchnorm at cnn-bn's long channels and on channels-last
// rows (one block per channel for both), max-pool backward on disjoint windows,
// gemm_bias_activation, the multi-tensor optimizer ops) rerun.
static void run_levers_off_pass(void) {
    if (device_broken) return;
    CudaBackendOptions options = {.ordinal = 0, .precision = PRECISION_FP32,
                                  .disabled_levers = LEVER_ALL};
    Status st;
    status_clear(&st);
    const Backend *b = NULL;
    if (cuda_backend_open(&options, &b, &st)) {
        char text[2048];
        status_format(&st, text, sizeof text);
        fprintf(stderr, "FAIL cuda_backend_open (every lever off): %s", text);
        test_failures++;
        return;
    }
    gpu = b;
    pass_name = "levers-off";
    rtol = FP32_RTOL;
    if (section("gemm with bias and activation: GEMM, then bias, then activation (gemm-epilogue)")) {
        test_gemm_bias_activation();
    }
    if (section("batchnorm: one block per channel (batchnorm-split)")) {
        test_batchnorm();
        test_batchnorm_sync();
    }
    if (section("conv2d: cuDNN's bias gradient, unfused forward (bias-gradient, conv-fused)")) {
        test_conv(CONV_WORKSPACE_SIZES);
    }
    if (section("pooling: max-pool backward by the gather (maxpool-scatter)")) {
        test_pools();
    }
    if (section("multi-tensor optimizers: one launch per tensor (multi-tensor)")) {
        test_optimizers_multi();
    }
    cuda_backend_close(b);
}

int main(int argc, char **argv) {
    only_words = argv + 1;
    only_count = argc - 1;
    cpu = cpu_backend();
    check_rows_shapes();
    memset(canary, CANARY_BYTE, sizeof canary);
    rng_seed(&rng, 20240611);
    const Backend *b = NULL;
    int skip = 0;
    if (open_backend(0, &b, &skip)) return skip ? 77 : test_exit_code("test_cuda_parity");
    gpu = b;

    CudaDeviceInfo devices[16];
    int count = 0, compute = 0;
    Status st;
    status_clear(&st);
    if (cuda_list_devices(devices, 16, &count, &st) == 0 && count > 0) {
        compute = devices[0].compute_major * 10 + devices[0].compute_minor;
        printf("%s: %s, sm_%d, %zu MiB\n", gpu->name, devices[0].name, compute,
               devices[0].total_memory >> 20);
    }
    char names[2048];
    int lacking = backend_missing_ops(gpu, names, sizeof names);
    if (lacking) fprintf(stderr, "%s lacks %d op(s): %s\n", gpu->name, lacking, names);
    // Without these nothing can be put on the device or read back.
    if (!HAVE(raw_alloc) || !HAVE(raw_free) || !HAVE(copy_to_device) || !HAVE(copy_to_host)) {
        cuda_backend_close(b);
        return test_exit_code("test_cuda_parity");
    }

    run_fp32_pass(compute);
    cuda_backend_close(b);

    if (!device_broken) {
        pass_name = "tf32";
        rtol = TF32_RTOL;
        if (compute && compute < 80)
            printf("tf32: sm_%d has no TF32; this pass runs f32 math under the TF32 tolerance\n",
                   compute);
        if (open_backend(1, &b, NULL) == 0) {
            gpu = b;
            if (section("gemm (TF32 allowed)")) {
                test_gemm();
                test_gemm_bias_activation();
            }
            if (section("conv2d (TF32 allowed)")) {
                test_conv(1);
            }
            cuda_backend_close(b);
        }
    } else {
        fprintf(stderr, "the device failed; the cases after that failure did not run\n");
    }

    // ---- --precision bf16 and fp16: gemm and conv2d again, on fp32 storage ----
    // The backend opened with a reduced precision rounds each GEMM's A and B (cuBLAS's
    // CUBLAS_COMPUTE_32F_FAST_16BF / _16F) and, for fp16, each convolution's inputs
    // (cuDNN's TENSOR_OP_MATH_ALLOW_CONVERSION) before multiplying, and sums in fp32.
    // Rounding to p significant bits is off by up to 2^-p of a value, so a product by up to
    // ~2 * 2^-p of |a*b| and a sum by up to that of its sum of |terms| (what `compare`
    // divides by), whatever its length; the fp32 sum adds ~1e-6. bf16 keeps 8 bits:
    // 2 * 2^-8 = 7.8e-3, held to 5e-2 (over 6x margin). fp16 keeps 11 bits: 9.8e-4, held to
    // TF32's 1e-2 (the test's inputs lie in [-1, 1], inside fp16's range). Under bf16
    // convolutions compute in TF32 (base/precision.h), so they keep TF32's 1e-2. A wrong
    // index, transpose, stride or padding is off by O(1); summing in fp16 (which trainer
    // never asks for) would be off by far more than these bounds on the long reductions.
    static const struct {
        Precision precision;
        const char *name;
        double gemm_rtol, conv_rtol;
    } reduced[] = {
        {PRECISION_BF16, "bf16", 5e-2, TF32_RTOL},
        {PRECISION_FP16, "fp16", TF32_RTOL, TF32_RTOL},
    };
    for (size_t i = 0; i < sizeof reduced / sizeof reduced[0] && !device_broken; i++) {
        int floor = precision_min_compute(reduced[i].precision);
        if (compute && compute < floor) {
            printf("%s: sm_%d has no %s (compute capability %d.%d+); this pass is skipped\n",
                   reduced[i].name, compute, reduced[i].name, floor / 10, floor % 10);
            continue;
        }
        CudaBackendOptions reduced_options = {.ordinal = 0, .precision = reduced[i].precision};
        Status reduced_st;
        status_clear(&reduced_st);
        if (cuda_backend_open(&reduced_options, &b, &reduced_st)) {
            char text[2048];
            status_format(&reduced_st, text, sizeof text);
            fprintf(stderr, "FAIL cuda_backend_open (precision %s): %s", reduced[i].name, text);
            test_failures++;
            continue;
        }
        gpu = b;
        pass_name = reduced[i].name;
        if (cuda_backend_precision(b) != reduced[i].precision) {
            fprintf(stderr, "FAIL %s: the backend computes in %s\n", reduced[i].name,
                    precision_name(cuda_backend_precision(b)));
            test_failures++;
        }
        rtol = reduced[i].gemm_rtol;
        if (section("gemm (inputs rounded to the precision)")) {
            test_gemm();
            test_gemm_bias_activation();
        }
        rtol = reduced[i].conv_rtol;
        if (section("conv2d (inputs rounded to the precision's convolution precision)")) {
            test_conv(1);
        }
        rtol = FP32_RTOL;
        storage_dtype = reduced[i].precision == PRECISION_BF16 ? DTYPE_BF16 : DTYPE_F16;
        if (section("activations stored in 16 bits (gemm, sum_rows, convert, activation_bias_backward)")) {
            test_storage16();
        }
        cuda_backend_close(b);
    }

    run_levers_off_pass();
    print_summary();
    if (only_count)
        printf("coverage check skipped: only the sections naming %d word(s) ran\n", only_count);
    else
        check_coverage();
    return test_exit_code("test_cuda_parity");
}
