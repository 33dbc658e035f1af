// `add from=a,b[,c,d] [act=...]`: the elementwise sum of 2 to LAYER_MAX_INPUTS outputs of
// one shape: the join of a residual block (`add from=block_in,bn2 act=relu`).
//
// Backward hands the same gradient to every input. An input that also feeds another
// layer (the block's input feeds both its first conv and this add) receives gradients
// from both; the graph's gradient plan says which consumer writes first and which adds.
#include <stdio.h>
#include <string.h>

#include "core/layer.h"

static const char *const add_keys[] = {NULL};

static int add_configure(Layer *l, const ModelStatement *s, Status *st) { return 0; }

static int add_infer(Layer *l, Status *st) {
    const Shape *first = &l->inputs[0]->out_shape;
    int same = 1;
    for (int k = 1; k < l->input_count; k++) same = same && shape_equal(first, &l->inputs[k]->out_shape);
    if (!same) {
        // Name every input with its shape: with three inputs, which one is off is the point.
        char list[512] = "", shape[64];
        for (int k = 0; k < l->input_count; k++) {
            const Layer *in = l->inputs[k];
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s'%s' %s", k ? ", " : "", in->name,
                     shape_format(&in->out_shape, shape, sizeof shape));
        }
        layer_fail(l, st, "add needs inputs of one shape, but got %s", list);
        status_hint(st, "give the branches equal shapes: the same units=/filters= on both, or a "
                        "1x1 conv2d (or dense) on the shortcut to match the other branch");
        return STATUS_BAD_INPUT;
    }
    l->out_shape = *first;
    l->out_dtype = DTYPE_F32;
    return 0;
}

static size_t add_count(const Layer *l, const LayerContext *ctx) {
    return (size_t)ctx->batch * shape_numel(&l->out_shape);
}

_Static_assert(LAYER_MAX_INPUTS <= BACKEND_ACCUMULATE_MAX, "one accumulate sums every input");

// One accumulate over all inputs: their sum is taken in f32 and rounded once into a 16-bit
// y. Copying the first input and adding the others into y one by one would round k - 1
// times (twice for a 3-input add), each rounding of bf16 worth up to 2^-9 of the value.
static int add_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const void *x[LAYER_MAX_INPUTS];
    for (int k = 0; k < l->input_count; k++) x[k] = l->inputs[k]->output.data;
    return b->accumulate(b, &(AccumulateArgs){.dtype = l->out_dtype, .y = l->output.data, .x = x,
                         .count = l->input_count, .n = add_count(l, ctx), .accumulate = 0}, st);
}

// Each input's gradient is dy itself: copied (exact in any dtype), or added to what another
// reader of that input wrote, in f32 and rounded once.
static int add_backward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    size_t n = add_count(l, ctx);
    const void *dy = l->grad.data;
    for (int k = 0; k < l->input_count; k++) {
        if (!l->input_needs_grad[k]) continue;
        void *dx = l->inputs[k]->grad.data;
        if (l->input_grad_accumulate[k]) TRY(b->accumulate(b, &(AccumulateArgs){
                                                           .dtype = l->out_dtype, .y = dx,
                                                           .x = &dy, .count = 1, .n = n,
                                                           .accumulate = 1}, st));
        else TRY(b->copy_on_device(b, dx, dy, n * dtype_size(l->out_dtype), st));
    }
    return 0;
}

static double add_flops(const Layer *l) {
    return (double)(l->input_count - 1) * (double)shape_numel(&l->out_shape);
}

static void add_export(const Layer *l, ExportNode *node) {
    (void)l;
    node->op = EXPORT_ADD;
}

const LayerKind layer_add = {
    .name = "add",
    .summary = "elementwise sum of 2 to 4 equal-shaped layers: from=a,b, act=",
    .keys = add_keys,
    .takes_act = 1,
    .input_count = LAYER_INPUTS_VARIADIC,
    .layout_use = LAYOUT_USE_EITHER,
    .stores_16bit = 1,
    .configure = add_configure,
    .infer = add_infer,
    .forward = add_forward,
    .backward = add_backward,
    .flops = add_flops,
    .export_node = add_export,
};
