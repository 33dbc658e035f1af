// Built without CUDA: the doctor's report says so, and still records what the machine
// has (an NVIDIA kernel module, the environment), so a CPU-only binary on a GPU machine
// can tell its user to rebuild rather than to install a driver.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_doctor.h"

static const char *const library_names[DOCTOR_LIBRARY_COUNT][2] = {
    {"CUDA runtime", "cudart"}, {"cuBLAS", "cublas"}, {"cuDNN", "cudnn"}, {"NCCL", "nccl"}};


int cuda_doctor_collect(DoctorReport *r, Status *st) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        r->libraries[i].name = library_names[i][0];
        r->libraries[i].key = library_names[i][1];
    }
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    r->cuda_visible_devices_set = visible != NULL;
    if (visible) snprintf(r->cuda_visible_devices, sizeof r->cuda_visible_devices, "%s", visible);
    const char *ld_path = getenv("LD_LIBRARY_PATH");
    r->ld_library_path_set = ld_path != NULL;
    if (ld_path) snprintf(r->ld_library_path, sizeof r->ld_library_path, "%s", ld_path);
    nvidia_kernel_module_version(r->kernel_module, sizeof r->kernel_module);
    snprintf(r->device_count_error, sizeof r->device_count_error,
             "this trainer was built without CUDA support");
    return 0;
}
