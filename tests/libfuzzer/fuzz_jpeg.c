// libFuzzer target for the JPEG decoder behind images:DIR and predict (data/jpeg.c, through
// libjpeg): the input is one file, read as the folder reader does (image_read_size, then
// image_read_sample) at its own size in 1 and 3 channels, and resized to 28x28. Whatever
// the bytes: no crash, no exit() from libjpeg, no leak on its longjmp, a refusal is
// STATUS_BAD_INPUT in words, an accepted image's values are all written and in [0, 1], and
// its bytes (image_read_bytes, what a dataset keeps) are those values times 255.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"

// Decoding is the cost of an input: larger images are only checked as far as their header.
#define FUZZ_JPEG_MAX_PIXELS (256 * 256)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b)) abort();
}

// The sample as floats, then as the bytes a dataset keeps: the same values times 255.
static void check_sample(const char *path, int channels, int height, int width, int resize,
                         float *values, float *scratch, uint8_t *bytes) {
    size_t n = (size_t)channels * width * height;
    for (size_t i = 0; i < n; i++) values[i] = -1.0f;  // what is not written stays out
    Status st;
    status_clear(&st);
    int rc = image_read_sample(path, channels, height, width, resize, values, &st);
    if (rc) {
        check_refusal(rc, &st);  // damage after the header: refused, not crashed
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!(values[i] >= 0.0f && values[i] <= 1.0f)) abort();
    if (image_read_bytes(path, channels, height, width, resize, scratch, bytes, &st)) abort();
    for (size_t i = 0; i < n; i++)
        if (bytes[i] != (uint8_t)lrintf(values[i] * 255.0f)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("image.jpg", data, size);
    Status st;
    status_clear(&st);
    int width = 0, height = 0;
    int rc = image_read_size(path, &width, &height, &st);
    if (rc) {
        check_refusal(rc, &st);
        return 0;
    }
    if (width <= 0 || height <= 0) abort();
    if ((long long)width * height > FUZZ_JPEG_MAX_PIXELS) return 0;
    size_t most = 3 * (size_t)(width * height > 784 ? width * height : 784);
    float *values = malloc(most * sizeof *values), *scratch = malloc(most * sizeof *scratch);
    uint8_t *bytes = malloc(most);
    if (!values || !scratch || !bytes) abort();
    for (int channels = 1; channels <= 3; channels += 2) {
        check_sample(path, channels, height, width, 0, values, scratch, bytes);
        check_sample(path, channels, 28, 28, 1, values, scratch, bytes);
    }
    free(values);
    free(scratch);
    free(bytes);
    return 0;
}
