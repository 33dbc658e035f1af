// NCCL all-reduce and broadcast across the GPUs of this process, one communicator per
// device from ncclCommInitAll. One host thread drives every device, so each collective is
// a group: the per-device calls are queued between ncclGroupStart and ncclGroupEnd, which
// returns once all are enqueued on their devices' streams (no host sync).
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "kernels/cuda/cuda_collective.h"
#include "kernels/cuda/cuda_internal.h"

#include "kernels/cuda/cuda_nccl_check.h"

struct CudaCollective {
    int count;              // communicators (GPUs) in this process
    int processes;          // > 1: each communicator spans the processes of an mpirun launch
    ncclComm_t *comms;
    cudaStream_t *streams;
    // While gradient buckets are summed on a communication stream: every other operation
    // of the communicator goes there too (cuda_collective_sum_doubles_over_ranks).
    CudaStreamSums *stream_sums;
};

static_assert(sizeof(ncclUniqueId) == CUDA_NCCL_ID_BYTES, "NCCL's id is 128 bytes");

extern "C" void cuda_collective_close(CudaCollective *c) {
    if (!c) return;
    for (int r = 0; r < c->count; r++)
        if (c->comms && c->comms[r]) ncclCommDestroy(c->comms[r]);
    free(c->comms);
    free(c->streams);
    free(c);
}

// `count` empty communicators and their streams, for this process alone (processes 0);
// *out is NULL when the host has no room for them.
static int collective_new(int count, const char *what, CudaCollective **out, Status *st) {
    CudaCollective *c = (CudaCollective *)calloc(1, sizeof *c);
    if (c) {
        c->count = count;
        c->comms = (ncclComm_t *)calloc((size_t)count, sizeof *c->comms);
        c->streams = (cudaStream_t *)calloc((size_t)count, sizeof *c->streams);
    }
    if (!c || !c->comms || !c->streams) {
        cuda_collective_close(c);
        *out = NULL;
        return status_out_of_host_memory(
            st, sizeof *c + (size_t)count * (sizeof *c->comms + sizeof *c->streams), "%s", what);
    }
    *out = c;
    return 0;
}

// Two replicas on one GPU reach NCCL as they are: it refuses them itself ("Duplicate GPU
// detected", ncclInvalidUsage), and core/collective.c, which chose NCCL for them only when
// asked to (--collective nccl), puts its words beside which replicas share which GPU.
static int init_communicators(const Backend *const *backends, CudaCollective *c, Status *st) {
    int *ordinals = (int *)calloc((size_t)c->count, sizeof *ordinals);
    if (!ordinals)
        return status_out_of_host_memory(st, (size_t)c->count * sizeof *ordinals,
                                         "for the replicas' GPU ordinals");
    for (int r = 0; r < c->count; r++) {
        CudaContext *ctx = cuda_context(backends[r]);
        ordinals[r] = ctx->ordinal;
        c->streams[r] = ctx->stream;
    }
    ncclResult_t result = ncclCommInitAll(c->comms, c->count, ordinals);
    free(ordinals);
    if (result != ncclSuccess)
        return nccl_fail(st, result, "ncclCommInitAll", __FILE__, __LINE__);
    return 0;
}

extern "C" int cuda_collective_open(const Backend *const *backends, int count,
                                    CudaCollective **out, Status *st) {
    *out = NULL;
    CudaCollective *c;
    TRY(collective_new(count, "for NCCL's communicators", &c, st));
    int rc = init_communicators(backends, c, st);
    if (rc) {
        cuda_collective_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

// One collective call per device inside a group, as one thread driving several devices
// must: all-reduce (sum) when root < 0, else a broadcast from replica `root`.
static int grouped_collective(CudaCollective *c, float *const *buffers, size_t n, int root,
                              Status *st) {
    if ((c->count == 1 && c->processes <= 1) || n == 0) return 0;
    NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < c->count; r++) {
        ncclResult_t result =
            root < 0 ? ncclAllReduce(buffers[r], buffers[r], n, ncclFloat, ncclSum, c->comms[r],
                                     c->streams[r])
                     : ncclBroadcast(buffers[r], buffers[r], n, ncclFloat, root, c->comms[r],
                                     c->streams[r]);
        if (result != ncclSuccess) {
            ncclGroupEnd();
            NCCL_CHECK(result);
        }
    }
    NCCL_CHECK(ncclGroupEnd());
    return 0;
}

extern "C" int cuda_collective_all_reduce_sum(CudaCollective *c, float *const *buffers, size_t n,
                                              Status *st) {
    return grouped_collective(c, buffers, n, -1, st);
}

extern "C" int cuda_collective_broadcast(CudaCollective *c, float *const *buffers, size_t n,
                                         int root, Status *st) {
    return grouped_collective(c, buffers, n, root, st);
}

extern "C" int cuda_collective_unique_id(unsigned char id[CUDA_NCCL_ID_BYTES], Status *st) {
    ncclUniqueId unique;
    NCCL_CHECK(ncclGetUniqueId(&unique));
    memcpy(id, &unique, sizeof unique);
    return 0;
}

extern "C" int cuda_collective_open_rank(const Backend *b,
                                         const unsigned char id[CUDA_NCCL_ID_BYTES], int rank,
                                         int size, CudaCollective **out, Status *st) {
    *out = NULL;
    CudaCollective *c;
    TRY(collective_new(1, "for NCCL's communicator", &c, st));
    c->processes = size;
    CudaContext *ctx = cuda_context(b);
    c->streams[0] = ctx->stream;
    ncclUniqueId unique;
    memcpy(&unique, id, sizeof unique);
    // The device must be current: NCCL binds the communicator to it.
    cudaError_t set = cudaSetDevice(ctx->ordinal);
    ncclResult_t result = set == cudaSuccess ? ncclCommInitRank(&c->comms[0], size, unique, rank)
                                             : ncclInvalidUsage;
    if (set != cudaSuccess || result != ncclSuccess) {
        // The status first: NCCL's last error (which check refused) is read there.
        int code = set != cudaSuccess
                       ? status_fail(st, STATUS_RUNTIME_ERROR, "cudaSetDevice(%d) before NCCL: %s",
                                     ctx->ordinal, cudaGetErrorString(set))
                       : nccl_fail(st, result, "ncclCommInitRank", __FILE__, __LINE__);
        cuda_collective_close(c);
        return code;
    }
    *out = c;
    return 0;
}

// ---- gradient buckets on a communication stream (one GPU per process) ----
// The bucket's copies were queued on the compute stream; an event recorded there after them
// makes the communication stream wait, so the all-reduce starts as soon as the GPU has
// copied the bucket, while the compute stream runs the next layers' backward. The host
// only queues; it never waits inside a step.

// Steps whose wait is timed before their events are reused. Reading an event pair's time
// needs both reached; a pair is read when its slot comes round again, this many steps
// later, long after the device passed it (the loss is read, a device sync, every 16
// steps), so the read never makes the host wait in practice.
enum { TIMED_STEPS = 64 };

struct CudaStreamSums {
    CudaCollective *collective;            // whose stream_sums this is, until closed
    ncclComm_t comm;
    cudaStream_t compute, communication;
    cudaEvent_t copied;                    // on compute: the bucket is in place
    cudaEvent_t statistics_summed;         // on communication: a batchnorm sum is done
    cudaEvent_t backward_end[TIMED_STEPS]; // on compute: arrived at finish
    cudaEvent_t sums_end[TIMED_STEPS];     // on communication: the step's last sum is done
    long steps, timed;                     // finished steps; those whose wait was read
    double waited_ms;
};

extern "C" void cuda_stream_sums_close(CudaStreamSums *s) {
    if (!s) return;
    if (s->collective && s->collective->stream_sums == s) s->collective->stream_sums = NULL;
    if (s->communication) cudaStreamDestroy(s->communication);
    if (s->copied) cudaEventDestroy(s->copied);
    if (s->statistics_summed) cudaEventDestroy(s->statistics_summed);
    for (int k = 0; k < TIMED_STEPS; k++) {
        if (s->backward_end[k]) cudaEventDestroy(s->backward_end[k]);
        if (s->sums_end[k]) cudaEventDestroy(s->sums_end[k]);
    }
    free(s);
}

// The highest priority the device has: when backward's kernels fill every SM, the
// all-reduce's blocks are scheduled ahead of the ones queued after them rather than
// behind, so a bucket's sum is not held back until backward ends.
static int create_stream_and_events(CudaStreamSums *s, Status *st) {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&s->communication, cudaStreamNonBlocking, greatest));
    CUDA_CHECK(cudaEventCreateWithFlags(&s->copied, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&s->statistics_summed, cudaEventDisableTiming));
    for (int k = 0; k < TIMED_STEPS; k++) {
        CUDA_CHECK(cudaEventCreate(&s->backward_end[k]));
        CUDA_CHECK(cudaEventCreate(&s->sums_end[k]));
    }
    return 0;
}

extern "C" int cuda_stream_sums_open(CudaCollective *c, const Backend *b, CudaStreamSums **out,
                                     Status *st) {
    *out = NULL;
    if (c->count != 1)
        return status_fail(st, STATUS_BAD_INPUT, "gradient buckets on a communication stream "
                           "take one GPU per process, not %d", c->count);
    CudaStreamSums *s = (CudaStreamSums *)calloc(1, sizeof *s);
    if (!s) return status_out_of_host_memory(st, sizeof *s, "for gradient sums on a stream");
    s->comm = c->comms[0];
    s->compute = c->streams[0];
    cudaError_t set = cudaSetDevice(cuda_context(b)->ordinal);
    int rc = set == cudaSuccess ? create_stream_and_events(s, st)
                                : cuda_fail(st, set, "cudaSetDevice", __FILE__, __LINE__);
    if (rc) {
        cuda_stream_sums_close(s);
        return rc;
    }
    s->collective = c;
    c->stream_sums = s;
    *out = s;
    return 0;
}

extern "C" int cuda_stream_sums_start(CudaStreamSums *s, float *values, size_t n, Status *st) {
    if (n == 0) return 0;
    CUDA_CHECK(cudaEventRecord(s->copied, s->compute));
    CUDA_CHECK(cudaStreamWaitEvent(s->communication, s->copied, 0));
    NCCL_CHECK(ncclAllReduce(values, values, n, ncclFloat, ncclSum, s->comm, s->communication));
    return 0;
}

// Adds the wait of every finished step before `through` not yet read.
static int read_waits(CudaStreamSums *s, long through, Status *st) {
    for (; s->timed < through; s->timed++) {
        int k = (int)(s->timed % TIMED_STEPS);
        float ms = 0.0f;
        // Both: cudaEventElapsedTime is cudaErrorNotReady while either is pending, and the
        // communication stream may finish before the compute stream reaches backward_end
        // (the last bucket started before backward's last layers ran).
        CUDA_CHECK(cudaEventSynchronize(s->backward_end[k]));
        CUDA_CHECK(cudaEventSynchronize(s->sums_end[k]));
        CUDA_CHECK(cudaEventElapsedTime(&ms, s->backward_end[k], s->sums_end[k]));
        if (ms > 0.0f) s->waited_ms += ms;
    }
    return 0;
}

extern "C" int cuda_stream_sums_finish(CudaStreamSums *s, Status *st) {
    TRY(read_waits(s, s->steps - TIMED_STEPS + 1, st));  // the slot this step reuses
    int k = (int)(s->steps % TIMED_STEPS);
    CUDA_CHECK(cudaEventRecord(s->backward_end[k], s->compute));
    CUDA_CHECK(cudaEventRecord(s->sums_end[k], s->communication));
    CUDA_CHECK(cudaStreamWaitEvent(s->compute, s->sums_end[k], 0));
    s->steps++;
    return 0;
}

extern "C" int cuda_stream_sums_waited(CudaStreamSums *s, double *ms, Status *st) {
    *ms = 0.0;
    TRY(read_waits(s, s->steps, st));
    *ms = s->waited_ms;
    return 0;
}

// --sync-batchnorm's statistics, between the kernels that make and use them on the compute
// stream.
extern "C" int cuda_collective_sum_doubles_over_ranks(CudaCollective *c, double *values, size_t n,
                                                      Status *st) {
    if (c->count != 1 || n == 0) return 0;  // one GPU per process, as open_rank makes it
    CudaStreamSums *s = c->stream_sums;
    if (!s) {
        NCCL_CHECK(ncclAllReduce(values, values, n, ncclDouble, ncclSum, c->comms[0],
                                 c->streams[0]));
        return 0;
    }
    // With gradient buckets summing on the communication stream, this sum goes there as
    // well, forked from and joined back to the compute stream: NCCL does not promise that
    // two operations of one communicator on two streams make progress when both are in
    // flight, so every operation of the communicator stays on one stream, in the order
    // every rank issues them.
    CUDA_CHECK(cudaEventRecord(s->copied, s->compute));
    CUDA_CHECK(cudaStreamWaitEvent(s->communication, s->copied, 0));
    NCCL_CHECK(ncclAllReduce(values, values, n, ncclDouble, ncclSum, s->comm, s->communication));
    CUDA_CHECK(cudaEventRecord(s->statistics_summed, s->communication));
    CUDA_CHECK(cudaStreamWaitEvent(s->compute, s->statistics_summed, 0));
    return 0;
}
