#define _POSIX_C_SOURCE 200809L  // gethostname
#include "core/collective.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/cuda/cuda_collective.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/mpi/mpi_world.h"

// ---- host-staged: copy every replica's buffer to the host, sum, copy the sum back ----
// One bus round trip per replica per call; fine for the CPU (a memcpy) and for a GPU
// build without NCCL, and simple enough to be the reference the NCCL path is held to.

typedef struct HostCollective {
    Device *const *devices;
    int count;
    float *sum, *scratch;   // host staging, grown to the largest n seen
    size_t capacity;
} HostCollective;

static int host_reserve(HostCollective *h, size_t n, Status *st) {
    if (n <= h->capacity) return 0;
    float *sum = realloc(h->sum, n * sizeof *sum);
    if (sum) h->sum = sum;
    float *scratch = realloc(h->scratch, n * sizeof *scratch);
    if (scratch) h->scratch = scratch;
    if (!sum || !scratch)
        return status_out_of_host_memory(st, n * (sizeof *sum + sizeof *scratch),
                                         "summing gradients on the host");
    h->capacity = n;
    return 0;
}

static int host_all_reduce_sum(Collective *c, float *const *buffers, size_t n, Status *st) {
    HostCollective *h = c->impl;
    if (h->count == 1 || n == 0) return 0;
    TRY(host_reserve(h, n, st));
    const Backend *first = h->devices[0]->backend;
    TRY(first->copy_to_host(first, h->sum, buffers[0], n * sizeof(float), st));
    for (int r = 1; r < h->count; r++) {
        const Backend *b = h->devices[r]->backend;
        TRY(b->copy_to_host(b, h->scratch, buffers[r], n * sizeof(float), st));
        for (size_t i = 0; i < n; i++) h->sum[i] += h->scratch[i];
    }
    for (int r = 0; r < h->count; r++) {
        const Backend *b = h->devices[r]->backend;
        TRY(b->copy_to_device(b, buffers[r], h->sum, n * sizeof(float), st));
    }
    return 0;
}

static int host_broadcast(Collective *c, float *const *buffers, size_t n, int root, Status *st) {
    HostCollective *h = c->impl;
    if (h->count == 1 || n == 0) return 0;
    TRY(host_reserve(h, n, st));
    const Backend *source = h->devices[root]->backend;
    TRY(source->copy_to_host(source, h->sum, buffers[root], n * sizeof(float), st));
    for (int r = 0; r < h->count; r++) {
        if (r == root) continue;
        const Backend *b = h->devices[r]->backend;
        TRY(b->copy_to_device(b, buffers[r], h->sum, n * sizeof(float), st));
    }
    return 0;
}

static void host_close(Collective *c) {
    HostCollective *h = c->impl;
    if (!h) return;
    free(h->sum);
    free(h->scratch);
    free(h);
    c->impl = NULL;
}

int collective_open_host(Device *const *devices, int count, Collective *out, Status *st) {
    memset(out, 0, sizeof *out);
    HostCollective *h = calloc(1, sizeof *h);
    if (!h) return status_out_of_host_memory(st, sizeof *h, "for the host collective");
    h->devices = devices;
    h->count = count;
    *out = (Collective){.name = "host", .impl = h, .all_reduce_sum = host_all_reduce_sum,
                        .broadcast = host_broadcast, .close = host_close};
    return 0;
}

// ---- one device shared by every replica: the sum made in place on it ----
// Replicas on one device (--gpus 0,0, or --replicas N on the CPU) need no transfer: replica
// 0's stream adds the others' buffers into its own (add_bias_rows of one row: y += x), in
// replica order as the host-staged sum adds, so both give the same bits, then copies the
// sum into theirs. Each replica's stream is waited for before its buffer is read, and
// replica 0's before the others go on. Uses HostCollective's devices and count only.

static int same_device_all_reduce(Collective *c, float *const *buffers, size_t n, Status *st) {
    HostCollective *h = c->impl;
    if (h->count == 1 || n == 0) return 0;
    if (n > INT_MAX) return host_all_reduce_sum(c, buffers, n, st);  // add_bias_rows' int
    const Backend *first = h->devices[0]->backend;
    for (int r = 1; r < h->count; r++)
        TRY(h->devices[r]->backend->synchronize(h->devices[r]->backend, st));
    for (int r = 1; r < h->count; r++)
        TRY(first->add_bias_rows(first, &(AddBiasRowsArgs){.y = buffers[0], .bias = buffers[r],
                                 .rows = 1, .cols = (int)n}, st));
    for (int r = 1; r < h->count; r++)
        TRY(first->copy_on_device(first, buffers[r], buffers[0], n * sizeof(float), st));
    return first->synchronize(first, st);
}

static int same_device_broadcast(Collective *c, float *const *buffers, size_t n, int root,
                                 Status *st) {
    HostCollective *h = c->impl;
    if (h->count == 1 || n == 0) return 0;
    const Backend *source = h->devices[root]->backend;
    TRY(source->synchronize(source, st));
    for (int r = 0; r < h->count; r++)
        if (r != root)
            TRY(source->copy_on_device(source, buffers[r], buffers[root], n * sizeof(float), st));
    return source->synchronize(source, st);
}

static int open_same_device(Device *const *devices, int count, Collective *out, Status *st) {
    TRY(collective_open_host(devices, count, out, st));
    out->name = "device";
    out->all_reduce_sum = same_device_all_reduce;
    out->broadcast = same_device_broadcast;
    return 0;
}

static int nccl_all_reduce_sum(Collective *c, float *const *buffers, size_t n, Status *st);
static int nccl_broadcast(Collective *c, float *const *buffers, size_t n, int root, Status *st);
static void nccl_close(Collective *c);

// ---- MPI: one replica per process, summed over the processes of `mpirun` ----
// The replica's buffer goes through host memory (already there on the CPU) and
// MPI_Allreduce; GPU ranks take the same path until NCCL is set up across processes.

typedef struct MpiCollective {
    Device *device;
    float *staging;          // host copy for a device that is not the CPU
    size_t capacity;
} MpiCollective;

// The host memory the collective works on: the buffer itself on the CPU, else a copy.
static int mpi_host_view(MpiCollective *m, float *buffer, size_t n, float **host, Status *st) {
    const Backend *b = m->device->backend;
    if (b->kind == BACKEND_CPU) {
        *host = buffer;
        return 0;
    }
    if (n > m->capacity) {
        float *grown = realloc(m->staging, n * sizeof *grown);
        if (!grown)
            return status_out_of_host_memory(st, n * sizeof *grown, "staging values for MPI");
        m->staging = grown;
        m->capacity = n;
    }
    *host = m->staging;
    return b->copy_to_host(b, m->staging, buffer, n * sizeof(float), st);
}

static int mpi_write_back(MpiCollective *m, float *buffer, const float *host, size_t n,
                          Status *st) {
    const Backend *b = m->device->backend;
    return host == buffer ? 0 : b->copy_to_device(b, buffer, host, n * sizeof(float), st);
}

static int mpi_all_reduce(Collective *c, float *const *buffers, size_t n, Status *st) {
    MpiCollective *m = c->impl;
    float *host = NULL;
    if (n == 0) return 0;
    TRY(mpi_host_view(m, buffers[0], n, &host, st));
    TRY(mpi_all_reduce_sum_floats(host, n, st));
    return mpi_write_back(m, buffers[0], host, n, st);
}

static int mpi_broadcast(Collective *c, float *const *buffers, size_t n, int root, Status *st) {
    MpiCollective *m = c->impl;
    float *host = NULL;
    if (n == 0) return 0;
    TRY(mpi_host_view(m, buffers[0], n, &host, st));
    TRY(mpi_broadcast_floats(host, n, root, st));
    return mpi_write_back(m, buffers[0], host, n, st);
}

static void mpi_close(Collective *c) {
    MpiCollective *m = c->impl;
    if (!m) return;
    free(m->staging);
    free(m);
    c->impl = NULL;
}

// GPUs across processes: NCCL, its id made by rank 0 and broadcast over MPI.
static int open_nccl_across(Device *device, int rank, int size, Collective *out, Status *st) {
    unsigned char id[CUDA_NCCL_ID_BYTES] = {0};
    if (rank == 0) TRY(cuda_collective_unique_id(id, st));
    TRY(mpi_broadcast_bytes(id, sizeof id, 0, st));
    CudaCollective *nccl = NULL;
    TRY(cuda_collective_open_rank(device->backend, id, rank, size, &nccl, st));
    *out = (Collective){.name = "nccl", .impl = nccl, .all_reduce_sum = nccl_all_reduce_sum,
                        .broadcast = nccl_broadcast, .close = nccl_close};
    return 0;
}

static int open_mpi_host(Device *device, Collective *out, Status *st) {
    MpiCollective *m = calloc(1, sizeof *m);
    if (!m) return status_out_of_host_memory(st, sizeof *m, "for the MPI collective");
    m->device = device;
    *out = (Collective){.name = "mpi", .impl = m, .all_reduce_sum = mpi_all_reduce,
                        .broadcast = mpi_broadcast, .close = mpi_close};
    return 0;
}

// What rank 0 found among every rank's device, then said to all.
typedef struct RankDevices {
    SharedGpu shared;  // the first two ranks on one GPU
    int cpu_rank;      // the first rank on the CPU, -1 when none
    int gpu_rank;      // the first rank on a GPU, -1 when none
    char gpu_device[64];
} RankDevices;

static void rank_place_of(const Device *device, RankPlace *out) {
    memset(out, 0, sizeof *out);
    if (gethostname(out->host, sizeof out->host - 1) != 0)
        snprintf(out->host, sizeof out->host, "?");
    snprintf(out->device, sizeof out->device, "%s", device->name);
    if (device->backend->kind != BACKEND_CUDA) return;
    snprintf(out->bus, sizeof out->bus, "%s", device->name);  // without a listing: the ordinal
    int ordinal = strncmp(device->name, "cuda:", 5) == 0 ? atoi(device->name + 5) : -1;
    CudaDeviceInfo listed[64];
    int count = 0;
    Status ignored;
    status_clear(&ignored);
    if (ordinal >= 0 && cuda_list_devices(listed, 64, &count, &ignored) == 0 && ordinal < count)
        snprintf(out->bus, sizeof out->bus, "%s", listed[ordinal].pci_bus_id);
}

static void note_shared_gpu(const RankPlace *all, int a, int b, int size, SharedGpu *shared) {
    *shared = (SharedGpu){.found = 1, .first = a, .second = b, .ranks = size};
    snprintf(shared->host, sizeof shared->host, "%s", all[a].host);
    snprintf(shared->bus, sizeof shared->bus, "%s", all[a].bus);
    snprintf(shared->first_device, sizeof shared->first_device, "%s", all[a].device);
    snprintf(shared->second_device, sizeof shared->second_device, "%s", all[b].device);
}

void collective_find_shared_gpu(const RankPlace *all, int size, SharedGpu *shared,
                                int *cpu_rank, int *gpu_rank) {
    memset(shared, 0, sizeof *shared);
    *cpu_rank = *gpu_rank = -1;
    for (int b = 0; b < size; b++) {
        int on_gpu = all[b].bus[0] != 0;
        if (!on_gpu && *cpu_rank < 0) *cpu_rank = b;
        if (on_gpu && *gpu_rank < 0) *gpu_rank = b;
        for (int a = 0; on_gpu && a < b && !shared->found; a++)
            if (strcmp(all[a].host, all[b].host) == 0 && strcmp(all[a].bus, all[b].bus) == 0)
                note_shared_gpu(all, a, b, size, shared);
    }
}

// Every rank, on a GPU or not, takes part: all must then choose the same collective.
static int gather_rank_devices(const Device *device, int rank, int size, RankDevices *found,
                               Status *st) {
    memset(found, 0, sizeof *found);
    found->cpu_rank = found->gpu_rank = -1;
    RankPlace mine;
    rank_place_of(device, &mine);
    RankPlace *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    if (rank == 0 && !all)
        return status_out_of_host_memory(st, (size_t)size * sizeof *all,
                                         "gathering the ranks' places");
    int rc = mpi_gather_bytes(&mine, sizeof mine, all, st);
    if (!rc && rank == 0) {
        collective_find_shared_gpu(all, size, &found->shared, &found->cpu_rank,
                                   &found->gpu_rank);
        if (found->gpu_rank >= 0)
            snprintf(found->gpu_device, sizeof found->gpu_device, "%s",
                     all[found->gpu_rank].device);
    }
    free(all);
    if (!rc) rc = mpi_broadcast_bytes(found, sizeof *found, 0, st);
    return rc;
}

void collective_describe_shared_gpu(const SharedGpu *s, char *out, size_t size) {
    snprintf(out, size, "ranks %d and %d of %d share the GPU at PCI %s on %s (%s in rank %d, "
             "%s in rank %d)", s->first, s->second, s->ranks, s->bus, s->host, s->first_device,
             s->first, s->second_device, s->second);
}

void collective_explain_shared_gpu(const SharedGpu *s, Status *st) {
    char what[512];
    collective_describe_shared_gpu(s, what, sizeof what);
    status_prefix(st, "--collective nccl: %s, and NCCL takes one rank per GPU: ", what);
    status_hint(st, "give each rank of a host its own GPU: --device cuda (the default) takes "
                    "the local rank's (OMPI_COMM_WORLD_LOCAL_RANK), or start each rank with "
                    "CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK; with fewer GPUs than "
                    "ranks, --collective auto or mpi sums through host memory");
    st->code = STATUS_RUNTIME_ERROR;
}

int collective_open_mpi(Device *device, int rank, int size, CollectiveChoice choice,
                        Collective *out, char *notice, size_t notice_size, Status *st) {
    memset(out, 0, sizeof *out);
    if (notice_size) notice[0] = 0;
    TRY(collective_check_choice(choice, &device, 1, st));
    // The choice is the same on every rank (core/run_agreement.c), so all gather or none.
    if (choice == COLLECTIVE_MPI) return open_mpi_host(device, out, st);
    RankDevices found;
    TRY(gather_rank_devices(device, rank, size, &found, st));
    if (found.gpu_rank < 0) return open_mpi_host(device, out, st);  // CPU ranks: MPI always
    char what[512];
    if (found.cpu_rank >= 0) {
        // --device auto gives the CPU to a rank whose local GPU is missing.
        snprintf(notice, notice_size, "--collective auto: rank %d of %d trains on the CPU and "
                 "rank %d on %s; gradients and the start's parameters go through host memory "
                 "(MPI_Allreduce)", found.cpu_rank, size, found.gpu_rank, found.gpu_device);
        return open_mpi_host(device, out, st);
    }
    if (found.shared.found && choice == COLLECTIVE_AUTO) {
        collective_describe_shared_gpu(&found.shared, what, sizeof what);
        snprintf(notice, notice_size, "--collective auto: %s, which NCCL refuses; gradients "
                 "and the start's parameters go through host memory (MPI_Allreduce)", what);
        return open_mpi_host(device, out, st);
    }
    int rc = open_nccl_across(device, rank, size, out, st);
    if (rc && found.shared.found) collective_explain_shared_gpu(&found.shared, st);
    return rc;
}

// ---- NCCL over the CUDA backends ----

static int nccl_all_reduce_sum(Collective *c, float *const *buffers, size_t n, Status *st) {
    return cuda_collective_all_reduce_sum(c->impl, buffers, n, st);
}

static int nccl_broadcast(Collective *c, float *const *buffers, size_t n, int root, Status *st) {
    return cuda_collective_broadcast(c->impl, buffers, n, root, st);
}

static void nccl_close(Collective *c) {
    cuda_collective_close(c->impl);
    c->impl = NULL;
}

static int all_cuda(Device *const *devices, int count) {
    for (int r = 0; r < count; r++)
        if (devices[r]->backend->kind != BACKEND_CUDA) return 0;
    return 1;
}

int collective_choice_parse(const char *text, CollectiveChoice *out, Status *st) {
    static const char *const names[] = {"auto", "nccl", "mpi"};
    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = (CollectiveChoice)i;
            return 0;
        }
    status_fail(st, STATUS_BAD_INPUT, "--collective %s: expected auto, nccl or mpi", text);
    status_hint(st, "auto (the default) takes NCCL where every GPU holds one replica, else sums "
                    "through host memory");
    return STATUS_BAD_INPUT;
}

int collective_check_choice(CollectiveChoice choice, Device *const *devices, int count,
                            Status *st) {
    if (choice != COLLECTIVE_NCCL || all_cuda(devices, count)) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--collective nccl sums over GPUs, but the device is %s",
                devices[0]->name);
    status_hint(st, "on the CPU replicas and ranks sum through host memory (MPI): drop "
                    "--collective, or give --collective mpi");
    return STATUS_BAD_INPUT;
}

// The first two replicas of this process on one GPU (-1 when none): Device.name is its
// ordinal ("cuda:0"), the same for both.
static void first_shared_device(Device *const *devices, int count, int *first, int *second) {
    *first = *second = -1;
    for (int b = 1; b < count && *first < 0; b++)
        for (int a = 0; a < b && *first < 0; a++)
            if (strcmp(devices[a]->name, devices[b]->name) == 0) {
                *first = a;
                *second = b;
            }
}

static int open_nccl_here(Device *const *devices, int count, Collective *out, Status *st) {
    const Backend *backends[64];
    if (count > 64) return status_fail(st, STATUS_BAD_INPUT, "at most 64 replicas, got %d", count);
    for (int r = 0; r < count; r++) backends[r] = devices[r]->backend;
    CudaCollective *nccl = NULL;
    TRY(cuda_collective_open(backends, count, &nccl, st));
    *out = (Collective){.name = "nccl", .impl = nccl, .all_reduce_sum = nccl_all_reduce_sum,
                        .broadcast = nccl_broadcast, .close = nccl_close};
    return 0;
}

static int all_on_one_device(Device *const *devices, int count) {
    for (int r = 1; r < count; r++)
        if (strcmp(devices[r]->name, devices[0]->name) != 0) return 0;
    return 1;
}

int collective_open(Device *const *devices, int count, CollectiveChoice choice, Collective *out,
                    char *notice, size_t notice_size, Status *st) {
    memset(out, 0, sizeof *out);
    if (notice_size) notice[0] = 0;
    TRY(collective_check_choice(choice, devices, count, st));
    if (count <= 1 || choice == COLLECTIVE_MPI) return collective_open_host(devices, count, out, st);
    int cuda = all_cuda(devices, count), one_device = all_on_one_device(devices, count);
    if (!cuda) {
        if (one_device) return open_same_device(devices, count, out, st);
        return collective_open_host(devices, count, out, st);
    }
    int first, second;
    first_shared_device(devices, count, &first, &second);
    if (first >= 0 && choice == COLLECTIVE_AUTO) {
        snprintf(notice, notice_size, "--collective auto: replicas %d and %d share %s, which "
                 "NCCL refuses; gradients are summed, and the start's parameters copied, %s",
                 first, second, devices[first]->name,
                 one_device ? "on the device itself" : "through host memory");
        if (one_device) return open_same_device(devices, count, out, st);
        return collective_open_host(devices, count, out, st);
    }
    int rc = open_nccl_here(devices, count, out, st);
    if (rc && first >= 0) {
        status_prefix(st, "--collective nccl: replicas %d and %d share %s, and NCCL takes one "
                      "replica per GPU: ", first, second, devices[first]->name);
        status_hint(st, "list each GPU once in --gpus, or drop --collective nccl (auto sums "
                        "replicas that share a GPU through host memory)");
        st->code = STATUS_RUNTIME_ERROR;
    }
    return rc;
}

struct CudaCollective *collective_nccl(const Collective *c) {
    return c->name && strcmp(c->name, "nccl") == 0 ? c->impl : NULL;
}

int collective_sum_doubles_over_ranks(Collective *c, double *values, size_t n, Status *st) {
    if (strcmp(c->name, "nccl") == 0)
        return cuda_collective_sum_doubles_over_ranks(c->impl, values, n, st);
    if (strcmp(c->name, "mpi") != 0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s collective does not sum across "
                           "processes", c->name);
    const Backend *b = ((MpiCollective *)c->impl)->device->backend;
    if (b->kind == BACKEND_CPU) return mpi_all_reduce_sum_statistics(values, n, st);
    double *host = malloc(n * sizeof *host);  // a few hundred bytes, once per layer and pass
    if (!host) return status_out_of_host_memory(st, n * sizeof *host, "for batchnorm statistics");
    int rc = b->copy_to_host(b, host, values, n * sizeof *host, st);
    if (!rc) rc = mpi_all_reduce_sum_statistics(host, n, st);
    if (!rc) rc = b->copy_to_device(b, values, host, n * sizeof *host, st);
    free(host);
    return rc;
}

void collective_close(Collective *c) {
    if (c->close) c->close(c);
    memset(c, 0, sizeof *c);
}
