// CUDA device discovery, callable from plain C. Implemented in cuda_device.cu when the
// toolkit is present (reached through cuda_loader.c, see cuda_entries.h), and answered by
// the loader otherwise, so callers need no #ifdefs.
#ifndef TRAINER_CUDA_DEVICE_H
#define TRAINER_CUDA_DEVICE_H

#include <stddef.h>

#include "base/status.h"
#include "kernels/device_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

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
