// The CPU backend's fast convolution (im2col + BLAS, through the op table) against the
// direct loops of cpu_conv2d_reference.c, on 33 shapes: odd sizes, batch 1, strides 2 and 3,
// padding (symmetric, and pad=same's uneven split), dilation 2, groups 2 and depthwise,
// 1x1 kernels and non-square everything. Each shape runs twice: with the workspace the
// backend asks for (many samples per GEMM) and with one sample's worth (one per GEMM),
// so both the chunked and the direct-to-output paths are covered.
//
// Tolerance: an element passes when |fast - reference| <= 1e-4 * magnitude, where the
// magnitude is the same reference computed on |inputs| (the sum of the |terms| that made
// the element, plus |previous| when accumulating). That is a relative error of 1e-4
// measured against the terms summed, as in test_gemm.c: f32 accumulation over K <= 600
// terms is off by at most ~K * 6e-8 ~ 4e-5 of that (and typically ~sqrt(K) * 6e-8), while
// an off-by-one in padding, a wrong stride or a group mix-up is off by O(1). A result near
// 0 from large terms of both signs does not fail a correct convolution.
#include "check.h"
#include "conv_cases.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

#define CONV_RTOL 1e-4

static Rng rng;

static const ConvCase cases[] = {
    // n  c   h   w   f  kh kw sh sw ph pw dh dw g same bias
    CONV_CASES_BASIC,
    {2, 3, 8, 8, 6, 3, 3, 2, 2, 1, 1, 2, 2, 3, 0, 1},     // depthwise-ish, stride and dilation
    {4, 8, 6, 6, 5, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1},     // 1x1
    {3, 6, 7, 5, 4, 1, 1, 2, 2, 0, 0, 1, 1, 2, 0, 1},     // 1x1, stride 2, groups 2
    {2, 3, 6, 6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1},     // 1x1 with padding: a zero border
    CONV_CASES_EVEN_SAME,
    {2, 3, 9, 12, 4, 1, 5, 1, 2, 0, 2, 1, 1, 1, 0, 1},    // 1x5 kernel
    {2, 3, 12, 5, 4, 5, 1, 2, 1, 2, 0, 1, 1, 1, 0, 1},    // 5x1 kernel
    CONV_CASES_EDGES,
    {2, 16, 6, 6, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},   // many channels
    {1, 2, 31, 1, 3, 3, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1},    // a 1-wide column image
    {2, 4, 6, 6, 4, 2, 2, 2, 2, 0, 0, 1, 1, 2, 0, 1},     // 2x2 stride 2 (patchify), groups 2
    {2, 6, 9, 9, 6, 3, 3, 3, 3, 0, 0, 3, 3, 6, 0, 0},     // depthwise, dilation 3, stride 3
    // Large enough that im2col/col2im (first) and the gather/scatter copies (second) are
    // split across threads by cpu_parallel_for, on a machine with more than one core.
    {5, 32, 20, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1},
    {6, 8, 16, 16, 160, 3, 3, 1, 1, 1, 1, 1, 1, 2, 0, 1},
};
enum { CASE_COUNT = sizeof cases / sizeof cases[0] };

static void describe(const ConvCase *c, const Conv2dGeometry *g, char *buf, size_t size) {
    snprintf(buf, size,
             "n=%d x=%dx%dx%d filters=%d kernel=%dx%d stride=%dx%d pad=%s%dx%d dilation=%dx%d "
             "groups=%d bias=%d -> %dx%dx%d",
             c->n, c->c, c->h, c->w, c->f, c->kh, c->kw, c->sh, c->sw, c->same ? "same:" : "",
             g->pad_top, g->pad_left, c->dh, c->dw, c->groups, c->bias, c->f, g->out_h, g->out_w);
}

static float *random_floats(size_t n) {
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    return x;
}

static float *absolute(const float *x, size_t n) {
    float *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = fabsf(x[i]);
    return a;
}

// Counts elements outside the tolerance, printing the first few with the shape.
static void compare(const char *what, const char *shape, const float *fast, const float *ref,
                    const float *magnitude, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = CONV_RTOL * magnitude[i] + 1e-30;
        if (fabs((double)fast[i] - ref[i]) <= tol) continue;
        if (bad < 4)
            fprintf(stderr, "%s [%s]: element %zu: fast %.9g vs reference %.9g (diff %.3g, tol %.3g)\n",
                    what, shape, i, fast[i], ref[i], fabs((double)fast[i] - ref[i]), tol);
        bad++;
    }
    if (bad) {
        fprintf(stderr, "%s [%s]: %d of %zu elements differ\n", what, shape, bad, n);
        test_failures++;
    }
}

static void check_case(const ConvCase *c, int one_sample_workspace) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Conv2dGeometry g = conv_case_geometry(c);
    char shape[256];
    describe(c, &g, shape, sizeof shape);
    if (one_sample_workspace) snprintf(shape + strlen(shape), sizeof shape - strlen(shape), ", 1-sample workspace");
    size_t nx = (size_t)c->n * c->c * c->h * c->w;
    size_t ny = (size_t)c->n * c->f * g.out_h * g.out_w;
    size_t nw = (size_t)c->f * (c->c / c->groups) * c->kh * c->kw;
    float *x = random_floats(nx), *w = random_floats(nw), *bias = random_floats((size_t)c->f);
    float *dy = random_floats(ny);
    float *ax = absolute(x, nx), *aw = absolute(w, nw), *abias = absolute(bias, (size_t)c->f);
    float *ady = absolute(dy, ny);
    const float *use_bias = c->bias ? bias : NULL, *use_abias = c->bias ? abias : NULL;

    Conv2dGeometry sizing = g;
    if (one_sample_workspace) sizing.batch = 1;
    size_t bytes = 0;
    CHECK_INT_EQ(b->conv2d_workspace_size(b, &sizing, &bytes, &st), 0);
    void *workspace = malloc(bytes ? bytes : 1);

    // Forward.
    float *y = malloc(ny * sizeof *y), *y_ref = malloc(ny * sizeof *y_ref), *y_mag = malloc(ny * sizeof *y_mag);
    for (size_t i = 0; i < ny; i++) y[i] = NAN;  // every element must be written
    CHECK_INT_EQ(b->conv2d_forward(b, &g, &(Conv2dForwardTensors){.x = x, .w = w, .bias = use_bias,
                                   .y = y, .workspace = workspace, .workspace_bytes = bytes}, &st),
                                       0);
    conv2d_reference_forward(&g, x, w, use_bias, y_ref);
    conv2d_reference_forward(&g, ax, aw, use_abias, y_mag);
    compare("conv2d_forward", shape, y, y_ref, y_mag, ny);

    // Backward data, overwriting (dx starts as NaN) and accumulating onto `previous`.
    float *previous = random_floats(nx), *aprevious = absolute(previous, nx);
    float *dx = malloc(nx * sizeof *dx), *dx_ref = malloc(nx * sizeof *dx_ref), *dx_mag = malloc(nx * sizeof *dx_mag);
    for (size_t i = 0; i < nx; i++) dx[i] = NAN;
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g, &(Conv2dBackwardDataTensors){.dy = dy, .w = w,
                                         .dx = dx, .workspace = workspace,
                                         .workspace_bytes = bytes, .accumulate = 0}, &st), 0);
    conv2d_reference_backward_data(&g, dy, w, dx_ref, 0);
    conv2d_reference_backward_data(&g, ady, aw, dx_mag, 0);
    compare("conv2d_backward_data", shape, dx, dx_ref, dx_mag, nx);
    memcpy(dx, previous, nx * sizeof *dx);
    memcpy(dx_ref, previous, nx * sizeof *dx_ref);
    memcpy(dx_mag, aprevious, nx * sizeof *dx_mag);
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g, &(Conv2dBackwardDataTensors){.dy = dy, .w = w,
                                         .dx = dx, .workspace = workspace,
                                         .workspace_bytes = bytes, .accumulate = 1}, &st), 0);
    conv2d_reference_backward_data(&g, dy, w, dx_ref, 1);
    conv2d_reference_backward_data(&g, ady, aw, dx_mag, 1);
    compare("conv2d_backward_data accumulate", shape, dx, dx_ref, dx_mag, nx);

    // Backward filter (and bias), likewise.
    float *dw = malloc(nw * sizeof *dw), *dw_ref = malloc(nw * sizeof *dw_ref), *dw_mag = malloc(nw * sizeof *dw_mag);
    float *db = malloc((size_t)c->f * sizeof *db), *db_ref = malloc((size_t)c->f * sizeof *db_ref);
    float *db_mag = malloc((size_t)c->f * sizeof *db_mag);
    for (size_t i = 0; i < nw; i++) dw[i] = NAN;
    for (int i = 0; i < c->f; i++) db[i] = NAN;
    float *use_db = c->bias ? db : NULL;
    CHECK_INT_EQ(b->conv2d_backward_filter(b, &g, &(Conv2dBackwardFilterTensors){.x = x, .dy = dy,
                                           .dw = dw, .dbias = use_db, .workspace = workspace,
                                           .workspace_bytes = bytes, .accumulate = 0}, &st), 0);
    conv2d_reference_backward_filter(&g, x, dy, dw_ref, db_ref, 0);
    conv2d_reference_backward_filter(&g, ax, ady, dw_mag, db_mag, 0);
    compare("conv2d_backward_filter", shape, dw, dw_ref, dw_mag, nw);
    if (c->bias) compare("conv2d_backward_filter bias", shape, db, db_ref, db_mag, (size_t)c->f);
    float *wprev = random_floats(nw), *bprev = random_floats((size_t)c->f);
    memcpy(dw, wprev, nw * sizeof *dw);
    memcpy(dw_ref, wprev, nw * sizeof *dw);
    memcpy(db, bprev, (size_t)c->f * sizeof *db);
    memcpy(db_ref, bprev, (size_t)c->f * sizeof *db);
    for (size_t i = 0; i < nw; i++) dw_mag[i] = fabsf(wprev[i]);
    for (int i = 0; i < c->f; i++) db_mag[i] = fabsf(bprev[i]);
    CHECK_INT_EQ(b->conv2d_backward_filter(b, &g, &(Conv2dBackwardFilterTensors){.x = x, .dy = dy,
                                           .dw = dw, .dbias = use_db, .workspace = workspace,
                                           .workspace_bytes = bytes, .accumulate = 1}, &st), 0);
    conv2d_reference_backward_filter(&g, x, dy, dw_ref, db_ref, 1);
    conv2d_reference_backward_filter(&g, ax, ady, dw_mag, db_mag, 1);
    compare("conv2d_backward_filter accumulate", shape, dw, dw_ref, dw_mag, nw);
    if (c->bias) compare("conv2d_backward_filter bias accumulate", shape, db, db_ref, db_mag, (size_t)c->f);

    free(x), free(w), free(bias), free(dy), free(ax), free(aw), free(abias), free(ady);
    free(workspace), free(y), free(y_ref), free(y_mag), free(previous), free(aprevious);
    free(dx), free(dx_ref), free(dx_mag), free(dw), free(dw_ref), free(dw_mag);
    free(db), free(db_ref), free(db_mag), free(wprev), free(bprev);
}

static void fast_conv_matches_reference_on_random_shapes(void) {
    for (int i = 0; i < CASE_COUNT; i++) {
        check_case(&cases[i], 0);
        check_case(&cases[i], 1);
    }
}

// The hand-checkable case: a 3x3 box filter of ones over a 4x4 ramp with pad 1, so every
// output is the sum of the in-range neighbours; the reference is checked against
// arithmetic done here, so a shared misunderstanding of padding cannot pass unseen.
static void box_filter_matches_hand_computation(void) {
    Conv2dGeometry g = {.batch = 1, .in_channels = 1, .in_h = 4, .in_w = 4, .out_channels = 1,
                        .out_h = 4, .out_w = 4, .kernel_h = 3, .kernel_w = 3, .stride_h = 1,
                        .stride_w = 1, .pad_top = 1, .pad_left = 1, .dilation_h = 1,
                        .dilation_w = 1, .groups = 1};
    float x[16], w[9], bias = 0.5f, y[16], y_ref[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    for (int i = 0; i < 9; i++) w[i] = 1.0f;
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    size_t bytes = 0;
    CHECK_INT_EQ(b->conv2d_workspace_size(b, &g, &bytes, &st), 0);
    void *workspace = malloc(bytes);
    CHECK_INT_EQ(b->conv2d_forward(b, &g, &(Conv2dForwardTensors){.x = x, .w = w, .bias = &bias,
                                   .y = y, .workspace = workspace, .workspace_bytes = bytes}, &st),
                                       0);
    conv2d_reference_forward(&g, x, w, &bias, y_ref);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double want = bias;
            for (int i = r - 1; i <= r + 1; i++)
                for (int j = c - 1; j <= c + 1; j++)
                    if (i >= 0 && i < 4 && j >= 0 && j < 4) want += x[i * 4 + j];
            CHECK_NEAR(y[r * 4 + c], want, 1e-5);
            CHECK_NEAR(y_ref[r * 4 + c], want, 1e-5);
        }
    // Too little workspace is an error, not an overrun.
    CHECK_INT_EQ(b->conv2d_forward(b, &g, &(Conv2dForwardTensors){.x = x, .w = w, .bias = &bias,
                                   .y = y, .workspace = workspace, .workspace_bytes = bytes - 1},
                                   &st), STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "workspace");
    free(workspace);
}

int main(void) {
    rng_seed(&rng, 2024);
    box_filter_matches_hand_computation();
    fast_conv_matches_reference_on_random_shapes();
    return test_exit_code("test_conv");
}
