// Launch-configuration checks, done on the host before a kernel is launched, so that
// "invalid configuration argument" never reaches the GPU from our own kernels: a bad
// grid, block, shared-memory size or an element count past 32-bit indexing becomes a
// Status naming the kernel, the dimensions and the device's limits.
//
// Plain C with no CUDA types, so the checks are unit-tested on machines without a GPU;
// kernels/cuda fills LaunchLimits from cudaGetDeviceProperties.
#ifndef TRAINER_LAUNCH_CHECK_H
#define TRAINER_LAUNCH_CHECK_H

#include <stddef.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LaunchLimits {
    int max_threads_per_block;       // 1024 on every GPU CUDA 13 supports
    int max_block_dim[3];            // 1024, 1024, 64
    int max_grid_dim[3];             // 2^31-1, 65535, 65535
    size_t max_shared_per_block;     // bytes without opt-in (48 KiB)
    char device[32];                 // "cuda:0", for messages
} LaunchLimits;

typedef struct LaunchConfig {
    const char *kernel;              // "softmax_cross_entropy_forward_kernel"
    unsigned grid[3], block[3];      // 0 is invalid, like CUDA
    size_t shared_bytes;             // dynamic + static shared memory per block
    size_t elements;                 // the largest element count the kernel indexes
    int index_bits;                  // 32: the kernel indexes with int; 64: size_t
} LaunchConfig;

// 0 when the launch is valid for `limits`; else STATUS_RUNTIME_ERROR with the kernel, the
// offending dimension and the limit in the message (error_name "cudaErrorInvalidConfiguration"
// for grid/block/shared violations) and a hint.
int launch_check(const LaunchLimits *limits, const LaunchConfig *config, Status *st);

// The limits of a compute 7.5-12.x GPU, for tests and for `trainer lab` without a GPU.
void launch_limits_typical(LaunchLimits *limits);

#ifdef __cplusplus
}
#endif

#endif
