#include "core/grad_sums.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "kernels/cuda/cuda_collective.h"
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
        return status_out_of_host_memory(st, total * sizeof *flat, "for %zu gradient values",
                                         total);
    }
    *out = (GradSums){.flat = flat, .impl = h, .start = host_start, .progress = host_progress,
                      .finish = host_finish, .waited = host_waited, .close = host_close};
    return 0;
}

// ---- GPU ranks: ncclAllReduce on a communication stream ----
// A flat copy of the gradients rather than gradients laid out as views of the buckets
// (DDP's gradient_as_bucket_view): graph.c gives each parameter its gradient from the
// caching allocator, and clipping, loss scaling, the optimizer and checkpoints read them
// there; views would change that layout for every run to save, on GPU ranks only, two
// device copies of the gradients a step (8 bytes per parameter at the device's memory
// bandwidth: microseconds for the bundled models). The cost is one more copy of the
// gradients in device memory.

typedef struct StreamSums {
    CudaStreamSums *stream_sums;
    Allocator *alloc;
} StreamSums;

static int stream_start(GradSums *s, size_t offset, size_t count, Status *st) {
    StreamSums *d = s->impl;
    return cuda_stream_sums_start(d->stream_sums, s->flat + offset, count, st);
}

static int stream_finish(GradSums *s, Status *st) {
    return cuda_stream_sums_finish(((StreamSums *)s->impl)->stream_sums, st);
}

static int stream_waited(GradSums *s, double *seconds, int *measured, Status *st) {
    double ms = 0.0;
    *measured = 0;
    TRY(cuda_stream_sums_waited(((StreamSums *)s->impl)->stream_sums, &ms, st));
    *seconds = ms / 1e3;
    *measured = 1;
    return 0;
}

static void stream_close(GradSums *s) {
    StreamSums *d = s->impl;
    if (d) {
        cuda_stream_sums_close(d->stream_sums);
        if (s->flat) alloc_put(d->alloc, s->flat);
        free(d);
    }
    memset(s, 0, sizeof *s);
}

static int open_stream_sums(const Collective *collective, Device *device, size_t total,
                            GradSums *out, Status *st) {
    StreamSums *d = calloc(1, sizeof *d);
    if (!d) return status_out_of_host_memory(st, sizeof *d, "for gradient sums");
    *out = (GradSums){.on_device = 1, .impl = d, .start = stream_start,
                      .finish = stream_finish, .waited = stream_waited, .close = stream_close};
    d->alloc = &device->alloc;
    void *flat = NULL;
    int rc = alloc_get(d->alloc, (total ? total : 1) * sizeof(float), &flat, st);
    if (rc) status_prefix(st, "the gradient buckets: ");
    out->flat = flat;
    if (!rc) rc = cuda_stream_sums_open(collective_nccl(collective), device->backend,
                                        &d->stream_sums, st);
    if (rc) stream_close(out);
    return rc;
}

int grad_sums_open(const Collective *collective, Device *device, size_t total, GradSums *out,
                   Status *st) {
    memset(out, 0, sizeof *out);
    if (collective_nccl(collective)) return open_stream_sums(collective, device, total, out, st);
    if (strcmp(collective->name, "mpi") == 0) return open_host_sums(total, out, st);
    return status_fail(st, STATUS_RUNTIME_ERROR, "gradient buckets sum over MPI or NCCL "
                       "across processes, not over the '%s' collective", collective->name);
}
