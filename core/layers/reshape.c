// `reshape shape=CxHxW` (or N): the same values under a new per-sample shape. Like
// flatten, the output is a view of the input (rows are contiguous per sample, so only the
// shape changes) and backward hands the gradient back unchanged.
#include <stdlib.h>

#include "core/layer.h"

typedef struct ReshapeConfig {
    Shape shape;
    int column;  // of shape='s value, for errors
} ReshapeConfig;

static const char *const reshape_keys[] = {"shape", NULL};

static int reshape_configure(Layer *l, const ModelStatement *s, Status *st) {
    ReshapeConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a reshape layer's settings");
    l->config = config;
    TRY(layer_read_shape(l, s, "write e.g. `reshape shape=1x28x28` or `reshape shape=784`; the "
                               "batch is never written",
                         &config->shape, &config->column, st));
    return 0;
}

static int reshape_infer(Layer *l, Status *st) {
    const ReshapeConfig *config = l->config;
    const Layer *in = l->inputs[0];
    size_t have = shape_numel(&in->out_shape), want = shape_numel(&config->shape);
    if (have != want) {
        char from[64], to[64];
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, config->column,
                       "reshape to %s needs %zu values per sample, but '%s' gives %s (%zu values)",
                       shape_format(&config->shape, to, sizeof to), want, in->name,
                       shape_format(&in->out_shape, from, sizeof from), have);
        status_hint(st, "the new shape must hold the same %zu values, e.g. shape=%zu", have, have);
        return STATUS_BAD_INPUT;
    }
    l->out_shape = config->shape;
    l->out_dtype = in->out_dtype;
    return 0;
}

static void reshape_export(const Layer *l, ExportNode *node) {
    node->op = EXPORT_RESHAPE;
    node->shape = ((const ReshapeConfig *)l->config)->shape;
}

const LayerKind layer_reshape = {
    .name = "reshape",
    .summary = "same values, new sample shape: shape=CxHxW or N (a view, no copy)",
    .keys = reshape_keys,
    .input_count = 1,
    .output_is_view = 1,
    .configure = reshape_configure,
    .infer = reshape_infer,
    .forward = layer_view_forward,
    .backward = layer_view_backward,
    .export_node = reshape_export,
};
