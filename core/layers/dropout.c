// `dropout rate=0.5`: inverted dropout, so evaluation is the identity and needs no
// rescaling. The mask is kept for backward rather than recomputed: it is one float per
// activation, and recomputing would tie backward to the RNG's exact sequence.
#include <stdlib.h>

#include "core/layer.h"

typedef struct DropoutConfig {
    float rate;
} DropoutConfig;

typedef struct DropoutState {
    Tensor mask;
} DropoutState;

static const char *const dropout_keys[] = {"rate", NULL};

static int dropout_configure(Layer *l, const ModelStatement *s, Status *st) {
    DropoutConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a dropout layer's settings");
    l->config = config;
    double rate;
    TRY(model_attr_float_interval(l->path, s, "rate", 0.5, 0.0, 1.0, MODEL_EXCLUDE_MAX, &rate, st));
    config->rate = (float)rate;
    return 0;
}

static int dropout_infer(Layer *l, Status *st) {
    l->out_shape = l->inputs[0]->out_shape;
    l->out_dtype = DTYPE_F32;
    return 0;
}

static int dropout_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    DropoutState *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    tensor_free(&state->mask);
    tensor_set_shape(&state->mask, DTYPE_F32, batch, &l->out_shape);
    return tensor_alloc(&state->mask, ctx->alloc, st);
}

static int dropout_planned_bytes(const Layer *l, const Backend *b, int batch, size_t *state,
                                 size_t *workspace, Status *st) {
    *state = layer_batch_tensor_bytes(batch, &l->out_shape, sizeof(float));  // the mask
    *workspace = 0;
    return 0;
}

static void dropout_release(Layer *l) {
    DropoutState *state = l->state;
    if (state) tensor_free(&state->mask);
    free(state);
    l->state = NULL;
}

static size_t dropout_count(const Layer *l, const LayerContext *ctx) {
    return (size_t)ctx->batch * shape_numel(&l->out_shape);
}

// The mask hash draws element i from seed + DROPOUT_HASH_STEP * (i + 1)
// (dropout_uniform in kernels/backend.h), so shifting the seed by DROPOUT_HASH_STEP per
// element places this pass's elements where they sit in the whole step's batch: a step
// split into micro-batches or replicas draws exactly the masks it draws whole.
static uint64_t pass_mask_seed(const Layer *l, const LayerContext *ctx) {
    uint64_t first_element = (uint64_t)ctx->sample_offset * shape_numel(&l->out_shape);
    return ctx->seed + DROPOUT_HASH_STEP * first_element;
}

static int dropout_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const DropoutConfig *config = l->config;
    DropoutState *state = l->state;
    size_t n = dropout_count(l, ctx);
    const void *x = l->inputs[0]->output.data;  // in l->out_dtype: a cast sits between otherwise
    if (!ctx->training || config->rate == 0.0f) {
        // Evaluation: identity. A mask of ones keeps backward valid in both modes.
        TRY(ctx->backend->fill(ctx->backend, tensor_f32(&state->mask), 1.0f, n, st));
        return ctx->backend->copy_on_device(ctx->backend, l->output.data, x,
                                            n * dtype_size(l->out_dtype), st);
    }
    return ctx->backend->dropout_forward(ctx->backend, &(DropoutForwardArgs){.dtype = l->out_dtype,
                                         .x = x, .y = l->output.data,
                                         .mask = tensor_f32(&state->mask), .n = n,
                                         .rate = config->rate, .seed = pass_mask_seed(l, ctx)}, st);
}

static int dropout_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0]) return 0;
    DropoutState *state = l->state;
    return ctx->backend->dropout_backward(ctx->backend, &(DropoutBackwardArgs){
                                          .dtype = l->out_dtype, .dy = l->grad.data,
                                          .mask = tensor_f32(&state->mask),
                                          .dx = l->inputs[0]->grad.data,
                                          .n = dropout_count(l, ctx),
                                          .accumulate = l->input_grad_accumulate[0]}, st);
}

// Inference never drops: the layer passes its input on.
static void dropout_export(const Layer *l, ExportNode *node) {
    (void)l;
    node->op = EXPORT_IDENTITY;
}

const LayerKind layer_dropout = {
    .name = "dropout",
    .summary = "zeroes a fraction rate= of activations while training",
    .keys = dropout_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .stores_16bit = 1,
    .configure = dropout_configure,
    .infer = dropout_infer,
    .allocate = dropout_allocate,
    .planned_bytes = dropout_planned_bytes,
    .forward = dropout_forward,
    .backward = dropout_backward,
    .release = dropout_release,
    .export_node = dropout_export,
};
