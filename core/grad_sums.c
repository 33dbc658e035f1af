#include "core/grad_sums.h"

#include <stdlib.h>
#include <string.h>

#include "core/train.h"
#include "kernels/mpi/mpi_world.h"

// ---- CPU ranks: MPI_Iallreduce on a host buffer ----
// The wait is the host's: the time mpi_finish_sums takes.

typedef struct HostSums {
    double waited;
} HostSums;

static int host_start(GradSums *s, size_t offset, size_t count, Status *st) {
    return mpi_start_sum_floats(s->flat + offset, count, st);
}

// Open MPI moves a nonblocking sum only inside MPI calls.
static void host_progress(GradSums *s) {
    (void)s;
    mpi_progress();
}

static int host_finish(GradSums *s, Status *st) {
    HostSums *h = s->impl;
    double start = monotonic_seconds();
    TRY(mpi_finish_sums(st));
    h->waited += monotonic_seconds() - start;
    return 0;
}

static int host_waited(GradSums *s, double *seconds, int *measured, Status *st) {
    (void)st;
    *seconds = ((HostSums *)s->impl)->waited;
    *measured = 1;
    return 0;
}

static void host_close(GradSums *s) {
    free(s->flat);
    free(s->impl);
    memset(s, 0, sizeof *s);
}

static int open_host_sums(size_t total, GradSums *out, Status *st) {
    HostSums *h = calloc(1, sizeof *h);
    float *flat = malloc((total ? total : 1) * sizeof *flat);
    if (!h || !flat) {
        free(h);
        free(flat);
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory for %zu gradient "
                           "values", total);
    }
    *out = (GradSums){.flat = flat, .impl = h, .start = host_start, .progress = host_progress,
                      .finish = host_finish, .waited = host_waited, .close = host_close};
    return 0;
}

int grad_sums_open(const Collective *collective, Device *device, size_t total, GradSums *out,
                   Status *st) {
    (void)device;
    memset(out, 0, sizeof *out);
    if (strcmp(collective->name, "mpi") == 0) return open_host_sums(total, out, st);
    return status_fail(st, STATUS_RUNTIME_ERROR, "gradient buckets sum over MPI or NCCL "
                       "across processes (GPU ranks: not built yet), not over the '%s' collective", collective->name);
}
