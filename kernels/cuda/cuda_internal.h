// Shared by the CUDA backend's .cu files only: the per-device context behind
// Backend.impl, the checks that turn every CUDA, cuBLAS and cuDNN failure into a Status,
// and launch-configuration helpers.
#ifndef TRAINER_CUDA_INTERNAL_H
#define TRAINER_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "kernels/backend.h"

typedef struct CudaConvAlgoCache CudaConvAlgoCache;

typedef struct CudaContext {
    int ordinal;
    cudaStream_t stream;          // every op of this device runs on it, in order
    cublasHandle_t cublas;
    cudnnHandle_t cudnn;
    int allow_tf32;
    int compute_major, compute_minor;
    int multiprocessors;
    int max_grid_x;
    CudaConvAlgoCache *conv_cache;  // cuda_conv.cu: chosen algorithms per shape
    char name[32];                  // "cuda:0"
} CudaContext;

static inline CudaContext *cuda_context(const Backend *b) { return (CudaContext *)b->impl; }

// Fill *st with the failed call, the error's name and number, where it happened, and a
// hint drawn from the error (cuda_errors.cu). Each returns the StatusCode it stored.
int cuda_fail(Status *st, cudaError_t err, const char *call, const char *file, int line);
int cublas_fail(Status *st, cublasStatus_t status, const char *call, const char *file, int line);
int cudnn_fail(Status *st, cudnnStatus_t status, const char *call, const char *file, int line);

// Inside a function that has `Status *st` and returns int.
#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t cuda_check_err_ = (call);                                         \
        if (cuda_check_err_ != cudaSuccess)                                           \
            return cuda_fail(st, cuda_check_err_, #call, __FILE__, __LINE__);         \
    } while (0)
// After a kernel launch: a bad launch configuration is reported here, at the launch;
// errors inside the kernel surface at the next synchronizing call.
#define CUDA_CHECK_LAUNCH(kernel_name)                                                \
    do {                                                                              \
        cudaError_t cuda_check_err_ = cudaGetLastError();                             \
        if (cuda_check_err_ != cudaSuccess)                                           \
            return cuda_fail(st, cuda_check_err_, "launch of " kernel_name, __FILE__, __LINE__); \
    } while (0)
#define CUBLAS_CHECK(call)                                                            \
    do {                                                                              \
        cublasStatus_t cublas_check_status_ = (call);                                 \
        if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS)                            \
            return cublas_fail(st, cublas_check_status_, #call, __FILE__, __LINE__);  \
    } while (0)
#define CUDNN_CHECK(call)                                                             \
    do {                                                                              \
        cudnnStatus_t cudnn_check_status_ = (call);                                   \
        if (cudnn_check_status_ != CUDNN_STATUS_SUCCESS)                              \
            return cudnn_fail(st, cudnn_check_status_, #call, __FILE__, __LINE__);    \
    } while (0)

// Threads per block for elementwise kernels, and the grid for n elements: capped, since
// kernels use grid-stride loops, so any n launches a valid configuration.
static const unsigned CUDA_THREADS = 256;
static const size_t CUDA_MAX_BLOCKS = 65535;
// Blocks to cover n items at per_block items per block: at least 1, at most
// CUDA_MAX_BLOCKS (the kernels stride over what the grid does not reach).
static inline unsigned cuda_blocks_capped(size_t n, unsigned per_block) {
    size_t blocks = (n + per_block - 1) / per_block;
    if (blocks == 0) blocks = 1;
    return (unsigned)(blocks > CUDA_MAX_BLOCKS ? CUDA_MAX_BLOCKS : blocks);
}
static inline unsigned cuda_blocks_for(size_t n) { return cuda_blocks_capped(n, CUDA_THREADS); }

// The sum of v over the block, returned to every thread: shuffles within warps, then warp
// 0 sums the warps' results; a fixed tree for a fixed blockDim, so the result is the same
// every run. `shared` holds one T per warp (32 at most); the trailing barrier lets the
// caller reuse it at once. Every thread of the block must call it.
template <typename T>
__device__ static inline T cuda_block_sum(T v, T *shared) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? shared[lane] : T(0);
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    T total = shared[0];
    __syncthreads();
    return total;
}

// The same dropout hash as the CPU's (kernels/backend.h), on the device.
__device__ static inline float cuda_dropout_uniform(uint64_t seed, uint64_t index) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

// ---- ops, one group per file; each file registers its entries in the table ----
void cuda_register_blas_ops(Backend *table);        // cuda_blas.cu
void cuda_register_elementwise_ops(Backend *table); // cuda_elementwise.cu
void cuda_register_loss_ops(Backend *table);        // cuda_loss.cu
void cuda_register_optimizer_ops(Backend *table);   // cuda_optimizer.cu
void cuda_register_conv_ops(Backend *table);        // cuda_conv.cu
void cuda_register_pool_ops(Backend *table);        // cuda_pool.cu
void cuda_register_batchnorm_ops(Backend *table);   // cuda_batchnorm.cu
void cuda_conv_cache_free(CudaContext *ctx);        // cuda_conv.cu

#endif
