// Opening the CUDA backend in a GPU test, or skipping the test: ctest reads exit code 77 as
// skipped, so a machine without a usable GPU (this one included: no driver, no device)
// passes the GPU tests by skipping them, while any other failure to open still fails.
//
// Every function is `static inline`, so a test that uses only part of it still compiles
// cleanly with -Wall -Wextra -Werror.
#ifndef TRAINER_TESTS_GPU_CUDA_OR_SKIP_H
#define TRAINER_TESTS_GPU_CUDA_OR_SKIP_H

#include "base/precision.h"
#include "kernels/cuda/cuda_backend.h"

#include <stdio.h>

// What main() returns first: 0 when device 0 opens (the probe is closed again), 77 (skip)
// when there is no usable CUDA device, 1 for any other failure to open.
static inline int cuda_probe_or_skip(void) {
    Status st;
    status_clear(&st);
    const Backend *probe = NULL;
    CudaBackendOptions plain = {.ordinal = 0};
    if (!cuda_backend_open(&plain, &probe, &st)) {
        cuda_backend_close(probe);
        return 0;
    }
    char text[2048];
    status_format(&st, text, sizeof text);
    if (st.code == STATUS_NO_DEVICE) {
        printf("skipped: no usable CUDA backend: %s", text);
        return 77;
    }
    fprintf(stderr, "cuda_backend_open: %s", text);
    return 1;
}

// Opens device 0 in `precision` with `disabled_levers` off into *out: 0, or 77 when it
// will not open in it (bf16 below compute capability 8.0), said under `label`.
static inline int cuda_open_in_or_skip(Precision precision, unsigned disabled_levers,
                                       const char *label, const Backend **out) {
    CudaBackendOptions options = {.ordinal = 0, .precision = precision,
                                  .disabled_levers = disabled_levers};
    Status st;
    status_clear(&st);
    if (!cuda_backend_open(&options, out, &st)) return 0;
    char text[2048];
    status_format(&st, text, sizeof text);
    printf("%s skipped: %s", label, text);
    return 77;
}

#endif
