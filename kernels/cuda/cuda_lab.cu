// The GPU halves of `trainer lab`: each function makes one CUDA failure happen for real,
// records the API's own words for it, and builds the Status trainer would report. The
// raw text is what a framework shows its user; the Status is what trainer shows instead.
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_lab.h"
#include "kernels/cuda/cuda_nccl_check.h"
#include "kernels/cuda/lab/lab_kernel.h"

#ifndef TRAINER_CUDA_ARCHITECTURES
#define TRAINER_CUDA_ARCHITECTURES ""
#endif

// Appends "CALL -> cudaErrorName (N): description" as one line of out->raw.
static void add_raw(LabOutcome *out, cudaError_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_raw(LabOutcome *out, cudaError_t err, const char *fmt, ...) {
    size_t used = strlen(out->raw);
    if (used >= sizeof out->raw - 1) return;
    if (used) out->raw[used++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out->raw + used, sizeof out->raw - used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof out->raw - used) return;
    used += (size_t)n;
    snprintf(out->raw + used, sizeof out->raw - used, " -> %s (%d): %s", cudaGetErrorName(err),
             (int)err, cudaGetErrorString(err));
}

// The diagnosis trainer's checks make of `err` (cuda_errors.cu), with the catalog name
// (or, for an error the catalog lacks, the API's name) so tools/ can point at `trainer
// explain`.
static void diagnose(LabOutcome *out, cudaError_t err, const char *call, int line) {
    out->triggered = 1;
    out->api_error = (int)err;
    cuda_fail(&out->diagnosis, err, call, __FILE__, line);
    if (!out->diagnosis.error_name[0])
        snprintf(out->diagnosis.error_name, sizeof out->diagnosis.error_name, "%s",
                 cudaGetErrorName(err));
}

// Prefixes the diagnosis's message with what trainer knows that the API does not.
static void diagnosis_context(LabOutcome *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void diagnosis_context(LabOutcome *out, const char *fmt, ...) {
    char context[512], message[sizeof out->diagnosis.message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    snprintf(message, sizeof message, "%s: %.500s", context, out->diagnosis.message);
    snprintf(out->diagnosis.message, sizeof out->diagnosis.message, "%s", message);
}

static double gib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0 * 1024.0); }

// Device 0 ready for a scenario, or STATUS_NO_DEVICE saying why there is none.
static int open_first_device(cudaDeviceProp *prop, Status *st) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) {
        status_fail(st, STATUS_NO_DEVICE, "no NVIDIA driver is loaded (cudaDriverGetVersion "
                    "reports 0), so no CUDA call can reach a GPU");
        status_hint(st, "run it on a machine with an NVIDIA GPU and driver (nvidia-smi lists it)");
        return STATUS_NO_DEVICE;
    }
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaGetLastError();
        if (err != cudaSuccess)
            status_fail(st, STATUS_NO_DEVICE, "cudaGetDeviceCount -> %s (%d): %s",
                        cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
        else
            status_fail(st, STATUS_NO_DEVICE, "no CUDA device is visible");
        status_hint(st, "check nvidia-smi and CUDA_VISIBLE_DEVICES");
        return STATUS_NO_DEVICE;
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaGetDeviceProperties(prop, 0));
    return 0;
}

extern "C" int cuda_lab_gpu_available(char *why, size_t size) {
    cudaDeviceProp prop;
    Status st;
    status_clear(&st);
    if (open_first_device(&prop, &st)) {
        snprintf(why, size, "%s", st.message);
        return 0;
    }
    why[0] = '\0';
    return 1;
}

extern "C" int cuda_lab_invalid_device(int *ordinal, LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    // One past the last device is invalid on every machine; without a driver the count
    // is unknown and 7 stands in (the runtime then fails before it looks at the number).
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    *ordinal = err == cudaSuccess ? count : 7;
    cudaGetLastError();
    err = cudaSetDevice(*ordinal);
    char call[64];
    snprintf(call, sizeof call, "cudaSetDevice(%d)", *ordinal);
    add_raw(out, err, "%s", call);
    if (err == cudaSuccess) return 0;  // not triggered: the caller reports it
    cudaGetLastError();
    diagnose(out, err, call, __LINE__);
    return 0;
}

extern "C" int cuda_lab_oom(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    TRY(open_first_device(&prop, st));
    size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    size_t ask = 2 * total;
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, ask);
    add_raw(out, err, "cudaMalloc(&p, %zu) [%.1f GiB, twice the card]", ask, gib(ask));
    if (err == cudaSuccess) {
        cudaFree(p);
        return 0;
    }
    cudaGetLastError();  // out of memory is not sticky: the context stays usable
    diagnose(out, err, "cudaMalloc", __LINE__);
    diagnosis_context(out, "asked cuda:0 (%s) for %.1f GiB; it has %.1f GiB, %.1f GiB free",
                      prop.name, gib(ask), gib(total), gib(free_bytes));
    return 0;
}

__global__ static void lab_empty_kernel(int *out) {
    if (out) out[threadIdx.x] = 0;
}

extern "C" int cuda_lab_bad_launch(const LaunchConfig *config, LaunchLimits *limits,
                                   LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    TRY(open_first_device(&prop, st));
    memset(limits, 0, sizeof *limits);
    limits->max_threads_per_block = prop.maxThreadsPerBlock;
    for (int i = 0; i < 3; i++) {
        limits->max_block_dim[i] = prop.maxThreadsDim[i];
        limits->max_grid_dim[i] = prop.maxGridSize[i];
    }
    limits->max_shared_per_block = prop.sharedMemPerBlock;
    snprintf(limits->device, sizeof limits->device, "cuda:0");
    dim3 grid(config->grid[0], config->grid[1], config->grid[2]);
    dim3 block(config->block[0], config->block[1], config->block[2]);
    lab_empty_kernel<<<grid, block, config->shared_bytes>>>(NULL);
    cudaError_t err = cudaGetLastError();  // a bad configuration fails the launch itself
    add_raw(out, err, "lab_empty_kernel<<<(%u,%u,%u), (%u,%u,%u), %zu>>>", config->grid[0],
            config->grid[1], config->grid[2], config->block[0], config->block[1],
            config->block[2], config->shared_bytes);
    if (err == cudaSuccess) return 0;
    diagnose(out, err, "launch of lab_empty_kernel", __LINE__);
    return 0;
}

// Writes one int `offset` elements past `p`: far enough to leave every mapping.
__global__ static void lab_out_of_bounds_kernel(int *p, size_t offset) {
    volatile int *target = p + offset;
    *target = 42;
}

extern "C" int cuda_lab_illegal_address(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    TRY(open_first_device(&prop, st));
    int *buffer = NULL;
    const size_t count = 256;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    const size_t offset = (size_t)1 << 40;  // 4 TiB past a 1 KiB buffer
    lab_out_of_bounds_kernel<<<1, 1>>>(buffer, offset);
    cudaError_t launch = cudaGetLastError();
    add_raw(out, launch, "lab_out_of_bounds_kernel<<<1, 1>>>(buffer, 1 << 40)");
    // The launch is queued and returns at once; the fault surfaces at the next sync.
    cudaError_t sync = cudaDeviceSynchronize();
    add_raw(out, sync, "cudaDeviceSynchronize()");
    if (sync == cudaSuccess) {
        cudaFree(buffer);
        return 0;
    }
    // Sticky: every later call fails the same way, however unrelated.
    void *more = NULL;
    cudaError_t after = cudaMalloc(&more, 256);
    add_raw(out, after, "cudaMalloc(&more, 256) [an unrelated call afterwards]");
    diagnose(out, sync, "cudaDeviceSynchronize", __LINE__);
    diagnosis_context(out, "kernel lab_out_of_bounds_kernel on cuda:0 (%s) wrote 4 TiB past "
                      "the end of its 1 KiB buffer", prop.name);
    size_t used = strlen(out->diagnosis.message);
    snprintf(out->diagnosis.message + used, sizeof out->diagnosis.message - used,
             "; the CUDA context is now poisoned: %s afterwards failed with %s too",
             "cudaMalloc", cudaGetErrorName(after));
    status_hint(&out->diagnosis, "the process must exit and restart: no CUDA call can succeed "
                "in it any more. Find the kernel with `compute-sanitizer trainer ...`, or pin "
                "it with CUDA_LAUNCH_BLOCKING=1");
    return 0;
}

extern "C" int cuda_lab_no_kernel_image(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    TRY(open_first_device(&prop, st));
    // SASS runs only on its own major version, so sm_75 code fits no 8.x-12.x device, and
    // the other object (sm_120, or sm_90) no 7.x device.
    int other = prop.major == 7;
    int arch = other ? lab_kernel_arch_other() : lab_kernel_arch_turing();
    cudaError_t err = (cudaError_t)(other ? lab_kernel_launch_other(NULL)
                                          : lab_kernel_launch_turing(NULL));
    add_raw(out, err, "lab_kernel_sm%d<<<1, 32>>> on cuda:0 (sm_%d%d)", arch, prop.major,
            prop.minor);
    if (err == cudaSuccess) {
        cudaDeviceSynchronize();
        return 0;
    }
    cudaGetLastError();
    char call[64];
    snprintf(call, sizeof call, "launch of lab_kernel_sm%d", arch);
    diagnose(out, err, call, __LINE__);
    diagnosis_context(out, "kernel lab_kernel_sm%d has code for sm_%d only (SASS, no PTX), but "
                      "cuda:0 (%s) has compute capability %d.%d", arch, arch, prop.name,
                      prop.major, prop.minor);
    status_hint(&out->diagnosis, "build for the device: -DCMAKE_CUDA_ARCHITECTURES=%d%d (or add "
                "%d%d-real to the list). trainer's own kernels are built for: %s", prop.major,
                prop.minor, prop.major, prop.minor,
                TRAINER_CUDA_ARCHITECTURES[0] ? TRAINER_CUDA_ARCHITECTURES : "(unknown)");
    return 0;
}

// Two NCCL ranks in this process, both on cuda:0, as two processes of a launch on a one-GPU
// machine (or with a wrong device mapping) are: NCCL gathers every rank's PCI bus id while
// it sets up the communicator and refuses a repeated one.
extern "C" int cuda_lab_duplicate_gpu(char *bus_id, size_t size, LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    TRY(open_first_device(&prop, st));
    snprintf(bus_id, size, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    ncclComm_t comms[2] = {NULL, NULL};
    int devices[2] = {0, 0};
    ncclResult_t r = ncclCommInitAll(comms, 2, devices);
    if (r == ncclSuccess) {
        for (int i = 0; i < 2; i++) ncclCommDestroy(comms[i]);
        snprintf(out->raw, sizeof out->raw, "ncclCommInitAll(comms, 2, {0, 0}) -> ncclSuccess");
        return 0;
    }
    const char *last = ncclGetLastError(NULL);
    snprintf(out->raw, sizeof out->raw, "ncclCommInitAll(comms, 2, {0, 0}) -> %s (%d): %s\n"
             "ncclGetLastError(): %s", r == ncclInvalidUsage ? "ncclInvalidUsage" : "ncclResult",
             (int)r, ncclGetErrorString(r), last && last[0] ? last : "(nothing)");
    out->triggered = 1;
    out->api_error = (int)r;
    nccl_fail(&out->diagnosis, r, "ncclCommInitAll", __FILE__, __LINE__);
    return 0;
}
