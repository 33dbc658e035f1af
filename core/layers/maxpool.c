// `maxpool [size=2] [stride=size] [pad=0]`: the largest value of each window, per channel.
// Forward records which input won each window (argmax), so backward routes the gradient
// there without searching the window again. Padding never wins.
#include <stdlib.h>

#include "core/layers/pool_common.h"

typedef struct MaxpoolState {
    Tensor argmax;  // i32 [batch] + out_shape: the winner's index in its input plane
} MaxpoolState;

static int maxpool_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    const Backend *b = ctx->backend;
    if (!b->maxpool_forward || !b->maxpool_backward)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no maxpool yet", b->name);
    MaxpoolState *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    tensor_free(&state->argmax);
    tensor_set_shape(&state->argmax, DTYPE_I32, batch, &l->out_shape);
    return tensor_alloc(&state->argmax, ctx->alloc, st);
}

static int maxpool_planned_bytes(const Layer *l, const Backend *b, int batch, size_t *state,
                                 size_t *workspace, Status *st) {
    *state = layer_batch_tensor_bytes(batch, &l->out_shape, sizeof(int32_t));  // argmax
    *workspace = 0;
    return 0;
}

static void maxpool_release(Layer *l) {
    MaxpoolState *state = l->state;
    if (state) tensor_free(&state->argmax);
    free(state);
    l->state = NULL;
}

static int maxpool_forward(Layer *l, const LayerContext *ctx, Status *st) {
    MaxpoolState *state = l->state;
    Pool2dGeometry g = pool_geometry(l, ctx);
    return ctx->backend->maxpool_forward(ctx->backend, &g, &(MaxpoolForwardTensors){
                                         .dtype = l->out_dtype, .x = l->inputs[0]->output.data,
                                         .y = l->output.data,
                                         .argmax = (int32_t *)state->argmax.data}, st);
}

static int maxpool_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    const MaxpoolState *state = l->state;
    Pool2dGeometry g = pool_geometry(l, ctx);
    return ctx->backend->maxpool_backward(ctx->backend, &g, &(MaxpoolBackwardTensors){
                                          .dtype = l->out_dtype, .dy = l->grad.data,
                                          .argmax = (const int32_t *)state->argmax.data,
                                          .dx = l->inputs[0]->grad.data,
                                          .accumulate = l->input_grad_accumulate[0]}, st);
}

static void maxpool_export(const Layer *l, ExportNode *node) {
    pool_export(l, EXPORT_MAXPOOL, node);
}

const LayerKind layer_maxpool = {
    .name = "maxpool",
    .summary = "max over size=K|HxW windows (stride= defaults to size, pad= at most size/2)",
    .keys = pool_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .configure = pool_configure,
    .infer = pool_infer,
    .allocate = maxpool_allocate,
    .planned_bytes = maxpool_planned_bytes,
    .forward = maxpool_forward,
    .backward = maxpool_backward,
    .release = maxpool_release,
    .variant = pool_variant,
    .flops = pool_flops,
    .stores_16bit = 1,
    .export_node = maxpool_export,
};
