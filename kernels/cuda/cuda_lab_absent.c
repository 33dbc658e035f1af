// Built without CUDA: no lab scenario can reach a GPU, and each says so.
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/cuda_lab.h"

static int built_without_cuda(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    status_fail(st, STATUS_NO_DEVICE, "this trainer was built without CUDA support");
    status_hint(st, "install the CUDA toolkit, cuDNN and NCCL and rebuild "
                    "(cmake -DTRAINER_CUDA=ON) on a machine with a GPU");
    return STATUS_NO_DEVICE;
}

int cuda_lab_gpu_available(char *why, size_t size) {
    snprintf(why, size, "this trainer was built without CUDA support");
    return 0;
}

int cuda_lab_invalid_device(int *ordinal, LabOutcome *out, Status *st) {
    *ordinal = 7;
    return built_without_cuda(out, st);
}

int cuda_lab_oom(LabOutcome *out, Status *st) { return built_without_cuda(out, st); }

int cuda_lab_bad_launch(const LaunchConfig *config, LaunchLimits *limits, LabOutcome *out,
                        Status *st) {
    return built_without_cuda(out, st);
}

int cuda_lab_illegal_address(LabOutcome *out, Status *st) { return built_without_cuda(out, st); }

int cuda_lab_no_kernel_image(LabOutcome *out, Status *st) { return built_without_cuda(out, st); }
