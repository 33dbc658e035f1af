// CUDA conv ops: not written yet. The table entries stay NULL, and device_open reports
// which ops are missing instead of running a model that needs them.
#include "kernels/cuda/cuda_internal.h"

void cuda_register_conv_ops(Backend *table) { (void)table; }
void cuda_conv_cache_free(CudaContext *ctx) { (void)ctx; }
