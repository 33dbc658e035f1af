// Activations: `relu`, `leaky_relu slope=0.01`, `sigmoid`, `tanh`, `gelu` as layers, the
// same as `act NAME`, and as `act=NAME` on a layer that takes it (the graph builder then
// inserts this layer after it). One kind, because the five differ only in the op's switch.
#include <stdlib.h>
#include <string.h>

#include "core/layer.h"
#include "base/suggest.h"

typedef struct ActivationConfig {
    ActivationKind activation;
    float slope;
} ActivationConfig;

extern const LayerKind layer_activation;

const char *const activation_names[] = {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", NULL};

static const char *const activation_keys[] = {"slope", NULL};

static int activation_configure(Layer *l, const ModelStatement *s, Status *st) {
    ActivationConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for an activation layer's settings");
    l->config = config;
    int is_act_statement = strcmp(s->kind, "act") == 0;
    const char *name = is_act_statement ? s->choice : s->kind;
    int column = is_act_statement ? s->choice_column : s->kind_column;
    if (!name[0]) {
        status_fail_at(st, STATUS_BAD_INPUT, l->path, s->line, s->kind_column,
                       "act needs the activation's name");
        status_hint(st, "write e.g. `act relu`; activations: relu, leaky_relu, sigmoid, tanh, gelu");
        return STATUS_BAD_INPUT;
    }
    int found = -1;
    for (int i = 0; activation_names[i]; i++)
        if (strcmp(name, activation_names[i]) == 0) found = i;
    if (found < 0) {
        const char *near = suggest(name, activation_names);
        status_fail_at(st, STATUS_BAD_INPUT, l->path, s->line, column,
                       "unknown activation '%s'%s%s%s", name, near ? "; did you mean '" : "",
                       near ? near : "", near ? "'?" : "");
        status_hint(st, "activations: relu, leaky_relu, sigmoid, tanh, gelu");
        return STATUS_BAD_INPUT;
    }
    config->activation = (ActivationKind)found;
    double slope;
    TRY(model_attr_float(l->path, s, "slope", 0.01, 0.0, 1.0, &slope, st));
    config->slope = (float)slope;
    if (model_attr_find(s, "slope") && config->activation != ACTIVATION_LEAKY_RELU) {
        const ModelAttr *attr = model_attr_find(s, "slope");
        status_fail_at(st, STATUS_BAD_INPUT, l->path, s->line, attr->key_column,
                       "slope= only applies to leaky_relu, not %s", name);
        status_hint(st, "remove slope=, or use leaky_relu");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int activation_infer(Layer *l, Status *st) {
    l->out_shape = l->inputs[0]->out_shape;
    l->out_dtype = DTYPE_F32;
    return 0;
}

static size_t activation_count(const Layer *l, const LayerContext *ctx) {
    return (size_t)ctx->batch * shape_numel(&l->out_shape);
}

int activation_layer_fusable(const Layer *act, FusedActivation *out) {
    if (act->kind != &layer_activation) return 0;
    const ActivationConfig *config = act->config;
    if (config->activation == ACTIVATION_GELU) return 0;
    *out = (FusedActivation){.apply = 1, .kind = config->activation, .slope = config->slope};
    return 1;
}

// Computed by the layer before it (graph_fuse_activations): its output is already there.
static int computed_by_input(const Layer *l) { return l->inputs[0]->fused_activation == l; }

static int activation_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const ActivationConfig *config = l->config;
    if (computed_by_input(l)) return 0;
    return ctx->backend->activation_forward(ctx->backend, &(ActivationForwardArgs){
                                            .kind = config->activation, .slope = config->slope,
                                            .dtype = l->out_dtype, .x = l->inputs[0]->output.data,
                                            .y = l->output.data, .n = activation_count(l, ctx)},
                                                st);
}

// Fused, the layer before differentiates it too (activation_fused_backward), in the same
// pass as its bias gradient where it can.
static int activation_backward(Layer *l, const LayerContext *ctx, Status *st) {
    if (!l->input_needs_grad[0] || computed_by_input(l)) return 0;
    const ActivationConfig *config = l->config;
    return ctx->backend->activation_backward(ctx->backend, &(ActivationBackwardArgs){
                                             .kind = config->activation, .slope = config->slope,
                                             .dtype = l->out_dtype, .x = l->inputs[0]->output.data,
                                             .y = l->output.data, .dy = l->grad.data,
                                             .dx = l->inputs[0]->grad.data,
                                             .n = activation_count(l, ctx),
                                             .accumulate = l->input_grad_accumulate[0]}, st);
}

// The input was never stored. Of the derivatives activation_layer_fusable admits,
// sigmoid's and tanh's read only y, and relu's and leaky_relu's read x only as x > 0,
// which holds exactly where y > 0 (slope >= 0; a NaN fails both): passing y as x gives
// the bits the unfused backward gives. Only the activation reads its owner's output, so
// the owner's gradient is written, never added to.
int activation_fused_backward(Layer *owner, const LayerContext *ctx, Status *st) {
    const Layer *l = owner->fused_activation;
    const ActivationConfig *config = l->config;
    const void *y = l->output.data;  // the owner's dtype (graph_set_storage)
    return ctx->backend->activation_backward(ctx->backend, &(ActivationBackwardArgs){
                                             .kind = config->activation, .slope = config->slope,
                                             .dtype = l->out_dtype, .x = y, .y = y,
                                             .dy = l->grad.data, .dx = owner->grad.data,
                                             .n = activation_count(l, ctx), .accumulate = 0}, st);
}

static const char *activation_variant(const Layer *l) {
    const ActivationConfig *config = l->config;
    return activation_names[config->activation];
}

static double activation_flops(const Layer *l) { return (double)shape_numel(&l->out_shape); }

static void activation_export(const Layer *l, ExportNode *node) {
    const ActivationConfig *config = l->config;
    node->op = EXPORT_ACTIVATION;
    node->activation = config->activation;
    node->slope = config->slope;
}

const LayerKind layer_activation = {
    .name = "act",
    .summary = "elementwise activation: relu, leaky_relu (slope=), sigmoid, tanh, gelu",
    .keys = activation_keys,
    .input_count = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .stores_16bit = 1,
    .configure = activation_configure,
    .infer = activation_infer,
    .forward = activation_forward,
    .backward = activation_backward,
    .variant = activation_variant,
    .flops = activation_flops,
    .export_node = activation_export,
};
