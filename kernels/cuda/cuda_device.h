// CUDA device discovery, callable from plain C. Implemented in cuda_device.cu when the
// toolkit is present (reached through cuda_loader.c, see cuda_entries.h) and in
// cuda_absent.c otherwise, so callers need no #ifdefs.
#ifndef TRAINER_CUDA_DEVICE_H
#define TRAINER_CUDA_DEVICE_H

#include <stddef.h>

#include "base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudaDeviceInfo {
    int ordinal;
    char name[256];
    int compute_major, compute_minor;
    int multiprocessors;
    size_t total_memory;
    // "0000:1a:00.0": the same card whatever ordinal CUDA_VISIBLE_DEVICES gives it, so ranks
    // of one host can tell that they share one (NCCL refuses two ranks on one device).
    char pci_bus_id[32];
} CudaDeviceInfo;

typedef struct CudaVersions {
    int built_with_cuda;     // 0: this binary has no CUDA backend
    int runtime_version;     // e.g. 13000 for 13.0; 0 when unknown
    int driver_version;      // 0 when no driver is loaded
    long cublas_version;
    long cudnn_version;
    int nccl_version;
} CudaVersions;

// Fills up to `max` devices and sets *count. With no driver, no device, or a build
// without CUDA: STATUS_NO_DEVICE with the reason (the CUDA error name and number where
// there is one) and a hint.
int cuda_list_devices(CudaDeviceInfo *devices, int max, int *count, Status *st);
void cuda_versions(CudaVersions *out);

// Why this program cannot use the CUDA backend at all, or NULL when it can (a device may
// still be missing): "this trainer was built without CUDA support", or why trainer_cuda.so
// did not load (cuda_loader.c). *hint, when asked for, gets what to do about it.
const char *cuda_backend_unavailable(const char **hint);
// The trainer_cuda.so this program opened (or tried last, when it did not load), for
// `trainer --version`; NULL in a build without CUDA or when no module file was found.
const char *cuda_backend_module_path(void);

#ifdef __cplusplus
}
#endif

#endif
