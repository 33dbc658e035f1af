// Single images read from PNG files (libpng) and JPEG files (libjpeg, data/jpeg.c), as
// one sample for a model.
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

// The largest image decoded to be resized (--resize): 24 megapixels (6000 x 4000, a
// camera's photo). Without --resize only an image of the model's own size is decoded.
#define IMAGE_MAX_PIXELS (24LL * 1000 * 1000)

// A decoded image: height rows of width * samples bytes, interleaved; samples 1 (gray),
// 2 (gray, alpha), 3 (RGB) or 4 (RGBA). pixels is NULL when the image was not decoded
// (another size than the one asked for, or past IMAGE_MAX_PIXELS); width and height are
// then still its size.
typedef struct ImagePixels {
    int width, height, samples;
    unsigned char *pixels;
} ImagePixels;

// Whether a file's name says it is an image trainer reads: *.png, *.jpg, *.jpeg, any case.
int image_file_name(const char *name);
// Decodes PATH, a PNG or a JPEG told apart by their first bytes (not by the file's name),
// into `out` (the caller frees out->pixels). width, height > 0: decode only an image of
// that size; 0: any size up to IMAGE_MAX_PIXELS. Fails as png_read_sample does.
int image_decode(const char *path, int width, int height, ImagePixels *out, Status *st);
int png_decode(const char *path, int width, int height, ImagePixels *out, Status *st);
int jpeg_decode(const char *path, int width, int height, ImagePixels *out, Status *st);
// Only the header: the image's size in pixels.
int image_read_size(const char *path, int *width, int *height, Status *st);
int jpeg_read_size(const char *path, int *width, int *height, Status *st);
// The failures png.c's and jpeg.c's decoders share, after their own: RC -2 is out of host
// memory (STATUS_RUNTIME_ERROR); any other, the file is damaged as LIBRARY's message
// ERROR says, "cannot decode FORMAT: ERROR (LIBRARY)" with a hint (STATUS_BAD_INPUT).
int image_decode_failed(const char *path, int rc, const char *format, const char *library,
                        const char *error, Status *st);

// PATH (PNG or JPEG) as one sample: `channels` (1 or 3) planes of height x width values
// in [0, 1], each a whole number of 255ths (k / 255.0f, as the bytes a dataset keeps give
// them). `resize` 0: the image must be exactly width x height; 1: an image of another size
// is resized to it with image_resize. The one reader of image folders and of `predict`,
// so that both see the same values.
int image_read_sample(const char *path, int channels, int height, int width, int resize,
                      float *out, Status *st);
// The same sample as bytes (value * 255), what a dataset keeps: image_read_sample's values
// times 255, exactly. An image whose bytes are used as stored (gray, or RGB into 3
// channels, at the size) is copied without going through floats; `scratch` (channels *
// height * width floats) holds the others' planes.
int image_read_bytes(const char *path, int channels, int height, int width, int resize,
                     float *scratch, uint8_t *out, Status *st);
// An image's samples as `channels` planes of floats in [0, 1] (see the top of the file).
void image_to_planes(const ImagePixels *image, int channels, float *out);
// Resizes each of `channels` planes from in_height x in_width to out_height x out_width
// with a triangle (bilinear) filter that is widened by the scale factor when shrinking,
// so that every input pixel counts (antialiased, as PIL's Image.resize(BILINEAR)):
// upscaling is plain bilinear interpolation between pixel centres (edges clamped), and
// shrinking by a whole factor averages with tent weights. Fails only out of memory.
int image_resize(const float *in, int channels, int in_height, int in_width, float *out,
                 int out_height, int out_width, Status *st);
// "HxW" (28x28), each side digits alone from 1 to IMAGE_SIDE_MAX: 1 with *height and *width
// set, else 0. What --resize and the weights' `resize` key spell a size as.
#define IMAGE_SIDE_MAX 65535
int image_size_parse(const char *text, int *height, int *width);
// "bilinear, antialiased when shrinking": the filter as messages and headers name it.
#define IMAGE_RESIZE_FILTER "bilinear (antialiased when shrinking, as PIL's BILINEAR)"

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
