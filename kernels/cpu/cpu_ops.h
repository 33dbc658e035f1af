// CPU implementations of the op table, one group per file. The plain loops here are
// the reference the CUDA backend is tested against, so they favour clarity; only GEMM,
// where the time goes, is handed to OpenBLAS.
#ifndef TRAINER_CPU_OPS_H
#define TRAINER_CPU_OPS_H

#include "kernels/backend.h"

// cpu_data.c
int cpu_gather_samples(const Backend *b, const GatherArgs *g, const uint8_t *images,
                       const uint8_t *labels, const int32_t *indices, float *out_images,
                       int32_t *out_labels, int32_t *first_bad_sample, Status *st);

// cpu_convert.c: 16-bit activation storage, widened to f32 and rounded once on the store.
int cpu_convert(const Backend *b, const void *src, DType src_dtype, void *dst, DType dst_dtype,
                size_t n, int accumulate, Status *st);
int cpu_layout_convert(const Backend *b, DType dtype, int n, int channels, int pixels,
                       Layout from, const void *src, void *dst, int accumulate, Status *st);
// n images of channels x pixels values of value_size bytes, from layout `from` into the
// other one (NCHW <-> NHWC), bit for bit: into dst, or into malloc'd memory (NULL and *st
// set when out of memory; src NULL: the room only, uninitialised). The conv and pool ops
// run NHWC by wrapping their NCHW code in these.
void cpu_layout_transpose(const void *src, void *dst, size_t value_size, int n, int channels,
                          int pixels, Layout from);
void *cpu_layout_copy(const void *src, size_t value_size, int n, int channels, int pixels,
                      Layout from, Status *st);
// n values of src as f32, in malloc'd memory (NULL and *st set when out of memory).
float *cpu_widen(const void *src, DType dtype, size_t n, Status *st);
// f32 room for an op's n outputs stored in dst: dst's values widened when `keep` (an output
// accumulated into), else uninitialised; malloc'd (NULL and *st set when out of memory).
float *cpu_wide_room(const void *dst, DType dtype, size_t n, int keep, Status *st);
// n f32 values into dst stored as dtype, rounded to nearest even.
void cpu_narrow(const float *src, void *dst, DType dtype, size_t n);
// Each of n f32 values replaced by the nearest value dtype can store (nothing for f32).
void cpu_round_values(float *values, DType dtype, size_t n);
int cpu_accumulate(const Backend *b, DType dtype, void *y, const void *const *x, int count,
                   size_t n, int accumulate, Status *st);

// cpu_gemm.c
int cpu_gemm(const Backend *b, const GemmArgs *g, const void *a, const void *bm, void *c,
             Status *st);
// Triple loop, double accumulation: what the BLAS path is tested against.
void gemm_reference(int transpose_a, int transpose_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *bm, int ldb, float beta, float *c,
                    int ldc);
int cpu_add_bias_rows(const Backend *b, float *y, const float *bias, int rows, int cols, Status *st);
int cpu_gemm_bias_activation(const Backend *b, const GemmArgs *g, const void *a, const void *bm,
                             const float *bias, const FusedActivation *act, void *c, Status *st);

// cpu_reduce.c
int cpu_sum_rows(const Backend *b, float *out, const void *x, DType x_dtype, int rows, int cols,
                 float beta, Status *st);

// cpu_elementwise.c
int cpu_activation_forward(const Backend *b, ActivationKind kind, float slope, DType dtype,
                           const void *x, void *y, size_t n, Status *st);
int cpu_activation_backward(const Backend *b, ActivationKind kind, float slope, DType dtype,
                            const void *x, const void *y, const void *dy, void *dx, size_t n,
                            int accumulate, Status *st);
int cpu_activation_bias_backward(const Backend *b, const FusedActivation *act, DType dtype,
                                 const void *y, const void *dy, void *dx, float *dbias, int rows,
                                 int cols, float beta, Status *st);
int cpu_dropout_forward(const Backend *b, DType dtype, const void *x, void *y, float *mask,
                        size_t n, float rate, uint64_t seed, Status *st);
int cpu_dropout_backward(const Backend *b, DType dtype, const void *dy, const float *mask,
                         void *dx, size_t n, int accumulate, Status *st);

// cpu_loss.c
int cpu_softmax_cross_entropy_forward(const Backend *b, const float *logits, const int32_t *labels,
                                      int rows, int classes, float *probs, float *row_stats,
                                      float *dlogits, float scale, Status *st);
int cpu_softmax_cross_entropy_backward(const Backend *b, const float *probs, const int32_t *labels,
                                       int rows, int classes, float scale, float *dlogits,
                                       int accumulate, Status *st);
int cpu_mse_forward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                    int classes, float *row_stats, Status *st);
int cpu_mse_backward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                     int classes, float scale, float *dpredictions, int accumulate, Status *st);

// cpu_batchnorm.c: x, y, dy and dx stored as a->dtype (widened, computed in f32, rounded once).
int cpu_batchnorm_forward_training(const Backend *b, const BatchnormArgs *a, const void *x,
                                   void *y, const float *gamma, const float *beta,
                                   float *running_mean, float *running_var, float *save_mean,
                                   float *save_invstd, Status *st);
int cpu_batchnorm_forward_inference(const Backend *b, const BatchnormArgs *a, const void *x,
                                    void *y, const float *gamma, const float *beta,
                                    const float *running_mean, const float *running_var,
                                    float *save_mean, float *save_invstd, Status *st);
int cpu_batchnorm_backward(const Backend *b, const BatchnormArgs *a, const void *x,
                           const void *dy, const float *gamma, const float *save_mean,
                           const float *save_invstd, void *dx, float *dgamma, float *dbeta,
                           Status *st);
int cpu_batchnorm_channel_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                               double *sums, Status *st);
int cpu_batchnorm_forward_with_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                                    void *y, const float *gamma, const float *beta,
                                    const double *sums, float *running_mean, float *running_var,
                                    float *save_mean, float *save_invstd, Status *st);
int cpu_batchnorm_backward_channel_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                                        const void *dy, const float *save_mean,
                                        const float *save_invstd, double *sums, float *dgamma,
                                        float *dbeta, Status *st);
int cpu_batchnorm_backward_data_with_sums(const Backend *b, const BatchnormArgs *a,
                                          const void *x, const void *dy, const float *gamma,
                                          const float *save_mean, const float *save_invstd,
                                          const double *sums, void *dx, Status *st);

// cpu_conv2d.c: im2col lowering onto the BLAS GEMM, several samples per GEMM.
int cpu_conv2d_least_workspace(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                               Status *st);
int cpu_conv2d_workspace_size(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                              Status *st);
int cpu_conv2d_forward(const Backend *b, const Conv2dGeometry *g, const void *x, const void *w,
                       const float *bias, void *y, void *workspace, size_t workspace_bytes,
                       Status *st);
int cpu_conv2d_forward_bias_activation(const Backend *b, const Conv2dGeometry *g, const void *x,
                                       const void *w, const float *bias,
                                       const FusedActivation *act, void *y, void *workspace,
                                       size_t workspace_bytes, Status *st);
int cpu_conv2d_backward_data(const Backend *b, const Conv2dGeometry *g, const void *dy,
                             const void *w, void *dx, void *workspace, size_t workspace_bytes,
                             int accumulate, Status *st);
int cpu_conv2d_backward_filter(const Backend *b, const Conv2dGeometry *g, const void *x,
                               const void *dy, float *dw, float *dbias, void *workspace,
                               size_t workspace_bytes, int accumulate, Status *st);

// cpu_conv2d_reference.c: direct convolution loops with double accumulation; what the
// fast path (and later the CUDA backend) is tested against. Same contracts as above.
void conv2d_reference_forward(const Conv2dGeometry *g, const float *x, const float *w,
                              const float *bias, float *y);
void conv2d_reference_backward_data(const Conv2dGeometry *g, const float *dy, const float *w,
                                    float *dx, int accumulate);
void conv2d_reference_backward_filter(const Conv2dGeometry *g, const float *x, const float *dy,
                                      float *dw, float *dbias, int accumulate);

// cpu_pool.c
int cpu_maxpool_forward(const Backend *b, const Pool2dGeometry *g, DType dtype, const void *x,
                        void *y, int32_t *argmax, Status *st);
int cpu_maxpool_backward(const Backend *b, const Pool2dGeometry *g, DType dtype, const void *dy,
                         const int32_t *argmax, void *dx, int accumulate, Status *st);
int cpu_avgpool_forward(const Backend *b, const Pool2dGeometry *g, DType dtype, const void *x,
                        void *y, Status *st);
int cpu_avgpool_backward(const Backend *b, const Pool2dGeometry *g, DType dtype, const void *dy,
                         void *dx, int accumulate, Status *st);

// cpu_optimizer.c
int cpu_sgd_update(const Backend *b, float *param, const float *grad, float *velocity, size_t n,
                   const SgdHyper *h, Status *st);
int cpu_adam_update(const Backend *b, float *param, const float *grad, float *m, float *v,
                    size_t n, const AdamHyper *h, Status *st);
int cpu_sgd_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                         const SgdHyper *h, Status *st);
int cpu_adam_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                          const AdamHyper *h, Status *st);

// cpu_norm.c
int cpu_sum_squares(const Backend *b, const float *x, size_t n, double *sum, Status *st);
int cpu_scale(const Backend *b, float *x, float factor, size_t n, Status *st);

#endif
