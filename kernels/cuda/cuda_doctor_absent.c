// Built without CUDA: the doctor's report says so, and still records what the machine
// has (an NVIDIA kernel module, the environment), so a CPU-only binary on a GPU machine
// can tell its user to rebuild rather than to install a driver.
#include <stdio.h>

#include "kernels/cuda/cuda_doctor.h"

int cuda_doctor_collect(DoctorReport *r, Status *st) {
    doctor_collect_environment(r);
    snprintf(r->device_count_error, sizeof r->device_count_error,
             "this trainer was built without CUDA support");
    return 0;
}
