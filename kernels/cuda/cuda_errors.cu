// Every failed CUDA, cuBLAS, cuDNN and NCCL call becomes a Status that names the call,
// the error's name and number, the library's own string and where it happened:
// "cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (2): out of memory [x.cu:40]".
// The StatusCode, the hint and Status.error_name come from the error catalog
// (core/error_catalog.c), so the CLI can explain the error with the same text
// `trainer explain` prints, and an out-of-memory from any library is recoverable.
#include <stdio.h>
#include <string.h>

#include "core/error_catalog.h"
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

int cuda_fail(Status *st, cudaError_t err, const char *call, const char *file, int line) {
    return fail_with_entry(st, ERROR_FAMILY_CUDA_RUNTIME, (int)err, cudaGetErrorName(err),
                           cudaGetErrorString(err), call, file, line);
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
    return fail_with_entry(st, ERROR_FAMILY_NCCL, (int)r, entry ? entry->name : "ncclResult",
                           ncclGetErrorString(r), call, file, line);
}
