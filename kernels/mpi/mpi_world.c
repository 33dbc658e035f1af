#define _POSIX_C_SOURCE 200809L  // gethostname
#include "kernels/mpi/mpi_world.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TRAINER_HAVE_MPI
#include <mpi.h>
#endif

// Set by Open MPI's mpirun (OMPI_*), by PMIx launchers such as srun (PMIX_RANK) and by
// MPICH's Hydra (PMI_SIZE).
static const char *launcher_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE",
                                           NULL};

int mpi_launched(void) {
    for (int i = 0; launcher_variables[i]; i++)
        if (getenv(launcher_variables[i])) return 1;
    return 0;
}

int mpi_launch_rank(void) {
    static const char *rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                           NULL};
    for (int i = 0; rank_variables[i]; i++) {
        const char *value = getenv(rank_variables[i]);
        if (value) return atoi(value);
    }
    return 0;
}

static void world_of_one(MpiWorld *world) {
    memset(world, 0, sizeof *world);
    world->size = 1;
    gethostname(world->host, sizeof world->host - 1);
}

#ifdef TRAINER_HAVE_MPI

int mpi_built(void) { return 1; }

// MPI's error text for `code`, into a status.
static int mpi_failed(int code, const char *what, Status *st) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "?");
    status_fail(st, STATUS_RUNTIME_ERROR, "%s failed: %s (MPI error %d)", what, text, code);
    status_hint(st, "another rank may have died or been killed: mpirun's own messages say "
                    "which; docs/distributed.md lists the usual causes");
    return STATUS_RUNTIME_ERROR;
}

#define MPI_TRY(call, what)                                                                   \
    do {                                                                                       \
        int mpi_code_ = (call);                                                                \
        if (mpi_code_ != MPI_SUCCESS) return mpi_failed(mpi_code_, (what), st);                \
    } while (0)

// The rank among those on the same host, from Open MPI's variable or by splitting the
// world by shared memory.
static int local_rank_of(void) {
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (local) return atoi(local);
    MPI_Comm node;
    int rank = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &rank);
        MPI_Comm_free(&node);
    }
    return rank;
}

int mpi_world_open(MpiWorld *world, Status *st) {
    world_of_one(world);
    if (!mpi_launched()) return 0;
    int provided = 0;
    MPI_TRY(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Failures come back as codes, so a rank can say what failed before the run ends.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &world->rank), "MPI_Comm_rank");
    MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &world->size), "MPI_Comm_size");
    world->local_rank = local_rank_of();
    return 0;
}

void mpi_world_close(MpiWorld *world) {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Finalize();
    world->size = 1;
}

void mpi_world_abort(int code) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised) MPI_Abort(MPI_COMM_WORLD, code);
}

const char *mpi_library_version(char *buf, size_t size) {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) text[0] = '\0';
    text[strcspn(text, ",\n")] = '\0';  // "Open MPI v4.1.4", without the build details
    snprintf(buf, size, "%s", text);
    return buf;
}

// MPI counts are ints: long buffers go in pieces.
enum { MPI_CHUNK = INT_MAX / 4 };

int mpi_all_reduce_sum_floats(float *values, size_t count, Status *st) {
    for (size_t done = 0; done < count; done += MPI_CHUNK) {
        int n = (int)(count - done < MPI_CHUNK ? count - done : MPI_CHUNK);
        MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, values + done, n, MPI_FLOAT, MPI_SUM,
                              MPI_COMM_WORLD), "the gradient all-reduce (MPI_Allreduce)");
    }
    return 0;
}

int mpi_all_reduce_sum_doubles(double *values, int count, Status *st) {
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
            "summing the loss over ranks (MPI_Allreduce)");
    return 0;
}

int mpi_all_reduce_sum_statistics(double *values, size_t count, Status *st) {
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, values, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
            "summing batchnorm statistics over ranks for --sync-batchnorm (MPI_Allreduce)");
    return 0;
}

int mpi_all_reduce_max_int(int *value, Status *st) {
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
            "agreeing on a value over the ranks (MPI_Allreduce)");
    return 0;
}

int mpi_broadcast_floats(float *values, size_t count, int root, Status *st) {
    for (size_t done = 0; done < count; done += MPI_CHUNK) {
        int n = (int)(count - done < MPI_CHUNK ? count - done : MPI_CHUNK);
        MPI_TRY(MPI_Bcast(values + done, n, MPI_FLOAT, root, MPI_COMM_WORLD),
                "the parameter broadcast (MPI_Bcast)");
    }
    return 0;
}

int mpi_broadcast_bytes(void *bytes, size_t count, int root, Status *st) {
    MPI_TRY(MPI_Bcast(bytes, (int)count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    return 0;
}

int mpi_gather_bytes(const void *mine, size_t size, void *all, Status *st) {
    MPI_TRY(MPI_Gather(mine, (int)size, MPI_BYTE, all, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD),
            "MPI_Gather");
    return 0;
}

// The process's sums in flight; only the training thread calls MPI.
static MPI_Request pending[MPI_PENDING_MAX];
static int pending_count;

int mpi_start_sum_floats(float *values, size_t count, Status *st) {
    for (size_t done = 0; done < count; done += MPI_CHUNK) {
        if (pending_count == MPI_PENDING_MAX)
            return status_fail(st, STATUS_RUNTIME_ERROR, "more than %d gradient sums in "
                               "flight", MPI_PENDING_MAX);
        int n = (int)(count - done < MPI_CHUNK ? count - done : MPI_CHUNK);
        MPI_TRY(MPI_Iallreduce(MPI_IN_PLACE, values + done, n, MPI_FLOAT, MPI_SUM,
                               MPI_COMM_WORLD, &pending[pending_count]),
                "starting a gradient sum (MPI_Iallreduce)");
        pending_count++;
    }
    return 0;
}

void mpi_progress(void) {
    int done = 0;
    if (pending_count) MPI_Testall(pending_count, pending, &done, MPI_STATUSES_IGNORE);
}

int mpi_finish_sums(Status *st) {
    int count = pending_count;
    pending_count = 0;
    MPI_TRY(MPI_Waitall(count, pending, MPI_STATUSES_IGNORE),
            "the gradient all-reduce (MPI_Waitall)");
    return 0;
}

#else  // built without MPI: a world of one

int mpi_built(void) { return 0; }

static int not_built(Status *st) {
    status_fail(st, STATUS_BAD_INPUT, "this trainer was built without MPI, so it cannot run "
                "as one of several processes");
    status_hint(st, "install Debian's libopenmpi-dev (scripts/setup.sh does) and rebuild, or "
                    "run one process: --gpus 0,1 or --replicas N inside it");
    return STATUS_BAD_INPUT;
}

int mpi_world_open(MpiWorld *world, Status *st) {
    world_of_one(world);
    return mpi_launched() ? not_built(st) : 0;
}

void mpi_world_close(MpiWorld *world) { world->size = 1; }
void mpi_world_abort(int code) { (void)code; }

const char *mpi_library_version(char *buf, size_t size) {
    if (size) buf[0] = '\0';
    return buf;
}

int mpi_all_reduce_sum_floats(float *values, size_t count, Status *st) { return not_built(st); }
int mpi_all_reduce_sum_doubles(double *values, int count, Status *st) { return not_built(st); }
int mpi_all_reduce_sum_statistics(double *values, size_t count, Status *st) {
    return not_built(st);
}
int mpi_all_reduce_max_int(int *value, Status *st) { return not_built(st); }
int mpi_broadcast_floats(float *values, size_t count, int root, Status *st) {
    return not_built(st);
}
int mpi_broadcast_bytes(void *bytes, size_t count, int root, Status *st) { return not_built(st); }
int mpi_gather_bytes(const void *mine, size_t size, void *all, Status *st) {
    return not_built(st);
}
int mpi_start_sum_floats(float *values, size_t count, Status *st) { return not_built(st); }
void mpi_progress(void) {}
int mpi_finish_sums(Status *st) { return 0; }

#endif
