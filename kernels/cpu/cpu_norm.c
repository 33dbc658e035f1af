#include "kernels/cpu/cpu_ops.h"

// Double accumulation: a float tensor's sum of squares cannot overflow a double, so only
// a NaN or infinite element makes the sum non-finite, and the norm of millions of
// gradients keeps its low bits.
static int cpu_sum_squares(const Backend *b, const float *x, size_t n, double *sum, Status *st) {
    double total = 0.0;
    for (size_t i = 0; i < n; i++) total += (double)x[i] * (double)x[i];
    *sum = total;
    return 0;
}

static int cpu_scale(const Backend *b, float *x, float factor, size_t n, Status *st) {
    for (size_t i = 0; i < n; i++) x[i] *= factor;
    return 0;
}

void cpu_register_norm_ops(Backend *table) {
    table->sum_squares = cpu_sum_squares;
    table->scale = cpu_scale;
}
