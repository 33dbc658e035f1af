// One image file as one sample: PNG or JPEG, told apart by their first bytes, converted to
// the model's channels, resized when asked (data/image.h).
#define _POSIX_C_SOURCE 200809L

#include "data/image.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Whether PATH starts as a JPEG does (FF D8 FF). Anything else, a file that cannot be
// opened included, goes to png.c, which says what is wrong ("not a PNG file: it looks like
// a GIF", "cannot open"). Opened without blocking and only when regular: a FIFO would hang.
static int looks_like_jpeg(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return 0;
    unsigned char sig[3] = {0};
    ssize_t n = read(fd, sig, sizeof sig);
    close(fd);
    return n == 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF;
}

int image_decode(const char *path, int width, int height, ImagePixels *out, Status *st) {
    if (looks_like_jpeg(path)) return jpeg_decode(path, width, height, out, st);
    return png_decode(path, width, height, out, st);
}

int image_read_size(const char *path, int *width, int *height, Status *st) {
    if (looks_like_jpeg(path)) return jpeg_read_size(path, width, height, st);
    return png_read_size(path, width, height, st);
}

// ---- resizing: a separable triangle filter, one pass along each axis ----

// The weights of one output coordinate: taps first .. first+count-1 of the input.
typedef struct Taps {
    int first, count;
    float *weights;  // count of them, summing to 1
} Taps;

static float triangle(float x) {
    x = fabsf(x);
    return x < 1.0f ? 1.0f - x : 0.0f;
}

// An axis's taps and the weights they point into, one allocation each.
typedef struct AxisTaps {
    Taps *taps;
    float *weights;
} AxisTaps;

static void axis_taps_free(AxisTaps *axis) {
    free(axis->taps);
    free(axis->weights);
}

// A request of `bytes`: its memory, or NULL with *failed set to `bytes`, the size the
// out-of-memory message names.
static void *allocate(size_t bytes, size_t *failed) {
    void *p = malloc(bytes);
    if (!p) *failed = bytes;
    return p;
}

// The taps of every output coordinate along an axis of `in` samples resized to `out`:
// centred where the output pixel's centre falls in the input, the triangle widened by
// the scale when shrinking (support = scale input pixels each side). Edges are clamped
// by leaving the taps outside out and renormalizing. PIL's precompute_coeffs, in floats.
// Returns 0, or the bytes of the allocation that failed.
static size_t axis_taps(int in, int out, AxisTaps *axis) {
    double scale = (double)in / out;
    double widen = scale > 1.0 ? scale : 1.0;
    int max_count = (int)ceil(widen) * 2 + 1;
    size_t failed = 0;
    axis->taps = allocate((size_t)out * sizeof *axis->taps, &failed);
    if (!failed)
        axis->weights = allocate((size_t)out * max_count * sizeof *axis->weights, &failed);
    if (failed) return failed;
    for (int o = 0; o < out; o++) {
        double centre = (o + 0.5) * scale;
        int first = (int)(centre - widen + 0.5), last = (int)(centre + widen + 0.5);
        if (first < 0) first = 0;
        if (last > in) last = in;
        Taps *t = &axis->taps[o];
        t->first = first;
        t->count = last - first;
        t->weights = axis->weights + (size_t)o * max_count;
        float sum = 0.0f;
        for (int k = 0; k < t->count; k++) {
            t->weights[k] = triangle((float)((first + k - centre + 0.5) / widen));
            sum += t->weights[k];
        }
        for (int k = 0; k < t->count; k++) t->weights[k] = sum > 0 ? t->weights[k] / sum : 0;
    }
    return 0;
}

// One plane: rows first (in_height x out_width into `middle`), then columns.
static void resize_plane(const float *in, int in_height, int in_width, const Taps *across,
                         const Taps *down, float *middle, float *out, int out_height,
                         int out_width) {
    for (int y = 0; y < in_height; y++)
        for (int x = 0; x < out_width; x++) {
            const Taps *t = &across[x];
            const float *row = in + (size_t)y * in_width + t->first;
            float v = 0.0f;
            for (int k = 0; k < t->count; k++) v += t->weights[k] * row[k];
            middle[(size_t)y * out_width + x] = v;
        }
    for (int y = 0; y < out_height; y++) {
        const Taps *t = &down[y];
        for (int x = 0; x < out_width; x++) {
            float v = 0.0f;
            for (int k = 0; k < t->count; k++)
                v += t->weights[k] * middle[(size_t)(t->first + k) * out_width + x];
            out[(size_t)y * out_width + x] = v;
        }
    }
}

// A side of "HxW": digits alone (no sign or space, which strtol would take), ending at *end.
static int size_side(const char *text, char **end) {
    if (*text < '0' || *text > '9') return 0;
    errno = 0;
    long side = strtol(text, end, 10);
    return !errno && side >= 1 && side <= IMAGE_SIDE_MAX ? (int)side : 0;
}

int image_size_parse(const char *text, int *height, int *width) {
    char *end = NULL;
    int h = size_side(text, &end), w = 0;
    if (h && *end == 'x') w = size_side(end + 1, &end);
    if (!w || *end) return 0;
    *height = h;
    *width = w;
    return 1;
}

int image_resize(const float *in, int channels, int in_height, int in_width, float *out,
                 int out_height, int out_width, Status *st) {
    AxisTaps across = {0}, down = {0};
    float *middle = NULL;
    size_t failed = axis_taps(in_width, out_width, &across);
    if (!failed) failed = axis_taps(in_height, out_height, &down);
    if (!failed) middle = allocate((size_t)in_height * out_width * sizeof *middle, &failed);
    if (!failed)
        for (int c = 0; c < channels; c++)
            resize_plane(in + (size_t)c * in_height * in_width, in_height, in_width,
                         across.taps, down.taps, middle,
                         out + (size_t)c * out_height * out_width, out_height, out_width);
    axis_taps_free(&across);
    axis_taps_free(&down);
    free(middle);
    if (failed)
        return status_out_of_host_memory(st, failed, "resizing a %dx%d image to %dx%d (HxW)",
                                         in_height, in_width, out_height, out_width);
    return 0;
}

// ---- one sample ----

static int refuse_channels(const char *path, int channels, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "an image gives 1 (gray) or 3 (RGB) "
                   "channels, but the model takes %d", channels);
    status_hint(st, "use a model whose input is 1xHxW or 3xHxW");
    return STATUS_BAD_INPUT;
}

static int refuse_size(const char *path, const ImagePixels *image, int height, int width,
                       int resize, Status *st) {
    if (resize) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "image is %dx%d pixels (WxH), more "
                       "than the %lld megapixels resized at most", image->width, image->height,
                       IMAGE_MAX_PIXELS / 1000000);
        status_hint(st, "shrink the image first, e.g. `convert IMAGE -resize %dx%d! out.png`",
                    width, height);
        return STATUS_BAD_INPUT;
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "image is %dx%d pixels (WxH), but the "
                   "model takes %dx%d", image->width, image->height, width, height);
    status_hint(st, "add --resize model to resize images as they are read, or resize the "
                    "image to %dx%d, e.g. `convert IMAGE -resize %dx%d! out.png`",
                width, height, width, height);
    return STATUS_BAD_INPUT;
}

// The decoded image as planes at the wanted size: resized through a scratch copy when its
// own size differs.
static int planes_at_size(const ImagePixels *image, int channels, int height, int width,
                          float *out, Status *st) {
    if (image->width == width && image->height == height) {
        image_to_planes(image, channels, out);
        return 0;
    }
    float *own = malloc((size_t)channels * image->width * image->height * sizeof *own);
    if (!own)
        return status_out_of_host_memory(
            st, (size_t)channels * image->width * image->height * sizeof *own, "for a %dx%d image",
            image->width, image->height);
    image_to_planes(image, channels, own);
    int rc = image_resize(own, channels, image->height, image->width, out, height, width, st);
    free(own);
    return rc;
}

// Decodes PATH for a sample of channels x height x width: the image itself, or a refusal
// (channels, another size without resize, too large to resize).
static int decode_for_sample(const char *path, int channels, int height, int width,
                             int resize, ImagePixels *image, Status *st) {
    if (channels != 1 && channels != 3) return refuse_channels(path, channels, st);
    TRY(image_decode(path, resize ? 0 : width, resize ? 0 : height, image, st));
    if (image->pixels) return 0;
    return refuse_size(path, image, height, width, resize, st);
}

// Gray as gray or RGB, and opaque RGB as RGB, at their own size: each value is one of the
// file's bytes (v / 255 as a float), with no arithmetic between.
static int bytes_as_stored(const ImagePixels *image, int channels, int height, int width) {
    return image->width == width && image->height == height &&
           (image->samples == 1 || (image->samples == 3 && channels == 3));
}

int image_read_sample(const char *path, int channels, int height, int width, int resize,
                      float *out, Status *st) {
    ImagePixels image;
    TRY(decode_for_sample(path, channels, height, width, resize, &image, st));
    int rc = planes_at_size(&image, channels, height, width, out, st);
    int whole = bytes_as_stored(&image, channels, height, width);
    free(image.pixels);
    // Whole 255ths, as a dataset keeps them (one byte a value): `predict` then sees what
    // training saw, resized or converted to luminance alike.
    size_t values = (size_t)channels * height * width;
    for (size_t i = 0; !rc && !whole && i < values; i++)
        out[i] = (float)lrintf(out[i] * 255.0f) / 255.0f;
    return rc;
}

int image_read_bytes(const char *path, int channels, int height, int width, int resize,
                     float *scratch, uint8_t *out, Status *st) {
    ImagePixels image;
    TRY(decode_for_sample(path, channels, height, width, resize, &image, st));
    size_t plane = (size_t)width * height;
    int rc = 0;
    if (bytes_as_stored(&image, channels, height, width)) {
        // The bytes as they are, planar (gray replicated into R, G and B).
        for (int c = 0; c < channels; c++)
            for (size_t i = 0; i < plane; i++)
                out[c * plane + i] = image.pixels[i * (size_t)image.samples +
                                                  (image.samples == 3 ? (size_t)c : 0)];
    } else {
        rc = planes_at_size(&image, channels, height, width, scratch, st);
        // The nearest byte, as image_read_sample's 255ths.
        for (size_t i = 0; !rc && i < (size_t)channels * plane; i++)
            out[i] = (uint8_t)lrintf(scratch[i] * 255.0f);
    }
    free(image.pixels);
    return rc;
}
