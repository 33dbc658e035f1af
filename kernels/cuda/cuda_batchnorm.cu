// Batch normalisation on [n, channels, spatial] tensors, with our own kernels rather than
// cuDNN's, so that the statistics are computed the way the CPU reference computes them
// (kernels/cpu/cpu_batchnorm.c): sums in double, two passes for the variance, the biased
// variance to normalise and the unbiased one for running_var, running statistics left
// alone when a channel has one value. cuDNN's batchnorm reduces in an order and precision
// of its own choosing, which no test could hold to the reference's.
//
// One block per channel does everything for that channel in one launch: it reduces the
// channel's statistics, then (after the block has them) writes the channel's outputs. So
// the ops need no scratch memory for partial sums (the op table gives batchnorm none),
// and every reduction is deterministic: each thread sums a fixed subset of the values in
// a fixed order, and the block combines the partial sums in a fixed tree. The cost is
// parallelism: a layer with few channels keeps few SMs busy (16 channels use 16 of an
// H100's 132). A channel's data is read two or three times (training: the mean, the
// variance, then normalising), the later passes often from L2.
//
// A channel's m = n * spatial values are n runs of `spatial` contiguous floats, one run
// per sample, `channels * spatial` apart. Thread t visits flat indices t, t + B, t + 2B,
// ... (B = blockDim.x) of the channel, so neighbouring threads read neighbouring floats;
// the (sample, offset) pair is stepped incrementally to keep divisions out of the loop.
//
// Each thread accumulates in double: a channel after a convolution holds 128 * 32 * 32 =
// 131 072 values, and a float sum that long loses most of its bits (see the CPU's notes).
// Double adds cost next to nothing on data-centre GPUs; on consumer ones (1/64 rate)
// they may cost about as much as the memory traffic, a price paid for the reference's
// digits.
#include <math.h>

#include "kernels/cuda/cuda_internal.h"

// Larger blocks keep more loads in flight per SM, which is what a one-block-per-channel
// layout lives on. __launch_bounds__ below makes the compiler fit the registers to it.
#define BN_THREADS 512
#define BN_MAX_WARPS (BN_THREADS / 32)
// The static shared memory of the one-block-per-channel kernels: cuda_block_sum's double
// per warp.
#define BN_SHARED_BYTES (BN_MAX_WARPS * sizeof(double))

// Walks one channel's values: flat index k = s * spatial + r, where s is the sample and r
// the offset in its run; advances by `step` flat indices without dividing.
struct ChannelCursor {
    int s, r;           // current sample and offset
    int ds, dr;         // step / spatial and step % spatial
    int spatial;
};

__device__ static inline ChannelCursor channel_cursor(int start, int step, int spatial) {
    ChannelCursor cur;
    cur.s = start / spatial;
    cur.r = start % spatial;
    cur.ds = step / spatial;
    cur.dr = step % spatial;
    cur.spatial = spatial;
    return cur;
}

__device__ static inline void channel_advance(ChannelCursor *cur) {
    cur->s += cur->ds;
    cur->r += cur->dr;
    if (cur->r >= cur->spatial) {
        cur->r -= cur->spatial;
        cur->s++;
    }
}

__device__ static inline size_t channel_at(const ChannelCursor &cur, int c, int channels) {
    return ((size_t)cur.s * (size_t)channels + (size_t)c) * (size_t)cur.spatial + (size_t)cur.r;
}

// x * scale + shift, rounded after the multiply as the CPU's C (no FMA contraction)
// rounds it, so the elementwise part matches the reference bit for bit given the same
// statistics. The _rn intrinsics are never fused; the cost is nil in a memory-bound loop.
__device__ static inline float normalise(float x, float scale, float shift) {
    return __fadd_rn(__fmul_rn(x, scale), shift);
}

// Training forward, one block per channel (grid-stride over channels): the mean, then the
// sum of squared deviations from it (two passes, as the CPU: E[x^2] - E[x]^2 cancels badly
// when |mean| >> std), then y, the saved statistics and the running statistics.
// y may alias x: each element is read and then written by the same thread.
__global__ static void __launch_bounds__(BN_THREADS)
batchnorm_forward_training_kernel(const float *x, float *y, const float *gamma,
                                  const float *beta, float *running_mean, float *running_var,
                                  float *save_mean, float *save_invstd, int n, int channels,
                                  int spatial, float momentum, float eps) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    double m = (double)n * (double)spatial;
    for (int c = blockIdx.x; c < channels; c += gridDim.x) {
        double sum = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur))
            sum += (double)x[channel_at(cur, c, channels)];
        double mean = cuda_block_sum(sum, shared) / m;

        double squares = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            double d = (double)x[channel_at(cur, c, channels)] - mean;
            squares += d * d;
        }
        squares = cuda_block_sum(squares, shared);
        double var = squares / m;  // biased: what normalises, as in PyTorch
        double invstd = 1.0 / sqrt(var + (double)eps);

        // The CPU normalises in float with these float constants; so do we.
        float mean_f = (float)mean, invstd_f = (float)invstd;
        float scale = invstd_f * gamma[c];
        float shift = __fsub_rn(beta[c], __fmul_rn(mean_f, scale));
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            y[at] = normalise(x[at], scale, shift);
        }
        if (threadIdx.x == 0) {
            save_mean[c] = mean_f;
            save_invstd[c] = invstd_f;
            // With one value the unbiased variance is 0/0: keep the running statistics.
            if (m > 1.0) {
                double unbiased = squares / (m - 1.0);
                running_mean[c] = (float)((1.0 - momentum) * running_mean[c] + momentum * mean);
                running_var[c] = (float)((1.0 - momentum) * running_var[c] + momentum * unbiased);
            }
        }
    }
}

// Evaluation forward: elementwise with per-channel constants, so it needs no reduction
// and can spread a channel over many blocks: blockIdx.y picks the channel (grid-stride,
// since gridDim.y is at most 65 535), blockIdx.x a slice of its values. Every thread
// computes the channel's constants itself (one double sqrt per thread per channel), which
// is cheaper than a second launch or a barrier.
__global__ static void batchnorm_forward_inference_kernel(
    const float *x, float *y, const float *gamma, const float *beta, const float *running_mean,
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
        float scale = invstd * gamma[c];
        float shift = __fsub_rn(beta[c], __fmul_rn(mean, scale));
        for (ChannelCursor cur = channel_cursor(start, step, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            y[at] = normalise(x[at], scale, shift);
        }
    }
}

// Backward, one block per channel: dbeta = sum dy and dgamma = sum dy * xhat (xhat
// rounded to float first, as the CPU computes it), then, unless dx is NULL,
//   batch statistics: dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
//   fixed statistics: dx = gamma * invstd * dy.
// dx may alias dy: the reductions finish (cuda_block_sum's barriers) before any dx is
// written, and each element is then read and written by the same thread.
__global__ static void __launch_bounds__(BN_THREADS)
batchnorm_backward_kernel(const float *x, const float *dy, const float *gamma,
                          const float *save_mean, const float *save_invstd, float *dx,
                          float *dgamma, float *dbeta, int n, int channels, int spatial,
                          int batch_statistics, int accumulate_dx, int accumulate_params) {
    __shared__ double shared[BN_MAX_WARPS];  // BN_SHARED_BYTES
    double m = (double)n * (double)spatial;
    for (int c = blockIdx.x; c < channels; c += gridDim.x) {
        float mean = save_mean[c], invstd = save_invstd[c];
        double sum_dy = 0.0, sum_dy_xhat = 0.0;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            float d = dy[at];
            float xhat = (x[at] - mean) * invstd;
            sum_dy += (double)d;
            sum_dy_xhat += (double)d * (double)xhat;
        }
        sum_dy = cuda_block_sum(sum_dy, shared);
        sum_dy_xhat = cuda_block_sum(sum_dy_xhat, shared);
        if (threadIdx.x == 0) {
            dbeta[c] = (float)((accumulate_params ? (double)dbeta[c] : 0.0) + sum_dy);
            dgamma[c] = (float)((accumulate_params ? (double)dgamma[c] : 0.0) + sum_dy_xhat);
        }
        if (!dx) continue;
        float scale = gamma[c] * invstd;
        float mean_dy = batch_statistics ? (float)(sum_dy / m) : 0.0f;
        float mean_dy_xhat = batch_statistics ? (float)(sum_dy_xhat / m) : 0.0f;
        for (ChannelCursor cur = channel_cursor(threadIdx.x, blockDim.x, spatial); cur.s < n;
             channel_advance(&cur)) {
            size_t at = channel_at(cur, c, channels);
            float xhat = (x[at] - mean) * invstd;
            float centred = __fsub_rn(__fsub_rn(dy[at], mean_dy), __fmul_rn(xhat, mean_dy_xhat));
            float g = __fmul_rn(scale, centred);  // not fused into the accumulation below
            dx[at] = accumulate_dx ? dx[at] + g : g;
        }
    }
}

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

static int cuda_batchnorm_forward_training(const Backend *b, const BatchnormArgs *a,
                                           const float *x, float *y, const float *gamma,
                                           const float *beta, float *running_mean,
                                           float *running_var, float *save_mean,
                                           float *save_invstd, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_sizes("batchnorm_forward_training", n, channels, spatial, st));
    CudaContext *ctx = cuda_context(b);
    unsigned grid = channel_blocks(channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_forward_training_kernel", grid, BN_THREADS,
                      BN_SHARED_BYTES, bn_elements(n, channels, spatial), 64);
    batchnorm_forward_training_kernel<<<grid, BN_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, n, channels,
        spatial, a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_forward_training_kernel");
    return 0;
}

static int cuda_batchnorm_forward_inference(const Backend *b, const BatchnormArgs *a,
                                            const float *x, float *y, const float *gamma,
                                            const float *beta, const float *running_mean,
                                            const float *running_var, float *save_mean,
                                            float *save_invstd, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_sizes("batchnorm_forward_inference", n, channels, spatial, st));
    // Enough blocks along x to cover one channel's values (capped: grid-stride), and one
    // row of blocks per channel (capped at gridDim.y's limit: grid-stride too).
    size_t per_channel = (size_t)n * (size_t)spatial;
    dim3 grid(cuda_blocks_for(per_channel), channel_blocks(channels));
    CudaContext *ctx = cuda_context(b);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_forward_inference_kernel", grid, CUDA_THREADS, 0,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_forward_inference_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, n, channels,
        spatial, a->eps);
    CUDA_CHECK_LAUNCH("batchnorm_forward_inference_kernel");
    return 0;
}

static int cuda_batchnorm_backward(const Backend *b, const BatchnormArgs *a, const float *x,
                                   const float *dy, const float *gamma, const float *save_mean,
                                   const float *save_invstd, float *dx, float *dgamma,
                                   float *dbeta, Status *st) {
    int n = a->n, channels = a->channels, spatial = a->spatial;
    TRY(check_sizes("batchnorm_backward", n, channels, spatial, st));
    CudaContext *ctx = cuda_context(b);
    unsigned grid = channel_blocks(channels);
    CUDA_CHECK_CONFIG(ctx, "batchnorm_backward_kernel", grid, BN_THREADS, BN_SHARED_BYTES,
                      bn_elements(n, channels, spatial), 64);
    batchnorm_backward_kernel<<<grid, BN_THREADS, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta, n, channels, spatial,
        a->batch_statistics, a->accumulate_dx, a->accumulate_params);
    CUDA_CHECK_LAUNCH("batchnorm_backward_kernel");
    return 0;
}

void cuda_register_batchnorm_ops(Backend *table) {
    table->batchnorm_forward_training = cuda_batchnorm_forward_training;
    table->batchnorm_forward_inference = cuda_batchnorm_forward_inference;
    table->batchnorm_backward = cuda_batchnorm_backward;
}
