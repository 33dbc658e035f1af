// `trainer bench conv`: the backend's three convolution ops (forward, backward-data,
// backward-filter) on the shapes of the bundled models and of ResNet's 3x3 stages, in
// TFLOP/s beside the peak, with the algorithm the backend chose for each: on a GPU the
// cuDNN algorithm cuda_conv2d.cu's plan picked for the workspace it was given (or its
// direct kernels), on the CPU im2col onto OpenBLAS's sgemm. Each shape and op runs in
// three storages, as training does under --precision fp32|tf32, bf16 and fp16: f32 data
// (fp32 or TF32 math), and bf16 and f16 data (Conv2dGeometry.dtype) with f32 sums; the
// plan, and so the algorithm, is the dtype's own.
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

static size_t activation_values(const Conv2dGeometry *g, int output) {
    return (size_t)g->batch * (output ? (size_t)g->out_channels * g->out_h * g->out_w
                                      : (size_t)g->in_channels * g->in_h * g->in_w);
}

static size_t weight_values(const Conv2dGeometry *g) {
    return (size_t)g->out_channels * (g->in_channels / g->groups) * g->kernel_h * g->kernel_w;
}

// Multiply-adds of each op, times 2: forward, backward-data and backward-filter each do
// one per (output element, tap, input channel of its group).
static double conv_flops(const Conv2dGeometry *g) {
    return 2.0 * (double)activation_values(g, 1) * (double)(g->in_channels / g->groups) *
           g->kernel_h * g->kernel_w;
}

// Per set: x, y, dy, dx (what changes from sample to sample); w, dw, bias, dbias and the
// workspace are shared, as in a training step. x, y, dy, dx and w are stored as the
// geometry's dtype; bias, dw and dbias are f32 in every storage, as the conv ops take them.
typedef struct ConvBuffers {
    Allocator *alloc;
    void *x[CONV_MAX_SETS], *y[CONV_MAX_SETS], *dy[CONV_MAX_SETS], *dx[CONV_MAX_SETS];
    void *w;
    float *dw, *bias, *dbias;
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

// n values stored as `dtype` at a new *x, each `value` rounded once to it: 16-bit ones are
// filled in an f32 buffer and converted, so that every backend fills them through its op
// table alone.
static int get_filled(Device *d, DType dtype, void **x, size_t n, float value, Status *st) {
    const Backend *b = d->backend;
    TRY(alloc_get(&d->alloc, n * dtype_size(dtype), x, st));
    if (dtype == DTYPE_F32) return b->fill(b, *x, value, n, st);
    void *wide = NULL;
    TRY(alloc_get(&d->alloc, n * sizeof(float), &wide, st));
    int rc = b->fill(b, wide, value, n, st);
    if (!rc) rc = b->convert(b, &(ConvertArgs){.src = wide, .src_dtype = DTYPE_F32, .dst = *x,
                             .dst_dtype = dtype, .n = n, .accumulate = 0}, st);
    alloc_put(&d->alloc, wide);  // stream-ordered after the convert that reads it
    return rc;
}

static int get_filled_f32(Device *d, float **x, size_t n, float value, Status *st) {
    void *p = NULL;
    int rc = get_filled(d, DTYPE_F32, &p, n, value, st);
    *x = p;
    return rc;
}

static int buffers_alloc(Device *d, const Conv2dGeometry *g, int sets, ConvBuffers *c,
                         Status *st) {
    const Backend *b = d->backend;
    memset(c, 0, sizeof *c);
    c->alloc = &d->alloc;
    c->sets = sets;
    size_t in = activation_values(g, 0), out = activation_values(g, 1);
    for (int i = 0; i < sets; i++) {
        // Small nonzero values: a convolution's speed does not depend on them, but zeros
        // could let a kernel skip work. Each is exact in bf16 and f16 too.
        TRY(get_filled(d, g->dtype, &c->x[i], in, 0.5f + 0.0078125f * i, st));
        TRY(get_filled(d, g->dtype, &c->dx[i], in, 0.0f, st));
        TRY(get_filled(d, g->dtype, &c->y[i], out, 0.0f, st));
        TRY(get_filled(d, g->dtype, &c->dy[i], out, 0.25f, st));
    }
    TRY(get_filled(d, g->dtype, &c->w, weight_values(g), 0.125f, st));
    TRY(get_filled_f32(d, &c->dw, weight_values(g), 0.0f, st));
    TRY(get_filled_f32(d, &c->bias, (size_t)g->out_channels, 0.0f, st));
    TRY(get_filled_f32(d, &c->dbias, (size_t)g->out_channels, 0.0f, st));
    TRY(b->conv2d_workspace_size(b, g, &c->workspace_bytes, st));
    if (c->workspace_bytes) TRY(alloc_get(&d->alloc, c->workspace_bytes, &c->workspace, st));
    return 0;
}

static int run_op(const Backend *b, const Conv2dGeometry *g, BenchConvOp op,
                  const ConvBuffers *c, int set, Status *st) {
    switch (op) {
    case BENCH_CONV_FORWARD:
        return b->conv2d_forward(b, g, &(Conv2dForwardTensors){.x = c->x[set], .w = c->w,
                                 .bias = c->bias, .y = c->y[set], .workspace = c->workspace,
                                 .workspace_bytes = c->workspace_bytes}, st);
    case BENCH_CONV_BACKWARD_DATA:
        return b->conv2d_backward_data(b, g, &(Conv2dBackwardDataTensors){.dy = c->dy[set],
                                       .w = c->w, .dx = c->dx[set], .workspace = c->workspace,
                                       .workspace_bytes = c->workspace_bytes, .accumulate = 0}, st);
    default:
        return b->conv2d_backward_filter(b, g, &(Conv2dBackwardFilterTensors){.x = c->x[set],
                                         .dy = c->dy[set], .dw = c->dw, .dbias = c->dbias,
                                         .workspace = c->workspace,
                                         .workspace_bytes = c->workspace_bytes, .accumulate = 0},
                                             st);
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
    bench_range_push(b, "bench conv %s %s %s", row->shape, bench_conv_op_name(row->op),
                     bench_precision_name(row->precision));
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
        return status_fail(st, STATUS_RUNTIME_ERROR, "conv %s %s %s: the timer measured %g ms",
                           row->shape, bench_conv_op_name(row->op),
                           bench_precision_name(row->precision), row->median_ms);
    row->tflops = conv_flops(g) / (row->median_ms * 1e-3) / 1e12;
    row->available = 1;
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

// The CPU backend widens 16-bit operands into f32 scratch and rounds each result back once
// (kernels/cpu/cpu_conv2d.c): its 16-bit rows time that too, and say so.
static int describe_algorithms(const Backend *b, const Conv2dGeometry *g, size_t workspace,
                               char out[BENCH_CONV_OP_COUNT][160], Status *st) {
    if (b->kind != BACKEND_CUDA) {
        const char *data = dtype_name(g->dtype);
        for (int op = 0; op < BENCH_CONV_OP_COUNT; op++) {
            if (g->dtype == DTYPE_F32) snprintf(out[op], 160, "im2col + OpenBLAS sgemm");
            else if (op == BENCH_CONV_BACKWARD_FILTER)
                snprintf(out[op], 160, "%s widened to f32, im2col + OpenBLAS sgemm into the f32 "
                         "dw", data);
            else snprintf(out[op], 160, "%s widened to f32, im2col + OpenBLAS sgemm, rounded "
                          "back to %s", data, data);
        }
        return 0;
    }
    char line[512];
    TRY(cuda_conv2d_describe(b, g, workspace, line, sizeof line, st));
    split_algorithms(line, out);
    return 0;
}

static const DType data_dtype[BENCH_CONV_DATA_COUNT] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};

// What each storage computes in: f32 data in TF32 where cuDNN may use it (compute
// capability 8.0+, not --no-tf32), else fp32; 16-bit data in their own type, f32 sums.
static BenchPrecision data_precision(const BenchDevice *dev, const BenchOptions *o,
                                     BenchConvData data) {
    if (data == BENCH_CONV_BF16) return BENCH_BF16;
    if (data == BENCH_CONV_F16) return BENCH_FP16;
    return dev->is_gpu && dev->gpu.compute_major >= 8 && !o->no_tf32 ? BENCH_TF32 : BENCH_FP32;
}

// The three ops of one shape in one storage, into rows[op * BENCH_CONV_DATA_COUNT] (the
// shape's rows, grouped by op). A storage the GPU lacks is three rows that say why.
static int measure_data(Device *d, const BenchDevice *dev, const BenchOptions *o,
                        const BenchConvShape *shape, const Conv2dGeometry *g,
                        BenchConvData data, BenchConvRow *rows, Status *st) {
    BenchPrecision precision = data_precision(dev, o, data);
    char lacks[BENCH_REASON_MAX];
    const char *why = bench_gpu_lacks(dev, precision, lacks, sizeof lacks);
    size_t set_bytes = 2 * (activation_values(g, 0) + activation_values(g, 1)) *
                       dtype_size(g->dtype);
    int sets = bench_input_sets(dev, set_bytes, CONV_MAX_SETS);
    ConvBuffers c;
    memset(&c, 0, sizeof c);
    c.alloc = &d->alloc;
    int rc = why ? 0 : buffers_alloc(d, g, sets, &c, st);
    char no_room[BENCH_REASON_MAX];
    if (rc == STATUS_OUT_OF_MEMORY) {
        // A shape the device cannot hold is three rows that say so, as bench gemm's sizes
        // are; the other shapes still run.
        char bytes[32];
        snprintf(no_room, sizeof no_room, "out of memory for %s of activations and their "
                 "gradients, beside the weights and workspace",
                 alloc_format_bytes(set_bytes * (size_t)sets, bytes, sizeof bytes));
        why = no_room;
        rc = 0;
        status_clear(st);
    }
    char algorithms[BENCH_CONV_OP_COUNT][160];
    if (!rc && !why) rc = describe_algorithms(d->backend, g, c.workspace_bytes, algorithms, st);
    for (int op = 0; !rc && op < BENCH_CONV_OP_COUNT; op++) {
        BenchConvRow *row = &rows[op * BENCH_CONV_DATA_COUNT];
        row->shape = shape->name;
        row->geometry = *g;
        row->op = (BenchConvOp)op;
        row->precision = precision;
        row->peak_tflops = dev->peak_tflops[precision];
        if (why) {
            snprintf(row->unavailable, sizeof row->unavailable, "%s", why);
            continue;
        }
        row->workspace_bytes = c.workspace_bytes;
        row->input_sets = sets;
        snprintf(row->algorithm, sizeof row->algorithm, "%.159s", algorithms[op]);
        bench_progress(o, "conv %s %s %s", shape->name, op_names[op],
                       bench_precision_name(precision));
        rc = measure(d->backend, o, row, &c, st);
    }
    buffers_free(&c);
    if (rc) status_prefix(st, "conv %s, %s data, batch %d: ", shape->name,
                          dtype_name(g->dtype), g->batch);
    return rc;
}

int bench_conv(Device *d, const BenchDevice *dev, const BenchOptions *o, int batch,
               BenchConvReport *out, Status *st) {
    memset(out, 0, sizeof *out);
    out->batch = batch;
    for (int i = 0; i < bench_conv_shape_count && i < BENCH_CONV_MAX_SHAPES; i++) {
        BenchConvRow *rows = &out->rows[out->row_count];
        out->row_count += BENCH_CONV_OP_COUNT * BENCH_CONV_DATA_COUNT;
        for (int data = 0; data < BENCH_CONV_DATA_COUNT; data++) {
            Conv2dGeometry g = bench_conv_shapes[i].geometry;
            g.batch = batch;
            g.dtype = data_dtype[data];
            TRY(measure_data(d, dev, o, &bench_conv_shapes[i], &g, (BenchConvData)data,
                             rows + data, st));
        }
    }
    return 0;
}
