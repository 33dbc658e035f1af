#include <cblas.h>

#include "kernels/cpu/cpu_ops.h"

int cpu_gemm(const Backend *b, const GemmArgs *g, const float *a, const float *bm, float *c,
             Status *st) {
    cblas_sgemm(CblasRowMajor, g->transpose_a ? CblasTrans : CblasNoTrans,
                g->transpose_b ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, g->alpha, a, g->lda,
                bm, g->ldb, g->beta, c, g->ldc);
    return 0;
}

void gemm_reference(int transpose_a, int transpose_b, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *bm, int ldb, float beta, float *c,
                    int ldc) {
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int p = 0; p < k; p++) {
                float av = transpose_a ? a[p * lda + i] : a[i * lda + p];
                float bv = transpose_b ? bm[j * ldb + p] : bm[p * ldb + j];
                sum += (double)av * bv;
            }
            // beta == 0 must ignore C entirely (it may hold NaN garbage), as BLAS does.
            c[i * ldc + j] = (float)(alpha * sum + (beta == 0.0f ? 0.0 : beta * c[i * ldc + j]));
        }
    }
}

int cpu_add_bias_rows(const Backend *b, float *y, const float *bias, int rows, int cols, Status *st) {
    for (int r = 0; r < rows; r++) {
        float *row = y + (size_t)r * cols;
        for (int c = 0; c < cols; c++) row[c] += bias[c];
    }
    return 0;
}

// The reference is the three unfused ops in turn, so a model trains to the same bits with
// fusion on or off on the CPU. A C with padding columns (ldc > n) is walked row by row,
// since add_bias_rows and activation_forward take packed rows.
int cpu_gemm_bias_activation(const Backend *b, const GemmArgs *g, const float *a, const float *bm,
                             const float *bias, const FusedActivation *act, float *c,
                             Status *st) {
    TRY(cpu_gemm(b, g, a, bm, c, st));
    int packed = g->ldc == g->n;
    for (int r = 0; r < (packed ? 1 : g->m); r++) {
        float *rows = c + (size_t)r * g->ldc;
        int count = packed ? g->m : 1;
        if (bias) TRY(cpu_add_bias_rows(b, rows, bias, count, g->n, st));
        if (act->apply)
            TRY(cpu_activation_forward(b, act->kind, act->slope, rows, rows,
                                       (size_t)count * (size_t)g->n, st));
    }
    return 0;
}

int cpu_sum_rows(const Backend *b, float *out, const float *x, int rows, int cols, float beta,
                 Status *st) {
    for (int c = 0; c < cols; c++) out[c] = beta == 0.0f ? 0.0f : beta * out[c];
    // Row-by-row keeps the inner loop contiguous so it vectorizes.
    for (int r = 0; r < rows; r++) {
        const float *row = x + (size_t)r * cols;
        for (int c = 0; c < cols; c++) out[c] += row[c];
    }
    return 0;
}

int cpu_accumulate(const Backend *b, float *y, const float *x, size_t n, Status *st) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
    return 0;
}
