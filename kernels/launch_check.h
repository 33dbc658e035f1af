// Launch-configuration checks, done on the host before a kernel is launched, so that
// "invalid configuration argument" never reaches the GPU from our own kernels: a bad
// grid, block, shared-memory size or an element count past 32-bit indexing becomes a
// Status naming the kernel, the dimensions and the device's limits.
//
// Plain C with no CUDA types, so the checks are unit-tested on machines without a GPU;
// kernels/cuda fills LaunchLimits from cudaGetDeviceProperties.
//
// launch_check is defined here, inline, rather than in launch_check.c: the CUDA backend
// calls it before every launch, and libtrainer_cuda follows libtrainer_core on the link
// line, so a definition inside libtrainer_core would be left out of any program that does
// not call it from elsewhere. Inline, the valid case is a dozen compares at the call site;
// only status_fail/status_hint (base/status.c, which every program links) are called, and
// only when the launch does not fit. (Should CMakeLists.txt ever link trainer_cuda to
// trainer_core, the body could move to launch_check.c.)
#ifndef TRAINER_LAUNCH_CHECK_H
#define TRAINER_LAUNCH_CHECK_H

#include <stddef.h>
#include <stdio.h>

#include "base/status.h"

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

// The limits of a compute 7.5-12.x GPU, for tests and for `trainer lab` without a GPU.
void launch_limits_typical(LaunchLimits *limits);

// Whether a launch's error number (a cudaError_t) says the configuration can never run.
// CUDA 12 and earlier answer cudaErrorInvalidConfiguration (9, "invalid configuration
// argument", PyTorch's words too); CUDA 13 answers a block past the device's limits with
// cudaErrorInvalidValue (1, "invalid argument"), seen on an H100 with a 2048-thread block.
#define LAUNCH_ERROR_INVALID_VALUE 1
#define LAUNCH_ERROR_INVALID_CONFIGURATION 9
static inline int launch_error_is_bad_configuration(int cuda_error) {
    return cuda_error == LAUNCH_ERROR_INVALID_CONFIGURATION ||
           cuda_error == LAUNCH_ERROR_INVALID_VALUE;
}

// ---- implementation details of launch_check, not for callers ----------------------

// The error_name of grid, block and shared-memory violations: what CUDA would have
// reported had the launch gone ahead.
#define LAUNCH_CHECK_ERROR_NAME "cudaErrorInvalidConfiguration"

// Records the failure: the kernel, the device, what is wrong (the offending value and
// the limit) and the whole configuration, so the message alone says what to fix.
static inline int launch_check_fail(const LaunchLimits *limits, const LaunchConfig *config,
                                    const char *what, Status *st) {
    return status_fail(st, STATUS_RUNTIME_ERROR,
                       "launch of %s on %s: %s (grid (%u,%u,%u), block (%u,%u,%u), %zu bytes "
                       "of shared memory)",
                       config->kernel ? config->kernel : "(unnamed kernel)", limits->device,
                       what, config->grid[0], config->grid[1], config->grid[2],
                       config->block[0], config->block[1], config->block[2],
                       config->shared_bytes);
}

// A grid, block or shared-memory violation. trainer computes these from the layer's
// shapes, so one that does not fit is a bug in trainer, and the hint says so.
static inline int launch_check_fail_config(const LaunchLimits *limits,
                                           const LaunchConfig *config, const char *what,
                                           Status *st) {
    launch_check_fail(limits, config, what, st);
    snprintf(st->error_name, sizeof st->error_name, "%s", LAUNCH_CHECK_ERROR_NAME);
    status_hint(st, "trainer computes this launch configuration from the layer's shapes, so "
                    "this is a bug in trainer, not in your model: please report it with the "
                    "model file and the command line");
    return STATUS_RUNTIME_ERROR;
}

// One dimension: at least 1 (CUDA rejects 0) and at most the device's limit.
static inline int launch_check_dim(const LaunchLimits *limits, const LaunchConfig *config,
                                   const char *kind, int axis, unsigned value, int limit,
                                   Status *st) {
    char what[128];
    if (value == 0) {
        snprintf(what, sizeof what, "%s.%c is 0, below the minimum of 1", kind, "xyz"[axis]);
        return launch_check_fail_config(limits, config, what, st);
    }
    if ((long long)value > (long long)limit) {
        snprintf(what, sizeof what, "%s.%c is %u, above the device's limit of %d", kind,
                 "xyz"[axis], value, limit);
        return launch_check_fail_config(limits, config, what, st);
    }
    return 0;
}

// ---- the check --------------------------------------------------------------------

// 0 when the launch is valid for `limits`, and *st is left alone; else
// STATUS_RUNTIME_ERROR with the kernel, the device, the offending value, the limit and
// the whole configuration in the message, and a hint. error_name is
// "cudaErrorInvalidConfiguration" for grid/block/shared violations, and empty for an
// element count past the kernel's index type (CUDA would not have noticed that one: the
// index would wrap and the kernel touch the wrong memory).
static inline int launch_check(const LaunchLimits *limits, const LaunchConfig *config,
                               Status *st) {
    for (int axis = 0; axis < 3; axis++)
        TRY(launch_check_dim(limits, config, "grid", axis, config->grid[axis],
                             limits->max_grid_dim[axis], st));
    for (int axis = 0; axis < 3; axis++)
        TRY(launch_check_dim(limits, config, "block", axis, config->block[axis],
                             limits->max_block_dim[axis], st));
    // x * y < 2^64 always; and when it is within the limit (< 2^31), so is the product
    // with z (< 2^63): no overflow either way.
    unsigned long long max_threads =
        limits->max_threads_per_block > 0 ? (unsigned long long)limits->max_threads_per_block : 0;
    unsigned long long xy = (unsigned long long)config->block[0] * config->block[1];
    if (xy > max_threads || xy * config->block[2] > max_threads) {
        char what[128];
        snprintf(what, sizeof what, "the block has %llu threads, above the device's limit of "
                 "%llu per block", xy * config->block[2], max_threads);
        return launch_check_fail_config(limits, config, what, st);
    }
    if (config->shared_bytes > limits->max_shared_per_block) {
        char what[128];
        snprintf(what, sizeof what, "%zu bytes of shared memory per block, above the "
                 "device's limit of %zu", config->shared_bytes, limits->max_shared_per_block);
        return launch_check_fail_config(limits, config, what, st);
    }
    // A kernel that indexes with a signed b-bit int reaches 2^(b-1) - 1 elements.
    if (config->index_bits > 0 && config->index_bits < 64) {
        unsigned long long reach = (1ull << (config->index_bits - 1)) - 1;
        if ((unsigned long long)config->elements > reach) {
            char what[128];
            snprintf(what, sizeof what, "%zu elements, above the %llu that the kernel's "
                     "%d-bit index reaches", config->elements, reach, config->index_bits);
            launch_check_fail(limits, config, what, st);
            status_hint(st, "the tensor has %zu elements, more than a %d-bit index reaches; "
                            "lower --batch. The kernel should index with 64 bits: please "
                            "report it to trainer with the model file",
                        config->elements, config->index_bits);
            return STATUS_RUNTIME_ERROR;
        }
    }
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
