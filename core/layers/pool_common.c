#include "core/layers/pool_common.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/layers/window_common.h"

enum { POOL_SIZE_MAX = 4096 };

const char *const pool_keys[] = {"size", "stride", "pad", NULL};

int pool_configure(Layer *l, const ModelStatement *s, Status *st) {
    PoolConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a pooling layer's settings");
    l->config = config;
    TRY(window_attr_pair(l->path, s, "size", 2, 1, POOL_SIZE_MAX, config->size, st));
    // Without stride=, windows tile the image (stride = size), as in PyTorch and Keras.
    TRY(window_attr_pair(l->path, s, "stride", 0, 1, POOL_SIZE_MAX, config->stride, st));
    if (!model_attr_find(s, "stride")) {
        config->stride[0] = config->size[0];
        config->stride[1] = config->size[1];
    }
    TRY(window_attr_pair(l->path, s, "pad", 0, 0, POOL_SIZE_MAX, config->pad, st));
    char text[32], size[32];
    if (config->pad[0] > config->size[0] / 2 || config->pad[1] > config->size[1] / 2) {
        const ModelAttr *pad = model_attr_find(s, "pad");
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, pad->value_column,
                       "pad=%s is more than half of size=%s",
                       window_pair_text(config->pad, text, sizeof text),
                       window_pair_text(config->size, size, sizeof size));
        status_hint(st, "padding may be at most half the window, so that every window holds "
                    "an input value (PyTorch's rule): pad=%d or less for size=%d",
                    config->size[0] / 2, config->size[0]);
        return STATUS_BAD_INPUT;
    }
    config->size_column = window_key_column(s, "size", l->column);
    int used = snprintf(config->variant, sizeof config->variant, "%s %dx%d", l->kind->name,
                        config->size[0], config->size[1]);
    if (config->stride[0] != config->size[0] || config->stride[1] != config->size[1])
        used += snprintf(config->variant + used, sizeof config->variant - (size_t)used, "/%s",
                         window_pair_text(config->stride, text, sizeof text));
    if (config->pad[0] || config->pad[1])
        snprintf(config->variant + used, sizeof config->variant - (size_t)used, " p%s",
                 window_pair_text(config->pad, text, sizeof text));
    return 0;
}

int pool_infer(Layer *l, Status *st) {
    PoolConfig *config = l->config;
    TRY(window_require_image(l, st));
    const Shape *in = &l->inputs[0]->out_shape;
    char pad_text[40], text[32];
    snprintf(pad_text, sizeof pad_text, "pad=%s", window_pair_text(config->pad, text, sizeof text));
    WindowSpec w = {.key = "size", .pad_text = pad_text, .column = config->size_column,
                    .hint = "use a smaller size=, or fewer pooling layers before this one: "
                            "each divides the image's height and width by its stride"};
    for (int d = 0; d < 2; d++) {
        w.size[d] = config->size[d];
        w.dilation[d] = 1;
        w.stride[d] = config->stride[d];
        w.pad_before[d] = w.pad_after[d] = config->pad[d];
    }
    int out[2];
    TRY(window_output_size(l, &w, out, st));
    config->geometry = (Pool2dGeometry){
        .channels = in->dims[0], .in_h = in->dims[1], .in_w = in->dims[2],
        .out_h = out[0], .out_w = out[1], .kernel_h = config->size[0], .kernel_w = config->size[1],
        .stride_h = config->stride[0], .stride_w = config->stride[1],
        .pad_top = config->pad[0], .pad_left = config->pad[1]};
    l->out_shape = shape_make3(in->dims[0], out[0], out[1]);
    l->out_dtype = DTYPE_F32;
    return 0;
}

Pool2dGeometry pool_geometry(const Layer *l, const LayerContext *ctx) {
    Pool2dGeometry g = ((const PoolConfig *)l->config)->geometry;
    g.batch = ctx->batch;
    g.layout = l->layout;
    return g;
}

const char *pool_variant(const Layer *l) { return ((const PoolConfig *)l->config)->variant; }

// One comparison or addition per window element.
double pool_flops(const Layer *l) {
    const Pool2dGeometry *g = &((const PoolConfig *)l->config)->geometry;
    return (double)g->channels * g->out_h * g->out_w * g->kernel_h * g->kernel_w;
}

void pool_export(const Layer *l, ExportOp op, ExportNode *node) {
    const PoolConfig *config = l->config;
    node->op = op;
    for (int d = 0; d < 2; d++) {
        node->kernel[d] = config->size[d];
        node->stride[d] = config->stride[d];
        node->dilation[d] = 1;
        node->pad_before[d] = node->pad_after[d] = config->pad[d];
    }
}
