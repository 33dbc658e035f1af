// What conv2d and the pooling layers share: reading `k` / `HxW` sizes from the model
// file, requiring a CxHxW input, and the window arithmetic that decides the output size,
// with the errors that name the sizes when a window does not fit.
#ifndef TRAINER_WINDOW_COMMON_H
#define TRAINER_WINDOW_COMMON_H

#include "core/layer.h"

// `key=N` or `key=HxW`, each side in [min, max]; absent, both sides are `fallback`.
int window_attr_pair(const char *path, const ModelStatement *s, const char *key, int fallback,
                     int min, int max, int out[2], Status *st);
// Column of `key`'s key in the statement, or `fallback` when the statement lacks it.
int window_key_column(const ModelStatement *s, const char *key, int fallback);
// "5" for a square pair, "3x5" otherwise.
const char *window_pair_text(const int pair[2], char *buf, size_t size);

// The layer's input must be an image (CxHxW). Otherwise a BAD_INPUT error at the layer
// whose hint proposes a shape for the values it got ("use `input shape=1x28x28`").
int window_require_image(const Layer *l, Status *st);

// One window over an image: the kernel or pooling size as written, its dilation, the
// stride and the zero padding before (top/left) and after (bottom/right).
typedef struct WindowSpec {
    const char *key;       // "kernel" or "size": what the user wrote, for messages
    int size[2], dilation[2], stride[2];
    int pad_before[2], pad_after[2];
    const char *pad_text;  // "pad=1", "pad=same": how the padding was asked for
    int column;            // where a misfit is reported
    const char *hint;
} WindowSpec;

// Output height and width of `w` over the layer's CxHxW input. A window that spans more
// than the padded input would leave an empty output: a BAD_INPUT error that names the
// window, the padding and the input's shape.
int window_output_size(const Layer *l, const WindowSpec *w, int out[2], Status *st);

#endif
