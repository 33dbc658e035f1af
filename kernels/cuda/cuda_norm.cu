// CUDA norm ops: the sum of squares behind gradient clipping and the non-finite scan, and
// the scale that clipping applies. The CPU versions in kernels/cpu/cpu_norm.c are the
// reference.
#include "kernels/cuda/cuda_internal.h"

// One block, so the sum needs no second pass and no atomics, and its order is fixed: the
// same tensor gives the same bits every run. It runs once per parameter per clipped step
// (and per layer after a divergence), on tensors of at most a few million values, where
// one block's 1024 threads already stream memory far faster than the step's GEMMs.
static const unsigned SUM_SQUARES_THREADS = 1024;

__global__ static void sum_squares_kernel(const float *x, size_t n, double *sum) {
    __shared__ double partial[32];
    double total = 0.0;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) total += (double)x[i] * (double)x[i];
    total = cuda_block_sum(total, partial);
    if (threadIdx.x == 0) *sum = total;
}

static int cuda_sum_squares(const Backend *b, const float *x, size_t n, double *sum,
                            Status *st) {
    CudaContext *ctx = cuda_context(b);
    CUDA_CHECK_CONFIG(ctx, "sum_squares_kernel", 1, SUM_SQUARES_THREADS, 32 * sizeof(double),
                      n, 64);
    sum_squares_kernel<<<1, SUM_SQUARES_THREADS, 0, ctx->stream>>>(x, n, sum);
    CUDA_CHECK_LAUNCH("sum_squares_kernel");
    return 0;
}

__global__ static void scale_kernel(float *x, float factor, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __fmul_rn(x[i], factor);
}

static int cuda_scale(const Backend *b, float *x, float factor, size_t n, Status *st) {
    if (n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "scale_kernel", grid, CUDA_THREADS, 0, n, 64);
    scale_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(x, factor, n);
    CUDA_CHECK_LAUNCH("scale_kernel");
    return 0;
}

void cuda_register_norm_ops(Backend *table) {
    table->sum_squares = cuda_sum_squares;
    table->scale = cuda_scale;
}
