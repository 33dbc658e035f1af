// Facts about the NVIDIA driver that need no CUDA library, so that `trainer doctor` gives
// them in builds with and without CUDA alike.
#define _POSIX_C_SOURCE 200809L  // strtok_r
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/cuda_doctor.h"

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." (or "Open
// Kernel Module for x86_64"): the first word made of digits and dots is the version.
void nvidia_kernel_module_version(char *out, size_t size) {
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
