// `trainer bench conv`: the backend's three convolution ops (forward, backward-data,
// backward-filter) on the shapes of the bundled models and of ResNet's 3x3 stages, in
// TFLOP/s beside the peak, with the algorithm the backend chose for each: on a GPU the
// cuDNN algorithm cuda_conv2d.cu's plan picked for the workspace it was given (or its
// direct kernels), on the CPU im2col onto OpenBLAS's sgemm.
#include "diagnostics/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_backend.h"

static const double CONV_REPEAT_MS = 20.0;
enum { CONV_MAX_PER_REPEAT = 1000, CONV_MAX_SETS = 8 };

#define SHAPE(label, c, hw, k, kernel, pad)                                                   \
    {label, {.in_channels = c, .in_h = hw, .in_w = hw, .out_channels = k, .out_h = hw,        \
             .out_w = hw, .kernel_h = kernel, .kernel_w = kernel, .stride_h = 1,              \
             .stride_w = 1, .pad_top = pad, .pad_left = pad, .dilation_h = 1,                 \
             .dilation_w = 1, .groups = 1}}
// models/lenet.model's two convolutions, and the 3x3 convolution of each of ResNet-18/34's
// four stages at 224x224 inputs (channels 64..512, 56x56 down to 7x7).
const BenchConvShape bench_conv_shapes[] = {
    SHAPE("lenet conv1 1->32 5x5 28x28", 1, 28, 32, 5, 2),
    SHAPE("lenet conv2 32->64 5x5 14x14", 32, 14, 64, 5, 2),
    SHAPE("resnet 64->64 3x3 56x56", 64, 56, 64, 3, 1),
    SHAPE("resnet 128->128 3x3 28x28", 128, 28, 128, 3, 1),
    SHAPE("resnet 256->256 3x3 14x14", 256, 14, 256, 3, 1),
    SHAPE("resnet 512->512 3x3 7x7", 512, 7, 512, 3, 1),
};
const int bench_conv_shape_count = sizeof bench_conv_shapes / sizeof bench_conv_shapes[0];

static const char *const op_names[BENCH_CONV_OP_COUNT] = {"forward", "backward-data",
                                                          "backward-filter"};

const char *bench_conv_op_name(BenchConvOp op) {
    return op >= 0 && op < BENCH_CONV_OP_COUNT ? op_names[op] : "?";
}

static size_t activation_floats(const Conv2dGeometry *g, int output) {
    return (size_t)g->batch * (output ? (size_t)g->out_channels * g->out_h * g->out_w
                                      : (size_t)g->in_channels * g->in_h * g->in_w);
}

static size_t weight_floats(const Conv2dGeometry *g) {
    return (size_t)g->out_channels * (g->in_channels / g->groups) * g->kernel_h * g->kernel_w;
}

// Multiply-adds of each op, times 2: forward, backward-data and backward-filter each do
// one per (output element, tap, input channel of its group).
static double conv_flops(const Conv2dGeometry *g) {
    return 2.0 * (double)activation_floats(g, 1) * (double)(g->in_channels / g->groups) *
           g->kernel_h * g->kernel_w;
}

// Per set: x, y, dy, dx (what changes from sample to sample); w, dw, bias, dbias and the
// workspace are shared, as in a training step.
typedef struct ConvBuffers {
    Allocator *alloc;
    float *x[CONV_MAX_SETS], *y[CONV_MAX_SETS], *dy[CONV_MAX_SETS], *dx[CONV_MAX_SETS];
    float *w, *dw, *bias, *dbias;
    void *workspace;
    size_t workspace_bytes;
    int sets;
} ConvBuffers;

static void put(Allocator *a, void *p) {
    if (p) alloc_put(a, p);
}

static void buffers_free(ConvBuffers *c) {
    for (int i = 0; i < CONV_MAX_SETS; i++) {
        put(c->alloc, c->x[i]);
        put(c->alloc, c->y[i]);
        put(c->alloc, c->dy[i]);
        put(c->alloc, c->dx[i]);
    }
    put(c->alloc, c->w);
    put(c->alloc, c->dw);
    put(c->alloc, c->bias);
    put(c->alloc, c->dbias);
    put(c->alloc, c->workspace);
    alloc_release_cache(c->alloc);
}

static int get_filled(Device *d, float **x, size_t n, float value, Status *st) {
    TRY(alloc_get(&d->alloc, n * sizeof **x, (void **)x, st));
    return d->backend->fill(d->backend, *x, value, n, st);
}

static int buffers_alloc(Device *d, const Conv2dGeometry *g, int sets, ConvBuffers *c,
                         Status *st) {
    const Backend *b = d->backend;
    memset(c, 0, sizeof *c);
    c->alloc = &d->alloc;
    c->sets = sets;
    size_t in = activation_floats(g, 0), out = activation_floats(g, 1);
    for (int i = 0; i < sets; i++) {
        // Small nonzero values: a convolution's speed does not depend on them, but zeros
        // could let a kernel skip work.
        TRY(get_filled(d, &c->x[i], in, 0.5f + 0.01f * i, st));
        TRY(get_filled(d, &c->dx[i], in, 0.0f, st));
        TRY(get_filled(d, &c->y[i], out, 0.0f, st));
        TRY(get_filled(d, &c->dy[i], out, 0.25f, st));
    }
    TRY(get_filled(d, &c->w, weight_floats(g), 0.125f, st));
    TRY(get_filled(d, &c->dw, weight_floats(g), 0.0f, st));
    TRY(get_filled(d, &c->bias, (size_t)g->out_channels, 0.0f, st));
    TRY(get_filled(d, &c->dbias, (size_t)g->out_channels, 0.0f, st));
    TRY(b->conv2d_workspace_size(b, g, &c->workspace_bytes, st));
    if (c->workspace_bytes) TRY(alloc_get(&d->alloc, c->workspace_bytes, &c->workspace, st));
    return 0;
}

static int run_op(const Backend *b, const Conv2dGeometry *g, BenchConvOp op,
                  const ConvBuffers *c, int set, Status *st) {
    switch (op) {
    case BENCH_CONV_FORWARD:
        return b->conv2d_forward(b, g, c->x[set], c->w, c->bias, c->y[set], c->workspace,
                                 c->workspace_bytes, st);
    case BENCH_CONV_BACKWARD_DATA:
        return b->conv2d_backward_data(b, g, c->dy[set], c->w, c->dx[set], c->workspace,
                                       c->workspace_bytes, 0, st);
    default:
        return b->conv2d_backward_filter(b, g, c->x[set], c->dy[set], c->dw, c->dbias,
                                         c->workspace, c->workspace_bytes, 0, st);
    }
}

static int measure(const Backend *b, const BenchOptions *o, BenchConvRow *row,
                   const ConvBuffers *c, Status *st) {
    BenchTimer timer;
    TRY(bench_timer_open(b, &timer, st));
    const Conv2dGeometry *g = &row->geometry;
    int rc = 0, next = 0;
    for (int i = 0; !rc && i < o->warmup; i++, next++)
        rc = run_op(b, g, row->op, c, next % c->sets, st);
    double one_ms = 0.0;
    if (!rc) rc = bench_timer_start(&timer, st);
    if (!rc) rc = run_op(b, g, row->op, c, next++ % c->sets, st);
    if (!rc) rc = bench_timer_stop(&timer, &one_ms, st);
    double per = one_ms > 0.0 ? ceil(CONV_REPEAT_MS / one_ms) : CONV_MAX_PER_REPEAT;
    int per_repeat = per < 1.0 ? 1 : per > CONV_MAX_PER_REPEAT ? CONV_MAX_PER_REPEAT : (int)per;
    double ms[BENCH_MAX_REPEATS];
    bench_range_push(b, "bench conv %s %s", row->shape, bench_conv_op_name(row->op));
    for (int r = 0; !rc && r < o->repeats; r++) {
        rc = bench_timer_start(&timer, st);
        for (int i = 0; !rc && i < per_repeat; i++, next++)
            rc = run_op(b, g, row->op, c, next % c->sets, st);
        if (!rc) rc = bench_timer_stop(&timer, &ms[r], st);
        if (!rc) ms[r] /= per_repeat;
    }
    bench_range_pop(b);
    bench_timer_close(&timer);
    if (rc) return rc;
    row->median_ms = bench_median(ms, o->repeats);
    if (row->median_ms <= 0.0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "conv %s %s: the timer measured %g ms",
                           row->shape, bench_conv_op_name(row->op), row->median_ms);
    row->tflops = conv_flops(g) / (row->median_ms * 1e-3) / 1e12;
    return 0;
}

// cuda_conv2d_describe's line, "forward ALGO (MATH, N bytes), backward-data ...,
// backward-filter ...", cut into each op's part without its label.
static void split_algorithms(const char *line, char out[BENCH_CONV_OP_COUNT][160]) {
    const char *starts[BENCH_CONV_OP_COUNT];
    for (int op = 0; op < BENCH_CONV_OP_COUNT; op++) {
        char label[32];
        snprintf(label, sizeof label, "%s%s ", op ? ", " : "", op_names[op]);
        starts[op] = op ? strstr(line, label) : (strncmp(line, label, strlen(label)) ? NULL : line);
    }
    for (int op = 0; op < BENCH_CONV_OP_COUNT; op++) {
        if (!starts[op]) {
            snprintf(out[op], 160, "%.159s", line);  // a line of another form: all of it
            continue;
        }
        const char *text = starts[op] + strlen(op_names[op]) + (op ? 3 : 1);
        const char *end = op + 1 < BENCH_CONV_OP_COUNT && starts[op + 1] ? starts[op + 1]
                                                                          : text + strlen(text);
        snprintf(out[op], 160, "%.*s", (int)(end - text), text);
    }
}

static int describe_algorithms(const Backend *b, const Conv2dGeometry *g, size_t workspace,
                               char out[BENCH_CONV_OP_COUNT][160], Status *st) {
    if (b->kind != BACKEND_CUDA) {
        for (int op = 0; op < BENCH_CONV_OP_COUNT; op++)
            snprintf(out[op], 160, "im2col + OpenBLAS sgemm");
        return 0;
    }
    char line[512];
    TRY(cuda_conv2d_describe(b, g, workspace, line, sizeof line, st));
    split_algorithms(line, out);
    return 0;
}

static int measure_shape(Device *d, const BenchDevice *dev, const BenchOptions *o,
                         const BenchConvShape *shape, int batch, BenchConvReport *out,
                         Status *st) {
    Conv2dGeometry g = shape->geometry;
    g.batch = batch;
    size_t set_bytes = 2 * (activation_floats(&g, 0) + activation_floats(&g, 1)) * sizeof(float);
    int sets = bench_input_sets(dev, set_bytes, CONV_MAX_SETS);
    int tf32 = dev->is_gpu && dev->gpu.compute_major >= 8 && !o->no_tf32;
    ConvBuffers c;
    int rc = buffers_alloc(d, &g, sets, &c, st);
    char algorithms[BENCH_CONV_OP_COUNT][160];
    if (!rc) rc = describe_algorithms(d->backend, &g, c.workspace_bytes, algorithms, st);
    for (int op = 0; !rc && op < BENCH_CONV_OP_COUNT; op++) {
        BenchConvRow *row = &out->rows[out->row_count++];
        row->shape = shape->name;
        row->geometry = g;
        row->op = (BenchConvOp)op;
        row->precision = tf32 ? BENCH_TF32 : BENCH_FP32;
        row->peak_tflops = dev->peak_tflops[row->precision];
        row->workspace_bytes = c.workspace_bytes;
        row->input_sets = sets;
        snprintf(row->algorithm, sizeof row->algorithm, "%.159s", algorithms[op]);
        bench_progress(o, "conv %s %s", shape->name, op_names[op]);
        rc = measure(d->backend, o, row, &c, st);
    }
    buffers_free(&c);
    if (rc) status_prefix(st, "conv %s, batch %d: ", shape->name, batch);
    return rc;
}

int bench_conv(Device *d, const BenchDevice *dev, const BenchOptions *o, int batch,
               BenchConvReport *out, Status *st) {
    memset(out, 0, sizeof *out);
    out->batch = batch;
    for (int i = 0; i < bench_conv_shape_count; i++)
        TRY(measure_shape(d, dev, o, &bench_conv_shapes[i], batch, out, st));
    return 0;
}
