// The same bug in host C: a message built from memory just freed. clang's static
// analyzer must report it (GCC 12 does too, at -Wuse-after-free=3).
#include <stdio.h>
#include <stdlib.h>

int sample_first_repeat(const int *devices, int count, char *message, size_t size) {
    int *ordinals = calloc((size_t)count, sizeof *ordinals);
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
