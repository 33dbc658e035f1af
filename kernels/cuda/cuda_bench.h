// What `trainer bench` needs of a GPU beyond the op table: the card's facts behind its
// theoretical peaks, and GEMMs in the precisions a benchmark compares (fp32 without TF32,
// TF32, bf16 and fp16 inputs with fp32 accumulation) through cuBLAS, which the op table's
// fp32 gemm cannot ask for. Nothing here times or prints: diagnostics/bench_*.c times
// these with the backend's timer ops and tools/cmd_bench.c prints.
//
// Implemented in cuda_bench.cu, or answered by the loader when the toolkit is absent or
// trainer_cuda.so did not load (cuda_entries.h).
#ifndef TRAINER_CUDA_BENCH_H
#define TRAINER_CUDA_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "kernels/device_facts.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

// The facts of the device backend `b` (a CUDA backend) runs on. Attributes the driver does
// not report stay 0, which the peaks read as unknown.
int cuda_bench_device(const Backend *b, CudaBenchDevice *out, Status *st);

// A cuBLAS handle of its own on b's stream, so that the precision each GEMM asks for is
// the one it gets: the backend's handle carries the run's TF32 setting as its math mode.
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
