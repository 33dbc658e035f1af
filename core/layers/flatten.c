// `flatten`: CxHxW -> C*H*W. The output is a view of the input (same bytes, new shape),
// so forward costs nothing; backward hands the gradient back unchanged. After NHWC images
// it is a copy into NCHW order instead (below).
#include "core/layer.h"

static const char *const flatten_keys[] = {NULL};

static int flatten_configure(Layer *l, const ModelStatement *s, Status *st) { return 0; }

static int flatten_infer(Layer *l, Status *st) {
    l->out_shape = shape_make1((int)shape_numel(&l->inputs[0]->out_shape));
    l->out_dtype = l->inputs[0]->out_dtype;
    return 0;
}

int layer_view_forward(Layer *l, const LayerContext *ctx, Status *st) {
    // The graph allocates no memory for a view's output; point it at the input's.
    tensor_view(&l->output, &l->inputs[0]->output);
    return 0;
}

int layer_view_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    size_t n = (size_t)ctx->batch * shape_numel(&l->out_shape);
    if (l->out_dtype != DTYPE_F32)  // 16-bit activations (graph_set_storage)
        return ctx->backend->convert(ctx->backend, &(ConvertArgs){.src = l->grad.data,
                                     .src_dtype = l->out_dtype, .dst = l->inputs[0]->grad.data,
                                     .dst_dtype = l->out_dtype, .n = n,
                                     .accumulate = l->input_grad_accumulate[0]}, st);
    float *dx = tensor_f32(&l->inputs[0]->grad);
    const void *dy = l->grad.data;
    if (l->input_grad_accumulate[0])
        return ctx->backend->accumulate(ctx->backend, &(AccumulateArgs){.dtype = DTYPE_F32,
                                        .y = dx, .x = &dy, .count = 1, .n = n, .accumulate = 1},
                                            st);
    return ctx->backend->copy_on_device(ctx->backend, dx, l->grad.data, n * sizeof(float), st);
}

// After NHWC images (graph_set_layouts) the vector must still come in NCHW order, the
// order the dense layer after it was trained in and its weights are saved for: the output
// is then a copy through layout_convert instead of a view (layer_reorders_input).
static int flatten_forward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!layer_reorders_input(l)) return layer_view_forward(l, ctx, st);
    return layer_images_convert(l->inputs[0], ctx, LAYOUT_NHWC, l->inputs[0]->output.data,
                                l->output.data, 0, st);
}

static int flatten_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!layer_reorders_input(l)) return layer_view_backward(l, ctx, st);
    if (!l->input_needs_grad[0]) return 0;
    return layer_images_convert(l->inputs[0], ctx, LAYOUT_NCHW, l->grad.data,
                                l->inputs[0]->grad.data, l->input_grad_accumulate[0], st);
}

static void flatten_export(const Layer *l, ExportNode *node) {
    (void)l;
    node->op = EXPORT_FLATTEN;
}

const LayerKind layer_flatten = {
    .name = "flatten",
    .summary = "CxHxW -> C*H*W (a view, no copy; a reordering copy after NHWC images)",
    .keys = flatten_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_READS_EITHER,
    .output_is_view = 1,
    .configure = flatten_configure,
    .infer = flatten_infer,
    .forward = flatten_forward,
    .backward = flatten_backward,
    .export_node = flatten_export,
};
