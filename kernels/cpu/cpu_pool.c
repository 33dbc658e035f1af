// Max and average pooling, one (sample, channel) plane at a time, the planes split across
// the cores. Pooling reads each input a few times and does little arithmetic, so plain
// loops do; they are also the reference for the CUDA kernels.
//
// Activations stored in bf16 or f16 (--precision bf16|fp16) are widened into f32 scratch,
// pooled by the same f32 loops and rounded once into the stored output, as
// kernels/cpu/cpu_convert.c describes: an average's sum and a gradient's sum over
// overlapping windows (with an accumulated dx's old value) stay f32 until that one store.
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_parallel.h"

// Defined below, called earlier in this file.
static int cpu_maxpool_forward(const Backend *b, const Pool2dGeometry *g,
                               const MaxpoolForwardTensors *t, Status *st);
static int cpu_maxpool_backward(const Backend *b, const Pool2dGeometry *g,
                                const MaxpoolBackwardTensors *t, Status *st);
static int cpu_avgpool_forward(const Backend *b, const Pool2dGeometry *g,
                               const AvgpoolForwardTensors *t, Status *st);
static int cpu_avgpool_backward(const Backend *b, const Pool2dGeometry *g,
                                const AvgpoolBackwardTensors *t, Status *st);

typedef struct PoolJob {
    const Pool2dGeometry *g;
    const float *x, *dy;
    float *y, *dx;
    int32_t *argmax;
    int accumulate;
} PoolJob;

static size_t planes(const Pool2dGeometry *g) { return (size_t)g->batch * g->channels; }

// Runs fn over every (sample, channel) plane, in parallel where the work is worth it.
static int for_planes(const PoolJob *job, CpuRangeFn fn) {
    const Pool2dGeometry *g = job->g;
    size_t cost = (size_t)g->in_h * g->in_w + (size_t)g->out_h * g->out_w * g->kernel_h * g->kernel_w;
    cpu_parallel_for(planes(g), cost, fn, (void *)job);
    return 0;
}

static size_t pool_inputs(const Pool2dGeometry *g) { return planes(g) * g->in_h * g->in_w; }
static size_t pool_outputs(const Pool2dGeometry *g) { return planes(g) * g->out_h * g->out_w; }

// What an op reads (`in`: x or dy) and writes (`out`: y or dx), both stored as `dtype`.
typedef struct StoredPool {
    const char *op;
    DType dtype;
    const void *in;
    void *out;
    size_t in_count, out_count;
    int reads_out;  // accumulate: out's old values are part of the sum
} StoredPool;

// Runs fn with *in_slot and *out_slot pointing at the stored tensors when they are f32,
// else at f32 copies: `in` widened, `out` widened when fn reads it, and rounded once into
// the stored `out` afterwards.
static int for_planes_stored(const Backend *b, PoolJob *job, const float **in_slot,
                             float **out_slot, const StoredPool *io, CpuRangeFn fn, Status *st) {
    if (io->dtype == DTYPE_F32) {
        *in_slot = io->in;
        *out_slot = io->out;
        return for_planes(job, fn);
    }
    TRY(backend_dtype_check(b, io->dtype, io->op, st));
    float *wide_in = cpu_widen(io->in, io->dtype, io->in_count, st);
    float *wide_out =
        wide_in ? cpu_wide_room(io->out, io->dtype, io->out_count, io->reads_out, st) : NULL;
    int rc = wide_out ? 0 : (int)st->code;
    if (!rc) {
        *in_slot = wide_in;
        *out_slot = wide_out;
        rc = for_planes(job, fn);
    }
    if (!rc) cpu_narrow(wide_out, io->out, io->dtype, io->out_count);
    free(wide_in);
    free(wide_out);
    return rc;
}

// The window of output (oh, ow), clipped to the input: rows [*h0, *h1), columns [*w0, *w1).
static void window(const Pool2dGeometry *g, int oh, int ow, int *h0, int *h1, int *w0, int *w1) {
    *h0 = oh * g->stride_h - g->pad_top;
    *w0 = ow * g->stride_w - g->pad_left;
    *h1 = *h0 + g->kernel_h < g->in_h ? *h0 + g->kernel_h : g->in_h;
    *w1 = *w0 + g->kernel_w < g->in_w ? *w0 + g->kernel_w : g->in_w;
    if (*h0 < 0) *h0 = 0;
    if (*w0 < 0) *w0 = 0;
}

// The max of the window at (oh, ow), clipped to the input; for windows at the border.
static void max_window(const Pool2dGeometry *g, const float *image, int oh, int ow, float *best_out,
                       int32_t *at_out) {
    int h0, h1, w0, w1;
    window(g, oh, ow, &h0, &h1, &w0, &w1);
    // pad <= size/2 (checked at graph build) leaves every window one input.
    int best_at = h0 * g->in_w + w0;
    float best = image[best_at];
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) {
            float v = image[ih * g->in_w + iw];
            // The first maximum wins ties; a NaN wins, as in PyTorch.
            int take = (v > best) | ((v != v) & (best == best));
            best = take ? v : best;
            best_at = take ? ih * g->in_w + iw : best_at;
        }
    *best_out = best;
    *at_out = best_at;
}

static void maxpool_forward_planes(void *context, size_t begin, size_t end) {
    const PoolJob *job = context;
    const Pool2dGeometry *g = job->g;
    const float *x = job->x;
    float *y = job->y;
    int32_t *argmax = job->argmax;
    size_t in_plane = (size_t)g->in_h * g->in_w, out_plane = (size_t)g->out_h * g->out_w;
    // Output columns [lo, hi) have windows wholly inside the input's width.
    int lo = (g->pad_left + g->stride_w - 1) / g->stride_w, hi = lo;
    while (hi < g->out_w && hi * g->stride_w - g->pad_left + g->kernel_w <= g->in_w) hi++;
    for (size_t p = begin; p < end; p++) {
        const float *image = x + p * in_plane;
        for (int oh = 0; oh < g->out_h; oh++) {
            float *out = y + p * out_plane + (size_t)oh * g->out_w;
            int32_t *arg = argmax + p * out_plane + (size_t)oh * g->out_w;
            int h0, h1, unused0, unused1;
            window(g, oh, lo, &h0, &h1, &unused0, &unused1);
            for (int ow = 0; ow < lo; ow++) max_window(g, image, oh, ow, &out[ow], &arg[ow]);
            for (int ow = hi; ow < g->out_w; ow++) max_window(g, image, oh, ow, &out[ow], &arg[ow]);
            if (lo >= hi) continue;
            // Interior windows, a whole output row at a time: the same row-major visiting
            // order per window as max_window, but with the output column innermost, so the
            // loop carries no window arithmetic, and without branches: on real data which
            // value wins is a coin toss, and a branch on it made this 4x slower.
            int first = h0 * g->in_w - g->pad_left;
            for (int ow = lo; ow < hi; ow++) {
                out[ow] = image[first + ow * g->stride_w];
                arg[ow] = first + ow * g->stride_w;
            }
            for (int ih = h0; ih < h1; ih++)
                for (int j = 0; j < g->kernel_w; j++) {
                    if (ih == h0 && j == 0) continue;
                    int offset = ih * g->in_w - g->pad_left + j;
                    for (int ow = lo; ow < hi; ow++) {
                        int at = offset + ow * g->stride_w;
                        float v = image[at], best = out[ow];
                        // Blend by mask: written as `take ? v : best`, the compiler turned
                        // the stores into a branch.
                        int32_t take = -(int32_t)((v > best) | ((v != v) & (best == best)));
                        int32_t v_bits, best_bits;
                        memcpy(&v_bits, &v, sizeof v_bits);
                        memcpy(&best_bits, &best, sizeof best_bits);
                        int32_t bits = (v_bits & take) | (best_bits & ~take);
                        memcpy(&out[ow], &bits, sizeof bits);
                        arg[ow] = (at & take) | (arg[ow] & ~take);
                    }
                }
        }
    }
}

// ---- NHWC: the NCHW code between transposes ----------------------------------------
//
// As cpu_conv2d.c does (bit for bit what NCHW gives; argmax keeps its meaning, the index
// within the (sample, channel) plane, and is laid out as y is): the images and argmax move
// to NCHW in malloc'd copies, the NCHW op runs, and what it wrote moves back.

typedef struct PoolNhwc {
    Pool2dGeometry nchw;
    size_t value_size;
    void *x, *y;         // NCHW copies of the op's input and output images
    int32_t *argmax;     // NCHW copy of argmax, or NULL
} PoolNhwc;

// For `op`: copies `in` (input-sized images when in_is_input, else output-sized) and makes
// room for `out`, its values copied when keep_out (an accumulated output); argmax copied
// when given and copy_argmax, else room for it when given.
static int pool_nhwc_open(const Backend *b, PoolNhwc *p, const char *op, const Pool2dGeometry *g,
                          DType dtype, const void *in, int in_is_input, const void *out,
                          int keep_out, const int32_t *argmax, int copy_argmax, Status *st) {
    memset(p, 0, sizeof *p);
    TRY(backend_dtype_check(b, dtype, op, st));  // before dtype_size
    p->nchw = *g;
    p->nchw.layout = LAYOUT_NCHW;
    p->value_size = dtype_size(dtype);
    int in_pixels = g->in_h * g->in_w, out_pixels = g->out_h * g->out_w;
    p->x = cpu_layout_copy(in, p->value_size, g->batch, g->channels,
                           in_is_input ? in_pixels : out_pixels, LAYOUT_NHWC, st);
    if (!p->x) return STATUS_RUNTIME_ERROR;
    p->y = cpu_layout_copy(keep_out ? out : NULL, p->value_size, g->batch, g->channels,
                           in_is_input ? out_pixels : in_pixels, LAYOUT_NHWC, st);
    if (!p->y) return STATUS_RUNTIME_ERROR;
    if (!argmax) return 0;
    p->argmax = cpu_layout_copy(copy_argmax ? argmax : NULL, sizeof *argmax, g->batch,
                                g->channels, out_pixels, LAYOUT_NHWC, st);
    return p->argmax ? 0 : STATUS_RUNTIME_ERROR;
}

static void pool_nhwc_close(PoolNhwc *p) {
    free(p->x);
    free(p->y);
    free(p->argmax);
}

// NCHW result `from` (pixels per plane) back into the caller's NHWC `to`.
static void pool_nhwc_store(const Pool2dGeometry *g, const void *from, void *to,
                            size_t value_size, int pixels) {
    cpu_layout_transpose(from, to, value_size, g->batch, g->channels, pixels, LAYOUT_NCHW);
}

// Each runs the NCHW op on the PoolNhwc copies: the op's own tensors with their pointers
// swapped for the copies'.
static int maxpool_forward_nhwc(const Backend *b, const Pool2dGeometry *g,
                                const MaxpoolForwardTensors *t, Status *st) {
    PoolNhwc p;
    int rc = pool_nhwc_open(b, &p, "maxpool_forward", g, t->dtype, t->x, 1, NULL, 0, t->argmax,
                            0, st);
    MaxpoolForwardTensors nchw = *t;
    nchw.x = p.x;
    nchw.y = p.y;
    nchw.argmax = p.argmax;
    if (!rc) rc = cpu_maxpool_forward(b, &p.nchw, &nchw, st);
    if (!rc) {
        pool_nhwc_store(g, p.y, t->y, p.value_size, g->out_h * g->out_w);
        pool_nhwc_store(g, p.argmax, t->argmax, sizeof *t->argmax, g->out_h * g->out_w);
    }
    pool_nhwc_close(&p);
    return rc;
}

static int maxpool_backward_nhwc(const Backend *b, const Pool2dGeometry *g,
                                 const MaxpoolBackwardTensors *t, Status *st) {
    PoolNhwc p;
    int rc = pool_nhwc_open(b, &p, "maxpool_backward", g, t->dtype, t->dy, 0, t->dx,
                            t->accumulate, t->argmax, 1, st);
    MaxpoolBackwardTensors nchw = *t;
    nchw.dy = p.x;
    nchw.argmax = p.argmax;
    nchw.dx = p.y;
    if (!rc) rc = cpu_maxpool_backward(b, &p.nchw, &nchw, st);
    if (!rc) pool_nhwc_store(g, p.y, t->dx, p.value_size, g->in_h * g->in_w);
    pool_nhwc_close(&p);
    return rc;
}

static int avgpool_forward_nhwc(const Backend *b, const Pool2dGeometry *g,
                                const AvgpoolForwardTensors *t, Status *st) {
    PoolNhwc p;
    int rc = pool_nhwc_open(b, &p, "avgpool_forward", g, t->dtype, t->x, 1, NULL, 0, NULL, 0, st);
    AvgpoolForwardTensors nchw = *t;
    nchw.x = p.x;
    nchw.y = p.y;
    if (!rc) rc = cpu_avgpool_forward(b, &p.nchw, &nchw, st);
    if (!rc) pool_nhwc_store(g, p.y, t->y, p.value_size, g->out_h * g->out_w);
    pool_nhwc_close(&p);
    return rc;
}

static int avgpool_backward_nhwc(const Backend *b, const Pool2dGeometry *g,
                                 const AvgpoolBackwardTensors *t, Status *st) {
    PoolNhwc p;
    int rc = pool_nhwc_open(b, &p, "avgpool_backward", g, t->dtype, t->dy, 0, t->dx,
                            t->accumulate, NULL, 0, st);
    AvgpoolBackwardTensors nchw = *t;
    nchw.dy = p.x;
    nchw.dx = p.y;
    if (!rc) rc = cpu_avgpool_backward(b, &p.nchw, &nchw, st);
    if (!rc) pool_nhwc_store(g, p.y, t->dx, p.value_size, g->in_h * g->in_w);
    pool_nhwc_close(&p);
    return rc;
}

// In 16 bits the winner is a stored value already, so its store is exact.
static int cpu_maxpool_forward(const Backend *b, const Pool2dGeometry *g,
                               const MaxpoolForwardTensors *t, Status *st) {
    TRY(backend_layout_check(g->layout, "maxpool_forward", st));
    if (g->layout == LAYOUT_NHWC)
        return maxpool_forward_nhwc(b, g, t, st);
    PoolJob job = {.g = g, .argmax = t->argmax};
    StoredPool io = {"maxpool_forward", t->dtype, t->x, t->y, pool_inputs(g), pool_outputs(g), 0};
    return for_planes_stored(b, &job, &job.x, &job.y, &io, maxpool_forward_planes, st);
}

static void maxpool_backward_planes(void *arg, size_t begin, size_t end) {
    const PoolJob *job = arg;
    const Pool2dGeometry *g = job->g;
    size_t in_plane = (size_t)g->in_h * g->in_w, out_plane = (size_t)g->out_h * g->out_w;
    for (size_t p = begin; p < end; p++) {
        float *image = job->dx + p * in_plane;
        const float *grad = job->dy + p * out_plane;
        const int32_t *arg_plane = job->argmax + p * out_plane;
        if (!job->accumulate) memset(image, 0, in_plane * sizeof *image);
        // Overlapping windows (stride < size) may pick the same input: their dy add up.
        for (size_t o = 0; o < out_plane; o++) image[arg_plane[o]] += grad[o];
    }
}

static int cpu_maxpool_backward(const Backend *b, const Pool2dGeometry *g,
                                const MaxpoolBackwardTensors *t, Status *st) {
    TRY(backend_layout_check(g->layout, "maxpool_backward", st));
    if (g->layout == LAYOUT_NHWC)
        return maxpool_backward_nhwc(b, g, t, st);
    PoolJob job = {.g = g, .argmax = (int32_t *)t->argmax, .accumulate = t->accumulate};
    StoredPool io = {"maxpool_backward", t->dtype,       t->dy,        t->dx,
                     pool_outputs(g),    pool_inputs(g), t->accumulate};
    return for_planes_stored(b, &job, &job.dy, &job.dx, &io, maxpool_backward_planes, st);
}

static void avgpool_forward_planes(void *arg, size_t begin, size_t end) {
    const PoolJob *job = arg;
    const Pool2dGeometry *g = job->g;
    size_t in_plane = (size_t)g->in_h * g->in_w, out_plane = (size_t)g->out_h * g->out_w;
    float scale = 1.0f / (float)(g->kernel_h * g->kernel_w);
    for (size_t p = begin; p < end; p++) {
        const float *image = job->x + p * in_plane;
        float *out = job->y + p * out_plane;
        for (int oh = 0; oh < g->out_h; oh++)
            for (int ow = 0; ow < g->out_w; ow++) {
                int h0, h1, w0, w1;
                window(g, oh, ow, &h0, &h1, &w0, &w1);
                float sum = 0.0f;
                for (int ih = h0; ih < h1; ih++)
                    for (int iw = w0; iw < w1; iw++) sum += image[ih * g->in_w + iw];
                out[oh * g->out_w + ow] = sum * scale;
            }
    }
}

static int cpu_avgpool_forward(const Backend *b, const Pool2dGeometry *g,
                               const AvgpoolForwardTensors *t, Status *st) {
    TRY(backend_layout_check(g->layout, "avgpool_forward", st));
    if (g->layout == LAYOUT_NHWC) return avgpool_forward_nhwc(b, g, t, st);
    PoolJob job = {.g = g};
    StoredPool io = {"avgpool_forward", t->dtype, t->x, t->y, pool_inputs(g), pool_outputs(g), 0};
    return for_planes_stored(b, &job, &job.x, &job.y, &io, avgpool_forward_planes, st);
}

static void avgpool_backward_planes(void *arg, size_t begin, size_t end) {
    const PoolJob *job = arg;
    const Pool2dGeometry *g = job->g;
    size_t in_plane = (size_t)g->in_h * g->in_w, out_plane = (size_t)g->out_h * g->out_w;
    float scale = 1.0f / (float)(g->kernel_h * g->kernel_w);
    for (size_t p = begin; p < end; p++) {
        float *image = job->dx + p * in_plane;
        const float *grad = job->dy + p * out_plane;
        if (!job->accumulate) memset(image, 0, in_plane * sizeof *image);
        for (int oh = 0; oh < g->out_h; oh++)
            for (int ow = 0; ow < g->out_w; ow++) {
                int h0, h1, w0, w1;
                window(g, oh, ow, &h0, &h1, &w0, &w1);
                float share = grad[oh * g->out_w + ow] * scale;
                for (int ih = h0; ih < h1; ih++)
                    for (int iw = w0; iw < w1; iw++) image[ih * g->in_w + iw] += share;
            }
    }
}

static int cpu_avgpool_backward(const Backend *b, const Pool2dGeometry *g,
                                const AvgpoolBackwardTensors *t, Status *st) {
    TRY(backend_layout_check(g->layout, "avgpool_backward", st));
    if (g->layout == LAYOUT_NHWC)
        return avgpool_backward_nhwc(b, g, t, st);
    PoolJob job = {.g = g, .accumulate = t->accumulate};
    StoredPool io = {"avgpool_backward", t->dtype,       t->dy,        t->dx,
                     pool_outputs(g),    pool_inputs(g), t->accumulate};
    return for_planes_stored(b, &job, &job.dy, &job.dx, &io, avgpool_backward_planes, st);
}

void cpu_register_pool_ops(Backend *table) {
    table->maxpool_forward = cpu_maxpool_forward;
    table->maxpool_backward = cpu_maxpool_backward;
    table->avgpool_forward = cpu_avgpool_forward;
    table->avgpool_backward = cpu_avgpool_backward;
}
