// CPU implementations of the op table, one family per file. The plain loops here are the
// reference the CUDA backend is tested against, so they favour clarity; only GEMM, where
// the time goes, is handed to OpenBLAS. Each file fills its family's slots of the table
// (cpu_register_<family>_ops, at its bottom); cpu_backend.c calls them once. Callers reach
// the ops through the table (cpu_backend()->op); only the few ops another CPU file calls
// directly are declared here.
#ifndef TRAINER_CPU_OPS_H
#define TRAINER_CPU_OPS_H

#include "kernels/backend.h"

// Each fills the slots of the ops its file defines.
void cpu_register_data_ops(Backend *table);         // cpu_data.c
void cpu_register_convert_ops(Backend *table);      // cpu_convert.c
void cpu_register_gemm_ops(Backend *table);         // cpu_gemm.c
void cpu_register_reduce_ops(Backend *table);       // cpu_reduce.c
void cpu_register_elementwise_ops(Backend *table);  // cpu_elementwise.c
void cpu_register_loss_ops(Backend *table);         // cpu_loss.c
void cpu_register_batchnorm_ops(Backend *table);    // cpu_batchnorm.c
void cpu_register_conv_ops(Backend *table);         // cpu_conv2d.c
void cpu_register_pool_ops(Backend *table);         // cpu_pool.c
void cpu_register_norm_ops(Backend *table);         // cpu_norm.c
void cpu_register_optimizer_ops(Backend *table);    // cpu_optimizer.c

// Ops one CPU file calls in another directly rather than through the table, so that a
// table wrapped to count or fail its ops (tests/unit/test_step_ops.c) sees only the
// layer's own calls: the conv ops lower onto cpu_gemm and cpu_activation_forward,
// gemm_bias_activation onto cpu_activation_forward, and activation_bias_backward sums with
// cpu_sum_rows.
int cpu_gemm(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st);
int cpu_sum_rows(const Backend *b, const SumRowsArgs *args, Status *st);
int cpu_activation_forward(const Backend *b, const ActivationForwardArgs *args, Status *st);

// cpu_convert.c: 16-bit activation storage, widened to f32 and rounded once on the store.
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

// cpu_gemm.c: triple loop, double accumulation: what the BLAS path is tested against.
void gemm_reference(int transpose_a, int transpose_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *bm, int ldb, float beta, float *c,
                    int ldc);

// cpu_conv2d_reference.c: direct convolution loops with double accumulation; what the
// fast path (and later the CUDA backend) is tested against. Same contracts as the ops.
void conv2d_reference_forward(const Conv2dGeometry *g, const float *x, const float *w,
                              const float *bias, float *y);
void conv2d_reference_backward_data(const Conv2dGeometry *g, const float *dy, const float *w,
                                    float *dx, int accumulate);
void conv2d_reference_backward_filter(const Conv2dGeometry *g, const float *x, const float *dy,
                                      float *dw, float *dbias, int accumulate);

#endif
