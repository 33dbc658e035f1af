// The CUDA backend against the CPU reference, linear algebra: gemm (plain and fused with bias
// and activation), add_bias_rows, sum_rows, convert, accumulate (kernels/backend.h);
// parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// rows x cols values with stride ld: the padding columns get NaN, which a GEMM that uses
// a wrong leading dimension would read.
static void poison_padding(float *x, int rows, int cols, int ld) {
    for (int r = 0; r < rows; r++)
        if (ld > cols) memset(x + (size_t)r * ld + cols, POISON_BYTE, (size_t)(ld - cols) * sizeof *x);
}

// The m x n block of a matrix with leading dimension ld, packed; or its padding columns.
static float *pack(const float *c, int m, int n, int ld, int padding) {
    int width = padding ? ld - n : n;
    float *out = floats((size_t)m * (size_t)(width > 0 ? width : 0) + 1);
    for (int i = 0; i < m; i++)
        memcpy(out + (size_t)i * width, c + (size_t)i * ld + (padding ? n : 0),
               (size_t)width * sizeof *out);
    return out;
}

static void gemm_case(int ta, int tb, int m, int n, int k, float alpha, float beta, int pad) {
    snprintf(shape, sizeof shape, "ta=%d tb=%d m=%d n=%d k=%d alpha=%g beta=%g ld+%d", ta, tb, m,
             n, k, alpha, beta, pad);
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)m * ldc;
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    poison_padding(a, a_rows, a_cols, lda);
    poison_padding(bm, b_rows, b_cols, ldb);
    // beta = 0: C is output only and starts as NaN everywhere. Otherwise it holds values,
    // and its padding columns a sentinel; either way the padding must come back unchanged.
    float *c0 = beta == 0.0f ? poisoned(nc) : uniform(nc, -1.0f, 1.0f);
    if (beta != 0.0f)
        for (size_t i = 0; i < nc; i++)
            if ((int)(i % (size_t)ldc) >= n) c0[i] = 1234.5f;
    float *da = dev_floats(a, na), *db = dev_floats(bm, nb), *dc = dev_floats(c0, nc);
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k, .lda = lda,
                     .ldb = ldb, .ldc = ldc, .alpha = alpha, .beta = beta};
    if (GPU_CALL(gemm, &args, &(GemmTensors){.a = da, .bm = db, .c = dc})) return;
    float *got = fetch(dc, nc), *want = copy_of(c0, nc);
    CPU_CALL(gemm, &args, &(GemmTensors){.a = a, .bm = bm, .c = want});
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.alpha = fabsf(alpha);
    magnitude.beta = fabsf(beta);
    CPU_CALL(gemm, &magnitude, &(GemmTensors){.a = absolute(a, na), .bm = absolute(bm, nb),
             .c = cmag});
    compare("gemm", "C", pack(got, m, n, ldc, 0), pack(want, m, n, ldc, 0), pack(cmag, m, n, ldc, 0),
            (size_t)m * n);
    if (pad)
        compare_exact("gemm", "C padding columns", pack(got, m, n, ldc, 1), pack(c0, m, n, ldc, 1),
                      (size_t)m * pad, 0, 0);
}

static void test_gemm(void) {
    REQUIRE(gemm);
    // Odd sizes, vectors, batch 1, and the MLP's own products (784 inputs, 256 units).
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 17, 9}, {5, 3, 1}, {64, 10, 33},
        {1, 10, 256}, {128, 256, 784}, {256, 784, 128}, {1024, 10, 256}, {129, 257, 1025},
    };
    static const struct { float alpha, beta; int pad; } variants[] = {
        {1.0f, 0.0f, 0}, {1.0f, 1.0f, 0}, {-0.5f, 0.3f, 3}, {2.5f, 0.0f, 2},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
                gemm_case(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                          variants[v].alpha, variants[v].beta, variants[v].pad);
                end_case();
            }
}

static void add_bias_rows_case(int rows, int cols) {
    snprintf(shape, sizeof shape, "rows=%d cols=%d", rows, cols);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *y0 = uniform(n, -1.0f, 1.0f), *bias = uniform((size_t)cols, -1.0f, 1.0f);
    float *dy = dev_floats(y0, n), *dbias = dev_floats(bias, (size_t)cols);
    if (GPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = dy, .bias = dbias, .rows = rows,
                 .cols = cols})) return;
    float *want = copy_of(y0, n), *mag = absolute(y0, n);
    CPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = want, .bias = bias, .rows = rows,
                                               .cols = cols});
    CPU_CALL(add_bias_rows, &(AddBiasRowsArgs){.y = mag, .bias = absolute(bias, (size_t)cols),
             .rows = rows, .cols = cols});
    compare("add_bias_rows", "y", fetch(dy, n), want, mag, n);
}

static void test_add_bias_rows(void) {
    REQUIRE(add_bias_rows);
    static const int shapes[][2] = {{1, 1}, {3, 5}, {1, 1000}, {1000, 1}, {128, 10}, {257, 129},
                                    {1024, 256}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        add_bias_rows_case(shapes[s][0], shapes[s][1]);
        end_case();
    }
}

// x stored as `dtype` (f32, or bf16/f16 activations), out f32.
static void sum_rows_case(int rows, int cols, float beta, DType dtype) {
    snprintf(shape, sizeof shape, "%s rows=%d cols=%d beta=%g", dtype_name(dtype), rows, cols,
             beta);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *x = uniform(n, -1.0f, 1.0f);
    void *x_stored = stored(x, n, dtype);
    float *out0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    void *dx = dev_copy(x_stored, n * dtype_size(dtype));
    float *dout = dev_floats(out0, (size_t)cols);
    if (GPU_CALL(sum_rows, &(SumRowsArgs){.out = dout, .x = dx, .x_dtype = dtype, .rows = rows,
                 .cols = cols, .beta = beta})) return;
    float *want = copy_of(out0, (size_t)cols);
    float *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(out0, (size_t)cols);
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = want, .x = x_stored, .x_dtype = dtype, .rows = rows,
             .cols = cols, .beta = beta});
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(x, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("sum_rows", "out", fetch(dout, (size_t)cols), want, mag, (size_t)cols);
}

static void test_sum_rows(void) {
    REQUIRE(sum_rows);
    // Past 256 rows the rows are split over blocks (cuda_column_sums.h): 257 is two chunks,
    // the second one row short; 60000 x 1 is 235.
    static const int shapes[][2] = {{1, 1}, {1, 17}, {4, 6}, {1000, 3}, {4096, 10}, {129, 1000},
                                    {60000, 1}, {257, 33}};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
            sum_rows_case(shapes[s][0], shapes[s][1], betas[b], DTYPE_F32);
            end_case();
        }
    // Three chunks' partials of 131072 columns would not fit the scratch: two longer ones.
    sum_rows_case(520, 131072, 1.0f, DTYPE_F32);
    end_case();
}

static void accumulate_case(size_t n) {
    snprintf(shape, sizeof shape, "n=%zu", n);
    Status st;
    status_clear(&st);
    size_t span = n + 1;  // one more, which must stay as it was
    float *x = uniform(span, -1.0f, 1.0f), *y0 = uniform(span, -1.0f, 1.0f);
    float *dx = dev_floats(x, span), *dy = dev_floats(y0, span);
    const void *d_sources[1] = {dx};
    if (GPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = dy, .x = d_sources,
                 .count = 1, .n = n, .accumulate = 1})) return;
    float *want = copy_of(y0, span), *mag = absolute(y0, span);
    const void *sources[1] = {x}, *mag_sources[1] = {absolute(x, span)};
    CPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = want, .x = sources, .count = 1,
             .n = n, .accumulate = 1});
    CPU_CALL(accumulate, &(AccumulateArgs){.dtype = DTYPE_F32, .y = mag, .x = mag_sources,
             .count = 1, .n = n, .accumulate = 1});
    float *got = fetch(dy, span);
    compare("accumulate", "y", got, want, mag, span);
    compare_exact("accumulate", "the element after n", got + n, y0 + n, 1, 0, 0);
}

static void test_accumulate(void) {
    REQUIRE(accumulate);
    static const size_t sizes[] = {0, 1, 7, 1000, ((size_t)1 << 20) + 1, BIG_N};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        accumulate_case(sizes[s]);
        end_case();
    }
}

static void gemm_bias_activation_case(int ta, int tb, int m, int n, int k, float beta, int pad,
                                      int with_bias, const FusedActivation *act, int offset) {
    snprintf(shape, sizeof shape, "ta=%d tb=%d m=%d n=%d k=%d beta=%g ld+%d bias=%d act=%s%s", ta,
             tb, m, n, k, beta, pad, with_bias, fused_name(act),
             offset ? " (every pointer 4 bytes past 256-byte alignment)" : "");
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)m * ldc;
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    float *bias = uniform((size_t)n, -1.0f, 1.0f);
    poison_padding(a, a_rows, a_cols, lda);
    poison_padding(bm, b_rows, b_cols, ldb);
    float *c0 = beta == 0.0f ? poisoned(nc) : uniform(nc, -1.0f, 1.0f);
    if (beta != 0.0f)
        for (size_t i = 0; i < nc; i++)
            if ((int)(i % (size_t)ldc) >= n) c0[i] = 1234.5f;
    float *da = dev_floats_at(a, na, offset), *db = dev_floats_at(bm, nb, offset);
    float *dc = dev_floats_at(c0, nc, offset);
    float *dbias = with_bias ? dev_floats_at(bias, (size_t)n, offset) : NULL;
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k, .lda = lda,
                     .ldb = ldb, .ldc = ldc, .alpha = 1.0f, .beta = beta};
    if (GPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = da, .bm = db,
                 .bias = dbias, .c = dc}, act)) return;
    float *got = fetch(dc, nc), *want = copy_of(c0, nc);
    CPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = a, .bm = bm,
             .bias = with_bias ? bias : NULL, .c = want}, act);
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.beta = fabsf(beta);
    FusedActivation none = {0};
    CPU_CALL(gemm_bias_activation, &magnitude, &(GemmBiasActivationTensors){.a = absolute(a, na),
             .bm = absolute(bm, nb), .bias = with_bias ? absolute(bias, (size_t)n) : NULL, .c = cmag
             }, &none);
    float *want_packed = pack(want, m, n, ldc, 0);
    compare("gemm_bias_activation", "C", pack(got, m, n, ldc, 0), want_packed,
            fused_magnitude(pack(cmag, m, n, ldc, 0), want_packed, (size_t)m * n), (size_t)m * n);
    if (pad)
        compare_exact("gemm_bias_activation", "C padding columns", pack(got, m, n, ldc, 1),
                      pack(c0, m, n, ldc, 1), (size_t)m * pad, 0, 0);
}

static void test_gemm_bias_activation(void) {
    REQUIRE(gemm_bias_activation);
    // Odd sizes, batch 1, and the dense layers of mlp and lenet (x W^T: ta=0, tb=1); mlp's
    // last layer at batch 128 takes the bias epilogue with no activation.
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {1, 17, 9}, {128, 256, 784}, {1024, 10, 256},
        {1024, 256, 3136}, {129, 257, 1025}, {128, 10, 128},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int a = 0; a < FUSED_ACTIVATIONS; a++)
            for (int with_bias = 0; with_bias <= 1; with_bias++) {
                gemm_bias_activation_case(0, 1, shapes[s][0], shapes[s][1], shapes[s][2], 0.0f, 0,
                                          with_bias, &fused_activations[a], 0);
                end_case();
            }
    // Operands and bias off the 256-byte alignment cuBLASLt's heuristic assumes: the op
    // must run its unfused path (a misaligned bias in a fused epilogue can fault), and
    // still match.
    for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
        gemm_bias_activation_case(0, 1, 33, 65, 17, 0.0f, 0, 1, &fused_activations[a], 1);
        end_case();
    }
    // The other transposes, beta and padded leading dimensions, on the smaller shapes.
    for (size_t s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++)
            for (int a = 0; a < FUSED_ACTIVATIONS; a++) {
                gemm_bias_activation_case(t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                                          0.5f, 3, 1, &fused_activations[a], 0);
                end_case();
            }
}

// dx = dy * f'(y) and the column sums of dx. y comes from the CPU's forward of inputs with
// exact zeros (relu's kink). dx is relative to |dy| (|f'| <= 1 for these four); the bias
// gradient to the sum of |dx| plus what beta keeps, as sum_rows' case.
// ---- activations stored in bf16 or f16 (--precision bf16|fp16): parity_harness.c ----

// A GEMM or a fused GEMM with A and B in storage_dtype and C in c_dtype (f32 or the same).
static void gemm16_case(int ta, int tb, int m, int n, int k, float beta, int with_bias,
                        const FusedActivation *act, DType c_dtype) {
    snprintf(shape, sizeof shape, "%s ta=%d tb=%d m=%d n=%d k=%d beta=%g bias=%d act=%s C %s",
             dtype_name(storage_dtype), ta, tb, m, n, k, beta, with_bias,
             act ? fused_name(act) : "(plain gemm)", dtype_name(c_dtype));
    Status st;
    status_clear(&st);
    int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    size_t na = (size_t)a_rows * a_cols, nb = (size_t)b_rows * b_cols, nc = (size_t)m * n;
    size_t c_bytes = nc * dtype_size(c_dtype);
    float *a = uniform(na, -1.0f, 1.0f), *bm = uniform(nb, -1.0f, 1.0f);
    float *bias = uniform((size_t)n, -1.0f, 1.0f);
    float *c0 = uniform(nc, -1.0f, 1.0f);
    void *a16 = stored(a, na, storage_dtype), *b16 = stored(bm, nb, storage_dtype);
    void *c16 = stored(c0, nc, c_dtype);
    void *da = dev_copy(a16, na * dtype_size(storage_dtype));
    void *db = dev_copy(b16, nb * dtype_size(storage_dtype));
    void *dc = beta == 0.0f ? dev_poisoned(c_bytes) : dev_copy(c16, c_bytes);
    float *dbias = with_bias ? dev_floats(bias, (size_t)n) : NULL;
    GemmArgs args = {.transpose_a = ta, .transpose_b = tb, .m = m, .n = n, .k = k,
                     .lda = a_cols, .ldb = b_cols, .ldc = n, .alpha = 1.0f, .beta = beta,
                     .a_dtype = storage_dtype, .b_dtype = storage_dtype, .c_dtype = c_dtype};
    const char *op = act ? "gemm_bias_activation" : "gemm";
    int rc = act ? GPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = da,
                            .bm = db, .bias = dbias, .c = dc}, act)
                 : GPU_CALL(gemm, &args, &(GemmTensors){.a = da, .bm = db, .c = dc});
    if (rc) return;
    void *want16 = host_alloc(c_bytes);
    memcpy(want16, c16, c_bytes);
    if (act ? CPU_CALL(gemm_bias_activation, &args, &(GemmBiasActivationTensors){.a = a16,
                       .bm = b16, .bias = with_bias ? bias : NULL, .c = want16}, act)
            : CPU_CALL(gemm, &args, &(GemmTensors){.a = a16, .bm = b16, .c = want16}))
        return;
    float *want = widened(want16, nc, c_dtype);
    float *cmag = beta == 0.0f ? zeros(nc) : absolute(c0, nc);
    GemmArgs magnitude = args;
    magnitude.beta = fabsf(beta);
    magnitude.a_dtype = magnitude.b_dtype = magnitude.c_dtype = DTYPE_F32;
    FusedActivation none = {0};
    CPU_CALL(gemm_bias_activation, &magnitude, &(GemmBiasActivationTensors){.a = absolute(a, na),
             .bm = absolute(bm, nb), .bias = with_bias ? absolute(bias, (size_t)n) : NULL, .c = cmag
             }, &none);
    double saved = rtol;
    rtol = storage_rtol(c_dtype);
    compare(op, "C", fetch_widened(dc, nc, c_dtype), want, fused_magnitude(cmag, want, nc), nc);
    rtol = saved;
}

// convert widens, adds in f32 and rounds once on both backends: bit for bit equal.
static void convert_case(DType from, DType to, size_t n, int accumulate) {
    snprintf(shape, sizeof shape, "%s -> %s n=%zu accumulate=%d", dtype_name(from),
             dtype_name(to), n, accumulate);
    Status st;
    status_clear(&st);
    float *src = uniform(n, -3.0f, 3.0f), *dst0 = uniform(n, -3.0f, 3.0f);
    void *src_stored = stored(src, n, from), *dst_stored = stored(dst0, n, to);
    size_t dst_bytes = n * dtype_size(to);
    void *d_src = dev_copy(src_stored, n * dtype_size(from));
    void *d_dst = accumulate ? dev_copy(dst_stored, dst_bytes) : dev_poisoned(dst_bytes);
    if (GPU_CALL(convert, &(ConvertArgs){.src = d_src, .src_dtype = from, .dst = d_dst,
                 .dst_dtype = to, .n = n, .accumulate = accumulate})) return;
    void *want = host_alloc(dst_bytes ? dst_bytes : 1);
    memcpy(want, dst_stored, dst_bytes);
    if (CPU_CALL(convert, &(ConvertArgs){.src = src_stored, .src_dtype = from, .dst = want,
                 .dst_dtype = to, .n = n, .accumulate = accumulate})) return;
    compare_exact("convert", "dst", fetch_widened(d_dst, n, to), widened(want, n, to), n, 0, 0);
}

static void test_storage16(void) {
    static const int gemm_shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 1, 17}, {64, 10, 33},
                                         {128, 256, 784}, {129, 257, 1025}, {1024, 10, 256}};
    static const float betas[] = {0.0f, 1.0f};
    for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++)
                for (int c16 = 0; c16 < 2; c16++) {
                    gemm16_case(t & 1, t >> 1, gemm_shapes[s][0], gemm_shapes[s][1],
                                gemm_shapes[s][2], betas[b], 0, NULL,
                                c16 ? storage_dtype : DTYPE_F32);
                    end_case();
                }
    // A dense layer's forward (C = act(x W^T + bias), C in the storage type) for every
    // fused activation, and its dW (C f32 from 16-bit dy and x).
    for (int a = 0; a < FUSED_ACTIVATIONS; a++)
        for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++) {
            gemm16_case(0, 1, gemm_shapes[s][0], gemm_shapes[s][1], gemm_shapes[s][2], 0.0f, 1,
                        &fused_activations[a], storage_dtype);
            end_case();
        }
    gemm16_case(0, 1, 65, 33, 17, 1.0f, 1, &fused_activations[1], DTYPE_F32);
    end_case();
    // A layer wider than the epilogue's 16-bit bias copy (1 << 17 values, cuda_gemm.cu)
    // runs unfused, its bias rounded the same way.
    gemm16_case(0, 1, 3, (1 << 17) + 3, 8, 0.0f, 1, &fused_activations[1], storage_dtype);
    end_case();
    static const int sum_shapes[][2] = {{1, 1}, {4, 6}, {4096, 10}, {129, 1000}, {60000, 1}};
    for (size_t s = 0; s < sizeof sum_shapes / sizeof sum_shapes[0]; s++)
        for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
            sum_rows_case(sum_shapes[s][0], sum_shapes[s][1], betas[b], storage_dtype);
            end_case();
        }
    static const DType types[] = {DTYPE_F32, DTYPE_BF16, DTYPE_F16};
    static const size_t lengths[] = {1, 1000, BIG_N};
    for (int from = 0; from < 3 && HAVE(convert); from++)
        for (int to = 0; to < 3; to++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
                convert_case(types[from], types[to], lengths[l], (int)(l & 1));
                end_case();
            }
}

static void run(const ParityPass *pass) {
    switch (pass->kind) {
    case PARITY_FP32:
        if (section("gemm, add_bias_rows, sum_rows, accumulate")) {
            test_gemm();
            test_add_bias_rows();
            test_sum_rows();
            test_accumulate();
        }
        if (section("gemm with bias and activation fused")) test_gemm_bias_activation();
        break;
    case PARITY_TF32:
        if (section("gemm (TF32 allowed)")) {
            test_gemm();
            test_gemm_bias_activation();
        }
        break;
    case PARITY_REDUCED:
        rtol = pass->gemm_rtol;
        if (section("gemm (inputs rounded to the precision)")) {
            test_gemm();
            test_gemm_bias_activation();
        }
        rtol = FP32_RTOL;
        if (section("activations stored in 16 bits (gemm, sum_rows, convert)")) test_storage16();
        break;
    case PARITY_LEVERS_OFF:
        if (section("gemm with bias and activation: GEMM, then bias, then activation "
                    "(gemm-epilogue)"))
            test_gemm_bias_activation();
        break;
    }
}

PARITY_MAIN("test_cuda_parity_linear_algebra", BACKEND_LINEAR_ALGEBRA_OPS,
            PARITY_TF32 | PARITY_REDUCED | PARITY_LEVERS_OFF, run)
