// A training step as a CUDA Graph: the device's stream recorded once (stream capture) and
// replayed with one cudaGraphLaunch, so a step of a few hundred small kernels costs the
// host one launch instead of one per kernel (mlp at batch 128 on the H100 is bound by
// launches, not by the GPU's work). cuda_graph.h says how the values that change every
// step reach a replay.
//
// Capture mode: thread-local. Global would also fail the capture when another thread of
// the process makes an unsafe call (cuDNN's or a library's own threads, a prefetch
// thread's event wait), which says nothing about the step; relaxed would let this
// thread's own unsafe calls through (a cudaMalloc or a host sync inside the step), and
// those are exactly what the capture must refuse: a sync would not wait for the step, an
// allocation would be made once and frozen into every replay. Thread-local refuses them
// in the capturing thread alone.
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_graph.h"

struct CudaCapture {
    int recording;
    StepValues values;      // the step being recorded, as its ops are given it
    int has_adam, has_sgd;  // the recorded ops read these factors from the block
    AdamHyper adam;         // as the recorded updates were given them: a replay recomputes
    SgdHyper sgd;           //   the factors from these with its own lr and step
    CudaStepBlock *block;   // device memory, allocated at the first capture
};

// What capture_end hands out.
typedef struct CudaStepGraph {
    cudaGraphExec_t exec;
    int has_adam, has_sgd;
    AdamHyper adam;
    SgdHyper sgd;
} CudaStepGraph;

void cuda_graph_state_free(CudaContext *ctx) {
    if (!ctx->capture) return;
    if (ctx->capture->block) cudaFree(ctx->capture->block);
    free(ctx->capture);
    ctx->capture = NULL;
}

static int recording(const CudaContext *ctx) { return ctx->capture && ctx->capture->recording; }

static int frozen_value(const char *op, const char *what, double given, double captured,
                        Status *st) {
    status_fail(st, STATUS_RUNTIME_ERROR, "%s while capturing a CUDA Graph: %s %g, but the "
                "step being captured has %g; a replay would repeat it", op, what, given,
                captured);
    status_hint(st, "a value that changes every step must reach the capture as StepValues "
                    "(kernels/backend.h); run with --cuda-graph off meanwhile");
    return STATUS_RUNTIME_ERROR;
}

static int same_adam(const AdamHyper *a, const AdamHyper *b) {
    return a->beta1 == b->beta1 && a->beta2 == b->beta2 && a->eps == b->eps &&
           a->weight_decay == b->weight_decay &&
           a->decoupled_weight_decay == b->decoupled_weight_decay;
}

static int same_sgd(const SgdHyper *a, const SgdHyper *b) {
    return a->momentum == b->momentum && a->weight_decay == b->weight_decay &&
           a->nesterov == b->nesterov;
}

static int mixed_settings(const char *op, Status *st) {
    status_fail(st, STATUS_RUNTIME_ERROR, "%s while capturing a CUDA Graph: two updates of "
                "one step with different settings, which one block of step values cannot "
                "hold", op);
    status_hint(st, "run with --cuda-graph off");
    return STATUS_RUNTIME_ERROR;
}

int cuda_capture_adam(CudaContext *ctx, const AdamHyper *h, const AdamFactors **replayed,
                      Status *st) {
    *replayed = NULL;
    if (!recording(ctx)) return 0;
    CudaCapture *c = ctx->capture;
    if (h->lr != c->values.lr) return frozen_value("adam_update", "lr", h->lr, c->values.lr, st);
    if (h->step != c->values.step)
        return frozen_value("adam_update", "step", h->step, c->values.step, st);
    if (c->has_adam && !same_adam(h, &c->adam)) return mixed_settings("adam_update", st);
    c->adam = *h;
    c->has_adam = 1;
    *replayed = &c->block->adam;
    return 0;
}

int cuda_capture_sgd(CudaContext *ctx, const SgdHyper *h, const SgdFactors **replayed,
                     Status *st) {
    *replayed = NULL;
    if (!recording(ctx)) return 0;
    CudaCapture *c = ctx->capture;
    if (h->lr != c->values.lr) return frozen_value("sgd_update", "lr", h->lr, c->values.lr, st);
    if (c->has_sgd && !same_sgd(h, &c->sgd)) return mixed_settings("sgd_update", st);
    c->sgd = *h;
    c->has_sgd = 1;
    *replayed = &c->block->sgd;
    return 0;
}

void cuda_capture_seed(CudaContext *ctx, uint64_t seed, const uint64_t **replayed,
                       uint64_t *argument) {
    *replayed = NULL;
    *argument = seed;
    if (!recording(ctx)) return;
    *replayed = &ctx->capture->block->seed;
    *argument = seed - ctx->capture->values.seed;
}

static int cuda_capture_begin(const Backend *b, const StepValues *values, Status *st) {
    CudaContext *ctx = cuda_context(b);
    if (!ctx->capture) {
        ctx->capture = (CudaCapture *)calloc(1, sizeof *ctx->capture);
        if (!ctx->capture)
            return status_out_of_host_memory(st, sizeof *ctx->capture, "for CUDA Graph capture");
    }
    CudaCapture *c = ctx->capture;
    // Outside the caching allocator, like the reductions' partials: 72 bytes, fixed.
    if (!c->block) CUDA_CHECK(cudaMalloc((void **)&c->block, sizeof *c->block));
    CudaStepBlock *block = c->block;
    memset(c, 0, sizeof *c);
    c->block = block;
    c->values = *values;
    CUDA_CHECK(cudaStreamBeginCapture(ctx->stream, cudaStreamCaptureModeThreadLocal));
    c->recording = 1;
    return 0;
}

static int cuda_capture_end(const Backend *b, void **graph, Status *st) {
    *graph = NULL;
    CudaContext *ctx = cuda_context(b);
    if (!recording(ctx))
        return status_fail(st, STATUS_RUNTIME_ERROR, "capture_end without capture_begin");
    CudaCapture *c = ctx->capture;
    c->recording = 0;
    cudaGraph_t recorded = NULL;
    // Ends the capture even when an op broke it (cudaErrorStreamCaptureInvalidated then).
    cudaError_t err = cudaStreamEndCapture(ctx->stream, &recorded);
    if (err != cudaSuccess) {
        if (recorded) cudaGraphDestroy(recorded);
        return cuda_fail(st, err, "cudaStreamEndCapture(ctx->stream, &recorded)", __FILE__,
                         __LINE__);
    }
    CudaStepGraph *step = (CudaStepGraph *)calloc(1, sizeof *step);
    if (!step) {
        cudaGraphDestroy(recorded);
        return status_out_of_host_memory(st, sizeof *step, "for a captured step");
    }
    // Allocations cuBLAS makes inside the step (cudaMallocAsync since CUDA 12.2) become
    // graph nodes; a replay frees any it left so the next one can allocate again.
    err = cudaGraphInstantiate(&step->exec, recorded, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cudaGraphDestroy(recorded);
    if (err != cudaSuccess) {
        free(step);
        return cuda_fail(st, err, "cudaGraphInstantiate(&step->exec, recorded, "
                         "cudaGraphInstantiateFlagAutoFreeOnLaunch)", __FILE__, __LINE__);
    }
    step->has_adam = c->has_adam;
    step->has_sgd = c->has_sgd;
    step->adam = c->adam;
    step->sgd = c->sgd;
    *graph = step;
    return 0;
}

// A replay's values, and its sample indices when there are few: a kernel's arguments are
// copied at its launch, so both reach the device in one launch. A copy from pageable
// host memory and a launch each cost a step of mlp at batch 128 (70 us, about 20 kernels)
// a few microseconds; at 256 indices the arguments stay near 1 KiB, well inside the
// 4 KiB every CUDA version takes. More indices (larger batches, whose steps are long)
// are copied as before.
enum { STEP_INDICES_INLINE = 256, STEP_LAUNCH_THREADS = 128 };

typedef struct CudaStepLaunch {
    CudaStepBlock values;
    int32_t *indices_to;
    int index_count;  // 0 to STEP_INDICES_INLINE
    int32_t indices[STEP_INDICES_INLINE];
} CudaStepLaunch;

__global__ static void write_step_kernel(CudaStepBlock *block, CudaStepLaunch launch) {
    if (threadIdx.x == 0) *block = launch.values;
    for (int i = (int)threadIdx.x; i < launch.index_count; i += (int)blockDim.x)
        launch.indices_to[i] = launch.indices[i];
}

// The replay's values go to the block by a small kernel queued before the graph: ordered
// on the stream after the previous replay has read the block and the indices, and before
// this one does, and its argument is copied at the launch, so no host buffer must outlive
// it.
static int cuda_graph_launch(const Backend *b, void *graph, const StepValues *values,
                             Status *st) {
    CudaContext *ctx = cuda_context(b);
    CudaStepGraph *step = (CudaStepGraph *)graph;
    CudaStepLaunch launch;
    // All of it, unused indices and padding too: every byte is copied to the launch.
    memset(&launch, 0, sizeof launch);
    if (step->has_adam) {
        AdamHyper h = step->adam;
        h.lr = values->lr;
        h.step = values->step;
        launch.values.adam = cuda_adam_factors(&h);
    }
    if (step->has_sgd) {
        SgdHyper h = step->sgd;
        h.lr = values->lr;
        launch.values.sgd = cuda_sgd_factors(&h);
    }
    launch.values.seed = values->seed;
    launch.indices_to = values->indices_to;
    if (values->index_count > STEP_INDICES_INLINE)
        CUDA_CHECK(cudaMemcpyAsync(values->indices_to, values->indices,
                                   (size_t)values->index_count * sizeof *values->indices,
                                   cudaMemcpyHostToDevice, ctx->stream));
    else if (values->index_count > 0) {
        launch.index_count = values->index_count;
        memcpy(launch.indices, values->indices,
               (size_t)values->index_count * sizeof *values->indices);
    }
    CUDA_CHECK_CONFIG(ctx, "write_step_kernel", 1, STEP_LAUNCH_THREADS, 0,
                      (size_t)launch.index_count, 32);
    write_step_kernel<<<1, STEP_LAUNCH_THREADS, 0, ctx->stream>>>(ctx->capture->block, launch);
    CUDA_CHECK_LAUNCH("write_step_kernel");
    CUDA_CHECK(cudaGraphLaunch(step->exec, ctx->stream));
    return 0;
}

static void cuda_graph_destroy(const Backend *b, void *graph) {
    CudaStepGraph *step = (CudaStepGraph *)graph;
    if (!step) return;
    cudaSetDevice(cuda_context(b)->ordinal);
    cudaGraphExecDestroy(step->exec);
    free(step);
}

void cuda_register_graph_ops(Backend *table) {
    table->capture_begin = cuda_capture_begin;
    table->capture_end = cuda_capture_end;
    table->graph_launch = cuda_graph_launch;
    table->graph_destroy = cuda_graph_destroy;
}
