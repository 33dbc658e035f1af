// CUDA loss ops: softmax cross-entropy and mean squared error against one-hot labels. The
// CPU versions in kernels/cpu/cpu_loss.c are the reference.
//
// The forward passes reduce along a row (max, argmax, sum), so each row belongs to one
// warp: classifier heads have 10 to a few thousand classes, which a warp covers in a few
// strided steps, and a warp reduces with shuffles, without shared memory or
// __syncthreads(). A block of 256 threads handles 8 rows; the grid strides over rows.
// The reductions have a fixed shape, so the results are the same on every run.
//
// The backward passes are elementwise over rows x classes, each element needing only its
// row's label, so they use the same 2-D layout as add_bias_rows: a warp across 32
// consecutive classes of a row (coalesced), warps down the rows.
//
// Labels are int32 on the device and were validated to lie in [0, classes) before any
// kernel runs (graph build), so the kernels index with them unchecked.
#include <limits.h>

#include "kernels/cuda/cuda_internal.h"

static const unsigned WARP = 32;
static const unsigned ROWS_PER_BLOCK = 8;  // warps per block in the forward kernels
static const unsigned ROW_THREADS = 8;     // warps down the rows in the backward kernels

// The forward kernels' block and grid: one warp per row, ROWS_PER_BLOCK rows per block.
static const unsigned FORWARD_THREADS = ROWS_PER_BLOCK * WARP;
static inline unsigned forward_blocks(int rows) {
    return cuda_blocks_capped((size_t)rows, ROWS_PER_BLOCK);
}
// The backward kernels' block and grid: WARP columns by ROW_THREADS rows per block.
static inline dim3 backward_block() { return dim3(WARP, ROW_THREADS); }
static inline dim3 backward_grid(int rows, int classes) {
    return dim3(cuda_blocks_capped((size_t)classes, WARP),
                cuda_blocks_capped((size_t)rows, ROW_THREADS));
}

// The forward kernels' row loop, one warp per row: this warp's first row, and the
// stride to its next (the warps in the grid).
__device__ static inline size_t warp_first_row() {
    return blockIdx.x * (size_t)(blockDim.x / WARP) + threadIdx.x / WARP;
}
__device__ static inline size_t grid_warps() {
    return (size_t)gridDim.x * (blockDim.x / WARP);
}

// ---- warp reductions ---------------------------------------------------------------

// A butterfly (xor) sum: every lane ends with the same, bitwise identical total, since at
// each step the two partners add the same two values (float addition commutes).
__device__ static inline float warp_sum(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// The CPU's argmax is `if (row[i] > row[best]) best = i` from best = 0: the first
// maximum wins, a NaN at index 0 wins outright (nothing compares greater than it), and a
// NaN anywhere else never wins. Mapping a value to a key (NaN at 0 -> +inf, NaN elsewhere
// -> -inf) and taking the largest key, the smallest index among equal keys, gives the
// same index for every row, and that order does not depend on how the row is split over
// lanes. Index 0 always competes, so a NaN mapped to -inf can only tie, and lose, to it.
__device__ static inline float argmax_key(float v, int index) {
    if (isnan(v)) return index == 0 ? INFINITY : -INFINITY;
    return v;
}

// The first-max-wins argmax of row[0..n), the same in every lane of the warp. Lanes walk
// indices in increasing order, so within a lane a strict > keeps the first maximum; across
// lanes, equal keys resolve to the smaller index.
__device__ static inline int warp_argmax(const float *row, int n, unsigned lane) {
    float best = -INFINITY;
    int best_index = INT_MAX;  // loses every tie: a lane with no elements never wins
    for (int c = (int)lane; c < n; c += WARP) {
        float key = argmax_key(row[c], c);
        if (key > best || best_index == INT_MAX) {
            best = key;
            best_index = c;
        }
    }
    for (int offset = WARP / 2; offset > 0; offset /= 2) {
        float other = __shfl_xor_sync(0xffffffffu, best, offset);
        int other_index = __shfl_xor_sync(0xffffffffu, best_index, offset);
        if (other > best || (other == best && other_index < best_index)) {
            best = other;
            best_index = other_index;
        }
    }
    return best_index;
}

// ---- softmax cross-entropy ---------------------------------------------------------
//
// Per row, three passes over the logits, which stay in L1/L2 between passes for any
// realistic class count, so DRAM sees one read of the logits and one write of probs:
//   1. argmax; max = z[argmax], exactly the CPU's running max (NaN handling included);
//   2. sum = sum exp(z - max): every term is in (0, 1] and the max's term is 1, so the
//      sum is in [1, classes] and cannot overflow; summed in float per lane, then a
//      butterfly (the CPU sums in double: the two agree to float rounding);
//   3. probs = exp(z - max) * (1 / sum), as the CPU scales. exp is recomputed rather
//      than stored in pass 2 and rescaled here: one store per probability instead of a
//      store, a load and a second store, for one extra exp, which is cheap.
// The loss is log-sum-exp, log(sum) - (z[label] - max), which stays finite where the
// label's probability underflows to 0 and -log(prob) would be inf.
__global__ static void softmax_cross_entropy_forward_kernel(const float *logits,
                                                            const int32_t *labels, int rows,
                                                            int classes, float *probs,
                                                            float *row_stats, float *dlogits,
                                                            float scale) {
    unsigned lane = threadIdx.x % WARP;
    // r is the same in all lanes of a warp, so the whole warp enters the shuffles together.
    for (size_t r = warp_first_row(); r < (size_t)rows; r += grid_warps()) {
        const float *z = logits + r * classes;
        float *p = probs + r * classes;
        int best = warp_argmax(z, classes, lane);
        float zmax = z[best];
        float sum = 0.0f;
        for (int c = (int)lane; c < classes; c += WARP) sum += expf(z[c] - zmax);
        sum = warp_sum(sum);
        float inv = 1.0f / sum;
        int label = labels[r];
        for (int c = (int)lane; c < classes; c += WARP) {
            // __fmul_rn rounds as the plain product did and is never fused with the
            // subtraction below into an FMA: the gradient is then, bit for bit, what the
            // backward kernel makes from the stored probability.
            float pc = __fmul_rn(expf(z[c] - zmax), inv);
            p[c] = pc;
            if (dlogits)
                dlogits[r * classes + c] = __fmul_rn(pc - (c == label ? 1.0f : 0.0f), scale);
        }
        if (lane == 0) {
            row_stats[2 * r] = logf(sum) - (z[label] - zmax);
            row_stats[2 * r + 1] = best == label ? 1.0f : 0.0f;
        }
    }
}

static int cuda_softmax_cross_entropy_forward(const Backend *b,
                                              const SoftmaxCrossEntropyForwardArgs *args,
                                              Status *st) {
    if (args->rows <= 0 || args->classes <= 0) return 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = forward_blocks(args->rows);
    CUDA_CHECK_CONFIG(ctx, "softmax_cross_entropy_forward_kernel", grid, FORWARD_THREADS, 0,
                      (size_t)args->rows * args->classes, 64);
    softmax_cross_entropy_forward_kernel<<<grid, FORWARD_THREADS, 0, ctx->stream>>>(
        args->logits, args->labels, args->rows, args->classes, args->probs, args->row_stats,
        args->dlogits, args->scale);
    CUDA_CHECK_LAUNCH("softmax_cross_entropy_forward_kernel");
    return 0;
}

// ---- backward, both losses -----------------------------------------------------------
//
// out = (accumulate ? out : 0) + gradient(value - onehot(label), scale) over rows x
// classes (out is not read otherwise), in backward_grid's layout: a warp across
// consecutive classes of a row, warps down the rows, grid-stride both ways. Each loss's
// gradient rounds its products (__fmul_rn, never fused into an FMA with the add), as the
// CPU does, so given the same inputs the result is bitwise the CPU's.
template <typename Gradient>
__device__ static inline void onehot_backward(const float *values, const int32_t *labels,
                                              int rows, int classes, float scale, float *out,
                                              int accumulate, Gradient gradient) {
    for (size_t r = blockIdx.y * (size_t)blockDim.y + threadIdx.y; r < (size_t)rows;
         r += (size_t)gridDim.y * blockDim.y) {
        int label = labels[r];
        for (size_t c = cuda_grid_thread(); c < (size_t)classes; c += cuda_grid_threads()) {
            size_t i = r * classes + c;
            float g = gradient(values[i] - (c == (size_t)label ? 1.0f : 0.0f), scale);
            out[i] = accumulate ? out[i] + g : g;
        }
    }
}

// The backward kernels' signature: values, labels, rows, classes, scale, out, accumulate.
typedef void (*OnehotBackwardKernel)(const float *, const int32_t *, int, int, float, float *,
                                     int);

// Both backward ops' launch, checked under the kernel's name.
static int launch_onehot_backward(const Backend *b, const char *name, OnehotBackwardKernel kernel,
                                  const float *values, const int32_t *labels, int rows,
                                  int classes, float scale, float *out, int accumulate,
                                  Status *st) {
    if (rows <= 0 || classes <= 0) return 0;
    CudaContext *ctx = cuda_context(b);
    dim3 grid = backward_grid(rows, classes), block = backward_block();
    CUDA_CHECK_CONFIG(ctx, name, grid, block, 0, (size_t)rows * classes, 64);
    kernel<<<grid, block, 0, ctx->stream>>>(values, labels, rows, classes, scale, out,
                                            accumulate);
    CUDA_CHECK_LAUNCH(name);
    return 0;
}

// dlogits = (probs - onehot(label)) * scale.
struct SoftmaxCrossEntropyGradient {
    __device__ float operator()(float diff, float scale) const { return __fmul_rn(diff, scale); }
};

__global__ static void softmax_cross_entropy_backward_kernel(const float *probs,
                                                             const int32_t *labels, int rows,
                                                             int classes, float scale,
                                                             float *dlogits, int accumulate) {
    onehot_backward(probs, labels, rows, classes, scale, dlogits, accumulate,
                    SoftmaxCrossEntropyGradient());
}

static int cuda_softmax_cross_entropy_backward(const Backend *b,
                                               const SoftmaxCrossEntropyBackwardArgs *args,
                                               Status *st) {
    return launch_onehot_backward(b, "softmax_cross_entropy_backward_kernel",
                                  softmax_cross_entropy_backward_kernel, args->probs,
                                  args->labels, args->rows, args->classes, args->scale,
                                  args->dlogits, args->accumulate != 0, st);
}

// ---- mean squared error against one-hot targets ------------------------------------
//
// One warp per row, one pass for the argmax and one for sum (y - t)^2 (the second hits
// L1). Summed in float per lane then a butterfly; the CPU sums in double, so the two agree
// to float rounding.
__global__ static void mse_forward_kernel(const float *predictions, const int32_t *labels,
                                          int rows, int classes, float *row_stats) {
    unsigned lane = threadIdx.x % WARP;
    for (size_t r = warp_first_row(); r < (size_t)rows; r += grid_warps()) {
        const float *y = predictions + r * classes;
        int label = labels[r];
        int best = warp_argmax(y, classes, lane);
        float sum = 0.0f;
        for (int c = (int)lane; c < classes; c += WARP) {
            float diff = y[c] - (c == label ? 1.0f : 0.0f);
            sum += diff * diff;
        }
        sum = warp_sum(sum);
        if (lane == 0) {
            row_stats[2 * r] = sum;
            row_stats[2 * r + 1] = best == label ? 1.0f : 0.0f;
        }
    }
}

static int cuda_mse_forward(const Backend *b, const MseForwardArgs *args, Status *st) {
    if (args->rows <= 0 || args->classes <= 0) return 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = forward_blocks(args->rows);
    CUDA_CHECK_CONFIG(ctx, "mse_forward_kernel", grid, FORWARD_THREADS, 0,
                      (size_t)args->rows * args->classes, 64);
    mse_forward_kernel<<<grid, FORWARD_THREADS, 0, ctx->stream>>>(
        args->predictions, args->labels, args->rows, args->classes, args->row_stats);
    CUDA_CHECK_LAUNCH("mse_forward_kernel");
    return 0;
}

// dy = 2 (y - t) * scale, evaluated as the CPU does, (2 * (y - t)) * scale.
struct MseGradient {
    __device__ float operator()(float diff, float scale) const {
        return __fmul_rn(__fmul_rn(2.0f, diff), scale);
    }
};

__global__ static void mse_backward_kernel(const float *predictions, const int32_t *labels,
                                           int rows, int classes, float scale,
                                           float *dpredictions, int accumulate) {
    onehot_backward(predictions, labels, rows, classes, scale, dpredictions, accumulate,
                    MseGradient());
}

static int cuda_mse_backward(const Backend *b, const MseBackwardArgs *args, Status *st) {
    return launch_onehot_backward(b, "mse_backward_kernel", mse_backward_kernel,
                                  args->predictions, args->labels, args->rows, args->classes,
                                  args->scale, args->dpredictions, args->accumulate != 0, st);
}

void cuda_register_loss_ops(Backend *table) {
    table->softmax_cross_entropy_forward = cuda_softmax_cross_entropy_forward;
    table->softmax_cross_entropy_backward = cuda_softmax_cross_entropy_backward;
    table->mse_forward = cuda_mse_forward;
    table->mse_backward = cuda_mse_backward;
}
