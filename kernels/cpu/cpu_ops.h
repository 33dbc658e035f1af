// CPU implementations of the op table, one group per file. The plain loops here are
// the reference the CUDA backend is tested against, so they favour clarity; only GEMM,
// where the time goes, is handed to OpenBLAS.
#ifndef TRAINER_CPU_OPS_H
#define TRAINER_CPU_OPS_H

#include "kernels/backend.h"

// cpu_data.c
int cpu_gather_samples(const Backend *b, const GatherArgs *g, const GatherSamplesTensors *t,
                       Status *st);

// cpu_convert.c: 16-bit activation storage, widened to f32 and rounded once on the store.
int cpu_convert(const Backend *b, const ConvertArgs *args, Status *st);
int cpu_layout_convert(const Backend *b, const LayoutConvertArgs *args, Status *st);
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
int cpu_accumulate(const Backend *b, const AccumulateArgs *args, Status *st);

// cpu_gemm.c
int cpu_gemm(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st);
// Triple loop, double accumulation: what the BLAS path is tested against.
void gemm_reference(int transpose_a, int transpose_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *bm, int ldb, float beta, float *c,
                    int ldc);
int cpu_add_bias_rows(const Backend *b, const AddBiasRowsArgs *args, Status *st);
int cpu_gemm_bias_activation(const Backend *b, const GemmArgs *g,
                             const GemmBiasActivationTensors *t, const FusedActivation *act,
                             Status *st);

// cpu_reduce.c
int cpu_sum_rows(const Backend *b, const SumRowsArgs *args, Status *st);

// cpu_elementwise.c
int cpu_activation_forward(const Backend *b, const ActivationForwardArgs *args, Status *st);
int cpu_activation_backward(const Backend *b, const ActivationBackwardArgs *args, Status *st);
int cpu_activation_bias_backward(const Backend *b, const FusedActivation *act,
                                 const ActivationBiasBackwardTensors *t, Status *st);
int cpu_dropout_forward(const Backend *b, const DropoutForwardArgs *args, Status *st);
int cpu_dropout_backward(const Backend *b, const DropoutBackwardArgs *args, Status *st);

// cpu_loss.c
int cpu_softmax_cross_entropy_forward(const Backend *b, const SoftmaxCrossEntropyForwardArgs *args,
                                      Status *st);
int cpu_softmax_cross_entropy_backward(const Backend *b,
                                       const SoftmaxCrossEntropyBackwardArgs *args, Status *st);
int cpu_mse_forward(const Backend *b, const MseForwardArgs *args, Status *st);
int cpu_mse_backward(const Backend *b, const MseBackwardArgs *args, Status *st);

// cpu_batchnorm.c: x, y, dy and dx stored as a->dtype (widened, computed in f32, rounded once).
int cpu_batchnorm_forward_training(const Backend *b, const BatchnormArgs *a,
                                   const BatchnormForwardTrainingTensors *t, Status *st);
int cpu_batchnorm_forward_inference(const Backend *b, const BatchnormArgs *a,
                                    const BatchnormForwardInferenceTensors *t, Status *st);
int cpu_batchnorm_backward(const Backend *b, const BatchnormArgs *a,
                           const BatchnormBackwardTensors *t, Status *st);
int cpu_batchnorm_channel_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                               double *sums, Status *st);
int cpu_batchnorm_forward_with_sums(const Backend *b, const BatchnormArgs *a,
                                    const BatchnormForwardWithSumsTensors *t, Status *st);
int cpu_batchnorm_backward_channel_sums(const Backend *b, const BatchnormArgs *a,
                                        const BatchnormBackwardChannelSumsTensors *t, Status *st);
int cpu_batchnorm_backward_data_with_sums(const Backend *b, const BatchnormArgs *a,
                                          const BatchnormBackwardDataWithSumsTensors *t,
                                              Status *st);

// cpu_conv2d.c: im2col lowering onto the BLAS GEMM, several samples per GEMM.
int cpu_conv2d_least_workspace(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                               Status *st);
int cpu_conv2d_workspace_size(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                              Status *st);
int cpu_conv2d_forward(const Backend *b, const Conv2dGeometry *g, const Conv2dForwardTensors *t,
                       Status *st);
int cpu_conv2d_forward_bias_activation(const Backend *b, const Conv2dGeometry *g,
                                       const Conv2dForwardTensors *t, const FusedActivation *act,
                                       Status *st);
int cpu_conv2d_backward_data(const Backend *b, const Conv2dGeometry *g,
                             const Conv2dBackwardDataTensors *t, Status *st);
int cpu_conv2d_backward_filter(const Backend *b, const Conv2dGeometry *g,
                               const Conv2dBackwardFilterTensors *t, Status *st);

// cpu_conv2d_reference.c: direct convolution loops with double accumulation; what the
// fast path (and later the CUDA backend) is tested against. Same contracts as above.
void conv2d_reference_forward(const Conv2dGeometry *g, const float *x, const float *w,
                              const float *bias, float *y);
void conv2d_reference_backward_data(const Conv2dGeometry *g, const float *dy, const float *w,
                                    float *dx, int accumulate);
void conv2d_reference_backward_filter(const Conv2dGeometry *g, const float *x, const float *dy,
                                      float *dw, float *dbias, int accumulate);

// cpu_pool.c
int cpu_maxpool_forward(const Backend *b, const Pool2dGeometry *g, const MaxpoolForwardTensors *t,
                        Status *st);
int cpu_maxpool_backward(const Backend *b, const Pool2dGeometry *g,
                         const MaxpoolBackwardTensors *t, Status *st);
int cpu_avgpool_forward(const Backend *b, const Pool2dGeometry *g, const AvgpoolForwardTensors *t,
                        Status *st);
int cpu_avgpool_backward(const Backend *b, const Pool2dGeometry *g,
                         const AvgpoolBackwardTensors *t, Status *st);

// cpu_optimizer.c
int cpu_sgd_update(const Backend *b, const SgdUpdateTensors *t, const SgdHyper *h, Status *st);
int cpu_adam_update(const Backend *b, const AdamUpdateTensors *t, const AdamHyper *h, Status *st);
int cpu_sgd_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                         const SgdHyper *h, Status *st);
int cpu_adam_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                          const AdamHyper *h, Status *st);

// cpu_norm.c
int cpu_sum_squares(const Backend *b, const float *x, size_t n, double *sum, Status *st);
int cpu_scale(const Backend *b, float *x, float factor, size_t n, Status *st);

#endif
