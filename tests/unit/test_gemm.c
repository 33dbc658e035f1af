// The CPU backend's GEMM (OpenBLAS behind the op table) against the double-accumulating
// triple loop gemm_reference, and the small row ops dense layers use around it.
//
// Tolerance: an element passes when
//   |blas - reference| <= 1e-4 * (|alpha| * sum_p |a_ip * b_pj| + |beta * c_ij|) + 1e-30
// i.e. a relative error below 1e-4 measured against the magnitude of the terms summed.
// f32 accumulation over k <= 64 terms is off by at most ~k * 6e-8 ~ 4e-6 of that
// magnitude, so 1e-4 has ample margin while a wrong transpose, stride or beta is off by
// O(1). Scaling by the sum of |terms| rather than |result| keeps cancellation (a result
// near 0 from large terms) from failing a correct GEMM.
#include "check.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

#define GEMM_RTOL 1e-4

static Rng rng;

static float uniform(float lo, float hi) { return lo + (hi - lo) * rng_uniform(&rng); }

typedef struct GemmCase {
    int ta, tb, m, n, k;
    float alpha, beta;
    int pad;          // extra columns in every leading dimension
    int nan_c;        // C starts as NaN (only meaningful with beta == 0)
} GemmCase;

static int check_gemm_case(const GemmCase *c) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    // Stored shapes, row-major: A is m x k (or k x m transposed), B is k x n (or n x k).
    int a_rows = c->ta ? c->k : c->m, a_cols = c->ta ? c->m : c->k;
    int b_rows = c->tb ? c->n : c->k, b_cols = c->tb ? c->k : c->n;
    int lda = a_cols + c->pad, ldb = b_cols + c->pad, ldc = c->n + c->pad;
    float *a = malloc((size_t)a_rows * lda * sizeof *a);
    float *bm = malloc((size_t)b_rows * ldb * sizeof *bm);
    float *c_blas = malloc((size_t)c->m * ldc * sizeof *c_blas);
    float *c_ref = malloc((size_t)c->m * ldc * sizeof *c_ref);
    float *c_start = malloc((size_t)c->m * ldc * sizeof *c_start);
    for (int i = 0; i < a_rows * lda; i++) a[i] = uniform(-1.0f, 1.0f);
    for (int i = 0; i < b_rows * ldb; i++) bm[i] = uniform(-1.0f, 1.0f);
    for (int i = 0; i < c->m * ldc; i++) {
        int column = i % ldc;
        // Padding columns hold a sentinel that GEMM must leave alone.
        if (column >= c->n) c_start[i] = 1234.5f;
        else c_start[i] = c->nan_c ? NAN : uniform(-1.0f, 1.0f);
    }
    memcpy(c_blas, c_start, (size_t)c->m * ldc * sizeof *c_blas);
    memcpy(c_ref, c_start, (size_t)c->m * ldc * sizeof *c_ref);

    int failures_before = test_failures;
    GemmArgs args = {.transpose_a = c->ta, .transpose_b = c->tb, .m = c->m, .n = c->n, .k = c->k,
                     .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = c->alpha, .beta = c->beta};
    CHECK_INT_EQ(b->gemm(b, &args, &(GemmTensors){.a = a, .bm = bm, .c = c_blas}, &st), 0);
    gemm_reference(c->ta, c->tb, c->m, c->n, c->k, c->alpha, a, lda, bm, ldb, c->beta, c_ref, ldc);
    int printed = 0;
    for (int i = 0; i < c->m; i++) {
        for (int j = 0; j < ldc; j++) {
            float got = c_blas[i * ldc + j], want = c_ref[i * ldc + j];
            int ok;
            double tol = 0.0;
            if (j >= c->n) {
                ok = got == 1234.5f && want == 1234.5f;
            } else {
                double magnitude = 0.0;
                for (int p = 0; p < c->k; p++) {
                    float av = c->ta ? a[p * lda + i] : a[i * lda + p];
                    float bv = c->tb ? bm[j * ldb + p] : bm[p * ldb + j];
                    magnitude += fabs((double)av * bv);
                }
                magnitude *= fabs(c->alpha);
                if (c->beta != 0.0f) magnitude += fabs(c->beta * c_start[i * ldc + j]);
                tol = GEMM_RTOL * magnitude + 1e-30;
                ok = isfinite(got) && isfinite(want) && fabs((double)got - want) <= tol;
            }
            if (!ok) {
                if (printed++ < 5)
                    fprintf(stderr,
                            "gemm ta=%d tb=%d m=%d n=%d k=%d alpha=%g beta=%g pad=%d nan_c=%d: "
                            "C[%d][%d] blas %.9g vs reference %.9g (tol %.3g)%s\n",
                            c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->beta, c->pad, c->nan_c, i,
                            j, got, want, tol, j >= c->n ? " (padding column)" : "");
                test_failures++;
            }
        }
    }
    free(a);
    free(bm);
    free(c_blas);
    free(c_ref);
    free(c_start);
    return test_failures == failures_before;
}

static void gemm_matches_reference_on_odd_shapes(void) {
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 17, 9}, {1, 1, 40}, {5, 3, 1},
        {16, 16, 16}, {31, 29, 64}, {2, 64, 3}, {64, 10, 33},
    };
    static const float alphas[] = {1.0f, -0.5f, 2.5f};
    static const float betas[] = {0.0f, 1.0f, 0.3f};
    int cases = 0, passed = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (size_t ai = 0; ai < sizeof alphas / sizeof alphas[0]; ai++)
                for (size_t bi = 0; bi < sizeof betas / sizeof betas[0]; bi++)
                    for (int pad = 0; pad <= 3; pad += 3) {
                        GemmCase c = {.ta = t & 1, .tb = t >> 1, .m = shapes[s][0],
                                      .n = shapes[s][1], .k = shapes[s][2], .alpha = alphas[ai],
                                      .beta = betas[bi], .pad = pad};
                        cases++;
                        passed += check_gemm_case(&c);
                    }
    if (passed != cases) fprintf(stderr, "gemm: %d of %d cases differ\n", cases - passed, cases);
}

// beta = 0 means "C is output only": NaN (uninitialized memory) in C must not leak into
// the result, as BLAS specifies and as dense forward relies on.
static void gemm_beta_zero_ignores_nan_in_c(void) {
    static const int shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 9, 4}, {20, 30, 40}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int pad = 0; pad <= 2; pad += 2) {
                GemmCase c = {.ta = t & 1, .tb = t >> 1, .m = shapes[s][0], .n = shapes[s][1],
                              .k = shapes[s][2], .alpha = 1.0f, .beta = 0.0f, .pad = pad,
                              .nan_c = 1};
                check_gemm_case(&c);
            }
}

// The three ways dense uses GEMM, with batch 1: forward x W^T, dW = dy^T x, dx = dy W.
static void gemm_dense_patterns_with_batch_one(void) {
    const int batch = 1, units = 7, inputs = 11;
    GemmCase forward = {.ta = 0, .tb = 1, .m = batch, .n = units, .k = inputs, .alpha = 1.0f};
    GemmCase weight_grad = {.ta = 1, .tb = 0, .m = units, .n = inputs, .k = batch, .alpha = 1.0f};
    GemmCase input_grad = {.ta = 0, .tb = 0, .m = batch, .n = inputs, .k = units, .alpha = 1.0f,
                           .beta = 1.0f};
    check_gemm_case(&forward);
    check_gemm_case(&weight_grad);
    check_gemm_case(&input_grad);
}

// The op table's gemm is cpu_gemm.
static void op_table_gemm_is_cpu_gemm(void) { CHECK(cpu_backend()->gemm == cpu_gemm); }

static void add_bias_rows_adds_to_every_row(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    enum { ROWS = 3, COLS = 5 };
    float y[ROWS * COLS], start[ROWS * COLS], bias[COLS];
    for (int i = 0; i < ROWS * COLS; i++) start[i] = y[i] = uniform(-1.0f, 1.0f);
    for (int c = 0; c < COLS; c++) bias[c] = uniform(-1.0f, 1.0f);
    CHECK_INT_EQ(b->add_bias_rows(b, &(AddBiasRowsArgs){.y = y, .bias = bias, .rows = ROWS,
                                  .cols = COLS}, &st), 0);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            CHECK_NEAR(y[r * COLS + c], start[r * COLS + c] + bias[c], 1e-6);
    // One row, one column.
    float one = 2.0f, one_bias = -0.5f;
    CHECK_INT_EQ(b->add_bias_rows(b, &(AddBiasRowsArgs){.y = &one, .bias = &one_bias, .rows = 1,
                                  .cols = 1}, &st), 0);
    CHECK_NEAR(one, 1.5, 0.0);
}

static void sum_rows_with_beta_zero_and_one(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    enum { ROWS = 4, COLS = 6 };
    float x[ROWS * COLS], out[COLS];
    double sums[COLS] = {0};
    for (int i = 0; i < ROWS * COLS; i++) {
        x[i] = uniform(-1.0f, 1.0f);
        sums[i % COLS] += x[i];
    }
    // beta 0: out is output only, NaN in it must not survive.
    for (int c = 0; c < COLS; c++) out[c] = NAN;
    CHECK_INT_EQ(b->sum_rows(b, &(SumRowsArgs){.out = out, .x = x, .x_dtype = DTYPE_F32,
                             .rows = ROWS, .cols = COLS, .beta = 0.0f}, &st), 0);
    for (int c = 0; c < COLS; c++) CHECK_NEAR(out[c], sums[c], 1e-5);
    // beta 1: adds to what is there (micro-batch accumulation).
    float start[COLS];
    for (int c = 0; c < COLS; c++) start[c] = out[c] = uniform(-1.0f, 1.0f);
    CHECK_INT_EQ(b->sum_rows(b, &(SumRowsArgs){.out = out, .x = x, .x_dtype = DTYPE_F32,
                             .rows = ROWS, .cols = COLS, .beta = 1.0f}, &st), 0);
    for (int c = 0; c < COLS; c++) CHECK_NEAR(out[c], start[c] + sums[c], 1e-5);
    // Any other beta scales the old value.
    for (int c = 0; c < COLS; c++) start[c] = out[c] = uniform(-1.0f, 1.0f);
    CHECK_INT_EQ(b->sum_rows(b, &(SumRowsArgs){.out = out, .x = x, .x_dtype = DTYPE_F32,
                             .rows = ROWS, .cols = COLS, .beta = 0.5f}, &st), 0);
    for (int c = 0; c < COLS; c++) CHECK_NEAR(out[c], 0.5 * start[c] + sums[c], 1e-5);
    // A single row is copied.
    for (int c = 0; c < COLS; c++) out[c] = 7.0f;
    CHECK_INT_EQ(b->sum_rows(b, &(SumRowsArgs){.out = out, .x = x, .x_dtype = DTYPE_F32, .rows = 1,
                             .cols = COLS, .beta = 0.0f}, &st), 0);
    for (int c = 0; c < COLS; c++) CHECK_NEAR(out[c], x[c], 0.0);
}

static void accumulate_adds_elementwise(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    enum { N = 19 };
    float x[N], y[N], start[N];
    for (int i = 0; i < N; i++) {
        x[i] = uniform(-1.0f, 1.0f);
        start[i] = y[i] = uniform(-1.0f, 1.0f);
    }
    const void *sources[1] = {x};
    CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = DTYPE_F32, .y = y, .x = sources,
                               .count = 1, .n = N, .accumulate = 1}, &st), 0);
    for (int i = 0; i < N; i++) CHECK_NEAR(y[i], (double)start[i] + x[i], 1e-6);
    // n = 0 touches nothing.
    float untouched = 3.0f, other = 1.0f;
    const void *other_source[1] = {&other};
    CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = DTYPE_F32, .y = &untouched,
                               .x = other_source, .count = 1, .n = 0, .accumulate = 1}, &st), 0);
    CHECK_NEAR(untouched, 3.0, 0.0);
}

// With a 16-bit C the bias is rounded to C's type before it is added (what cuBLASLt's
// epilogue adds, kernels/backend.h), then C once. With u C's unit in the last place at 1:
// bias 1 + u/2 rounds (to even) to 1, and 1 + u/4 rounds to 1 again; an f32 bias would
// give 1 + u/2 + u/4, which rounds up to 1 + u. Column 1: relu of -3 + u/4 is 0.
static void gemm16_rounds_bias_to_c_type(DType dtype) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float u = dtype == DTYPE_BF16 ? 0x1p-7f : 0x1p-10f;
    float a = 1.0f, bm[2] = {u / 4, u / 4}, bias[2] = {1.0f + u / 2, -3.0f};
    uint16_t a16, b16[2], c16[2] = {0xffff, 0xffff};  // C is written, never read (beta 0)
    cpu_narrow(&a, &a16, dtype, 1);
    cpu_narrow(bm, b16, dtype, 2);
    GemmArgs g = {.m = 1, .n = 2, .k = 1, .lda = 1, .ldb = 2, .ldc = 2, .alpha = 1.0f,
                  .a_dtype = dtype, .b_dtype = dtype, .c_dtype = dtype};
    FusedActivation relu = {.apply = 1, .kind = ACTIVATION_RELU};
    CHECK_INT_EQ(b->gemm_bias_activation(b, &g, &(GemmBiasActivationTensors){.a = &a16, .bm = b16,
                                         .bias = bias, .c = c16}, &relu, &st), 0);
    float *c = cpu_widen(c16, dtype, 2, &st);
    CHECK(c != NULL);
    if (!c) return;
    CHECK_NEAR(c[0], 1.0, 0.0);
    CHECK_NEAR(c[1], 0.0, 0.0);
    free(c);
}

int main(void) {
    rng_seed(&rng, 2024);
    op_table_gemm_is_cpu_gemm();
    gemm_matches_reference_on_odd_shapes();
    gemm_beta_zero_ignores_nan_in_c();
    gemm_dense_patterns_with_batch_one();
    add_bias_rows_adds_to_every_row();
    sum_rows_with_beta_zero_and_one();
    accumulate_adds_elementwise();
    gemm16_rounds_bias_to_c_type(DTYPE_BF16);
    gemm16_rounds_bias_to_c_type(DTYPE_F16);
    return test_exit_code("test_gemm");
}
