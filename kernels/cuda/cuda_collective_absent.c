// No CUDA backend (cuda_absent.h), so no NCCL; core/collective.c never asks for it because
// no device is a CUDA device, but the entry points must exist.
#include "kernels/cuda/cuda_absent.h"
#include "kernels/cuda/cuda_collective.h"

int CUDA_ABSENT(cuda_collective_open)(const Backend *const *backends, int count,
                                      CudaCollective **out, Status *st) {
    *out = NULL;
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_collective_all_reduce_sum)(CudaCollective *c, float *const *buffers,
                                                size_t n, Status *st) {
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_collective_broadcast)(CudaCollective *c, float *const *buffers, size_t n,
                                           int root, Status *st) {
    return cuda_unavailable(st);
}

void CUDA_ABSENT(cuda_collective_close)(CudaCollective *c) {}

int CUDA_ABSENT(cuda_collective_unique_id)(unsigned char id[CUDA_NCCL_ID_BYTES], Status *st) {
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_collective_open_rank)(const Backend *b,
                                           const unsigned char id[CUDA_NCCL_ID_BYTES], int rank,
                                           int size, CudaCollective **out, Status *st) {
    *out = NULL;
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_stream_sums_open)(CudaCollective *c, const Backend *b, CudaStreamSums **out,
                                       Status *st) {
    *out = NULL;
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_stream_sums_start)(CudaStreamSums *s, float *values, size_t n, Status *st) {
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_stream_sums_finish)(CudaStreamSums *s, Status *st) {
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_stream_sums_waited)(CudaStreamSums *s, double *ms, Status *st) {
    *ms = 0.0;
    return cuda_unavailable(st);
}

void CUDA_ABSENT(cuda_stream_sums_close)(CudaStreamSums *s) {}

int CUDA_ABSENT(cuda_collective_sum_doubles_over_ranks)(CudaCollective *c, double *values,
                                                        size_t n, Status *st) {
    return cuda_unavailable(st);
}
