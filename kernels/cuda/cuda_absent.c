// Built when CMake found no CUDA toolkit (or TRAINER_CUDA=OFF): the same entry points,
// answering that this binary cannot use a GPU. In a CUDA build, cuda_loader.c's answers
// when trainer_cuda.so did not load (cuda_absent.h).
#include <string.h>

#include "kernels/cuda/cuda_absent.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"

#ifndef TRAINER_CUDA_LOADER
const char *cuda_backend_unavailable(const char **hint) {
    if (hint)
        *hint = "install the CUDA toolkit, cuDNN and NCCL and rebuild (cmake -DTRAINER_CUDA=ON), "
                "or use --device cpu";
    return "this trainer was built without CUDA support";
}

const char *cuda_backend_module_path(void) { return NULL; }
#endif

int CUDA_ABSENT(cuda_list_devices)(CudaDeviceInfo *devices, int max, int *count, Status *st) {
    *count = 0;
    return cuda_unavailable(st);
}

void CUDA_ABSENT(cuda_versions)(CudaVersions *out) {
    memset(out, 0, sizeof *out);
    out->built_with_cuda = CUDA_ABSENT_BUILT_IN;
}

int CUDA_ABSENT(cuda_backend_open)(const CudaBackendOptions *options, const Backend **out,
                                   Status *st) {
    *out = NULL;
    return cuda_unavailable(st);
}

void CUDA_ABSENT(cuda_backend_close)(const Backend *b) {}

Precision CUDA_ABSENT(cuda_backend_precision)(const Backend *b) { return PRECISION_FP32; }

int CUDA_ABSENT(cuda_conv2d_describe)(const Backend *b, const Conv2dGeometry *g,
                                      size_t workspace_bytes, char *out, size_t size,
                                      Status *st) {
    if (size) out[0] = '\0';
    return cuda_unavailable(st);
}
