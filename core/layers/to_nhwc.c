// The layout conversion graph_set_layouts puts after a model input of several channels
// under --layout nhwc: the batch arrives NCHW (the datasets, the input layer and 16-bit
// storage's cast of it keep that order) and the convolutional trunk after it reads NHWC.
// One channel needs none: its bytes are the same in both layouts. A model file cannot name
// it; as a layer of its own, like cast, the memory plan, the per-layer times and `trainer
// check` show what it costs: one pass over the batch's images each forward.
#include "core/layer.h"

static int to_nhwc_forward(Layer *l, const LayerContext *ctx, Status *st) {
    return layer_images_convert(l, ctx, LAYOUT_NCHW, l->inputs[0]->output.data,
                                l->output.data, 0, st);
}

// What it reads is the data, which wants no gradient (plan_gradients); the conversion back
// is there for an input that some day does.
static int to_nhwc_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    return layer_images_convert(l, ctx, LAYOUT_NHWC, l->grad.data, l->inputs[0]->grad.data,
                                l->input_grad_accumulate[0], st);
}

const LayerKind layer_to_nhwc = {
    .name = "to_nhwc",
    .summary = "layout conversion NCHW to NHWC (inserted for --layout nhwc)",
    .input_count = 1,
    .layout_use = LAYOUT_USE_TO_NHWC,
    .forward = to_nhwc_forward,
    .backward = to_nhwc_backward,
};
