// The CUDA backend's table for one device: memory, copies and synchronisation here; the
// math ops register themselves from their own files (cuda_gemm.cu, cuda_conv2d.cu, ...).
//
// Everything runs on one stream per device, so ops are ordered without host syncs; the
// host waits only where it needs a value (copy_to_host, synchronize).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_graph.h"
#include "kernels/cuda/cuda_internal.h"

// Allocation and memory queries act on the current device, which with several replicas
// may be another one, so they say which they mean; a cudaSetDevice to the device already
// current costs next to nothing.
extern "C" int cuda_device_alloc(int ordinal, size_t bytes, void **ptr, Status *st) {
    *ptr = NULL;
    const CudaRuntimeCalls *runtime = cuda_runtime_calls();
    CUDA_CHECK((cudaError_t)runtime->set_device(ordinal));
    // cuda_fail clears the failure from the runtime, so out of memory is recoverable.
    CUDA_CHECK((cudaError_t)runtime->malloc(ptr, bytes ? bytes : 1));
    return 0;
}

static int cuda_raw_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    return cuda_device_alloc(cuda_context(b)->ordinal, bytes, ptr, st);
}

static void cuda_raw_free(const Backend *b, void *ptr) {
    // cudaFree synchronizes the device, which is what freeing memory a queued kernel may
    // still use needs; the caching allocator keeps this off the training step.
    if (!ptr) return;
    cudaSetDevice(cuda_context(b)->ordinal);
    cudaFree(ptr);
}

static size_t cuda_total_memory(const Backend *b) {
    size_t free_bytes = 0, total = 0;
    if (cudaSetDevice(cuda_context(b)->ordinal) != cudaSuccess) return 0;
    return cudaMemGetInfo(&free_bytes, &total) == cudaSuccess ? total : 0;
}

static int cuda_copy_to_device(const Backend *b, void *dst, const void *src, size_t bytes,
                               Status *st) {
    // From pageable host memory this returns once the bytes are staged, so the caller may
    // reuse its buffer right away.
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cuda_context(b)->stream));
    return 0;
}

static int cuda_copy_to_host(const Backend *b, void *dst, const void *src, size_t bytes,
                             Status *st) {
    cudaStream_t stream = cuda_context(b)->stream;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return 0;
}

static int cuda_copy_on_device(const Backend *b, void *dst, const void *src, size_t bytes,
                               Status *st) {
    if (bytes == 0 || dst == src) return 0;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cuda_context(b)->stream));
    return 0;
}

__global__ static void fill_kernel(float *x, float value, size_t n) {
    for (size_t i = cuda_grid_thread(); i < n; i += cuda_grid_threads())
        x[i] = value;
}

static int cuda_fill(const Backend *b, float *x, float value, size_t n, Status *st) {
    if (n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    if (value == 0.0f) {
        CUDA_CHECK(cudaMemsetAsync(x, 0, n * sizeof *x, ctx->stream));
        return 0;
    }
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "fill_kernel", grid, CUDA_THREADS, 0, n, 64);
    fill_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(x, value, n);
    CUDA_CHECK_LAUNCH("fill_kernel");
    return 0;
}

// One thread per output value: consecutive threads read consecutive bytes of a sample
// (but for a crop's shift or a flip), so the gather is coalesced within each sample. The
// transform goes by value: a few dozen bytes of kernel parameters.
__global__ static void gather_samples_kernel(const uint8_t *images, const uint8_t *labels,
                                             const int32_t *indices, int count, size_t sample_size,
                                             SampleTransform transform, int classes,
                                             float *out_images, int32_t *out_labels,
                                             int32_t *first_bad_sample) {
    size_t total = (size_t)count * sample_size;
    for (size_t i = cuda_grid_thread(); i < total; i += cuda_grid_threads()) {
        size_t k = i / sample_size, p = i % sample_size;
        size_t source = (size_t)indices[k];
        SamplePlacement place = sample_placement(&transform, source);
        out_images[i] = sample_transform_value(&transform, images + source * sample_size, place, p);
        if (p != 0) continue;
        int label = labels[source];
        if (label >= classes) {
            atomicMin(first_bad_sample, (int32_t)source);
            label = 0;
        }
        out_labels[k] = label;
    }
}

static int cuda_gather_samples(const Backend *b, const GatherArgs *g, const GatherSamplesTensors *t,
                               Status *st) {
    int count = g->count, classes = g->classes;
    size_t sample_size = g->sample_size;
    if (count <= 0 || sample_size == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    size_t total = (size_t)count * sample_size;
    unsigned grid = cuda_blocks_for(total);
    CUDA_CHECK_CONFIG(ctx, "gather_samples_kernel", grid, CUDA_THREADS, 0, total, 64);
    gather_samples_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        t->images, t->labels, t->indices, count, sample_size, g->transform, classes, t->out_images,
        t->out_labels, t->first_bad_sample);
    CUDA_CHECK_LAUNCH("gather_samples_kernel");
    return 0;
}

static int cuda_synchronize(const Backend *b, Status *st) {
    CUDA_CHECK(cudaStreamSynchronize(cuda_context(b)->stream));
    return 0;
}

static int cuda_make_current(const Backend *b, Status *st) {
    CUDA_CHECK(cudaSetDevice(cuda_context(b)->ordinal));
    return 0;
}

// ---- pinned host buffers ----
// Each buffer is one page-locked block whose first PINNED_HEADER_BYTES hold its fence, an
// event, so the pointer handed out finds its event without a lookup table and the payload
// keeps cudaMallocHost's alignment. Pinned memory is what lets cudaMemcpyAsync return
// before the copy is done: from pageable memory the host waits while the driver stages it.
typedef struct PinnedHeader {
    cudaEvent_t copied;  // recorded after the copies that read the buffer were queued
} PinnedHeader;
enum { PINNED_HEADER_BYTES = 256 };

static PinnedHeader *pinned_header(void *ptr) {
    return (PinnedHeader *)((char *)ptr - PINNED_HEADER_BYTES);
}

static int cuda_pinned_alloc(const Backend *b, size_t bytes, void **ptr, Status *st) {
    *ptr = NULL;
    CUDA_CHECK(cudaSetDevice(cuda_context(b)->ordinal));
    void *block = NULL;
    // A failure is cleared from the runtime by cuda_fail, like a failed cudaMalloc.
    CUDA_CHECK(cudaMallocHost(&block, PINNED_HEADER_BYTES + bytes));
    PinnedHeader *header = (PinnedHeader *)block;
    // Timing off: the event is only waited on, and a timing event costs more to record.
    cudaError_t err = cudaEventCreateWithFlags(&header->copied, cudaEventDisableTiming);
    if (err != cudaSuccess) {
        cudaFreeHost(block);
        return cuda_fail(st, err, "cudaEventCreateWithFlags(&header->copied, "
                         "cudaEventDisableTiming)", __FILE__, __LINE__);
    }
    *ptr = (char *)block + PINNED_HEADER_BYTES;
    return 0;
}

static void cuda_pinned_free(const Backend *b, void *ptr) {
    if (!ptr) return;
    PinnedHeader *header = pinned_header(ptr);
    cudaSetDevice(cuda_context(b)->ordinal);
    // No copy may still be reading the block when it goes back.
    cudaEventSynchronize(header->copied);
    cudaEventDestroy(header->copied);
    cudaFreeHost(header);
}

static int cuda_pinned_fence(const Backend *b, void *ptr, Status *st) {
    CUDA_CHECK(cudaEventRecord(pinned_header(ptr)->copied, cuda_context(b)->stream));
    return 0;
}

// Blocks only until the work queued before the event's last record is done. Called from
// the prefetch thread too, whose current device is 0 until it says otherwise: naming the
// event's device keeps the wait in its context with several GPUs.
static int cuda_pinned_wait(const Backend *b, void *ptr, Status *st) {
    CUDA_CHECK(cudaSetDevice(cuda_context(b)->ordinal));
    CUDA_CHECK(cudaEventSynchronize(pinned_header(ptr)->copied));
    return 0;
}

// ---- device timing ----
// A timer is one CUDA event (timing enabled), recorded on the device's stream; the elapsed
// time between two is measured by the GPU itself, so the host's launch overhead counts
// only where it leaves the GPU idle.
static int cuda_timer_create(const Backend *b, void **timer, Status *st) {
    *timer = NULL;
    CUDA_CHECK(cudaSetDevice(cuda_context(b)->ordinal));
    cudaEvent_t event;
    CUDA_CHECK(cudaEventCreate(&event));
    *timer = (void *)event;
    return 0;
}

static int cuda_timer_record(const Backend *b, void *timer, Status *st) {
    CUDA_CHECK(cudaEventRecord((cudaEvent_t)timer, cuda_context(b)->stream));
    return 0;
}

static int cuda_timer_elapsed(const Backend *b, void *start, void *end, double *ms, Status *st) {
    float elapsed = 0.0f;
    CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)end));
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, (cudaEvent_t)start, (cudaEvent_t)end));
    *ms = elapsed;
    return 0;
}

static void cuda_timer_destroy(const Backend *b, void *timer) {
    if (timer) cudaEventDestroy((cudaEvent_t)timer);
}

// Storage in f32, bf16 and f16 in either layout; GEMMs and convolutions in bf16 or fp16
// from the compute capability precision_min_compute names (the same fact precision_check
// reads for a GPU it describes, and cuda_backend_open's precision_on_gpu).
static int cuda_supports(const Backend *b, OpFamily family, DType dtype, Layout layout) {
    return backend_supports_on(b->compute, family, dtype, layout);
}

// NVTX is header-only in CUDA 12+; without a profiler attached these calls cost nothing.
static void cuda_range_push(const Backend *b, const char *name) { nvtxRangePushA(name); }
static void cuda_range_pop(const Backend *b) { nvtxRangePop(); }

// The precision asked for (allow_tf32 standing in for a default one), as this GPU runs it:
// TF32 needs Ampere (8.0) and is fp32 before it, as PyTorch's allow_tf32 is ignored there;
// bf16 and fp16 the GPU lacks are refused rather than silently computed otherwise.
static int choose_precision(const CudaBackendOptions *options, CudaContext *ctx,
                            const char *gpu, Status *st) {
    Precision asked = options->precision;
    if (asked == PRECISION_DEFAULT)
        asked = options->allow_tf32 ? PRECISION_TF32 : PRECISION_FP32;
    int compute = ctx->compute_major * 10 + ctx->compute_minor;
    ctx->precision = precision_on_gpu(asked, compute);
    if (backend_precision_supported_on(compute, asked)) return 0;
    int floor = precision_min_compute(asked);
    status_fail(st, STATUS_NO_DEVICE, "%s (%s) has compute capability %d.%d; %s needs %d.%d "
                "or newer", ctx->name, gpu, ctx->compute_major, ctx->compute_minor,
                precision_name(asked), floor / 10, floor % 10);
    status_hint(st, "use precision fp32 on this GPU, or a GPU of compute capability %d.%d+",
                floor / 10, floor % 10);
    return STATUS_NO_DEVICE;
}

static int open_context(const CudaBackendOptions *options, CudaContext *ctx, Status *st) {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (options->ordinal < 0 || options->ordinal >= count) {
        status_fail(st, STATUS_NO_DEVICE, "cuda:%d is out of range: %d device%s visible",
                    options->ordinal, count, count == 1 ? " is" : "s are");
        status_hint(st, "use an ordinal below %d (CUDA_VISIBLE_DEVICES renumbers from 0)", count);
        snprintf(st->error_name, sizeof st->error_name, "cudaErrorInvalidDevice");
        return STATUS_NO_DEVICE;
    }
    ctx->ordinal = options->ordinal;
    ctx->disabled_levers = options->disabled_levers;
    snprintf(ctx->name, sizeof ctx->name, "cuda:%d", options->ordinal);
    CUDA_CHECK(cudaSetDevice(options->ordinal));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, options->ordinal));
    ctx->compute_major = prop.major;
    ctx->compute_minor = prop.minor;
    ctx->multiprocessors = prop.multiProcessorCount;
    // The launch limits every kernel launch is checked against (cuda_internal.h).
    ctx->limits.max_threads_per_block = prop.maxThreadsPerBlock;
    for (int axis = 0; axis < 3; axis++) {
        ctx->limits.max_block_dim[axis] = prop.maxThreadsDim[axis];
        ctx->limits.max_grid_dim[axis] = prop.maxGridSize[axis];
    }
    ctx->limits.max_shared_per_block = prop.sharedMemPerBlock;
    snprintf(ctx->limits.device, sizeof ctx->limits.device, "%s", ctx->name);
    if (prop.major * 10 + prop.minor < 75) {
        status_fail(st, STATUS_NO_DEVICE, "%s (%s) has compute capability %d.%d; this CUDA "
                    "toolkit and trainer need 7.5 or newer", ctx->name, prop.name, prop.major,
                    prop.minor);
        status_hint(st, "use --device cpu, or a GPU of the Turing generation or later");
        return STATUS_NO_DEVICE;
    }
    TRY(choose_precision(options, ctx, prop.name, st));
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ctx->cublas));
    CUBLAS_CHECK(cublasSetStream(ctx->cublas, ctx->stream));
    // cuda_gemm.cu names its compute type on every call; the handle's mode covers any
    // other cuBLAS routine: TF32 only where the precision allows at least that rounding.
    // With a 16-bit C, cuBLAS may otherwise sum split-K's partial products in 16 bits:
    // disallowed, so a 16-bit GEMM sums in f32 and rounds C once, as the CPU reference does.
    cublasMath_t math = ctx->precision == PRECISION_FP32 ? CUBLAS_DEFAULT_MATH
                                                         : CUBLAS_TF32_TENSOR_OP_MATH;
    CUBLAS_CHECK(cublasSetMathMode(
        ctx->cublas, (cublasMath_t)(math | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    CUDNN_CHECK(cudnnCreate(&ctx->cudnn));
    CUDNN_CHECK(cudnnSetStream(ctx->cudnn, ctx->stream));
    CUDA_CHECK(cudaMalloc(&ctx->partials, CUDA_PARTIALS_BYTES));
    return cuda_gemm_epilogues_open(ctx, st);
}

static void close_context(CudaContext *ctx) {
    cuda_conv_cache_free(ctx);
    cuda_graph_state_free(ctx);
    cuda_gemm_epilogues_close(ctx);
    if (ctx->partials) cudaFree(ctx->partials);
    if (ctx->cudnn) cudnnDestroy(ctx->cudnn);
    if (ctx->cublas) cublasDestroy(ctx->cublas);
    if (ctx->stream) cudaStreamDestroy(ctx->stream);
}

extern "C" int cuda_backend_open(const CudaBackendOptions *options, const Backend **out,
                                 Status *st) {
    *out = NULL;
    Backend *table = (Backend *)calloc(1, sizeof *table);
    CudaContext *ctx = (CudaContext *)calloc(1, sizeof *ctx);
    if (!table || !ctx) {
        free(table);
        free(ctx);
        return status_out_of_host_memory(st, sizeof *table + sizeof *ctx,
                                         "opening the CUDA backend");
    }
    int rc = open_context(options, ctx, st);
    if (rc) {
        close_context(ctx);
        free(ctx);
        free(table);
        return rc == STATUS_RUNTIME_ERROR ? (st->code = STATUS_NO_DEVICE) : rc;
    }
    table->name = ctx->name;
    table->kind = BACKEND_CUDA;
    table->impl = ctx;
    table->compute = ctx->compute_major * 10 + ctx->compute_minor;
    table->supports = cuda_supports;
    table->raw_alloc = cuda_raw_alloc;
    table->raw_free = cuda_raw_free;
    table->total_memory = cuda_total_memory;
    table->copy_to_device = cuda_copy_to_device;
    table->copy_to_host = cuda_copy_to_host;
    table->copy_on_device = cuda_copy_on_device;
    table->fill = cuda_fill;
    table->synchronize = cuda_synchronize;
    table->make_current = cuda_make_current;
    table->pinned_alloc = cuda_pinned_alloc;
    table->pinned_free = cuda_pinned_free;
    table->pinned_fence = cuda_pinned_fence;
    table->pinned_wait = cuda_pinned_wait;
    table->gather_samples = cuda_gather_samples;
    table->range_push = cuda_range_push;
    table->range_pop = cuda_range_pop;
    table->timer_create = cuda_timer_create;
    table->timer_record = cuda_timer_record;
    table->timer_elapsed = cuda_timer_elapsed;
    table->timer_destroy = cuda_timer_destroy;
    // NHWC images between convolutions with --layout nhwc (graph_set_layouts).
    table->nhwc_activations = options->nhwc != 0;
    cuda_register_gemm_ops(table);
    cuda_register_elementwise_ops(table);
    cuda_register_loss_ops(table);
    cuda_register_optimizer_ops(table);
    cuda_register_conv_ops(table);
    cuda_register_pool_ops(table);
    cuda_register_layout_ops(table);
    cuda_register_batchnorm_ops(table);
    cuda_register_norm_ops(table);
    cuda_register_graph_ops(table);
    *out = table;
    return 0;
}

extern "C" Precision cuda_backend_precision(const Backend *b) {
    return cuda_context(b)->precision;
}

extern "C" void cuda_backend_close(const Backend *b) {
    if (!b) return;
    CudaContext *ctx = cuda_context(b);
    cudaSetDevice(ctx->ordinal);
    cudaStreamSynchronize(ctx->stream);
    close_context(ctx);
    free(ctx);
    free((Backend *)b);
}
