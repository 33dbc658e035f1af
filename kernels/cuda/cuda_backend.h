// The CUDA backend: the op table of kernels/backend.h on one GPU. Callable from C;
// implemented in cuda_backend.cu (reached through trainer_cuda.so, cuda_entries.h), or
// answered by the loader when built without CUDA or when the module did not load.
#ifndef TRAINER_CUDA_BACKEND_H
#define TRAINER_CUDA_BACKEND_H

#include "base/lever.h"
#include "base/precision.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CudaBackendOptions {
    int ordinal;       // device index as the process sees it (after CUDA_VISIBLE_DEVICES)
    // What GEMMs and convolutions compute in (base/precision.h); what activations are
    // stored in is the graph's (graph_set_storage), told to each op by its dtypes.
    // PRECISION_DEFAULT takes it from allow_tf32, the older spelling kept for its callers:
    // tf32 with it, fp32 without. TF32 on a GPU older than 8.0 computes in fp32.
    Precision precision;
    int allow_tf32;
    // Levers to turn off (base/lever.h): each op then runs the implementation the lever
    // replaced, for measuring the lever alone. 0: every lever on.
    unsigned disabled_levers;
    // 1: ask for NHWC images between convolutions (Backend.nhwc_activations, --layout
    // nhwc); 0: NCHW throughout, the default.
    int nhwc;
} CudaBackendOptions;

// Selects the device, creates its stream and cuBLAS/cuDNN handles. Failures are
// STATUS_NO_DEVICE with the failing call, the CUDA error and a hint; also a precision the
// GPU lacks (bf16 below compute capability 8.0, fp16 below 7.0).
int cuda_backend_open(const CudaBackendOptions *options, const Backend **out, Status *st);
void cuda_backend_close(const Backend *b);
// What an open CUDA backend's GEMMs and convolutions compute in (never PRECISION_DEFAULT).
Precision cuda_backend_precision(const Backend *b);

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
