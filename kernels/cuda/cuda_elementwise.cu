// CUDA elementwise ops: activations and dropout. The CPU versions in
// kernels/cpu/cpu_elementwise.c are the reference. Their tensors may be stored in f32,
// bf16 or f16 (the kernels are templated on the type, cuda_storage.h): a 16-bit value is
// widened on the load, every step below is the f32 arithmetic described, and the result
// is rounded once on the store, as the CPU's widen / compute / narrow does.
//
// Every kernel here reads one or three floats per element and writes one, so they are
// bound by memory bandwidth; a grid-stride loop over a capped grid (cuda_blocks_for) keeps
// every launch valid whatever n is. The activation kind is a template parameter, so each
// kind is its own branch-free kernel instead of a switch per element.
//
// Numerics: the products whose result is then added (dy * f'(x) into dx, dy * mask into
// dx, y * y in tanh') use __fmul_rn, which the compiler never fuses into an FMA. The CPU
// rounds the product and the sum separately (C11 without -ffp-contract), so relu,
// leaky_relu, dropout, and sigmoid/tanh backward given the same x, y are bitwise equal to
// the CPU. sigmoid, tanh and gelu forward (and gelu backward) call expf/tanhf/erff, whose
// CUDA versions are within 2 ulp of glibc's but not identical: compare those with a
// tolerance.
#include "kernels/cuda/cuda_activation.h"
#include "kernels/cuda/cuda_column_sums.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_storage.h"

// ---- activations -------------------------------------------------------------------

// In terms of the output where that is cheaper (sigmoid, tanh), of the input where the
// output does not determine it (relu at 0, gelu): the CPU's choice, so the two agree.
template <ActivationKind K>
__device__ static inline float activation_derivative(float slope, float x, float y) {
    switch (K) {
    case ACTIVATION_RELU: return x > 0.0f ? 1.0f : 0.0f;
    case ACTIVATION_LEAKY_RELU: return x > 0.0f ? 1.0f : slope;
    case ACTIVATION_SIGMOID: return y * (1.0f - y);
    case ACTIVATION_TANH: return 1.0f - __fmul_rn(y, y);
    case ACTIVATION_GELU: {
        float cdf = 0.5f * (1.0f + erff(x * 0.70710678f));
        float pdf = 0.39894228f * expf(-0.5f * x * x);
        return cdf + x * pdf;
    }
    default: return 0.0f;
    }
}

// x and y stored as T (float, bf16 or f16): widened on the load, rounded once on the store.
template <ActivationKind K, typename T>
__global__ static void activation_forward_kernel(const T *x, T *y, size_t n, float slope) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        storage_store(y, i, activation<K>(storage_load(x, i), slope));
}

// dx = (accumulate ? dx : 0) + dy * f'(x). dx is read only when accumulating: otherwise
// it may hold anything, NaN included. y is read only by the kinds whose derivative needs
// it, so relu's backward moves 12 bytes per element, not 16. A 16-bit dx is added to in
// f32 and rounded once.
template <ActivationKind K, typename T>
__global__ static void activation_backward_kernel(const T *x, const T *y, const T *dy, T *dx,
                                                  size_t n, float slope, int accumulate) {
    const bool needs_y = K == ACTIVATION_SIGMOID || K == ACTIVATION_TANH;
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads()) {
        float xi = storage_load(x, i);
        if (K == ACTIVATION_RELU && !accumulate) {
            // The CPU's fast path selects dy rather than multiplying by 0 or 1; mirror it
            // so the sign of a zero (and a NaN dy where x <= 0) come out the same.
            storage_store(dx, i, xi > 0.0f ? storage_load(dy, i) : 0.0f);
            continue;
        }
        float yi = needs_y ? storage_load(y, i) : 0.0f;
        float g = __fmul_rn(storage_load(dy, i), activation_derivative<K>(slope, xi, yi));
        storage_store(dx, i, accumulate ? storage_load(dx, i) + g : g);
    }
}

template <ActivationKind K, typename T>
static int launch_activation_forward(const CudaContext *ctx, const T *x, T *y, size_t n,
                                     float slope, Status *st) {
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "activation_forward_kernel", grid, CUDA_THREADS, 0, n, 64);
    activation_forward_kernel<K, T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(x, y, n, slope);
    CUDA_CHECK_LAUNCH("activation_forward_kernel");
    return 0;
}

template <ActivationKind K, typename T>
static int launch_activation_backward(const CudaContext *ctx, const T *x, const T *y, const T *dy,
                                      T *dx, size_t n, float slope, int accumulate, Status *st) {
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "activation_backward_kernel", grid, CUDA_THREADS, 0, n, 64);
    activation_backward_kernel<K, T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, y, dy, dx, n, slope, accumulate);
    CUDA_CHECK_LAUNCH("activation_backward_kernel");
    return 0;
}

static int unknown_activation(ActivationKind kind, Status *st) {
    return status_fail(st, STATUS_RUNTIME_ERROR, "unknown activation %d", (int)kind);
}

// The kind is a template parameter of the kernels (one branch-free kernel per kind): this
// one switch turns the run-time kind into op.launch<K>(st) for every op below, each op a
// struct holding its launch's arguments.
template <typename Op>
static int launch_for_kind(ActivationKind kind, const Op &op, Status *st) {
    switch (kind) {
    case ACTIVATION_RELU: return op.template launch<ACTIVATION_RELU>(st);
    case ACTIVATION_LEAKY_RELU: return op.template launch<ACTIVATION_LEAKY_RELU>(st);
    case ACTIVATION_SIGMOID: return op.template launch<ACTIVATION_SIGMOID>(st);
    case ACTIVATION_TANH: return op.template launch<ACTIVATION_TANH>(st);
    case ACTIVATION_GELU: return op.template launch<ACTIVATION_GELU>(st);
    default: return unknown_activation(kind, st);
    }
}

template <typename T>
struct ActivationForwardLaunch {
    const CudaContext *ctx;
    const T *x;
    T *y;
    size_t n;
    float slope;
    template <ActivationKind K> int launch(Status *st) const {
        return launch_activation_forward<K>(ctx, x, y, n, slope, st);
    }
};

template <typename T>
struct ActivationBackwardLaunch {
    const CudaContext *ctx;
    const T *x, *y, *dy;
    T *dx;
    size_t n;
    float slope;
    int accumulate;
    template <ActivationKind K> int launch(Status *st) const {
        return launch_activation_backward<K>(ctx, x, y, dy, dx, n, slope, accumulate, st);
    }
};

// What both activation entries check before launching: a known kind, a dtype the device
// stores.
static int activation_checks(const Backend *b, ActivationKind kind, DType dtype,
                             const char *op, Status *st) {
    if ((int)kind < 0 || (int)kind >= (int)ACTIVATION_COUNT) return unknown_activation(kind, st);
    return backend_dtype_check(b, dtype, op, st);
}

template <typename T>
static int activation_forward_stored(const CudaContext *ctx, const ActivationForwardArgs *args,
                                     Status *st) {
    const ActivationForwardLaunch<T> op = {ctx, (const T *)args->x, (T *)args->y, args->n,
                                           args->slope};
    return launch_for_kind(args->kind, op, st);
}

static int cuda_activation_forward(const Backend *b, const ActivationForwardArgs *args,
                                   Status *st) {
    TRY(activation_checks(b, args->kind, args->dtype, "activation_forward", st));
    if (args->n == 0) return 0;
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype,
                          rc = activation_forward_stored<storage_t>(cuda_context(b), args, st));
    return rc;
}

template <typename T>
static int activation_backward_stored(const CudaContext *ctx, const ActivationBackwardArgs *args,
                                      Status *st) {
    const ActivationBackwardLaunch<T> op = {ctx, (const T *)args->x, (const T *)args->y,
                                            (const T *)args->dy, (T *)args->dx, args->n,
                                            args->slope, args->accumulate != 0};
    return launch_for_kind(args->kind, op, st);
}

static int cuda_activation_backward(const Backend *b, const ActivationBackwardArgs *args,
                                    Status *st) {
    TRY(activation_checks(b, args->kind, args->dtype, "activation_backward", st));
    if (args->n == 0) return 0;
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype,
                          rc = activation_backward_stored<storage_t>(cuda_context(b), args, st));
    return rc;
}

// ---- activation and bias gradients in one pass (a fused dense layer's backward) --------
//
// Unfused, a dense layer's act= backward reads y and dy and writes dx (activation_backward),
// then sum_rows reads dx again for the bias gradient. Here each thread owns a column, as
// in cuda_gemm.cu's sum_rows_kernel, computes dx for its rows, writes it and keeps the
// running column sum in a register: dx is written once and never read back. The split of
// the rows over blocks, the row order and the tree are sum_rows_kernel's
// (cuda_column_sums.h), and dx is activation_backward_kernel's arithmetic, so for f32 the
// result is bitwise the unfused GPU path's (and agrees with the CPU's row-by-row sum to
// rounding).
//
// y, dy and dx may be stored in bf16 or f16 (T): widened on the load, dx rounded once on
// the store, and the bias gradient sums the unrounded f32 dx, as the CPU does. dbias may be
// NULL (a 16-bit dx without a bias comes here too).

// dx of one value, from the activation's output (y stands in for x: activation_backward
// _kernel's relu fast path selects dy).
template <ActivationKind K>
__device__ static inline float gradient_from_output(float y, float dy, float slope) {
    if (K == ACTIVATION_RELU) return y > 0.0f ? dy : 0.0f;
    return __fmul_rn(dy, activation_derivative<K>(slope, y, y));
}

// Rows handled four at a time: the four rows' loads are issued before their stores, so a
// thread has eight loads in flight instead of two (the compiler cannot move a load above
// a store to dx itself: y, dy and dx could overlap). Each value is still read before it is
// written, and the sum still adds rows in ascending order, as the one-row loop does.
#define BACKWARD_ROWS_AT_ONCE 4

template <ActivationKind K, typename T>
__global__ static void activation_bias_backward_kernel(const T *y, const T *dy, T *dx,
                                                       float *dbias, int rows, int cols,
                                                       float slope, float beta,
                                                       ColumnSplit split, float *partials) {
    __shared__ float partial[COLUMN_SUM_ROWS][COLUMN_SUM_COLS];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const size_t first = column_chunk_first(split), end = column_chunk_end(split, rows);
    const size_t stride = (size_t)cols;
    for (size_t tile = blockIdx.x; tile * COLUMN_SUM_COLS < (size_t)cols; tile += gridDim.x) {
        size_t c = tile * COLUMN_SUM_COLS + tx;
        float sum = 0.0f;
        if (c < (size_t)cols) {
            size_t r = first + ty;
            const size_t step = COLUMN_SUM_ROWS;
            for (; r + (BACKWARD_ROWS_AT_ONCE - 1) * step < end;
                 r += BACKWARD_ROWS_AT_ONCE * step) {
                float yv[BACKWARD_ROWS_AT_ONCE], dyv[BACKWARD_ROWS_AT_ONCE];
#pragma unroll
                for (int u = 0; u < BACKWARD_ROWS_AT_ONCE; u++) {
                    size_t i = (r + u * step) * stride + c;
                    yv[u] = storage_load(y, i);
                    dyv[u] = storage_load(dy, i);
                }
#pragma unroll
                for (int u = 0; u < BACKWARD_ROWS_AT_ONCE; u++) {
                    float g = gradient_from_output<K>(yv[u], dyv[u], slope);
                    storage_store(dx, (r + u * step) * stride + c, g);
                    sum += g;
                }
            }
            for (; r < end; r += step) {
                size_t i = r * stride + c;
                float g = gradient_from_output<K>(storage_load(y, i), storage_load(dy, i), slope);
                storage_store(dx, i, g);
                sum += g;
            }
        }
        float total = column_tile_total(sum, partial);
        if (ty == 0 && c < (size_t)cols && dbias)
            column_total_store(total, c, cols, dbias, beta, split, partials);
    }
}

template <ActivationKind K, typename T>
static int launch_activation_bias_backward(const CudaContext *ctx, const T *y, const T *dy, T *dx,
                                           float *dbias, int rows, int cols, float slope,
                                           float beta, Status *st) {
    ColumnSplit split = column_split(rows, cols);
    dim3 grid = column_sum_grid(cols, split), block = column_sum_block();
    CUDA_CHECK_CONFIG(ctx, "activation_bias_backward_kernel", grid, block,
                      sizeof(float[COLUMN_SUM_ROWS][COLUMN_SUM_COLS]), (size_t)rows * cols, 64);
    activation_bias_backward_kernel<K, T><<<grid, block, 0, ctx->stream>>>(
        y, dy, dx, dbias, rows, cols, slope, beta, split, (float *)ctx->partials);
    CUDA_CHECK_LAUNCH("activation_bias_backward_kernel");
    return column_sums_finish(ctx, dbias, split, cols, beta, st);
}

// gelu is refused by the entry (it cannot be differentiated from its output), so it has no
// kernel here.
template <typename T>
struct ActivationBiasBackwardLaunch {
    const CudaContext *ctx;
    const T *y, *dy;
    T *dx;
    float *dbias;
    int rows, cols;
    float slope, beta;
    template <ActivationKind K> int launch(Status *st) const {
        if constexpr (K == ACTIVATION_GELU)
            return unknown_activation(K, st);
        else
            return launch_activation_bias_backward<K>(ctx, y, dy, dx, dbias, rows, cols, slope,
                                                      beta, st);
    }
};

template <typename T>
static int activation_bias_backward_stored(const CudaContext *ctx, const FusedActivation *act,
                                           const T *y, const T *dy, T *dx, float *dbias,
                                           int rows, int cols, float beta, Status *st) {
    const ActivationBiasBackwardLaunch<T> op = {ctx, y, dy, dx, dbias, rows, cols, act->slope,
                                                beta};
    return launch_for_kind(act->kind, op, st);
}

static int cuda_activation_bias_backward(const Backend *b, const FusedActivation *act,
                                         const ActivationBiasBackwardTensors *t, Status *st) {
    if (!act->apply || act->kind == ACTIVATION_GELU)
        return status_fail(st, STATUS_RUNTIME_ERROR, "activation_bias_backward: %s cannot be "
                           "differentiated from its output", act->apply ? "gelu" : "no activation");
    TRY(backend_dtype_check(b, t->dtype, "activation_bias_backward", st));
    if (t->cols <= 0) return 0;
    int rows = t->rows < 0 ? 0 : t->rows;
    if (!t->dbias && rows == 0) return 0;
    if (!t->dbias && t->dtype == DTYPE_F32) {
        const ActivationBackwardArgs plain = {act->kind, act->slope, DTYPE_F32, t->y, t->y,
                                              t->dy, t->dx, (size_t)rows * (size_t)t->cols, 0};
        return cuda_activation_backward(b, &plain, st);
    }
    const CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(t->dtype, rc = activation_bias_backward_stored(
                                        ctx, act, (const storage_t *)t->y, (const storage_t *)t->dy,
                                        (storage_t *)t->dx, t->dbias, rows, t->cols, t->beta, st));
    return rc;
}

// ---- bias and activation over a stored 16-bit GEMM result --------------------------
//
// cuda_gemm.cu's fallback where cuBLASLt has no epilogue for a 16-bit C: C was rounded by
// the GEMM, and is widened, biased, activated and rounded again here (the CPU rounds once,
// so the two may differ by one rounding of C). The bias is rounded to C's type first, as
// the epilogue's 16-bit bias is. On the H200, while the epilogue was given an f32 bias,
// every bf16 dense layer's forward came here, so the grid is cuda_gemm.cu's
// add_bias_rows_kernel's: threads across columns (each keeps its bias in a register), rows
// down the block, no index division per element.
template <ActivationKind K, typename T>
__global__ static void bias_activation_stored_kernel(T *c, int rows, int cols, int ldc,
                                                     const float *bias, int apply, float slope) {
    for (size_t col = cuda_grid_thread(); col < (size_t)cols; col += cuda_grid_threads()) {
        float b = bias ? storage_round(c, bias[col]) : 0.0f;
        for (size_t r = blockIdx.y * (size_t)blockDim.y + threadIdx.y; r < (size_t)rows;
             r += (size_t)gridDim.y * blockDim.y) {
            size_t at = r * (size_t)ldc + col;
            float v = storage_load(c, at);
            if (bias) v += b;
            if (apply) v = activation<K>(v, slope);
            storage_store(c, at, v);
        }
    }
}

template <ActivationKind K, typename T>
static int launch_bias_activation_stored(const CudaContext *ctx, T *c, int rows, int cols,
                                         int ldc, const float *bias, int apply, float slope,
                                         Status *st) {
    dim3 block(COLUMN_SUM_COLS, COLUMN_SUM_ROWS);
    dim3 grid(cuda_blocks_capped((size_t)cols, COLUMN_SUM_COLS),
              cuda_blocks_capped((size_t)rows, COLUMN_SUM_ROWS));
    CUDA_CHECK_CONFIG(ctx, "bias_activation_stored_kernel", grid, block, 0,
                      (size_t)rows * (size_t)ldc, 64);
    bias_activation_stored_kernel<K, T><<<grid, block, 0, ctx->stream>>>(c, rows, cols, ldc, bias,
                                                                         apply, slope);
    CUDA_CHECK_LAUNCH("bias_activation_stored_kernel");
    return 0;
}

template <typename T>
struct BiasActivationLaunch {
    const CudaContext *ctx;
    T *c;
    int rows, cols, ldc;
    const float *bias;
    int apply;
    float slope;
    template <ActivationKind K> int launch(Status *st) const {
        return launch_bias_activation_stored<K>(ctx, c, rows, cols, ldc, bias, apply, slope, st);
    }
};

template <typename T>
static int bias_activation_stored(const CudaContext *ctx, T *c, int rows, int cols, int ldc,
                                  const float *bias, const FusedActivation *act, Status *st) {
    // Without an activation the kind is never applied: any instantiation will do.
    ActivationKind kind = act->apply ? act->kind : ACTIVATION_RELU;
    const BiasActivationLaunch<T> op = {ctx, c, rows, cols, ldc, bias, act->apply, act->slope};
    return launch_for_kind(kind, op, st);
}

int cuda_bias_activation_stored(const Backend *b, DType dtype, void *c, int rows, int cols,
                                int ldc, const float *bias, const FusedActivation *act,
                                Status *st) {
    TRY(backend_dtype_check(b, dtype, "gemm_bias_activation", st));
    const CudaContext *ctx = cuda_context(b);
    if (rows <= 0 || cols <= 0) return 0;
    int rc = 0;
    CUDA_STORAGE_DISPATCH(dtype, rc = bias_activation_stored(ctx, (storage_t *)c, rows, cols, ldc,
                                                             bias, act, st));
    return rc;
}

// ---- dropout -----------------------------------------------------------------------
//
// The mask comes from cuda_dropout_uniform(seed, i), the CPU's counter-based hash on the
// same global index, so it is the CPU's mask bit for bit whatever the grid shape: no
// per-thread RNG state, nothing that depends on which thread handles which element.
// keep_scale = 1 / (1 - rate) is computed once on the host, the same float expression as
// the CPU's, and the mask stores it (or 0) so backward is one multiply.
// `replayed`: NULL, or (a step replayed from a CUDA Graph, cuda_graph.h) the step's seed,
// to which `seed` is then this pass's fixed offset.
template <typename T>
__global__ static void dropout_forward_kernel(const T *x, T *y, float *mask, size_t n,
                                              float rate, float keep_scale, uint64_t argument,
                                              const uint64_t *replayed) {
    const uint64_t seed = replayed ? *replayed + argument : argument;
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads()) {
        float m = cuda_dropout_uniform(seed, i) >= rate ? keep_scale : 0.0f;
        mask[i] = m;
        storage_store(y, i, storage_load(x, i) * m);
    }
}

template <typename T>
static int launch_dropout_forward(const CudaContext *ctx, const T *x, T *y, float *mask, size_t n,
                                  float rate, float keep_scale, uint64_t argument,
                                  const uint64_t *replayed, Status *st) {
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "dropout_forward_kernel", grid, CUDA_THREADS, 0, n, 64);
    dropout_forward_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        x, y, mask, n, rate, keep_scale, argument, replayed);
    CUDA_CHECK_LAUNCH("dropout_forward_kernel");
    return 0;
}

static int cuda_dropout_forward(const Backend *b, const DropoutForwardArgs *args, Status *st) {
    TRY(backend_dtype_check(b, args->dtype, "dropout_forward", st));
    if (args->n == 0) return 0;
    float keep_scale = 1.0f / (1.0f - args->rate);
    CudaContext *ctx = cuda_context(b);
    const uint64_t *replayed;
    uint64_t argument;
    cuda_capture_seed(ctx, args->seed, &replayed, &argument);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype, rc = launch_dropout_forward(ctx, (const storage_t *)args->x,
                                                                   (storage_t *)args->y, args->mask,
                                                                   args->n, args->rate, keep_scale,
                                                                   argument, replayed, st));
    return rc;
}

// dx = (accumulate ? dx : 0) + dy * mask, written exactly so: adding to +0.0f (rather than
// storing the product) turns a -0 product into +0 as the CPU does. A 16-bit dx is added to
// in f32 and rounded once.
template <typename T>
__global__ static void dropout_backward_kernel(const T *dy, const float *mask, T *dx, size_t n,
                                               int accumulate) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads()) {
        float base = accumulate ? storage_load(dx, i) : 0.0f;
        storage_store(dx, i, __fadd_rn(base, __fmul_rn(storage_load(dy, i), mask[i])));
    }
}

template <typename T>
static int launch_dropout_backward(const CudaContext *ctx, const T *dy, const float *mask, T *dx,
                                   size_t n, int accumulate, Status *st) {
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "dropout_backward_kernel", grid, CUDA_THREADS, 0, n, 64);
    dropout_backward_kernel<T><<<grid, CUDA_THREADS, 0, ctx->stream>>>(dy, mask, dx, n,
                                                                      accumulate);
    CUDA_CHECK_LAUNCH("dropout_backward_kernel");
    return 0;
}

static int cuda_dropout_backward(const Backend *b, const DropoutBackwardArgs *args, Status *st) {
    TRY(backend_dtype_check(b, args->dtype, "dropout_backward", st));
    if (args->n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype,
                          rc = launch_dropout_backward(ctx, (const storage_t *)args->dy, args->mask,
                                                       (storage_t *)args->dx, args->n,
                                                       args->accumulate != 0, st));
    return rc;
}

void cuda_register_elementwise_ops(Backend *table) {
    table->activation_forward = cuda_activation_forward;
    table->activation_backward = cuda_activation_backward;
    table->activation_bias_backward = cuda_activation_bias_backward;
    table->dropout_forward = cuda_dropout_forward;
    table->dropout_backward = cuda_dropout_backward;
}
