// Single images read from PNG files (libpng), as one sample for a model.
//
// Every PNG colour type and depth is accepted: gray, gray+alpha, RGB, RGBA and palette
// (with or without tRNS transparency), 1/2/4/8/16 bits per sample, interlaced or not.
// libpng expands it to 8 bits per sample (16-bit samples are scaled, v/257 rounded; a
// palette image's indices are looked up by png.c, which refuses an index past the PLTE's
// entries), then it becomes the model's channel count:
//   1 channel   gray as is; colour becomes luminance 0.299 R + 0.587 G + 0.114 B
//   3 channels  RGB as is; gray is replicated into R, G and B
// Alpha is composited over black (value * alpha / 255): a transparent pixel reads as 0,
// the background of MNIST-style data. No gamma correction is applied (gAMA/sRGB/iCCP
// are ignored): sample values are used as stored.
#ifndef TRAINER_IMAGE_H
#define TRAINER_IMAGE_H

#include <stdint.h>

#include "base/status.h"

// Decodes PATH into `out`: channels * height * width floats in [0, 1], CHW layout
// (all of channel 0, then channel 1, ...). `channels` must be 1 or 3. The image must be
// exactly width x height pixels. A missing file, a file that is not a PNG, a damaged
// or cut-short PNG, a palette index past the palette and a size mismatch are
// STATUS_BAD_INPUT with the file in st->file, what was found (libpng's own message for
// damage; the largest index and the entry count; both sizes for a mismatch) and a hint.
int png_read_sample(const char *path, int channels, int height, int width, float *out,
                    Status *st);

// Reads only the header of PATH: its size in pixels. Fails like png_read_sample.
int png_read_size(const char *path, int *width, int *height, Status *st);

// Writes PATH as an 8-bit PNG (data/png_write.c): `pixels` holds height rows of
// width * channels bytes, interleaved (1 channel: gray; 3: R, G, B). A file that cannot be
// created is STATUS_BAD_INPUT, a failed write STATUS_RUNTIME_ERROR (the partial file is
// removed); both name the file.
int image_write_png(const char *path, int channels, int height, int width,
                    const uint8_t *pixels, Status *st);

#endif
