// Per-channel sums over [n, channels, spatial] tensors (NCHW activations: spatial = H*W)
// with many blocks per channel. Shared by the CUDA backend's .cu files only: the
// convolution bias gradient (cuda_conv2d.cu) and batchnorm's statistics
// (cuda_batchnorm.cu; cuda_batchnorm_rows.cu adds its partials with
// channel_partials_total).
//
// Why split a channel: one block per channel keeps as many SMs busy as there are channels.
// The H100 profile of cnn-bn and lenet at batch 1024 (docs/benchmarks.md) had its first
// layers' 32 channels of 1024 x 28 x 28 values on 32 of 132 SMs: batchnorm forward 2.07 ms
// and backward 1.54 ms per step, and cuDNN's bias gradient (32 blocks too) 37% of lenet's
// kernel time (969 us for that layer), where one pass over the 103 MB tensor takes the
// H100's memory some 35 us.
//
// How. A channel's m = n * spatial values are n runs of `spatial` contiguous floats, one
// per sample, `channels * spatial` apart; number them k = s * spatial + r (sample s,
// offset r). ChannelSplit cuts k into `chunks` ranges of `chunk` consecutive values. Pass
// 1: block (x = chunk, y = channel) sums its range, thread t taking k = begin + t,
// begin + t + B, ... (B = blockDim.x, so neighbouring threads read neighbouring floats),
// and writes one partial per block to the context's scratch (CudaContext.partials). Pass
// 2: a block sums the channel's partials in index order (channel_partials_total).
//
// Deterministic: every sum is a fixed assignment of values to threads and a fixed tree
// (cuda_block_sum), so a shape gives the same bits every run. Float atomics into one sum
// per channel would be one launch fewer, but their order, and so their rounding, changes
// from run to run; a training run should be reproducible. The split depends on the shape
// alone (not on the GPU's SM count), so the order of the sums is the same on every card.
#ifndef TRAINER_CUDA_CHANNEL_REDUCE_H
#define TRAINER_CUDA_CHANNEL_REDUCE_H

#include "kernels/cuda/cuda_internal.h"

// Threads per block of the split reductions, and values per block: 64 per thread, enough
// work to hide the block's reduction and its one write, and few enough that lenet's first
// layer at batch 1024 (802 816 values per channel) spreads over 49 blocks per channel.
#define CHANNEL_REDUCE_THREADS 256
#define CHANNEL_CHUNK ((long long)CHANNEL_REDUCE_THREADS * 64)

typedef struct ChannelSplit {
    int chunks;       // blocks per channel; below 2: use the one-block-per-channel kernels
    long long chunk;  // values per block (the last block of a channel may get fewer)
} ChannelSplit;

// The split of `channels` channels of m values each, with room for `room` partials in
// all: ceil(m / CHANNEL_CHUNK) blocks per channel, fewer (and longer chunks) where the
// partials would not fit. chunks < 2 says that splitting buys nothing (a channel fits one
// block's chunk) or cannot be done (more channels than partials), and also that there are
// channels enough to fill the GPU one block each.
static inline ChannelSplit channel_split(long long m, int channels, size_t room) {
    ChannelSplit split = {0, m};
    // The split kernels launch one grid row per channel (gridDim.y <= 65535); since the
    // scratch grew to 1 MiB, room alone no longer keeps channels below that.
    if (m <= 0 || channels <= 0 || (size_t)channels > CUDA_MAX_BLOCKS) return split;
    long long chunks = (m + CHANNEL_CHUNK - 1) / CHANNEL_CHUNK;
    long long fit = (long long)(room / (size_t)channels);
    if (chunks > fit) chunks = fit;
    if (chunks > (long long)CUDA_MAX_BLOCKS) chunks = (long long)CUDA_MAX_BLOCKS;
    if (chunks < 2) return split;
    split.chunks = (int)chunks;
    split.chunk = (m + chunks - 1) / chunks;
    return split;
}

// Walks one channel's values from flat index `start` in steps of `step`, keeping the
// (sample, offset) pair instead of dividing at every step.
struct ChannelCursor {
    long long k;        // flat index within the channel
    int s, r;           // its sample and offset
    int ds, dr;         // step / spatial and step % spatial
    int step, spatial;
};

__device__ static inline ChannelCursor channel_cursor(long long start, int step, int spatial) {
    ChannelCursor cur;
    cur.k = start;
    cur.s = (int)(start / spatial);
    cur.r = (int)(start % spatial);
    cur.ds = step / spatial;
    cur.dr = step % spatial;
    cur.step = step;
    cur.spatial = spatial;
    return cur;
}

__device__ static inline void channel_advance(ChannelCursor *cur) {
    cur->k += cur->step;
    cur->s += cur->ds;
    cur->r += cur->dr;
    if (cur->r >= cur->spatial) {
        cur->r -= cur->spatial;
        cur->s++;
    }
}

// Where the cursor's value of channel c lies in the [n, channels, spatial] tensor.
__device__ static inline size_t channel_at(const ChannelCursor &cur, int c, int channels) {
    return ((size_t)cur.s * (size_t)channels + (size_t)c) * (size_t)cur.spatial + (size_t)cur.r;
}

// This thread's first value of block x's chunk, and the end of the chunk, for channels
// of m values split as `chunk` values per block.
__device__ static inline ChannelCursor chunk_cursor(long long chunk, int spatial) {
    return channel_cursor((long long)blockIdx.x * chunk + threadIdx.x, blockDim.x, spatial);
}
__device__ static inline long long chunk_end(long long chunk, long long m) {
    long long end = ((long long)blockIdx.x + 1) * chunk;
    return end < m ? end : m;
}

// The sum of one channel's `chunks` partials, returned to every thread of the block: each
// thread adds a fixed subset in index order, then cuda_block_sum's fixed tree. Every block
// that calls it for a channel gets the same bits, so blocks that each need the channel's
// statistic (batchnorm's normalisation) agree on it without a third pass. Every thread of
// the block must call it.
template <typename T>
__device__ static inline T channel_partials_total(const T *partials, int chunks, T *shared) {
    T sum = T(0);
    for (int k = threadIdx.x; k < chunks; k += blockDim.x) sum += partials[k];
    return cuda_block_sum(sum, shared);
}

#endif
