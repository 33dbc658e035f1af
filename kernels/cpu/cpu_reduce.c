// Sums over rows: the bias gradient of a dense layer, shared by the GEMM ops and the fused
// activation-bias backward of cpu_elementwise.c.
#include <stdlib.h>

#include "kernels/cpu/cpu_ops.h"

int cpu_sum_rows(const Backend *b, float *out, const void *x, DType x_dtype, int rows, int cols,
                 float beta, Status *st) {
    const float *values = x;
    float *wide = NULL;
    if (x_dtype != DTYPE_F32) {
        TRY(backend_storage_dtype_check(x_dtype, "sum_rows", st));
        values = wide = cpu_widen(x, x_dtype, (size_t)rows * (size_t)cols, st);
        if (!wide) return st->code;
    }
    for (int c = 0; c < cols; c++) out[c] = beta == 0.0f ? 0.0f : beta * out[c];
    // Row-by-row keeps the inner loop contiguous so it vectorizes.
    for (int r = 0; r < rows; r++) {
        const float *row = values + (size_t)r * cols;
        for (int c = 0; c < cols; c++) out[c] += row[c];
    }
    free(wide);
    return 0;
}
