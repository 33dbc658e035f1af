// CUDA elementwise ops: not written yet. The table entries stay NULL, and device_open reports
// which ops are missing instead of running a model that needs them.
#include "kernels/cuda/cuda_internal.h"

void cuda_register_elementwise_ops(Backend *table) { (void)table; }
