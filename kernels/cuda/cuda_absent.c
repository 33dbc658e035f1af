// Built when CMake found no CUDA toolkit (or TRAINER_CUDA=OFF): the same entry points,
// answering that this binary cannot use a GPU.
#include <string.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"

int cuda_list_devices(CudaDeviceInfo *devices, int max, int *count, Status *st) {
    *count = 0;
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA support");
    status_hint(st, "install the CUDA toolkit and rebuild (cmake -DTRAINER_CUDA=ON)");
    return STATUS_NO_DEVICE;
}

void cuda_versions(CudaVersions *out) { memset(out, 0, sizeof *out); }

int cuda_backend_open(const CudaBackendOptions *options, const Backend **out, Status *st) {
    *out = NULL;
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA support");
    status_hint(st, "install the CUDA toolkit, cuDNN and NCCL and rebuild "
                    "(cmake -DTRAINER_CUDA=ON), or use --device cpu");
    return STATUS_NO_DEVICE;
}

void cuda_backend_close(const Backend *b) {}

Precision cuda_backend_precision(const Backend *b) { return PRECISION_FP32; }

int cuda_conv2d_describe(const Backend *b, const Conv2dGeometry *g, size_t workspace_bytes,
                         char *out, size_t size, Status *st) {
    if (size) out[0] = '\0';
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA support");
    return STATUS_NO_DEVICE;
}
