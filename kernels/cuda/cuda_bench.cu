// `trainer bench` on a GPU: the device's facts behind its peaks, input fills and GEMMs in
// each precision through cuBLAS (kernels/cuda/cuda_bench.h). Timing is the caller's, with
// the backend's timer ops around what this queues on the backend's stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_bench.h"
#include "kernels/cuda/cuda_internal.h"

struct CudaBenchGemm {
    const Backend *backend;
    cublasHandle_t handle;
};

extern "C" int cuda_bench_device(const Backend *b, CudaBenchDevice *out, Status *st) {
    memset(out, 0, sizeof *out);
    int ordinal = cuda_context(b)->ordinal;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->compute_major = prop.major;
    out->compute_minor = prop.minor;
    out->multiprocessors = prop.multiProcessorCount;
    // CUDA 13's cudaDeviceProp no longer has the clock and memory fields; the attributes
    // remain. One the driver does not report leaves 0: its peak is then unknown.
    int l2 = 0;
    if (cudaDeviceGetAttribute(&out->clock_khz, cudaDevAttrClockRate, ordinal) != cudaSuccess)
        out->clock_khz = 0;
    if (cudaDeviceGetAttribute(&out->memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal) !=
        cudaSuccess)
        out->memory_clock_khz = 0;
    if (cudaDeviceGetAttribute(&out->memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth,
                               ordinal) != cudaSuccess)
        out->memory_bus_bits = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal) != cudaSuccess) l2 = 0;
    out->l2_bytes = l2 > 0 ? (size_t)l2 : 0;
    cudaGetLastError();  // a refused attribute is not an error of the next launch
    return 0;
}

extern "C" int cuda_bench_gemm_open(const Backend *b, CudaBenchGemm **out, Status *st) {
    *out = NULL;
    CudaBenchGemm *g = (CudaBenchGemm *)calloc(1, sizeof *g);
    if (!g) return status_out_of_host_memory(st, sizeof *g, "for bench's GEMM state");
    g->backend = b;
    int rc = 0;
    cudaError_t err = cudaSetDevice(cuda_context(b)->ordinal);
    if (err != cudaSuccess) rc = cuda_fail(st, err, "cudaSetDevice", __FILE__, __LINE__);
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    if (!rc && (status = cublasCreate(&g->handle)) != CUBLAS_STATUS_SUCCESS)
        rc = cublas_fail(st, status, "cublasCreate(&g->handle)", __FILE__, __LINE__);
    if (!rc && (status = cublasSetStream(g->handle, cuda_context(b)->stream)) !=
                   CUBLAS_STATUS_SUCCESS)
        rc = cublas_fail(st, status, "cublasSetStream", __FILE__, __LINE__);
    // The default math mode keeps fp32 GEMMs in fp32; TF32 is asked for per call through
    // its compute type, bf16 and fp16 run on tensor cores under either mode.
    if (!rc && (status = cublasSetMathMode(g->handle, CUBLAS_DEFAULT_MATH)) !=
                   CUBLAS_STATUS_SUCCESS)
        rc = cublas_fail(st, status, "cublasSetMathMode(CUBLAS_DEFAULT_MATH)", __FILE__,
                         __LINE__);
    if (rc) {
        cuda_bench_gemm_close(g);
        return rc;
    }
    *out = g;
    return 0;
}

extern "C" void cuda_bench_gemm_close(CudaBenchGemm *g) {
    if (!g) return;
    if (g->handle) cublasDestroy(g->handle);
    free(g);
}

// The same hash as dropout's (kernels/backend.h), mapped to [-1, 1).
__device__ static float bench_uniform(uint64_t seed, size_t i) {
    return 2.0f * cuda_dropout_uniform(seed, (uint64_t)i) - 1.0f;
}

__global__ static void bench_fill_f32_kernel(float *x, size_t n, uint64_t seed) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        x[i] = bench_uniform(seed, i);
}

__global__ static void bench_fill_bf16_kernel(__nv_bfloat16 *x, size_t n, uint64_t seed) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        x[i] = __float2bfloat16(bench_uniform(seed, i));
}

__global__ static void bench_fill_f16_kernel(__half *x, size_t n, uint64_t seed) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        x[i] = __float2half(bench_uniform(seed, i));
}

extern "C" int cuda_bench_fill(const Backend *b, BenchPrecision p, void *x, size_t n,
                               uint64_t seed, Status *st) {
    if (n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = cuda_blocks_for(n);
    switch (p) {
    case BENCH_FP32:
    case BENCH_TF32:
        CUDA_CHECK_CONFIG(ctx, "bench_fill_f32_kernel", grid, CUDA_THREADS, 0, n, 64);
        bench_fill_f32_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>((float *)x, n, seed);
        CUDA_CHECK_LAUNCH("bench_fill_f32_kernel");
        return 0;
    case BENCH_BF16:
        CUDA_CHECK_CONFIG(ctx, "bench_fill_bf16_kernel", grid, CUDA_THREADS, 0, n, 64);
        bench_fill_bf16_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>((__nv_bfloat16 *)x, n,
                                                                         seed);
        CUDA_CHECK_LAUNCH("bench_fill_bf16_kernel");
        return 0;
    case BENCH_FP16:
        CUDA_CHECK_CONFIG(ctx, "bench_fill_f16_kernel", grid, CUDA_THREADS, 0, n, 64);
        bench_fill_f16_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>((__half *)x, n, seed);
        CUDA_CHECK_LAUNCH("bench_fill_f16_kernel");
        return 0;
    default:
        return status_fail(st, STATUS_BAD_INPUT, "cuda_bench_fill: unknown precision %d",
                           (int)p);
    }
}

extern "C" int cuda_bench_gemm(CudaBenchGemm *g, BenchPrecision p, int m, int n, int k,
                               const void *a, const void *bm, void *c, Status *st) {
    // Storage type of A, B and C, and what cuBLAS computes in. FAST_TF32 rounds fp32
    // inputs to TF32 for the tensor cores whatever the handle's math mode; plain 32F under
    // CUBLAS_DEFAULT_MATH keeps fp32 on the FMA units. bf16 and fp16 accumulate in fp32
    // (32F), as mixed-precision training does, never in fp16 (CUBLAS_COMPUTE_16F).
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    switch (p) {
    case BENCH_FP32: break;
    case BENCH_TF32: compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case BENCH_BF16: type = CUDA_R_16BF; break;
    case BENCH_FP16: type = CUDA_R_16F; break;
    default:
        return status_fail(st, STATUS_BAD_INPUT, "cuda_bench_gemm: unknown precision %d",
                           (int)p);
    }
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, type, m,
                              bm, type, k, &beta, c, type, m, compute, CUBLAS_GEMM_DEFAULT));
    return 0;
}
