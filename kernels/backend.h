// The op table: everything a layer, optimizer or the allocator asks of a device.
//
// The CPU backend (kernels/cpu) is the reference; the CUDA backend implements the same
// table and is tested against it op by op. Pointers passed to ops are device memory of
// that backend. All math is f32, row-major. Every op returns a status code so that a
// backend whose launches can fail reports it instead of crashing.
#ifndef TRAINER_BACKEND_H
#define TRAINER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef enum ActivationKind {
    ACTIVATION_RELU,
    ACTIVATION_LEAKY_RELU,
    ACTIVATION_SIGMOID,
    ACTIVATION_TANH,
    ACTIVATION_GELU,
    ACTIVATION_COUNT
} ActivationKind;

typedef struct SgdHyper {
    float lr, momentum, weight_decay;
    int nesterov;
} SgdHyper;

typedef struct AdamHyper {
    float lr, beta1, beta2, eps, weight_decay;
    int decoupled_weight_decay;  // 1: AdamW, 0: Adam with L2 added to the gradient
    int step;                    // 1-based, for bias correction
} AdamHyper;

typedef struct Backend Backend;
struct Backend {
    const char *name;   // "cpu", "cuda:0"
    void *impl;         // backend-private state

    // ---- memory ----
    // Raw device allocation; the caching policy lives in core/alloc.
    int (*raw_alloc)(const Backend *b, size_t bytes, void **ptr, Status *st);
    void (*raw_free)(const Backend *b, void *ptr);
    size_t (*total_memory)(const Backend *b);
    int (*copy_to_device)(const Backend *b, void *dst, const void *host_src, size_t bytes, Status *st);
    int (*copy_to_host)(const Backend *b, void *host_dst, const void *src, size_t bytes, Status *st);
    int (*copy_on_device)(const Backend *b, void *dst, const void *src, size_t bytes, Status *st);
    int (*fill)(const Backend *b, float *x, float value, size_t n, Status *st);
    int (*synchronize)(const Backend *b, Status *st);

    // ---- linear algebra ----
    // C[m x n] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T, row-major.
    int (*gemm)(const Backend *b, int transpose_a, int transpose_b, int m, int n, int k,
                float alpha, const float *a, int lda, const float *bm, int ldb, float beta,
                float *c, int ldc, Status *st);
    // y[r][c] += bias[c] for every row.
    int (*add_bias_rows)(const Backend *b, float *y, const float *bias, int rows, int cols,
                         Status *st);
    // out[c] = beta * out[c] + sum_r x[r][c]  (bias gradient).
    int (*sum_rows)(const Backend *b, float *out, const float *x, int rows, int cols, float beta,
                    Status *st);
    // y = x + y  (gradient accumulation where an output fans out).
    int (*accumulate)(const Backend *b, float *y, const float *x, size_t n, Status *st);

    // ---- elementwise ----
    int (*activation_forward)(const Backend *b, ActivationKind kind, float slope, const float *x,
                              float *y, size_t n, Status *st);
    // dx = (accumulate ? dx : 0) + dy * f'(x); x and y are the forward input and output.
    int (*activation_backward)(const Backend *b, ActivationKind kind, float slope, const float *x,
                               const float *y, const float *dy, float *dx, size_t n,
                               int accumulate, Status *st);
    // Inverted dropout: y = x * mask, mask = keep ? 1/(1-rate) : 0, drawn from a
    // counter-based hash of (seed, index) so a step is reproducible on any backend.
    int (*dropout_forward)(const Backend *b, const float *x, float *y, float *mask, size_t n,
                           float rate, uint64_t seed, Status *st);
    int (*dropout_backward)(const Backend *b, const float *dy, const float *mask, float *dx,
                            size_t n, int accumulate, Status *st);

    // ---- losses (per-row values stay on the device until the caller reads them) ----
    // probs = softmax(logits); row_loss[r] = -log probs[r][label]; row_correct[r] = 1 when
    // argmax == label. Labels are already validated to lie in [0, classes).
    int (*softmax_cross_entropy_forward)(const Backend *b, const float *logits,
                                         const int32_t *labels, int rows, int classes,
                                         float *probs, float *row_loss, float *row_correct,
                                         Status *st);
    // dlogits = (probs - onehot(label)) * scale.
    int (*softmax_cross_entropy_backward)(const Backend *b, const float *probs,
                                          const int32_t *labels, int rows, int classes,
                                          float scale, float *dlogits, int accumulate,
                                          Status *st);
    // Targets are one-hot labels: row_loss[r] = sum_c (y - t)^2, row_correct as above.
    int (*mse_forward)(const Backend *b, const float *predictions, const int32_t *labels,
                       int rows, int classes, float *row_loss, float *row_correct, Status *st);
    // dy = 2 (y - t) * scale.
    int (*mse_backward)(const Backend *b, const float *predictions, const int32_t *labels,
                        int rows, int classes, float scale, float *dpredictions, int accumulate,
                        Status *st);

    // ---- optimizers (fused: one pass over the parameter) ----
    int (*sgd_update)(const Backend *b, float *param, const float *grad, float *velocity,
                      size_t n, const SgdHyper *h, Status *st);
    int (*adam_update)(const Backend *b, float *param, const float *grad, float *m, float *v,
                       size_t n, const AdamHyper *h, Status *st);
};

// The CPU backend; `threads` <= 0 lets OpenBLAS choose.
const Backend *cpu_backend(void);
void cpu_backend_set_threads(int threads);
// Treat denormal floats as zero on this thread (and the threads it starts later).
void cpu_backend_flush_denormals(void);

// The hash both backends use for dropout: uniform in [0, 1) from (seed, index).
static inline float dropout_uniform(uint64_t seed, uint64_t index) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
