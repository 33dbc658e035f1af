// Convolution on the GPU through cuDNN's legacy API, with direct CUDA kernels for the
// shapes cuDNN cannot describe.
//
// cuDNN. Per shape (the whole Conv2dGeometry, batch included) a ConvPlan holds the tensor,
// filter and convolution descriptors and, for each of forward, backward-data and
// backward-filter, every algorithm cuDNN's heuristics (cudnnGet*Algorithm_v7) rank as
// supported, with the exact workspace each needs under the math type it will run with.
// Plans live in the context's CudaConvAlgoCache, so the heuristics and the descriptor
// set-up run once per shape, not once per step. conv2d_workspace_size budgets for the
// best-ranked algorithm of each op that needs at most CONV_WORKSPACE_LIMIT, and returns
// the largest of the three; an op given that much runs its budgeted algorithm, and given
// less (a memory-limited caller) runs the best-ranked one that fits. Only if nothing fits
// does it fall back to the direct kernels, which need no workspace: slower, never wrong,
// as the op table's "given less, an op works in smaller pieces" asks.
//
// Storage (Conv2dGeometry.dtype). f32 data follow the precision policy below. bf16 and f16
// data (--precision bf16|fp16, whose layers store 16-bit activations) go to cuDNN as they
// are, in its PSEUDO_BFLOAT16 / PSEUDO_HALF configurations: x, w, y and their gradients in
// the 16-bit type, the convolution's compute type FLOAT (f32 sums), each output rounded
// once; bf16 needs compute capability 8.0, which the precision check demands first. The
// bias, dw and dbias stay f32 (see the workspace under 16-bit storage below). Plans are
// keyed by the dtype too, so each storage has its own descriptors, algorithms and workspace.
//
// Precision of f32 data (ctx->precision; the data stay FP32 in memory in every case). fp32:
// CUDNN_FMA_MATH, which restricts cuDNN to plain FP32 FMA kernels. tf32:
// CUDNN_TENSOR_OP_MATH, which lets cuDNN run FP32 convolutions on tensor cores in TF32
// (Ampere and later). fp16: CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, which also lets it
// convert the FP32 data to FP16 for the tensor cores (the legacy API's only down-conversion
// of FP32 data; loss scaling in core/loss_scale.c keeps small gradients above FP16's
// underflow). bf16: TF32, as for tf32 (precision_for_convolutions), since that API has no
// FP32-to-BF16 conversion and FP16 would trade bf16's range, the reason to choose it, for
// precision: f32 data under --precision bf16 (a caller that keeps them, such as `trainer
// bench conv`) compute in TF32; a conv2d layer's own data are bf16 there. Only fp16 with
// f32 data ever gets ALLOW_CONVERSION; the others map a heuristic's suggestion of it down
// to TENSOR_OP.
//
// Direct kernels. cuDNN pads symmetrically: it places the first window pad_top rows up and
// derives out_h = (in_h + 2 * pad_top - span) / stride + 1. Our geometry may pad the
// bottom/right differently (pad=same with an even kernel span puts the extra row at the
// bottom), and then cuDNN's output size differs from ours. Whenever cuDNN's derived output
// size equals ours, every output reads exactly the rows and columns ours does, so cuDNN is
// used; otherwise (and for tensors past cuDNN's 32-bit element counts, or shapes for which
// it ranks no algorithm) the plan is marked direct and the ops run the kernels below,
// which compute the definition (cpu_conv2d_reference.c) one output, input or weight
// gradient element per thread or block, deterministically. They are correct for every
// geometry but make no attempt at speed: an even-kernel pad=same layer trains, slowly.
//
// Bias gradient. Ours, not cudnnConvolutionBackwardBias: a two-pass reduction with many
// blocks per filter (cuda_channel_reduce.h), for every shape; see backward_bias below.
// With the bias-gradient lever off (base/lever.h) the old path runs, to measure the
// difference: cuDNN's call where cuDNN runs the convolution, the direct kernel elsewhere.
//
// Layout (Conv2dGeometry.layout). NHWC activations go to cuDNN as NHWC tensors, which its
// tensor-core kernels read as they are (with NCHW it transposes around each convolution).
// Its filter descriptor is then NHWC too, so the weights, KCRS as the parameters are
// stored, are copied KRSC into the workspace per call, and the weight gradient comes back
// through the same room (see the workspace under NHWC below). The bias-and-activation pass
// and the bias gradient take NHWC's channel order (the gradient as sum_rows, the column
// sums of [n * h * w, channels]); the direct kernels index either layout. Plans are keyed
// by the layout too.
//
// Accumulate flags are cuDNN's beta: 0 overwrites (cuDNN then never reads the output, so
// it may hold garbage), 1 adds.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_activation.h"
#include "kernels/cuda/cuda_channel_reduce.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_storage.h"

// The most workspace conv2d_workspace_size asks for on behalf of one algorithm. FFT-based
// algorithms can want far more than the activations they work on for a large batch; a
// poor trade for the few percent they may gain, and memory the batch could use instead.
static const size_t CONV_WORKSPACE_LIMIT = (size_t)256 << 20;

// Plans kept per device; beyond this the oldest is dropped (batch sizes that change every
// step, e.g. micro-batching, would otherwise grow the cache without end).
enum { CONV_CACHE_MAX_PLANS = 128 };

// Room for every algorithm of any of the three ops.
#define CONV_MAX_CANDIDATES 16
static_assert((int)CUDNN_CONVOLUTION_FWD_ALGO_COUNT <= CONV_MAX_CANDIDATES, "too many algos");
static_assert((int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT <= CONV_MAX_CANDIDATES, "too many algos");
static_assert((int)CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT <= CONV_MAX_CANDIDATES, "too many algos");

// Threads per block of the direct kernels' reductions (weight and bias gradients), and
// the static shared memory of each: cuda_block_sum's float per warp.
#define CONV_REDUCE_THREADS 256
#define CONV_REDUCE_SHARED_BYTES (32 * sizeof(float))

// One algorithm an op may run: cuDNN's enum value for that op, the math type it runs
// with, and the workspace it needs then.
typedef struct ConvChoice {
    int algo;
    cudnnMathType_t math;
    size_t bytes;
} ConvChoice;

// An op's algorithms, best-ranked first; `budgeted` indexes the one the workspace size
// was computed for.
typedef struct ConvCandidates {
    ConvChoice list[CONV_MAX_CANDIDATES];
    int count;
    int budgeted;
} ConvCandidates;

typedef struct ConvPlan {
    Conv2dGeometry key;
    Precision precision;  // the math policy the candidates were chosen under
    int direct;  // 1: cuDNN cannot run this shape as we define it; use the direct kernels
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t relu, identity;  // made at first use by the fused forward
    // 1: cudnnConvolutionBiasActivationForward refused this shape once; it runs unfused from
    // then on rather than asking again every step.
    int fused_refused;
    // 1: cudnnConvolutionBackwardBias refused this shape (the bias-gradient lever off); our
    // reduction computes the bias gradient instead, and conv2d_describe says so.
    int bias_refused;
    ConvCandidates forward, backward_data, backward_filter;
} ConvPlan;

// Plans by shape, oldest first. Not locked: a context belongs to one device, driven by
// one host thread at a time.
struct CudaConvAlgoCache {
    ConvPlan *plans[CONV_CACHE_MAX_PLANS];
    int count;
};

// y = act(y + bias[channel]) over a stored output [n, channels, plane] (bias may be NULL),
// in one pass: the 16-bit forward's bias and activation after cudnnConvolutionForward,
// where the f32 path runs cudnnAddTensor and activation_forward (f32 both) in turn. Block
// rows walk the n * channels planes and threads along x a plane's values, so each thread
// finds its channel (one division) per plane, not per value, and holds its bias in a
// register (the 16-bit dense fallback's lesson on the H200: a 64-bit division per element).
template <typename T>
__global__ static void conv2d_bias_activation_kernel(T *y, const float *bias, int channels,
                                                     size_t plane, FusedActivation act,
                                                     size_t planes) {
    for (size_t p = blockIdx.y; p < planes; p += gridDim.y) {
        float b = bias ? bias[p % (size_t)channels] : 0.0f;
        T *row = y + p * plane;
        for (size_t i = cuda_grid_thread(); i < plane; i += cuda_grid_threads())
            storage_store(row, i, fused_activation(act, storage_load(row, i) + b));
    }
}

// The same over NHWC y, [n * out_h * out_w, channels]: a value's channel is its index
// modulo the channels. A flat walk with one division per value, for simplicity: the
// 16-bit forward's second pass, not the convolution.
template <typename T>
__global__ static void conv2d_bias_activation_nhwc_kernel(T *y, const float *bias, int channels,
                                                          FusedActivation act, size_t total) {
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        float b = bias ? bias[i % (size_t)channels] : 0.0f;
        storage_store(y, i, fused_activation(act, storage_load(y, i) + b));
    }
}

// Filters between KCRS ([filters, channels, kh * kw], as the parameters are stored) and
// KRSC ([filters, kh * kw, channels], what cuDNN's NHWC filter descriptor reads): one thread
// per dst value, dst = (accumulate ? dst : 0) + src, the sum in f32 and rounded once on the
// store. S and D are storage types: the weights' copy keeps theirs; cuDNN's KRSC weight
// gradient (16-bit with 16-bit data) goes into the f32 KCRS dw, as convert would.
template <typename S, typename D>
__global__ static void conv2d_filter_transpose_kernel(const S *src, D *dst, int channels,
                                                      int taps, int to_krsc, int accumulate,
                                                      size_t total) {
    size_t per_filter = (size_t)channels * taps;
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        size_t k = i / per_filter, r = i % per_filter, from;
        if (to_krsc) from = k * per_filter + (r % channels) * taps + r / channels;
        else from = k * per_filter + (r % taps) * channels + r / taps;
        float v = storage_load(src, from);
        storage_store(dst, i, accumulate ? storage_load(dst, i) + v : v);
    }
}

// ---- direct kernels ---------------------------------------------------------------
//
// They index activations through input_offset / output_offset, so one kernel serves both
// layouts; in NCHW the offsets are the planes' arithmetic they replaced, the same values
// summed in the same order. Threads walk outputs in NCHW order either way: NHWC reads
// less coalesced, acceptable for the shapes cuDNN cannot describe.

// Where element (n, c, h, w) of a [batch, channels, height, width] tensor lives in the
// layout.
__host__ __device__ static inline size_t activation_offset(Layout layout, int channels,
                                                           int height, int width, int n, int c,
                                                           int h, int w) {
    if (layout == LAYOUT_NHWC) return (((size_t)n * height + h) * width + w) * channels + c;
    return (((size_t)n * channels + c) * height + h) * width + w;
}
__host__ __device__ static inline size_t input_offset(const Conv2dGeometry *g, int n, int c,
                                                      int h, int w) {
    return activation_offset(g->layout, g->in_channels, g->in_h, g->in_w, n, c, h, w);
}
__host__ __device__ static inline size_t output_offset(const Conv2dGeometry *g, int n, int c,
                                                       int h, int w) {
    return activation_offset(g->layout, g->out_channels, g->out_h, g->out_w, n, c, h, w);
}

// One thread per output element y[n][f][oh][ow]: the dot product of f's weights with the
// window, skipping taps in the padding. Neighbouring threads are neighbouring ow, so their
// x reads are neighbours (or stride apart) and their weight reads are one broadcast.
template <typename T>
__global__ static void conv2d_direct_forward_kernel(Conv2dGeometry g, const T *x, const T *w,
                                                    const float *bias, FusedActivation act,
                                                    T *y, size_t total) {
    int group_channels = g.in_channels / g.groups, group_filters = g.out_channels / g.groups;
    size_t taps = (size_t)g.kernel_h * g.kernel_w;
    for (size_t idx = cuda_grid_thread(); idx < total; idx += cuda_grid_threads()) {
        int ow = (int)(idx % (size_t)g.out_w);
        size_t t = idx / (size_t)g.out_w;
        int oh = (int)(t % (size_t)g.out_h);
        t /= (size_t)g.out_h;
        int f = (int)(t % (size_t)g.out_channels), n = (int)(t / (size_t)g.out_channels);
        int c0 = f / group_filters * group_channels;
        const T *wf = w + (size_t)f * group_channels * taps;
        float sum = 0.0f;
        for (int c = 0; c < group_channels; c++) {
            const T *wc = wf + (size_t)c * taps;
            for (int i = 0; i < g.kernel_h; i++) {
                int ih = oh * g.stride_h - g.pad_top + i * g.dilation_h;
                if (ih < 0 || ih >= g.in_h) continue;
                for (int j = 0; j < g.kernel_w; j++) {
                    int iw = ow * g.stride_w - g.pad_left + j * g.dilation_w;
                    if (iw < 0 || iw >= g.in_w) continue;
                    sum += storage_load(wc, (size_t)(i * g.kernel_w + j)) *
                           storage_load(x, input_offset(&g, n, c0 + c, ih, iw));
                }
            }
        }
        storage_store(y, output_offset(&g, n, f, oh, ow),
                      fused_activation(act, bias ? sum + bias[f] : sum));
    }
}

// One thread per input element dx[n][c][ih][iw]: gathers dy * w over the filters of c's
// group and the taps (i, j) whose window row oh = (ih + pad_top - i * dilation_h) /
// stride_h is whole and in range (columns likewise). A gather, not a scatter, so no
// atomics and every element is written once.
template <typename T>
__global__ static void conv2d_direct_backward_data_kernel(Conv2dGeometry g, const T *dy,
                                                          const T *w, T *dx, int accumulate,
                                                          size_t total) {
    int group_channels = g.in_channels / g.groups, group_filters = g.out_channels / g.groups;
    size_t taps = (size_t)g.kernel_h * g.kernel_w;
    for (size_t idx = cuda_grid_thread(); idx < total; idx += cuda_grid_threads()) {
        int iw = (int)(idx % (size_t)g.in_w);
        size_t t = idx / (size_t)g.in_w;
        int ih = (int)(t % (size_t)g.in_h);
        t /= (size_t)g.in_h;
        int c = (int)(t % (size_t)g.in_channels), n = (int)(t / (size_t)g.in_channels);
        int group = c / group_channels, cg = c % group_channels;
        float sum = 0.0f;
        for (int f = group * group_filters; f < (group + 1) * group_filters; f++) {
            const T *wf = w + ((size_t)f * group_channels + cg) * taps;
            for (int i = 0; i < g.kernel_h; i++) {
                int th = ih + g.pad_top - i * g.dilation_h;
                if (th < 0 || th % g.stride_h) continue;
                int oh = th / g.stride_h;
                if (oh >= g.out_h) continue;
                for (int j = 0; j < g.kernel_w; j++) {
                    int tw = iw + g.pad_left - j * g.dilation_w;
                    if (tw < 0 || tw % g.stride_w) continue;
                    int ow = tw / g.stride_w;
                    if (ow >= g.out_w) continue;
                    sum += storage_load(dy, output_offset(&g, n, f, oh, ow)) *
                           storage_load(wf, (size_t)(i * g.kernel_w + j));
                }
            }
        }
        size_t at = input_offset(&g, n, c, ih, iw);
        storage_store(dx, at, accumulate ? storage_load(dx, at) + sum : sum);
    }
}

// One block per weight element dw[f][c][i][j] (grid-stride over blocks): its threads
// split the batch's N * OH * OW products dy * x between them and the block sums them. A
// thread per weight would leave most of the GPU idle (a 3x3 layer of 32 filters over 16
// channels has 4 608 weights) and run a loop as long as the batch.
template <typename T>
__global__ static void __launch_bounds__(CONV_REDUCE_THREADS)
conv2d_direct_backward_filter_kernel(Conv2dGeometry g, const T *x, const T *dy, float *dw,
                                     int accumulate, size_t weights) {
    __shared__ float shared[32];  // CONV_REDUCE_SHARED_BYTES
    int group_channels = g.in_channels / g.groups, group_filters = g.out_channels / g.groups;
    size_t products = (size_t)g.batch * g.out_h * g.out_w;
    for (size_t wi = blockIdx.x; wi < weights; wi += gridDim.x) {
        int j = (int)(wi % (size_t)g.kernel_w);
        size_t t = wi / (size_t)g.kernel_w;
        int i = (int)(t % (size_t)g.kernel_h);
        t /= (size_t)g.kernel_h;
        int c = (int)(t % (size_t)group_channels), f = (int)(t / (size_t)group_channels);
        int c0 = f / group_filters * group_channels;
        float sum = 0.0f;
        for (size_t q = threadIdx.x; q < products; q += blockDim.x) {
            int ow = (int)(q % (size_t)g.out_w);
            size_t u = q / (size_t)g.out_w;
            int oh = (int)(u % (size_t)g.out_h), n = (int)(u / (size_t)g.out_h);
            int ih = oh * g.stride_h - g.pad_top + i * g.dilation_h;
            int iw = ow * g.stride_w - g.pad_left + j * g.dilation_w;
            if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
            sum += storage_load(dy, output_offset(&g, n, f, oh, ow)) *
                   storage_load(x, input_offset(&g, n, c0 + c, ih, iw));
        }
        sum = cuda_block_sum(sum, shared);
        if (threadIdx.x == 0) dw[wi] = accumulate ? dw[wi] + sum : sum;
    }
}

// One block per filter: dbias[f] = the sum of dy over N, OH and OW.
template <typename T>
__global__ static void __launch_bounds__(CONV_REDUCE_THREADS)
conv2d_direct_backward_bias_kernel(Conv2dGeometry g, const T *dy, float *dbias, int accumulate) {
    __shared__ float shared[32];  // CONV_REDUCE_SHARED_BYTES
    size_t out_plane = (size_t)g.out_h * g.out_w, values = (size_t)g.batch * out_plane;
    for (int f = blockIdx.x; f < g.out_channels; f += gridDim.x) {
        float sum = 0.0f;
        for (size_t q = threadIdx.x; q < values; q += blockDim.x) {
            size_t n = q / out_plane, p = q % out_plane;
            // The plane as one row of out_plane pixels.
            sum += storage_load(dy, activation_offset(g.layout, g.out_channels, 1,
                                                      (int)out_plane, (int)n, f, 0, (int)p));
        }
        sum = cuda_block_sum(sum, shared);
        if (threadIdx.x == 0) dbias[f] = accumulate ? dbias[f] + sum : sum;
    }
}

static size_t conv_inputs(const Conv2dGeometry *g) {
    return (size_t)g->batch * g->in_channels * g->in_h * g->in_w;
}
static size_t conv_outputs(const Conv2dGeometry *g) {
    return (size_t)g->batch * g->out_channels * g->out_h * g->out_w;
}
static size_t conv_weights(const Conv2dGeometry *g) {
    return (size_t)g->out_channels * (g->in_channels / g->groups) * g->kernel_h * g->kernel_w;
}
// The largest tensor a direct kernel indexes (input, output or weights), for its launch check.
static size_t conv_largest(const Conv2dGeometry *g) {
    size_t in = conv_inputs(g), out = conv_outputs(g), w = conv_weights(g);
    size_t larger = in > out ? in : out;
    return larger > w ? larger : w;
}

// The direct kernels in g->dtype's storage type (checked by check_geometry).
template <typename T>
static int direct_forward_t(CudaContext *ctx, const Conv2dGeometry *g, const T *x, const T *w,
                            const float *bias, const FusedActivation *act, T *y, Status *st) {
    size_t total = conv_outputs(g);
    unsigned grid = cuda_blocks_for(total);
    CUDA_CHECK_CONFIG(ctx, "conv2d_direct_forward_kernel", grid, CUDA_THREADS, 0,
                      conv_largest(g), 64);
    FusedActivation none = {0, ACTIVATION_RELU, 0.0f};
    conv2d_direct_forward_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        *g, x, w, bias, act ? *act : none, y, total);
    CUDA_CHECK_LAUNCH("conv2d_direct_forward_kernel");
    return 0;
}

// act may be NULL (no activation).
static int direct_forward(CudaContext *ctx, const Conv2dGeometry *g, const void *x,
                          const void *w, const float *bias, const FusedActivation *act, void *y,
                          Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = direct_forward_t(ctx, g, (const storage_t *)x,
                                                          (const storage_t *)w, bias, act,
                                                          (storage_t *)y, st));
    return rc;
}

template <typename T>
static int direct_backward_data_t(CudaContext *ctx, const Conv2dGeometry *g, const T *dy,
                                  const T *w, T *dx, int accumulate, Status *st) {
    size_t total = conv_inputs(g);
    unsigned grid = cuda_blocks_for(total);
    CUDA_CHECK_CONFIG(ctx, "conv2d_direct_backward_data_kernel", grid, CUDA_THREADS, 0,
                      conv_largest(g), 64);
    conv2d_direct_backward_data_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        *g, dy, w, dx, accumulate, total);
    CUDA_CHECK_LAUNCH("conv2d_direct_backward_data_kernel");
    return 0;
}

static int direct_backward_data(CudaContext *ctx, const Conv2dGeometry *g, const void *dy,
                                const void *w, void *dx, int accumulate, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = direct_backward_data_t(ctx, g, (const storage_t *)dy,
                                                                (const storage_t *)w,
                                                                (storage_t *)dx, accumulate, st));
    return rc;
}

template <typename T>
static int direct_backward_filter_t(CudaContext *ctx, const Conv2dGeometry *g, const T *x,
                                    const T *dy, float *dw, int accumulate, Status *st) {
    size_t weights = conv_weights(g);
    unsigned grid = cuda_blocks_capped(weights, 1);
    CUDA_CHECK_CONFIG(ctx, "conv2d_direct_backward_filter_kernel", grid, CONV_REDUCE_THREADS,
                      CONV_REDUCE_SHARED_BYTES, conv_largest(g), 64);
    conv2d_direct_backward_filter_kernel<T><<<grid, CONV_REDUCE_THREADS, 0, ctx->stream>>>(
        *g, x, dy, dw, accumulate, weights);
    CUDA_CHECK_LAUNCH("conv2d_direct_backward_filter_kernel");
    return 0;
}

static int direct_backward_filter(CudaContext *ctx, const Conv2dGeometry *g, const void *x,
                                  const void *dy, float *dw, int accumulate, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = direct_backward_filter_t(ctx, g, (const storage_t *)x,
                                                                  (const storage_t *)dy, dw,
                                                                  accumulate, st));
    return rc;
}

template <typename T>
static int direct_backward_bias(CudaContext *ctx, const Conv2dGeometry *g, const T *dy,
                                float *dbias, int accumulate, Status *st) {
    unsigned grid = cuda_blocks_capped((size_t)g->out_channels, 1);
    CUDA_CHECK_CONFIG(ctx, "conv2d_direct_backward_bias_kernel", grid, CONV_REDUCE_THREADS,
                      CONV_REDUCE_SHARED_BYTES, conv_outputs(g), 64);
    conv2d_direct_backward_bias_kernel<T><<<grid, CONV_REDUCE_THREADS, 0, ctx->stream>>>(
        *g, dy, dbias, accumulate);
    CUDA_CHECK_LAUNCH("conv2d_direct_backward_bias_kernel");
    return 0;
}

// ---- the bias gradient ------------------------------------------------------------------
//
// dbias[f] = the sum of dy over N, OH and OW: a per-channel sum of dy seen as [batch,
// filters, OH * OW], split over many blocks per filter (cuda_channel_reduce.h), then a
// second small pass per filter. cudnnConvolutionBackwardBias ran one 128-thread block per
// filter: on the H100 at batch 1024 it took 969 us for lenet's first layer (32 filters of
// 1024 x 28 x 28 values) and 519 us for its second (64 filters at 14 x 14), 37% of the
// step's kernel time, to read 103 MB and 51 MB, some 35 and 17 us of the card's bandwidth.
// Two passes rather than atomics into dbias: the same bits every run (and no zeroing
// launch, and no read of a dbias that accumulate = 0 says may hold garbage).

// The second pass's block: one warp adds a filter's few dozen partials.
#define BIAS_TOTAL_THREADS 32

// Pass 1: block (chunk, filter) sums its chunk of the filter's values into one partial.
template <typename T>
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
conv2d_bias_partial_kernel(const T *dy, int filters, int plane, long long values,
                           long long chunk, float *partials) {
    __shared__ float shared[32];  // CONV_REDUCE_SHARED_BYTES
    int f = blockIdx.y;
    long long end = chunk_end(chunk, values);
    float sum = 0.0f;
    for (ChannelCursor cur = chunk_cursor(chunk, plane); cur.k < end; channel_advance(&cur))
        sum += storage_load(dy, channel_at(cur, f, filters));
    sum = cuda_block_sum(sum, shared);
    if (threadIdx.x == 0) partials[(size_t)f * gridDim.x + blockIdx.x] = sum;
}

// Pass 2, one block per filter (grid-stride): its partials in chunk order, then
// dbias = (accumulate ? dbias : 0) + total, as cuDNN's beta 1 or 0.
__global__ static void __launch_bounds__(BIAS_TOTAL_THREADS)
conv2d_bias_total_kernel(const float *partials, int chunks, int filters, float *dbias,
                         int accumulate) {
    __shared__ float shared[32];  // CONV_REDUCE_SHARED_BYTES
    for (int f = blockIdx.x; f < filters; f += gridDim.x) {
        float total = channel_partials_total(partials + (size_t)f * chunks, chunks, shared);
        if (threadIdx.x == 0) dbias[f] = accumulate ? dbias[f] + total : total;
    }
}

// The split reduction where it pays; the direct kernel (one block per filter) where a
// filter's values fit one chunk, or there are more filters than partials (and so enough
// filters to fill the GPU one block each), or the plane is too large for the cursor's ints.
template <typename T>
static int backward_bias_t(CudaContext *ctx, const Conv2dGeometry *g, const T *dy,
                           float *dbias, int accumulate, Status *st) {
    long long plane = (long long)g->out_h * g->out_w, values = (long long)g->batch * plane;
    ChannelSplit split =
        channel_split(values, g->out_channels, CUDA_PARTIALS_BYTES / sizeof(float));
    if (split.chunks < 2 || plane > INT_MAX / 2 || g->batch > INT_MAX / 2 ||
        lever_off(ctx->disabled_levers, LEVER_BIAS_GRADIENT))
        return direct_backward_bias(ctx, g, dy, dbias, accumulate, st);
    float *partials = (float *)ctx->partials;
    dim3 grid((unsigned)split.chunks, (unsigned)g->out_channels);
    CUDA_CHECK_CONFIG(ctx, "conv2d_bias_partial_kernel", grid, CHANNEL_REDUCE_THREADS,
                      CONV_REDUCE_SHARED_BYTES, conv_outputs(g), 64);
    conv2d_bias_partial_kernel<T><<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        dy, g->out_channels, (int)plane, values, split.chunk, partials);
    CUDA_CHECK_LAUNCH("conv2d_bias_partial_kernel");
    unsigned blocks = cuda_blocks_capped((size_t)g->out_channels, 1);
    CUDA_CHECK_CONFIG(ctx, "conv2d_bias_total_kernel", blocks, BIAS_TOTAL_THREADS,
                      CONV_REDUCE_SHARED_BYTES, (size_t)g->out_channels * split.chunks, 64);
    conv2d_bias_total_kernel<<<blocks, BIAS_TOTAL_THREADS, 0, ctx->stream>>>(
        partials, split.chunks, g->out_channels, dbias, accumulate);
    CUDA_CHECK_LAUNCH("conv2d_bias_total_kernel");
    return 0;
}

// NHWC dy is a [n * out_h * out_w, filters] matrix and dbias its column sums: the dense
// layers' bias gradient (sum_rows, cuda_column_sums.h's deterministic split), whose
// threads read a row's neighbouring filters together. The direct kernel where the rows
// overflow sum_rows's int, or with the bias-gradient lever off.
static int backward_bias_nhwc(const Backend *b, CudaContext *ctx, const Conv2dGeometry *g,
                              const void *dy, float *dbias, int accumulate, Status *st) {
    long long rows = (long long)g->batch * g->out_h * g->out_w;
    if (rows <= INT_MAX && !lever_off(ctx->disabled_levers, LEVER_BIAS_GRADIENT)) {
        const SumRowsArgs sums = {
            dbias, dy, g->dtype, (int)rows, g->out_channels, accumulate ? 1.0f : 0.0f};
        return b->sum_rows(b, &sums, st);
    }
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = direct_backward_bias(ctx, g, (const storage_t *)dy,
                                                              dbias, accumulate, st));
    return rc;
}

// dy in g->dtype's storage type; dbias f32.
static int backward_bias(const Backend *b, CudaContext *ctx, const Conv2dGeometry *g,
                         const void *dy, float *dbias, int accumulate, Status *st) {
    if (g->layout == LAYOUT_NHWC)
        return backward_bias_nhwc(b, ctx, g, dy, dbias, accumulate, st);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = backward_bias_t(ctx, g, (const storage_t *)dy, dbias,
                                                         accumulate, st));
    return rc;
}

// ---- plans: descriptors and algorithms per shape -----------------------------------

// cuDNN's name for a storage dtype; FLOAT for anything else, which check_geometry has
// refused first. The convolution's compute type stays FLOAT for all three (cuDNN has no
// "true bfloat16" configuration, and TRUE_HALF would sum in fp16).
static cudnnDataType_t cudnn_storage_type(DType dtype) {
    switch (dtype) {
    case DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    case DTYPE_F16: return CUDNN_DATA_HALF;
    default: return CUDNN_DATA_FLOAT;
    }
}

static int same_geometry(const Conv2dGeometry *a, const Conv2dGeometry *b) {
    // Field by field rather than memcmp, so padding bytes (should the struct ever gain
    // some) cannot make equal shapes miss.
    return a->batch == b->batch && a->in_channels == b->in_channels && a->in_h == b->in_h &&
           a->in_w == b->in_w && a->out_channels == b->out_channels && a->out_h == b->out_h &&
           a->out_w == b->out_w && a->kernel_h == b->kernel_h && a->kernel_w == b->kernel_w &&
           a->stride_h == b->stride_h && a->stride_w == b->stride_w &&
           a->pad_top == b->pad_top && a->pad_left == b->pad_left &&
           a->dilation_h == b->dilation_h && a->dilation_w == b->dilation_w &&
           a->groups == b->groups && a->dtype == b->dtype && a->layout == b->layout;
}

// The output size cuDNN derives along one axis from symmetric padding `pad`; -1 when the
// window does not fit.
static long long cudnn_output_size(int in, int pad, int kernel, int dilation, int stride) {
    long long span = (long long)dilation * (kernel - 1) + 1, padded = in + 2LL * pad;
    return padded < span ? -1 : (padded - span) / stride + 1;
}

// Whether cuDNN computes exactly our convolution: the same output size from symmetric
// padding (then every output reads the same taps), and tensors whose element counts fit
// the int strides of cuDNN's 4-D descriptors.
static int cudnn_can_run(const Conv2dGeometry *g) {
    if (cudnn_output_size(g->in_h, g->pad_top, g->kernel_h, g->dilation_h, g->stride_h) != g->out_h ||
        cudnn_output_size(g->in_w, g->pad_left, g->kernel_w, g->dilation_w, g->stride_w) != g->out_w)
        return 0;
    const size_t int_max = 2147483647u;
    return conv_inputs(g) > 0 && conv_weights(g) > 0 && conv_inputs(g) <= int_max &&
           conv_outputs(g) <= int_max && conv_weights(g) <= int_max;
}

// The math type an algorithm runs with. f32 data: FMA only in fp32; otherwise what the
// heuristics paired it with, but the FP16 down-conversion mode only when the precision is
// fp16. 16-bit data (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16 configurations: 16-bit x, w
// and y, FLOAT compute type) are already rounded, so tensor cores compute what the CPU
// reference does up to the order of the f32 sums: TENSOR_OP whatever the precision, and
// never ALLOW_CONVERSION, which is about converting FP32 data.
static cudnnMathType_t policy_math(const CudaContext *ctx, DType dtype) {
    if (dtype != DTYPE_F32) return CUDNN_TENSOR_OP_MATH;
    switch (precision_for_convolutions(ctx->precision)) {
    case PRECISION_FP16: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    case PRECISION_TF32:
    case PRECISION_BF16: return CUDNN_TENSOR_OP_MATH;
    default: return CUDNN_FMA_MATH;
    }
}
static cudnnMathType_t candidate_math(const CudaContext *ctx, DType dtype,
                                      cudnnMathType_t suggested) {
    Precision p = precision_for_convolutions(ctx->precision);
    if (dtype == DTYPE_F32 && p == PRECISION_FP32) return CUDNN_FMA_MATH;
    if (dtype == DTYPE_F32 && p == PRECISION_FP16) return suggested;
    return suggested == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? CUDNN_TENSOR_OP_MATH : suggested;
}

// FP32 (TF32 off) promises the CPU's precision: an error within what summing the same
// products in another order gives, under ~1e-5 of the sum of |terms| for our reductions,
// which test_cuda_parity holds to 1e-4. FFT and Winograd algorithms compute through
// transforms whose rounding grows with the transformed values, not with that bound: on
// the H100 an FP32 backward-filter (n=32, 32x14x14, 64 5x5 filters, 6,272 terms per
// weight) was off by up to 2.7e-4 of its sum of |terms| while TF32's implicit GEMM, with
// inputs rounded to 11 bits, stayed within 8.4e-6. So in FP32 they are not candidates
// (implicit GEMM and the direct-sum algorithms remain for every shape); with TF32, whose
// own rounding is larger, they stay.
static bool is_transform(cudnnConvolutionFwdAlgo_t a) {
    return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
static bool is_transform(cudnnConvolutionBwdDataAlgo_t a) {
    return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
static bool is_transform(cudnnConvolutionBwdFilterAlgo_t a) {
    return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

static void candidates_add(ConvCandidates *c, int algo, cudnnMathType_t math, size_t bytes) {
    if (c->count >= CONV_MAX_CANDIDATES) return;
    c->list[c->count].algo = algo;
    c->list[c->count].math = math;
    c->list[c->count].bytes = bytes;
    c->count++;
}

// The best-ranked candidate within CONV_WORKSPACE_LIMIT, else the one needing least.
static void candidates_budget(ConvCandidates *c) {
    c->budgeted = 0;
    for (int i = 0; i < c->count; i++)
        if (c->list[i].bytes <= CONV_WORKSPACE_LIMIT) {
            c->budgeted = i;
            return;
        }
    for (int i = 1; i < c->count; i++)
        if (c->list[i].bytes < c->list[c->budgeted].bytes) c->budgeted = i;
}

// What an op runs in `workspace_bytes`: the budgeted algorithm if it fits, else the
// best-ranked one that does; NULL when none does (or there are none).
static const ConvChoice *candidates_pick(const ConvCandidates *c, size_t workspace_bytes) {
    if (c->count == 0) return NULL;
    if (c->list[c->budgeted].bytes <= workspace_bytes) return &c->list[c->budgeted];
    for (int i = 0; i < c->count; i++)
        if (c->list[i].bytes <= workspace_bytes) return &c->list[i];
    return NULL;
}

// Keeps, of the `returned` algorithms the heuristics ranked in perf (best first), those
// cuDNN supports here (in FP32, none that computes through a transform), each with its exact workspace under the math type it will run with
// (the heuristics' `memory` is for the math type they assumed): workspace(algo, &bytes)
// asks the op's cudnnGet*WorkspaceSize. Then picks the budgeted one.
template <typename Perf, typename WorkspaceSize>
static int add_ranked_candidates(CudaContext *ctx, ConvPlan *p, const Perf *perf, int returned,
                                 WorkspaceSize workspace, ConvCandidates *out, Status *st) {
    for (int i = 0; i < returned; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
        if (ctx->precision == PRECISION_FP32 && is_transform(perf[i].algo)) continue;
        cudnnMathType_t math = candidate_math(ctx, p->key.dtype, perf[i].mathType);
        size_t bytes = 0;
        CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, math));
        if (workspace(perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
        candidates_add(out, (int)perf[i].algo, math, bytes);
    }
    candidates_budget(out);
    return 0;
}

// Each of the next three asks the heuristics for every algorithm of its op, ranked, under
// the policy's math type, and keeps the usable ones (add_ranked_candidates).
static int forward_candidates(CudaContext *ctx, ConvPlan *p, Status *st) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, policy_math(ctx, p->key.dtype)));
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(ctx->cudnn, p->x, p->w, p->conv, p->y,
                                                       CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                       &returned, perf));
    auto workspace = [&](cudnnConvolutionFwdAlgo_t algo, size_t *bytes) {
        return cudnnGetConvolutionForwardWorkspaceSize(ctx->cudnn, p->x, p->w, p->conv, p->y,
                                                       algo, bytes);
    };
    return add_ranked_candidates(ctx, p, perf, returned, workspace, &p->forward, st);
}

static int backward_data_candidates(CudaContext *ctx, ConvPlan *p, Status *st) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, policy_math(ctx, p->key.dtype)));
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        ctx->cudnn, p->w, p->y, p->conv, p->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned,
        perf));
    auto workspace = [&](cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(ctx->cudnn, p->w, p->y, p->conv,
                                                            p->x, algo, bytes);
    };
    return add_ranked_candidates(ctx, p, perf, returned, workspace, &p->backward_data, st);
}

static int backward_filter_candidates(CudaContext *ctx, ConvPlan *p, Status *st) {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int returned = 0;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, policy_math(ctx, p->key.dtype)));
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        ctx->cudnn, p->x, p->y, p->conv, p->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
        &returned, perf));
    auto workspace = [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(ctx->cudnn, p->x, p->y, p->conv,
                                                              p->w, algo, bytes);
    };
    return add_ranked_candidates(ctx, p, perf, returned, workspace, &p->backward_filter, st);
}

static void plan_destroy_descriptors(ConvPlan *p) {
    if (p->x) cudnnDestroyTensorDescriptor(p->x);
    if (p->y) cudnnDestroyTensorDescriptor(p->y);
    if (p->bias) cudnnDestroyTensorDescriptor(p->bias);
    if (p->w) cudnnDestroyFilterDescriptor(p->w);
    if (p->conv) cudnnDestroyConvolutionDescriptor(p->conv);
    if (p->relu) cudnnDestroyActivationDescriptor(p->relu);
    if (p->identity) cudnnDestroyActivationDescriptor(p->identity);
    p->relu = p->identity = NULL;
    p->x = p->y = p->bias = NULL;
    p->w = NULL;
    p->conv = NULL;
}

static void plan_free(ConvPlan *p) {
    if (!p) return;
    plan_destroy_descriptors(p);
    free(p);
}

// Describes the shape to cuDNN and ranks its algorithms. On failure the caller frees the
// plan, which destroys whatever descriptors were created.
static int plan_build_cudnn(CudaContext *ctx, ConvPlan *p, Status *st) {
    const Conv2dGeometry *g = &p->key;
    // x, w and y in the storage type; the bias too, as the fused call wants it with 16-bit
    // data (and cudnnConvolutionBackwardBias writes it), so the ops round the f32 bias (or
    // read the 16-bit gradient) through the workspace's scratch (conv_scratch_bytes).
    cudnnDataType_t data = cudnn_storage_type(g->dtype);
    // NHWC activations take an NHWC filter too (cuDNN wants the two formats to match for
    // its tensor-core kernels): KRSC, the ops' copy of the KCRS weights (conv_filter_bytes).
    // The bias follows y; with one value per channel its bytes are the same in both.
    cudnnTensorFormat_t format =
        g->layout == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->x, format, data, g->batch, g->in_channels, g->in_h,
                                           g->in_w));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, format, data, g->batch, g->out_channels,
                                           g->out_h, g->out_w));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->bias));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->bias, format, data, 1, g->out_channels, 1, 1));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, data, format,
                                           g->out_channels, g->in_channels / g->groups,
                                           g->kernel_h, g->kernel_w));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
    // PyTorch's Conv2d is a cross-correlation; cuDNN's CUDNN_CONVOLUTION would flip w.
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, g->pad_top, g->pad_left, g->stride_h,
                                                g->stride_w, g->dilation_h, g->dilation_w,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(p->conv, g->groups));
    TRY(forward_candidates(ctx, p, st));
    TRY(backward_data_candidates(ctx, p, st));
    TRY(backward_filter_candidates(ctx, p, st));
    return 0;
}

static int plan_build(CudaContext *ctx, ConvPlan *p, Status *st) {
    p->direct = !cudnn_can_run(&p->key);
    if (p->direct) return 0;
    TRY(plan_build_cudnn(ctx, p, st));
    // A shape for which the heuristics rank no supported algorithm for some op still
    // trains, on the direct kernels.
    if (p->forward.count == 0 || p->backward_data.count == 0 || p->backward_filter.count == 0) {
        plan_destroy_descriptors(p);
        p->direct = 1;
    }
    return 0;
}

// The plan for g, from the cache or built now (host work only: no device sync).
static int plan_for(CudaContext *ctx, const Conv2dGeometry *g, ConvPlan **out, Status *st) {
    *out = NULL;
    CudaConvAlgoCache *cache = ctx->conv_cache;
    if (!cache) {
        cache = (CudaConvAlgoCache *)calloc(1, sizeof *cache);
        if (!cache)
            return status_out_of_host_memory(st, sizeof *cache,
                                             "for the convolution algorithm cache");
        ctx->conv_cache = cache;
    }
    for (int i = cache->count - 1; i >= 0; i--) {
        ConvPlan *p = cache->plans[i];
        if (p->precision == ctx->precision && same_geometry(&p->key, g)) {
            *out = p;
            return 0;
        }
    }
    ConvPlan *p = (ConvPlan *)calloc(1, sizeof *p);
    if (!p) return status_out_of_host_memory(st, sizeof *p, "for a convolution plan");
    p->key = *g;
    p->precision = ctx->precision;
    int rc = plan_build(ctx, p, st);
    if (rc) {
        plan_free(p);
        return rc;
    }
    if (cache->count == CONV_CACHE_MAX_PLANS) {
        // Plans are only used within one op call, so dropping the oldest is safe.
        plan_free(cache->plans[0]);
        memmove(cache->plans, cache->plans + 1, (CONV_CACHE_MAX_PLANS - 1) * sizeof *cache->plans);
        cache->count--;
    }
    cache->plans[cache->count++] = p;
    *out = p;
    return 0;
}

void cuda_conv_cache_free(CudaContext *ctx) {
    CudaConvAlgoCache *cache = ctx->conv_cache;
    if (!cache) return;
    for (int i = 0; i < cache->count; i++) plan_free(cache->plans[i]);
    free(cache);
    ctx->conv_cache = NULL;
}

// ---- the ops ----------------------------------------------------------------------

// The kernels divide by groups, strides and dilations; the graph builder never makes
// such a geometry, but a bad one should be an error, not a division by zero.
static int check_geometry(const Backend *b, const char *op, const Conv2dGeometry *g,
                          Status *st) {
    TRY(backend_dtype_check(b, g->dtype, op, st));
    // What supports(OP_FAMILY_MATMUL) says no to is refused here too, as the GEMMs refuse it:
    // cuDNN's 16-bit convolutions need the tensor cores of that compute capability.
    TRY(backend_matmul_check(b, g->dtype, op, st));
    TRY(backend_layout_check(g->layout, op, st));
    if (g->batch >= 0 && g->in_channels >= 0 && g->in_h >= 0 && g->in_w >= 0 &&
        g->out_channels >= 0 && g->out_h >= 0 && g->out_w >= 0 && g->kernel_h > 0 &&
        g->kernel_w > 0 && g->stride_h > 0 && g->stride_w > 0 && g->dilation_h > 0 &&
        g->dilation_w > 0 && g->pad_top >= 0 && g->pad_left >= 0 && g->groups > 0 &&
        g->in_channels % g->groups == 0 && g->out_channels % g->groups == 0)
        return 0;
    return status_fail(st, STATUS_RUNTIME_ERROR,
                       "%s: bad geometry: batch %d, %dx%dx%d -> %dx%dx%d, kernel %dx%d, stride "
                       "%dx%d, pad %d,%d, dilation %dx%d, groups %d",
                       op, g->batch, g->in_channels, g->in_h, g->in_w, g->out_channels, g->out_h,
                       g->out_w, g->kernel_h, g->kernel_w, g->stride_h, g->stride_w, g->pad_top,
                       g->pad_left, g->dilation_h, g->dilation_w, g->groups);
}

// With no outputs (an empty batch) there is nothing to compute, but a gradient that is
// not accumulated must still read zero, as the CPU leaves it.
static int clear_unless(int accumulate, void *p, size_t bytes, CudaContext *ctx, Status *st) {
    if (accumulate || !p || bytes == 0) return 0;
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, ctx->stream));
    return 0;
}

// ---- the workspace under 16-bit storage ----------------------------------------------
//
// With 16-bit data cuDNN reads and writes every tensor of a call in that type (its
// PSEUDO_HALF / PSEUDO_BFLOAT16 configurations), but our bias, dw and dbias are f32. So the
// fused forward rounds the bias into a 16-bit copy, and backward-filter has cuDNN write dw
// (and, with the bias-gradient lever off, cudnnConvolutionBackwardBias's dbias) into a
// 16-bit scratch with beta 0, then convert adds it into the f32 gradient, honouring
// accumulate: PyTorch's autocast does the same (cuDNN's weight gradient in the input's type,
// cast to the f32 parameter's). Accumulating into the scratch instead would round the sum
// of micro-batches in 16 bits each time. That scratch sits at the start of the workspace,
// sized for the larger of weights and bias, padded so that cuDNN's part stays aligned.
static const size_t CONV_SCRATCH_ALIGN = 256;

static size_t conv_scratch_bytes(const Conv2dGeometry *g) {
    if (g->dtype == DTYPE_F32) return 0;
    size_t values = conv_weights(g) > (size_t)g->out_channels ? conv_weights(g)
                                                                 : (size_t)g->out_channels;
    size_t bytes = values * dtype_size(g->dtype);
    return (bytes + CONV_SCRATCH_ALIGN - 1) / CONV_SCRATCH_ALIGN * CONV_SCRATCH_ALIGN;
}

// ---- the workspace under NHWC activations ------------------------------------------
//
// cuDNN's NHWC filter descriptor reads the weights KRSC ([filters, kh, kw, channels /
// groups]), ours are KCRS as the parameters are stored. So forward and backward-data copy
// w into a KRSC copy in the storage type (one small transpose launch; lenet's second layer
// has 51 200 weights), and backward-filter has cuDNN write its KRSC weight gradient there,
// beta 0, which the transpose back adds into the f32 KCRS dw, honouring accumulate (and
// widening a 16-bit gradient, as convert does in NCHW). That region follows the 16-bit
// scratch, padded likewise; NCHW needs none. Without it (a caller that gave less) an NHWC
// op has nowhere to put the copy and runs the direct kernels.
static size_t conv_filter_bytes(const Conv2dGeometry *g) {
    if (g->layout != LAYOUT_NHWC) return 0;
    size_t bytes = conv_weights(g) * dtype_size(g->dtype);
    return (bytes + CONV_SCRATCH_ALIGN - 1) / CONV_SCRATCH_ALIGN * CONV_SCRATCH_ALIGN;
}

// What the ops keep at the start of the workspace, before cuDNN's part.
static size_t conv_extra_bytes(const Conv2dGeometry *g) {
    return conv_scratch_bytes(g) + conv_filter_bytes(g);
}

// The caller's workspace split into the 16-bit scratch, the NHWC filter copy and cuDNN's
// part. scratch is NULL when f32, filter when NCHW; both are NULL when the caller gave
// less than the two need (then the ops take the paths that need neither) and cuDNN gets
// it all.
typedef struct ConvWorkspace {
    void *scratch;
    void *filter;
    void *cudnn;
    size_t cudnn_bytes;
} ConvWorkspace;

static ConvWorkspace split_workspace(const Conv2dGeometry *g, void *workspace, size_t bytes) {
    size_t scratch = conv_scratch_bytes(g), filter = conv_filter_bytes(g);
    ConvWorkspace w = {NULL, NULL, workspace, bytes};
    if (scratch + filter == 0 || bytes < scratch + filter || !workspace) return w;
    if (scratch) w.scratch = workspace;
    if (filter) w.filter = (char *)workspace + scratch;
    w.cudnn = (char *)workspace + scratch + filter;
    w.cudnn_bytes = bytes - scratch - filter;
    return w;
}

// Whether cuDNN can run an op of this plan with this workspace: not a direct-kernel shape,
// and for NHWC, room for the KRSC filter.
static int cudnn_usable(const ConvPlan *p, const ConvWorkspace *ws) {
    return !p->direct && (p->key.layout != LAYOUT_NHWC || ws->filter);
}

template <typename S, typename D>
static int filter_transpose_t(CudaContext *ctx, const Conv2dGeometry *g, const S *src, D *dst,
                              int to_krsc, int accumulate, Status *st) {
    size_t total = conv_weights(g);
    unsigned grid = cuda_blocks_for(total);
    CUDA_CHECK_CONFIG(ctx, "conv2d_filter_transpose_kernel", grid, CUDA_THREADS, 0, total, 64);
    conv2d_filter_transpose_kernel<S, D><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        src, dst, g->in_channels / g->groups, g->kernel_h * g->kernel_w, to_krsc, accumulate,
        total);
    CUDA_CHECK_LAUNCH("conv2d_filter_transpose_kernel");
    return 0;
}

// The weights cuDNN reads: w itself under NCHW, else w copied KRSC into ws->filter (the
// caller has checked cudnn_usable).
static int cudnn_filter(CudaContext *ctx, const Conv2dGeometry *g, const void *w,
                        const ConvWorkspace *ws, const void **out, Status *st) {
    *out = w;
    if (g->layout != LAYOUT_NHWC) return 0;
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype, rc = filter_transpose_t(ctx, g, (const storage_t *)w,
                                                            (storage_t *)ws->filter, 1, 0, st));
    *out = ws->filter;
    return rc;
}

// dw = (accumulate ? dw : 0) + cuDNN's KRSC weight gradient in ws->filter, made KCRS.
static int filter_gradient_from_krsc(CudaContext *ctx, const Conv2dGeometry *g,
                                     const ConvWorkspace *ws, float *dw, int accumulate,
                                     Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(g->dtype,
                          rc = filter_transpose_t(ctx, g, (const storage_t *)ws->filter, dw, 0,
                                                  accumulate, st));
    return rc;
}

static int cuda_conv2d_workspace_size(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                      Status *st) {
    *bytes = 0;
    TRY(check_geometry(b, "conv2d_workspace_size", g, st));
    if (conv_outputs(g) == 0) return 0;
    ConvPlan *p;
    TRY(plan_for(cuda_context(b), g, &p, st));
    if (p->direct) return 0;
    const ConvCandidates *ops[3] = {&p->forward, &p->backward_data, &p->backward_filter};
    for (int i = 0; i < 3; i++) {
        size_t need = ops[i]->list[ops[i]->budgeted].bytes;
        if (need > *bytes) *bytes = need;
    }
    *bytes += conv_extra_bytes(g);
    return 0;
}

// NCHW: every op runs in no workspace at all: candidates_pick finds cuDNN's best-ranked
// algorithm that needs none (implicit GEMM usually), else the op runs our direct kernels.
// NHWC: not zero. With none, every op would run the direct kernels (no room for the KRSC
// filter copy), so the least is the 16-bit scratch and the filter copy (conv_extra_bytes):
// then cuDNN's algorithms that need nothing more run.
static int cuda_conv2d_least_workspace(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                       Status *st) {
    (void)b;
    *bytes = 0;
    TRY(check_geometry(b, "conv2d_least_workspace", g, st));
    if (g->layout == LAYOUT_NHWC && conv_outputs(g) > 0) *bytes = conv_extra_bytes(g);
    return 0;
}

template <typename T>
static int bias_activation_t(CudaContext *ctx, const Conv2dGeometry *g, T *y, const float *bias,
                             const FusedActivation *act, Status *st) {
    FusedActivation none = {0, ACTIVATION_RELU, 0.0f};
    if (g->layout == LAYOUT_NHWC) {
        size_t total = conv_outputs(g);
        unsigned grid = cuda_blocks_for(total);
        CUDA_CHECK_CONFIG(ctx, "conv2d_bias_activation_nhwc_kernel", grid, CUDA_THREADS, 0,
                          total, 64);
        conv2d_bias_activation_nhwc_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
            y, bias, g->out_channels, act ? *act : none, total);
        CUDA_CHECK_LAUNCH("conv2d_bias_activation_nhwc_kernel");
        return 0;
    }
    size_t plane = (size_t)g->out_h * g->out_w;
    size_t planes = (size_t)g->batch * (size_t)g->out_channels;
    dim3 grid(cuda_blocks_for(plane),
              (unsigned)(planes < CUDA_MAX_BLOCKS ? planes : CUDA_MAX_BLOCKS));
    CUDA_CHECK_CONFIG(ctx, "conv2d_bias_activation_kernel", grid, CUDA_THREADS, 0,
                      conv_outputs(g), 64);
    conv2d_bias_activation_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        y, bias, g->out_channels, plane, act ? *act : none, planes);
    CUDA_CHECK_LAUNCH("conv2d_bias_activation_kernel");
    return 0;
}

// y = act(conv(x, w) + bias) in separate passes (act may be NULL): cuDNN's convolution,
// then for f32 cudnnAddTensor and activation_forward, for 16-bit one bias-and-activation
// pass over the stored y; or the direct kernel, activation included.
static int forward_unfused(const Backend *b, CudaContext *ctx, ConvPlan *p,
                           const Conv2dGeometry *g, const void *x, const void *w,
                           const float *bias, const FusedActivation *act, void *y,
                           const ConvWorkspace *ws, Status *st) {
    const ConvChoice *choice =
        cudnn_usable(p, ws) ? candidates_pick(&p->forward, ws->cudnn_bytes) : NULL;
    if (!choice) return direct_forward(ctx, g, x, w, bias, act, y, st);
    const void *filter = NULL;
    TRY(cudnn_filter(ctx, g, w, ws, &filter, st));
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, choice->math));
    CUDNN_CHECK(cudnnConvolutionForward(ctx->cudnn, &one, p->x, x, p->w, filter, p->conv,
                                        (cudnnConvolutionFwdAlgo_t)choice->algo, ws->cudnn,
                                        choice->bytes, &zero, p->y, y));
    int activate = act && act->apply;
    if (g->dtype != DTYPE_F32) {
        if (!bias && !activate) return 0;
        int rc = 0;
        CUDA_STORAGE_DISPATCH(g->dtype, rc = bias_activation_t(ctx, g, (storage_t *)y, bias,
                                                               act, st));
        return rc;
    }
    // y += bias broadcast over N, H and W.
    if (bias) CUDNN_CHECK(cudnnAddTensor(ctx->cudnn, &one, p->bias, bias, &one, p->y, y));
    if (!activate) return 0;
    const ActivationForwardArgs activation = {act->kind, act->slope, DTYPE_F32, y, y,
                                              conv_outputs(g)};
    return b->activation_forward(b, &activation, st);
}

static int cuda_conv2d_forward(const Backend *b, const Conv2dGeometry *g,
                               const Conv2dForwardTensors *t, Status *st) {
    TRY(check_geometry(b, "conv2d_forward", g, st));
    if (conv_outputs(g) == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    ConvPlan *p;
    TRY(plan_for(ctx, g, &p, st));
    ConvWorkspace ws = split_workspace(g, t->workspace, t->workspace_bytes);
    return forward_unfused(b, ctx, p, g, t->x, t->w, t->bias, NULL, t->y, &ws, st);
}

// ---- convolution, bias and activation in one call ------------------------------------
//
// Whether cuDNN refused a configuration rather than failed: cuDNN 9 answers with a
// category and a detail (CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE is 3003, the category 3000),
// so the whole NOT_SUPPORTED category counts, and BAD_PARAM itself (what the H200 answered
// the fused call for grouped convolutions); BAD_PARAM's details (a null or misaligned
// pointer) are faults and stay errors. For the optional paths only: their caller has
// another way to the same result.
static int cudnn_refused(cudnnStatus_t status) {
    return status == CUDNN_STATUS_BAD_PARAM ||
           (status >= CUDNN_STATUS_NOT_SUPPORTED && status < CUDNN_STATUS_NOT_SUPPORTED + 1000);
}

// cudnnConvolutionBiasActivationForward computes y = act(alpha1 conv(x, w) + alpha2 z +
// bias) in one pass over y, in place of the convolution, cudnnAddTensor's bias pass and the
// activation kernel's. Its activations here are RELU, and IDENTITY (no activation), which
// cuDNN's API reference allows only with CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM.
// Everything else runs unfused (forward_unfused): other activations (leaky_relu, sigmoid,
// tanh, gelu), no bias (the call requires one), IDENTITY with another algorithm, the
// direct kernels' shapes, 16-bit data without room for the bias's 16-bit copy, and any
// configuration cuDNN answers CUDNN_STATUS_NOT_SUPPORTED; and everything, with the
// conv-fused lever off (base/lever.h), to measure what the fused call saves.
//
// With 16-bit data the call's bias is in the data's type (cuDNN's table of supported
// configurations for this call: the bias matches y except in the INT8 ones, whose bias is
// FLOAT), so the f32 bias is rounded into the workspace's scratch first: one tiny launch.
//
// z is y, with alpha2 = 0. cuDNN's reference does not promise that z goes unread when
// alpha2 is 0, and y may hold anything (the parity test poisons it with NaN; 0 * NaN is
// NaN), so y is zeroed first: one write pass, where the unfused path reads and writes y
// twice more (bias, activation).
static int conv_activation_descriptor(ConvPlan *p, int relu, cudnnActivationDescriptor_t *out,
                                      Status *st) {
    cudnnActivationDescriptor_t *slot = relu ? &p->relu : &p->identity;
    if (!*slot) {
        CUDNN_CHECK(cudnnCreateActivationDescriptor(slot));
        CUDNN_CHECK(cudnnSetActivationDescriptor(*slot, relu ? CUDNN_ACTIVATION_RELU
                                                             : CUDNN_ACTIVATION_IDENTITY,
                                                 CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    *out = *slot;
    return 0;
}

static int cuda_conv2d_forward_bias_activation(const Backend *b, const Conv2dGeometry *g,
                                               const Conv2dForwardTensors *t,
                                               const FusedActivation *act, Status *st) {
    TRY(check_geometry(b, "conv2d_forward_bias_activation", g, st));
    if (conv_outputs(g) == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    ConvPlan *p = NULL;
    TRY(plan_for(ctx, g, &p, st));
    ConvWorkspace ws = split_workspace(g, t->workspace, t->workspace_bytes);
    int relu = act->apply && act->kind == ACTIVATION_RELU;
    const ConvChoice *choice =
        cudnn_usable(p, &ws) ? candidates_pick(&p->forward, ws.cudnn_bytes) : NULL;
    // A grouped convolution runs unfused: on an H200 (cuDNN 9.19) the fused call on one
    // with tensor-op math asked for more workspace than cudnnGetConvolutionForwardWorkspaceSize
    // gives the same algorithm, and failed with CUDNN_STATUS_BAD_PARAM.
    int fusable =
        t->bias && choice && g->groups == 1 && !p->fused_refused &&
        (g->dtype == DTYPE_F32 || ws.scratch) &&
        !lever_off(ctx->disabled_levers, LEVER_CONV_FUSED) &&
        (relu || (!act->apply && choice->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM));
    if (!fusable) return forward_unfused(b, ctx, p, g, t->x, t->w, t->bias, act, t->y, &ws, st);
    cudnnActivationDescriptor_t activation = NULL;
    TRY(conv_activation_descriptor(p, relu, &activation, st));
    const void *call_bias = t->bias;
    if (g->dtype != DTYPE_F32) {
        const ConvertArgs narrow = {
            t->bias, DTYPE_F32, ws.scratch, g->dtype, (size_t)g->out_channels, 0};
        TRY(b->convert(b, &narrow, st));
        call_bias = ws.scratch;
    }
    const void *filter = NULL;
    TRY(cudnn_filter(ctx, g, t->w, &ws, &filter, st));
    CUDA_CHECK(cudaMemsetAsync(t->y, 0, conv_outputs(g) * dtype_size(g->dtype), ctx->stream));
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, choice->math));
    cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
        ctx->cudnn, &one, p->x, t->x, p->w, filter, p->conv,
        (cudnnConvolutionFwdAlgo_t)choice->algo, ws.cudnn, choice->bytes, &zero, p->y, t->y,
        p->bias, call_bias, activation, p->y, t->y);
    // The fused call is an optimisation: a configuration cuDNN will not fuse runs unfused,
    // and is not offered again. BAD_PARAM counts as a refusal too: on the H200 the fused call
    // answered it for grouped convolutions whose workspace the plain call's size query had
    // given (hence the groups == 1 above), and 16-bit data have not run on a card yet. A
    // real fault in the descriptors fails the unfused convolution as well, and is reported
    // there.
    if (cudnn_refused(status)) {
        p->fused_refused = 1;
        return forward_unfused(b, ctx, p, g, t->x, t->w, t->bias, act, t->y, &ws, st);
    }
    CUDNN_CHECK(status);
    return 0;
}

static int cuda_conv2d_backward_data(const Backend *b, const Conv2dGeometry *g,
                                     const Conv2dBackwardDataTensors *t, Status *st) {
    TRY(check_geometry(b, "conv2d_backward_data", g, st));
    CudaContext *ctx = cuda_context(b);
    if (conv_outputs(g) == 0)
        return clear_unless(t->accumulate, t->dx, conv_inputs(g) * dtype_size(g->dtype), ctx, st);
    ConvPlan *p;
    TRY(plan_for(ctx, g, &p, st));
    ConvWorkspace ws = split_workspace(g, t->workspace, t->workspace_bytes);
    const ConvChoice *choice =
        cudnn_usable(p, &ws) ? candidates_pick(&p->backward_data, ws.cudnn_bytes) : NULL;
    if (!choice) return direct_backward_data(ctx, g, t->dy, t->w, t->dx, t->accumulate, st);
    const void *filter = NULL;
    TRY(cudnn_filter(ctx, g, t->w, &ws, &filter, st));
    // beta 1 with 16-bit dx: cuDNN reads dx, adds in f32 and rounds once, as the CPU does.
    const float one = 1.0f, beta = t->accumulate ? 1.0f : 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, choice->math));
    CUDNN_CHECK(cudnnConvolutionBackwardData(ctx->cudnn, &one, p->w, filter, p->y, t->dy, p->conv,
                                             (cudnnConvolutionBwdDataAlgo_t)choice->algo, ws.cudnn,
                                             choice->bytes, &beta, p->x, t->dx));
    return 0;
}

// The bias gradient where cuDNN ran the weight gradient: ours (the bias-gradient lever),
// or cudnnConvolutionBackwardBias, which with 16-bit dy writes a 16-bit dbias: into the
// scratch, then added into the f32 gradient (see the workspace's comment).
static int cudnn_path_bias(const Backend *b, CudaContext *ctx, ConvPlan *p,
                           const Conv2dGeometry *g, const void *dy, float *dbias,
                           const ConvWorkspace *ws, int accumulate, Status *st) {
    if (!lever_off(ctx->disabled_levers, LEVER_BIAS_GRADIENT) || p->bias_refused)
        return backward_bias(b, ctx, g, dy, dbias, accumulate, st);
    const float one = 1.0f, zero = 0.0f, beta = accumulate ? 1.0f : 0.0f;
    // cuDNN's documentation gives no data types or layouts for this call, and neither 16-bit
    // nor NHWC dy has reached it on a card yet: should cuDNN refuse one, ours computes the
    // same gradient, and conv2d_describe names the refusal so that a measurement of this
    // path can tell which ran.
    int f32 = g->dtype == DTYPE_F32;
    cudnnStatus_t status = cudnnConvolutionBackwardBias(ctx->cudnn, &one, p->y, dy,
                                                        f32 ? &beta : &zero, p->bias,
                                                        f32 ? (void *)dbias : ws->scratch);
    if (cudnn_refused(status)) {
        p->bias_refused = 1;
        return backward_bias(b, ctx, g, dy, dbias, accumulate, st);
    }
    CUDNN_CHECK(status);
    if (f32) return 0;
    const ConvertArgs widen = {ws->scratch, g->dtype, dbias, DTYPE_F32, (size_t)g->out_channels,
                               accumulate};
    return b->convert(b, &widen, st);
}

static int cuda_conv2d_backward_filter(const Backend *b, const Conv2dGeometry *g,
                                       const Conv2dBackwardFilterTensors *t, Status *st) {
    TRY(check_geometry(b, "conv2d_backward_filter", g, st));
    CudaContext *ctx = cuda_context(b);
    if (conv_outputs(g) == 0) {
        TRY(clear_unless(t->accumulate, t->dw, conv_weights(g) * sizeof(float), ctx, st));
        return clear_unless(t->accumulate, t->dbias, (size_t)g->out_channels * sizeof(float), ctx,
                            st);
    }
    ConvPlan *p;
    TRY(plan_for(ctx, g, &p, st));
    ConvWorkspace ws = split_workspace(g, t->workspace, t->workspace_bytes);
    const ConvChoice *choice =
        !cudnn_usable(p, &ws) || (g->dtype != DTYPE_F32 && !ws.scratch)
            ? NULL
            : candidates_pick(&p->backward_filter, ws.cudnn_bytes);
    if (!choice) {
        TRY(direct_backward_filter(ctx, g, t->x, t->dy, t->dw, t->accumulate, st));
        return t->dbias ? backward_bias(b, ctx, g, t->dy, t->dbias, t->accumulate, st) : 0;
    }
    const float one = 1.0f, zero = 0.0f, beta = t->accumulate ? 1.0f : 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, choice->math));
    // NCHW: f32 straight into dw with beta, 16-bit into the scratch then convert. NHWC:
    // KRSC into the filter copy's room with beta 0, then transposed (and widened) into dw.
    int nhwc = g->layout == LAYOUT_NHWC;
    void *filter_out = nhwc ? ws.filter : g->dtype == DTYPE_F32 ? (void *)t->dw : ws.scratch;
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        ctx->cudnn, &one, p->x, t->x, p->y, t->dy, p->conv,
        (cudnnConvolutionBwdFilterAlgo_t)choice->algo, ws.cudnn, choice->bytes,
        g->dtype == DTYPE_F32 && !nhwc ? &beta : &zero, p->w, filter_out));
    if (nhwc)
        TRY(filter_gradient_from_krsc(ctx, g, &ws, t->dw, t->accumulate, st));
    else if (g->dtype != DTYPE_F32) {
        const ConvertArgs widen = {ws.scratch, g->dtype, t->dw, DTYPE_F32, conv_weights(g),
                                   t->accumulate};
        TRY(b->convert(b, &widen, st));
    }
    return t->dbias ? cudnn_path_bias(b, ctx, p, g, t->dy, t->dbias, &ws, t->accumulate, st) : 0;
}

// ---- which algorithms run: for logs and test failures ------------------------------

static const char *forward_algorithm_name(int a) {
    static const char *const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM",
                                        "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
                                        "WINOGRAD_NONFUSED"};
    return a >= 0 && a < (int)(sizeof names / sizeof names[0]) ? names[a] : "?";
}
static const char *backward_data_algorithm_name(int a) {
    static const char *const names[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                        "WINOGRAD_NONFUSED"};
    return a >= 0 && a < (int)(sizeof names / sizeof names[0]) ? names[a] : "?";
}
static const char *backward_filter_algorithm_name(int a) {
    static const char *const names[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                        "WINOGRAD_NONFUSED", "FFT_TILING"};
    return a >= 0 && a < (int)(sizeof names / sizeof names[0]) ? names[a] : "?";
}

static int describe_choice(char *out, size_t size, const char *op, const ConvChoice *choice,
                           const char *(*name)(int)) {
    if (!choice) return snprintf(out, size, "%s direct kernel", op);
    const char *math = choice->math == CUDNN_FMA_MATH ? "FMA"
                       : choice->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                           ? "tensor op, FP16 conversion allowed"
                           : "tensor op";
    return snprintf(out, size, "%s %s (%s, %zu bytes)", op, name(choice->algo), math,
                    choice->bytes);
}

extern "C" int cuda_conv2d_describe(const Backend *b, const Conv2dGeometry *g,
                                    size_t workspace_bytes, char *out, size_t size, Status *st) {
    out[0] = '\0';
    TRY(check_geometry(b, "conv2d_describe", g, st));
    if (conv_outputs(g) == 0) {
        snprintf(out, size, "nothing to compute");
        return 0;
    }
    ConvPlan *p;
    TRY(plan_for(cuda_context(b), g, &p, st));
    const ConvCandidates *ops[3] = {&p->forward, &p->backward_data, &p->backward_filter};
    const char *labels[3] = {"forward", "backward-data", "backward-filter"};
    const char *(*names[3])(int) = {forward_algorithm_name, backward_data_algorithm_name,
                                    backward_filter_algorithm_name};
    // What the ops would run given this workspace: cuDNN's part after the 16-bit scratch
    // and the NHWC filter copy (split_workspace).
    size_t extra = conv_extra_bytes(g);
    size_t cudnn_bytes = workspace_bytes >= extra ? workspace_bytes - extra : workspace_bytes;
    // 16-bit data given less than the scratch: cuda_conv2d_backward_filter runs the direct
    // kernel (cuDNN would write dw in 16 bits with nowhere to put it), so say that rather
    // than the cuDNN algorithm that would fit cudnn_bytes. NHWC given less than the filter
    // copy: every op runs the direct kernels.
    int filter_direct = extra != 0 && workspace_bytes < extra;
    int all_direct = filter_direct && g->layout == LAYOUT_NHWC;
    size_t used = 0;
    for (int i = 0; i < 3 && used < size; i++) {
        const ConvChoice *choice = p->direct || all_direct || (i == 2 && filter_direct)
                                       ? NULL
                                       : candidates_pick(ops[i], cudnn_bytes);
        int n = describe_choice(out + used, size - used, labels[i], choice, names[i]);
        used += n > 0 ? (size_t)n : 0;
        if (i < 2 && used + 2 < size) used += (size_t)snprintf(out + used, size - used, ", ");
    }
    // What cuDNN refused so far on this shape, which our kernels then ran instead.
    if (p->fused_refused && used < size)
        used += (size_t)snprintf(out + used, size - used, "; cuDNN refused the fused forward");
    if (p->bias_refused && used < size)
        used += (size_t)snprintf(out + used, size - used,
                                 "; cuDNN refused the bias gradient (ours ran)");
    return 0;
}

void cuda_register_conv_ops(Backend *table) {
    table->conv2d_workspace_size = cuda_conv2d_workspace_size;
    table->conv2d_least_workspace = cuda_conv2d_least_workspace;
    table->conv2d_forward = cuda_conv2d_forward;
    table->conv2d_forward_bias_activation = cuda_conv2d_forward_bias_activation;
    table->conv2d_backward_data = cuda_conv2d_backward_data;
    table->conv2d_backward_filter = cuda_conv2d_backward_filter;
}
