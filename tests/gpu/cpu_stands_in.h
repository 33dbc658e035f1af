// The CPU standing in for the GPU in a gpu test, so that the test's own code (its cases,
// its copies to and from the "device", its comparisons, its bookkeeping) runs on every
// build, not only on the few sessions that are lent a card. tests/CMakeLists.txt's
// trainer_cpu_stand_in_test compiles a gpu test a second time, as `<name>_cpu_stand_in`
// (label unit), with this header included first.
//
// Both sides of every comparison are then the CPU backend, so a FAIL or a crash there is a
// bug in the test, not in a kernel: a case that reads the wrong buffer, an offset past a
// copy, a leak, a bound mistaken for a count. It says nothing about the CUDA kernels; the
// real test on a card does that.
//
// The CUDA entry points the tests call are macros here: opening "device 0" hands out the
// CPU backend and remembers the precision asked for; the one device listed is a compute
// capability 9.0 card, so that no pass is skipped for its age; describing a convolution's
// algorithms says nothing (there are none to name).
#ifndef TRAINER_TESTS_GPU_CPU_STANDS_IN_H
#define TRAINER_TESTS_GPU_CPU_STANDS_IN_H

#include "base/precision.h"
#include "base/status.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"

#include <stdio.h>

static Precision stand_in_precision = PRECISION_FP32;

static inline int stand_in_backend_open(const CudaBackendOptions *options, const Backend **out,
                                        Status *st) {
    (void)st;
    // As cuda_backend.cu's choose_precision on a 9.0 card.
    stand_in_precision = options->precision;
    if (stand_in_precision == PRECISION_DEFAULT)
        stand_in_precision = options->allow_tf32 ? PRECISION_TF32 : PRECISION_FP32;
    *out = cpu_backend();
    return 0;
}

static inline Precision stand_in_backend_precision(const Backend *b) {
    (void)b;
    return stand_in_precision;
}

static inline int stand_in_list_devices(CudaDeviceInfo *devices, int max, int *count,
                                        Status *st) {
    (void)st;
    *count = 0;
    if (max < 1) return 0;
    devices[0] = (CudaDeviceInfo){.ordinal = 0, .compute_major = 9, .compute_minor = 0,
                                  .multiprocessors = 1, .total_memory = (size_t)1 << 30};
    snprintf(devices[0].name, sizeof devices[0].name, "the CPU standing in for a GPU");
    *count = 1;
    return 0;
}

static inline int stand_in_conv2d_describe(const Backend *b, const Conv2dGeometry *g,
                                           size_t workspace_bytes, char *out, size_t size,
                                           Status *st) {
    (void)b, (void)g, (void)workspace_bytes, (void)out, (void)size, (void)st;
    return -1;
}

#define cuda_backend_open(options, out, st) stand_in_backend_open(options, out, st)
#define cuda_backend_close(b) ((void)(b))
#define cuda_backend_precision(b) stand_in_backend_precision(b)
#define cuda_list_devices(devices, max, count, st) stand_in_list_devices(devices, max, count, st)
#define cuda_conv2d_describe(b, g, bytes, out, size, st) \
    stand_in_conv2d_describe(b, g, bytes, out, size, st)

#endif
