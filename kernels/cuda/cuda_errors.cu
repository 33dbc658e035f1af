// Every failed CUDA, cuBLAS and cuDNN call becomes a Status that names the call, the
// error's name and number, where it happened, and what usually causes it, so a user sees
// "cudaMalloc: cudaErrorMemoryAllocation (2)" with a way out instead of a bare abort.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_internal.h"

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static StatusCode code_for(cudaError_t err) {
    switch (err) {
    case cudaErrorMemoryAllocation: return STATUS_OUT_OF_MEMORY;
    case cudaErrorInvalidDevice:
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorDevicesUnavailable: return STATUS_NO_DEVICE;
    default: return STATUS_RUNTIME_ERROR;
    }
}

static const char *hint_for(cudaError_t err) {
    switch (err) {
    case cudaErrorMemoryAllocation:
        return "the GPU is full: lower --batch, set --memory-limit, or free the GPU of other "
               "processes (nvidia-smi lists them)";
    case cudaErrorInvalidDevice:
        return "the device ordinal is not visible to this process; CUDA_VISIBLE_DEVICES "
               "renumbers devices from 0";
    case cudaErrorNoDevice: return "no GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES";
    case cudaErrorInsufficientDriver:
        return "the NVIDIA driver is older than this CUDA runtime: update the driver, or "
               "build with an older toolkit";
    case cudaErrorNoKernelImageForDevice:
        return "this binary has no code for this GPU's architecture: rebuild with "
               "-DCMAKE_CUDA_ARCHITECTURES set to the GPU's compute capability (e.g. 86)";
    case cudaErrorInvalidConfiguration:
        return "a kernel was launched with more threads or blocks than the GPU allows; this "
               "is a bug in trainer: please report it with the model file";
    case cudaErrorAssert:
        return "a device-side assert fired (often a label outside [0, classes)); run with "
               "CUDA_LAUNCH_BLOCKING=1 to pin it to the kernel";
    case cudaErrorIllegalAddress:
        return "a kernel read or wrote outside its memory; run under compute-sanitizer to "
               "find it, and report it";
    default: return "run with CUDA_LAUNCH_BLOCKING=1 to pin asynchronous errors to the kernel "
                    "that caused them";
    }
}

int cuda_fail(Status *st, cudaError_t err, const char *call, const char *file, int line) {
    status_fail(st, code_for(err), "%s failed: %s (%d): %s [%s:%d]", call, cudaGetErrorName(err),
                (int)err, cudaGetErrorString(err), base_name(file), line);
    status_hint(st, "%s", hint_for(err));
    return st->code;
}

int cublas_fail(Status *st, cublasStatus_t status, const char *call, const char *file, int line) {
    status_fail(st, status == CUBLAS_STATUS_ALLOC_FAILED ? STATUS_OUT_OF_MEMORY
                                                         : STATUS_RUNTIME_ERROR,
                "%s failed: %s (%d): %s [%s:%d]", call, cublasGetStatusName(status), (int)status,
                cublasGetStatusString(status), base_name(file), line);
    status_hint(st, "%s", status == CUBLAS_STATUS_ALLOC_FAILED
                              ? "the GPU is full: lower --batch or set --memory-limit"
                              : "run with CUDA_LAUNCH_BLOCKING=1; an earlier asynchronous error "
                                "is often reported by the next cuBLAS call");
    return st->code;
}

int cudnn_fail(Status *st, cudnnStatus_t status, const char *call, const char *file, int line) {
    status_fail(st, status == CUDNN_STATUS_ALLOC_FAILED ? STATUS_OUT_OF_MEMORY
                                                        : STATUS_RUNTIME_ERROR,
                "%s failed: %s (%d) [%s:%d]", call, cudnnGetErrorString(status), (int)status,
                base_name(file), line);
    status_hint(st, "%s", status == CUDNN_STATUS_ALLOC_FAILED
                              ? "the GPU is full: lower --batch or set --memory-limit"
                              : "check that cuDNN's version matches the one trainer was built "
                                "with (`trainer --version`)");
    return st->code;
}
