// No CUDA backend (cuda_absent.h): no lab scenario can reach a GPU, and each says so.
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/cuda_absent.h"
#include "kernels/cuda/cuda_lab.h"

static int unavailable(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    return cuda_unavailable(st);
}

int CUDA_ABSENT(cuda_lab_gpu_available)(char *why, size_t size) {
    snprintf(why, size, "%s", cuda_backend_unavailable(NULL));
    return 0;
}

int CUDA_ABSENT(cuda_lab_invalid_device)(int *ordinal, LabOutcome *out, Status *st) {
    *ordinal = 7;
    return unavailable(out, st);
}

int CUDA_ABSENT(cuda_lab_oom)(LabOutcome *out, Status *st) { return unavailable(out, st); }

int CUDA_ABSENT(cuda_lab_bad_launch)(const LaunchConfig *config, LaunchLimits *limits,
                                     LabOutcome *out, Status *st) {
    return unavailable(out, st);
}

int CUDA_ABSENT(cuda_lab_illegal_address)(LabOutcome *out, Status *st) {
    return unavailable(out, st);
}

int CUDA_ABSENT(cuda_lab_no_kernel_image)(LabOutcome *out, Status *st) {
    return unavailable(out, st);
}

int CUDA_ABSENT(cuda_lab_duplicate_gpu)(char *bus_id, size_t size, LabOutcome *out, Status *st) {
    if (size) bus_id[0] = 0;
    return unavailable(out, st);
}
