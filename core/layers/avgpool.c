// `avgpool [size=2] [stride=size] [pad=0]`: the mean of each window, per channel. Padding
// counts as zeros and every window divides by its full size, PyTorch's default
// (count_include_pad=True), so a padded border window averages toward zero.
#include "core/layers/pool_common.h"

static int avgpool_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    const Backend *b = ctx->backend;
    if (!b->avgpool_forward || !b->avgpool_backward)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no avgpool yet", b->name);
    return 0;
}

static int avgpool_forward(Layer *l, const LayerContext *ctx, Status *st) {
    Pool2dGeometry g = pool_geometry(l, ctx);
    return ctx->backend->avgpool_forward(ctx->backend, &g, &(AvgpoolForwardTensors){
                                         .dtype = l->out_dtype, .x = l->inputs[0]->output.data,
                                         .y = l->output.data}, st);
}

static int avgpool_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    Pool2dGeometry g = pool_geometry(l, ctx);
    return ctx->backend->avgpool_backward(ctx->backend, &g, &(AvgpoolBackwardTensors){
                                          .dtype = l->out_dtype, .dy = l->grad.data,
                                          .dx = l->inputs[0]->grad.data,
                                          .accumulate = l->input_grad_accumulate[0]}, st);
}

// The divisor is the whole window, padding included (PyTorch's count_include_pad=True).
static void avgpool_export(const Layer *l, ExportNode *node) {
    pool_export(l, EXPORT_AVGPOOL, node);
}

const LayerKind layer_avgpool = {
    .name = "avgpool",
    .summary = "mean over size=K|HxW windows, padding counted as zeros (stride= defaults to size)",
    .keys = pool_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .configure = pool_configure,
    .infer = pool_infer,
    .allocate = avgpool_allocate,
    .planned_bytes = layer_plans_nothing,
    .forward = avgpool_forward,
    .backward = avgpool_backward,
    .variant = pool_variant,
    .flops = pool_flops,
    .stores_16bit = 1,
    .export_node = avgpool_export,
};
