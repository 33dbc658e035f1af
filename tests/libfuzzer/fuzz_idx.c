// libFuzzer target for the IDX reader (data/idx.c), raw and gzip-compressed: the first byte
// picks idx_read_images (even) or idx_read_labels (odd), the rest is the file, which zlib's
// gzread takes as .gz or as plain bytes by its content. Whatever the bytes: no crash, no
// read outside them, no leak, a refusal is STATUS_BAD_INPUT in words, and an accepted
// file's promised pixels or labels are all there.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int labels = data[0] & 1;
    const char *path = fuzz_write(labels ? "labels-idx1-ubyte" : "images-idx3-ubyte",
                                  data + 1, size - 1);
    Status st;
    status_clear(&st);
    uint8_t *values = NULL;
    int count = 0, rows = 1, cols = 1;
    int rc = labels ? idx_read_labels(path, &values, &count, &st)
                    : idx_read_images(path, &values, &count, &rows, &cols, &st);
    if (rc == 0) {
        if (count <= 0 || rows <= 0 || cols <= 0 || !values) abort();
        // Every byte read, so ASan sees a buffer shorter than the header's claim.
        size_t n = (size_t)count * rows * cols;
        unsigned sum = 0;
        for (size_t i = 0; i < n; i++) sum += values[i];
        fuzz_sink = sum;  // fuzz_files.h
        free(values);
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    return 0;
}
