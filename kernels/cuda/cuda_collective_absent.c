// Built without CUDA: there is no NCCL; core/collective.c never asks for it because no
// device is a CUDA device, but the entry points must exist.
#include "kernels/cuda/cuda_collective.h"

int cuda_collective_open(const Backend *const *backends, int count, CudaCollective **out,
                         Status *st) {
    (void)backends;
    (void)count;
    *out = NULL;
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA, so without NCCL");
    status_hint(st, "rebuild with the CUDA toolkit and NCCL (cmake -DTRAINER_CUDA=ON)");
    return STATUS_NO_DEVICE;
}

int cuda_collective_all_reduce_sum(CudaCollective *c, float *const *buffers, size_t n, Status *st) {
    (void)c;
    (void)buffers;
    (void)n;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_collective_broadcast(CudaCollective *c, float *const *buffers, size_t n, int root,
                              Status *st) {
    (void)c;
    (void)buffers;
    (void)n;
    (void)root;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

void cuda_collective_close(CudaCollective *c) { (void)c; }

int cuda_collective_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], Status *st) {
    (void)id;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_collective_open_rank(const Backend *b, const unsigned char id[CUDA_NCCL_ID_BYTES],
                              int rank, int size, CudaCollective **out, Status *st) {
    (void)b;
    (void)id;
    (void)rank;
    (void)size;
    *out = NULL;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_stream_sums_open(CudaCollective *c, const Backend *b, CudaStreamSums **out,
                          Status *st) {
    (void)c;
    (void)b;
    *out = NULL;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_stream_sums_start(CudaStreamSums *s, float *values, size_t n, Status *st) {
    (void)s;
    (void)values;
    (void)n;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_stream_sums_finish(CudaStreamSums *s, Status *st) {
    (void)s;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

int cuda_stream_sums_waited(CudaStreamSums *s, double *ms, Status *st) {
    (void)s;
    *ms = 0.0;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}

void cuda_stream_sums_close(CudaStreamSums *s) { (void)s; }

int cuda_collective_sum_doubles_over_ranks(CudaCollective *c, double *values, size_t n,
                                           Status *st) {
    (void)c;
    (void)values;
    (void)n;
    return status_fail(st, STATUS_NO_DEVICE, "this trainer was built without NCCL");
}
