// No CUDA backend (cuda_absent.h): the doctor's report says why, and still records what
// the machine has (an NVIDIA kernel module, the environment), so a CPU-only binary on a GPU
// machine can tell its user to rebuild rather than to install a driver, and a CUDA build
// whose trainer_cuda.so did not load can name the library that is missing.
#include <stdio.h>

#include "kernels/cuda/cuda_absent.h"
#include "kernels/cuda/cuda_doctor.h"

int CUDA_ABSENT(cuda_doctor_collect)(DoctorReport *r, Status *st) {
    doctor_collect_environment(r);
    r->built_with_cuda = CUDA_ABSENT_BUILT_IN;
    const char *hint = "";
    const char *why = cuda_backend_unavailable(&hint);
    snprintf(r->backend_error, sizeof r->backend_error, "%s", why);
    snprintf(r->backend_hint, sizeof r->backend_hint, "%s", hint);
    snprintf(r->device_count_error, sizeof r->device_count_error, "%s", why);
    return 0;
}
