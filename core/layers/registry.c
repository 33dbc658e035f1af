// The model file's kind word maps to exactly one LayerKind here (Caffe's registry idea,
// without macros): adding a layer is one file plus one line in each table below.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/layer.h"

extern const LayerKind layer_input, layer_flatten, layer_dense, layer_activation, layer_dropout;
extern const LayerKind layer_loss_softmax_cross_entropy, layer_loss_mse;
extern const LayerKind layer_conv2d, layer_maxpool, layer_avgpool, layer_global_avgpool;
extern const LayerKind layer_batchnorm, layer_add, layer_reshape;

// Statement word -> kind. The activations share one kind under five spellings.
static const struct {
    const char *name;
    const LayerKind *kind;
} layer_table[] = {
    {"input", &layer_input},
    {"flatten", &layer_flatten},
    {"dense", &layer_dense},
    {"dropout", &layer_dropout},
    {"conv2d", &layer_conv2d},
    {"maxpool", &layer_maxpool},
    {"avgpool", &layer_avgpool},
    {"global_avgpool", &layer_global_avgpool},
    {"batchnorm", &layer_batchnorm},
    {"add", &layer_add},
    {"reshape", &layer_reshape},
    {"act", &layer_activation},
    {"relu", &layer_activation},
    {"leaky_relu", &layer_activation},
    {"sigmoid", &layer_activation},
    {"tanh", &layer_activation},
    {"gelu", &layer_activation},
};
enum { LAYER_TABLE_SIZE = sizeof layer_table / sizeof layer_table[0] };

const char *const loss_kind_names[] = {"softmax_cross_entropy", "mse", NULL};

const char *layer_kind_word(int index) {
    return index >= 0 && index < LAYER_TABLE_SIZE ? layer_table[index].name : NULL;
}

const LayerKind *layer_kind_find(const char *name) {
    for (int i = 0; i < LAYER_TABLE_SIZE; i++)
        if (strcmp(layer_table[i].name, name) == 0) return layer_table[i].kind;
    return NULL;
}

const char *layer_kinds_keeping_f32(char *buf, size_t size) {
    size_t used = 0;
    if (size) buf[0] = '\0';
    for (int i = 0; i < LAYER_TABLE_SIZE; i++) {
        const LayerKind *kind = layer_table[i].kind;
        int seen = 0;  // the activations share one kind under several words
        for (int j = 0; j < i; j++) seen |= layer_table[j].kind == kind;
        if (seen || kind->stores_16bit || kind->output_is_view || kind->input_count == 0 ||
            used >= size)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", layer_table[i].name);
        if (n > 0) used += (size_t)n;
    }
    return buf;
}

const LayerKind *loss_kind_find(const char *choice) {
    if (strcmp(choice, "softmax_cross_entropy") == 0) return &layer_loss_softmax_cross_entropy;
    if (strcmp(choice, "mse") == 0) return &layer_loss_mse;
    return NULL;
}

int layer_fail(const Layer *l, Status *st, const char *fmt, ...) {
    char message[sizeof st->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, l->column, "%s", message);
}

int layer_read_shape(const Layer *l, const ModelStatement *s, const char *missing_hint, Shape *out,
                     int *column, Status *st) {
    const ModelAttr *shape = model_attr_find(s, "shape");
    if (!shape) {
        layer_fail(l, st, "%s needs shape=, the shape of one sample", s->kind);
        status_hint(st, "%s", missing_hint);
        return STATUS_BAD_INPUT;
    }
    char why[160];
    if (shape_parse(shape->value, out, why, sizeof why)) {
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, shape->value_column,
                       "shape=%s is not a shape: %s", shape->value, why);
        status_hint(st, "write CxHxW for images (1x28x28) or N for vectors (784)");
        return STATUS_BAD_INPUT;
    }
    *column = shape->value_column;
    return 0;
}

size_t layer_batch_tensor_bytes(int batch, const Shape *sample, size_t element_size) {
    return alloc_charged_bytes((size_t)batch * shape_numel(sample) * element_size);
}

int layer_images_convert(const Layer *images, const LayerContext *ctx, Layout from,
                         const void *src, void *dst, int accumulate, Status *st) {
    const Shape *s = &images->out_shape;
    return ctx->backend->layout_convert(ctx->backend, &(LayoutConvertArgs){
                                        .dtype = images->out_dtype, .n = ctx->batch,
                                        .channels = s->dims[0], .pixels = s->dims[1] * s->dims[2],
                                        .from = from, .src = src, .dst = dst,
                                        .accumulate = accumulate}, st);
}

int layer_plans_nothing(const Layer *l, const Backend *b, int batch, size_t *state,
                        size_t *workspace, Status *st) {
    (void)l, (void)b, (void)batch, (void)st;
    *state = *workspace = 0;
    return 0;
}
