// What `trainer bench` needs of a GPU beyond the op table: the card's facts behind its
// theoretical peaks, and GEMMs in the precisions a benchmark compares (fp32 without TF32,
// TF32, bf16 and fp16 inputs with fp32 accumulation) through cuBLAS, which the op table's
// fp32 gemm cannot ask for. Nothing here times or prints: diagnostics/bench_*.c times
// these with the backend's timer ops and tools/cmd_bench.c prints.
//
// Implemented in cuda_bench.cu, or in cuda_bench_absent.c when the toolkit is absent or
// trainer_cuda.so did not load (cuda_entries.h).
#ifndef TRAINER_CUDA_BENCH_H
#define TRAINER_CUDA_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

// The GEMM precisions, by their input type; every one accumulates in fp32.
typedef enum BenchPrecision {
    BENCH_FP32,  // fp32 inputs and math, tensor cores off
    BENCH_TF32,  // fp32 inputs rounded to TF32 on tensor cores (compute capability 8.0+)
    BENCH_BF16,  // bf16 inputs and output, fp32 accumulation (8.0+)
    BENCH_FP16,  // fp16 inputs and output, fp32 accumulation
    BENCH_PRECISION_COUNT
} BenchPrecision;

typedef struct CudaBenchDevice {
    char name[256];                 // "NVIDIA H100 80GB HBM3"
    int compute_major, compute_minor;
    int multiprocessors;
    int clock_khz;                  // the SM clock's maximum (cudaDevAttrClockRate)
    int memory_clock_khz;           // cudaDevAttrMemoryClockRate; 0 when unknown
    int memory_bus_bits;            // cudaDevAttrGlobalMemoryBusWidth; 0 when unknown
    size_t l2_bytes;                // cudaDevAttrL2CacheSize
} CudaBenchDevice;

// The facts of the device backend `b` (a CUDA backend) runs on. Attributes the driver does
// not report stay 0, which the peaks read as unknown.
int cuda_bench_device(const Backend *b, CudaBenchDevice *out, Status *st);

// A cuBLAS handle of its own on b's stream, so that the precision each GEMM asks for is
// the one it gets: the backend's handle carries the run's TF32 setting as its math mode.
typedef struct CudaBenchGemm CudaBenchGemm;
int cuda_bench_gemm_open(const Backend *b, CudaBenchGemm **out, Status *st);
void cuda_bench_gemm_close(CudaBenchGemm *g);

// n values of precision p's storage type (float for FP32 and TF32, 2 bytes for BF16 and
// FP16) at x, device memory, uniform in [-1, 1) from `seed`: inputs with varied bits, so
// that no unit runs faster on zeros.
int cuda_bench_fill(const Backend *b, BenchPrecision p, void *x, size_t n, uint64_t seed,
                    Status *st);

// Queues C = A B on the backend's stream: A is m x k, B k x n, C m x n, column-major and
// packed, all of p's storage type, accumulated in fp32. Returns once queued.
int cuda_bench_gemm(CudaBenchGemm *g, BenchPrecision p, int m, int n, int k, const void *a,
                    const void *bm, void *c, Status *st);

#ifdef __cplusplus
}
#endif

#endif
