// NCCL collectives over CUDA backends driven from one host thread, callable from C.
// Implemented in cuda_collective.cu, and answered by the loader (why there is no CUDA) when
// the build has no toolkit or trainer_cuda.so did not load (cuda_entries.h).
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

// Gradient buckets of a GPU rank (core/grad_sums.c): each start sums `values` over the
// processes with ncclAllReduce on a communication stream of its own, once the compute
// stream has reached the point of the call (an event), so backward goes on meanwhile.
// finish makes the compute stream wait for every started sum; the host never waits. The
// time the compute stream waited is measured with events (cuda_stream_sums_waited).
// One GPU per process (cuda_collective_open_rank).
typedef struct CudaStreamSums CudaStreamSums;
int cuda_stream_sums_open(CudaCollective *c, const Backend *b, CudaStreamSums **out,
                          Status *st);
int cuda_stream_sums_start(CudaStreamSums *s, float *values, size_t n, Status *st);
int cuda_stream_sums_finish(CudaStreamSums *s, Status *st);
// Milliseconds the compute stream waited for the sums after backward, over every finished
// step: from the compute stream's arrival at finish to the last sum's end, 0 when the sums
// were done first.
int cuda_stream_sums_waited(CudaStreamSums *s, double *ms, Status *st);
void cuda_stream_sums_close(CudaStreamSums *s);

// --sync-batchnorm: a communicator of cuda_collective_open_rank sums `n` doubles of device
// memory in place over the processes (batchnorm statistics): on the rank's stream, or, while
// gradient buckets are summed on a communication stream, there, forked from and joined back
// to the rank's stream, so that all of the communicator's operations share one stream.
int cuda_collective_sum_doubles_over_ranks(CudaCollective *c, double *values, size_t n,
                                           Status *st);

#ifdef __cplusplus
}
#endif

#endif
