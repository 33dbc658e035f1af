// The CUDA elementwise ops on 16-bit storage against the CPU ops in the same storage:
// activation_forward and activation_backward (every kind, dx written or added to),
// dropout_forward and dropout_backward (dx written or added to) and accumulate (1 to
// BACKEND_ACCUMULATE_MAX sources, y written or added to; f32 too, whose several-source
// form test_cuda_parity_linear_algebra does not reach), in bf16 and f16. The CPU ops
// widen, compute in f32 and round once (tests/unit/test_storage16_elementwise.c checks that
// bit for bit); the kernels do the same in registers.
//
// Tolerances: the same bits wherever the f32 arithmetic is the CPU's to the bit (relu,
// leaky_relu, sigmoid's and tanh's backward given the same x and y, dropout, accumulate:
// cuda_elementwise.cu's header says why); one unit in the last place of the storage type
// (plus 1e-6) where CUDA's expf, tanhf and erff may differ from glibc's by an f32 ulp or
// two, which moves a value across a 16-bit rounding boundary at most once (sigmoid, tanh
// and gelu forward, gelu backward).
//
// Skipped (77) when no CUDA backend opens; bf16 alone is skipped on a GPU older than
// compute capability 8.0 (the backend refuses to open in it).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/rng.h"
#include "kernels/backend.h"
#include "cuda_or_skip.h"
#include "device_buffers.h"
#include "stored16.h"

static const Backend *gpu, *cpu;
static Rng rng;

static int report(const char *what, int rc, const Status *st) {
    if (rc) {
        char text[2048];
        status_format(st, text, sizeof text);
        fprintf(stderr, "%s failed: %s", what, text);
        test_failures++;
    }
    return rc;
}

// A case's host buffers, freed together when the next case starts (and at the end), so that
// a case that stops early on a failure leaks nothing: the device buffers' rule, host side.
enum { HOST_BUFFERS_MAX = 32 };
static void *host_held[HOST_BUFFERS_MAX];
static int host_count;

static void host_free_all(void) {
    for (int i = 0; i < host_count; i++) free(host_held[i]);
    host_count = 0;
}

// `bytes` (+1, so that 0 is a real allocation) of host memory held until host_free_all;
// aborts the test when out of memory or slots, which a parity case never is.
static void *host_alloc(size_t bytes) {
    void *p = host_count < HOST_BUFFERS_MAX ? malloc(bytes + 1) : NULL;
    if (!p) {
        fprintf(stderr, "FAIL: host_alloc of %zu bytes\n", bytes);
        abort();
    }
    return host_held[host_count++] = p;
}

// n random values in [lo, hi) stored as dtype (host memory, held until host_free_all).
static void *host_values(DType dtype, size_t n, float lo, float hi) {
    size_t size = dtype_size(dtype);
    unsigned char *out = host_alloc(n * size);
    for (size_t i = 0; i < n; i++) {
        float v = lo + (hi - lo) * rng_uniform(&rng);
        if (dtype == DTYPE_F32) memcpy(out + i * size, &v, size);
        else {
            uint16_t h = stored16_from_f32(v, dtype);
            memcpy(out + i * size, &h, size);
        }
    }
    return out;
}

static void *host_copy(const void *src, size_t bytes) {
    void *out = host_alloc(bytes);
    memcpy(out, src, bytes);
    return out;
}

static void report_failure(const char *what, const Status *st) { report(what, 1, st); }

// Each case's device buffers, freed when it starts (what an earlier case left behind when
// it stopped at a failure) and when it ends.
static DeviceBuffers dev = {.report = report_failure};

// The device buffer's bytes, in new host memory (NULL after a failure).
static void *from_device(const void *d, size_t bytes) {
    void *host = malloc(bytes + 1);
    if (device_download(&dev, host, d, bytes)) {
        free(host);
        return NULL;
    }
    return host;
}

// Distance in representable values between two stored numbers (0: the same bits, or +0
// and -0 in f32).
static long ulps(const void *a, const void *b, DType dtype, size_t i) {
    long va, vb;
    if (dtype == DTYPE_F32) {
        int32_t x, y;
        memcpy(&x, (const float *)a + i, 4);
        memcpy(&y, (const float *)b + i, 4);
        va = x < 0 ? -(long)(x & 0x7fffffff) : x;
        vb = y < 0 ? -(long)(y & 0x7fffffff) : y;
    } else {
        uint16_t x = ((const uint16_t *)a)[i], y = ((const uint16_t *)b)[i];
        va = x & 0x8000 ? -(long)(x & 0x7fff) : x;
        vb = y & 0x8000 ? -(long)(y & 0x7fff) : y;
    }
    return va > vb ? va - vb : vb - va;
}

static float widened(const void *p, DType dtype, size_t i) {
    if (dtype == DTYPE_F32) return ((const float *)p)[i];
    return stored16_to_f32(((const uint16_t *)p)[i], dtype);
}

// exact: the same bits (ulps 0). Otherwise within one unit in the last place of the stored
// value (relative 2^-7 bf16, 2^-10 f16; a few f32 ulps for f32) plus 1e-6, which covers
// f16's subnormals and a derivative that cancels to near zero (gelu's at x = -0.75).
static void compare(const char *what, DType dtype, size_t n, const void *got, const void *want,
                    int exact) {
    if (!got) return;
    double rel = dtype == DTYPE_BF16 ? 0x1p-7 : dtype == DTYPE_F16 ? 0x1p-10 : 0x1p-21;
    for (size_t i = 0; i < n; i++) {
        double g = widened(got, dtype, i), w = widened(want, dtype, i);
        int ok = exact ? ulps(got, want, dtype, i) == 0
                       : fabs(g - w) <= rel * fabs(w) + 1e-6 || (g != g && w != w);
        if (!ok) {
            fprintf(stderr, "  CHECK failed: %s %s n=%zu: [%zu] %.9g, want %.9g (%ld ulps%s)\n",
                    what, dtype_name(dtype), n, i, g, w, ulps(got, want, dtype, i),
                    exact ? ", must be 0" : "");
            test_failures++;
            return;
        }
    }
}

static int exact_forward(ActivationKind k) {
    return k == ACTIVATION_RELU || k == ACTIVATION_LEAKY_RELU;
}

static void activation_case(ActivationKind kind, DType dtype, size_t n) {
    device_free_all(&dev);
    host_free_all();
    Status st;
    status_clear(&st);
    size_t bytes = n * dtype_size(dtype);
    const float slope = 0.1f;
    void *x = host_values(dtype, n, -4.0f, 4.0f), *want_y = host_alloc(bytes);
    void *d_x = device_upload(&dev, x, bytes);
    void *d_out = device_upload(&dev, x, bytes);  // y poisoned with x
    if (!d_x || !d_out) return;
    if (report("cpu activation_forward",
               cpu->activation_forward(cpu, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                                       .dtype = dtype, .x = x, .y = want_y, .n = n}, &st), &st) ||
        report("gpu activation_forward",
               gpu->activation_forward(gpu, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                                       .dtype = dtype, .x = d_x, .y = d_out, .n = n}, &st), &st))
        return;
    char what[64];
    snprintf(what, sizeof what, "activation_forward kind %d", (int)kind);
    void *got_y = from_device(d_out, bytes);
    compare(what, dtype, n, got_y, want_y, exact_forward(kind));
    free(got_y);
    // backward from the CPU's y on both sides, dx written, then added to an existing dx
    void *dy = host_values(dtype, n, -1.0f, 1.0f);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        void *previous = host_values(dtype, n, -1.0f, 1.0f), *want = host_copy(previous, bytes);
        void *d_y = device_upload(&dev, want_y, bytes), *d_dy = device_upload(&dev, dy, bytes);
        void *d_dx = device_upload(&dev, previous, bytes);
        if (!d_y || !d_dy || !d_dx) return;
        if (report("cpu activation_backward",
                   cpu->activation_backward(cpu, &(ActivationBackwardArgs){.kind = kind,
                                            .slope = slope, .dtype = dtype, .x = x, .y = want_y,
                                            .dy = dy, .dx = want, .n = n, .accumulate = accumulate
                                            }, &st), &st) ||
            report("gpu activation_backward",
                   gpu->activation_backward(gpu, &(ActivationBackwardArgs){.kind = kind,
                                            .slope = slope, .dtype = dtype, .x = d_x, .y = d_y,
                                            .dy = d_dy, .dx = d_dx, .n = n, .accumulate = accumulate
                                            }, &st), &st))
            return;
        snprintf(what, sizeof what, "activation_backward kind %d accumulate %d", (int)kind,
                 accumulate);
        void *got = from_device(d_dx, bytes);
        compare(what, dtype, n, got, want, kind != ACTIVATION_GELU);
        free(got);
    }
    device_free_all(&dev);
}

static void dropout_case(DType dtype, size_t n, float rate, uint64_t seed) {
    device_free_all(&dev);
    host_free_all();
    Status st;
    status_clear(&st);
    size_t bytes = n * dtype_size(dtype), mask_bytes = n * sizeof(float);
    void *x = host_values(dtype, n, -3.0f, 3.0f), *want_y = host_alloc(bytes);
    float *want_mask = host_alloc(mask_bytes);
    void *d_x = device_upload(&dev, x, bytes), *d_y = device_upload(&dev, x, bytes);
    void *d_mask = device_upload(&dev, NULL, mask_bytes);
    if (!d_x || !d_y || !d_mask) return;
    if (report("cpu dropout_forward",
               cpu->dropout_forward(cpu, &(DropoutForwardArgs){.dtype = dtype, .x = x, .y = want_y,
                                    .mask = want_mask, .n = n, .rate = rate, .seed = seed}, &st),
                                        &st) ||
        report("gpu dropout_forward",
               gpu->dropout_forward(gpu, &(DropoutForwardArgs){.dtype = dtype, .x = d_x, .y = d_y,
                                    .mask = (float *)d_mask, .n = n, .rate = rate, .seed = seed},
                                    &st),
               &st))
        return;
    void *got_y = from_device(d_y, bytes);
    compare("dropout_forward y", dtype, n, got_y, want_y, 1);
    free(got_y);
    void *dy = host_values(dtype, n, -1.0f, 1.0f);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        void *previous = host_values(dtype, n, -1.0f, 1.0f), *want = host_copy(previous, bytes);
        void *d_dy = device_upload(&dev, dy, bytes), *d_dx = device_upload(&dev, previous, bytes);
        if (!d_dy || !d_dx) return;
        if (report("cpu dropout_backward",
                   cpu->dropout_backward(cpu, &(DropoutBackwardArgs){.dtype = dtype, .dy = dy,
                                         .mask = want_mask, .dx = want, .n = n,
                                         .accumulate = accumulate}, &st),
                   &st) ||
            report("gpu dropout_backward",
                   gpu->dropout_backward(gpu, &(DropoutBackwardArgs){.dtype = dtype, .dy = d_dy,
                                         .mask = (const float *)d_mask, .dx = d_dx, .n = n,
                                         .accumulate = accumulate}, &st), &st))
            return;
        void *got = from_device(d_dx, bytes);
        compare(accumulate ? "dropout_backward accumulate" : "dropout_backward", dtype, n, got,
                want, 1);
        free(got);
    }
    float *got_mask = from_device(d_mask, mask_bytes);
    compare("dropout_forward mask", DTYPE_F32, n, got_mask, want_mask, 1);
    free(got_mask);
    device_free_all(&dev);
}

static void accumulate_case(DType dtype, size_t n, int count, int accumulate) {
    device_free_all(&dev);
    host_free_all();
    Status st;
    status_clear(&st);
    size_t bytes = n * dtype_size(dtype);
    void *x[BACKEND_ACCUMULATE_MAX], *d_x[BACKEND_ACCUMULATE_MAX];
    for (int k = 0; k < count; k++) {
        x[k] = host_values(dtype, n, -2.0f, 2.0f);
        d_x[k] = device_upload(&dev, x[k], bytes);
        if (!d_x[k]) return;
    }
    void *start = host_values(dtype, n, -2.0f, 2.0f), *want = host_copy(start, bytes);
    void *d_y = device_upload(&dev, start, bytes);
    if (!d_y) return;
    if (report("cpu accumulate",
               cpu->accumulate(cpu, &(AccumulateArgs){.dtype = dtype, .y = want,
                               .x = (const void *const *)x, .count = count, .n = n,
                               .accumulate = accumulate}, &st), &st) ||
        report("gpu accumulate",
               gpu->accumulate(gpu, &(AccumulateArgs){.dtype = dtype, .y = d_y,
                               .x = (const void *const *)d_x, .count = count, .n = n,
                               .accumulate = accumulate}, &st), &st))
        return;
    char what[64];
    snprintf(what, sizeof what, "accumulate %d sources accumulate %d", count, accumulate);
    void *got = from_device(d_y, bytes);
    compare(what, dtype, n, got, want, 1);
    free(got);
    device_free_all(&dev);
}

static void all_cases(DType dtype) {
    static const size_t sizes[] = {1, 1000, (1u << 20) + 3};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int kind = 0; kind < ACTIVATION_COUNT; kind++)
            activation_case((ActivationKind)kind, dtype, sizes[s]);
        dropout_case(dtype, sizes[s], 0.3f, 0x9E3779B97F4A7C15ull + s);
        for (int count = 1; count <= BACKEND_ACCUMULATE_MAX; count++)
            for (int accumulate = 0; accumulate < 2; accumulate++)
                accumulate_case(dtype, sizes[s], count, accumulate);
    }
}

// Returns 77 when the GPU cannot open in `precision` (PRECISION_DEFAULT: f32 storage).
static int run_in(Precision precision) {
    if (cuda_open_in_or_skip(precision, 0, precision_name(precision), &gpu)) return 77;
    dev = (DeviceBuffers){.gpu = gpu, .report = report_failure};
    DType dtype = precision_activation_dtype(precision);
    int before = test_failures;
    all_cases(dtype);
    fprintf(stderr, "%s: %s\n", dtype_name(dtype), test_failures == before ? "ok" : "FAILED");
    device_free_all(&dev);
    cuda_backend_close(gpu);
    gpu = NULL;
    return 0;
}

int main(void) {
    int probe = cuda_probe_or_skip();
    if (probe) return probe;
    cpu = cpu_backend();
    rng_seed(&rng, 31);
    // f32 through the same cases: the several-source accumulate is new to both backends
    if (run_in(PRECISION_DEFAULT) == 77) test_failures++;  // the probe opened it
    int fp16 = run_in(PRECISION_FP16);
    int bf16 = run_in(PRECISION_BF16);
    host_free_all();
    // Skipped only when no 16-bit pass could run and the f32 one found nothing wrong.
    if (fp16 == 77 && bf16 == 77 && !test_failures) return 77;
    return test_exit_code("test_cuda_parity16_elementwise");
}
