// kernels/cuda/cuda_collective.cu as it broke the build under GCC 13 on an H100
// (2026-11-23): the error message read ordinals[r] after free(ordinals). GCC 12 and
// clang's compiler warnings stay silent; clang's static analyzer must report it.
#include <stdio.h>
#include <stdlib.h>

__global__ void sample_kernel(float *x) { x[threadIdx.x] = 0.0f; }

extern "C" int sample_first_repeat(const int *devices, int count, char *message, size_t size) {
    int *ordinals = (int *)calloc((size_t)count, sizeof *ordinals);
    if (!ordinals) return -1;
    for (int r = 0; r < count; r++) {
        ordinals[r] = devices[r];
        for (int q = 0; q < r; q++) {
            if (ordinals[q] != ordinals[r]) continue;
            free(ordinals);
            snprintf(message, size, "cuda:%d is listed twice", ordinals[r]);
            return 1;
        }
    }
    free(ordinals);
    return 0;
}
