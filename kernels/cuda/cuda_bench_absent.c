// Built without CUDA: no GEMM precision or device fact can be asked of a GPU.
#include <string.h>

#include "kernels/cuda/cuda_bench.h"

static int built_without_cuda(Status *st) {
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA support");
    status_hint(st, "install the CUDA toolkit, cuDNN and NCCL and rebuild "
                    "(cmake -DTRAINER_CUDA=ON), or use --device cpu");
    return STATUS_NO_DEVICE;
}

int cuda_bench_device(const Backend *b, CudaBenchDevice *out, Status *st) {
    memset(out, 0, sizeof *out);
    return built_without_cuda(st);
}

int cuda_bench_gemm_open(const Backend *b, CudaBenchGemm **out, Status *st) {
    *out = NULL;
    return built_without_cuda(st);
}

void cuda_bench_gemm_close(CudaBenchGemm *g) {}

int cuda_bench_fill(const Backend *b, BenchPrecision p, void *x, size_t n, uint64_t seed,
                    Status *st) {
    return built_without_cuda(st);
}

int cuda_bench_gemm(CudaBenchGemm *g, BenchPrecision p, int m, int n, int k, const void *a,
                    const void *bm, void *c, Status *st) {
    return built_without_cuda(st);
}
