// The part of `trainer doctor`'s report that needs no CUDA library (the environment, the
// NVIDIA kernel module), so builds with and without CUDA give it alike.
#define _POSIX_C_SOURCE 200809L  // strtok_r
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device_facts.h"

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." (or "Open
// Kernel Module for x86_64"): the first word made of digits and dots is the version.
static void nvidia_kernel_module_version(char *out, size_t size) {
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512], *save = NULL;
    if (fgets(line, sizeof line, f)) {
        for (char *word = strtok_r(line, " \t\n", &save); word; word = strtok_r(NULL, " \t\n", &save)) {
            if (strspn(word, "0123456789.") == strlen(word) && strchr(word, '.')) {
                snprintf(out, size, "%s", word);
                break;
            }
        }
    }
    fclose(f);
}

void doctor_collect_environment(DoctorReport *r) {
    static const char *const names[DOCTOR_LIBRARY_COUNT][2] = {
        {"CUDA runtime", "cudart"}, {"cuBLAS", "cublas"}, {"cuDNN", "cudnn"}, {"NCCL", "nccl"}};
    memset(r, 0, sizeof *r);
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        r->libraries[i].name = names[i][0];
        r->libraries[i].key = names[i][1];
    }
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    r->cuda_visible_devices_set = visible != NULL;
    if (visible) snprintf(r->cuda_visible_devices, sizeof r->cuda_visible_devices, "%s", visible);
    const char *ld_path = getenv("LD_LIBRARY_PATH");
    r->ld_library_path_set = ld_path != NULL;
    if (ld_path) snprintf(r->ld_library_path, sizeof r->ld_library_path, "%s", ld_path);
    nvidia_kernel_module_version(r->kernel_module, sizeof r->kernel_module);
}
