// Device discovery through the CUDA runtime. Linking cuBLAS, cuDNN and NCCL here (their
// version queries) keeps the whole CUDA link exercised on every build, GPU or not.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_device.h"

extern "C" int cuda_list_devices(CudaDeviceInfo *devices, int max, int *count, Status *st) {
    *count = 0;
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) {
        status_fail(st, STATUS_NO_DEVICE,
                    "no NVIDIA driver is loaded: cudaDriverGetVersion reports version 0");
        status_hint(st, "on a machine with an NVIDIA GPU install the driver; check with "
                        "nvidia-smi. Use --device cpu to train on the CPU");
        // What the runtime itself answers without a driver (see docs/cuda-errors.md).
        snprintf(st->error_name, sizeof st->error_name, "cudaErrorInsufficientDriver");
        return STATUS_NO_DEVICE;
    }
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        status_fail(st, STATUS_NO_DEVICE, "cudaGetDeviceCount failed: %s (%d): %s",
                    cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        if (visible)
            status_hint(st, "CUDA_VISIBLE_DEVICES=\"%s\" may hide every GPU; unset it or list "
                            "valid ordinals", visible);
        else
            status_hint(st, "check that nvidia-smi lists a GPU and that the driver (%d.%d) "
                            "supports this CUDA runtime", driver / 1000, (driver % 1000) / 10);
        snprintf(st->error_name, sizeof st->error_name, "%s", cudaGetErrorName(err));
        return STATUS_NO_DEVICE;
    }
    for (int i = 0; i < n && i < max; i++) {
        cudaDeviceProp prop;
        err = cudaGetDeviceProperties(&prop, i);
        if (err != cudaSuccess) {
            status_fail(st, STATUS_NO_DEVICE, "cudaGetDeviceProperties(%d) failed: %s (%d)", i,
                        cudaGetErrorName(err), (int)err);
            return STATUS_NO_DEVICE;
        }
        CudaDeviceInfo *d = &devices[i];
        d->ordinal = i;
        snprintf(d->name, sizeof d->name, "%s", prop.name);
        d->compute_major = prop.major;
        d->compute_minor = prop.minor;
        d->multiprocessors = prop.multiProcessorCount;
        d->total_memory = prop.totalGlobalMem;
        snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "%04x:%02x:%02x.0", prop.pciDomainID,
                 prop.pciBusID, prop.pciDeviceID);
    }
    *count = n < max ? n : max;
    return 0;
}

extern "C" void cuda_versions(CudaVersions *out) {
    memset(out, 0, sizeof *out);
    out->built_with_cuda = 1;
    cudaRuntimeGetVersion(&out->runtime_version);
    cudaDriverGetVersion(&out->driver_version);
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        out->cublas_version = major * 10000L + minor * 100L + patch;
    out->cudnn_version = (long)cudnnGetVersion();
    int nccl = 0;
    if (ncclGetVersion(&nccl) == ncclSuccess) out->nccl_version = nccl;
}
