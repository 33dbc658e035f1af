// `loss softmax_cross_entropy`: integer labels against class scores (logits). Softmax
// and the loss are one layer because together their gradient is just probs - onehot,
// which is both cheaper and numerically safer than chaining the two.
#include "core/layers/loss_common.h"

static const char *const no_keys[] = {NULL};

static int xent_configure(Layer *l, const ModelStatement *s, Status *st) { return 0; }

static int xent_infer(Layer *l, Status *st) { return loss_infer_scores(l, 2, st); }

// In training the forward pass also writes the logits' gradient (one kernel, where a small
// step has about twenty). graph_build makes the loss the last layer and its input's only
// reader, so it never adds to a gradient another layer wrote; should it ever have to
// (input_grad_accumulate), the backward pass does, as before.
static int xent_forward(Layer *l, const LayerContext *ctx, Status *st) {
    LossRows *state = l->state;
    state->input_grad_written = ctx->training && l->input_needs_grad[0] &&
                                !l->input_grad_accumulate[0];
    const SoftmaxCrossEntropyForwardArgs args = {
        .logits = tensor_f32(&l->inputs[0]->output), .labels = ctx->labels, .rows = ctx->batch,
        .classes = loss_classes(l), .probs = tensor_f32(&l->output),
        .row_stats = tensor_f32(&state->row_stats),
        .dlogits = state->input_grad_written ? tensor_f32(&l->inputs[0]->grad) : NULL,
        .scale = loss_scale(ctx)};
    return ctx->backend->softmax_cross_entropy_forward(ctx->backend, &args, st);
}

static int xent_backward(Layer *l, const LayerContext *ctx, Status *st) {
    const LossRows *state = l->state;
    if (!l->input_needs_grad[0] || state->input_grad_written) return 0;
    return ctx->backend->softmax_cross_entropy_backward(ctx->backend,
                                                        &(SoftmaxCrossEntropyBackwardArgs){
                                                        .probs = tensor_f32(&l->output),
                                                        .labels = ctx->labels, .rows = ctx->batch,
                                                        .classes = loss_classes(l),
                                                        .scale = loss_scale(ctx),
                                                        .dlogits = tensor_f32(&l->inputs[0]->grad),
                                                        .accumulate = l->input_grad_accumulate[0]},
                                                        st);
}

const LayerKind layer_loss_softmax_cross_entropy = {
    .name = "softmax_cross_entropy",
    .summary = "softmax + cross-entropy against integer labels (mean over the batch)",
    .keys = no_keys,
    .input_count = 1,
    .is_loss = 1,
    .configure = xent_configure,
    .infer = xent_infer,
    .allocate = loss_allocate_rows,
    .planned_bytes = loss_planned_rows,
    .forward = xent_forward,
    .backward = xent_backward,
    .release = loss_release_rows,
    .loss_rows = loss_state_rows,
};
