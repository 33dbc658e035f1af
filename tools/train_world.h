// `mpirun -np N trainer train ...`: what one process of several does differently
// (docs/distributed.md). Rank 0 prints, logs and writes checkpoints; every rank trains its
// share of each step and reads checkpoints to resume; a rank that fails ends the launch.
#ifndef TRAINER_TRAIN_WORLD_H
#define TRAINER_TRAIN_WORLD_H

#include "core/run_agreement.h"
#include "core/run_config.h"
#include "kernels/mpi/mpi_world.h"
#include "tools/cli.h"

#define WORLD_OPTION_SPECS                                                                    \
    {"--drop-remainder", NULL, "with mpirun: lower a batch that the processes cannot share "  \
                               "evenly to the nearest multiple of their count"},             \
    {"--bucket-mb", "MB", "with mpirun: sum gradients in buckets of MB MiB (default 25), "   \
                          "each started while backward goes on; 0: one sum after backward"}, \
    {"--sync-batchnorm", NULL, "with mpirun: batchnorm statistics over the whole step's "    \
                               "batch, summed over the processes (PyTorch's SyncBatchNorm); " \
                               "without it each process normalises over its share; one "      \
                               "process: no change"},                                          \
    {"--collective", "auto|nccl|mpi", "how GPU replicas sum gradients: nccl, or through host " \
                                      "memory (mpi: MPI_Allreduce across processes); auto "   \
                                      "(default): nccl unless two replicas share a GPU"}

// MPI_Init when launched by mpirun; the world goes into config. Ranks other than 0 send
// stdout to /dev/null (their figures are rank 0's) and keep stderr for their errors.
int world_open(MpiWorld *world, Status *st);
// The world, --bucket-mb, --sync-batchnorm and --collective into config; --sync-batchnorm with
// --gpus/--replicas (replicas inside one process, not synced) is refused.
int world_apply(const Command *cmd, const ParsedArgs *args, const MpiWorld *world,
                RunConfig *config, Status *st);
// "ranks: 2 processes (Open MPI v4.1.4): 0 on vm (cpu), 1 on vm (cpu)" on rank 0, with
// ", NCCL 2.28.9" after the MPI version when the ranks sum over NCCL; every rank must call it
// (it gathers).
int world_print_ranks(const MpiWorld *world, const char *device_name, int uses_nccl,
                      Status *st);
// The end of a process: on failure (not an interrupt every rank agreed on) the whole launch
// is ended, so no rank waits for one that will never come; else MPI_Finalize.
void world_close(MpiWorld *world, int failed);
// Error messages of ranks other than 0 say which rank wrote them.
void world_label_error(const MpiWorld *world, Status *st);

#endif
