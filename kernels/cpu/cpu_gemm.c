#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_ops.h"

static int cpu_gemm_f32(const GemmArgs *g, const float *a, const float *bm, float *c) {
    cblas_sgemm(CblasRowMajor, g->transpose_a ? CblasTrans : CblasNoTrans,
                g->transpose_b ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, g->alpha, a, g->lda,
                bm, g->ldb, g->beta, c, g->ldc);
    return 0;
}

// Values a stored rows x cols matrix with row stride ld spans (the last row needs only its
// own columns).
static size_t stored_extent(int rows, int cols, int ld) {
    return rows > 0 && cols > 0 ? (size_t)(rows - 1) * (size_t)ld + (size_t)cols : 0;
}

static int all_f32(const GemmArgs *g) {
    return g->a_dtype == DTYPE_F32 && g->b_dtype == DTYPE_F32 && g->c_dtype == DTYPE_F32;
}

static int cpu_add_bias_rows(const Backend *b, const AddBiasRowsArgs *args, Status *st) {
    for (int r = 0; r < args->rows; r++) {
        float *row = args->y + (size_t)r * args->cols;
        for (int c = 0; c < args->cols; c++) row[c] += args->bias[c];
    }
    return 0;
}

// A GEMM with 16-bit operands (see GemmArgs): A and B widened to f32, the product, bias and
// activation computed into packed f32 scratch (from C widened when beta is not zero), then
// C rounded once. bias and act may be NULL. The bias is first rounded to C's type, as
// the op's contract says (kernels/backend.h): what cuBLASLt's epilogue adds.
static int gemm_widened(const Backend *b, const GemmArgs *g, const void *a, const void *bm,
                        const float *bias, const FusedActivation *act, void *c, Status *st) {
    TRY(backend_dtype_check(b, g->a_dtype, "gemm", st));
    TRY(backend_dtype_check(b, g->b_dtype, "gemm", st));
    TRY(backend_dtype_check(b, g->c_dtype, "gemm", st));
    size_t a_values = g->transpose_a ? stored_extent(g->k, g->m, g->lda)
                                     : stored_extent(g->m, g->k, g->lda);
    size_t b_values = g->transpose_b ? stored_extent(g->n, g->k, g->ldb)
                                     : stored_extent(g->k, g->n, g->ldb);
    size_t c_values = (size_t)g->m * (size_t)g->n;
    float *wide_a = cpu_widen(a, g->a_dtype, a_values, st);
    float *wide_b = wide_a ? cpu_widen(bm, g->b_dtype, b_values, st) : NULL;
    float *wide_c = wide_b ? calloc(c_values ? c_values : 1, sizeof *wide_c) : NULL;
    float *rounded_bias = wide_c && bias ? cpu_widen(bias, DTYPE_F32, (size_t)g->n, st) : NULL;
    int rc = 0;
    if (!wide_c || (bias && !rounded_bias)) {
        // cpu_widen said why; otherwise it was wide_c's calloc.
        rc = st->code ? (int)st->code
                      : status_out_of_host_memory(st, c_values * sizeof *wide_c,
                                                  "for the f32 copy of a GEMM's C");
        goto done;
    }
    if (g->beta != 0.0f)
        for (int r = 0; r < g->m; r++) {
            float *row = cpu_widen((const char *)c + (size_t)r * g->ldc * dtype_size(g->c_dtype),
                                   g->c_dtype, (size_t)g->n, st);
            if (!row) {
                rc = st->code;
                goto done;
            }
            memcpy(wide_c + (size_t)r * g->n, row, (size_t)g->n * sizeof *row);
            free(row);
        }
    GemmArgs packed = *g;
    packed.ldc = g->n;
    cpu_gemm_f32(&packed, wide_a, wide_b, wide_c);
    if (bias) {
        cpu_round_values(rounded_bias, g->c_dtype, (size_t)g->n);
        cpu_add_bias_rows(
            b, &(AddBiasRowsArgs){.y = wide_c, .bias = rounded_bias, .rows = g->m, .cols = g->n},
            st);
    }
    if (act && act->apply)
        rc = cpu_activation_forward(b,
                                    &(ActivationForwardArgs){.kind = act->kind,
                                                             .slope = act->slope,
                                                             .dtype = DTYPE_F32,
                                                             .x = wide_c,
                                                             .y = wide_c,
                                                             .n = c_values},
                                    st);
    if (rc) goto done;
    for (int r = 0; r < g->m; r++)
        cpu_narrow(wide_c + (size_t)r * g->n,
                   (char *)c + (size_t)r * g->ldc * dtype_size(g->c_dtype), g->c_dtype,
                   (size_t)g->n);
done:
    free(rounded_bias);
    free(wide_a);
    free(wide_b);
    free(wide_c);
    return rc;
}

int cpu_gemm(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st) {
    if (!all_f32(g)) return gemm_widened(b, g, t->a, t->bm, NULL, NULL, t->c, st);
    return cpu_gemm_f32(g, t->a, t->bm, t->c);
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

// The reference is the three unfused ops in turn, so a model trains to the same bits with
// fusion on or off on the CPU. A C with padding columns (ldc > n) is walked row by row,
// since add_bias_rows and activation_forward take packed rows.
static int cpu_gemm_bias_activation(const Backend *b, const GemmArgs *g,
                                    const GemmBiasActivationTensors *t, const FusedActivation *act,
                                    Status *st) {
    if (!all_f32(g)) return gemm_widened(b, g, t->a, t->bm, t->bias, act, t->c, st);
    TRY(cpu_gemm(b, g, &(GemmTensors){.a = t->a, .bm = t->bm, .c = t->c}, st));
    int packed = g->ldc == g->n;
    for (int r = 0; r < (packed ? 1 : g->m); r++) {
        float *rows = (float *)t->c + (size_t)r * g->ldc;
        int count = packed ? g->m : 1;
        if (t->bias)
            TRY(cpu_add_bias_rows(
                b, &(AddBiasRowsArgs){.y = rows, .bias = t->bias, .rows = count, .cols = g->n},
                st));
        if (act->apply)
            TRY(cpu_activation_forward(b,
                                       &(ActivationForwardArgs){.kind = act->kind,
                                                                .slope = act->slope,
                                                                .dtype = DTYPE_F32,
                                                                .x = rows,
                                                                .y = rows,
                                                                .n = (size_t)count * (size_t)g->n},
                                       st));
    }
    return 0;
}

void cpu_register_gemm_ops(Backend *table) {
    table->gemm = cpu_gemm;
    table->add_bias_rows = cpu_add_bias_rows;
    table->gemm_bias_activation = cpu_gemm_bias_activation;
}
