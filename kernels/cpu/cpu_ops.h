// CPU implementations of the op table, one group per file. The plain loops here are
// the reference the CUDA backend is tested against, so they favour clarity; only GEMM,
// where the time goes, is handed to OpenBLAS.
#ifndef TRAINER_CPU_OPS_H
#define TRAINER_CPU_OPS_H

#include "kernels/backend.h"

// cpu_gemm.c
int cpu_gemm(const Backend *b, int transpose_a, int transpose_b, int m, int n, int k, float alpha,
             const float *a, int lda, const float *bm, int ldb, float beta, float *c, int ldc,
             Status *st);
// Triple loop, double accumulation: what the BLAS path is tested against.
void gemm_reference(int transpose_a, int transpose_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *bm, int ldb, float beta, float *c,
                    int ldc);
int cpu_add_bias_rows(const Backend *b, float *y, const float *bias, int rows, int cols, Status *st);
int cpu_sum_rows(const Backend *b, float *out, const float *x, int rows, int cols, float beta,
                 Status *st);
int cpu_accumulate(const Backend *b, float *y, const float *x, size_t n, Status *st);

// cpu_elementwise.c
int cpu_activation_forward(const Backend *b, ActivationKind kind, float slope, const float *x,
                           float *y, size_t n, Status *st);
int cpu_activation_backward(const Backend *b, ActivationKind kind, float slope, const float *x,
                            const float *y, const float *dy, float *dx, size_t n, int accumulate,
                            Status *st);
int cpu_dropout_forward(const Backend *b, const float *x, float *y, float *mask, size_t n,
                        float rate, uint64_t seed, Status *st);
int cpu_dropout_backward(const Backend *b, const float *dy, const float *mask, float *dx, size_t n,
                         int accumulate, Status *st);

// cpu_loss.c
int cpu_softmax_cross_entropy_forward(const Backend *b, const float *logits, const int32_t *labels,
                                      int rows, int classes, float *probs, float *row_loss,
                                      float *row_correct, Status *st);
int cpu_softmax_cross_entropy_backward(const Backend *b, const float *probs, const int32_t *labels,
                                       int rows, int classes, float scale, float *dlogits,
                                       int accumulate, Status *st);
int cpu_mse_forward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                    int classes, float *row_loss, float *row_correct, Status *st);
int cpu_mse_backward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                     int classes, float scale, float *dpredictions, int accumulate, Status *st);

// cpu_optimizer.c
int cpu_sgd_update(const Backend *b, float *param, const float *grad, float *velocity, size_t n,
                   const SgdHyper *h, Status *st);
int cpu_adam_update(const Backend *b, float *param, const float *grad, float *m, float *v,
                    size_t n, const AdamHyper *h, Status *st);

#endif
