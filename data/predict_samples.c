#include "data/predict_samples.h"

#include <math.h>
#include <stdio.h>

#include "data/image.h"

int predict_read_image(const char *path, const ImageInput *in, float *out, Status *st) {
    // The reader, resize and rounding an images:DIR dataset goes through (data/image.c).
    if (in->resize_height)
        return image_read_sample(path, in->channels, in->resize_height, in->resize_width, 1,
                                 out, st);
    if (!in->flat_values)
        return image_read_sample(path, in->channels, in->height, in->width, 0, out, st);
    int width = 0, height = 0;
    TRY(image_read_size(path, &width, &height, st));
    if ((long)width * height != in->flat_values) {
        int side = (int)lround(sqrt((double)in->flat_values));
        if ((long)side * side == in->flat_values) {
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "image is %dx%d pixels (WxH), but the model takes %dx%d (input "
                           "shape=%d)", width, height, side, side, in->flat_values);
            status_hint(st, "add --resize model (as the model trained with it), or resize the "
                            "image to %dx%d, e.g. `convert IMAGE -resize %dx%d! out.png`",
                        side, side, side, side);
        } else {
            // No square holds N pixels: the model reads N numbers a row, as a csv: table
            // trains it, and no image fits (a 2x1 image is no answer).
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "the model takes %d numbers a sample (input shape=%d), not an "
                           "image: it was trained on a table (csv:), and predict reads PNG "
                           "images", in->flat_values, in->flat_values);
            status_hint(st, "measure it on rows of a table: trainer eval MODEL --weights FILE "
                            "--data csv:FILE");
        }
        return STATUS_BAD_INPUT;
    }
    return image_read_sample(path, 1, height, width, 0, out, st);
}

// value' = (value - mean[c]) / std[c], by what the weights file records (or the model's
// given values).
void predict_normalize_images(float *images, int count, size_t sample, int channels,
                              const Normalization *n) {
    size_t plane = sample / (size_t)channels;
    // As training reads images: each value rounded to a byte (a dataset keeps bytes; the
    // luminance of colour and alpha compositing fall between them), then the byte mapped
    // as the gather op maps it. The decoded floats, normalized, differed in the last bits,
    // and by up to half a byte's step, from what the model saw in training.
    for (int i = 0; i < count; i++)
        for (int c = 0; c < channels; c++) {
            float *values = images + (size_t)i * sample + (size_t)c * plane;
            float scale, shift;
            byte_scale_shift(n->count ? n : NULL, c, &scale, &shift);
            for (size_t p = 0; p < plane; p++)
                values[p] = (float)(uint8_t)lrintf(values[p] * 255.0f) * scale + shift;
        }
}

// The batch came back short without a failure of the dataset's own: the count asked is
// past what the dataset holds, which the caller should not have asked.
static int short_read(const Dataset *data, int got, int count, Status *st) {
    status_fail(st, STATUS_RUNTIME_ERROR, "could not read the --data samples");
    status_hint(st, "%d of the %d samples asked were read, of a dataset of %d; this is a "
                "trainer bug: report it with the command that ran", got, count, data->count);
    return STATUS_RUNTIME_ERROR;
}

// --data's samples as evaluation reads them: one batch of all, normalized by `n`.
int predict_gather_samples(Dataset *data, int count, const Normalization *n, float *images,
                           int32_t *labels, Status *st) {
    Batcher batcher;
    TRY(batcher_init(&batcher, data, count, 0, 0, st));
    DataTransform transform = {.normalization = n->count ? n : NULL};
    int rc = batcher_set_transform(&batcher, &transform, st);
    batcher_start_epoch(&batcher, 0);
    int got = rc ? 0 : batcher_next(&batcher, images, labels);
    if (!rc && got != count) {
        *st = batcher.failure;
        rc = st->code ? (int)st->code : short_read(data, got, count, st);
    }
    batcher_free(&batcher);
    return rc;
}
