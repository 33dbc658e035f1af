// libFuzzer target for the PNG decoder behind png:DIR (data/png.c, through libpng): the input
// is one image file, read as the folder reader does (png_read_size, then png_read_sample)
// and converted to 1 and to 3 channels. Whatever the bytes: no crash, no read outside them,
// no leak (libpng longjmps out of damage), a refusal is STATUS_BAD_INPUT in words, and an
// accepted image's values are all written and in [0, 1].
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"

// Decoding is the cost of an input: larger images (a header may claim 1,000,000 x 1,000,000)
// are only checked as far as their header, to keep the fuzzer's executions per second up.
#define FUZZ_PNG_MAX_PIXELS (256 * 256)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("image.png", data, size);
    Status st;
    status_clear(&st);
    int width = 0, height = 0;
    int rc = png_read_size(path, &width, &height, &st);
    if (rc) {
        check_refusal(rc, &st);
        return 0;
    }
    if (width <= 0 || height <= 0) abort();
    if ((long long)width * height > FUZZ_PNG_MAX_PIXELS) return 0;
    float *values = malloc(3 * (size_t)width * height * sizeof *values);
    if (!values) abort();
    for (int channels = 1; channels <= 3; channels += 2) {
        size_t n = (size_t)channels * width * height;
        for (size_t i = 0; i < n; i++) values[i] = -1.0f;  // what is not written stays out
        status_clear(&st);
        rc = png_read_sample(path, channels, height, width, values, &st);
        if (rc) {
            check_refusal(rc, &st);  // damage after the header: refused, not crashed
            continue;
        }
        for (size_t i = 0; i < n; i++)
            if (!(values[i] >= 0.0f && values[i] <= 1.0f)) abort();
    }
    free(values);
    return 0;
}
