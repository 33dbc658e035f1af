// `input shape=1x28x28 dtype=f32`: where a batch enters the graph. The trainer copies
// each batch into this layer's output; it has no forward or backward work of its own.
#include <stdlib.h>
#include <string.h>

#include "core/layer.h"
#include "base/suggest.h"

typedef struct InputConfig {
    Shape shape;
    DType dtype;
} InputConfig;

static const char *const input_keys[] = {"shape", "dtype", NULL};

static int input_configure(Layer *l, const ModelStatement *s, Status *st) {
    InputConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for an input layer's settings");
    l->config = config;
    int column;
    TRY(layer_read_shape(l, s, "write e.g. `input shape=1x28x28` for images (CxHxW) or `input "
                               "shape=784` for feature vectors; the batch is never written",
                         &config->shape, &column, st));
    config->dtype = DTYPE_F32;
    const ModelAttr *dtype = model_attr_find(s, "dtype");
    if (dtype && dtype_parse(dtype->value, &config->dtype)) {
        const char *near = suggest(dtype->value, dtype_names);
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, dtype->value_column,
                       "unknown dtype '%s'%s%s%s", dtype->value, near ? "; did you mean '" : "",
                       near ? near : "", near ? "'?" : "");
        status_hint(st, "dtypes: f32, f16, bf16, i32, u8");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

static int input_infer(Layer *l, Status *st) {
    const InputConfig *config = l->config;
    l->out_shape = config->shape;
    l->out_dtype = config->dtype;
    return 0;
}

static int input_forward(Layer *l, const LayerContext *ctx, Status *st) { return 0; }
static int input_backward(Layer *l, const LayerContext *ctx, Status *st) { return 0; }

const LayerKind layer_input = {
    .name = "input",
    .summary = "where samples enter: shape=CxHxW or N, dtype=f32",
    .keys = input_keys,
    .input_count = 0,
    .configure = input_configure,
    .infer = input_infer,
    .forward = input_forward,
    .backward = input_backward,
};
