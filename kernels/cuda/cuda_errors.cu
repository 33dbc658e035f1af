// Every failed CUDA, cuBLAS, cuDNN and NCCL call becomes a Status that names the call,
// the error's name and number, the library's own string and where it happened:
// "cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (2): out of memory [x.cu:40]".
// The StatusCode, the hint and Status.error_name come from the error catalog
// (core/error_catalog.c), so the CLI can explain the error with the same text
// `trainer explain` prints, and an out-of-memory from any library is recoverable.
#include <stdio.h>
#include <string.h>

#include "base/error_catalog.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_nccl_check.h"

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

// A code the catalog lacks (a newer library than the catalog): asynchronous errors are
// the usual reason an unexpected code shows up at an unrelated call.
static const char *const UNCATALOGUED_HINT =
    "run with CUDA_LAUNCH_BLOCKING=1 (or --sync-check) to pin an asynchronous error to the "
    "call that caused it; `trainer explain NAME` may know it";

// Records the failure with the catalog's StatusCode and hint for (family, number).
static int fail_with_entry(Status *st, ErrorFamily family, int number, const char *name,
                           const char *string, const char *call, const char *file, int line) {
    const ErrorEntry *entry = error_catalog_lookup_code(family, number);
    status_fail(st, entry ? entry->status : STATUS_RUNTIME_ERROR,
                "%s failed: %s (%d): %s [%s:%d]", call, name, number, string, base_name(file),
                line);
    if (entry) {
        status_hint(st, "%s", entry->fix);
        snprintf(st->error_name, sizeof st->error_name, "%s", entry->name);
    } else {
        status_hint(st, "%s", UNCATALOGUED_HINT);
    }
    return st->code;
}

// ---- the runtime calls, replaceable by a test ----

static int runtime_set_device(int ordinal) { return (int)cudaSetDevice(ordinal); }
static int runtime_malloc(void **ptr, size_t bytes) { return (int)cudaMalloc(ptr, bytes); }
static int runtime_get_last_error(void) { return (int)cudaGetLastError(); }
static const CudaRuntimeCalls runtime_calls = {runtime_set_device, runtime_malloc,
                                               runtime_get_last_error};
static CudaRuntimeCalls current_calls = runtime_calls;

extern "C" void cuda_runtime_calls_replace(const CudaRuntimeCalls *calls) {
    current_calls = calls ? *calls : runtime_calls;
}

const CudaRuntimeCalls *cuda_runtime_calls(void) { return &current_calls; }

int cuda_fail(Status *st, cudaError_t err, const char *call, const char *file, int line) {
    // Errors that poison the context (an illegal address, ...) stay whatever we do; the
    // others would otherwise wait in the runtime for the next launch check (PyTorch's
    // caching allocator clears an out-of-memory the same way).
    current_calls.get_last_error();
    return fail_with_entry(st, ERROR_FAMILY_CUDA_RUNTIME, (int)err, cudaGetErrorName(err),
                           cudaGetErrorString(err), call, file, line);
}

extern "C" int cuda_check_launch(const char *kernel, const char *file, int line, Status *st) {
    cudaError_t err = (cudaError_t)current_calls.get_last_error();
    if (err == cudaSuccess) return 0;
    char call[160];
    snprintf(call, sizeof call, "launch of %s", kernel);
    int code = cuda_fail(st, err, call, file, line);
    // At a launch, CUDA 13's "invalid argument" means what "invalid configuration
    // argument" meant before: explain it as that.
    const ErrorEntry *entry = error_catalog_lookup_code(ERROR_FAMILY_CUDA_RUNTIME,
                                                        (int)cudaErrorInvalidConfiguration);
    if (err != cudaErrorInvalidConfiguration && launch_error_is_bad_configuration((int)err) &&
        entry) {
        status_hint(st, "%s", entry->fix);
        snprintf(st->error_name, sizeof st->error_name, "%s", entry->name);
    }
    return code;
}

int cublas_fail(Status *st, cublasStatus_t status, const char *call, const char *file, int line) {
    return fail_with_entry(st, ERROR_FAMILY_CUBLAS, (int)status, cublasGetStatusName(status),
                           cublasGetStatusString(status), call, file, line);
}

// cudnnGetErrorString only repeats the status's name; the last error string says which
// parameter or engine refused, which is what a person needs.
int cudnn_fail(Status *st, cudnnStatus_t status, const char *call, const char *file, int line) {
    char detail[512] = "";
    cudnnGetLastErrorString(detail, sizeof detail);
    if (!detail[0])
        snprintf(detail, sizeof detail,
                 "no detail from cuDNN (CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr prints "
                 "its reasons)");
    return fail_with_entry(st, ERROR_FAMILY_CUDNN, (int)status, cudnnGetErrorString(status),
                           detail, call, file, line);
}

int nccl_fail(Status *st, ncclResult_t r, const char *call, const char *file, int line) {
    const ErrorEntry *entry = error_catalog_lookup_code(ERROR_FAMILY_NCCL, (int)r);
    // NCCL's last error says which check failed ("Duplicate GPU detected : rank 1 and rank 0
    // both on CUDA device 1a000"), where its result's string only names the kind.
    const char *last = ncclGetLastError(NULL);
    char words[512];
    snprintf(words, sizeof words, "%s%s%s", ncclGetErrorString(r), last && last[0] ? ": " : "",
             last ? last : "");
    return fail_with_entry(st, ERROR_FAMILY_NCCL, (int)r, entry ? entry->name : "ncclResult",
                           words, call, file, line);
}
