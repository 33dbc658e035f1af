// NCCL collectives over CUDA backends driven from one host thread, callable from C.
// Implemented in cuda_collective.cu, and in cuda_collective_absent.c (answering "no CUDA")
// when the build has no toolkit.
#ifndef TRAINER_CUDA_COLLECTIVE_H
#define TRAINER_CUDA_COLLECTIVE_H

#include <stddef.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudaCollective CudaCollective;

// One NCCL communicator per backend (each a different GPU), initialised together.
int cuda_collective_open(const Backend *const *backends, int count, CudaCollective **out,
                         Status *st);
// In place on each backend's stream; the call returns once the work is queued.
int cuda_collective_all_reduce_sum(CudaCollective *c, float *const *buffers, size_t n, Status *st);
int cuda_collective_broadcast(CudaCollective *c, float *const *buffers, size_t n, int root,
                              Status *st);
void cuda_collective_close(CudaCollective *c);

// Across processes (one GPU each, mpirun): rank 0 makes the id, the caller hands it to every
// rank (MPI_Bcast), and each opens its communicator with it (ncclCommInitRank).
#define CUDA_NCCL_ID_BYTES 128
int cuda_collective_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], Status *st);
int cuda_collective_open_rank(const Backend *b, const unsigned char id[CUDA_NCCL_ID_BYTES],
                              int rank, int size, CudaCollective **out, Status *st);

#ifdef __cplusplus
}
#endif

#endif
