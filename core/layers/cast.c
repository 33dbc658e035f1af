// The storage conversion graph_set_storage puts between a layer and a reader that keeps
// its activations in another dtype (--precision bf16|fp16): the input's f32 floats into a
// dense layer that stores bf16, the bf16 logits into the loss, which stays in f32. A model
// file cannot name it; PyTorch's autocast does the same casts inside each op call, here they
// are layers of their own so the memory plan, the per-layer times and `trainer check` show
// them. Backward converts the gradient back into the producer's dtype.
#include "core/layer.h"

static int cast_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const Layer *in = l->inputs[0];
    size_t n = (size_t)ctx->batch * shape_numel(&l->out_shape);
    return ctx->backend->convert(ctx->backend, &(ConvertArgs){.src = in->output.data,
                                 .src_dtype = in->out_dtype, .dst = l->output.data,
                                 .dst_dtype = l->out_dtype, .n = n, .accumulate = 0}, st);
}

static int cast_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    const Layer *in = l->inputs[0];
    size_t n = (size_t)ctx->batch * shape_numel(&l->out_shape);
    return ctx->backend->convert(ctx->backend, &(ConvertArgs){.src = l->grad.data,
                                 .src_dtype = l->out_dtype, .dst = in->grad.data,
                                 .dst_dtype = in->out_dtype, .n = n,
                                 .accumulate = l->input_grad_accumulate[0]}, st);
}

const LayerKind layer_cast = {
    .name = "cast",
    .summary = "storage conversion between f32 and bf16/f16 (inserted for --precision)",
    .input_count = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .forward = cast_forward,
    .backward = cast_backward,
};
