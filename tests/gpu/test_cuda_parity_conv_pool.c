// The CUDA backend against the CPU reference, convolution, pooling and layout_convert
// (kernels/backend.h); parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_cases.h"
#include "kernels/cuda/cuda_backend.h"

static const ConvCase conv_cases[] = {
    // n  c   h   w   f  kh kw sh sw ph pw dh dw g same bias
    CONV_CASES_BASIC,
    {2, 6, 9, 9, 6, 3, 3, 3, 3, 0, 0, 3, 3, 6, 0, 0},     // depthwise, dilation 3, stride 3
    {4, 8, 6, 6, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1},     // 1x1
    {2, 3, 6, 6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},     // 1x1 with padding: a zero border
    CONV_CASES_EVEN_SAME,
    {1, 3, 6, 5, 4, 2, 2, 1, 1, 0, 0, 2, 1, 1, 1, 1},     // even kernel, dilation 2x1, pad=same
    {2, 3, 9, 12, 4, 1, 5, 1, 2, 0, 2, 1, 1, 1, 0, 1},    // 1x5 kernel
    CONV_CASES_EDGES,
    {1, 2, 31, 1, 3, 3, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1},    // a 1-wide column image
    {2, 4, 6, 6, 4, 2, 2, 2, 2, 0, 0, 1, 1, 2, 0, 1},     // 2x2 stride 2 (patchify), groups 2
    {16, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1}, // CIFAR-sized
    {32, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1}, // LeNet's second layer, batch 32
    // LeNet-5's own layers, 1 -> 6 and 6 -> 16 channels: in NHWC, pixels of 1, 6 and 16
    // values, not the multiples of 8 tensor-core kernels like.
    {8, 1, 28, 28, 6, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 1},
    {8, 6, 12, 12, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 0},
    // The bias gradient's split reduction (cuda_channel_reduce.h, 16 384 values a block):
    // LeNet's two layers at batch 1024 (49 and 13 blocks per filter), then chunks that end
    // inside a sample's run and a last chunk shorter than the rest: 5 blocks of 78 255
    // values, one sample of one filter (3 blocks), 1x1 outputs (spatial 1, 2 blocks), and
    // a bias with one value per filter (one block: the direct kernel).
    {1024, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1},
    {1024, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1},
    {37, 2, 47, 45, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {1, 1, 200, 190, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {20000, 3, 3, 3, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 1},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1},
};
enum { CONV_CASES = sizeof conv_cases / sizeof conv_cases[0] };

// The CPU's answers for one case, computed once for every workspace size tried.
typedef struct ConvReference {
    float *y, *y_mag;
    float *dx[2], *dx_mag[2];          // [accumulate]
    float *dw[2], *dw_mag[2], *db[2], *db_mag[2];
} ConvReference;

static int conv_reference(const Conv2dGeometry *g, const ConvCase *k, const float *x,
                          const float *w, const float *bias, const float *dy, const float *dx0,
                          const float *dw0, const float *db0, ConvReference *r) {
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g->out_h * g->out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    size_t bytes = 0;
    if (CPU_CALL(conv2d_workspace_size, g, &bytes)) return 1;
    void *ws = host_alloc(bytes);
    const float *ax = absolute(x, nx), *aw = absolute(w, nw), *ady = absolute(dy, ny);
    const float *ab = absolute(bias, nb);
    r->y = poisoned(ny);
    r->y_mag = poisoned(ny);
    int rc = CPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = x, .w = w,
                      .bias = k->bias ? bias : NULL, .y = r->y, .workspace = ws,
                      .workspace_bytes = bytes});
    rc = rc || CPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = ax, .w = aw,
                        .bias = k->bias ? ab : NULL, .y = r->y_mag, .workspace = ws,
                        .workspace_bytes = bytes});
    for (int acc = 0; acc <= 1 && !rc; acc++) {
        r->dx[acc] = acc ? copy_of(dx0, nx) : poisoned(nx);
        r->dx_mag[acc] = acc ? absolute(dx0, nx) : poisoned(nx);
        r->dw[acc] = acc ? copy_of(dw0, nw) : poisoned(nw);
        r->dw_mag[acc] = acc ? absolute(dw0, nw) : poisoned(nw);
        r->db[acc] = acc ? copy_of(db0, nb) : poisoned(nb);
        r->db_mag[acc] = acc ? absolute(db0, nb) : poisoned(nb);
        rc = CPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = dy, .w = w,
                      .dx = r->dx[acc], .workspace = ws, .workspace_bytes = bytes, .accumulate = acc
                      }) ||
             CPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = ady, .w = aw,
                      .dx = r->dx_mag[acc], .workspace = ws, .workspace_bytes = bytes,
                      .accumulate = acc}) ||
             CPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = x, .dy = dy,
                      .dw = r->dw[acc], .dbias = k->bias ? r->db[acc] : NULL, .workspace = ws,
                      .workspace_bytes = bytes, .accumulate = acc}) ||
             CPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = ax, .dy = ady,
                      .dw = r->dw_mag[acc], .dbias = k->bias ? r->db_mag[acc] : NULL,
                      .workspace = ws, .workspace_bytes = bytes, .accumulate = acc});
    }
    return rc;
}

// The workspace sizes each case runs in: what conv2d_workspace_size asks for, that for
// batch 1, and conv2d_least_workspace's (none on a GPU in NCHW, the KRSC filter copy in
// NHWC: cuDNN's algorithms that need no more, or the direct kernels), which a run under a
// tight --memory-limit falls back to.
enum { CONV_WORKSPACE_FULL, CONV_WORKSPACE_ONE_SAMPLE, CONV_WORKSPACE_LEAST,
       CONV_WORKSPACE_SIZES };
static const char *const conv_workspace_names[] = {"full", "1-sample", "least"};

// Each case runs in both layouts (Conv2dGeometry.layout) against the one NCHW reference:
// the NHWC ops get the operands transposed and their results are transposed back, which
// is the layout contract itself (the same values, laid out otherwise), and the CPU's
// reference runs once per case rather than once per layout.
static const Layout conv_layouts[] = {LAYOUT_NCHW, LAYOUT_NHWC};
enum { CONV_LAYOUTS = sizeof conv_layouts / sizeof conv_layouts[0] };

// n images of channels x pixels f32 values moved from layout `from` into the other: a new
// copy, by the CPU's layout_convert (what flatten runs after NHWC images).
static float *conv_relaid(const float *src, int n, int channels, int pixels, Layout from) {
    Status st;
    status_clear(&st);
    float *dst = floats((size_t)n * channels * pixels);
    CPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = DTYPE_F32, .n = n, .channels = channels,
             .pixels = pixels, .from = from, .src = src, .dst = dst, .accumulate = 0});
    return dst;
}

// An NCHW operand as the ops get it in `layout` (itself in NCHW).
static const float *conv_laid_out(const float *nchw, int n, int channels, int pixels,
                                  Layout layout) {
    return layout == LAYOUT_NHWC ? conv_relaid(nchw, n, channels, pixels, LAYOUT_NCHW) : nchw;
}

// A device result in `layout` fetched into NCHW order, as the reference holds it.
static float *conv_fetch_nchw(const float *d, int n, int channels, int pixels, Layout layout) {
    float *h = fetch(d, (size_t)n * channels * pixels);
    return layout == LAYOUT_NHWC ? conv_relaid(h, n, channels, pixels, LAYOUT_NHWC) : h;
}

static void conv_variant(const Conv2dGeometry *g, const ConvCase *k, const char *base_shape,
                         int variant, const float *x_nchw, const float *w, const float *bias,
                         const float *dy_nchw, const float *dx0_nchw, const float *dw0,
                         const float *db0, const ConvReference *r) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "%s, layout %s, %s workspace", base_shape,
             layout_name(g->layout), conv_workspace_names[variant]);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g->out_h * g->out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    // The activations in g's layout; results come back in NCHW order to compare.
    int in_pixels = k->h * k->w, out_pixels = g->out_h * g->out_w;
    Layout lay = g->layout;
    const float *x = conv_laid_out(x_nchw, k->n, k->c, in_pixels, lay);
    const float *dy = conv_laid_out(dy_nchw, k->n, k->f, out_pixels, lay);
    const float *dx0 = conv_laid_out(dx0_nchw, k->n, k->c, in_pixels, lay);
    Conv2dGeometry sizing = *g;
    if (variant == CONV_WORKSPACE_ONE_SAMPLE) sizing.batch = 1;
    size_t bytes = 0;
    if (variant == CONV_WORKSPACE_LEAST) {
        REQUIRE(conv2d_least_workspace);
        if (GPU_CALL(conv2d_least_workspace, g, &bytes)) return;
        record("conv2d_least_workspace", 0.0, 0);
    } else {
        if (GPU_CALL(conv2d_workspace_size, &sizing, &bytes)) return;
        record("conv2d_workspace_size", 0.0, 0);
    }
    // Name the algorithms in the case, so that a failure says which one missed.
    char algorithms[512];
    if (cuda_conv2d_describe(gpu, g, bytes, algorithms, sizeof algorithms, &st) == 0) {
        printf("  %s: %s\n", shape, algorithms);
        size_t used = strlen(shape);
        snprintf(shape + used, sizeof shape - used, "; %s", algorithms);
    }
    // Workspace is scratch: an op must not count on it holding zeros.
    void *ws = dev_poisoned(bytes);
    float *d_x = dev_floats(x, nx), *d_w = dev_floats(w, nw), *d_bias = dev_floats(bias, nb);
    float *d_dy = dev_floats(dy, ny);
    if (HAVE(conv2d_forward)) {
        float *d_y = dev_poison_floats(ny);
        if (!GPU_CALL(conv2d_forward, g, &(Conv2dForwardTensors){.x = d_x, .w = d_w,
                      .bias = k->bias ? d_bias : NULL, .y = d_y, .workspace = ws,
                      .workspace_bytes = bytes}))
            compare("conv2d_forward", "y", conv_fetch_nchw(d_y, k->n, k->f, out_pixels, lay),
                    r->y, r->y_mag, ny);
    }
    if (HAVE(conv2d_forward_bias_activation))
        for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
            const FusedActivation *act = &fused_activations[a];
            float *d_y = dev_poison_floats(ny);
            if (GPU_CALL(conv2d_forward_bias_activation, g, &(Conv2dForwardTensors){.x = d_x,
                         .w = d_w, .bias = k->bias ? d_bias : NULL, .y = d_y, .workspace = ws,
                         .workspace_bytes = bytes}, act))
                continue;
            float *want = copy_of(r->y, ny);
            if (act->apply && CPU_CALL(activation_forward, &(ActivationForwardArgs){
                                       .kind = act->kind, .slope = act->slope, .dtype = DTYPE_F32,
                                       .x = want, .y = want, .n = ny}))
                continue;
            char what[64];
            snprintf(what, sizeof what, "y (act=%s)", fused_name(act));
            compare("conv2d_forward_bias_activation", what,
                    conv_fetch_nchw(d_y, k->n, k->f, out_pixels, lay), want,
                    fused_magnitude(r->y_mag, want, ny), ny);
        }
    for (int acc = 0; acc <= 1; acc++) {
        if (HAVE(conv2d_backward_data)) {
            float *d_dx = acc ? dev_floats(dx0, nx) : dev_poison_floats(nx);
            if (!GPU_CALL(conv2d_backward_data, g, &(Conv2dBackwardDataTensors){.dy = d_dy,
                          .w = d_w, .dx = d_dx, .workspace = ws, .workspace_bytes = bytes,
                          .accumulate = acc}))
                compare("conv2d_backward_data", acc ? "dx (accumulate)" : "dx",
                        conv_fetch_nchw(d_dx, k->n, k->c, in_pixels, lay),
                        r->dx[acc], r->dx_mag[acc], nx);
        }
        if (HAVE(conv2d_backward_filter)) {
            float *d_dw = acc ? dev_floats(dw0, nw) : dev_poison_floats(nw);
            float *d_db = acc ? dev_floats(db0, nb) : dev_poison_floats(nb);
            if (!GPU_CALL(conv2d_backward_filter, g, &(Conv2dBackwardFilterTensors){.x = d_x,
                          .dy = d_dy, .dw = d_dw, .dbias = k->bias ? d_db : NULL, .workspace = ws,
                          .workspace_bytes = bytes, .accumulate = acc})) {
                compare("conv2d_backward_filter", acc ? "dw (accumulate)" : "dw", fetch(d_dw, nw),
                        r->dw[acc], r->dw_mag[acc], nw);
                if (k->bias)
                    compare("conv2d_backward_filter", acc ? "dbias (accumulate)" : "dbias",
                            fetch(d_db, nb), r->db[acc], r->db_mag[acc], nb);
                else  // dbias NULL: nothing to write, and the poisoned buffer stays poisoned
                    compare_exact("conv2d_backward_filter", "unused dbias buffer", fetch(d_db, nb),
                                  acc ? db0 : poisoned(nb), nb, 0, 0);
            }
        }
    }
}

static void conv_case(const ConvCase *k, int workspace_sizes) {
    Conv2dGeometry g = conv_case_geometry(k);
    char base[256];
    snprintf(base, sizeof base,
             "n=%d x=%dx%dx%d filters=%d kernel=%dx%d stride=%dx%d pad=%s%dx%d dilation=%dx%d "
             "groups=%d bias=%d -> %dx%dx%d", k->n, k->c, k->h, k->w, k->f, k->kh, k->kw, k->sh,
             k->sw, k->same ? "same:" : "", g.pad_top, g.pad_left, k->dh, k->dw, k->groups, k->bias,
             k->f, g.out_h, g.out_w);
    snprintf(shape, sizeof shape, "%s", base);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->f * g.out_h * g.out_w;
    size_t nw = (size_t)k->f * (k->c / k->groups) * k->kh * k->kw, nb = (size_t)k->f;
    float *x = uniform(nx, -1.0f, 1.0f), *w = uniform(nw, -1.0f, 1.0f);
    float *bias = uniform(nb, -1.0f, 1.0f), *dy = uniform(ny, -1.0f, 1.0f);
    float *dx0 = uniform(nx, -1.0f, 1.0f), *dw0 = uniform(nw, -1.0f, 1.0f);
    float *db0 = uniform(nb, -1.0f, 1.0f);
    ConvReference r;
    if (conv_reference(&g, k, x, w, bias, dy, dx0, dw0, db0, &r)) return;
    for (int l = 0; l < CONV_LAYOUTS; l++) {
        Conv2dGeometry laid = g;
        laid.layout = conv_layouts[l];
        for (int v = 0; v < workspace_sizes && !device_broken; v++)
            conv_variant(&laid, k, base, v, x, w, bias, dy, dx0, dw0, db0, &r);
    }
}

static void test_conv(int workspace_sizes) {
    REQUIRE(conv2d_workspace_size);
    for (int i = 0; i < CONV_CASES; i++) {
        conv_case(&conv_cases[i], workspace_sizes);
        end_case();
    }
}

// ---- pooling -------------------------------------------------------------------------------

typedef struct PoolCase {
    int n, c, h, w, kh, kw, sh, sw, ph, pw;
} PoolCase;

static const PoolCase pool_cases[] = {
    {1, 1, 4, 4, 2, 2, 2, 2, 0, 0},      // the textbook 2x2
    {2, 3, 28, 28, 2, 2, 2, 2, 0, 0},    // LeNet
    {2, 3, 7, 7, 2, 2, 2, 2, 0, 0},      // odd input: the last row and column are dropped
    {1, 2, 5, 5, 3, 3, 1, 1, 1, 1},      // overlapping windows, padding 1
    {3, 2, 9, 11, 3, 3, 2, 2, 1, 1},     // overlapping, stride 2, padding
    {2, 4, 6, 8, 3, 2, 2, 1, 1, 1},      // non-square window and stride
    {1, 1, 1, 1, 1, 1, 1, 1, 0, 0},      // 1x1
    {2, 2, 7, 5, 4, 4, 3, 3, 2, 2},      // even window with padding size / 2
    {4, 8, 13, 13, 3, 3, 3, 3, 1, 0},    // padding on the rows only
    {1, 1, 2, 2, 3, 3, 1, 1, 1, 1},      // windows mostly padding
    {32, 32, 14, 14, 2, 2, 2, 2, 0, 0},  // LeNet's second pool, batch 32
    // Windows that do not overlap run max-pool backward's per-output kernel: lenet's and
    // cnn-bn's two pools at batch 1024, gaps between windows (stride > size), clipped
    // windows at both ends (padding), a 3x1 window, a one-row image whose last column is in
    // no window, and a window as large as the image.
    {1024, 32, 28, 28, 2, 2, 2, 2, 0, 0},
    {1024, 64, 14, 14, 2, 2, 2, 2, 0, 0},
    {2, 3, 9, 10, 2, 2, 3, 3, 0, 0},
    {2, 3, 7, 7, 2, 2, 2, 2, 1, 1},
    {3, 2, 5, 7, 3, 1, 3, 1, 1, 0},
    {1, 1, 1, 9, 1, 2, 1, 2, 0, 0},
    {5, 1, 3, 3, 3, 3, 3, 3, 0, 0},
    // global_avgpool's window (the whole image, core/layers/global_avgpool.c), with channel
    // counts that are not multiples of a warp, which NHWC's threads walk.
    {8, 16, 7, 7, 7, 7, 1, 1, 0, 0},
    {3, 37, 5, 6, 5, 6, 1, 1, 0, 0},
    {2, 33, 9, 9, 2, 2, 2, 2, 0, 0},
};
enum { POOL_CASES = sizeof pool_cases / sizeof pool_cases[0] };

enum { POOL_RANDOM, POOL_TIES, POOL_NEGATIVE, POOL_NAN };
static const char *const pool_input_names[] = {"random", "ties", "all negative", "with NaN"};

// The case's geometry with x, y, dx, dy and argmax in `layout`: both backends get the same
// one and read the same buffers in it (the CPU's NHWC transposes around its NCHW loops).
static Pool2dGeometry pool_geometry(const PoolCase *k, Layout layout) {
    return (Pool2dGeometry){.batch = k->n, .channels = k->c, .in_h = k->h, .in_w = k->w,
                            .out_h = (k->h + 2 * k->ph - k->kh) / k->sh + 1,
                            .out_w = (k->w + 2 * k->pw - k->kw) / k->sw + 1, .kernel_h = k->kh,
                            .kernel_w = k->kw, .stride_h = k->sh, .stride_w = k->sw,
                            .pad_top = k->ph, .pad_left = k->pw, .layout = layout};
}

static void pool_describe(const PoolCase *k, const Pool2dGeometry *g, const char *extra) {
    snprintf(shape, sizeof shape, "%s n=%d c=%d in=%dx%d window=%dx%d stride=%dx%d pad=%dx%d "
             "-> %dx%d%s", layout_name(g->layout), k->n, k->c, k->h, k->w, k->kh, k->kw, k->sh,
             k->sw, k->ph, k->pw, g->out_h, g->out_w, extra);
}

static float *pool_input(size_t n, int kind) {
    float *x = uniform(n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i++) {
        if (kind == POOL_TIES) x[i] = 0.5f * (float)((int)rng_below(&rng, 3) - 1);  // -0.5, 0, 0.5
        if (kind == POOL_NEGATIVE) x[i] = -1.0f - fabsf(x[i]);  // padding (0) must not win
        if (kind == POOL_NAN && i % 11 == 3) x[i] = NAN;
    }
    return x;
}

static void maxpool_forward_case(const PoolCase *k, Layout layout, int input) {
    Pool2dGeometry g = pool_geometry(k, layout);
    char extra[40];
    snprintf(extra, sizeof extra, ", %s input", pool_input_names[input]);
    pool_describe(k, &g, extra);
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = pool_input(nx, input);
    float *d_x = dev_floats(x, nx), *d_y = dev_poison_floats(ny);
    int32_t *d_arg = dev_poisoned(ny * sizeof(int32_t));
    if (GPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = d_x,
                 .y = d_y, .argmax = d_arg})) return;
    float *y = poisoned(ny);
    int32_t *arg = host_alloc(ny * sizeof *arg), *got_arg = host_alloc(ny * sizeof *got_arg);
    CPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y,
             .argmax = arg});
    download(got_arg, d_arg, ny * sizeof *got_arg);
    compare_exact("maxpool_forward", "y", fetch(d_y, ny), y, ny, 0, 1);
    compare_exact("maxpool_forward", "argmax", got_arg, arg, ny, 1, 0);
}

static void maxpool_backward_case(const PoolCase *k, Layout layout, int input, int accumulate) {
    Pool2dGeometry g = pool_geometry(k, layout);
    char extra[64];
    snprintf(extra, sizeof extra, ", %s input, accumulate=%d", pool_input_names[input], accumulate);
    pool_describe(k, &g, extra);
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = pool_input(nx, input), *y = floats(ny);
    int32_t *arg = host_alloc(ny * sizeof *arg);
    if (CPU_CALL(maxpool_forward, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y,
                 .argmax = arg})) return;
    // Some dy of -0: the CPU's 0 + -0 leaves +0 in dx, which a plain copy of dy would not.
    float *dy = uniform(ny, -1.0f, 1.0f);
    for (size_t i = 0; i < ny; i += 7) dy[i] = -0.0f;
    float *dx0 = accumulate ? uniform(nx, -1.0f, 1.0f) : poisoned(nx);
    float *d_dy = dev_floats(dy, ny), *d_dx = dev_floats(dx0, nx);
    int32_t *d_arg = dev_copy(arg, ny * sizeof *arg);
    if (GPU_CALL(maxpool_backward, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32, .dy = d_dy,
                 .argmax = d_arg, .dx = d_dx, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, nx);
    CPU_CALL(maxpool_backward, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
             .argmax = arg, .dx = want, .accumulate = accumulate});
    // Each dx is a sum of dy's in the CPU's order (a single dy where windows do not
    // overlap): bit for bit.
    compare_exact("maxpool_backward", "dx", fetch(d_dx, nx), want, nx, 0, 0);
}

static void avgpool_forward_case(const PoolCase *k, Layout layout) {
    Pool2dGeometry g = pool_geometry(k, layout);
    pool_describe(k, &g, "");
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *x = uniform(nx, -1.0f, 1.0f);
    float *d_x = dev_floats(x, nx), *d_y = dev_poison_floats(ny);
    if (GPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = d_x,
                 .y = d_y})) return;
    float *y = poisoned(ny), *mag = poisoned(ny);
    CPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = x, .y = y});
    CPU_CALL(avgpool_forward, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32,
             .x = absolute(x, nx), .y = mag});
    compare("avgpool_forward", "y", fetch(d_y, ny), y, mag, ny);
}

static void avgpool_backward_case(const PoolCase *k, Layout layout, int accumulate) {
    Pool2dGeometry g = pool_geometry(k, layout);
    pool_describe(k, &g, accumulate ? ", accumulate=1" : ", accumulate=0");
    Status st;
    status_clear(&st);
    size_t nx = (size_t)k->n * k->c * k->h * k->w, ny = (size_t)k->n * k->c * g.out_h * g.out_w;
    float *dy = uniform(ny, -1.0f, 1.0f);
    float *dx0 = accumulate ? uniform(nx, -1.0f, 1.0f) : poisoned(nx);
    float *d_dy = dev_floats(dy, ny), *d_dx = dev_floats(dx0, nx);
    if (GPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32, .dy = d_dy,
                 .dx = d_dx, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, nx), *mag = accumulate ? absolute(dx0, nx) : poisoned(nx);
    CPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
             .dx = want, .accumulate = accumulate});
    CPU_CALL(avgpool_backward, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32,
             .dy = absolute(dy, ny), .dx = mag, .accumulate = accumulate});
    compare("avgpool_backward", "dx", fetch(d_dx, nx), want, mag, nx);
}

// The input kinds a case runs: all of them, except for NHWC's batch-1024 cases, random
// only (NCHW runs their ties and NaNs; the layout changes the addressing, not the rule, and
// the CPU reference takes a while over 25.7 million values).
static int pool_last_input(const PoolCase *k, Layout layout) {
    return layout == LAYOUT_NHWC && k->n >= 1024 ? POOL_RANDOM : POOL_NAN;
}

// Every case in NCHW, then in NHWC.
static void test_pools(void) {
    for (int l = 0; l < 2; l++) {
        Layout layout = l ? LAYOUT_NHWC : LAYOUT_NCHW;
        if (HAVE(maxpool_forward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int in = POOL_RANDOM; in <= pool_last_input(&pool_cases[i], layout); in++) {
                    maxpool_forward_case(&pool_cases[i], layout, in);
                    end_case();
                }
        if (HAVE(maxpool_backward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int acc = 0; acc <= 1; acc++)
                    for (int in = POOL_RANDOM; in <= pool_last_input(&pool_cases[i], layout);
                         in++) {
                        maxpool_backward_case(&pool_cases[i], layout, in, acc);
                        end_case();
                    }
        if (HAVE(avgpool_forward))
            for (int i = 0; i < POOL_CASES; i++) {
                avgpool_forward_case(&pool_cases[i], layout);
                end_case();
            }
        if (HAVE(avgpool_backward))
            for (int i = 0; i < POOL_CASES; i++)
                for (int acc = 0; acc <= 1; acc++) {
                    avgpool_backward_case(&pool_cases[i], layout, acc);
                    end_case();
                }
    }
}

// ---- layout_convert --------------------------------------------------------------------------

// A transpose, and with accumulate one f32 sum rounded once, on both backends: bit for bit.
static void layout_convert_case(DType dtype, int n, int channels, int pixels, Layout from,
                                int accumulate) {
    Layout to = from == LAYOUT_NHWC ? LAYOUT_NCHW : LAYOUT_NHWC;
    snprintf(shape, sizeof shape, "%s %s -> %s n=%d channels=%d pixels=%d accumulate=%d",
             dtype_name(dtype), layout_name(from), layout_name(to), n, channels, pixels,
             accumulate);
    Status st;
    status_clear(&st);
    size_t count = (size_t)n * channels * pixels, bytes = count * dtype_size(dtype);
    float *src = uniform(count, -3.0f, 3.0f), *dst0 = uniform(count, -3.0f, 3.0f);
    void *src_stored = stored(src, count, dtype), *dst_stored = stored(dst0, count, dtype);
    void *d_src = dev_copy(src_stored, bytes);
    void *d_dst = accumulate ? dev_copy(dst_stored, bytes) : dev_poisoned(bytes);
    if (GPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = dtype, .n = n, .channels = channels,
                 .pixels = pixels, .from = from, .src = d_src, .dst = d_dst,
                 .accumulate = accumulate}))
        return;
    void *want = host_alloc(bytes ? bytes : 1);
    memcpy(want, dst_stored, bytes);
    if (CPU_CALL(layout_convert, &(LayoutConvertArgs){.dtype = dtype, .n = n, .channels = channels,
                 .pixels = pixels, .from = from, .src = src_stored, .dst = want,
                 .accumulate = accumulate}))
        return;
    compare_exact("layout_convert", "dst", fetch_widened(d_dst, count, dtype),
                  widened(want, count, dtype), count, 0, 0);
}

// Both directions, accumulate 0 and 1, every storage type; channels and pixels on and off
// the kernel's 32 x 32 tiles, one channel, one pixel, no images, and more images than the
// kernel's grid depth (65535), which it takes in turns; and an image of more pixels than
// 65535 row tiles of 32 (2,097,120), whose row tiles the kernel also takes in turns.
static void test_layout_convert(void) {
    REQUIRE(layout_convert);
    static const int sizes[][3] = {{1, 1, 1},   {2, 1, 49},   {3, 37, 1},    {2, 33, 45},
                                   {4, 64, 196}, {2, 70, 1025}, {0, 3, 5},   {70001, 3, 5},
                                   {65537, 1, 2}, {1, 2, 2100000}};
    static const DType types[] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 3; t++)
            for (int l = 0; l < 2; l++)
                for (int acc = 0; acc <= 1; acc++) {
                    layout_convert_case(types[t], sizes[s][0], sizes[s][1], sizes[s][2],
                                        l ? LAYOUT_NHWC : LAYOUT_NCHW, acc);
                    end_case();
                }
}

static void run(const ParityPass *pass) {
    switch (pass->kind) {
    case PARITY_FP32:
        if (section("conv2d")) test_conv(CONV_WORKSPACE_SIZES);
        if (section("pooling")) test_pools();
        if (section("layout_convert")) test_layout_convert();
        break;
    case PARITY_TF32:
        if (section("conv2d (TF32 allowed)")) test_conv(1);
        break;
    case PARITY_REDUCED:
        rtol = pass->conv_rtol;
        if (section("conv2d (inputs rounded to the precision's convolution precision)"))
            test_conv(1);
        rtol = FP32_RTOL;
        break;
    case PARITY_LEVERS_OFF:
        if (section("conv2d: cuDNN's bias gradient, unfused forward (bias-gradient, conv-fused)"))
            test_conv(CONV_WORKSPACE_SIZES);
        if (section("pooling: max-pool backward by the gather (maxpool-scatter)")) test_pools();
        break;
    }
}

PARITY_MAIN("test_cuda_parity_conv_pool", BACKEND_CONV_POOL_OPS,
            PARITY_TF32 | PARITY_REDUCED | PARITY_LEVERS_OFF, run)
