#include "core/layers/window_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_side(const char *text, const char **end, long *out) {
    char *stop = NULL;
    if (*text < '0' || *text > '9') return -1;  // no sign, no space
    errno = 0;
    *out = strtol(text, &stop, 10);
    *end = stop;
    return errno == ERANGE ? -1 : 0;
}

int window_attr_pair(const char *path, const ModelStatement *s, const char *key, int fallback,
                     int min, int max, int out[2], Status *st) {
    out[0] = out[1] = fallback;
    const ModelAttr *a = model_attr_find(s, key);
    if (!a) return 0;
    if (!strchr(a->value, 'x')) {
        long value;
        TRY(model_attr_int(path, s, key, fallback, min, max, &value, st));
        out[0] = out[1] = (int)value;
        return 0;
    }
    long h = 0, w = 0;
    const char *end = a->value;
    int bad = parse_side(a->value, &end, &h) || *end != 'x' || parse_side(end + 1, &end, &w) ||
              *end != '\0';
    if (bad) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->value_column,
                       "%s=%s is not a size", key, a->value);
        status_hint(st, "write one number for a square (%s=3) or HxW (%s=3x5)", key, key);
        return STATUS_BAD_INPUT;
    }
    if (h < min || h > max || w < min || w > max) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->value_column,
                       "%s=%s is out of range: each side must lie in [%d, %d]", key, a->value,
                       min, max);
        status_hint(st, "%s takes one whole number or HxW, each in [%d, %d]", key, min, max);
        return STATUS_BAD_INPUT;
    }
    out[0] = (int)h;
    out[1] = (int)w;
    return 0;
}

int window_key_column(const ModelStatement *s, const char *key, int fallback) {
    const ModelAttr *a = model_attr_find(s, key);
    return a ? a->key_column : fallback;
}

const char *window_pair_text(const int pair[2], char *buf, size_t size) {
    if (pair[0] == pair[1]) snprintf(buf, size, "%d", pair[0]);
    else snprintf(buf, size, "%dx%d", pair[0], pair[1]);
    return buf;
}

// n = side * side for a whole side, else 0.
static int square_side(size_t n) {
    size_t side = (size_t)llround(sqrt((double)n));
    return side * side == n && side > 0 ? (int)side : 0;
}

int window_require_image(const Layer *l, Status *st) {
    const Layer *in = l->inputs[0];
    if (in->out_shape.rank == 3) return 0;
    char shape[64], image[64] = "";
    size_t n = shape_numel(&in->out_shape);
    // Propose the image these values most likely are: gray if they make a square, RGB if
    // a third of them do.
    if (square_side(n)) snprintf(image, sizeof image, "1x%dx%d", square_side(n), square_side(n));
    else if (n % 3 == 0 && square_side(n / 3))
        snprintf(image, sizeof image, "3x%dx%d", square_side(n / 3), square_side(n / 3));
    layer_fail(l, st, "%s needs a CxHxW input, but '%s' gives %s", l->kind->name, in->name,
               shape_format(&in->out_shape, shape, sizeof shape));
    int from_input = in->kind->input_count == 0;
    int have_reshape = layer_kind_find("reshape") != NULL;
    if (from_input && image[0])
        status_hint(st, "use `input shape=%s`: shapes are channels x height x width", image);
    else if (from_input)
        status_hint(st, "give the input as channels x height x width, e.g. `input shape=1x28x28`");
    else if (have_reshape)
        status_hint(st, "add `reshape shape=%s` before this layer, or move it before the flatten",
                    image[0] ? image : "CxHxW");
    else
        status_hint(st, "%s works on images: move it before the flatten or dense layers",
                    l->kind->name);
    return STATUS_BAD_INPUT;
}

int window_output_size(const Layer *l, const WindowSpec *w, int out[2], Status *st) {
    const Shape *in = &l->inputs[0]->out_shape;
    int span[2], padded[2];
    for (int d = 0; d < 2; d++) {
        span[d] = w->dilation[d] * (w->size[d] - 1) + 1;
        padded[d] = in->dims[1 + d] + w->pad_before[d] + w->pad_after[d];
    }
    if (span[0] <= padded[0] && span[1] <= padded[1]) {
        for (int d = 0; d < 2; d++) out[d] = (padded[d] - span[d]) / w->stride[d] + 1;
        return 0;
    }
    char size[32], dilation[32], shape[64], span_text[96] = "is larger than";
    snprintf(size, sizeof size, "%dx%d", w->size[0], w->size[1]);
    if (span[0] != w->size[0] || span[1] != w->size[1])
        snprintf(span_text, sizeof span_text, "with dilation=%s spans %dx%d, more than",
                 window_pair_text(w->dilation, dilation, sizeof dilation), span[0], span[1]);
    status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, w->column,
                   "%s %s %s %s the padded input %dx%d (input %s from '%s', %s), so the output "
                   "would be empty",
                   l->kind->name, w->key, size, span_text, padded[0], padded[1],
                   shape_format(in, shape, sizeof shape), l->inputs[0]->name, w->pad_text);
    status_hint(st, "%s", w->hint);
    return STATUS_BAD_INPUT;
}
