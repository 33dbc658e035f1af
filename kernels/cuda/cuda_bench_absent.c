// No CUDA backend (cuda_absent.h): no GEMM precision or device fact can be asked of a GPU.
#include <string.h>

#include "kernels/cuda/cuda_absent.h"
#include "kernels/cuda/cuda_bench.h"

int CUDA_ABSENT(cuda_bench_device)(const Backend *b, CudaBenchDevice *out, Status *st) {
    memset(out, 0, sizeof *out);
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_bench_gemm_open)(const Backend *b, CudaBenchGemm **out, Status *st) {
    *out = NULL;
    return cuda_unavailable(st);
}

void CUDA_ABSENT(cuda_bench_gemm_close)(CudaBenchGemm *g) {}

int CUDA_ABSENT(cuda_bench_fill)(const Backend *b, BenchPrecision p, void *x, size_t n,
                                 uint64_t seed, Status *st) {
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_bench_gemm)(CudaBenchGemm *g, BenchPrecision p, int m, int n, int k,
                                 const void *a, const void *bm, void *c, Status *st) {
    return cuda_unavailable(st);
}
