// Convolution on the CPU by lowering onto the BLAS GEMM (im2col), the way Caffe does.
//
// im2col copies every input value that a kernel tap (c, i, j) sees into row (c, i, j) of a
// matrix `col` with one column per output pixel; the convolution is then one GEMM,
// y[F, pixels] = w[F, C*kh*kw] * col. The copy costs kh*kw times the input in memory
// traffic, but it turns the work into the one operation OpenBLAS runs near peak (and
// threads). A small image's GEMM is too narrow to split over cores, so several samples are
// lowered side by side: col is [C*kh*kw, S * OH*OW] for a chunk of S samples (see
// CONV_GEMM_COLUMNS for how S is chosen); LeNet's second conv gives M=64, K=800, N=5*196.
// The copies around the GEMMs (im2col, col2im, the layout changes) are split over the
// cores by cpu_parallel_for; single-threaded they were a fifth of a LeNet step.
//
// With S samples side by side, the GEMM's output is [F][S][pixels] while y is
// [S][F][pixels]; a copy puts it in place (and adds the bias on the way). Backward does
// the same in reverse: dy is gathered into [F][S * pixels], then
//   data:   dcol[C*kh*kw, S*P] = w^T dy, and col2im adds each column back where it came from;
//   filter: dw[F, C*kh*kw]     = dy col^T, summed over chunks by the GEMM's beta.
// Groups are a block-diagonal w: group g's filters see only rows g*K .. (g+1)*K of col.
//
// 16-bit storage (g->dtype bf16 or f16): the operands are widened into f32 scratch, the f32
// code below runs on them, and each stored result is rounded once (cpu_convert.c's rule),
// so the reference differs from the f32 op only by its inputs' and outputs' rounding.
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_parallel.h"

// Defined below, called earlier in this file.
static int cpu_conv2d_backward_data(const Backend *b, const Conv2dGeometry *g,
                                    const Conv2dBackwardDataTensors *t, Status *st);
static int cpu_conv2d_backward_filter(const Backend *b, const Conv2dGeometry *g,
                                      const Conv2dBackwardFilterTensors *t, Status *st);

// How many samples to lower side by side: enough that each GEMM has CONV_GEMM_COLUMNS
// output columns. OpenBLAS needs ~1024 to keep both cores busy; a GEMM with a deep inner
// dimension (many rows of col: C*kh*kw) also amortises packing the weights over more
// columns, while a shallow one only pushes its output out of cache as columns grow.
// Measured on LeNet, two cores: the second conv (K = 800, 14x14 pixels) runs forward and
// backward 11% faster with 20 samples per GEMM than with 5; the first (K = 25, 28x28) runs
// 2.2x slower with 10 samples than with 1. The workspace is also capped at
// CONV_WORKSPACE_MAX_BYTES unless one sample needs more.
#define CONV_GEMM_COLUMNS 1024
#define CONV_GEMM_COLUMNS_DEEP 4096
#define CONV_DEEP_ROWS 256
#define CONV_WORKSPACE_MAX_BYTES ((size_t)16 << 20)

typedef struct ConvSizes {
    int group_channels, group_filters;
    size_t pixels;        // OH * OW
    size_t group_rows;    // rows of col per group: C/groups * kh * kw
    size_t rows;          // rows of col: C * kh * kw
    size_t sample_floats; // workspace per sample: col (rows) + the GEMM's output (F), per pixel
} ConvSizes;

static ConvSizes conv_sizes(const Conv2dGeometry *g) {
    ConvSizes z;
    z.group_channels = g->in_channels / g->groups;
    z.group_filters = g->out_channels / g->groups;
    z.pixels = (size_t)g->out_h * g->out_w;
    z.group_rows = (size_t)z.group_channels * g->kernel_h * g->kernel_w;
    z.rows = z.group_rows * g->groups;
    z.sample_floats = (z.rows + (size_t)g->out_channels) * z.pixels;
    return z;
}

static int cpu_conv2d_workspace_size(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                     Status *st) {
    ConvSizes z = conv_sizes(g);
    size_t per_sample = z.sample_floats * sizeof(float);
    size_t columns = z.group_rows >= CONV_DEEP_ROWS ? CONV_GEMM_COLUMNS_DEEP : CONV_GEMM_COLUMNS;
    size_t samples = z.pixels ? columns / z.pixels : 1;
    if (per_sample && samples > CONV_WORKSPACE_MAX_BYTES / per_sample)
        samples = CONV_WORKSPACE_MAX_BYTES / per_sample;
    if (samples < 1) samples = 1;
    if (samples > (size_t)g->batch) samples = (size_t)(g->batch > 0 ? g->batch : 1);
    *bytes = samples * per_sample;
    return 0;
}

// One sample lowered at a time: each op walks the batch in chunks of what its workspace holds.
static int cpu_conv2d_least_workspace(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                      Status *st) {
    Conv2dGeometry one = *g;
    one.batch = 1;
    return cpu_conv2d_workspace_size(b, &one, bytes, st);
}

// How many samples one pass lowers: what the workspace holds, at most the batch.
static int chunk_samples(const Backend *b, const Conv2dGeometry *g, const ConvSizes *z,
                         size_t workspace_bytes, const char *op, Status *st) {
    size_t per_sample = z->sample_floats * sizeof(float);
    size_t fits = per_sample ? workspace_bytes / per_sample : (size_t)g->batch;
    if (fits == 0)
        return -status_fail(st, STATUS_RUNTIME_ERROR,
                            "%s: workspace of %zu bytes is smaller than one sample's %zu", op,
                            workspace_bytes, per_sample);
    return fits < (size_t)g->batch ? (int)fits : g->batch;
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The output columns [*lo, *hi) whose input column ow * stride + offset lies inside
// [0, width); the others read padding.
static void valid_range(int offset, int stride, int width, int out_width, int *lo, int *hi) {
    *lo = offset >= 0 ? 0 : ceil_div(-offset, stride);
    *hi = width - offset <= 0 ? 0 : ceil_div(width - offset, stride);
    if (*hi > out_width) *hi = out_width;
    if (*lo > *hi) *lo = *hi;
}

// One chunk of samples being lowered or raised, for the range functions below, which
// cpu_parallel_for splits across the cores.
typedef struct Chunk {
    const Conv2dGeometry *g;
    int n0, samples;
    const float *x;        // im2col: the input
    float *col;            // im2col: written; col2im: read
    float *dx;             // col2im: added to (zeroed first unless accumulate)
    int accumulate;
    const float *from;     // gather / scatter source
    float *to;             //   and destination
    const float *bias;     // scatter: added on the way (NULL: none)
} Chunk;

// col[(c, i, j)][s * P + oh * OW + ow] = x[n0 + s][c][ih][iw], zero in the padding; for
// rows r = (c, i, j) in [begin, end), each of which is independent.
static void im2col_rows(void *arg, size_t begin, size_t end) {
    const Chunk *k = arg;
    const Conv2dGeometry *g = k->g;
    size_t pixels = (size_t)g->out_h * g->out_w, columns = (size_t)k->samples * pixels;
    size_t plane = (size_t)g->in_h * g->in_w;
    for (size_t r = begin; r < end; r++) {
        int j = (int)(r % (size_t)g->kernel_w), i = (int)(r / (size_t)g->kernel_w % (size_t)g->kernel_h);
        int c = (int)(r / ((size_t)g->kernel_w * g->kernel_h));
        float *row = k->col + r * columns;
        int offset = j * g->dilation_w - g->pad_left, lo, hi;
        valid_range(offset, g->stride_w, g->in_w, g->out_w, &lo, &hi);
        for (int s = 0; s < k->samples; s++) {
            const float *image = k->x + ((size_t)(k->n0 + s) * g->in_channels + c) * plane;
            for (int oh = 0; oh < g->out_h; oh++) {
                float *dst = row + (size_t)s * pixels + (size_t)oh * g->out_w;
                int ih = oh * g->stride_h - g->pad_top + i * g->dilation_h;
                if (ih < 0 || ih >= g->in_h) {
                    memset(dst, 0, (size_t)g->out_w * sizeof *dst);
                    continue;
                }
                const float *src = image + (size_t)ih * g->in_w;
                for (int ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
                if (g->stride_w == 1) {
                    memcpy(dst + lo, src + lo + offset, (size_t)(hi - lo) * sizeof *dst);
                } else {
                    for (int ow = lo; ow < hi; ow++) dst[ow] = src[ow * g->stride_w + offset];
                }
                for (int ow = hi; ow < g->out_w; ow++) dst[ow] = 0.0f;
            }
        }
    }
}

static void im2col(const Conv2dGeometry *g, const float *x, int n0, int samples, float *col) {
    Chunk k = {.g = g, .n0 = n0, .samples = samples, .x = x, .col = col};
    size_t rows = (size_t)g->in_channels * g->kernel_h * g->kernel_w;
    cpu_parallel_for(rows, (size_t)samples * g->out_h * g->out_w, im2col_rows, &k);
}

// The adjoint of im2col: every col entry is added to the input element it was copied
// from. For channels [begin, end): rows of one channel add into the same planes, so the
// work is split by channel, not by row.
static void col2im_channels(void *arg, size_t begin, size_t end) {
    const Chunk *k = arg;
    const Conv2dGeometry *g = k->g;
    size_t pixels = (size_t)g->out_h * g->out_w, columns = (size_t)k->samples * pixels;
    size_t plane = (size_t)g->in_h * g->in_w;
    for (size_t c = begin; c < end; c++) {
        if (!k->accumulate)
            for (int s = 0; s < k->samples; s++)
                memset(k->dx + ((size_t)(k->n0 + s) * g->in_channels + c) * plane, 0,
                       plane * sizeof *k->dx);
        for (int i = 0; i < g->kernel_h; i++)
            for (int j = 0; j < g->kernel_w; j++) {
                const float *row = k->col + ((c * g->kernel_h + i) * g->kernel_w + j) * columns;
                int offset = j * g->dilation_w - g->pad_left, lo, hi;
                valid_range(offset, g->stride_w, g->in_w, g->out_w, &lo, &hi);
                for (int s = 0; s < k->samples; s++) {
                    float *image = k->dx + ((size_t)(k->n0 + s) * g->in_channels + c) * plane;
                    for (int oh = 0; oh < g->out_h; oh++) {
                        int ih = oh * g->stride_h - g->pad_top + i * g->dilation_h;
                        if (ih < 0 || ih >= g->in_h) continue;
                        const float *src = row + (size_t)s * pixels + (size_t)oh * g->out_w;
                        float *dst = image + (size_t)ih * g->in_w;
                        for (int ow = lo; ow < hi; ow++) dst[ow * g->stride_w + offset] += src[ow];
                    }
                }
            }
    }
}

static void col2im(const Conv2dGeometry *g, const float *col, int n0, int samples, float *dx,
                   int accumulate) {
    Chunk k = {.g = g, .n0 = n0, .samples = samples, .col = (float *)col, .dx = dx,
               .accumulate = accumulate};
    cpu_parallel_for((size_t)g->in_channels,
                     (size_t)samples * g->out_h * g->out_w * g->kernel_h * g->kernel_w,
                     col2im_channels, &k);
}

// dy[n0 + s][f][p] -> to[f][s * P + p], for filters [begin, end): the layout the backward
// GEMMs read.
static void gather_filters(void *arg, size_t begin, size_t end) {
    const Chunk *k = arg;
    size_t pixels = (size_t)k->g->out_h * k->g->out_w, columns = (size_t)k->samples * pixels;
    for (size_t f = begin; f < end; f++)
        for (int s = 0; s < k->samples; s++)
            memcpy(k->to + f * columns + s * pixels,
                   k->from + ((size_t)(k->n0 + s) * k->g->out_channels + f) * pixels,
                   pixels * sizeof *k->to);
}

static void gather_filters_major(const Conv2dGeometry *g, const float *dy, int n0, int samples,
                                 float *out) {
    Chunk k = {.g = g, .n0 = n0, .samples = samples, .from = dy, .to = out};
    cpu_parallel_for((size_t)g->out_channels, (size_t)samples * g->out_h * g->out_w,
                     gather_filters, &k);
}

// from[f][s * P + p] + bias[f] -> y[n0 + s][f][p], for filters [begin, end): the GEMM's
// output put in place. In place (from == to) when the chunk is one sample.
static void scatter_filters(void *arg, size_t begin, size_t end) {
    const Chunk *k = arg;
    size_t pixels = (size_t)k->g->out_h * k->g->out_w, columns = (size_t)k->samples * pixels;
    for (size_t f = begin; f < end; f++) {
        float add = k->bias ? k->bias[f] : 0.0f;
        for (int s = 0; s < k->samples; s++) {
            const float *src = k->from + f * columns + s * pixels;
            float *dst = k->to + ((size_t)(k->n0 + s) * k->g->out_channels + f) * pixels;
            for (size_t p = 0; p < pixels; p++) dst[p] = src[p] + add;
        }
    }
}

static int forward_f32(const Backend *b, const Conv2dGeometry *g, const float *x, const float *w,
                       const float *bias, float *y, void *workspace, size_t workspace_bytes,
                       Status *st) {
    ConvSizes z = conv_sizes(g);
    int chunk = chunk_samples(b, g, &z, workspace_bytes, "conv2d_forward", st);
    if (chunk < 0) return -chunk;
    float *col = workspace;
    for (int n0 = 0; n0 < g->batch; n0 += chunk) {
        int samples = g->batch - n0 < chunk ? g->batch - n0 : chunk;
        size_t columns = (size_t)samples * z.pixels;
        float *sample_y = y + (size_t)n0 * g->out_channels * z.pixels;
        // One sample's GEMM output is already in y's layout: write it there directly.
        float *out = samples == 1 ? sample_y : col + z.rows * columns;
        im2col(g, x, n0, samples, col);
        GemmArgs product = {.m = z.group_filters, .n = (int)columns, .k = (int)z.group_rows,
                            .lda = (int)z.group_rows, .ldb = (int)columns, .ldc = (int)columns,
                            .alpha = 1.0f, .beta = 0.0f};
        for (int group = 0; group < g->groups; group++)
            TRY(cpu_gemm(b, &product,
                         &(GemmTensors){.a = w + (size_t)group * z.group_filters * z.group_rows,
                                        .bm = col + group * z.group_rows * columns,
                                        .c = out + (size_t)group * z.group_filters * columns},
                         st));
        // [F][S][P] -> [S][F][P], adding the bias (in place when samples == 1).
        if (samples > 1 || bias) {
            Chunk k = {.g = g, .n0 = n0, .samples = samples, .from = out, .to = y, .bias = bias};
            cpu_parallel_for((size_t)g->out_channels, columns, scatter_filters, &k);
        }
    }
    return 0;
}

// The unfused ops in turn (the activation in place), so fused and unfused training agree
// bit for bit on the CPU. act NULL: no activation.
static int forward_activation_f32(const Backend *b, const Conv2dGeometry *g, const float *x,
                                  const float *w, const float *bias, const FusedActivation *act,
                                  float *y, void *workspace, size_t workspace_bytes, Status *st) {
    TRY(forward_f32(b, g, x, w, bias, y, workspace, workspace_bytes, st));
    if (!act || !act->apply) return 0;
    size_t n = (size_t)g->batch * g->out_channels * g->out_h * g->out_w;
    return cpu_activation_forward(
        b,
        &(ActivationForwardArgs){
            .kind = act->kind, .slope = act->slope, .dtype = DTYPE_F32, .x = y, .y = y, .n = n},
        st);
}

// dy of samples [n0, n0 + samples) as [F][S][P], the layout the backward GEMMs read: a
// single sample already is, several are gathered into `scratch`.
static const float *chunk_dy_filter_major(const Conv2dGeometry *g, const ConvSizes *z,
                                          const float *dy, int n0, int samples, float *scratch) {
    if (samples == 1) return dy + (size_t)n0 * g->out_channels * z->pixels;
    gather_filters_major(g, dy, n0, samples, scratch);
    return scratch;
}

static int backward_data_f32(const Backend *b, const Conv2dGeometry *g, const float *dy,
                             const float *w, float *dx, void *workspace, size_t workspace_bytes,
                             int accumulate, Status *st) {
    ConvSizes z = conv_sizes(g);
    int chunk = chunk_samples(b, g, &z, workspace_bytes, "conv2d_backward_data", st);
    if (chunk < 0) return -chunk;
    float *dcol = workspace;
    for (int n0 = 0; n0 < g->batch; n0 += chunk) {
        int samples = g->batch - n0 < chunk ? g->batch - n0 : chunk;
        size_t columns = (size_t)samples * z.pixels;
        const float *dyf = chunk_dy_filter_major(g, &z, dy, n0, samples, dcol + z.rows * columns);
        GemmArgs product = {.transpose_a = 1, .m = (int)z.group_rows, .n = (int)columns,
                            .k = z.group_filters, .lda = (int)z.group_rows, .ldb = (int)columns,
                            .ldc = (int)columns, .alpha = 1.0f, .beta = 0.0f};
        for (int group = 0; group < g->groups; group++)
            TRY(cpu_gemm(b, &product,
                         &(GemmTensors){.a = w + (size_t)group * z.group_filters * z.group_rows,
                                        .bm = dyf + (size_t)group * z.group_filters * columns,
                                        .c = dcol + group * z.group_rows * columns},
                         st));
        col2im(g, dcol, n0, samples, dx, accumulate);
    }
    return 0;
}

static int backward_filter_f32(const Backend *b, const Conv2dGeometry *g, const float *x,
                               const float *dy, float *dw, float *dbias, void *workspace,
                               size_t workspace_bytes, int accumulate, Status *st) {
    ConvSizes z = conv_sizes(g);
    int chunk = chunk_samples(b, g, &z, workspace_bytes, "conv2d_backward_filter", st);
    if (chunk < 0) return -chunk;
    float *col = workspace;
    if (!accumulate) {
        memset(dw, 0, (size_t)g->out_channels * z.group_rows * sizeof *dw);
        if (dbias) memset(dbias, 0, (size_t)g->out_channels * sizeof *dbias);
    }
    for (int n0 = 0; n0 < g->batch; n0 += chunk) {
        int samples = g->batch - n0 < chunk ? g->batch - n0 : chunk;
        size_t columns = (size_t)samples * z.pixels;
        const float *dyf = chunk_dy_filter_major(g, &z, dy, n0, samples, col + z.rows * columns);
        im2col(g, x, n0, samples, col);
        GemmArgs product = {.transpose_b = 1, .m = z.group_filters, .n = (int)z.group_rows,
                            .k = (int)columns, .lda = (int)columns, .ldb = (int)columns,
                            .ldc = (int)z.group_rows, .alpha = 1.0f, .beta = 1.0f};
        for (int group = 0; group < g->groups; group++)
            TRY(cpu_gemm(b, &product,
                         &(GemmTensors){.a = dyf + (size_t)group * z.group_filters * columns,
                                        .bm = col + group * z.group_rows * columns,
                                        .c = dw + (size_t)group * z.group_filters * z.group_rows},
                         st));
        if (!dbias) continue;
        for (int f = 0; f < g->out_channels; f++) {
            // Four partial sums: a long single float sum loses digits, and this vectorizes.
            const float *row = dyf + f * columns;
            float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            size_t p = 0;
            for (; p + 4 <= columns; p += 4)
                for (int k = 0; k < 4; k++) part[k] += row[p + k];
            for (; p < columns; p++) part[0] += row[p];
            dbias[f] += (part[0] + part[1]) + (part[2] + part[3]);
        }
    }
    return 0;
}

// ---- the ops: f32 as it is, 16-bit through f32 scratch ----------------------------------

static size_t input_values(const Conv2dGeometry *g) {
    return (size_t)g->batch * g->in_channels * g->in_h * g->in_w;
}
static size_t output_values(const Conv2dGeometry *g) {
    return (size_t)g->batch * g->out_channels * g->out_h * g->out_w;
}
static size_t weight_values(const Conv2dGeometry *g) {
    return (size_t)g->out_channels * (g->in_channels / g->groups) * g->kernel_h * g->kernel_w;
}

static int forward_stored(const Backend *b, const Conv2dGeometry *g, const void *x, const void *w,
                          const float *bias, const FusedActivation *act, void *y, void *workspace,
                          size_t workspace_bytes, const char *op, Status *st) {
    TRY(backend_dtype_check(b, g->dtype, op, st));
    if (g->dtype == DTYPE_F32)
        return forward_activation_f32(b, g, x, w, bias, act, y, workspace, workspace_bytes, st);
    float *wide_x = cpu_widen(x, g->dtype, input_values(g), st);
    float *wide_w = wide_x ? cpu_widen(w, g->dtype, weight_values(g), st) : NULL;
    float *wide_y = wide_w ? cpu_wide_room(y, g->dtype, output_values(g), 0, st) : NULL;
    int rc = wide_y ? forward_activation_f32(b, g, wide_x, wide_w, bias, act, wide_y, workspace,
                                             workspace_bytes, st)
                    : STATUS_RUNTIME_ERROR;
    if (!rc) cpu_narrow(wide_y, y, g->dtype, output_values(g));
    free(wide_x);
    free(wide_w);
    free(wide_y);
    return rc;
}

// ---- NHWC: the NCHW code between transposes ----------------------------------------
//
// The CPU gains nothing from NHWC, but a graph laid out for the GPU (graph_set_layouts)
// runs here too, bit for bit what NCHW gives, and the CUDA ops have their reference.
// Images move to NCHW into malloc'd copies (in their storage type), the NCHW op runs on
// those, and what it wrote moves back.

static Conv2dGeometry nchw_geometry(const Conv2dGeometry *g) {
    Conv2dGeometry nchw = *g;
    nchw.layout = LAYOUT_NCHW;
    return nchw;
}

// A batch of g's input (or output) images moved NHWC -> NCHW; src NULL: room only.
static void *inputs_nchw(const Conv2dGeometry *g, const void *src, Status *st) {
    return cpu_layout_copy(src, dtype_size(g->dtype), g->batch, g->in_channels,
                           g->in_h * g->in_w, LAYOUT_NHWC, st);
}
static void *outputs_nchw(const Conv2dGeometry *g, const void *src, Status *st) {
    return cpu_layout_copy(src, dtype_size(g->dtype), g->batch, g->out_channels,
                           g->out_h * g->out_w, LAYOUT_NHWC, st);
}

static int forward_nhwc(const Backend *b, const Conv2dGeometry *g, const void *x, const void *w,
                        const float *bias, const FusedActivation *act, void *y, void *workspace,
                        size_t workspace_bytes, const char *op, Status *st) {
    TRY(backend_dtype_check(b, g->dtype, op, st));  // before dtype_size
    Conv2dGeometry nchw = nchw_geometry(g);
    void *x_nchw = inputs_nchw(g, x, st);
    void *y_nchw = x_nchw ? outputs_nchw(g, NULL, st) : NULL;
    int rc = y_nchw ? forward_stored(b, &nchw, x_nchw, w, bias, act, y_nchw, workspace,
                                     workspace_bytes, op, st)
                    : STATUS_RUNTIME_ERROR;
    if (!rc)
        cpu_layout_transpose(y_nchw, y, dtype_size(g->dtype), g->batch, g->out_channels,
                             g->out_h * g->out_w, LAYOUT_NCHW);
    free(x_nchw);
    free(y_nchw);
    return rc;
}

// The op's own tensors with dy and dx (x and dy) swapped for the NCHW copies.
static int backward_data_nhwc(const Backend *b, const Conv2dGeometry *g,
                              const Conv2dBackwardDataTensors *t, Status *st) {
    Conv2dGeometry nchw = nchw_geometry(g);
    void *dy_nchw = outputs_nchw(g, t->dy, st);
    void *dx_nchw = dy_nchw ? inputs_nchw(g, t->accumulate ? t->dx : NULL, st) : NULL;
    Conv2dBackwardDataTensors nchw_tensors = *t;
    nchw_tensors.dy = dy_nchw;
    nchw_tensors.dx = dx_nchw;
    int rc = dx_nchw ? cpu_conv2d_backward_data(b, &nchw, &nchw_tensors, st)
                     : STATUS_RUNTIME_ERROR;
    if (!rc)
        cpu_layout_transpose(dx_nchw, t->dx, dtype_size(g->dtype), g->batch, g->in_channels,
                             g->in_h * g->in_w, LAYOUT_NCHW);
    free(dy_nchw);
    free(dx_nchw);
    return rc;
}

static int backward_filter_nhwc(const Backend *b, const Conv2dGeometry *g,
                                const Conv2dBackwardFilterTensors *t, Status *st) {
    Conv2dGeometry nchw = nchw_geometry(g);
    void *x_nchw = inputs_nchw(g, t->x, st);
    void *dy_nchw = x_nchw ? outputs_nchw(g, t->dy, st) : NULL;
    Conv2dBackwardFilterTensors nchw_tensors = *t;
    nchw_tensors.x = x_nchw;
    nchw_tensors.dy = dy_nchw;
    int rc = dy_nchw ? cpu_conv2d_backward_filter(b, &nchw, &nchw_tensors, st)
                     : STATUS_RUNTIME_ERROR;
    free(x_nchw);
    free(dy_nchw);
    return rc;
}

static int cpu_conv2d_forward(const Backend *b, const Conv2dGeometry *g,
                              const Conv2dForwardTensors *t, Status *st) {
    TRY(backend_layout_check(g->layout, "conv2d_forward", st));
    if (g->layout == LAYOUT_NHWC)
        return forward_nhwc(b, g, t->x, t->w, t->bias, NULL, t->y, t->workspace, t->workspace_bytes,
                            "conv2d_forward", st);
    return forward_stored(b, g, t->x, t->w, t->bias, NULL, t->y, t->workspace, t->workspace_bytes,
                          "conv2d_forward", st);
}

static int cpu_conv2d_forward_bias_activation(const Backend *b, const Conv2dGeometry *g,
                                              const Conv2dForwardTensors *t,
                                              const FusedActivation *act, Status *st) {
    TRY(backend_layout_check(g->layout, "conv2d_forward_bias_activation", st));
    if (g->layout == LAYOUT_NHWC)
        return forward_nhwc(b, g, t->x, t->w, t->bias, act, t->y, t->workspace, t->workspace_bytes,
                            "conv2d_forward_bias_activation", st);
    return forward_stored(b, g, t->x, t->w, t->bias, act, t->y, t->workspace, t->workspace_bytes,
                          "conv2d_forward_bias_activation", st);
}

static int cpu_conv2d_backward_data(const Backend *b, const Conv2dGeometry *g,
                                    const Conv2dBackwardDataTensors *t, Status *st) {
    TRY(backend_dtype_check(b, g->dtype, "conv2d_backward_data", st));
    TRY(backend_layout_check(g->layout, "conv2d_backward_data", st));
    if (g->layout == LAYOUT_NHWC)
        return backward_data_nhwc(b, g, t, st);
    if (g->dtype == DTYPE_F32)
        return backward_data_f32(b, g, t->dy, t->w, t->dx, t->workspace, t->workspace_bytes,
                                 t->accumulate, st);
    float *wide_dy = cpu_widen(t->dy, g->dtype, output_values(g), st);
    float *wide_w = wide_dy ? cpu_widen(t->w, g->dtype, weight_values(g), st) : NULL;
    float *wide_dx =
        wide_w ? cpu_wide_room(t->dx, g->dtype, input_values(g), t->accumulate, st) : NULL;
    int rc = wide_dx ? backward_data_f32(b, g, wide_dy, wide_w, wide_dx, t->workspace,
                                         t->workspace_bytes, t->accumulate, st)
                     : STATUS_RUNTIME_ERROR;
    if (!rc) cpu_narrow(wide_dx, t->dx, g->dtype, input_values(g));
    free(wide_dy);
    free(wide_w);
    free(wide_dx);
    return rc;
}

// dw and dbias are f32 in every storage: only x and dy are widened.
static int cpu_conv2d_backward_filter(const Backend *b, const Conv2dGeometry *g,
                                      const Conv2dBackwardFilterTensors *t, Status *st) {
    TRY(backend_dtype_check(b, g->dtype, "conv2d_backward_filter", st));
    TRY(backend_layout_check(g->layout, "conv2d_backward_filter", st));
    if (g->layout == LAYOUT_NHWC)
        return backward_filter_nhwc(b, g, t, st);
    if (g->dtype == DTYPE_F32)
        return backward_filter_f32(b, g, t->x, t->dy, t->dw, t->dbias, t->workspace,
                                   t->workspace_bytes, t->accumulate, st);
    float *wide_x = cpu_widen(t->x, g->dtype, input_values(g), st);
    float *wide_dy = wide_x ? cpu_widen(t->dy, g->dtype, output_values(g), st) : NULL;
    int rc = wide_dy ? backward_filter_f32(b, g, wide_x, wide_dy, t->dw, t->dbias, t->workspace,
                                           t->workspace_bytes, t->accumulate, st)
                     : STATUS_RUNTIME_ERROR;
    free(wide_x);
    free(wide_dy);
    return rc;
}

void cpu_register_conv_ops(Backend *table) {
    table->conv2d_workspace_size = cpu_conv2d_workspace_size;
    table->conv2d_least_workspace = cpu_conv2d_least_workspace;
    table->conv2d_forward = cpu_conv2d_forward;
    table->conv2d_forward_bias_activation = cpu_conv2d_forward_bias_activation;
    table->conv2d_backward_data = cpu_conv2d_backward_data;
    table->conv2d_backward_filter = cpu_conv2d_backward_filter;
}
