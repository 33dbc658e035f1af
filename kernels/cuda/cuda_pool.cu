// Max and average pooling on the GPU, written to give the CPU's results bit for bit
// (kernels/cpu/cpu_pool.c): the same window clipping, the same visiting order, the same
// float operations in the same order.
//
// Forward runs one thread per output: a window is a handful of reads, and neighbouring
// threads read neighbouring (or stride-apart) inputs, so the loads coalesce.
//
// Max-pool backward has two kernels, both writing every dx exactly once, with no atomics,
// so both are deterministic and match the CPU exactly (dx is a sum of dy's, added in the
// CPU's order):
//
// - Windows that do not overlap (stride >= size on both axes; size=2 pooling, stride =
//   size, is the common case): one thread per OUTPUT. Each input then lies in at most one
//   window, so the input plane is cut into cells, one per output, each holding its window
//   (plus the inputs in no window: gaps when stride > size, the rows and columns past the
//   last window); the thread writes its cell, dy at the argmax forward recorded and zeros
//   elsewhere, reading dy and argmax once. With accumulate only the argmax changes, so the
//   thread adds there and touches nothing else.
// - Overlapping windows (stride < size): one thread per INPUT element, which gathers from
//   the few windows that contain it. A scatter from each output would need atomicAdd where
//   windows share an input, whose order, and so whose last bit, changes from run to run.
//   An input lies in at most ceil(kernel/stride) windows per axis, so the gather costs
//   little more than the scatter.
//
// With the maxpool-scatter lever off (base/lever.h) every shape takes the gather, as before
// the per-output kernel existed, to measure what it saves.
//
// The H100 profile at batch 1024 (docs/benchmarks.md) ran the gather for lenet's size=2
// pooling too: 329 + 171 us per step, 12% of lenet's kernel time, for 154 + 77 MB of
// traffic (dx written, dy and argmax read), some 50 + 25 us of bandwidth. Per input it
// did 64-bit divisions (its plane, its row) and a search of the windows containing it; at
// six or seven times the time the bytes need, that arithmetic rather than memory is the
// likely limit (the profile did not break it down further). The per-output kernel divides
// once per output, in 32-bit arithmetic where the tensors allow, and searches nothing.
//
// Every kernel is templated on how x, y, dy and dx are stored (f32, bf16 or f16;
// kernels/cuda/cuda_storage.h): values are widened on the load, sums run in f32 as above,
// and each stored value is rounded once, as the CPU's widen / f32 loop / narrow does, so
// the 16-bit results match the CPU's in the same storage bit for bit where the f32 ones do.
// argmax stays int32.
//
// NHWC (g.layout; kernels/backend.h): the same kernels, templated on the layout, with only
// the addressing changed. A thread's index i still names the element it writes (an output,
// or an input for the gathers), now in [batch, h, w, channels] order: c = i % channels,
// then the pixel within the plane, then the sample. So consecutive threads take
// consecutive channels of one pixel, and their loads and stores are consecutive addresses
// as NCHW's consecutive pixels are. A (sample, channel) plane is then no longer a
// contiguous run but every channels-th value from sample * pixels * channels + c: the
// kernels address pixel p of a plane as first + p * step (step 1 in NCHW). argmax keeps
// its meaning (h * in_w + w within the plane) and is laid out as y is. The windows, the
// visiting order and the float operations are those of NCHW, so the results are the CPU's
// bit for bit in NHWC too (the CPU transposes around its NCHW loops).
#include <limits.h>

#include "kernels/cuda/cuda_storage.h"

// The window of output (oh, ow) clipped to the input: rows [h0, h1), columns [w0, w1).
struct PoolWindow {
    int h0, h1, w0, w1;
};

__device__ static inline PoolWindow pool_window(const Pool2dGeometry &g, int oh, int ow) {
    PoolWindow win;
    win.h0 = oh * g.stride_h - g.pad_top;
    win.w0 = ow * g.stride_w - g.pad_left;
    win.h1 = min(win.h0 + g.kernel_h, g.in_h);
    win.w1 = min(win.w0 + g.kernel_w, g.in_w);
    win.h0 = max(win.h0, 0);
    win.w0 = max(win.w0, 0);
    return win;
}

// The outputs along one axis whose window contains input position `at`: [*lo, *hi).
// Window o covers [o * stride - pad, o * stride - pad + kernel), so o runs from
// ceil((at + pad - kernel + 1) / stride) to floor((at + pad) / stride).
__device__ static inline void windows_containing(int at, int pad, int kernel, int stride,
                                                 int out, int *lo, int *hi) {
    int first = at + pad - kernel + 1;
    *lo = first <= 0 ? 0 : (first + stride - 1) / stride;
    *hi = min((at + pad) / stride + 1, out);
}

// The window of the output at `o` within its plane (row-major), clipped to the input.
__device__ static inline PoolWindow output_window(const Pool2dGeometry &g, size_t o) {
    return pool_window(g, (int)(o / (size_t)g.out_w), (int)(o % (size_t)g.out_w));
}

// The outputs whose window contains the input at `at` within its plane (row-major): rows
// [h0, h1), columns [w0, w1) of the output plane.
struct OutputRange {
    int h0, h1, w0, w1;
};

__device__ static inline OutputRange outputs_containing(const Pool2dGeometry &g, size_t at) {
    int ih = (int)(at / (size_t)g.in_w), iw = (int)(at % (size_t)g.in_w);
    OutputRange r;
    windows_containing(ih, g.pad_top, g.kernel_h, g.stride_h, g.out_h, &r.h0, &r.h1);
    windows_containing(iw, g.pad_left, g.kernel_w, g.stride_w, g.out_w, &r.w0, &r.w1);
    return r;
}

// Where a plane of the batch lies, found from one element of a tensor (its thread's index):
// `plane` is sample * channels + channel in NCHW and the sample in NHWC, where `channel`
// holds the channel apart; `pixel` is h * w_size + w within the plane.
template <typename Index>
struct PlaneAt {
    Index plane, pixel;
    int channel;
};

// Element i of a tensor whose planes hold `pixels` values (NCHW: planes in a row; NHWC:
// the channels of a pixel in a row). NCHW divides as the kernels did before NHWC existed.
template <bool Nhwc, typename Index>
__device__ static inline PlaneAt<Index> plane_at(Index i, Index pixels, int channels) {
    PlaneAt<Index> at;
    if (Nhwc) {
        Index spot = i / (Index)channels;
        at.channel = (int)(i - spot * (Index)channels);
        at.plane = spot / pixels;
        at.pixel = spot - at.plane * pixels;
    } else {
        at.channel = 0;
        at.plane = i / pixels;
        at.pixel = i % pixels;
    }
    return at;
}

// The offset of that plane's pixel 0 in a tensor (x, y, dx, dy or argmax) whose planes
// hold `pixels` values; its pixel p lies plane_step apart from pixel p - 1.
template <bool Nhwc, typename Index>
__device__ static inline Index plane_first(const PlaneAt<Index> &at, Index pixels, int channels) {
    return Nhwc ? at.plane * pixels * (Index)channels + (Index)at.channel : at.plane * pixels;
}

template <bool Nhwc, typename Index>
__device__ static inline Index plane_step(int channels) {
    return Nhwc ? (Index)channels : (Index)1;
}

// The sizes every pooling kernel indexes with: an input and an output plane, and how far
// apart a plane's neighbouring pixels lie.
template <typename Index>
struct PoolPlanes {
    Index in, out, step;
};

template <bool Nhwc, typename Index>
__device__ static inline PoolPlanes<Index> pool_planes(const Pool2dGeometry &g) {
    PoolPlanes<Index> p = {(Index)g.in_h * g.in_w, (Index)g.out_h * g.out_w,
                           plane_step<Nhwc, Index>(g.channels)};
    return p;
}

// One thread per output. The window is visited row-major starting from its first element,
// and `take` is the CPU's rule: a larger value wins, ties keep the first, a NaN wins (and
// then stays, since nothing compares greater than NaN). Padding is never read, so it
// never wins. pad <= size / 2 (checked at graph build) leaves every window at least one
// input; an empty one would only arise from a geometry the graph never builds, and gets
// -inf with argmax -1 (which backward never matches) instead of a read out of bounds.
template <typename T, bool Nhwc>
__global__ static void maxpool_forward_kernel(Pool2dGeometry g, const T *x, T *y,
                                              int32_t *argmax, size_t total) {
    PoolPlanes<size_t> planes = pool_planes<Nhwc, size_t>(g);
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        PlaneAt<size_t> out = plane_at<Nhwc>(i, planes.out, g.channels);
        PoolWindow win = output_window(g, out.pixel);
        if (win.h0 >= win.h1 || win.w0 >= win.w1) {
            storage_store(y, i, -INFINITY);
            argmax[i] = -1;
            continue;
        }
        const T *image = x + plane_first<Nhwc>(out, planes.in, g.channels);
        int best_at = win.h0 * g.in_w + win.w0;
        float best = storage_load(image, (size_t)best_at * planes.step);
        for (int ih = win.h0; ih < win.h1; ih++)
            for (int iw = win.w0; iw < win.w1; iw++) {
                int at = ih * g.in_w + iw;
                float v = storage_load(image, (size_t)at * planes.step);
                bool take = (v > best) || (v != v && best == best);
                best = take ? v : best;
                best_at = take ? at : best_at;
            }
        storage_store(y, i, best);  // exact: best is one of the stored inputs
        argmax[i] = best_at;
    }
}

// One thread per input element: the sum of dy over the windows that contain it and chose
// it, in ascending output order, as the CPU's scatter adds them.
template <typename T, bool Nhwc>
__global__ static void maxpool_backward_kernel(Pool2dGeometry g, const T *dy,
                                               const int32_t *argmax, T *dx, int accumulate,
                                               size_t total) {
    PoolPlanes<size_t> planes = pool_planes<Nhwc, size_t>(g);
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        PlaneAt<size_t> in = plane_at<Nhwc>(i, planes.in, g.channels);
        size_t at = in.pixel;
        OutputRange out = outputs_containing(g, at);
        size_t first = plane_first<Nhwc>(in, planes.out, g.channels);
        const T *grad = dy + first;
        const int32_t *arg = argmax + first;
        float sum = accumulate ? storage_load(dx, i) : 0.0f;
        for (int oh = out.h0; oh < out.h1; oh++)
            for (int ow = out.w0; ow < out.w1; ow++) {
                size_t o = ((size_t)oh * g.out_w + ow) * planes.step;
                if (arg[o] == (int32_t)at) sum += storage_load(grad, o);
            }
        storage_store(dx, i, sum);
    }
}

// The inputs along one axis that output o owns when windows do not overlap: [*lo, *hi),
// from its window's first position to the next window's, clipped to the input; the first
// output's cell starts at 0 and the last one's runs to the input's end. So the cells of
// the outputs 0 .. out - 1 tile [0, in), and each holds its window (kernel <= stride, and
// pad <= kernel / 2 < stride places every window after the previous cell).
__device__ static inline void owned_span(int o, int out, int stride, int pad, int in, int *lo,
                                         int *hi) {
    *lo = o == 0 ? 0 : min(max(o * stride - pad, 0), in);
    *hi = o == out - 1 ? in : min(max((o + 1) * stride - pad, 0), in);
}

// Non-overlapping windows, one thread per output (see the top of the file): its cell of
// dx gets 0 + dy at the argmax and 0 elsewhere, as the CPU's memset and += leave them
// (the add of 0 turns a dy of -0 into +0, as the CPU's does); with accumulate, only
// dx[argmax] += dy. An empty window's argmax (-1) matches no input. Index is int where
// the tensors fit it (the launch checks), size_t otherwise.
template <typename T, bool Nhwc, typename Index>
__global__ static void maxpool_backward_tiled_kernel(Pool2dGeometry g, const T *dy,
                                                     const int32_t *argmax, T *dx,
                                                     int accumulate, Index total) {
    PoolPlanes<Index> planes = pool_planes<Nhwc, Index>(g);
    for (Index o = blockIdx.x * (Index)blockDim.x + threadIdx.x; o < total;
         o += (Index)gridDim.x * blockDim.x) {
        PlaneAt<Index> out = plane_at<Nhwc>(o, planes.out, g.channels);
        T *image = dx + plane_first<Nhwc>(out, planes.in, g.channels);
        int32_t winner = argmax[o];
        float grad = storage_load(dy, o);
        if (accumulate) {
            if (winner >= 0) {
                Index w = (Index)winner * planes.step;
                storage_store(image, w, storage_load(image, w) + grad);
            }
            continue;
        }
        int p = (int)out.pixel, h0, h1, w0, w1;
        owned_span(p / g.out_w, g.out_h, g.stride_h, g.pad_top, g.in_h, &h0, &h1);
        owned_span(p % g.out_w, g.out_w, g.stride_w, g.pad_left, g.in_w, &w0, &w1);
        float routed = __fadd_rn(0.0f, grad);
        for (int ih = h0; ih < h1; ih++)
            for (int iw = w0; iw < w1; iw++) {
                int at = ih * g.in_w + iw;
                storage_store(image, (Index)at * planes.step, at == winner ? routed : 0.0f);
            }
    }
}

// One thread per output: the float sum of the clipped window, row-major, times
// 1 / (kernel_h * kernel_w); the padding counts as zeros (count_include_pad).
template <typename T, bool Nhwc>
__global__ static void avgpool_forward_kernel(Pool2dGeometry g, const T *x, T *y, float scale,
                                              size_t total) {
    PoolPlanes<size_t> planes = pool_planes<Nhwc, size_t>(g);
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        PlaneAt<size_t> out = plane_at<Nhwc>(i, planes.out, g.channels);
        PoolWindow win = output_window(g, out.pixel);
        const T *image = x + plane_first<Nhwc>(out, planes.in, g.channels);
        float sum = 0.0f;
        for (int ih = win.h0; ih < win.h1; ih++)
            for (int iw = win.w0; iw < win.w1; iw++)
                sum += storage_load(image, ((size_t)ih * g.in_w + iw) * planes.step);
        storage_store(y, i, sum * scale);
    }
}

// One thread per input element: each containing window's share dy * scale, added in
// ascending output order. __fmul_rn keeps the share rounded on its own, as the CPU
// computes it, instead of letting the compiler fuse it into the addition (an FMA would
// differ from the CPU in the last bit).
template <typename T, bool Nhwc>
__global__ static void avgpool_backward_kernel(Pool2dGeometry g, const T *dy, T *dx, float scale,
                                               int accumulate, size_t total) {
    PoolPlanes<size_t> planes = pool_planes<Nhwc, size_t>(g);
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        PlaneAt<size_t> in = plane_at<Nhwc>(i, planes.in, g.channels);
        OutputRange out = outputs_containing(g, in.pixel);
        const T *grad = dy + plane_first<Nhwc>(in, planes.out, g.channels);
        float sum = accumulate ? storage_load(dx, i) : 0.0f;
        for (int oh = out.h0; oh < out.h1; oh++)
            for (int ow = out.w0; ow < out.w1; ow++)
                sum += __fmul_rn(storage_load(grad, ((size_t)oh * g.out_w + ow) * planes.step),
                                 scale);
        storage_store(dx, i, sum);
    }
}

static size_t pool_inputs(const Pool2dGeometry *g) {
    return (size_t)g->batch * g->channels * g->in_h * g->in_w;
}

static size_t pool_outputs(const Pool2dGeometry *g) {
    return (size_t)g->batch * g->channels * g->out_h * g->out_w;
}

// What the max-pooling kernels index with int: a position within one input plane, which
// is what argmax stores (int32). The tensors themselves they index with size_t.
static size_t pool_plane(const Pool2dGeometry *g) { return (size_t)g->in_h * g->in_w; }

// The launch of every kernel here but the tiled one: one thread per element of `total`
// (grid-stride over a capped grid), checked under the kernel's name for `elements` values
// indexed in `index_bits` bits; the kernel takes `args` and then total.
template <typename... Params, typename... Args>
static int launch_per_element(CudaContext *ctx, const char *name, void (*kernel)(Params...),
                              size_t total, size_t elements, int index_bits, Status *st,
                              Args... args) {
    unsigned grid = cuda_blocks_for(total);
    CUDA_CHECK_CONFIG(ctx, name, grid, CUDA_THREADS, 0, elements, index_bits);
    kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(args..., total);
    CUDA_CHECK_LAUNCH(name);
    return 0;
}

// One launch per op, templated on the storage type and the layout, each named pool_launch
// and picked by its tensors' type (pool_entry below makes the run-time choices once).
template <typename T, bool Nhwc>
static int pool_launch(CudaContext *ctx, const Pool2dGeometry *g, const MaxpoolForwardTensors *t,
                       Status *st) {
    return launch_per_element(ctx, "maxpool_forward_kernel", maxpool_forward_kernel<T, Nhwc>,
                              pool_outputs(g), pool_plane(g), 32, st, *g, (const T *)t->x,
                              (T *)t->y, t->argmax);
}

// Whether no two windows share an input: stride >= kernel along both axes.
static int windows_disjoint(const Pool2dGeometry *g) {
    return g->stride_h >= g->kernel_h && g->stride_w >= g->kernel_w;
}

// The per-output kernel, with int indices where every index it forms (below the larger
// tensor's count, plus one grid's stride past the last) fits an int; otherwise size_t for
// the tensors, and int within a plane, as argmax holds it. NHWC forms no larger index:
// its offsets (plane start + pixel * channels) stay below the tensor's count too.
template <typename T, bool Nhwc>
static int maxpool_backward_tiled(CudaContext *ctx, const Pool2dGeometry *g, const T *dy,
                                  const int32_t *argmax, T *dx, int accumulate, Status *st) {
    size_t outputs = pool_outputs(g), inputs = pool_inputs(g);
    size_t largest = inputs > outputs ? inputs : outputs;
    unsigned grid = cuda_blocks_for(outputs);
    if (largest + (size_t)grid * CUDA_THREADS <= (size_t)INT_MAX) {
        CUDA_CHECK_CONFIG(ctx, "maxpool_backward_tiled_kernel", grid, CUDA_THREADS, 0, largest,
                          32);
        maxpool_backward_tiled_kernel<T, Nhwc, int><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
            *g, dy, argmax, dx, accumulate, (int)outputs);
        CUDA_CHECK_LAUNCH("maxpool_backward_tiled_kernel");
        return 0;
    }
    CUDA_CHECK_CONFIG(ctx, "maxpool_backward_tiled_kernel", grid, CUDA_THREADS, 0, pool_plane(g),
                      32);
    maxpool_backward_tiled_kernel<T, Nhwc, size_t><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        *g, dy, argmax, dx, accumulate, outputs);
    CUDA_CHECK_LAUNCH("maxpool_backward_tiled_kernel");
    return 0;
}

template <typename T, bool Nhwc>
static int pool_launch(CudaContext *ctx, const Pool2dGeometry *g,
                       const MaxpoolBackwardTensors *t, Status *st) {
    const T *dy = (const T *)t->dy;
    T *dx = (T *)t->dx;
    if (pool_outputs(g) > 0 && windows_disjoint(g) &&
        !lever_off(ctx->disabled_levers, LEVER_MAXPOOL_SCATTER))
        return maxpool_backward_tiled<T, Nhwc>(ctx, g, dy, t->argmax, dx, t->accumulate, st);
    return launch_per_element(ctx, "maxpool_backward_kernel", maxpool_backward_kernel<T, Nhwc>,
                              pool_inputs(g), pool_plane(g), 32, st, *g, dy, t->argmax, dx,
                              t->accumulate);
}

// The CPU's average-pooling scale, computed the same way, so the last multiply rounds alike.
static float avgpool_scale(const Pool2dGeometry *g) {
    return 1.0f / (float)(g->kernel_h * g->kernel_w);
}

template <typename T, bool Nhwc>
static int pool_launch(CudaContext *ctx, const Pool2dGeometry *g, const AvgpoolForwardTensors *t,
                       Status *st) {
    return launch_per_element(ctx, "avgpool_forward_kernel", avgpool_forward_kernel<T, Nhwc>,
                              pool_outputs(g), pool_outputs(g), 64, st, *g, (const T *)t->x,
                              (T *)t->y, avgpool_scale(g));
}

template <typename T, bool Nhwc>
static int pool_launch(CudaContext *ctx, const Pool2dGeometry *g,
                       const AvgpoolBackwardTensors *t, Status *st) {
    return launch_per_element(ctx, "avgpool_backward_kernel", avgpool_backward_kernel<T, Nhwc>,
                              pool_inputs(g), pool_inputs(g), 64, st, *g, (const T *)t->dy,
                              (T *)t->dx, avgpool_scale(g), t->accumulate);
}

template <typename T, typename Tensors>
static int pool_launch_for_layout(CudaContext *ctx, const Pool2dGeometry *g, const Tensors *t,
                                  Status *st) {
    if (g->layout == LAYOUT_NHWC) return pool_launch<T, true>(ctx, g, t, st);
    return pool_launch<T, false>(ctx, g, t, st);
}

// The four ops' names, under which a refusal is worded, and whether the kernel runs over
// the input (backward: one thread per dx value) or the output.
enum PoolOp { MAXPOOL_FORWARD, MAXPOOL_BACKWARD, AVGPOOL_FORWARD, AVGPOOL_BACKWARD };
static const struct {
    const char *name;
    int over_inputs;
} pool_ops[] = {{"maxpool_forward", 0}, {"maxpool_backward", 1}, {"avgpool_forward", 0},
                {"avgpool_backward", 1}};

// Every pooling entry, one instance per op: check the dtype and layout under the op's name,
// skip an empty tensor, and turn the storage type and the layout into pool_launch's
// template parameters.
template <typename Tensors, PoolOp Op>
static int pool_entry(const Backend *b, const Pool2dGeometry *g, const Tensors *t, Status *st) {
    const char *op = pool_ops[Op].name;
    TRY(backend_dtype_check(b, t->dtype, op, st));
    TRY(backend_layout_check(g->layout, op, st));
    if ((pool_ops[Op].over_inputs ? pool_inputs(g) : pool_outputs(g)) == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(t->dtype, rc = pool_launch_for_layout<storage_t>(ctx, g, t, st));
    return rc;
}

void cuda_register_pool_ops(Backend *table) {
    table->maxpool_forward = pool_entry<MaxpoolForwardTensors, MAXPOOL_FORWARD>;
    table->maxpool_backward = pool_entry<MaxpoolBackwardTensors, MAXPOOL_BACKWARD>;
    table->avgpool_forward = pool_entry<AvgpoolForwardTensors, AVGPOOL_FORWARD>;
    table->avgpool_backward = pool_entry<AvgpoolBackwardTensors, AVGPOOL_BACKWARD>;
}
