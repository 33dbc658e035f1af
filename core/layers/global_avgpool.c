// `global_avgpool`: CxHxW -> C, the mean of each channel, as in the head of a ResNet
// (PyTorch's AdaptiveAvgPool2d(1) followed by flatten). It is an average pool whose one
// window is the whole image, so it runs on the backend's avgpool ops; the [N, C, 1, 1]
// result is already laid out as the [N, C] output.
#include <stdlib.h>

#include "core/layers/window_common.h"

typedef struct GlobalAvgpoolConfig {
    Pool2dGeometry geometry;
} GlobalAvgpoolConfig;

static const char *const global_avgpool_keys[] = {NULL};

static int global_avgpool_configure(Layer *l, const ModelStatement *s, Status *st) {
    l->config = calloc(1, sizeof(GlobalAvgpoolConfig));
    return l->config ? 0
                     : status_out_of_host_memory(st, sizeof(GlobalAvgpoolConfig),
                                                 "for a global_avgpool layer's settings");
}

static int global_avgpool_infer(Layer *l, Status *st) {
    GlobalAvgpoolConfig *config = l->config;
    TRY(window_require_image(l, st));
    const Shape *in = &l->inputs[0]->out_shape;
    config->geometry = (Pool2dGeometry){
        .channels = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2], .out_h = 1,
        .out_w = 1, .kernel_h = in->dims[1], .kernel_w = in->dims[2], .stride_h = 1,
        .stride_w = 1};
    l->out_shape = shape_make1(in->dims[0]);
    l->out_dtype = DTYPE_F32;
    return 0;
}

static int global_avgpool_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    const Backend *b = ctx->backend;
    if (!b->avgpool_forward || !b->avgpool_backward)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no avgpool yet", b->name);
    return 0;
}

static Pool2dGeometry geometry(const Layer *l, const LayerContext *ctx) {
    Pool2dGeometry g = ((const GlobalAvgpoolConfig *)l->config)->geometry;
    g.batch = ctx->batch;
    g.layout = l->inputs[0]->layout;  // the [N, C] result is the same bytes in either
    return g;
}

static int global_avgpool_forward(Layer *l, const LayerContext *ctx, Status *st) {
    Pool2dGeometry g = geometry(l, ctx);
    return ctx->backend->avgpool_forward(ctx->backend, &g, &(AvgpoolForwardTensors){
                                         .dtype = l->out_dtype, .x = l->inputs[0]->output.data,
                                         .y = l->output.data}, st);
}

static int global_avgpool_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    Pool2dGeometry g = geometry(l, ctx);
    return ctx->backend->avgpool_backward(ctx->backend, &g, &(AvgpoolBackwardTensors){
                                          .dtype = l->out_dtype, .dy = l->grad.data,
                                          .dx = l->inputs[0]->grad.data,
                                          .accumulate = l->input_grad_accumulate[0]}, st);
}

static double global_avgpool_flops(const Layer *l) {
    return (double)shape_numel(&l->inputs[0]->out_shape);
}

static void global_avgpool_export(const Layer *l, ExportNode *node) {
    (void)l;
    node->op = EXPORT_GLOBAL_AVGPOOL;
}

const LayerKind layer_global_avgpool = {
    .name = "global_avgpool",
    .summary = "CxHxW -> C: the mean of each channel",
    .keys = global_avgpool_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_READS_EITHER,
    .configure = global_avgpool_configure,
    .infer = global_avgpool_infer,
    .allocate = global_avgpool_allocate,
    .planned_bytes = layer_plans_nothing,
    .forward = global_avgpool_forward,
    .backward = global_avgpool_backward,
    .flops = global_avgpool_flops,
    .stores_16bit = 1,
    .export_node = global_avgpool_export,
};
