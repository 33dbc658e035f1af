// CUDA norm ops: the sum of squares behind gradient clipping and the non-finite scan, and
// the scale that clipping applies. The CPU versions in kernels/cpu/cpu_norm.c are the
// reference.
#include "kernels/cuda/cuda_channel_reduce.h"

// Sums of squares in double, split over blocks: pass 1 gives block b the values
// [b * chunk, (b + 1) * chunk), each thread every blockDim-th of them, summed by
// cuda_block_sum's fixed tree into one partial in the context's scratch
// (CudaContext.partials); pass 2, one block, adds the partials (channel_partials_total, in
// a fixed order). The split depends on n alone, so a tensor gives the same bits every run,
// on every card. A tensor of one chunk or less takes one block and one pass.
//
// Why split: this was one block for every tensor, on the reasoning that clipping is rare.
// But fp16's dynamic loss scaling scans every gradient for a non-finite value after every
// step (core/loss_scale.c), and one SM streams a 4096 x 4096 gradient at a small fraction
// of the memory's bandwidth: for the wide MLP in fp16 that scan would take longer than the
// step's GEMMs (an estimate from the kernel's shape; it has not been timed on a card).
static const unsigned SUM_SQUARES_THREADS = 1024;
// Values per block of pass 1: 16 per thread.
static const size_t SUM_SQUARES_CHUNK = (size_t)SUM_SQUARES_THREADS * 16;

__global__ static void sum_squares_kernel(const float *x, size_t n, size_t chunk,
                                          double *sums) {
    __shared__ double partial[32];
    const size_t begin = (size_t)blockIdx.x * chunk;
    const size_t end = begin + chunk < n ? begin + chunk : n;
    double total = 0.0;
#pragma unroll 4
    for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x)
        total += (double)x[i] * (double)x[i];
    total = cuda_block_sum(total, partial);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

__global__ static void sum_squares_total_kernel(const double *partials, int chunks,
                                                double *sum) {
    __shared__ double shared[32];
    double total = channel_partials_total(partials, chunks, shared);
    if (threadIdx.x == 0) *sum = total;
}

static int cuda_sum_squares(const Backend *b, const float *x, size_t n, double *sum,
                            Status *st) {
    CudaContext *ctx = cuda_context(b);
    size_t chunks = (n + SUM_SQUARES_CHUNK - 1) / SUM_SQUARES_CHUNK;
    const size_t room = CUDA_PARTIALS_BYTES / sizeof(double);
    if (chunks > room) chunks = room;
    if (chunks > CUDA_MAX_BLOCKS) chunks = CUDA_MAX_BLOCKS;
    if (chunks < 2) {
        CUDA_CHECK_CONFIG(ctx, "sum_squares_kernel", 1, SUM_SQUARES_THREADS,
                          32 * sizeof(double), n, 64);
        sum_squares_kernel<<<1, SUM_SQUARES_THREADS, 0, ctx->stream>>>(x, n, n, sum);
        CUDA_CHECK_LAUNCH("sum_squares_kernel");
        return 0;
    }
    size_t chunk = (n + chunks - 1) / chunks;
    double *partials = (double *)ctx->partials;
    CUDA_CHECK_CONFIG(ctx, "sum_squares_kernel", (unsigned)chunks, SUM_SQUARES_THREADS,
                      32 * sizeof(double), n, 64);
    sum_squares_kernel<<<(unsigned)chunks, SUM_SQUARES_THREADS, 0, ctx->stream>>>(x, n, chunk,
                                                                                  partials);
    CUDA_CHECK_LAUNCH("sum_squares_kernel");
    CUDA_CHECK_CONFIG(ctx, "sum_squares_total_kernel", 1, SUM_SQUARES_THREADS,
                      32 * sizeof(double), chunks, 32);
    sum_squares_total_kernel<<<1, SUM_SQUARES_THREADS, 0, ctx->stream>>>(partials, (int)chunks,
                                                                         sum);
    CUDA_CHECK_LAUNCH("sum_squares_total_kernel");
    return 0;
}

__global__ static void scale_kernel(float *x, float factor, size_t n) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
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
