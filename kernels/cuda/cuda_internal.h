// Shared by the CUDA backend's .cu files only: the per-device context behind
// Backend.impl, the checks that turn every CUDA, cuBLAS and cuDNN failure into a Status,
// and launch-configuration helpers.
#ifndef TRAINER_CUDA_INTERNAL_H
#define TRAINER_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/launch_check.h"

typedef struct CudaConvAlgoCache CudaConvAlgoCache;
typedef struct CudaCapture CudaCapture;
typedef struct CudaGemmEpilogues CudaGemmEpilogues;

typedef struct CudaContext {
    int ordinal;
    cudaStream_t stream;          // every op of this device runs on it, in order
    cublasHandle_t cublas;
    cudnnHandle_t cudnn;
    Precision precision;          // what GEMMs and convolutions compute in (not DEFAULT)
    unsigned disabled_levers;     // base/lever.h: levers whose old path the ops run instead
    int compute_major, compute_minor;
    int multiprocessors;
    LaunchLimits limits;          // the device's, checked before every kernel launch
    CudaConvAlgoCache *conv_cache;  // cuda_conv2d.cu: chosen algorithms per shape
    CudaGemmEpilogues *gemm_epilogues;  // cuda_gemm.cu: cuBLASLt handle, workspace, plans
    void *partials;                 // CUDA_PARTIALS_BYTES: cuda_channel_reduce.h's first pass
    CudaCapture *capture;           // cuda_graph.cu: NULL until the first capture_begin
    char name[32];                  // "cuda:0"
} CudaContext;

// The device scratch of the two-pass reductions (cuda_channel_reduce.h: the convolution
// bias gradient, batchnorm's statistics; cuda_column_sums.h: a dense layer's bias
// gradient; cuda_norm.cu's sums of squares), allocated once when the device opens: 1 MiB,
// room for 131 072 double or 262 144 float partial sums (a 4096-unit layer's 16 chunks at
// batch 4096 take 256 KiB). Every op of a device runs in order on its one stream, so one
// buffer serves them all: an op's second pass has read the partials before the next op's
// first pass can overwrite them. Fixed and small, so it lives outside the
// caching allocator (and --memory-limit), like the cuBLAS and cuDNN handles' own memory.
#define CUDA_PARTIALS_BYTES ((size_t)1 << 20)

static inline CudaContext *cuda_context(const Backend *b) { return (CudaContext *)b->impl; }

// Fill *st with the failed call, the error's name and number, where it happened, and a
// hint drawn from the error (cuda_errors.cu). Each returns the StatusCode it stored.
// cuda_fail also clears the runtime's last error: the Status now carries it, and left
// behind, the next launch check would report it again as that kernel's failure.
int cuda_fail(Status *st, cudaError_t err, const char *call, const char *file, int line);
// The runtime calls as the backend makes them: CUDA's own, or a test's fakes
// (CudaRuntimeCalls in cuda_backend.h).
const CudaRuntimeCalls *cuda_runtime_calls(void);
int cublas_fail(Status *st, cublasStatus_t status, const char *call, const char *file, int line);
int cudnn_fail(Status *st, cudnnStatus_t status, const char *call, const char *file, int line);

// Inside a function that has `Status *st` and returns int.
#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t cuda_check_err_ = (call);                                         \
        if (cuda_check_err_ != cudaSuccess)                                           \
            return cuda_fail(st, cuda_check_err_, #call, __FILE__, __LINE__);         \
    } while (0)
// Before every <<<...>>> launch of our kernels: checks the grid, block and shared memory
// (static + dynamic bytes per block) against the device's limits, and the element count
// against the kernel's index type (index_bits 32 when it indexes `elements` with int, 64
// with size_t), and returns the Status from the calling function when the launch does
// not fit, naming the kernel, the configuration and the limit; so "invalid configuration
// argument" never comes back from the GPU for our kernels. A dozen host compares against
// limits read once at open: no device query per launch. tests/unit/test_launch_check.c
// fails for any launch in kernels/cuda/*.cu without one just above it.
#define CUDA_CHECK_CONFIG(ctx, kernel_name, grid, block, shared_bytes, elements, index_bits) \
    TRY(cuda_check_config((ctx), kernel_name, (grid), (block), (shared_bytes), (elements),   \
                          (index_bits), st))
static inline int cuda_check_config(const CudaContext *ctx, const char *kernel, dim3 grid,
                                    dim3 block, size_t shared_bytes, size_t elements,
                                    int index_bits, Status *st) {
    LaunchConfig config;
    config.kernel = kernel;
    config.grid[0] = grid.x;
    config.grid[1] = grid.y;
    config.grid[2] = grid.z;
    config.block[0] = block.x;
    config.block[1] = block.y;
    config.block[2] = block.z;
    config.shared_bytes = shared_bytes;
    config.elements = elements;
    config.index_bits = index_bits;
    return launch_check(&ctx->limits, &config, st);
}
// After a kernel launch: a launch the driver refuses anyway is reported here, at the
// launch; errors inside the kernel surface at the next synchronizing call.
#define CUDA_CHECK_LAUNCH(kernel_name) \
    TRY(cuda_check_launch(kernel_name, __FILE__, __LINE__, st))
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
//
// The cap, 65 535, is the smallest grid limit of any axis (y and z; x allows 2^31 - 1) on
// every GPU CUDA 13 supports, so a capped count is valid along x, y or z alike, and
// launch_check still compares it with the device's own limits. A larger grid along x
// would buy nothing: 65 535 blocks of 256 threads are some 60 times what an H100 holds
// resident, and it keeps gridDim.x * blockDim.x well inside an int, which
// cuda_batchnorm.cu's cursors rely on.
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

// The grid-stride loop of the one-thread-per-element kernels: a thread takes element
// cuda_grid_thread(), then every cuda_grid_threads()-th after it, so the capped grids of
// cuda_blocks_capped still cover every element.
__device__ static inline size_t cuda_grid_thread() {
    return blockIdx.x * (size_t)blockDim.x + threadIdx.x;
}
__device__ static inline size_t cuda_grid_threads() { return (size_t)gridDim.x * blockDim.x; }

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
    uint64_t z = seed + DROPOUT_HASH_STEP * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

// ---- ops, one group per file; each file registers its entries in the table ----
void cuda_register_gemm_ops(Backend *table);        // cuda_gemm.cu
// cuda_gemm.cu's cuBLASLt state, made when the device opens (its workspace must exist
// before any step is captured into a CUDA Graph) and freed when it closes.
int cuda_gemm_epilogues_open(CudaContext *ctx, Status *st);
void cuda_gemm_epilogues_close(CudaContext *ctx);
void cuda_register_elementwise_ops(Backend *table); // cuda_elementwise.cu
void cuda_register_loss_ops(Backend *table);        // cuda_loss.cu
void cuda_register_optimizer_ops(Backend *table);   // cuda_optimizer.cu
void cuda_register_conv_ops(Backend *table);        // cuda_conv2d.cu
void cuda_register_pool_ops(Backend *table);        // cuda_pool.cu
void cuda_register_layout_ops(Backend *table);      // cuda_layout.cu
void cuda_register_batchnorm_ops(Backend *table);   // cuda_batchnorm.cu
void cuda_register_norm_ops(Backend *table);        // cuda_norm.cu
void cuda_conv_cache_free(CudaContext *ctx);        // cuda_conv2d.cu

#endif
