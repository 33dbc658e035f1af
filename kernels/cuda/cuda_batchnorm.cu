// Batch normalisation on [n, channels, spatial] tensors, with our own kernels rather than
// cuDNN's, so that the statistics are computed the way the CPU reference computes them
// (kernels/cpu/cpu_batchnorm.c): sums in double, two passes for the variance, the biased
// variance to normalise and the unbiased one for running_var, running statistics left
// alone when a channel has one value. cuDNN's batchnorm reduces in an order and precision
// of its own choosing, which no test could hold to the reference's.
//
// Two layouts of the same arithmetic, chosen by shape (channel_split in
// cuda_channel_reduce.h), and a third in cuda_batchnorm_rows.cu for large [rows, channels]
// shapes (spatial 1: NHWC images, dense features), whose channels these kernels would read
// one value per memory sector:
//
// One block per channel, where a channel's values fit one chunk (dense layers, small
// batches) or there are more channels than partial sums: the block reduces the channel's
// statistics, then (after the block has them) writes the channel's outputs, all in one
// launch with no scratch memory. A channel's data is read two or three times (training:
// the mean, the variance, then normalising), the later passes often from L2.
//
// Many blocks per channel, where channels are few and long: one block per channel kept
// 32 of an H100's 132 SMs busy on cnn-bn's first layer at batch 1024 (32 channels of
// 1024 x 28 x 28 values), 2.07 ms forward and 1.54 ms backward per step, 67% of that
// model's kernel time with the second layer's. Here each reduction is a launch over
// (chunk, channel) blocks writing partial sums to the context's scratch, and the next
// launch's blocks each add their channel's partials (in the same order, so every block
// gets the same bits) before using the statistic: training forward is three launches
// (sum; squared deviations from the mean; normalise, save, update the running statistics),
// backward two (sum dy and dy * xhat; dgamma, dbeta and dx). The same passes over the
// data as the one-block layout, each now spread over the whole GPU.
//
// Both are deterministic: each thread sums a fixed subset of the values in a fixed order,
// and blocks and partials are combined in fixed trees; a shape gives the same bits every
// run (the two layouts group the sums differently, so they agree to rounding, not bits).
//
// x, y, dy and dx may be stored in bf16 or f16 (BatchnormArgs.dtype): every kernel is
// templated on the storage type (cuda_storage.h), widens each value on the load, and rounds
// y or dx once on the store (dx after adding what it held, when accumulating), as the CPU
// reference does; statistics, sums and partials are as for f32.
//
// Each thread accumulates in double: a channel after a convolution holds 128 * 32 * 32 =
// 131 072 values, and a float sum that long loses most of its bits (see the CPU's notes).
// Double adds cost next to nothing on data-centre GPUs; on consumer ones (1/64 rate)
// they may cost about as much as the memory traffic, a price paid for the reference's
// digits.
#include <math.h>

#include "kernels/cuda/cuda_batchnorm_math.h"
#include "kernels/cuda/cuda_batchnorm_rows.h"
#include "kernels/cuda/cuda_channel_reduce.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_storage.h"

// Larger blocks keep more loads in flight per SM, which is what a one-block-per-channel
// layout lives on. __launch_bounds__ below makes the compiler fit the registers to it.
#define BN_THREADS 512
#define BN_MAX_WARPS (BN_THREADS / 32)
// The static shared memory of the reducing kernels: cuda_block_sum's double per warp.
#define BN_SHARED_BYTES (BN_MAX_WARPS * sizeof(double))

// A channel's values are walked with cuda_channel_reduce.h's ChannelCursor: thread t of a
// one-block-per-channel kernel visits flat indices t, t + B, t + 2B, ... (B = blockDim.x)
// of its channel until the sample index reaches n.

// ---- one block per channel ----------------------------------------------------------------

// Training forward, one block per channel (grid-stride over channels): the mean, then the
// sum of squared deviations from it (two passes, as the CPU: E[x^2] - E[x]^2 cancels badly
// when |mean| >> std), then y, the saved statistics and the running statistics.
// y may alias x: each element is read and then written by the same thread.
template <typename T>
__global__ static void __launch_bounds__(BN_THREADS)
batchnorm_forward_training_kernel(const T *x, T *y, const float *gamma,
                                  const float *beta, float *running_mean, float *running_var,
                                  float *save_mean, float *save_invstd, int n, int channels,
                                  int spatial, float momentum, float eps) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    double m = (double)n * (double)spatial;
    for (int c = blockIdx.x; c < channels; c += gridDim.x) {
        double sum = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur))
            sum += (double)storage_load(x, channel_at(cur, c, channels));
        double mean = cuda_block_sum(sum, shared) / m;

        double squares = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            double d = (double)storage_load(x, channel_at(cur, c, channels)) - mean;
            squares += d * d;
        }
        squares = cuda_block_sum(squares, shared);

        float invstd = (float)channel_invstd(squares, m, eps);
        ChannelAffine a = channel_affine((float)mean, invstd, gamma[c], beta[c]);
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            storage_store(y, at, normalise(storage_load(x, at), a.scale, a.shift));
        }
        if (threadIdx.x == 0)
            keep_statistics(c, mean, squares, m, momentum, eps, save_mean, save_invstd,
                            running_mean, running_var);
    }
}

// Evaluation forward: elementwise with per-channel constants, so it needs no reduction
// and can spread a channel over many blocks: blockIdx.y picks the channel (grid-stride,
// since gridDim.y is at most 65 535), blockIdx.x a slice of its values. Every thread
// computes the channel's constants itself (one double sqrt per thread per channel), which
// is cheaper than a second launch or a barrier.
template <typename T>
__global__ static void batchnorm_forward_inference_kernel(
    const T *x, T *y, const float *gamma, const float *beta, const float *running_mean,
    const float *running_var, float *save_mean, float *save_invstd, int n, int channels,
    int spatial, float eps) {
    int start = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
    for (int c = blockIdx.y; c < channels; c += gridDim.y) {
        float mean = running_mean[c];
        float invstd = (float)(1.0 / sqrt((double)running_var[c] + (double)eps));
        if (start == 0) {
            if (save_mean) save_mean[c] = mean;
            if (save_invstd) save_invstd[c] = invstd;
        }
        ChannelAffine a = channel_affine(mean, invstd, gamma[c], beta[c]);
        for (ChannelCursor cur = channel_cursor(start, step, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            storage_store(y, at, normalise(storage_load(x, at), a.scale, a.shift));
        }
    }
}

// Backward, one block per channel: dbeta = sum dy and dgamma = sum dy * xhat, then,
// unless dx is NULL,
//   batch statistics: dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
//   fixed statistics: dx = gamma * invstd * dy.
// dx may alias dy: the reductions finish (cuda_block_sum's barriers) before any dx is
// written, and each element is then read and written by the same thread.
template <typename T>
__global__ static void __launch_bounds__(BN_THREADS)
batchnorm_backward_kernel(const T *x, const T *dy, const float *gamma,
                          const float *save_mean, const float *save_invstd, T *dx,
                          float *dgamma, float *dbeta, int n, int channels, int spatial,
                          int batch_statistics, int accumulate_dx, int accumulate_params) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    double m = (double)n * (double)spatial;
    for (int c = blockIdx.x; c < channels; c += gridDim.x) {
        float mean = save_mean[c], invstd = save_invstd[c];
        double sum_dy = 0.0, sum_dy_xhat = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            add_backward_terms(x, dy, channel_at(cur, c, channels), mean, invstd, &sum_dy,
                               &sum_dy_xhat);
        }
        sum_dy = cuda_block_sum(sum_dy, shared);
        sum_dy_xhat = cuda_block_sum(sum_dy_xhat, shared);
        if (threadIdx.x == 0)
            write_param_gradients(c, sum_dy, sum_dy_xhat, accumulate_params, dgamma, dbeta);
        if (!dx) continue;
        float scale = gamma[c] * invstd;
        float mean_dy = batch_statistics ? (float)(sum_dy / m) : 0.0f;
        float mean_dy_xhat = batch_statistics ? (float)(sum_dy_xhat / m) : 0.0f;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            store_input_gradient(x, dy, dx, channel_at(cur, c, channels), mean, invstd, scale,
                                 mean_dy, mean_dy_xhat, accumulate_dx);
        }
    }
}

// ---- many blocks per channel ------------------------------------------------------------
//
// Block (x, y) = (chunk, channel) of a ChannelSplit, CHANNEL_REDUCE_THREADS threads; each
// reduction's partials are [channels][chunks] doubles in the context's scratch, `chunks`
// passed explicitly (a launch that only finishes the sums has one block per channel).
// Each block of a later pass adds a channel's partials itself (channel_partials_total:
// the same order in every block, so every block sees the same statistic), rather than a
// separate launch writing the channel's total for the blocks to read.

// How many [channels][chunks] partials each of the two reductions of a pass may use: the
// scratch holds both.
static const size_t BN_SPLIT_ROOM = CUDA_PARTIALS_BYTES / (2 * sizeof(double));

// Training forward, pass 1: the sum of each chunk.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_sum_partial_kernel(const T *x, int channels, int spatial, long long m,
                             long long chunk, double *sums) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    int c = blockIdx.y;
    long long end = chunk_end(chunk, m);
    double sum = 0.0;
    for (ChannelCursor cur = chunk_cursor(chunk, spatial); cur.k < end; channel_advance(&cur))
        sum += (double)storage_load(x, channel_at(cur, c, channels));
    sum = cuda_block_sum(sum, shared);
    if (threadIdx.x == 0) sums[(size_t)c * gridDim.x + blockIdx.x] = sum;
}

// Training forward, pass 2: each chunk's squared deviations from the channel's mean
// (the two-pass variance, as the CPU computes it).
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_squares_partial_kernel(const T *x, int channels, int spatial, long long m,
                                 long long chunk, const double *sums, double *squares) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    int c = blockIdx.y, chunks = gridDim.x;
    double mean = channel_partials_total(sums + (size_t)c * chunks, chunks, shared) / (double)m;
    long long end = chunk_end(chunk, m);
    double sum = 0.0;
    for (ChannelCursor cur = chunk_cursor(chunk, spatial); cur.k < end; channel_advance(&cur)) {
        double d = (double)storage_load(x, channel_at(cur, c, channels)) - mean;
        sum += d * d;
    }
    sum = cuda_block_sum(sum, shared);
    if (threadIdx.x == 0) squares[(size_t)c * chunks + blockIdx.x] = sum;
}

// Training forward, pass 3: y over each chunk from the channel's statistics; the first
// block of each channel saves them and updates the running statistics. y may alias x:
// passes 1 and 2 only read x, and here each element is read and then written by the
// same thread.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_normalise_split_kernel(const T *x, T *y, const float *gamma,
                                 const float *beta, float *running_mean, float *running_var,
                                 float *save_mean, float *save_invstd, int channels,
                                 int spatial, long long m, long long chunk, const double *sums,
                                 const double *squares, float momentum, float eps) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    int c = blockIdx.y, chunks = gridDim.x;
    double count = (double)m;
    double mean = channel_partials_total(sums + (size_t)c * chunks, chunks, shared) / count;
    double deviations = channel_partials_total(squares + (size_t)c * chunks, chunks, shared);
    float invstd = (float)channel_invstd(deviations, count, eps);
    ChannelAffine a = channel_affine((float)mean, invstd, gamma[c], beta[c]);
    long long end = chunk_end(chunk, m);
    for (ChannelCursor cur = chunk_cursor(chunk, spatial); cur.k < end; channel_advance(&cur)) {
        size_t at = channel_at(cur, c, channels);
        storage_store(y, at, normalise(storage_load(x, at), a.scale, a.shift));
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        keep_statistics(c, mean, deviations, count, momentum, eps, save_mean, save_invstd,
                        running_mean, running_var);
}

// Block (chunk, c)'s pair of sums over its chunk into the [channels][chunks] partials:
// backward's pass 1 (Backward: dy is always set, so each value adds dy and dy * xhat
// without add_share_value's test) and --sync-batchnorm's share pass 1 (add_share_value).
template <bool Backward, typename T>
__device__ static inline void chunk_pair_partials(const T *x, const T *dy, float mean,
                                                  float invstd, int c, int channels,
                                                  int spatial, long long m, long long chunk,
                                                  double *firsts, double *seconds) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    long long end = chunk_end(chunk, m);
    double first = 0.0, second = 0.0;
    for (ChannelCursor cur = chunk_cursor(chunk, spatial); cur.k < end; channel_advance(&cur)) {
        size_t at = channel_at(cur, c, channels);
        if (Backward)
            add_backward_terms(x, dy, at, mean, invstd, &first, &second);
        else
            add_share_value(x, dy, at, mean, invstd, &first, &second);
    }
    first = cuda_block_sum(first, shared);
    second = cuda_block_sum(second, shared);
    if (threadIdx.x == 0) {
        firsts[(size_t)c * gridDim.x + blockIdx.x] = first;
        seconds[(size_t)c * gridDim.x + blockIdx.x] = second;
    }
}

// Backward, pass 1: each chunk's sum of dy and of dy * xhat.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_backward_partial_kernel(const T *x, const T *dy, const float *save_mean,
                                  const float *save_invstd, int channels, int spatial,
                                  long long m, long long chunk, double *sums_dy,
                                  double *sums_dy_xhat) {
    int c = blockIdx.y;
    chunk_pair_partials<true>(x, dy, save_mean[c], save_invstd[c], c, channels, spatial, m,
                              chunk, sums_dy, sums_dy_xhat);
}

// Backward, pass 2: the channel's sums; the first block of each channel writes dgamma and
// dbeta, and, unless dx is NULL (then the grid is one block per channel), every block
// writes dx over its chunk. dx may alias dy: pass 1 has read all of dy, and here each
// element is read and then written by the same thread.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_backward_split_kernel(const T *x, const T *dy, const float *gamma,
                                const float *save_mean, const float *save_invstd, T *dx,
                                float *dgamma, float *dbeta, int channels, int spatial,
                                long long m, long long chunk, int chunks,
                                const double *sums_dy, const double *sums_dy_xhat,
                                int batch_statistics, int accumulate_dx,
                                int accumulate_params) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    int c = blockIdx.y;
    double sum_dy = channel_partials_total(sums_dy + (size_t)c * chunks, chunks, shared);
    double sum_dy_xhat =
        channel_partials_total(sums_dy_xhat + (size_t)c * chunks, chunks, shared);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        write_param_gradients(c, sum_dy, sum_dy_xhat, accumulate_params, dgamma, dbeta);
    if (!dx) return;
    float mean = save_mean[c], invstd = save_invstd[c];
    float scale = gamma[c] * invstd;
    float mean_dy = batch_statistics ? (float)(sum_dy / (double)m) : 0.0f;
    float mean_dy_xhat = batch_statistics ? (float)(sum_dy_xhat / (double)m) : 0.0f;
    long long end = chunk_end(chunk, m);
    for (ChannelCursor cur = chunk_cursor(chunk, spatial); cur.k < end; channel_advance(&cur)) {
        store_input_gradient(x, dy, dx, channel_at(cur, c, channels), mean, invstd, scale,
                             mean_dy, mean_dy_xhat, accumulate_dx);
    }
}

// ---- the ops ------------------------------------------------------------------------------

// The kernels index a channel's values with int (sample, offset) pairs stepped by at most
// 65 535 * BN_THREADS, so n and spatial must leave room for that step in an int.
static int check_sizes(const char *op, int n, int channels, int spatial, Status *st) {
    if (n <= 0 || channels <= 0 || spatial <= 0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "%s: bad sizes n=%d channels=%d spatial=%d",
                           op, n, channels, spatial);
    const long long headroom = (long long)CUDA_MAX_BLOCKS * BN_THREADS;
    if ((long long)n + headroom > 2147483647LL || (long long)spatial + headroom > 2147483647LL) {
        status_fail(st, STATUS_RUNTIME_ERROR, "%s: n=%d or spatial=%d is too large for the "
                    "CUDA kernels' 32-bit indices", op, n, spatial);
        status_hint(st, "use a smaller batch or image");
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

static unsigned channel_blocks(int channels) {
    return (unsigned)((size_t)channels < CUDA_MAX_BLOCKS ? (size_t)channels : CUDA_MAX_BLOCKS);
}

// The tensor's element count, for the launch check. The kernels reach every element by a
// size_t offset (channel_at); their int parts (sample, offset, channel) stay below n,
// spatial and channels, with the step's headroom checked by check_sizes.
static size_t bn_elements(int n, int channels, int spatial) {
    return (size_t)n * (size_t)channels * (size_t)spatial;
}

// How a layer's channels are spread: chunks >= 2 runs the many-blocks kernels. With the
// batchnorm-split lever off (base/lever.h), one block per channel for every shape, as
// before the split existed, to measure what it saves.
static ChannelSplit bn_split(const CudaContext *ctx, const BatchnormArgs *a) {
    long long m = (long long)a->n * a->spatial;
    if (lever_off(ctx->disabled_levers, LEVER_BATCHNORM_SPLIT)) {
        ChannelSplit whole = {0, m};
        return whole;
    }
    return channel_split(m, a->channels, BN_SPLIT_ROOM);
}

// Training forward over many blocks per channel: three launches (see the kernels).
template <typename T>
static int forward_training_split(CudaContext *ctx, const BatchnormArgs *a, ChannelSplit split,
                                  const T *x, T *y, const float *gamma,
                                  const float *beta, float *running_mean, float *running_var,
                                  float *save_mean, float *save_invstd, Status *st) {
    int channels = a->channels, spatial = a->spatial;
    long long m = (long long)a->n * spatial;
    double *sums = (double *)ctx->partials, *squares = sums + BN_SPLIT_ROOM;
    dim3 grid((unsigned)split.chunks, (unsigned)channels);
    size_t elements = bn_elements(a->n, channels, spatial);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_sum_partial_kernel", grid, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_sum_partial_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, channels, spatial, m, split.chunk, sums);
    CUDA_CHECK_LAUNCH("batchnorm_sum_partial_kernel");
    CUDA_CHECK_CONFIG(ctx, "batchnorm_squares_partial_kernel", grid, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_squares_partial_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, channels, spatial, m, split.chunk, sums, squares);
    CUDA_CHECK_LAUNCH("batchnorm_squares_partial_kernel");
    CUDA_CHECK_CONFIG(ctx, "batchnorm_normalise_split_kernel", grid, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_normalise_split_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, channels, spatial,
        m, split.chunk, sums, squares, a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_normalise_split_kernel");
    return 0;
}

template <typename T>
static int forward_training_channels(CudaContext *ctx, const BatchnormArgs *a, const T *x, T *y,
                                     const float *gamma, const float *beta, float *running_mean,
                                     float *running_var, float *save_mean, float *save_invstd,
                                     Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    ChannelSplit split = bn_split(ctx, a);
    if (split.chunks >= 2)
        return forward_training_split(ctx, a, split, x, y, gamma, beta, running_mean,
                                      running_var, save_mean, save_invstd, st);
    unsigned grid = channel_blocks(channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_forward_training_kernel", grid, BN_THREADS,
                      BN_SHARED_BYTES, bn_elements(n, channels, spatial), 64);
    batchnorm_forward_training_kernel<<<grid, BN_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, n, channels,
        spatial, a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_forward_training_kernel");
    return 0;
}

template <typename T>
static int forward_inference_channels(CudaContext *ctx, const BatchnormArgs *a, const T *x,
                                      T *y, const float *gamma, const float *beta,
                                      const float *running_mean, const float *running_var,
                                      float *save_mean, float *save_invstd, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    // Enough blocks along x to cover one channel's values (capped: grid-stride), and one
    // row of blocks per channel (capped at gridDim.y's limit: grid-stride too).
    size_t per_channel = (size_t)n * (size_t)spatial;
    dim3 grid(cuda_blocks_for(per_channel), channel_blocks(channels));
    CUDA_CHECK_CONFIG(ctx, "batchnorm_forward_inference_kernel", grid, CUDA_THREADS, 0,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_forward_inference_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, n, channels,
        spatial, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_forward_inference_kernel");
    return 0;
}

// Training and evaluation share their checks and the choice of layout (the table's entries
// below): the rows kernels where batchnorm_rows_apply says so, else the channel kernels.
static int check_forward(const Backend *b, const BatchnormArgs *a, const char *op, Status *st) {
    TRY(backend_dtype_check(b, a->dtype, op, st));
    return check_sizes(op, a->n, a->channels, a->spatial, st);
}

// Backward over many blocks per channel: two launches (see the kernels); without dx the
// second only finishes the sums, one block per channel.
template <typename T>
static int backward_split(CudaContext *ctx, const BatchnormArgs *a, ChannelSplit split,
                          const T *x, const T *dy, const float *gamma,
                          const float *save_mean, const float *save_invstd, T *dx,
                          float *dgamma, float *dbeta, Status *st) {
    int channels = a->channels, spatial = a->spatial;
    long long m = (long long)a->n * spatial;
    double *sums_dy = (double *)ctx->partials, *sums_dy_xhat = sums_dy + BN_SPLIT_ROOM;
    size_t elements = bn_elements(a->n, channels, spatial);
    dim3 grid((unsigned)split.chunks, (unsigned)channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_backward_partial_kernel", grid, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_backward_partial_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, dy, save_mean, save_invstd, channels, spatial, m, split.chunk, sums_dy,
        sums_dy_xhat);
    CUDA_CHECK_LAUNCH("batchnorm_backward_partial_kernel");
    dim3 finish(dx ? (unsigned)split.chunks : 1u, (unsigned)channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_backward_split_kernel", finish, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_backward_split_kernel<<<finish, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta, channels, spatial, m,
        split.chunk, split.chunks, sums_dy, sums_dy_xhat, a->batch_statistics, a->accumulate_dx,
        a->accumulate_params);
    CUDA_CHECK_LAUNCH("batchnorm_backward_split_kernel");
    return 0;
}

template <typename T>
static int backward_stored(const Backend *b, const BatchnormArgs *a, const T *x, const T *dy,
                           const float *gamma, const float *save_mean, const float *save_invstd,
                           T *dx, float *dgamma, float *dbeta, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_sizes("batchnorm_backward", n, channels, spatial, st));
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a))
        return batchnorm_rows_backward(ctx, a, x, dy, gamma, save_mean, save_invstd, dx, dgamma,
                                       dbeta, st);
    ChannelSplit split = bn_split(ctx, a);
    if (split.chunks >= 2)
        return backward_split(ctx, a, split, x, dy, gamma, save_mean, save_invstd, dx, dgamma,
                              dbeta, st);
    unsigned grid = channel_blocks(channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_backward_kernel", grid, BN_THREADS, BN_SHARED_BYTES,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_backward_kernel<<<grid, BN_THREADS, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta, n, channels, spatial,
        a->batch_statistics, a->accumulate_dx, a->accumulate_params);
    CUDA_CHECK_LAUNCH("batchnorm_backward_kernel");
    return 0;
}

// ---- statistics summed over processes (--sync-batchnorm) --------------------------------
//
// The CPU reference's notes (cpu_batchnorm.c) say why sum x and sum x^2 in double. Each
// rank sums its share (the same layouts as above: one block per channel, many with
// partials in the context's scratch, or cuda_batchnorm_rows.cu's channels-last rows), the
// caller adds the sums over the ranks on the device (NCCL), and elementwise kernels finish
// from the totals; those read the count from the summed buffer, so the host never waits
// for the sums.

// One block per channel (grid-stride over channels).
template <typename T>
__global__ static void __launch_bounds__(BN_THREADS)
batchnorm_share_sums_kernel(const T *x, const T *dy, const float *save_mean,
                            const float *save_invstd, double *sums, float *dgamma,
                            float *dbeta, int n, int channels, int spatial,
                            int accumulate_params) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    for (int c = blockIdx.x; c < channels; c += gridDim.x) {
        float mean = dy ? save_mean[c] : 0.0f, invstd = dy ? save_invstd[c] : 0.0f;
        double first = 0.0, second = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur))
            add_share_value(x, dy, channel_at(cur, c, channels), mean, invstd, &first, &second);
        first = cuda_block_sum(first, shared);
        second = cuda_block_sum(second, shared);
        if (threadIdx.x == 0)
            keep_share_sums(c, channels, first, second, sums, dgamma, dbeta, accumulate_params);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) sums[2 * channels] = (double)n * (double)spatial;
}

// Many blocks per channel, pass 1: each chunk's two sums into the partials.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_share_partial_kernel(const T *x, const T *dy, const float *save_mean,
                               const float *save_invstd, int channels, int spatial,
                               long long m, long long chunk, double *firsts,
                               double *seconds) {
    int c = blockIdx.y;
    float mean = dy ? save_mean[c] : 0.0f, invstd = dy ? save_invstd[c] : 0.0f;
    chunk_pair_partials<false>(x, dy, mean, invstd, c, channels, spatial, m, chunk, firsts,
                               seconds);
}

// Many blocks per channel, pass 2: one block per channel adds its partials.
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
batchnorm_share_total_kernel(const double *firsts, const double *seconds, int chunks,
                             double *sums, float *dgamma, float *dbeta, int channels,
                             long long m, int accumulate_params) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    int c = blockIdx.x;
    double first = channel_partials_total(firsts + (size_t)c * chunks, chunks, shared);
    double second = channel_partials_total(seconds + (size_t)c * chunks, chunks, shared);
    if (threadIdx.x == 0)
        keep_share_sums(c, channels, first, second, sums, dgamma, dbeta, accumulate_params);
    if (c == 0 && threadIdx.x == 0) sums[2 * channels] = (double)m;
}

// Training forward from the summed statistics: elementwise, blockIdx.y the channel and
// blockIdx.x a slice of its values, as the inference kernel; the first thread of each
// channel saves the statistics and moves the running ones (also on a rank with no values,
// so that every rank keeps the same running statistics).
template <typename T>
__global__ static void batchnorm_normalise_with_sums_kernel(
    const T *x, T *y, const float *gamma, const float *beta, const double *sums,
    float *running_mean, float *running_var, float *save_mean, float *save_invstd, int n,
    int channels, int spatial, float momentum, float eps) {
    int start = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
    double m = sums[2 * channels];
    if (!(m >= 1.0)) return;  // no values on any rank: nothing to normalise
    for (int c = blockIdx.y; c < channels; c += gridDim.y) {
        SummedStatistics stats = summed_statistics(sums, c, channels, m, eps);
        ChannelAffine a = channel_affine((float)stats.mean, stats.invstd, gamma[c], beta[c]);
        for (ChannelCursor cur = channel_cursor(start, step, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            storage_store(y, at, normalise(storage_load(x, at), a.scale, a.shift));
        }
        if (start == 0)
            keep_summed_statistics(c, stats, m, momentum, save_mean, save_invstd, running_mean,
                                   running_var);
    }
}

// dx from the summed sum dy and sum dy * xhat, laid out as the normalising kernel.
template <typename T>
__global__ static void batchnorm_input_gradient_with_sums_kernel(
    const T *x, const T *dy, const float *gamma, const float *save_mean,
    const float *save_invstd, const double *sums, T *dx, int n, int channels, int spatial,
    int accumulate_dx) {
    int start = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
    double m = sums[2 * channels];
    if (!(m >= 1.0)) return;
    for (int c = blockIdx.y; c < channels; c += gridDim.y) {
        float mean = save_mean[c], invstd = save_invstd[c], scale = gamma[c] * invstd;
        float mean_dy = (float)(sums[c] / m), mean_dy_xhat = (float)(sums[channels + c] / m);
        for (ChannelCursor cur = channel_cursor(start, step, spatial); cur.s < n;
             channel_advance(&cur)) {
            store_input_gradient(x, dy, dx, channel_at(cur, c, channels), mean, invstd, scale,
                                 mean_dy, mean_dy_xhat, accumulate_dx);
        }
    }
}

// A share may hold no samples (n == 0); the kernels' index limits are n's otherwise.
static int check_share_sizes(const char *op, int n, int channels, int spatial, Status *st) {
    if (n < 0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "%s: bad sizes n=%d channels=%d spatial=%d",
                           op, n, channels, spatial);
    return check_sizes(op, n > 0 ? n : 1, channels, spatial, st);
}

// A share's two sums (forward when dy is NULL), in the layout bn_split picks.
template <typename T>
static int share_sums(const Backend *b, const char *op, const BatchnormArgs *a, const T *x,
                      const T *dy, const float *save_mean, const float *save_invstd,
                      double *sums, float *dgamma, float *dbeta, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_share_sizes(op, n, channels, spatial, st));
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a))
        return batchnorm_rows_share_sums(ctx, a, x, dy, save_mean, save_invstd, sums, dgamma,
                                         dbeta, st);
    size_t elements = bn_elements(n, channels, spatial);
    ChannelSplit split = bn_split(ctx, a);
    if (split.chunks < 2) {
        unsigned grid = channel_blocks(channels);
        CUDA_CHECK_CONFIG(ctx, "batchnorm_share_sums_kernel", grid, BN_THREADS, BN_SHARED_BYTES,
                          elements, 64);
        batchnorm_share_sums_kernel<<<grid, BN_THREADS, 0, ctx->stream>>>(
            x, dy, save_mean, save_invstd, sums, dgamma, dbeta, n, channels, spatial,
            a->accumulate_params);
        CUDA_CHECK_LAUNCH("batchnorm_share_sums_kernel");
        return 0;
    }
    long long m = (long long)n * spatial;
    double *firsts = (double *)ctx->partials, *seconds = firsts + BN_SPLIT_ROOM;
    dim3 grid((unsigned)split.chunks, (unsigned)channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_share_partial_kernel", grid, CHANNEL_REDUCE_THREADS,
                      BN_SHARED_BYTES, elements, 64);
    batchnorm_share_partial_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        x, dy, save_mean, save_invstd, channels, spatial, m, split.chunk, firsts, seconds);
    CUDA_CHECK_LAUNCH("batchnorm_share_partial_kernel");
    CUDA_CHECK_CONFIG(ctx, "batchnorm_share_total_kernel", (unsigned)channels,
                      CHANNEL_REDUCE_THREADS, BN_SHARED_BYTES, elements, 64);
    batchnorm_share_total_kernel<<<(unsigned)channels, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        firsts, seconds, split.chunks, sums, dgamma, dbeta, channels, m, a->accumulate_params);
    CUDA_CHECK_LAUNCH("batchnorm_share_total_kernel");
    return 0;
}


// The grid of the elementwise kernels: a channel's values along x, channels along y.
static dim3 elementwise_grid(const BatchnormArgs *a) {
    return dim3(cuda_blocks_for((size_t)a->n * (size_t)a->spatial), channel_blocks(a->channels));
}

template <typename T>
static int forward_with_sums_stored(const Backend *b, const BatchnormArgs *a, const T *x, T *y,
                                    const float *gamma, const float *beta, const double *sums,
                                    float *running_mean, float *running_var, float *save_mean,
                                    float *save_invstd, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_share_sizes("batchnorm_forward_with_sums", n, channels, spatial, st));
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a))
        return batchnorm_rows_forward_with_sums(ctx, a, x, y, gamma, beta, sums, running_mean,
                                                running_var, save_mean, save_invstd, st);
    dim3 grid = elementwise_grid(a);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_normalise_with_sums_kernel", grid, CUDA_THREADS, 0,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_normalise_with_sums_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, sums, running_mean, running_var, save_mean, save_invstd, n, channels,
        spatial, a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_normalise_with_sums_kernel");
    return 0;
}

template <typename T>
static int backward_data_with_sums_stored(const Backend *b, const BatchnormArgs *a, const T *x,
                                          const T *dy, const float *gamma,
                                          const float *save_mean, const float *save_invstd,
                                          const double *sums, T *dx, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_share_sizes("batchnorm_backward_data_with_sums", n, channels, spatial, st));
    if (n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a))
        return batchnorm_rows_backward_data_with_sums(ctx, a, x, dy, gamma, save_mean,
                                                      save_invstd, sums, dx, st);
    dim3 grid = elementwise_grid(a);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_input_gradient_with_sums_kernel", grid, CUDA_THREADS, 0,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_input_gradient_with_sums_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, sums, dx, n, channels, spatial, a->accumulate_dx);
    CUDA_CHECK_LAUNCH("batchnorm_input_gradient_with_sums_kernel");
    return 0;
}

// ---- the table's entries: x, y, dy and dx stored as a->dtype ----------------------------

static int cuda_batchnorm_forward_training(const Backend *b, const BatchnormArgs *a,
                                           const BatchnormForwardTensors *t, Status *st) {
    TRY(check_forward(b, a, "batchnorm_forward_training", st));
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a)) return batchnorm_rows_forward_training(ctx, a, t, st);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = forward_training_channels(
                                        ctx, a, (const storage_t *)t->x, (storage_t *)t->y,
                                        t->gamma, t->beta, t->running_mean, t->running_var,
                                        t->save_mean, t->save_invstd, st));
    return rc;
}

// Normalises with the running statistics, read and never written.
static int cuda_batchnorm_forward_inference(const Backend *b, const BatchnormArgs *a,
                                            const BatchnormInferenceTensors *t, Status *st) {
    TRY(check_forward(b, a, "batchnorm_forward_inference", st));
    CudaContext *ctx = cuda_context(b);
    if (batchnorm_rows_apply(ctx, a)) return batchnorm_rows_forward_inference(ctx, a, t, st);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = forward_inference_channels(
                                        ctx, a, (const storage_t *)t->x, (storage_t *)t->y,
                                        t->gamma, t->beta, t->running_mean, t->running_var,
                                        t->save_mean, t->save_invstd, st));
    return rc;
}

static int cuda_batchnorm_backward(const Backend *b, const BatchnormArgs *a,
                                   const BatchnormBackwardTensors *t, Status *st) {
    TRY(backend_dtype_check(b, a->dtype, "batchnorm_backward", st));
    int rc = 0;
    CUDA_STORAGE_DISPATCH(
        a->dtype, rc = backward_stored(b, a, (const storage_t *)t->x, (const storage_t *)t->dy,
                                       t->gamma, t->save_mean, t->save_invstd, (storage_t *)t->dx,
                                       t->dgamma, t->dbeta, st));
    return rc;
}

static int cuda_batchnorm_channel_sums(const Backend *b, const BatchnormArgs *a, const void *x,
                                       double *sums, Status *st) {
    TRY(backend_dtype_check(b, a->dtype, "batchnorm_channel_sums", st));
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = share_sums<storage_t>(
                                        b, "batchnorm_channel_sums", a, (const storage_t *)x,
                                        NULL, NULL, NULL, sums, NULL, NULL, st));
    return rc;
}

static int cuda_batchnorm_backward_channel_sums(const Backend *b, const BatchnormArgs *a,
                                                const BatchnormBackwardChannelSumsTensors *t,
                                                Status *st) {
    TRY(backend_dtype_check(b, a->dtype, "batchnorm_backward_channel_sums", st));
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = share_sums<storage_t>(b, "batchnorm_backward_channel_sums",
                                                               a, (const storage_t *)t->x,
                                                               (const storage_t *)t->dy,
                                                               t->save_mean, t->save_invstd,
                                                               t->sums, t->dgamma, t->dbeta, st));
    return rc;
}

static int cuda_batchnorm_forward_with_sums(const Backend *b, const BatchnormArgs *a,
                                            const BatchnormForwardWithSumsTensors *t, Status *st) {
    TRY(backend_dtype_check(b, a->dtype, "batchnorm_forward_with_sums", st));
    int rc = 0;
    CUDA_STORAGE_DISPATCH(
        a->dtype, rc = forward_with_sums_stored(b, a, (const storage_t *)t->x, (storage_t *)t->y,
                                                t->gamma, t->beta, t->sums, t->running_mean,
                                                t->running_var, t->save_mean, t->save_invstd, st));
    return rc;
}

static int cuda_batchnorm_backward_data_with_sums(const Backend *b, const BatchnormArgs *a,
                                                  const BatchnormBackwardDataWithSumsTensors *t,
                                                  Status *st) {
    TRY(backend_dtype_check(b, a->dtype, "batchnorm_backward_data_with_sums", st));
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype,
                          rc = backward_data_with_sums_stored(
                              b, a, (const storage_t *)t->x, (const storage_t *)t->dy, t->gamma,
                              t->save_mean, t->save_invstd, t->sums, (storage_t *)t->dx, st));
    return rc;
}

void cuda_register_batchnorm_ops(Backend *table) {
    table->batchnorm_forward_training = cuda_batchnorm_forward_training;
    table->batchnorm_forward_inference = cuda_batchnorm_forward_inference;
    table->batchnorm_backward = cuda_batchnorm_backward;
    table->batchnorm_channel_sums = cuda_batchnorm_channel_sums;
    table->batchnorm_forward_with_sums = cuda_batchnorm_forward_with_sums;
    table->batchnorm_backward_channel_sums = cuda_batchnorm_backward_channel_sums;
    table->batchnorm_backward_data_with_sums = cuda_batchnorm_backward_data_with_sums;
}
