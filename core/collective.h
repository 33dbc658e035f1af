// Collectives across data-parallel replicas held by this process: the gradient sum after
// backward and the parameter broadcast at start (DESIGN.md section 6).
//
// Implementations behind one interface: NCCL when every replica is on a GPU of its own
// (kernels/cuda/cuda_collective.cu); adds in place when every replica shares one device
// (the CPU, or one GPU that NCCL would refuse twice); a host-staged one that works on any
// backend; and MPI across processes. The last three run, and are tested, on machines
// without a GPU.
#ifndef TRAINER_COLLECTIVE_H
#define TRAINER_COLLECTIVE_H

#include <stddef.h>

#include "core/device.h"

typedef struct Collective Collective;
struct Collective {
    const char *name;  // "nccl", "host", "device" (replicas sharing one device), "mpi"
    void *impl;
    // buffers[r] is replica r's copy (device memory of devices[r]); afterwards every copy
    // holds the sum over replicas, the same on every replica (the host collective adds in
    // replica order; NCCL in its ring's order), so the replicas' parameters never drift.
    int (*all_reduce_sum)(Collective *c, float *const *buffers, size_t n, Status *st);
    // Every copy becomes replica `root`'s.
    int (*broadcast)(Collective *c, float *const *buffers, size_t n, int root, Status *st);
    void (*close)(Collective *c);
};

// --collective: how replicas on GPUs sum. auto: NCCL, unless two replicas share one GPU
// (NCCL refuses that), then without it, with a notice; nccl: NCCL, whatever it says; mpi:
// through host memory (MPI_Allreduce across processes, a host-staged sum inside one). CPU
// replicas never use NCCL; nccl there is refused.
typedef enum CollectiveChoice { COLLECTIVE_AUTO, COLLECTIVE_NCCL, COLLECTIVE_MPI } CollectiveChoice;
// "auto", "nccl", "mpi" into *out; anything else is STATUS_BAD_INPUT.
int collective_choice_parse(const char *text, CollectiveChoice *out, Status *st);
// nccl where a replica is not on a CUDA device: STATUS_BAD_INPUT with a hint.
int collective_check_choice(CollectiveChoice choice, Device *const *devices, int count,
                            Status *st);

// The replicas of this process (`count` >= 1). With mpi the host-staged collective. Else
// when every replica is on one device (--replicas on the CPU, --gpus 0,0) the sum is made
// on it ("device": adds on replica 0's stream, the same bits as the host-staged sum);
// replicas on distinct GPUs take NCCL, and with auto, where some share a GPU (NCCL refuses
// that: --gpus 0,0,1), the host-staged sum. `notice` gets a line for the user when auto
// did not take NCCL for GPUs, else "".
int collective_open(Device *const *devices, int count, CollectiveChoice choice, Collective *out,
                    char *notice, size_t notice_size, Status *st);
// Across the processes of an `mpirun` launch, one replica (on `device`) in each: buffers[0]
// is this process's copy; sums and broadcasts span every rank. On a GPU: NCCL
// (ncclCommInitRank, its id broadcast over MPI; name "nccl") unless `choice` is mpi, or is
// auto and two ranks of one host share a GPU (their PCI bus ids are gathered first: NCCL
// refuses such ranks); else MPI on host memory (kernels/mpi/mpi_world.h; name "mpi").
// `notice` as for collective_open, the same on every rank.
int collective_open_mpi(Device *device, int rank, int size, CollectiveChoice choice,
                        Collective *out, char *notice, size_t notice_size, Status *st);
// Two ranks of one launch on one GPU (the first such pair), as collective_open_mpi finds
// them: their hosts' name and the card's PCI bus id match.
typedef struct SharedGpu {
    int found, first, second, ranks;
    char host[64], bus[64];
    char first_device[64], second_device[64];  // each rank's name for it ("cuda:0")
} SharedGpu;
// Where a rank's replica is: its host and its GPU's PCI bus id, which name one card
// whatever ordinal CUDA_VISIBLE_DEVICES gives it in each process.
typedef struct RankPlace {
    char host[64];
    char bus[64];     // "" on the CPU
    char device[64];  // "cuda:0", "cpu": the rank's own name for it (Device.name)
} RankPlace;
// Rank 0's look at every rank's place: the first two ranks on one GPU of one host into
// *shared (found 0 when none), and the first rank on the CPU and on a GPU (-1 when none).
void collective_find_shared_gpu(const RankPlace *all, int size, SharedGpu *shared,
                                int *cpu_rank, int *gpu_rank);
// "ranks 0 and 1 of 2 share the GPU at PCI 0000:1a:00.0 on node1 (cuda:0 in rank 0, cuda:0
// in rank 1)"
void collective_describe_shared_gpu(const SharedGpu *s, char *out, size_t size);
// NCCL's refusal of such ranks in *st, with the ranks and GPU before its words and the
// local-rank mapping that fixes it as the hint (STATUS_RUNTIME_ERROR: exit 1).
void collective_explain_shared_gpu(const SharedGpu *s, Status *st);
// The host-staged collective alone (tests compare the two).
int collective_open_host(Device *const *devices, int count, Collective *out, Status *st);
// --sync-batchnorm: `n` doubles of device memory summed in place over the ranks of a
// collective_open_mpi ("mpi": MPI on host memory; "nccl": NCCL on the device's stream).
int collective_sum_doubles_over_ranks(Collective *c, double *values, size_t n, Status *st);
void collective_close(Collective *c);
// The NCCL communicators behind `c`, or NULL when it is not "nccl".
struct CudaCollective *collective_nccl(const Collective *c);

#endif
