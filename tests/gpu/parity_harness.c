// The CUDA backend against the CPU reference, op by op: every entry of the op table
// (BACKEND_OPS in kernels/backend.h is the checklist; each op family's X-list has its test,
// tests/gpu/test_cuda_parity_FAMILY.c, run by parity_main below)
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

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/lever.h"
#include "base/rng.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"

const Backend *gpu;  // the backend under test
const Backend *cpu;  // the reference
double rtol = FP32_RTOL;
const char *pass_name = "fp32";
int device_broken;   // a device call failed so that nothing more can be tested
Rng rng;
char shape[1024];     // the case being run, for messages
int test_failures;
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

void record(const char *op, double err, int failed) {
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
int require_op(const char *op, int present) {
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
// ---- host buffers, freed at the end of each case ----------------------------------------

static void *host_blocks[MAX_BLOCKS];
static int host_count;

void *host_alloc(size_t bytes) {
    void *p = host_count < MAX_BLOCKS ? malloc(bytes ? bytes : 1) : NULL;
    if (!p) {
        fprintf(stderr, "parity_harness: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    host_blocks[host_count++] = p;
    return p;
}

float *floats(size_t n) { return host_alloc(n * sizeof(float)); }

float *uniform(size_t n, float lo, float hi) {
    float *x = floats(n);
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&rng);
    return x;
}

float *poisoned(size_t n) {
    float *x = floats(n);
    memset(x, POISON_BYTE, n * sizeof *x);
    return x;
}

float *zeros(size_t n) {
    float *x = floats(n);
    memset(x, 0, n * sizeof *x);
    return x;
}

float *copy_of(const float *x, size_t n) {
    float *y = floats(n);
    memcpy(y, x, n * sizeof *y);
    return y;
}

float *absolute(const float *x, size_t n) {
    float *y = floats(n);
    for (size_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
    return y;
}

// Gradients as training produces them: mostly O(1), some exactly zero.
float *gradients(size_t n) {
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

void *dev_alloc(size_t bytes) {
    if (device_broken) return NULL;
    if (dev_count == MAX_BLOCKS) {
        fprintf(stderr, "parity_harness: more than %d device buffers in one case\n", MAX_BLOCKS);
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

void upload(void *dst, const void *src, size_t bytes) {
    if (device_broken || !dst || !bytes) return;
    Status st;
    status_clear(&st);
    if (gpu->copy_to_device(gpu, dst, src, bytes, &st)) report_device_failure("copy_to_device", &st);
}

void download(void *dst, const void *src, size_t bytes) {
    if (device_broken || !src || !bytes) return;
    Status st;
    status_clear(&st);
    if (gpu->copy_to_host(gpu, dst, src, bytes, &st)) report_device_failure("copy_to_host", &st);
}

void *dev_copy(const void *host, size_t bytes) {
    void *d = dev_alloc(bytes);
    upload(d, host, bytes);
    return d;
}

void *dev_poisoned(size_t bytes) {
    void *host = host_alloc(bytes);
    memset(host, POISON_BYTE, bytes);
    return dev_copy(host, bytes);
}

float *dev_floats(const float *host, size_t n) { return dev_copy(host, n * sizeof *host); }
float *dev_poison_floats(size_t n) { return dev_poisoned(n * sizeof(float)); }

// A buffer from the device into new host memory (poison when the device is broken).
float *fetch(const float *d, size_t n) {
    float *h = poisoned(n);
    download(h, d, n * sizeof *h);
    return h;
}

// x rounded to `dtype` in place (so the reference and the magnitudes see the stored
// values), and those values as the device stores them: 2 bytes each, or x itself for f32.
void *stored(float *x, size_t n, DType dtype) {
    if (dtype == DTYPE_F32) return x;
    uint16_t *bits = host_alloc((n ? n : 1) * sizeof *bits);
    for (size_t i = 0; i < n; i++) {
        bits[i] = dtype == DTYPE_BF16 ? f32_to_bf16(x[i]) : f32_to_f16(x[i]);
        x[i] = dtype == DTYPE_BF16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
    }
    return bits;
}

// n values stored as `dtype` (host memory), widened to f32.
float *widened(const void *x, size_t n, DType dtype) {
    if (dtype == DTYPE_F32) return copy_of(x, n);
    float *out = floats(n);
    const uint16_t *bits = x;
    for (size_t i = 0; i < n; i++)
        out[i] = dtype == DTYPE_BF16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
    return out;
}

// n device values stored as `dtype`, widened to f32.
float *fetch_widened(const void *d, size_t n, DType dtype) {
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

void end_case(void) {
    for (int i = 0; i < dev_count; i++) gpu->raw_free(gpu, dev_blocks[i].base);
    dev_count = 0;
    for (int i = 0; i < host_count; i++) free(host_blocks[i]);
    host_count = 0;
}

// ---- calling ops -------------------------------------------------------------------------

// An op's status, then a synchronize, so that an asynchronous fault is pinned to this op,
// then the guard zones.
int gpu_done(const char *op, int rc, const Status *st) {
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

int cpu_done(const char *op, int rc, const Status *st) {
    if (rc) {
        char text[2048];
        status_format(st, text, sizeof text);
        fprintf(stderr, "FAIL the CPU reference %s [%s]: %s", op, shape, text);
        test_failures++;
    }
    return rc;
}

// ---- comparing ---------------------------------------------------------------------------

// err_i = |got_i - want_i| / scale_i with scale_i = mag[i], or |want_i| when mag is NULL.
// A non-finite reference must be matched exactly (NaN by any NaN).
void compare(const char *op, const char *what, const float *got, const float *want,
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
void compare_exact(const char *op, const char *what, const void *got, const void *want,
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

// ---- shared by the families ---------------------------------------------------------------

const char *const activation_names[ACTIVATION_COUNT] = {"relu", "leaky_relu", "sigmoid",
                                                               "tanh", "gelu"};


// Every activation the fused ops take, and none (bias only): cuBLASLt and cuDNN fuse some,
// the rest take the unfused path inside the op; each is compared with the CPU's composition.
const FusedActivation fused_activations[] = {
    {0, ACTIVATION_RELU, 0.0f},         {1, ACTIVATION_RELU, 0.0f},
    {1, ACTIVATION_LEAKY_RELU, 0.2f},   {1, ACTIVATION_SIGMOID, 0.0f},
    {1, ACTIVATION_TANH, 0.0f},         {1, ACTIVATION_GELU, 0.0f},
};

const char *fused_name(const FusedActivation *act) {
    return act->apply ? activation_names[act->kind] : "none";
}

// The error of an activated sum: every activation here has |f'| <= 1.13, so an error in
// the sum passes through at most that large, and f's own rounding is relative to |f|. So
// the magnitude is the larger of the sum's (the CPU op on |inputs|, no activation) and the
// result's.
float *fused_magnitude(const float *sum_magnitude, const float *want, size_t n) {
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fmaxf(sum_magnitude[i], fabsf(want[i]));
    return mag;
}

// host's n floats on the device, `offset` floats into a buffer: offset 1 starts 4 bytes past
// an allocation's alignment, a pointer no fused epilogue may be handed as it is.
float *dev_floats_at(const float *host, size_t n, int offset) {
    float *staged = zeros(n + (size_t)offset);
    memcpy(staged + offset, host, n * sizeof *host);
    return dev_floats(staged, n + (size_t)offset) + offset;
}

// ---- activations stored in bf16 or f16 (--precision bf16|fp16) --------------------------
//
// The ops that read or write 16-bit activations, against the CPU reference on the same
// 16-bit inputs. Both widen exactly and compute in f32, so what differs is the f32
// arithmetic's order (1e-4 of the magnitude, as in the fp32 pass) and then, for a 16-bit
// result, the one rounding to nearest even of two values that close: up to one unit in
// the last place apart, 2^-8 of the value in bf16, 2^-11 in f16. storage_rtol holds it to
// twice that plus the f32 part; a wrong index or a missed rounding is off by far more.
DType storage_dtype = DTYPE_BF16;

double storage_rtol(DType result) {
    if (result == DTYPE_BF16) return 2.0 / 256.0 + FP32_RTOL;
    if (result == DTYPE_F16) return 2.0 / 2048.0 + FP32_RTOL;
    return FP32_RTOL;
}

// The words given on the command line (`test_cuda_parity_conv_pool pooling`): only the
// sections whose name holds one of them run, to check a few ops on a card in less time
// than the whole test (whose coverage check is then skipped). None: every section.
static char *const *only_words;
static int only_count;

int section(const char *name) {
    if (device_broken) return 0;
    int wanted = only_count == 0;
    for (int i = 0; i < only_count && !wanted; i++) wanted = strstr(name, only_words[i]) != NULL;
    if (!wanted) return 0;
    printf("%s: %s\n", pass_name, name);
    fflush(stdout);
    return 1;
}


// ---- the passes --------------------------------------------------------------------------------

#define PARITY_COUNT_OP(field) +1
#define PARITY_FAMILY_COUNT(name, list) +(0 list(PARITY_COUNT_OP))
_Static_assert((0 PARITY_FAMILIES(PARITY_FAMILY_COUNT)) == (0 BACKEND_OPS(PARITY_COUNT_OP)),
               "an op family of BACKEND_OPS is missing from PARITY_FAMILIES (parity_harness.h)");

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

// Every op of the family's list must have been exercised: an op added to the family
// without a parity case fails its test.
static void check_coverage(const ParityFamily *family) {
    for (int i = 0; i < family->op_count; i++) {
        if (listed(exercised, exercised_count, family->ops[i])) continue;
        fprintf(stderr, "FAIL: op %s of the table has no case in %s.c\n", family->ops[i],
                family->test);
        test_failures++;
    }
}

static int exit_code(const char *test) {
    if (test_failures) fprintf(stderr, "%s: %d check(s) failed\n", test, test_failures);
    else fprintf(stderr, "%s: all checks passed\n", test);
    return test_failures ? 1 : 0;
}

// Opens device 0 into `gpu` with `options`; on failure says so under `what` and counts a
// failure, or with `skip` and no device says the test is skipped and sets *skip.
static int open_pass(CudaBackendOptions options, const char *what, int *skip) {
    Status st;
    status_clear(&st);
    const Backend *b = NULL;
    if (!cuda_backend_open(&options, &b, &st)) {
        gpu = b;
        return 0;
    }
    char text[2048];
    status_format(&st, text, sizeof text);
    if (st.code == STATUS_NO_DEVICE && skip) {
        printf("skipped: no usable CUDA backend: %s", text);
        *skip = 1;
    } else {
        fprintf(stderr, "FAIL cuda_backend_open (%s): %s", what, text);
        test_failures++;
    }
    return 1;
}

// Opens the first pass's backend: 0, or 1 when the test ends here (*skip when skipped).
static int open_fp32(int *compute, int *skip) {
    if (open_pass((CudaBackendOptions){.ordinal = 0, .allow_tf32 = 0}, "allow_tf32 = 0", skip))
        return 1;
    CudaDeviceInfo devices[16];
    int count = 0;
    Status st;
    status_clear(&st);
    if (cuda_list_devices(devices, 16, &count, &st) == 0 && count > 0) {
        *compute = devices[0].compute_major * 10 + devices[0].compute_minor;
        printf("%s: %s, sm_%d, %zu MiB\n", gpu->name, devices[0].name, *compute,
               devices[0].total_memory >> 20);
    }
    char names[2048];
    int lacking = backend_missing_ops(gpu, names, sizeof names);
    if (lacking) fprintf(stderr, "%s lacks %d op(s): %s\n", gpu->name, lacking, names);
    // Without these nothing can be put on the device or read back.
    if (!HAVE(raw_alloc) || !HAVE(raw_free) || !HAVE(copy_to_device) || !HAVE(copy_to_host)) {
        cuda_backend_close(gpu);
        return 1;
    }
    return 0;
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
// The family's run sets rtol per section (the pass starts it at FP32_RTOL, for the ops
// that store 16-bit activations).
static void run_reduced_passes(const ParityFamily *family, int compute) {
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
        CudaBackendOptions options = {.ordinal = 0, .precision = reduced[i].precision};
        if (open_pass(options, reduced[i].name, NULL)) continue;
        pass_name = reduced[i].name;
        if (cuda_backend_precision(gpu) != reduced[i].precision) {
            fprintf(stderr, "FAIL %s: the backend computes in %s\n", reduced[i].name,
                    precision_name(cuda_backend_precision(gpu)));
            test_failures++;
        }
        rtol = FP32_RTOL;
        storage_dtype = reduced[i].precision == PRECISION_BF16 ? DTYPE_BF16 : DTYPE_F16;
        family->run(&(ParityPass){PARITY_REDUCED, compute, reduced[i].gemm_rtol,
                                  reduced[i].conv_rtol});
        cuda_backend_close(gpu);
    }
}

// The passes after fp32: tf32 (allow_tf32 = 1, trainer's default unless --no-tf32), the
// reduced precisions, and every lever off (base/lever.h; `--without`): each lever's off
// path is the implementation it replaced, kept so that bench/levers_gpu.sh can measure the
// lever alone; it must still compute what the CPU does, in fp32, under the fp32
// tolerances, with every lever off at once.
static void run_later_passes(const ParityFamily *family, int compute) {
    if ((family->passes & PARITY_TF32) && !device_broken) {
        pass_name = "tf32";
        rtol = TF32_RTOL;
        if (compute && compute < 80)
            printf("tf32: sm_%d has no TF32; this pass runs f32 math under the TF32 tolerance\n",
                   compute);
        if (!open_pass((CudaBackendOptions){.ordinal = 0, .allow_tf32 = 1}, "allow_tf32 = 1",
                       NULL)) {
            family->run(&(ParityPass){.kind = PARITY_TF32, .compute = compute});
            cuda_backend_close(gpu);
        }
    }
    if (family->passes & PARITY_REDUCED) run_reduced_passes(family, compute);
    if ((family->passes & PARITY_LEVERS_OFF) && !device_broken) {
        CudaBackendOptions options = {.ordinal = 0, .precision = PRECISION_FP32,
                                      .disabled_levers = LEVER_ALL};
        if (!open_pass(options, "every lever off", NULL)) {
            pass_name = "levers-off";
            rtol = FP32_RTOL;
            family->run(&(ParityPass){.kind = PARITY_LEVERS_OFF, .compute = compute});
            cuda_backend_close(gpu);
        }
    }
}

int parity_main(const ParityFamily *family, int argc, char **argv) {
    only_words = argv + 1;
    only_count = argc - 1;
    cpu = cpu_backend();
    memset(canary, CANARY_BYTE, sizeof canary);
    rng_seed(&rng, 20240611);
    int compute = 0, skip = 0;
    if (open_fp32(&compute, &skip)) return skip ? 77 : exit_code(family->test);
    family->run(&(ParityPass){.kind = PARITY_FP32, .compute = compute});
    cuda_backend_close(gpu);
    if (device_broken)
        fprintf(stderr, "the device failed; the cases after that failure did not run\n");
    run_later_passes(family, compute);
    print_summary();
    if (only_count)
        printf("coverage check skipped: only the sections naming %d word(s) ran\n", only_count);
    else
        check_coverage(family);
    return exit_code(family->test);
}
