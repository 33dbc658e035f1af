// Batch normalisation of channels-last rows (cuda_batchnorm_rows.cu): the [rows, channels]
// case of BatchnormArgs (spatial 1), which NHWC images (rows = n * h * w) and dense
// layers' features (rows = n) both are. Shared by the CUDA backend's .cu files only:
// cuda_batchnorm.cu's ops hand such shapes over when batchnorm_rows_apply says so.
#ifndef TRAINER_CUDA_BATCHNORM_ROWS_H
#define TRAINER_CUDA_BATCHNORM_ROWS_H

#include "kernels/cuda/cuda_internal.h"

// Whether the rows kernels take this shape: spatial 1, several channels (up to 32 768,
// whose partials fit the context's scratch), a tensor large enough to be worth their extra
// launches, and the batchnorm-split lever on.
int batchnorm_rows_apply(const CudaContext *ctx, const BatchnormArgs *a);

// The ops of kernels/backend.h for such shapes; x, y, dy and dx stored as a->dtype.
// The training and the evaluation forward, as the table's two forward entries (evaluation
// reads the running statistics and never writes them).
int batchnorm_rows_forward_training(CudaContext *ctx, const BatchnormArgs *a,
                                    const BatchnormForwardTensors *t, Status *st);
int batchnorm_rows_forward_inference(CudaContext *ctx, const BatchnormArgs *a,
                                     const BatchnormInferenceTensors *t, Status *st);
int batchnorm_rows_backward(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                            const void *dy, const float *gamma, const float *save_mean,
                            const float *save_invstd, void *dx, float *dgamma, float *dbeta,
                            Status *st);
// --sync-batchnorm's (a share of the batch on each rank): dy NULL sums x and x^2.
int batchnorm_rows_share_sums(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                              const void *dy, const float *save_mean, const float *save_invstd,
                              double *sums, float *dgamma, float *dbeta, Status *st);
int batchnorm_rows_forward_with_sums(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                                     void *y, const float *gamma, const float *beta,
                                     const double *sums, float *running_mean,
                                     float *running_var, float *save_mean, float *save_invstd,
                                     Status *st);
int batchnorm_rows_backward_data_with_sums(CudaContext *ctx, const BatchnormArgs *a,
                                           const void *x, const void *dy, const float *gamma,
                                           const float *save_mean, const float *save_invstd,
                                           const double *sums, void *dx, Status *st);

#endif
