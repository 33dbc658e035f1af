// The processes of a run launched by `mpirun -np N trainer train ...`: which one this is,
// how many there are, and the few MPI calls training needs (DESIGN.md section 6;
// docs/distributed.md). The only file that calls MPI, as kernels/cuda is for CUDA.
//
// Built with Debian's OpenMPI when CMake finds it (TRAINER_HAVE_MPI); without it every
// entry point answers "built without MPI" and a process is always a world of one, so
// callers need no #ifdefs.
#ifndef TRAINER_MPI_WORLD_H
#define TRAINER_MPI_WORLD_H

#include <stddef.h>

#include "base/status.h"

typedef struct MpiWorld {
    int rank, size;       // size 1: not launched by mpirun (MPI not initialised)
    int local_rank;       // rank among the processes on this host: its GPU
    char host[64];
} MpiWorld;

// 1 when this binary was built with MPI.
int mpi_built(void);
// Whether a launcher (mpirun, srun with PMIx) started this process as one of several, from
// the variables it sets; MPI is not touched.
int mpi_launched(void);
// This process's rank as the launcher's variables give it, before MPI_Init (0 when not
// launched or no variable says): lets a usage error, the same on every rank, print once.
int mpi_launch_rank(void);
// MPI_Init (once, thread level "funneled": only the training thread calls MPI) and this
// process's place. When the process was not launched by mpirun: a world of one, MPI
// untouched. Launched by mpirun but built without MPI: STATUS_BAD_INPUT saying so.
int mpi_world_open(MpiWorld *world, Status *st);
// MPI_Finalize, after the last collective; a world of one does nothing.
void mpi_world_close(MpiWorld *world);
// Ends every process of the run with `code` (MPI_Abort): a rank that fails must not leave
// the others waiting in a collective it will never join.
void mpi_world_abort(int code);
// "Open MPI v4.1.4" (the library's own words, up to its build details), or "" without MPI.
const char *mpi_library_version(char *buf, size_t size);

// In place over every rank, on host memory.
int mpi_all_reduce_sum_floats(float *values, size_t count, Status *st);
int mpi_all_reduce_sum_doubles(double *values, int count, Status *st);
// --sync-batchnorm's per-channel statistics (its own message on failure).
int mpi_all_reduce_sum_statistics(double *values, size_t count, Status *st);
int mpi_all_reduce_max_int(int *value, Status *st);
int mpi_broadcast_floats(float *values, size_t count, int root, Status *st);
int mpi_broadcast_bytes(void *bytes, size_t count, int root, Status *st);
// Nonblocking sums (MPI_Iallreduce), for gradients summed while backward goes on: each
// start is one collective every rank must start in the same order; mpi_progress lets MPI
// move them along (Open MPI progresses only inside MPI calls); mpi_finish_sums waits for
// all of them. At most MPI_PENDING_MAX at once.
#define MPI_PENDING_MAX 256
int mpi_start_sum_floats(float *values, size_t count, Status *st);
void mpi_progress(void);
int mpi_finish_sums(Status *st);
// Every rank's `size` bytes of `mine` into rank 0's `all` (size * ranks bytes; others may
// pass NULL).
int mpi_gather_bytes(const void *mine, size_t size, void *all, Status *st);

#endif
