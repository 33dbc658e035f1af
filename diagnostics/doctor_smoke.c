// The smoke test: a GEMM and a convolution on one device through the CUDA backend,
// against the CPU backend on the same inputs.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/rng.h"
#include "diagnostics/doctor.h"
#include "kernels/cuda/cuda_backend.h"

static int upload(const Backend *b, const float *host, size_t n, float **out, Status *st) {
    TRY(b->raw_alloc(b, n * sizeof *host, (void **)out, st));
    if (host) return b->copy_to_device(b, *out, host, n * sizeof *host, st);
    return b->fill(b, *out, 0.0f, n, st);
}

static double max_relative_error(const float *got, const float *want, size_t n) {
    double worst = 0.0, scale = 1.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - (double)want[i]);
        if (!(e <= worst)) worst = e;  // a NaN wins
    }
    return worst / scale;
}

enum { SMOKE_M = DOCTOR_SMOKE_M, SMOKE_N = DOCTOR_SMOKE_N, SMOKE_K = DOCTOR_SMOKE_K };

// C = A B on backend b, the result copied back into c_host.
static int smoke_gemm(const Backend *b, const float *a_host, const float *b_host, float *c_host,
                      Status *st) {
    float *a = NULL, *bm = NULL, *c = NULL;
    int rc = upload(b, a_host, SMOKE_M * SMOKE_K, &a, st);
    if (!rc) rc = upload(b, b_host, SMOKE_K * SMOKE_N, &bm, st);
    if (!rc) rc = upload(b, NULL, SMOKE_M * SMOKE_N, &c, st);
    if (!rc)
        rc = b->gemm(b,
                     &(GemmArgs){.m = SMOKE_M, .n = SMOKE_N, .k = SMOKE_K, .lda = SMOKE_K,
                                 .ldb = SMOKE_N, .ldc = SMOKE_N, .alpha = 1.0f, .beta = 0.0f},
                     &(GemmTensors){.a = a, .bm = bm, .c = c}, st);
    if (!rc) rc = b->copy_to_host(b, c_host, c, SMOKE_M * SMOKE_N * sizeof *c_host, st);
    b->raw_free(b, a);
    b->raw_free(b, bm);
    b->raw_free(b, c);
    return rc;
}

static const Conv2dGeometry smoke_conv = {
    .batch = 2, .in_channels = 3, .in_h = 10, .in_w = 10, .out_channels = 4, .out_h = 10,
    .out_w = 10, .kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1,
    .pad_left = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1,
};
enum {
    SMOKE_X = 2 * 3 * 10 * 10,
    SMOKE_W = 4 * 3 * 3 * 3,
    SMOKE_BIAS = 4,
    SMOKE_Y = 2 * 4 * 10 * 10,
};

static int smoke_conv2d(const Backend *b, const float *x_host, const float *w_host,
                        const float *bias_host, float *y_host, Status *st) {
    float *x = NULL, *w = NULL, *bias = NULL, *y = NULL;
    void *workspace = NULL;
    size_t workspace_bytes = 0;
    int rc = upload(b, x_host, SMOKE_X, &x, st);
    if (!rc) rc = upload(b, w_host, SMOKE_W, &w, st);
    if (!rc) rc = upload(b, bias_host, SMOKE_BIAS, &bias, st);
    if (!rc) rc = upload(b, NULL, SMOKE_Y, &y, st);
    if (!rc) rc = b->conv2d_workspace_size(b, &smoke_conv, &workspace_bytes, st);
    if (!rc && workspace_bytes) rc = b->raw_alloc(b, workspace_bytes, &workspace, st);
    if (!rc)
        rc = b->conv2d_forward(b, &smoke_conv, &(Conv2dForwardTensors){.x = x, .w = w,
                               .bias = bias, .y = y, .workspace = workspace,
                               .workspace_bytes = workspace_bytes}, st);
    if (!rc) rc = b->copy_to_host(b, y_host, y, SMOKE_Y * sizeof *y_host, st);
    b->raw_free(b, x);
    b->raw_free(b, w);
    b->raw_free(b, bias);
    b->raw_free(b, y);
    b->raw_free(b, workspace);
    return rc;
}

// Full fp32 (no TF32) on both sides, so the two agree to rounding: 1e-4 of the largest
// value is a hundred times the error of a 53-term fp32 dot product.
static const double SMOKE_TOLERANCE = 1e-4;

void doctor_smoke_test(int ordinal, SmokeTest *t) {
    memset(t, 0, sizeof *t);
    Status st;
    status_clear(&st);
    CudaBackendOptions options = {.ordinal = ordinal, .allow_tf32 = 0};
    const Backend *gpu = NULL;
    if (cuda_backend_open(&options, &gpu, &st)) {
        snprintf(t->error, sizeof t->error, "cannot open the CUDA backend: %.600s", st.message);
        return;
    }
    t->ran = 1;
    const Backend *cpu = cpu_backend();
    if (!gpu->gemm || !gpu->conv2d_forward || !gpu->conv2d_workspace_size) {
        snprintf(t->error, sizeof t->error, "the CUDA backend of this build lacks gemm or "
                 "conv2d_forward");
        cuda_backend_close(gpu);
        return;
    }
    float a[SMOKE_M * SMOKE_K], bm[SMOKE_K * SMOKE_N], want[SMOKE_M * SMOKE_N],
        got[SMOKE_M * SMOKE_N];
    float x[SMOKE_X], w[SMOKE_W], bias[SMOKE_BIAS], y_want[SMOKE_Y], y_got[SMOKE_Y];
    Rng rng;
    rng_seed(&rng, 20240501u + (uint64_t)ordinal);
    for (size_t i = 0; i < SMOKE_M * SMOKE_K; i++) a[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_K * SMOKE_N; i++) bm[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_X; i++) x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_W; i++) w[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_BIAS; i++) bias[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    const char *step = "GEMM on the CPU";
    int rc = smoke_gemm(cpu, a, bm, want, &st);
    if (!rc) {
        step = "GEMM on the GPU";
        rc = smoke_gemm(gpu, a, bm, got, &st);
    }
    if (!rc) {
        step = "conv2d on the CPU";
        rc = smoke_conv2d(cpu, x, w, bias, y_want, &st);
    }
    if (!rc) {
        step = "conv2d on the GPU";
        rc = smoke_conv2d(gpu, x, w, bias, y_got, &st);
    }
    cuda_backend_close(gpu);
    if (rc) {
        snprintf(t->error, sizeof t->error, "%s failed: %.600s", step, st.message);
        return;
    }
    t->gemm_error = max_relative_error(got, want, SMOKE_M * SMOKE_N);
    t->conv_error = max_relative_error(y_got, y_want, SMOKE_Y);
    t->passed = t->gemm_error <= SMOKE_TOLERANCE && t->conv_error <= SMOKE_TOLERANCE;
    if (!t->passed)
        snprintf(t->error, sizeof t->error, "the GPU's results differ from the CPU's: GEMM "
                 "error %.3g, conv2d error %.3g (tolerance %.0e)", t->gemm_error, t->conv_error,
                 SMOKE_TOLERANCE);
}
