// The CUDA conv2d ops in bf16 and f16 storage (Conv2dGeometry.dtype) against the CPU ops in
// the same storage, whose 16-bit paths widen, run the f32 op and round once
// (tests/unit/test_storage16_conv.c pins that): forward with and without bias, the fused
// bias+activation forward (relu: cuDNN's fused call where it runs; identity, tanh and
// leaky_relu: the 16-bit bias-and-activation pass), backward data with and without
// accumulate, backward filter with beta 0 and 1 and its bias gradient, on plain, strided,
// grouped and even-kernel pad=same shapes (the last on the direct kernels), with the full
// workspace and with none (the 16-bit scratch missing: backward filter on the direct
// kernel, the forward unfused); each with every lever on, and again with the bias-gradient
// and conv-fused levers off (cudnnConvolutionBackwardBias through the 16-bit scratch; no
// fused call). Every case runs in both layouts (Conv2dGeometry.layout): the CPU op in NCHW,
// the GPU op on the same operands laid out NHWC, its results laid back out NCHW to compare
// (the layout contract: the same values, transposed), with the same tolerances. NHWC with
// no workspace has no room for the KRSC filter copy either: every op on the direct kernels.
//
// Tolerances, and why. Both sides sum the same (already rounded) operands in f32, in
// different orders: ~sqrt(K) * 6e-8 of the sum of |terms| (`mag`, the CPU op run on
// |operands|), bounded here by 5e-5 * mag. A stored 16-bit result then rounds once on the
// CPU; on the GPU it may round twice (cuDNN's y, then the bias-and-activation pass) and a
// tiny f32 difference may cross a rounding boundary: within one unit of the storage's last
// place of |want| and of the pre-bias sum (at most mag): u * (|want| + mag), u = 2^-7
// (bf16) or 2^-10 (f16). The f32 weight and bias gradients are cuDNN's 16-bit output added
// into f32 (one rounding of the new part, at most mag) or an f32 sum: u * mag. A wrong
// index, stride, group or dtype is off by O(mag).
//
// Skipped (77) when no CUDA backend opens; bf16 alone on a GPU older than compute
// capability 8.0 (the backend refuses to open in bf16 there).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/lever.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"
#include "cuda_or_skip.h"
#include "device_buffers.h"

typedef struct ConvCase {
    const char *name;
    Conv2dGeometry g;  // dtype set per pass
} ConvCase;

// batch, in_channels, in_h, in_w, out_channels, out_h, out_w, kernel_h, kernel_w, stride_h,
// stride_w, pad_top, pad_left, dilation_h, dilation_w, groups, dtype, layout
static const ConvCase cases[] = {
    {"3x3 pad 1", {8, 4, 10, 10, 8, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
    {"5x5 stride 2 pad 2", {6, 3, 13, 11, 6, 7, 6, 5, 5, 2, 2, 2, 2, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
    {"3x3 groups 4", {4, 8, 9, 9, 8, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 4, DTYPE_F32, LAYOUT_NCHW}},
    {"3x3 dilation 2", {5, 3, 12, 12, 4, 8, 8, 3, 3, 1, 1, 0, 0, 2, 2, 1, DTYPE_F32, LAYOUT_NCHW}},
    // pad=same with an even kernel: the extra row and column at the bottom and right,
    // which cuDNN cannot describe (the direct kernels).
    {"2x2 pad=same", {3, 2, 6, 6, 4, 6, 6, 2, 2, 1, 1, 0, 0, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
    // LeNet's second layer at a small batch.
    {"lenet conv2", {16, 32, 14, 14, 64, 14, 14, 5, 5, 1, 1, 2, 2, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
    // LeNet-5's layers: 1 -> 6 and 6 -> 16 channels, NHWC pixels of 1, 6 and 16 values.
    {"lenet-5 conv1", {8, 1, 28, 28, 6, 24, 24, 5, 5, 1, 1, 0, 0, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
    {"lenet-5 conv2", {8, 6, 12, 12, 16, 8, 8, 5, 5, 1, 1, 0, 0, 1, 1, 1, DTYPE_F32, LAYOUT_NCHW}},
};
enum { CASES = sizeof cases / sizeof cases[0] };

static const Backend *gpu;
static const char *pass_name = "";
static double worst[8];  // the largest error / tolerance seen per op, for the summary
static const char *const op_names[8] = {
    "conv2d_forward", "conv2d_forward_bias_activation", "conv2d_backward_data",
    "conv2d_backward_filter dw", "conv2d_backward_filter dbias"};

static void report(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "  %s %s failed: %s", pass_name, what, text);
    test_failures++;
}

static float *host_floats(size_t n) { return malloc((n ? n : 1) * sizeof(float)); }

static void fill(float *x, size_t n, Rng *rng) {
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_uniform(rng) - 1.0f;
}

static float *absolute_of(const float *x, size_t n) {
    float *a = host_floats(n);
    for (size_t i = 0; i < n; i++) a[i] = fabsf(x[i]);
    return a;
}

// Each case's device buffers, freed when it ends.
static DeviceBuffers dev = {.report = report};

// err_i = |got - want| / (u * (|want| + mag) + 5e-5 * mag) for 16-bit results (stored),
// or / ((u + 5e-5) * mag) for f32 ones; fails above 1.
static void compare(int op, const char *what, const char *shape, const float *got,
                    const float *want, const float *mag, size_t n, double u, int stored) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = stored ? u * (fabs(want[i]) + mag[i]) + 5e-5 * mag[i] : (u + 5e-5) * mag[i];
        if (tol == 0.0) tol = 1e-30;
        double err = fabs((double)got[i] - want[i]) / tol;
        if (!(err <= 1.0)) err = isnan(err) ? 1e30 : err;
        if (err > worst[op]) worst[op] = err;
        if (err > 1.0 && bad++ < 3)
            fprintf(stderr, "  %s %s %s (%s) [%zu]: got %.6g, want %.6g (mag %.3g)\n", pass_name,
                    what, shape, op_names[op], i, got[i], want[i], mag[i]);
    }
    if (bad) {
        fprintf(stderr, "  CHECK failed: %s %s %s: %zu of %zu values off\n", pass_name, what,
                shape, bad, n);
        test_failures++;
    }
}

typedef struct Buffers {
    size_t nx, ny, nw, nb;
    float *x, *w, *dy, *bias, *dx0, *dw0, *db0;  // f32, already rounded to the storage
    uint16_t *x16, *w16, *dy16, *dx016;
} Buffers;

// Random operands rounded to `dtype` (and kept as f32 too, for the magnitudes).
static void buffers_make(Buffers *b, const Conv2dGeometry *g, DType dtype, uint64_t seed) {
    b->nx = (size_t)g->batch * g->in_channels * g->in_h * g->in_w;
    b->ny = (size_t)g->batch * g->out_channels * g->out_h * g->out_w;
    b->nw = (size_t)g->out_channels * (g->in_channels / g->groups) * g->kernel_h * g->kernel_w;
    b->nb = (size_t)g->out_channels;
    Rng rng;
    rng_seed(&rng, seed);
    float **f32[] = {&b->x, &b->w, &b->dy, &b->bias, &b->dx0, &b->dw0, &b->db0};
    size_t sizes[] = {b->nx, b->nw, b->ny, b->nb, b->nx, b->nw, b->nb};
    for (int i = 0; i < 7; i++) {
        *f32[i] = host_floats(sizes[i]);
        fill(*f32[i], sizes[i], &rng);
    }
    uint16_t **half[] = {&b->x16, &b->w16, &b->dy16, &b->dx016};
    float *from[] = {b->x, b->w, b->dy, b->dx0};
    size_t counts[] = {b->nx, b->nw, b->ny, b->nx};
    for (int i = 0; i < 4; i++) {
        *half[i] = malloc((counts[i] ? counts[i] : 1) * 2);
        cpu_narrow(from[i], *half[i], dtype, counts[i]);
        Status st;
        status_clear(&st);
        float *back = cpu_widen(*half[i], dtype, counts[i], &st);
        memcpy(from[i], back, counts[i] * sizeof(float));
        free(back);
    }
}

static void buffers_free(Buffers *b) {
    free(b->x), free(b->w), free(b->dy), free(b->bias), free(b->dx0), free(b->dw0), free(b->db0);
    free(b->x16), free(b->w16), free(b->dy16), free(b->dx016);
}

static float *widened(const uint16_t *h, DType dtype, size_t n) {
    Status st;
    status_clear(&st);
    return cpu_widen(h, dtype, n, &st);
}

// The 16-bit output of a GPU op (at d, n values) widened, after poisoning it with NaN
// bits so that an element the op skips shows.
static float *gpu_result16(const void *d, DType dtype, size_t n) {
    uint16_t *h = malloc((n ? n : 1) * 2);
    device_download(&dev, h, d, n * 2);
    float *w = widened(h, dtype, n);
    free(h);
    return w;
}

static void poison16(void *d, size_t n) {
    uint16_t *nan = malloc((n ? n : 1) * 2);
    for (size_t i = 0; i < n; i++) nan[i] = 0xFFFF;  // a NaN in bf16 and in f16
    Status st;
    status_clear(&st);
    if (gpu->copy_to_device(gpu, d, nan, n * 2, &st)) report("poison", &st);
    free(nan);
}

// n images of channels x pixels values of `size` bytes each, NCHW, laid out NHWC (to_nhwc)
// or the reverse: a new copy (malloc'd) by the CPU's transpose (cpu_layout_transpose), or a
// plain copy when the layout is NCHW.
static void *relaid(const void *src, size_t size, int n, int channels, int pixels,
                    Layout layout, int to_nhwc) {
    size_t total = (size_t)n * channels * pixels;
    void *dst = malloc((total ? total : 1) * size);
    if (layout != LAYOUT_NHWC) memcpy(dst, src, total * size);
    else cpu_layout_transpose(src, dst, size, n, channels, pixels,
                              to_nhwc ? LAYOUT_NCHW : LAYOUT_NHWC);
    return dst;
}

// A GPU result in `layout` (widened f32, malloc'd), replaced by its NCHW order.
static float *back_to_nchw(float *got, int n, int channels, int pixels, Layout layout) {
    float *nchw = relaid(got, sizeof(float), n, channels, pixels, layout, 0);
    free(got);
    return nchw;
}

static void run_case(const ConvCase *k, DType dtype, Layout layout, int no_workspace, double u) {
    const Backend *cpu = cpu_backend();
    // g (and g32, the magnitudes') for the CPU, NCHW; gl for the GPU, in `layout`.
    Conv2dGeometry g = k->g, g32 = k->g;
    g.dtype = dtype;
    Conv2dGeometry gl = g;
    gl.layout = layout;
    int in_px = g.in_h * g.in_w, out_px = g.out_h * g.out_w;
    char shape[96];
    snprintf(shape, sizeof shape, "%s %s %s%s", k->name, dtype_name(dtype),
             layout_name(layout), no_workspace ? ", no workspace" : "");
    Buffers h;
    buffers_make(&h, &g, dtype, 7 + (uint64_t)g.batch);
    // The GPU's activations in its layout.
    uint16_t *x16l = relaid(h.x16, 2, g.batch, g.in_channels, in_px, layout, 1);
    uint16_t *dy16l = relaid(h.dy16, 2, g.batch, g.out_channels, out_px, layout, 1);
    uint16_t *dx016l = relaid(h.dx016, 2, g.batch, g.in_channels, in_px, layout, 1);
    Status st;
    status_clear(&st);
    size_t cpu_bytes = 0, gpu_bytes = 0;
    if (cpu->conv2d_workspace_size(cpu, &g, &cpu_bytes, &st) ||
        gpu->conv2d_workspace_size(gpu, &gl, &gpu_bytes, &st)) {
        report("conv2d_workspace_size", &st);
        buffers_free(&h);
        free(x16l), free(dy16l), free(dx016l);
        return;
    }
    if (no_workspace) gpu_bytes = 0;
    void *cws = malloc(cpu_bytes ? cpu_bytes : 1);
    void *gws = device_upload(&dev, NULL, gpu_bytes);
    // magnitudes: the f32 ops on |operands|
    float *ax = absolute_of(h.x, h.nx), *aw = absolute_of(h.w, h.nw);
    float *ady = absolute_of(h.dy, h.ny), *ab = absolute_of(h.bias, h.nb);
    float *y_mag = host_floats(h.ny), *dx_mag = host_floats(h.nx), *dw_mag = host_floats(h.nw);
    float db_mag[128];
    int rc = cpu->conv2d_forward(cpu, &g32, &(Conv2dForwardTensors){.x = ax, .w = aw, .bias = ab,
                                 .y = y_mag, .workspace = cws, .workspace_bytes = cpu_bytes},
                                     &st) ||
             cpu->conv2d_backward_data(cpu, &g32, &(Conv2dBackwardDataTensors){.dy = ady, .w = aw,
                                       .dx = dx_mag, .workspace = cws,
                                       .workspace_bytes = cpu_bytes, .accumulate = 0}, &st) ||
             cpu->conv2d_backward_filter(cpu, &g32, &(Conv2dBackwardFilterTensors){.x = ax,
                                         .dy = ady, .dw = dw_mag, .dbias = db_mag,
                                         .workspace = cws, .workspace_bytes = cpu_bytes,
                                         .accumulate = 0}, &st);
    if (rc) report("the magnitudes", &st);
    void *d_x = device_upload(&dev, x16l, h.nx * 2), *d_w = device_upload(&dev, h.w16, h.nw * 2);
    void *d_dy = device_upload(&dev, dy16l, h.ny * 2), *d_y = device_upload(&dev, NULL, h.ny * 2);
    void *d_dx = device_upload(&dev, NULL, h.nx * 2);
    float *d_bias = device_upload(&dev, h.bias, h.nb * 4);
    float *d_dw = device_upload(&dev, NULL, h.nw * 4), *d_db = device_upload(&dev, NULL, h.nb * 4);
    uint16_t *y16 = malloc(h.ny * 2), *dx16 = malloc(h.nx * 2);
    float *want_dw = host_floats(h.nw), want_db[128], *got_dw = host_floats(h.nw), got_db[128];
    if (dev.broken) rc = 1;  // an upload failed (reported): no op gets a NULL device pointer

    // forward, with and without the bias
    for (int with_bias = 0; !rc && with_bias < 2; with_bias++) {
        const float *bias = with_bias ? h.bias : NULL;
        poison16(d_y, h.ny);
        rc = cpu->conv2d_forward(cpu, &g, &(Conv2dForwardTensors){.x = h.x16, .w = h.w16,
                                 .bias = bias, .y = y16, .workspace = cws,
                                 .workspace_bytes = cpu_bytes}, &st);
        if (rc) { report("cpu conv2d_forward", &st); break; }
        rc = gpu->conv2d_forward(gpu, &gl, &(Conv2dForwardTensors){.x = d_x, .w = d_w,
                                 .bias = with_bias ? d_bias : NULL, .y = d_y, .workspace = gws,
                                 .workspace_bytes = gpu_bytes}, &st);
        if (rc) { report("conv2d_forward", &st); break; }
        float *want = widened(y16, dtype, h.ny);
        float *got = back_to_nchw(gpu_result16(d_y, dtype, h.ny), g.batch, g.out_channels,
                                  out_px, layout);
        compare(0, with_bias ? "y" : "y (no bias)", shape, got, want, y_mag, h.ny, u, 1);
        free(want), free(got);
    }
    // fused bias and activation
    FusedActivation acts[] = {{1, ACTIVATION_RELU, 0.0f}, {0, ACTIVATION_RELU, 0.0f},
                              {1, ACTIVATION_TANH, 0.0f}, {1, ACTIVATION_LEAKY_RELU, 0.1f}};
    const char *act_names[] = {"y relu", "y identity", "y tanh", "y leaky_relu"};
    for (int a = 0; !rc && a < 4; a++) {
        poison16(d_y, h.ny);
        rc = cpu->conv2d_forward_bias_activation(cpu, &g, &(Conv2dForwardTensors){.x = h.x16,
                                                 .w = h.w16, .bias = h.bias, .y = y16,
                                                 .workspace = cws, .workspace_bytes = cpu_bytes},
                                                 &acts[a], &st);
        if (rc) { report("cpu conv2d_forward_bias_activation", &st); break; }
        rc = gpu->conv2d_forward_bias_activation(gpu, &gl, &(Conv2dForwardTensors){.x = d_x,
                                                 .w = d_w, .bias = d_bias, .y = d_y,
                                                 .workspace = gws, .workspace_bytes = gpu_bytes},
                                                 &acts[a], &st);
        if (rc) { report("conv2d_forward_bias_activation", &st); break; }
        float *want = widened(y16, dtype, h.ny);
        float *got = back_to_nchw(gpu_result16(d_y, dtype, h.ny), g.batch, g.out_channels,
                                  out_px, layout);
        compare(1, act_names[a], shape, got, want, y_mag, h.ny, u, 1);
        free(want), free(got);
    }
    // backward data: overwrite (dx poisoned), then add to dx0
    for (int acc = 0; !rc && acc < 2; acc++) {
        if (acc) {
            memcpy(dx16, h.dx016, h.nx * 2);
            rc = gpu->copy_to_device(gpu, d_dx, dx016l, h.nx * 2, &st);
        } else {
            poison16(d_dx, h.nx);
        }
        rc = rc || cpu->conv2d_backward_data(cpu, &g, &(Conv2dBackwardDataTensors){.dy = h.dy16,
                                             .w = h.w16, .dx = dx16, .workspace = cws,
                                             .workspace_bytes = cpu_bytes, .accumulate = acc}, &st);
        if (rc) { report("cpu conv2d_backward_data", &st); break; }
        rc = gpu->conv2d_backward_data(gpu, &gl, &(Conv2dBackwardDataTensors){.dy = d_dy, .w = d_w,
                                       .dx = d_dx, .workspace = gws, .workspace_bytes = gpu_bytes,
                                       .accumulate = acc}, &st);
        if (rc) { report("conv2d_backward_data", &st); break; }
        float *want = widened(dx16, dtype, h.nx);
        float *got = back_to_nchw(gpu_result16(d_dx, dtype, h.nx), g.batch, g.in_channels,
                                  in_px, layout);
        compare(2, acc ? "dx (accumulate)" : "dx", shape, got, want, dx_mag, h.nx, u, 1);
        free(want), free(got);
    }
    // backward filter and the bias gradient, beta 0 (outputs NaN first) and 1
    for (int acc = 0; !rc && acc < 2; acc++) {
        for (size_t i = 0; i < h.nw; i++) want_dw[i] = acc ? h.dw0[i] : NAN;
        for (size_t i = 0; i < h.nb; i++) want_db[i] = acc ? h.db0[i] : NAN;
        rc = gpu->copy_to_device(gpu, d_dw, want_dw, h.nw * 4, &st) ||
             gpu->copy_to_device(gpu, d_db, want_db, h.nb * 4, &st) ||
             cpu->conv2d_backward_filter(cpu, &g, &(Conv2dBackwardFilterTensors){.x = h.x16,
                                         .dy = h.dy16, .dw = want_dw, .dbias = want_db,
                                         .workspace = cws, .workspace_bytes = cpu_bytes,
                                         .accumulate = acc}, &st);
        if (rc) { report("cpu conv2d_backward_filter", &st); break; }
        rc = gpu->conv2d_backward_filter(gpu, &gl, &(Conv2dBackwardFilterTensors){.x = d_x,
                                         .dy = d_dy, .dw = d_dw, .dbias = d_db, .workspace = gws,
                                         .workspace_bytes = gpu_bytes, .accumulate = acc}, &st);
        if (rc) { report("conv2d_backward_filter", &st); break; }
        device_download(&dev, got_dw, d_dw, h.nw * 4);
        device_download(&dev, got_db, d_db, h.nb * 4);
        compare(3, acc ? "dw (accumulate)" : "dw", shape, got_dw, want_dw, dw_mag, h.nw, u, 0);
        compare(4, acc ? "dbias (accumulate)" : "dbias", shape, got_db, want_db, db_mag, h.nb, u,
                0);
    }
    Status sync;
    status_clear(&sync);
    if (gpu->synchronize(gpu, &sync)) report("synchronize", &sync);
    device_free_all(&dev);
    free(cws), free(ax), free(aw), free(ady), free(ab), free(y_mag), free(dx_mag), free(dw_mag);
    free(y16), free(dx16), free(want_dw), free(got_dw);
    free(x16l), free(dy16l), free(dx016l);
    buffers_free(&h);
}

// One pass: every case in `dtype` on a backend opened in `precision` with `levers` off.
// 77 when the backend does not open in it.
static int run_pass(Precision precision, unsigned levers, const char *name) {
    if (cuda_open_in_or_skip(precision, levers, name, &gpu)) return 77;
    dev = (DeviceBuffers){.gpu = gpu, .report = report};
    pass_name = name;
    DType dtype = precision_activation_dtype(precision);
    double u = dtype == DTYPE_BF16 ? 1.0 / 128.0 : 1.0 / 1024.0;
    memset(worst, 0, sizeof worst);
    for (int c = 0; c < CASES; c++)
        for (int l = 0; l < 2; l++)
            for (int none = 0; none < 2; none++)
                run_case(&cases[c], dtype, l ? LAYOUT_NHWC : LAYOUT_NCHW, none, u);
    for (int op = 0; op < 5; op++)
        printf("%s: %-32s largest error %.3f of its tolerance\n", name, op_names[op], worst[op]);
    cuda_backend_close(gpu);
    gpu = NULL;
    return 0;
}

int main(void) {
    int probe = cuda_probe_or_skip();
    if (probe) return probe;
    unsigned off = LEVER_BIT(LEVER_BIAS_GRADIENT) | LEVER_BIT(LEVER_CONV_FUSED);
    int skipped = 0;
    skipped += run_pass(PRECISION_FP16, 0, "f16") == 77;
    skipped += run_pass(PRECISION_FP16, off, "f16 levers off") == 77;
    skipped += run_pass(PRECISION_BF16, 0, "bf16") == 77;
    skipped += run_pass(PRECISION_BF16, off, "bf16 levers off") == 77;
    if (skipped == 4) return 77;
    return test_exit_code("test_cuda_parity16_conv");
}
