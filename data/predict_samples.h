// predict's samples on the host: images decoded as the model's input takes them, and
// normalized as the training samples were; or a dataset's samples read as eval reads them.
#ifndef TRAINER_PREDICT_SAMPLES_H
#define TRAINER_PREDICT_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "data/dataset.h"
#include "data/transform.h"

// How images become the model's input: channels x height x width, or a gray image of
// any size whose pixel count equals a vector input's length (flat_values > 0).
typedef struct ImageInput {
    int channels, height, width;
    int flat_values;
    int resize_height, resize_width;  // --resize: every image resized to this; 0: none
} ImageInput;

// The image at `path` into `out` (one sample of floats in [0, 1]); a wrong size is
// STATUS_BAD_INPUT naming the path, with a hint.
int predict_read_image(const char *path, const ImageInput *in, float *out, Status *st);
// `count` samples of `sample` floats, `channels` planes each, rounded to bytes and mapped
// by `n` (NULL entries: none) as training maps its bytes.
void predict_normalize_images(float *images, int count, size_t sample, int channels,
                              const Normalization *n);
// The first `count` samples of `data` in order, normalized by `n`, with their labels.
int predict_gather_samples(Dataset *data, int count, const Normalization *n, float *images,
                           int32_t *labels, Status *st);

#endif
