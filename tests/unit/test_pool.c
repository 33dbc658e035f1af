// Pooling: the CPU ops against a hand computation and against the definition written out
// here on random shapes, the accumulate flag, and the graph builder's shape rule and
// errors for maxpool, avgpool and global_avgpool.
#include "check.h"
#include "core/graph.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

static Rng rng;

static Pool2dGeometry pool_geometry(int n, int c, int h, int w, int kh, int kw, int sh, int sw,
                                    int ph, int pw) {
    return (Pool2dGeometry){.batch = n, .channels = c, .in_h = h, .in_w = w,
                            .out_h = (h + 2 * ph - kh) / sh + 1, .out_w = (w + 2 * pw - kw) / sw + 1,
                            .kernel_h = kh, .kernel_w = kw, .stride_h = sh, .stride_w = sw,
                            .pad_top = ph, .pad_left = pw};
}

// 4x4 ramp, 2x2 windows: each output is its window's bottom-right value (the largest) and
// the mean of the four; backward puts each dy at that position, or a quarter everywhere.
static void pools_match_hand_computation(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Pool2dGeometry g = pool_geometry(1, 1, 4, 4, 2, 2, 2, 2, 0, 0);
    float x[16], y[4], dy[4] = {1.0f, 2.0f, 3.0f, 4.0f}, dx[16];
    int32_t argmax[4];
    for (int i = 0; i < 16; i++) x[i] = (float)i;
    CHECK_INT_EQ(b->maxpool_forward(b, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                    .y = y, .argmax = argmax}, &st), 0);
    const float want_max[4] = {5, 7, 13, 15};
    const int32_t want_arg[4] = {5, 7, 13, 15};
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(y[i], want_max[i], 0.0);
        CHECK_INT_EQ(argmax[i], want_arg[i]);
    }
    CHECK_INT_EQ(b->maxpool_backward(b, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
                                     .argmax = argmax, .dx = dx, .accumulate = 0}, &st), 0);
    for (int i = 0; i < 16; i++) {
        double want = i == 5 ? 1 : i == 7 ? 2 : i == 13 ? 3 : i == 15 ? 4 : 0;
        CHECK_NEAR(dx[i], want, 0.0);
    }
    CHECK_INT_EQ(b->avgpool_forward(b, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                    .y = y}, &st), 0);
    const float want_avg[4] = {2.5f, 4.5f, 10.5f, 12.5f};
    for (int i = 0; i < 4; i++) CHECK_NEAR(y[i], want_avg[i], 1e-6);
    CHECK_INT_EQ(b->avgpool_backward(b, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32, .dy = dy,
                                     .dx = dx, .accumulate = 0}, &st), 0);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) CHECK_NEAR(dx[r * 4 + c], dy[(r / 2) * 2 + c / 2] / 4.0, 1e-7);

    // Padding: a 3x3 window with pad 1 at the corner of an all-ones 2x2 image sees four
    // ones and five zeros of padding; the average divides by 9 (count_include_pad).
    Pool2dGeometry padded = pool_geometry(1, 1, 2, 2, 3, 3, 1, 1, 1, 1);
    float ones[4] = {1, 1, 1, 1}, out[4];
    CHECK_INT_EQ(b->avgpool_forward(b, &padded, &(AvgpoolForwardTensors){.dtype = DTYPE_F32,
                                    .x = ones, .y = out}, &st), 0);
    for (int i = 0; i < 4; i++) CHECK_NEAR(out[i], 4.0 / 9.0, 1e-6);
    // ... while max ignores the padding even when every value is negative.
    float negative[4] = {-4, -3, -2, -1};
    int32_t arg[4];
    CHECK_INT_EQ(b->maxpool_forward(b, &padded, &(MaxpoolForwardTensors){.dtype = DTYPE_F32,
                                    .x = negative, .y = out, .argmax = arg}, &st), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(out[i], -1.0, 0.0);
        CHECK_INT_EQ(arg[i], 3);
    }
    // A NaN wins its window, as in PyTorch, so it is not hidden from the loss.
    float with_nan[16];
    memcpy(with_nan, x, sizeof with_nan);
    with_nan[0] = NAN;
    CHECK_INT_EQ(b->maxpool_forward(b, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32,
                                    .x = with_nan, .y = y, .argmax = argmax}, &st), 0);
    CHECK(isnan(y[0]));
    CHECK_INT_EQ(argmax[0], 0);
}

// The definition: every window position, padding as -inf (max) or 0 (average over the
// full window).
static void pool_definition(const Pool2dGeometry *g, const float *x, float *ymax, int32_t *arg,
                            float *yavg) {
    for (int p = 0; p < g->batch * g->channels; p++)
        for (int oh = 0; oh < g->out_h; oh++)
            for (int ow = 0; ow < g->out_w; ow++) {
                float best = -INFINITY;
                int32_t best_at = -1;
                double sum = 0.0;
                for (int i = 0; i < g->kernel_h; i++)
                    for (int j = 0; j < g->kernel_w; j++) {
                        int ih = oh * g->stride_h - g->pad_top + i, iw = ow * g->stride_w - g->pad_left + j;
                        if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w) continue;
                        float v = x[(size_t)p * g->in_h * g->in_w + ih * g->in_w + iw];
                        sum += v;
                        if (v > best) best = v, best_at = ih * g->in_w + iw;
                    }
                size_t o = (size_t)p * g->out_h * g->out_w + oh * g->out_w + ow;
                ymax[o] = best;
                arg[o] = best_at;
                yavg[o] = (float)(sum / (g->kernel_h * g->kernel_w));
            }
}

static void pools_match_definition_on_random_shapes(void) {
    static const int shapes[][10] = {
        // n c  h  w kh kw sh sw ph pw
        {2, 3, 8, 8, 2, 2, 2, 2, 0, 0},
        {1, 1, 7, 7, 2, 2, 2, 2, 0, 0},   // odd input: the last row and column are dropped
        {3, 2, 9, 7, 3, 3, 2, 2, 1, 1},   // overlapping, padded
        {2, 2, 6, 10, 2, 3, 1, 2, 1, 1},  // non-square
        {1, 4, 5, 5, 5, 5, 1, 1, 2, 2},   // window = image, pad 2
        {2, 1, 11, 4, 3, 1, 3, 1, 0, 0},  // 3x1 windows, stride 3
        {5, 2, 4, 4, 4, 4, 1, 1, 0, 0},   // global: one window
        {1, 3, 13, 9, 3, 2, 1, 1, 1, 1},  // stride 1, pad on both
    };
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int *d = shapes[s];
        Pool2dGeometry g = pool_geometry(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9]);
        size_t nx = (size_t)g.batch * g.channels * g.in_h * g.in_w;
        size_t ny = (size_t)g.batch * g.channels * g.out_h * g.out_w;
        float *x = malloc(nx * sizeof *x), *ymax = malloc(ny * sizeof *ymax);
        float *yavg = malloc(ny * sizeof *yavg), *want_max = malloc(ny * sizeof *want_max);
        float *want_avg = malloc(ny * sizeof *want_avg), *dy = malloc(ny * sizeof *dy);
        float *dx = malloc(nx * sizeof *dx), *want_dx = malloc(nx * sizeof *want_dx);
        int32_t *arg = malloc(ny * sizeof *arg), *want_arg = malloc(ny * sizeof *want_arg);
        for (size_t i = 0; i < nx; i++) x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
        for (size_t i = 0; i < ny; i++) dy[i] = 2.0f * rng_uniform(&rng) - 1.0f;
        pool_definition(&g, x, want_max, want_arg, want_avg);
        CHECK_INT_EQ(b->maxpool_forward(b, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                        .y = ymax, .argmax = arg}, &st), 0);
        CHECK_INT_EQ(b->avgpool_forward(b, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                        .y = yavg}, &st), 0);
        int bad = 0;
        for (size_t i = 0; i < ny; i++)
            if (ymax[i] != want_max[i] || arg[i] != want_arg[i] || fabsf(yavg[i] - want_avg[i]) > 1e-6f) {
                if (bad++ < 3)
                    fprintf(stderr, "shape %zu output %zu: max %g (arg %d) avg %g, want %g (arg %d) avg %g\n",
                            s, i, ymax[i], arg[i], yavg[i], want_max[i], want_arg[i], want_avg[i]);
            }
        // Backward, accumulating onto 1.0 everywhere: dx - 1 is the routed/spread gradient.
        for (size_t i = 0; i < nx; i++) dx[i] = 1.0f, want_dx[i] = 1.0f;
        CHECK_INT_EQ(b->maxpool_backward(b, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32,
                                         .dy = dy, .argmax = arg, .dx = dx, .accumulate = 1}, &st),
                                             0);
        size_t plane_in = (size_t)g.in_h * g.in_w, plane_out = (size_t)g.out_h * g.out_w;
        for (size_t i = 0; i < ny; i++) want_dx[(i / plane_out) * plane_in + (size_t)want_arg[i]] += dy[i];
        for (size_t i = 0; i < nx; i++)
            if (fabsf(dx[i] - want_dx[i]) > 1e-6f && bad++ < 3)
                fprintf(stderr, "shape %zu: maxpool dx[%zu] = %g, want %g\n", s, i, dx[i], want_dx[i]);
        // avgpool backward is the adjoint of forward: <avg(x), dy> = <x, avg^T(dy)>.
        CHECK_INT_EQ(b->avgpool_backward(b, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32,
                                         .dy = dy, .dx = dx, .accumulate = 0}, &st), 0);
        double lhs = 0.0, rhs = 0.0;
        for (size_t i = 0; i < ny; i++) lhs += (double)yavg[i] * dy[i];
        for (size_t i = 0; i < nx; i++) rhs += (double)x[i] * dx[i];
        if (fabs(lhs - rhs) > 1e-5 * (1.0 + fabs(lhs)) && bad++ < 3)
            fprintf(stderr, "shape %zu: avgpool backward is not forward's adjoint: %g vs %g\n", s, lhs, rhs);
        if (bad) test_failures++;
        free(x), free(ymax), free(yavg), free(want_max), free(want_avg), free(dy), free(dx);
        free(want_dx), free(arg), free(want_arg);
    }
}

// ---- the layers at graph build ------------------------------------------------------------

static int build(const char *text, Graph *g, Status *st) {
    ModelFile f;
    status_clear(st);
    int rc = model_file_parse_text("pool.model", text, &f, st);
    if (!rc) rc = graph_build(&f, g, NULL, st);
    model_file_free(&f);
    return rc;
}

static void expect_shape(const char *text, const char *layer, const char *want) {
    Graph g;
    Status st;
    if (build(text, &g, &st)) {
        fprintf(stderr, "build failed: %s (%s)\n", st.message, st.hint);
        test_failures++;
        return;
    }
    char shape[64] = "(no such layer)";
    for (int i = 0; i < g.count; i++)
        if (strcmp(g.layers[i]->name, layer) == 0) shape_format(&g.layers[i]->out_shape, shape, sizeof shape);
    if (strcmp(shape, want) != 0) {
        fprintf(stderr, "%s: %s gives %s, want %s\n", text, layer, shape, want);
        test_failures++;
    }
    graph_free(&g);
}

static void expect_error(const char *text, int line, int column, const char *message, const char *hint) {
    Graph g;
    Status st;
    int rc = build(text, &g, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    if (!rc) {
        graph_free(&g);
        return;
    }
    CHECK_INT_EQ(st.line, line);
    CHECK_INT_EQ(st.column, column);
    CHECK_CONTAINS(st.message, message);
    CHECK_CONTAINS(st.hint, hint);
}

static void pool_layers_infer_shapes(void) {
    expect_shape("input shape=3x28x28\nmaxpool\nflatten\ndense units=2\nloss mse\n", "maxpool1", "3x14x14");
    expect_shape("input shape=3x7x7\nmaxpool size=2\nflatten\ndense units=2\nloss mse\n", "maxpool1", "3x3x3");
    expect_shape("input shape=1x7x7\navgpool size=3 stride=2 pad=1\nflatten\ndense units=2\nloss mse\n", "avgpool1", "1x4x4");
    expect_shape("input shape=2x6x9\nmaxpool size=2x3\nflatten\ndense units=2\nloss mse\n", "maxpool1", "2x3x3");
    expect_shape("input shape=2x6x9\nmaxpool size=2 stride=1x3\nflatten\ndense units=2\nloss mse\n", "maxpool1", "2x5x3");
    expect_shape("input shape=5x3x4\nglobal_avgpool\ndense units=2\nloss mse\n", "global_avgpool1", "5");
}

static void pool_layers_reject_bad_settings(void) {
    expect_error("input shape=1x4x4\nmaxpool size=3 pad=2\nflatten\ndense units=2\nloss mse\n", 2, 20,
                 "pad=2 is more than half of size=3", "at most half the window");
    expect_error("input shape=8x3x3\nmaxpool size=2\nmaxpool size=2\nflatten\ndense units=2\nloss mse\n", 3, 9,
                 "maxpool size 2x2 is larger than the padded input 1x1 (input 8x1x1 from 'maxpool1', pad=0)",
                 "smaller size=");
    expect_error("input shape=784\navgpool\ndense units=2\nloss mse\n", 2, 1,
                 "avgpool needs a CxHxW input, but 'input1' gives 784", "input shape=1x28x28");
    expect_error("input shape=1x4x4\nflatten\nglobal_avgpool\ndense units=2\nloss mse\n", 3, 1,
                 "global_avgpool needs a CxHxW input, but 'flatten1' gives 16", "1x4x4");
    expect_error("input shape=1x4x4\nmaxpool size=0\nflatten\ndense units=2\nloss mse\n", 2, 14,
                 "size=0", "");
    expect_error("input shape=1x4x4\nmaxpool size=2x\nflatten\ndense units=2\nloss mse\n", 2, 14,
                 "size=2x is not a size", "HxW");
    expect_error("input shape=1x4x4\nmaxpool sise=2\nflatten\ndense units=2\nloss mse\n", 2, 9,
                 "did you mean 'size'", "");
}

int main(void) {
    rng_seed(&rng, 77);
    pools_match_hand_computation();
    pools_match_definition_on_random_shapes();
    pool_layers_infer_shapes();
    pool_layers_reject_bad_settings();
    return test_exit_code("test_pool");
}
