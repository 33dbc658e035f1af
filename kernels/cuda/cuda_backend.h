// The CUDA backend: the op table of kernels/backend.h on one GPU. Callable from C;
// implemented in cuda_backend.cu, or in cuda_absent.c when built without CUDA.
#ifndef TRAINER_CUDA_BACKEND_H
#define TRAINER_CUDA_BACKEND_H

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudaBackendOptions {
    int ordinal;       // device index as the process sees it (after CUDA_VISIBLE_DEVICES)
    int allow_tf32;    // fp32 GEMMs and convolutions may use TF32 tensor cores (compute >= 8.0)
} CudaBackendOptions;

// Selects the device, creates its stream and cuBLAS/cuDNN handles. Failures are
// STATUS_NO_DEVICE with the failing call, the CUDA error and a hint.
int cuda_backend_open(const CudaBackendOptions *options, const Backend **out, Status *st);
void cuda_backend_close(const Backend *b);

#ifdef __cplusplus
}
#endif

#endif
