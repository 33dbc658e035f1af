// `loss mse`: squared error against one-hot targets made from the integer labels,
// summed over classes and averaged over the batch (Keras' "categorical" use of MSE).
#include "core/layers/loss_common.h"

static const char *const no_keys[] = {NULL};

static int mse_configure(Layer *l, const ModelStatement *s, Status *st) { return 0; }

static int mse_infer(Layer *l, Status *st) { return loss_infer_scores(l, 1, st); }

static int mse_forward(Layer *l, const LayerContext *ctx, Status *st) {
    LossRows *state = l->state;
    return ctx->backend->mse_forward(ctx->backend, &(MseForwardArgs){
                                     .predictions = tensor_f32(&l->inputs[0]->output),
                                     .labels = ctx->labels, .rows = ctx->batch,
                                     .classes = loss_classes(l),
                                     .row_stats = tensor_f32(&state->row_stats)}, st);
}

static int mse_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    return ctx->backend->mse_backward(ctx->backend, &(MseBackwardArgs){
                                      .predictions = tensor_f32(&l->inputs[0]->output),
                                      .labels = ctx->labels, .rows = ctx->batch,
                                      .classes = loss_classes(l), .scale = loss_scale(ctx),
                                      .dpredictions = tensor_f32(&l->inputs[0]->grad),
                                      .accumulate = l->input_grad_accumulate[0]}, st);
}

const LayerKind layer_loss_mse = {
    .name = "mse",
    .summary = "squared error against one-hot labels (sum over classes, mean over the batch)",
    .keys = no_keys,
    .input_count = 1,
    .is_loss = 1,
    .configure = mse_configure,
    .infer = mse_infer,
    .allocate = loss_allocate_rows,
    .planned_bytes = loss_planned_rows,
    .forward = mse_forward,
    .backward = mse_backward,
    .release = loss_release_rows,
    .loss_rows = loss_state_rows,
};
