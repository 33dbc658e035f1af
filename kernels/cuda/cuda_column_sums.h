// Column sums of a row-major [rows, cols] matrix, rows split over blocks: the bias
// gradient of a dense layer (rows = batch), for sum_rows (cuda_gemm.cu) and the fused
// activation-and-bias backward (cuda_elementwise.cu), which share the split and the order
// of every sum. Shared by the CUDA backend's .cu files only.
//
// Why split the rows. One block per tile of 32 columns, as these kernels first were, keeps
// cols / 32 blocks busy, each thread walking rows / 16 rows one after another. The wide
// MLP (models/wide-mlp.model) at batch 4096 gave each of its 4096 x 4096 gradients 128
// blocks on the H200's 132 SMs, one block of 16 warps per SM with two loads in flight per
// warp: a few KB in flight per SM where the memory needs tens of KB to reach its bandwidth
// (an estimate from the kernel's shape, not a profile), three times a step; the loss's
// per-row sums (4096 x 1) were a single block each. rows <= COLUMN_CHUNK_ROWS, every
// batch of 256 or less, keeps the one-pass kernel: the small-batch steps do not pay a
// second launch.
//
// How. ColumnSplit cuts the rows into `chunks` ranges of `chunk_rows`; block (x = column
// tile, y = chunk) sums its range, thread row ty taking rows first + ty, first + ty + 16,
// ... in ascending order, then a fixed tree over the block's 16 thread rows in shared
// memory (column_tile_total), and writes one partial per column into the context's scratch
// (CudaContext.partials). column_sums_finish's kernel adds each column's partials in chunk
// order and applies beta. With one chunk the first pass writes the result itself.
//
// Deterministic: the split depends on the shape alone (not on the card), and the order of
// every sum is fixed, so a shape gives the same bits every run; no atomics (see
// cuda_channel_reduce.h). The order differs from the CPU's row-by-row sum, so the two
// agree to rounding.
#ifndef TRAINER_CUDA_COLUMN_SUMS_H
#define TRAINER_CUDA_COLUMN_SUMS_H

#include "kernels/cuda/cuda_internal.h"

// Threads across columns (one warp reads 32 neighbouring values of a row) and down rows.
#define COLUMN_SUM_COLS 32
#define COLUMN_SUM_ROWS 16
// Rows per block when split: 16 per thread; batch 4096 is 16 chunks.
#define COLUMN_CHUNK_ROWS 256

typedef struct ColumnSplit {
    int chunks;      // 1: one pass, each block writes its columns' results
    int chunk_rows;  // rows per block (the last chunk may have fewer)
} ColumnSplit;

// ceil(rows / COLUMN_CHUNK_ROWS) chunks, fewer (and longer) where their partials would not
// fit in CUDA_PARTIALS_BYTES of floats.
static inline ColumnSplit column_split(int rows, int cols) {
    ColumnSplit split = {1, rows > 0 ? rows : 0};
    if (rows <= COLUMN_CHUNK_ROWS || cols <= 0) return split;
    long long chunks = ((long long)rows + COLUMN_CHUNK_ROWS - 1) / COLUMN_CHUNK_ROWS;
    long long fit = (long long)(CUDA_PARTIALS_BYTES / sizeof(float)) / cols;
    if (chunks > fit) chunks = fit;
    if (chunks > (long long)CUDA_MAX_BLOCKS) chunks = (long long)CUDA_MAX_BLOCKS;
    if (chunks < 2) return split;
    split.chunks = (int)chunks;
    split.chunk_rows = (int)(((long long)rows + chunks - 1) / chunks);
    return split;
}

static inline dim3 column_sum_block(void) { return dim3(COLUMN_SUM_COLS, COLUMN_SUM_ROWS); }
static inline dim3 column_sum_grid(int cols, ColumnSplit split) {
    return dim3(cuda_blocks_capped((size_t)(cols > 0 ? cols : 0), COLUMN_SUM_COLS),
                (unsigned)split.chunks);
}

// This block's rows: [column_chunk_first, column_chunk_end).
__device__ static inline size_t column_chunk_first(ColumnSplit split) {
    return (size_t)blockIdx.y * (size_t)split.chunk_rows;
}
__device__ static inline size_t column_chunk_end(ColumnSplit split, int rows) {
    size_t end = ((size_t)blockIdx.y + 1) * (size_t)split.chunk_rows;
    return end < (size_t)rows ? end : (size_t)rows;
}

// The tile's column totals from each thread's running sum, by a fixed tree over the thread
// rows; every thread gets its column's total. Every thread of the block must call it.
__device__ static inline float column_tile_total(float sum,
                                                 float (*partial)[COLUMN_SUM_COLS]) {
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    partial[ty][tx] = sum;
    __syncthreads();
    for (unsigned half = COLUMN_SUM_ROWS / 2; half > 0; half /= 2) {
        if (ty < half) partial[ty][tx] += partial[ty + half][tx];
        __syncthreads();
    }
    float total = partial[0][tx];
    __syncthreads();  // read before the next tile overwrites partial[0]
    return total;
}

// Where a block's total of column c goes: out (one chunk; beta == 0 never reads out, which
// may hold NaN) or the chunk's partial.
__device__ static inline void column_total_store(float total, size_t c, int cols, float *out,
                                                 float beta, ColumnSplit split,
                                                 float *partials) {
    if (split.chunks == 1) out[c] = beta == 0.0f ? total : beta * out[c] + total;
    else partials[(size_t)blockIdx.y * (size_t)cols + c] = total;
}

__global__ static void column_partials_total_kernel(float *out, const float *partials,
                                                    int chunks, int cols, float beta) {
    for (size_t c = cuda_grid_thread(); c < (size_t)cols; c += cuda_grid_threads()) {
        float total = partials[c];
        for (int k = 1; k < chunks; k++) total += partials[(size_t)k * (size_t)cols + c];
        out[c] = beta == 0.0f ? total : beta * out[c] + total;
    }
}

// The second pass where the rows were split (nothing to do for one chunk or no out).
static inline int column_sums_finish(const CudaContext *ctx, float *out, ColumnSplit split,
                                     int cols, float beta, Status *st) {
    if (split.chunks < 2 || !out) return 0;
    unsigned grid = cuda_blocks_for((size_t)cols);
    CUDA_CHECK_CONFIG(ctx, "column_partials_total_kernel", grid, CUDA_THREADS, 0,
                      (size_t)split.chunks * (size_t)cols, 64);
    column_partials_total_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        out, (const float *)ctx->partials, split.chunks, cols, beta);
    CUDA_CHECK_LAUNCH("column_partials_total_kernel");
    return 0;
}

#endif
