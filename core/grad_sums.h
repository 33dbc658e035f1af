// The two GradSums (core/grad_buckets.h) of an mpirun launch: MPI on host memory for CPU
// ranks, NCCL on a communication stream for GPU ranks.
#ifndef TRAINER_GRAD_SUMS_H
#define TRAINER_GRAD_SUMS_H

#include "core/collective.h"
#include "core/grad_buckets.h"

// Sums over the processes of a flat buffer of `total` floats, as `collective` (from
// collective_open_mpi) sums: "mpi" a host buffer summed by MPI_Iallreduce, "nccl" a buffer
// on `device` (taken from its allocator, so --memory-limit counts it) summed by
// ncclAllReduce on a stream of its own.
int grad_sums_open(const Collective *collective, Device *device, size_t total, GradSums *out,
                   Status *st);

#endif
