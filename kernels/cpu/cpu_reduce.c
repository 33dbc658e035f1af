// Sums over rows: the bias gradient of a dense layer, shared by the GEMM ops and the fused
// activation-bias backward of cpu_elementwise.c.
#include <stdlib.h>

#include "kernels/cpu/cpu_ops.h"

int cpu_sum_rows(const Backend *b, const SumRowsArgs *args, Status *st) {
    const float *values = args->x;
    float *wide = NULL;
    if (args->x_dtype != DTYPE_F32) {
        TRY(backend_dtype_check(b, args->x_dtype, "sum_rows", st));
        values = wide =
            cpu_widen(args->x, args->x_dtype, (size_t)args->rows * (size_t)args->cols, st);
        if (!wide) return st->code;
    }
    for (int c = 0; c < args->cols; c++)
        args->out[c] = args->beta == 0.0f ? 0.0f : args->beta * args->out[c];
    // Row-by-row keeps the inner loop contiguous so it vectorizes.
    for (int r = 0; r < args->rows; r++) {
        const float *row = values + (size_t)r * args->cols;
        for (int c = 0; c < args->cols; c++) args->out[c] += row[c];
    }
    free(wide);
    return 0;
}

void cpu_register_reduce_ops(Backend *table) { table->sum_rows = cpu_sum_rows; }
