// CUDA linear-algebra ops: GEMM through cuBLAS, and the three small kernels around it
// (bias add, bias gradient, gradient accumulation). The CPU versions in
// kernels/cpu/cpu_gemm.c are the reference.
//
// All of these but the GEMM are memory bound: each element is read once and written at
// most once, so the kernels are shaped for coalesced access and nothing else.
#include <cublasLt.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_column_sums.h"
#include "kernels/cuda/cuda_storage.h"

// ---- GEMM -------------------------------------------------------------------------
//
// The op is row-major: C[m x n] = alpha * op(A) op(B) + beta * C. cuBLAS is column-major.
// A row-major matrix with leading dimension ld, read as column-major with the same ld,
// is its transpose. So:
//
//   - C (row-major m x n, ldc) is, to cuBLAS, C^T: column-major n x m with ldc.
//   - C^T = (op(A) op(B))^T = op(B)^T op(A)^T, so cuBLAS computes C^T with B first and A
//     second, with its m = our n and its n = our m, and the same k.
//   - First operand, op(B)^T (n x k). B untransposed is stored row-major k x n, which
//     cuBLAS sees as B^T (n x k) already: CUBLAS_OP_N, ld = ldb (cuBLAS wants
//     ldb >= n, which is the row-major rule for a k x n matrix too). B transposed is stored
//     row-major n x k, which cuBLAS sees as B^T (k x n); we need B, so CUBLAS_OP_T,
//     ld = ldb (cuBLAS wants ldb >= k, again the row-major rule for n x k).
//   - Second operand, op(A)^T (k x m), the same way: A untransposed is stored row-major
//     m x k = column-major A^T (k x m), CUBLAS_OP_N with lda >= k; A transposed is stored
//     row-major k x m = column-major A^T (m x k) and we need A, CUBLAS_OP_T with lda >= m.
//
// So each operand keeps its own transpose flag and leading dimension; only the operand
// order and m/n swap. beta == 0 makes cuBLAS write C without reading it (it may hold NaN),
// which is what the CPU's BLAS does too.
//
// Precision. With A and B in f32 the compute type says what cuBLAS may round them to on
// the tensor cores, with products summed in f32 (cuBLAS's "32F_FAST" types): TF32 for
// tf32; bf16 or TF32 for bf16; fp16 or TF32 for fp16 (cuBLAS picks per shape; both round
// at least as finely as asked). fp32 is CUBLAS_COMPUTE_32F, which the handle's default
// math mode keeps off TF32. Naming the type per call, not through the handle's math mode,
// keeps what a GEMM computes in one place. With A and B stored in bf16 or f16 (16-bit
// activation storage, GemmArgs's dtypes) there is nothing left to round: CUBLAS_COMPUTE_32F,
// products summed in f32 and C, f32 or A's type, rounded once; the handle's
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION keeps split-K's partial sums in f32 too.
static cublasComputeType_t gemm_compute_type(Precision p, const GemmArgs *g) {
    if (g->a_dtype != DTYPE_F32) return CUBLAS_COMPUTE_32F;
    switch (p) {
    case PRECISION_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case PRECISION_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case PRECISION_FP16: return CUBLAS_COMPUTE_32F_FAST_16F;
    default: return CUBLAS_COMPUTE_32F;
    }
}

// The dtypes GemmArgs allows: A and B one of f32, bf16 and f16, the same, and one this GPU
// multiplies (`supports`, OP_FAMILY_MATMUL: 16-bit operands go to the tensor cores, bf16's
// from Ampere, fp16's from Volta); C f32 or A's.
static int gemm_dtypes_check(const Backend *b, const GemmArgs *g, Status *st) {
    TRY(backend_dtype_check(b, g->a_dtype, "gemm", st));
    TRY(backend_dtype_check(b, g->c_dtype, "gemm", st));
    if (g->b_dtype == g->a_dtype && (g->c_dtype == DTYPE_F32 || g->c_dtype == g->a_dtype))
        return backend_matmul_check(b, g->a_dtype, "gemm", st);
    status_fail(st, STATUS_RUNTIME_ERROR, "gemm: A %s, B %s and C %s: A and B must share a type "
                "and C be f32 or that type", dtype_name(g->a_dtype), dtype_name(g->b_dtype),
                dtype_name(g->c_dtype));
    // The layers set these from graph_set_storage's dtypes: a mix here is a bug.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}

static int cuda_gemm(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st) {
    TRY(gemm_dtypes_check(b, g, st));
    if (g->m <= 0 || g->n <= 0) return 0;  // an empty C: nothing to write
    CudaContext *ctx = cuda_context(b);
    CUBLAS_CHECK(cublasGemmEx(ctx->cublas, g->transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                              g->transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, g->n, g->m, g->k,
                              &g->alpha, t->bm, cuda_storage_type(g->b_dtype), g->ldb, t->a,
                              cuda_storage_type(g->a_dtype), g->lda, &g->beta, t->c,
                              cuda_storage_type(g->c_dtype), g->ldc,
                              gemm_compute_type(ctx->precision, g), CUBLAS_GEMM_DEFAULT));
    return 0;
}

// ---- GEMM with its bias and activation in the epilogue (cuBLASLt) -----------------------
//
// A dense layer with act=relu ran as three kernels: the GEMM writes C, add_bias_rows
// reads and writes it, the activation reads and writes it again. cuBLASLt applies the bias
// and a ReLU in the GEMM's epilogue, while the tile is still in registers: one write of C.
//
// The same row-major <-> column-major mapping as cuda_gemm above (operands swapped, m and
// n swapped, each operand keeps its transpose flag and leading dimension). cuBLASLt's bias
// vector has one value per row of its D, which is column-major n x m here: one per column
// of our row-major C, what add_bias_rows adds. Compute types as gemm_compute_type picks
// them from the precision; the scale type (alpha, beta) is f32.
//
// The bias is of D's type: cublasLt.h (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE) allows another
// type only to integer and fp8 kernels, and cuBLAS 13.1 on the H200 refused an f32 bias
// beside a bf16 D (INVALID_VALUE), so every bf16 dense layer ran unfused: the GEMM rounded
// C, then one more pass read and wrote all of it (cuda_bias_activation_stored). For a
// 16-bit D the op therefore rounds the f32 bias into a 16-bit copy beside the workspace
// (one tiny convert; the op's contract rounds the bias to C's type on every path, the
// CPU's too) and the epilogue adds it in f32 before D's one rounding. Where the heuristic
// still offers nothing for a shape, the unfused passes run, as before.
//
// Epilogues used: BIAS, RELU, RELU_BIAS. Not GELU: cuBLASLt's documentation does not say
// which GELU its epilogue computes, and ours is the exact erf form (PyTorch's default), so
// gelu, and leaky_relu, sigmoid and tanh, which cuBLASLt has no epilogue for, run as the
// GEMM with the bias epilogue followed by activation_forward in place. A shape for which
// cuBLASLt's heuristic offers no algorithm runs unfused: gemm, add_bias_rows, activation.
//
// Plans. The descriptors and the heuristic's algorithm are made once per shape and kept
// (the heuristic query alone costs host time comparable to a small layer's kernels); the
// bias pointer changes per call and is set on the kept descriptor before each matmul.

// The workspace cuBLASLt may use, allocated once per device outside the caching
// allocator (like the reductions' partials), so no step allocates and a captured CUDA
// Graph replays with the same pointer. The heuristic only offers algorithms that fit it.
// The 16-bit bias copy follows it in the same allocation: room for a layer of up to
// 131072 units (256 KiB); a wider 16-bit layer runs unfused. Dense layers' GEMMs run one
// after another on the device's stream, so one copy serves them all.
static const size_t GEMM_EPILOGUE_WORKSPACE_BYTES = (size_t)4 << 20;
static const int GEMM_EPILOGUE_BIAS_VALUES = 1 << 17;
enum { GEMM_EPILOGUE_MAX_PLANS = 64 };

typedef struct GemmEpiloguePlan {
    GemmArgs shape;  // alpha and beta are not part of the key (they are passed per call)
    int has_bias;
    cublasLtEpilogue_t epilogue;
    Precision precision;
    int unsupported;  // 1: the heuristic offered nothing; run unfused
    cublasLtMatmulDesc_t operation;
    cublasLtMatrixLayout_t first, second, result;
    cublasLtMatmulAlgo_t algo;
} GemmEpiloguePlan;

struct CudaGemmEpilogues {
    cublasLtHandle_t handle;
    void *workspace;
    void *bias16;  // GEMM_EPILOGUE_BIAS_VALUES 16-bit values, after the workspace
    GemmEpiloguePlan *plans[GEMM_EPILOGUE_MAX_PLANS];
    int count;
};

static void gemm_plan_free(GemmEpiloguePlan *p) {
    if (!p) return;
    if (p->operation) cublasLtMatmulDescDestroy(p->operation);
    if (p->first) cublasLtMatrixLayoutDestroy(p->first);
    if (p->second) cublasLtMatrixLayoutDestroy(p->second);
    if (p->result) cublasLtMatrixLayoutDestroy(p->result);
    free(p);
}

int cuda_gemm_epilogues_open(CudaContext *ctx, Status *st) {
    CudaGemmEpilogues *e = (CudaGemmEpilogues *)calloc(1, sizeof *e);
    if (!e) return status_out_of_host_memory(st, sizeof *e, "for cuBLASLt's GEMM epilogues");
    ctx->gemm_epilogues = e;
    CUBLAS_CHECK(cublasLtCreate(&e->handle));
    // 16-bit values at an offset of 4 MiB: as aligned as the allocation (256 bytes).
    CUDA_CHECK(cudaMalloc(&e->workspace, GEMM_EPILOGUE_WORKSPACE_BYTES +
                                             (size_t)GEMM_EPILOGUE_BIAS_VALUES * 2));
    e->bias16 = (char *)e->workspace + GEMM_EPILOGUE_WORKSPACE_BYTES;
    return 0;
}

void cuda_gemm_epilogues_close(CudaContext *ctx) {
    CudaGemmEpilogues *e = ctx->gemm_epilogues;
    if (!e) return;
    for (int i = 0; i < e->count; i++) gemm_plan_free(e->plans[i]);
    if (e->workspace) cudaFree(e->workspace);
    if (e->handle) cublasLtDestroy(e->handle);
    free(e);
    ctx->gemm_epilogues = NULL;
}

static int same_gemm_shape(const GemmArgs *a, const GemmArgs *b) {
    return a->a_dtype == b->a_dtype && a->b_dtype == b->b_dtype && a->c_dtype == b->c_dtype &&
           a->transpose_a == b->transpose_a && a->transpose_b == b->transpose_b &&
           a->m == b->m && a->n == b->n && a->k == b->k && a->lda == b->lda &&
           a->ldb == b->ldb && a->ldc == b->ldc;
}

// Descriptors for the swapped product (see cuda_gemm): cuBLASLt's A is our op(B)^T, its
// B our op(A)^T, its C and D our C^T. A layout is the matrix as stored, column-major.
static int gemm_plan_build(CudaContext *ctx, GemmEpiloguePlan *p, Status *st) {
    const GemmArgs *g = &p->shape;
    CudaGemmEpilogues *e = ctx->gemm_epilogues;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->operation,
                                          gemm_compute_type(ctx->precision, g), CUDA_R_32F));
    cublasOperation_t first_op = g->transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t second_op = g->transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->operation, CUBLASLT_MATMUL_DESC_TRANSA,
                                                &first_op, sizeof first_op));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->operation, CUBLASLT_MATMUL_DESC_TRANSB,
                                                &second_op, sizeof second_op));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->operation, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                &p->epilogue, sizeof p->epilogue));
    if (p->has_bias) {
        cudaDataType_t bias_type = cuda_storage_type(g->c_dtype);
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p->operation, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
    }
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->first, cuda_storage_type(g->b_dtype),
                                            g->transpose_b ? g->k : g->n,
                                            g->transpose_b ? g->n : g->k, g->ldb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->second, cuda_storage_type(g->a_dtype),
                                            g->transpose_a ? g->m : g->k,
                                            g->transpose_a ? g->k : g->m, g->lda));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->result, cuda_storage_type(g->c_dtype), g->n,
                                            g->m, g->ldc));
    cublasLtMatmulPreference_t preference;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    uint64_t workspace_bytes = GEMM_EPILOGUE_WORKSPACE_BYTES;
    cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
        sizeof workspace_bytes);
    cublasLtMatmulHeuristicResult_t result;
    int returned = 0;
    if (status == CUBLAS_STATUS_SUCCESS)
        status = cublasLtMatmulAlgoGetHeuristic(e->handle, p->operation, p->first, p->second,
                                                p->result, p->result, preference, 1, &result,
                                                &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    // NOT_SUPPORTED is cuBLASLt's answer for "no algorithm": not an error, a fallback. With a
    // 16-bit D and an f32 bias, cuBLAS 13.1 on an H200 answered INVALID_VALUE instead (the
    // pairing is not one it implements); the bias is D's type now, but until that has run
    // on a card a 16-bit D keeps the same fallback, so that a wrong f32 descriptor still
    // shows as the error it is.
    int refused_pairing = status == CUBLAS_STATUS_INVALID_VALUE && p->has_bias &&
                          g->c_dtype != DTYPE_F32;
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || refused_pairing ||
        (status == CUBLAS_STATUS_SUCCESS && !returned)) {
        p->unsupported = 1;
        return 0;
    }
    CUBLAS_CHECK(status);
    p->algo = result.algo;
    return 0;
}

static int gemm_plan_for(CudaContext *ctx, const GemmArgs *g, int has_bias,
                         cublasLtEpilogue_t epilogue, GemmEpiloguePlan **out, Status *st) {
    CudaGemmEpilogues *e = ctx->gemm_epilogues;
    for (int i = e->count - 1; i >= 0; i--) {
        GemmEpiloguePlan *p = e->plans[i];
        if (p->has_bias == has_bias && p->epilogue == epilogue &&
            p->precision == ctx->precision && same_gemm_shape(&p->shape, g)) {
            *out = p;
            return 0;
        }
    }
    GemmEpiloguePlan *p = (GemmEpiloguePlan *)calloc(1, sizeof *p);
    if (!p) return status_out_of_host_memory(st, sizeof *p, "for a GEMM epilogue plan");
    p->shape = *g;
    p->has_bias = has_bias;
    p->epilogue = epilogue;
    p->precision = ctx->precision;
    int rc = gemm_plan_build(ctx, p, st);
    if (rc) {
        gemm_plan_free(p);
        return rc;
    }
    if (e->count == GEMM_EPILOGUE_MAX_PLANS) {
        // Plans are used only inside one call: dropping the oldest is safe.
        gemm_plan_free(e->plans[0]);
        memmove(e->plans, e->plans + 1, (GEMM_EPILOGUE_MAX_PLANS - 1) * sizeof *e->plans);
        e->count--;
    }
    e->plans[e->count++] = p;
    *out = p;
    return 0;
}

// The bias and activation as separate passes over C (rows one at a time when C has
// padding columns, since both kernels take packed rows); over a 16-bit C, one pass.
static int epilogue_unfused(const Backend *b, const GemmArgs *g, const float *bias,
                            const FusedActivation *act, void *c, Status *st) {
    if (g->c_dtype != DTYPE_F32) {
        if (!bias && !act->apply) return 0;
        return cuda_bias_activation_stored(b, g->c_dtype, c, g->m, g->n, g->ldc,
                                           bias, act, st);
    }
    int packed = g->ldc == g->n;
    for (int r = 0; r < (packed ? 1 : g->m); r++) {
        float *rows = (float *)c + (size_t)r * g->ldc;
        int count = packed ? g->m : 1;
        const AddBiasRowsArgs biased = {rows, bias, count, g->n};
        if (bias) TRY(b->add_bias_rows(b, &biased, st));
        const ActivationForwardArgs activation = {
            act->kind, act->slope, DTYPE_F32, rows, rows, (size_t)count * (size_t)g->n};
        if (act->apply) TRY(b->activation_forward(b, &activation, st));
    }
    return 0;
}

// Whether every pointer the matmul reads or writes is as aligned as the heuristic assumed:
// the preference's default 256 bytes for A, B, C and D, and for the bias whatever its
// pointer was when the plan was made, which is NULL (the pointer is set per call), so any
// alignment. cublasLtMatmul checks A to D against the algorithm and answers NOT_SUPPORTED,
// but not the bias (cublasLt.h: the heuristic takes the bias alignment from the pointer's
// value): an algorithm that loads it in 16-byte vectors faults with "misaligned address",
// which ends the context. The caching allocator's blocks are 256-byte aligned; anything
// else (a tensor at an offset into another) runs unfused.
static int epilogue_aligned(const void *a, const void *bm, const void *bias, const void *c) {
    const uintptr_t mask = 255;
    return (((uintptr_t)a | (uintptr_t)bm | (uintptr_t)bias | (uintptr_t)c) & mask) == 0;
}

static int cuda_gemm_bias_activation(const Backend *b, const GemmArgs *g,
                                     const GemmBiasActivationTensors *t, const FusedActivation *act,
                                     Status *st) {
    TRY(gemm_dtypes_check(b, g, st));
    if (g->m <= 0 || g->n <= 0) return 0;
    CudaContext *ctx = cuda_context(b);
    CudaGemmEpilogues *e = ctx->gemm_epilogues;
    const GemmTensors plain = {t->a, t->bm, t->c};  // the GEMM alone, when unfused
    int relu = act->apply && act->kind == ACTIVATION_RELU;
    // A 16-bit D's epilogue reads the bias from its 16-bit copy (see above).
    int bias16 = t->bias && g->c_dtype != DTYPE_F32;
    const void *epilogue_bias = bias16 ? e->bias16 : t->bias;
    // With the gemm-epilogue lever off (base/lever.h), always the separate passes, to
    // measure what cuBLASLt's epilogue saves.
    if ((!t->bias && !relu) || (bias16 && g->n > GEMM_EPILOGUE_BIAS_VALUES) ||
        !epilogue_aligned(t->a, t->bm, epilogue_bias, t->c) ||
        lever_off(ctx->disabled_levers, LEVER_GEMM_EPILOGUE)) {
        TRY(cuda_gemm(b, g, &plain, st));
        return epilogue_unfused(b, g, t->bias, act, t->c, st);
    }
    cublasLtEpilogue_t epilogue = !relu     ? CUBLASLT_EPILOGUE_BIAS
                                  : t->bias ? CUBLASLT_EPILOGUE_RELU_BIAS
                                            : CUBLASLT_EPILOGUE_RELU;
    GemmEpiloguePlan *p = NULL;
    TRY(gemm_plan_for(ctx, g, t->bias != NULL, epilogue, &p, st));
    if (p->unsupported) {
        TRY(cuda_gemm(b, g, &plain, st));
        return epilogue_unfused(b, g, t->bias, act, t->c, st);
    }
    if (bias16) {
        const ConvertArgs narrow = {t->bias, DTYPE_F32, e->bias16, g->c_dtype, (size_t)g->n, 0};
        TRY(b->convert(b, &narrow, st));
    }
    if (t->bias)
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                    &epilogue_bias, sizeof epilogue_bias));
    // The pointers are as aligned as the heuristic assumed (epilogue_aligned); should
    // cuBLASLt still refuse the algorithm, as NOT_SUPPORTED, the unfused ops run.
    cublasStatus_t status =
        cublasLtMatmul(e->handle, p->operation, &g->alpha, t->bm, p->first, t->a, p->second,
                       &g->beta, t->c, p->result, t->c, p->result, &p->algo, e->workspace,
                       GEMM_EPILOGUE_WORKSPACE_BYTES, ctx->stream);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED) {
        TRY(cuda_gemm(b, g, &plain, st));
        return epilogue_unfused(b, g, t->bias, act, t->c, st);
    }
    CUBLAS_CHECK(status);
    // An activation cuBLASLt has no epilogue for runs after the biased GEMM.
    return relu ? 0 : epilogue_unfused(b, g, NULL, act, t->c, st);
}

// ---- row-broadcast kernels -------------------------------------------------------
//
// Both kernels below walk a rows x cols row-major matrix with 32 threads across columns
// (one warp reads 32 consecutive floats of a row: one 128-byte transaction) and warps down
// the rows. Each thread owns one column, so the per-column value (bias, or the running
// sum) lives in a register for the whole walk. add_bias_rows's grid strides along both
// dimensions, so any shape launches a valid grid (gridDim.y is capped at 65535).
static const unsigned COL_THREADS = 32;
static const unsigned ROW_THREADS = 8;

__global__ static void add_bias_rows_kernel(float *y, const float *bias, int rows, int cols) {
    for (size_t c = cuda_grid_thread(); c < (size_t)cols; c += cuda_grid_threads()) {
        float bc = bias[c];
        for (size_t r = blockIdx.y * (size_t)blockDim.y + threadIdx.y; r < (size_t)rows;
             r += (size_t)gridDim.y * blockDim.y)
            y[r * cols + c] += bc;
    }
}

static int cuda_add_bias_rows(const Backend *b, const AddBiasRowsArgs *args, Status *st) {
    if (args->rows <= 0 || args->cols <= 0) return 0;
    dim3 block(COL_THREADS, ROW_THREADS);
    dim3 grid(cuda_blocks_capped((size_t)args->cols, COL_THREADS),
              cuda_blocks_capped((size_t)args->rows, ROW_THREADS));
    CudaContext *ctx = cuda_context(b);
    CUDA_CHECK_CONFIG(ctx, "add_bias_rows_kernel", grid, block, 0, (size_t)args->rows * args->cols,
                      64);
    add_bias_rows_kernel<<<grid, block, 0, ctx->stream>>>(args->y, args->bias, args->rows,
                                                          args->cols);
    CUDA_CHECK_LAUNCH("add_bias_rows_kernel");
    return 0;
}

// Column sums (the bias gradient): out[c] = beta * out[c] + sum_r x[r][c], rows split over
// blocks as cuda_column_sums.h describes. Each thread sums its column's every 16th row of
// the block's chunk into a register (no stores in the loop, so the compiler may issue the
// unrolled loads together), then the fixed tree; no atomics, so the gradient is bit for bit
// reproducible (and agrees with the CPU's row-by-row sum to rounding). Only thread row 0
// writes, after the reduction, and with beta == 0 nothing reads out (it may hold NaN).
template <typename T>
__global__ static void sum_rows_kernel(float *out, const T *x, int rows, int cols, float beta,
                                       ColumnSplit split, float *partials) {
    __shared__ float partial[COLUMN_SUM_ROWS][COLUMN_SUM_COLS];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const size_t first = column_chunk_first(split), end = column_chunk_end(split, rows);
    // The loop bound depends only on blockIdx, so every thread of the block runs the same
    // number of iterations and reaches the same __syncthreads().
    for (size_t tile = blockIdx.x; tile * COLUMN_SUM_COLS < (size_t)cols; tile += gridDim.x) {
        size_t c = tile * COLUMN_SUM_COLS + tx;
        float sum = 0.0f;
        if (c < (size_t)cols) {
#pragma unroll 4
            for (size_t r = first + ty; r < end; r += COLUMN_SUM_ROWS)
                sum += storage_load(x, r * (size_t)cols + c);
        }
        float total = column_tile_total(sum, partial);
        if (ty == 0 && c < (size_t)cols) column_total_store(total, c, cols, out, beta, split,
                                                            partials);
    }
}

template <typename T>
static int launch_sum_rows(const CudaContext *ctx, float *out, const T *x, int rows, int cols,
                           float beta, Status *st) {
    ColumnSplit split = column_split(rows, cols);
    dim3 grid = column_sum_grid(cols, split), block = column_sum_block();
    CUDA_CHECK_CONFIG(ctx, "sum_rows_kernel", grid, block,
                      sizeof(float[COLUMN_SUM_ROWS][COLUMN_SUM_COLS]), (size_t)rows * cols, 64);
    sum_rows_kernel<T><<<grid, block, 0, ctx->stream>>>(out, x, rows, cols, beta, split,
                                                        (float *)ctx->partials);
    CUDA_CHECK_LAUNCH("sum_rows_kernel");
    return column_sums_finish(ctx, out, split, cols, beta, st);
}

static int cuda_sum_rows(const Backend *b, const SumRowsArgs *args, Status *st) {
    TRY(backend_dtype_check(b, args->x_dtype, "sum_rows", st));
    // rows == 0 still has work: out = beta * out (or 0), as on the CPU.
    if (args->cols <= 0) return 0;
    int rows = args->rows < 0 ? 0 : args->rows;
    const CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->x_dtype,
                          rc = launch_sum_rows(ctx, args->out, (const storage_t *)args->x, rows,
                                               args->cols, args->beta, st));
    return rc;
}

// ---- storage conversion ------------------------------------------------------------
//
// dst = (accumulate ? dst : 0) + src, each in its own storage type: widened, added in f32
// and rounded once on the store, as cpu_convert does, so the two agree bitwise.
template <typename S, typename D>
__global__ static void convert_kernel(const S *src, D *dst, size_t n, int accumulate) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads()) {
        float value = storage_load(src, i);
        if (accumulate) value = storage_load(dst, i) + value;
        storage_store(dst, i, value);
    }
}

template <typename S, typename D>
static int launch_convert(const CudaContext *ctx, const S *src, D *dst, size_t n, int accumulate,
                          Status *st) {
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "convert_kernel", grid, CUDA_THREADS, 0, n, 64);
    convert_kernel<S, D><<<grid, CUDA_THREADS, 0, ctx->stream>>>(src, dst, n, accumulate);
    CUDA_CHECK_LAUNCH("convert_kernel");
    return 0;
}

// The destination's type picked once the source's is known (CUDA_STORAGE_DISPATCH names
// its type storage_t, so the outer one is renamed before the inner one shadows it).
template <typename S>
static int launch_convert_from(const CudaContext *ctx, const S *src, void *dst, DType dst_dtype,
                               size_t n, int accumulate, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(dst_dtype, rc = launch_convert(ctx, src, (storage_t *)dst, n,
                                                         accumulate, st));
    return rc;
}

static int cuda_convert(const Backend *b, const ConvertArgs *args, Status *st) {
    TRY(backend_dtype_check(b, args->src_dtype, "convert", st));
    TRY(backend_dtype_check(b, args->dst_dtype, "convert", st));
    if (args->n == 0) return 0;
    const CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->src_dtype,
                          rc = launch_convert_from(ctx, (const storage_t *)args->src, args->dst,
                                                   args->dst_dtype, args->n, args->accumulate != 0,
                                                   st));
    return rc;
}

// y = (accumulate ? y : x[0]) + the other sources, in f32 in the CPU's order and rounded
// once on the store, so the result is bitwise the CPU's. The source pointers travel by
// value in the launch's arguments (a CUDA Graph records them so), count of them set.
template <typename T>
struct AccumulateSources {
    const T *x[BACKEND_ACCUMULATE_MAX];
};

template <typename T>
__global__ static void accumulate_kernel(T *y, AccumulateSources<T> sources, int count, size_t n,
                                         int accumulate) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads()) {
        float first = storage_load(sources.x[0], i);
        float sum = accumulate ? __fadd_rn(storage_load(y, i), first) : first;
        for (int k = 1; k < count; k++) sum = __fadd_rn(sum, storage_load(sources.x[k], i));
        storage_store(y, i, sum);
    }
}

template <typename T>
static int launch_accumulate(const CudaContext *ctx, T *y, const void *const *x, int count,
                             size_t n, int accumulate, Status *st) {
    AccumulateSources<T> sources = {};
    for (int k = 0; k < count; k++) sources.x[k] = (const T *)x[k];
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "accumulate_kernel", grid, CUDA_THREADS, 0, n, 64);
    accumulate_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(y, sources, count, n,
                                                                 accumulate);
    CUDA_CHECK_LAUNCH("accumulate_kernel");
    return 0;
}

static int cuda_accumulate(const Backend *b, const AccumulateArgs *args, Status *st) {
    TRY(backend_accumulate_check(b, args->dtype, args->count, st));
    if (args->n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype,
                          rc = launch_accumulate(ctx, (storage_t *)args->y, args->x, args->count,
                                                 args->n, args->accumulate != 0, st));
    return rc;
}

void cuda_register_gemm_ops(Backend *table) {
    table->gemm = cuda_gemm;
    table->gemm_bias_activation = cuda_gemm_bias_activation;
    table->add_bias_rows = cuda_add_bias_rows;
    table->sum_rows = cuda_sum_rows;
    table->convert = cuda_convert;
    table->accumulate = cuda_accumulate;
}
