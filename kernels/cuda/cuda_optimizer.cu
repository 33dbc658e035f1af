// CUDA optimizer ops: SGD (momentum, Nesterov, L2 weight decay) and Adam/AdamW, each one
// fused pass over the parameter. The CPU versions in kernels/cpu/cpu_optimizer.c are the
// reference, and these follow them operation for operation.
//
// An update reads the parameter, its gradient and the optimizer state and writes the
// parameter and state back (Adam: 4 loads and 3 stores per element), so it is bound by
// memory bandwidth; doing it in one kernel reads each array once. Everything that is the
// same for every element (Adam's bias corrections, lr * weight_decay, 1 - beta) is
// computed once on the host, with the same float expressions as the CPU, and passed in.
//
// Numerics: every product and quotient is rounded on its own (__fmul_rn, __fdiv_rn,
// __fsqrt_rn, __fadd_rn), which the compiler never contracts into FMAs. The CPU rounds each
// operation separately too (C11, no -ffp-contract), so given the same inputs the GPU's
// parameters and state are bitwise the CPU's, step after step, not merely close.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cuda/cuda_graph.h"

// PyTorch's SGD on one value: g = grad + wd * param; with momentum, v = momentum * v + g
// and the step is along v (or, Nesterov, g + momentum * v); param -= lr * g. Without
// momentum `velocity` is neither read nor written. The one definition of the math behind
// the per-tensor kernel and both paths of the multi-tensor kernel (values loaded one by one
// or four at a time), so their results agree bit for bit.
__device__ static inline void sgd_value(float &param, float grad, float &velocity,
                                        const SgdFactors &f) {
    float g = __fadd_rn(grad, __fmul_rn(f.weight_decay, param));
    if (f.use_momentum) {
        velocity = __fadd_rn(__fmul_rn(f.momentum, velocity), g);
        g = f.nesterov ? __fadd_rn(g, __fmul_rn(f.momentum, velocity)) : velocity;
    }
    param = __fsub_rn(param, __fmul_rn(f.lr, g));
}

// SGD on element i of the arrays. Without momentum the velocity buffer is never touched
// (it may be NULL), as on the CPU.
__device__ static inline void sgd_element(float *param, const float *grad, float *velocity,
                                          size_t i, const SgdFactors &f) {
    float p = param[i], v = f.use_momentum ? velocity[i] : 0.0f;
    sgd_value(p, grad[i], v, f);
    if (f.use_momentum) velocity[i] = v;
    param[i] = p;
}

// `replayed`: NULL, or where a step replayed from a CUDA Graph keeps this step's factors
// (cuda_graph.h); every kernel here takes its factors from there when given it.
__global__ static void sgd_update_kernel(float *param, const float *grad, float *velocity,
                                         size_t n, SgdFactors argument,
                                         const SgdFactors *replayed) {
    const SgdFactors f = replayed ? *replayed : argument;
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        sgd_element(param, grad, velocity, i, f);
}

static int cuda_sgd_update(const Backend *b, const SgdUpdateTensors *t, const SgdHyper *h,
                           Status *st) {
    if (t->n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    const SgdFactors *replayed;
    TRY(cuda_capture_sgd(ctx, h, &replayed, st));
    unsigned grid = cuda_blocks_for(t->n);
    CUDA_CHECK_CONFIG(ctx, "sgd_update_kernel", grid, CUDA_THREADS, 0, t->n, 64);
    sgd_update_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(t->param, t->grad, t->velocity, t->n,
                                                              cuda_sgd_factors(h), replayed);
    CUDA_CHECK_LAUNCH("sgd_update_kernel");
    return 0;
}

// Adam with the bias corrections folded into the step size and epsilon (the Adam paper's
// efficient form, as on the CPU): one sqrt and one divide per element.
//   AdamW (decoupled): param -= lr * wd * param before the moment update;
//   Adam (L2):         g += wd * param.
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g g
//   param -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps),
//   step_size = lr / (1 - beta1^t)   (AdamFactors, cuda_graph.h).

// Adam on one value; like sgd_value, the one definition of the math behind every kernel.
__device__ static inline void adam_value(float &param, float grad, float &m, float &v,
                                         const AdamFactors &f) {
    float g = grad;
    if (f.decoupled) param = __fsub_rn(param, __fmul_rn(f.lr_weight_decay, param));
    else g = __fadd_rn(g, __fmul_rn(f.weight_decay, param));
    m = __fadd_rn(__fmul_rn(f.beta1, m), __fmul_rn(f.one_minus_beta1, g));
    v = __fadd_rn(__fmul_rn(f.beta2, v), __fmul_rn(__fmul_rn(f.one_minus_beta2, g), g));
    float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), f.sqrt_correction2), f.eps);
    param = __fsub_rn(param, __fdiv_rn(__fmul_rn(f.step_size, m), denom));
}

// Adam on element i of the arrays.
__device__ static inline void adam_element(float *param, const float *grad, float *m, float *v,
                                           size_t i, const AdamFactors &f) {
    float p = param[i], mi = m[i], vi = v[i];
    adam_value(p, grad[i], mi, vi, f);
    m[i] = mi;
    v[i] = vi;
    param[i] = p;
}

__global__ static void adam_update_kernel(float *param, const float *grad, float *m, float *v,
                                          size_t n, AdamFactors argument,
                                          const AdamFactors *replayed) {
    const AdamFactors f = replayed ? *replayed : argument;
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        adam_element(param, grad, m, v, i, f);
}

static int cuda_adam_update(const Backend *b, const AdamUpdateTensors *t, const AdamHyper *h,
                            Status *st) {
    if (t->n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    const AdamFactors *replayed;
    TRY(cuda_capture_adam(ctx, h, &replayed, st));
    unsigned grid = cuda_blocks_for(t->n);
    CUDA_CHECK_CONFIG(ctx, "adam_update_kernel", grid, CUDA_THREADS, 0, t->n, 64);
    adam_update_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(t->param, t->grad, t->m, t->v, t->n,
                                                               cuda_adam_factors(h), replayed);
    CUDA_CHECK_LAUNCH("adam_update_kernel");
    return 0;
}

// ---- many tensors per launch -------------------------------------------------------------
//
// A model's parameters are a few large tensors and many small ones (biases, batchnorm's
// gamma and beta): on the H100, lenet's 8 Adam launches per step took 3.3 to 9.3 us each
// and cnn-bn's 10 took 3.2 to 6.6 us, half or more of them a single block of work, so the
// launches rather than the memory set the update's time. A multi-tensor launch (as PyTorch's
// foreach/fused optimizers and apex's multi_tensor_apply do) updates up to MULTI_TENSORS
// tensors in one grid: block b finds its tensor in a table passed by value as the
// kernel's argument (no device copy of the table to keep or wait for) and updates one
// MULTI_CHUNK-value chunk of it.
//
// Moving the memory: a large tensor's update is bound by bandwidth (Adam, 28 bytes per
// value), and the bandwidth is only reached with many loads in flight. A loop that loads one
// float per array per iteration keeps few of them in flight: its stores may alias the next
// iteration's loads, so the compiler cannot start those loads early. So where all of an
// entry's arrays are 16-byte aligned, each thread loads float4s of every array for all of
// its vectors of the chunk first (Adam: 4 arrays x 4 float4, 16 loads of 16 bytes in
// flight), then computes, then stores. An entry not so aligned (a view at an odd offset)
// takes the scalar loop, as do the last 1 to 3 values of a chunk whose length is not a
// multiple of 4. Either way each value goes through sgd_value / adam_value, the math of the
// per-tensor kernels, one lane at a time, so the result is the same bits, the CPU's.

// Tensors per launch: the table is 4 pointers and 2 ints per tensor, 2.6 KB, inside the
// 4 KB of kernel arguments every CUDA version allows.
#define MULTI_TENSORS 64
// Values per block: 16 per thread, so a bias of 10 values is one block and lenet's
// largest tensor (3136 x 256) 196. With the launches' CUDA_THREADS (256) threads, which the
// vector path takes as its stride, that is MULTI_VECTORS (4) float4s per thread and array,
// all loaded before any is stored.
#define MULTI_CHUNK 4096
#define MULTI_VECTORS (MULTI_CHUNK / 4 / (int)CUDA_THREADS)
static_assert(MULTI_CHUNK % (4 * CUDA_THREADS) == 0, "a chunk is whole float4s per thread");
// The most values one table entry holds; a larger tensor is entered in pieces. With the
// block budget below it keeps every count and block index of a launch inside an int.
#define MULTI_PIECE ((size_t)MULTI_CHUNK * 16384)

typedef struct MultiTensorTable {
    float *param[MULTI_TENSORS];
    const float *grad[MULTI_TENSORS];
    float *state0[MULTI_TENSORS], *state1[MULTI_TENSORS];  // SGD: velocity; Adam: m, v
    int n[MULTI_TENSORS];
    int first_block[MULTI_TENSORS + 1];  // entry t's blocks: [first_block[t], first_block[t+1])
    int count;
} MultiTensorTable;

static_assert(sizeof(MultiTensorTable) + sizeof(AdamFactors) + sizeof(void *) <= 4000,
              "a multi-tensor launch's arguments must stay within 4 KB");

// The table entry block b works on: the last t with first_block[t] <= b, by binary search
// over at most 64 entries. The table stays in the kernel's parameter space, read in place
// (__grid_constant__ below: no per-thread copy of its 2.6 KB, although the functions here
// take its address), where every thread of a block reads the same words.
__device__ static inline int multi_tensor_of(const MultiTensorTable &table, int b) {
    int lo = 0, hi = table.count - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (table.first_block[mid] <= b) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// This block's chunk of its tensor: values [*begin, *end), and the tensor's index.
__device__ static inline int multi_chunk(const MultiTensorTable &table, int *begin, int *end) {
    int t = multi_tensor_of(table, (int)blockIdx.x);
    *begin = ((int)blockIdx.x - table.first_block[t]) * MULTI_CHUNK;
    *end = min(*begin + MULTI_CHUNK, table.n[t]);
    return t;
}

// Whether every array a chunk uses is 16-byte aligned; an unused one is NULL, which is.
// A chunk starts a multiple of MULTI_CHUNK values into its entry (and an entry a multiple
// of MULTI_PIECE into its tensor), so this is the entry's alignment, and is checked once per
// block, not per value.
__device__ static inline bool multi_aligned(const void *a, const void *b, const void *c,
                                            const void *d) {
    return (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c | (uintptr_t)d) % 16) == 0;
}

// The pointers of the multi-tensor functions below are __restrict__: an update's param,
// grad and state are separate buffers (a tensor's value, its gradient, the optimizer's own
// state), never views of one another, so a store through one never changes what another
// reads. That lets the compiler keep loads ahead of stores and read grad through the
// read-only path.

// SGD on values [from, count) of a chunk, one value per thread at a time.
__device__ static inline void sgd_chunk_scalar(float *__restrict__ param,
                                               const float *__restrict__ grad,
                                               float *__restrict__ velocity, int from,
                                               int count, const SgdFactors &f) {
    for (int i = from + (int)threadIdx.x; i < count; i += (int)blockDim.x)
        sgd_element(param, grad, velocity, (size_t)i, f);
}

// SGD on a chunk of aligned arrays: every float4 of this thread loaded (velocity only with
// momentum), then updated lane by lane and stored; the 0 to 3 values past the last whole
// float4 by the scalar loop.
__device__ static inline void sgd_chunk_vector(float *__restrict__ param,
                                               const float *__restrict__ grad,
                                               float *__restrict__ velocity, int count,
                                               const SgdFactors &f) {
    int vectors = count / 4;
    float4 p[MULTI_VECTORS], g[MULTI_VECTORS], v[MULTI_VECTORS];
#pragma unroll
    for (int k = 0; k < MULTI_VECTORS; k++) {
        int j = (int)threadIdx.x + k * (int)CUDA_THREADS;
        v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // unread without momentum, yet defined
        if (j < vectors) {
            p[k] = ((const float4 *)param)[j];
            g[k] = ((const float4 *)grad)[j];
            if (f.use_momentum) v[k] = ((const float4 *)velocity)[j];
        }
    }
#pragma unroll
    for (int k = 0; k < MULTI_VECTORS; k++) {
        int j = (int)threadIdx.x + k * (int)CUDA_THREADS;
        if (j < vectors) {
            sgd_value(p[k].x, g[k].x, v[k].x, f);
            sgd_value(p[k].y, g[k].y, v[k].y, f);
            sgd_value(p[k].z, g[k].z, v[k].z, f);
            sgd_value(p[k].w, g[k].w, v[k].w, f);
            ((float4 *)param)[j] = p[k];
            if (f.use_momentum) ((float4 *)velocity)[j] = v[k];
        }
    }
    sgd_chunk_scalar(param, grad, velocity, vectors * 4, count, f);
}

__global__ static void sgd_update_multi_kernel(const __grid_constant__ MultiTensorTable table,
                                               SgdFactors argument, const SgdFactors *replayed) {
    const SgdFactors f = replayed ? *replayed : argument;
    int begin, end, t = multi_chunk(table, &begin, &end);
    float *param = table.param[t] + begin;
    const float *grad = table.grad[t] + begin;
    float *velocity = f.use_momentum ? table.state0[t] + begin : NULL;
    if (multi_aligned(param, grad, velocity, NULL))
        sgd_chunk_vector(param, grad, velocity, end - begin, f);
    else
        sgd_chunk_scalar(param, grad, velocity, 0, end - begin, f);
}

// Adam on values [from, count) of a chunk, one value per thread at a time.
__device__ static inline void adam_chunk_scalar(float *__restrict__ param,
                                                const float *__restrict__ grad,
                                                float *__restrict__ m, float *__restrict__ v,
                                                int from, int count, const AdamFactors &f) {
    for (int i = from + (int)threadIdx.x; i < count; i += (int)blockDim.x)
        adam_element(param, grad, m, v, (size_t)i, f);
}

// Adam on a chunk of aligned arrays: every float4 of this thread, of all four arrays,
// loaded, then updated lane by lane and stored; the 0 to 3 values past the last whole
// float4 by the scalar loop.
__device__ static inline void adam_chunk_vector(float *__restrict__ param,
                                                const float *__restrict__ grad,
                                                float *__restrict__ m, float *__restrict__ v,
                                                int count, const AdamFactors &f) {
    int vectors = count / 4;
    float4 p[MULTI_VECTORS], g[MULTI_VECTORS], mk[MULTI_VECTORS], vk[MULTI_VECTORS];
#pragma unroll
    for (int k = 0; k < MULTI_VECTORS; k++) {
        int j = (int)threadIdx.x + k * (int)CUDA_THREADS;
        if (j < vectors) {
            p[k] = ((const float4 *)param)[j];
            g[k] = ((const float4 *)grad)[j];
            mk[k] = ((const float4 *)m)[j];
            vk[k] = ((const float4 *)v)[j];
        }
    }
#pragma unroll
    for (int k = 0; k < MULTI_VECTORS; k++) {
        int j = (int)threadIdx.x + k * (int)CUDA_THREADS;
        if (j < vectors) {
            adam_value(p[k].x, g[k].x, mk[k].x, vk[k].x, f);
            adam_value(p[k].y, g[k].y, mk[k].y, vk[k].y, f);
            adam_value(p[k].z, g[k].z, mk[k].z, vk[k].z, f);
            adam_value(p[k].w, g[k].w, mk[k].w, vk[k].w, f);
            ((float4 *)param)[j] = p[k];
            ((float4 *)m)[j] = mk[k];
            ((float4 *)v)[j] = vk[k];
        }
    }
    adam_chunk_scalar(param, grad, m, v, vectors * 4, count, f);
}

__global__ static void adam_update_multi_kernel(const __grid_constant__ MultiTensorTable table,
                                                AdamFactors argument,
                                                const AdamFactors *replayed) {
    const AdamFactors f = replayed ? *replayed : argument;
    int begin, end, t = multi_chunk(table, &begin, &end);
    float *param = table.param[t] + begin, *m = table.state0[t] + begin;
    float *v = table.state1[t] + begin;
    const float *grad = table.grad[t] + begin;
    if (multi_aligned(param, grad, m, v))
        adam_chunk_vector(param, grad, m, v, end - begin, f);
    else
        adam_chunk_scalar(param, grad, m, v, 0, end - begin, f);
}

// One launch of the table's tensors; the table is emptied for the next.
static int multi_launch(CudaContext *ctx, MultiTensorTable *table, int adam,
                        const SgdFactors *sgd, const AdamFactors *adam_f,
                        const void *replayed, Status *st) {
    if (table->count == 0) return 0;
    unsigned grid = (unsigned)table->first_block[table->count];
    if (adam) {
        CUDA_CHECK_CONFIG(ctx, "adam_update_multi_kernel", grid, CUDA_THREADS, 0,
                          MULTI_PIECE, 32);
        adam_update_multi_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
            *table, *adam_f, (const AdamFactors *)replayed);
        CUDA_CHECK_LAUNCH("adam_update_multi_kernel");
    } else {
        CUDA_CHECK_CONFIG(ctx, "sgd_update_multi_kernel", grid, CUDA_THREADS, 0, MULTI_PIECE,
                          32);
        sgd_update_multi_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
            *table, *sgd, (const SgdFactors *)replayed);
        CUDA_CHECK_LAUNCH("sgd_update_multi_kernel");
    }
    table->count = 0;
    table->first_block[0] = 0;
    return 0;
}

// Enters every tensor, in pieces of at most MULTI_PIECE values, launching whenever the
// table is full or the next piece's blocks would pass CUDA_MAX_BLOCKS (a grid valid on
// every axis of every GPU, as cuda_blocks_for keeps it). Empty tensors are skipped.
static int multi_update(const Backend *b, const OptimizerTensor *tensors, int count, int adam,
                        const SgdFactors *sgd, const AdamFactors *adam_f,
                        const void *replayed, Status *st) {
    CudaContext *ctx = cuda_context(b);
    MultiTensorTable table;
    memset(&table, 0, sizeof table);
    for (int i = 0; i < count; i++) {
        const OptimizerTensor *t = &tensors[i];
        for (size_t done = 0; done < t->n;) {
            size_t piece = t->n - done < MULTI_PIECE ? t->n - done : MULTI_PIECE;
            int blocks = (int)((piece + MULTI_CHUNK - 1) / MULTI_CHUNK);
            if (table.count == MULTI_TENSORS ||
                (size_t)table.first_block[table.count] + (size_t)blocks > CUDA_MAX_BLOCKS)
                TRY(multi_launch(ctx, &table, adam, sgd, adam_f, replayed, st));
            int k = table.count++;
            table.param[k] = t->param + done;
            table.grad[k] = t->grad + done;
            table.state0[k] = t->state[0] ? t->state[0] + done : NULL;
            table.state1[k] = t->state[1] ? t->state[1] + done : NULL;
            table.n[k] = (int)piece;
            table.first_block[k + 1] = table.first_block[k] + blocks;
            done += piece;
        }
    }
    return multi_launch(ctx, &table, adam, sgd, adam_f, replayed, st);
}

// With the multi-tensor lever off (base/lever.h), one launch per tensor, as core's
// optimizer does for a backend without the multi-tensor ops (the same bits), to measure
// what the single launch saves.
static int cuda_sgd_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                                 const SgdHyper *h, Status *st) {
    if (lever_off(cuda_context(b)->disabled_levers, LEVER_MULTI_TENSOR)) {
        for (int i = 0; i < count; i++) {
            const SgdUpdateTensors one = {tensors[i].param, tensors[i].grad, tensors[i].state[0],
                                          tensors[i].n};
            TRY(cuda_sgd_update(b, &one, h, st));
        }
        return 0;
    }
    SgdFactors f = cuda_sgd_factors(h);
    const SgdFactors *replayed;
    TRY(cuda_capture_sgd(cuda_context(b), h, &replayed, st));
    return multi_update(b, tensors, count, 0, &f, NULL, replayed, st);
}

static int cuda_adam_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                                  const AdamHyper *h, Status *st) {
    if (lever_off(cuda_context(b)->disabled_levers, LEVER_MULTI_TENSOR)) {
        for (int i = 0; i < count; i++) {
            const AdamUpdateTensors one = {tensors[i].param, tensors[i].grad, tensors[i].state[0],
                                           tensors[i].state[1], tensors[i].n};
            TRY(cuda_adam_update(b, &one, h, st));
        }
        return 0;
    }
    AdamFactors f = cuda_adam_factors(h);
    const AdamFactors *replayed;
    TRY(cuda_capture_adam(cuda_context(b), h, &replayed, st));
    return multi_update(b, tensors, count, 1, NULL, &f, replayed, st);
}

void cuda_register_optimizer_ops(Backend *table) {
    table->sgd_update = cuda_sgd_update;
    table->adam_update = cuda_adam_update;
    table->sgd_update_multi = cuda_sgd_update_multi;
    table->adam_update_multi = cuda_adam_update_multi;
}
