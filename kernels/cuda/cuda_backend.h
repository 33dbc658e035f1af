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

// Which cuDNN algorithm (or direct kernel) each convolution op runs for geometry `g` when
// given `workspace_bytes`, with its math type and workspace, as one line for logs and
// test failures: "forward IMPLICIT_PRECOMP_GEMM (FMA, 0 bytes), backward-data ...".
int cuda_conv2d_describe(const Backend *b, const Conv2dGeometry *g, size_t workspace_bytes,
                         char *out, size_t size, Status *st);

// The runtime calls behind a raw allocation and the launch checks, as cudaError_t
// numbers. A failed cudaMalloc also leaves its error as the runtime's "last error", which
// the next launch check would blame on a kernel that ran fine; the backend clears it where
// it reports the failure. tests/unit/test_cuda_alloc_error.c swaps in fakes to fail an
// allocation as a full card does, which a machine without a GPU cannot (there every call
// fails with "no driver", an error that never clears). NULL restores the runtime's own.
typedef struct CudaRuntimeCalls {
    int (*set_device)(int ordinal);
    int (*malloc)(void **ptr, size_t bytes);
    int (*get_last_error)(void);  // returns and clears the last error (cudaGetLastError)
} CudaRuntimeCalls;
void cuda_runtime_calls_replace(const CudaRuntimeCalls *calls);
// What the backend's raw_alloc does, on device `ordinal`.
int cuda_device_alloc(int ordinal, size_t bytes, void **ptr, Status *st);
// What follows every kernel launch: the runtime's last error, reported as the launch of
// `kernel` failing.
int cuda_check_launch(const char *kernel, const char *file, int line, Status *st);

#ifdef __cplusplus
}
#endif

#endif
