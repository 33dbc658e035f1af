#include "kernels/cuda/cuda_fault.h"
#include "kernels/cuda/cuda_internal.h"

// Address 16 lies in the page CUDA never maps, so the write faults on every GPU.
__global__ static void out_of_bounds_write_kernel(float *unmapped) { unmapped[threadIdx.x] = 1.0f; }

extern "C" int cuda_plant_out_of_bounds_write(const Backend *b, Status *st) {
    CudaContext *ctx = cuda_context(b);
    CUDA_CHECK_CONFIG(ctx, "out_of_bounds_write_kernel", 1, 1, 0, 1, 32);
    out_of_bounds_write_kernel<<<1, 1, 0, ctx->stream>>>((float *)16);
    CUDA_CHECK_LAUNCH("out_of_bounds_write_kernel");
    return 0;
}
