// What `trainer doctor` and `trainer lab version-report` need to know about the CUDA stack:
// the driver, the libraries this binary was built against and those actually loaded (with
// their paths), the architectures compiled in, and every visible device. Only facts, no
// verdicts: tools/cmd_doctor.c decides what is wrong and what to do about it.
//
// Implemented in cuda_doctor.cu, or in cuda_doctor_absent.c when built without CUDA or when
// trainer_cuda.so did not load (then backend_error says which, and nothing but the kernel
// module and environment is filled).
#ifndef TRAINER_CUDA_DOCTOR_H
#define TRAINER_CUDA_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CUDA_DOCTOR_MAX_DEVICES = 16 };

typedef struct DoctorVersion {
    int major, minor, patch;  // all 0: unknown / not available
} DoctorVersion;

typedef enum DoctorLibrary {
    DOCTOR_CUDART,
    DOCTOR_CUBLAS,
    DOCTOR_CUDNN,
    DOCTOR_NCCL,
    DOCTOR_LIBRARY_COUNT
} DoctorLibrary;

typedef struct DoctorLibraryInfo {
    const char *name;      // "CUDA runtime", "cuBLAS", "cuDNN", "NCCL"
    const char *key;       // "cudart", "cublas", "cudnn", "nccl" (JSON keys)
    DoctorVersion built;   // from the headers this binary was compiled with
    DoctorVersion loaded;  // what the loaded library reports at run time
    char path[512];        // the shared object it was loaded from ("" when unknown)
} DoctorLibraryInfo;

typedef struct DoctorDevice {
    int ordinal;
    char name[256];
    char pci_bus_id[32];           // "0000:65:00.0"
    int compute_major, compute_minor;
    int multiprocessors;
    size_t total_memory, free_memory;   // bytes; free from cudaMemGetInfo
    int clock_khz;                 // SM clock (cudaDevAttrClockRate)
    int memory_clock_khz;          // cudaDevAttrMemoryClockRate
    int memory_bus_bits;           // cudaDevAttrGlobalMemoryBusWidth
    // cudaFuncGetAttributes on one of trainer's kernels on this device: the architecture
    // of the binary the runtime picked (e.g. 90: SASS for sm_90, or PTX JIT-compiled for
    // it) and the virtual architecture of the PTX it came from; 0 when no image loads.
    int binary_version, ptx_version;
    char error[256];               // "" or the CUDA error met while querying this device
} DoctorDevice;

typedef struct DoctorReport {
    int built_with_cuda;
    // Why no CUDA backend can be used at all, and what to do, cuda_backend_unavailable()'s
    // words ("" when it loaded): in a CUDA build, why trainer_cuda.so did not load.
    char backend_error[1024];
    char backend_hint[512];
    // cudaDriverGetVersion: the newest CUDA version the installed driver supports, e.g.
    // {13, 0}; all 0 when no driver is loaded.
    DoctorVersion driver_cuda;
    char kernel_module[64];        // "580.65.06" from /proc/driver/nvidia/version, or ""
    char driver_library[512];      // path of the loaded libcuda.so, or ""
    DoctorLibraryInfo libraries[DOCTOR_LIBRARY_COUNT];
    char architectures[256];       // CMAKE_CUDA_ARCHITECTURES, e.g. "75-real 80-real 120"
    char cuda_visible_devices[512];
    int cuda_visible_devices_set;  // the variable exists (it may be empty)
    char ld_library_path[2048];
    int ld_library_path_set;
    int device_count;              // devices visible to this process
    // Why there are no devices: the error of cudaGetDeviceCount as the API gives it,
    // "cudaErrorNoDevice (100): no CUDA-capable device is detected"; "" when it succeeded.
    char device_count_error[256];
    int device_count_error_code;   // the cudaError_t number, 0 when none
    DoctorDevice devices[CUDA_DOCTOR_MAX_DEVICES];
    int devices_listed;            // min(device_count, CUDA_DOCTOR_MAX_DEVICES)
} DoctorReport;

// Collects every fact it can; a query that fails is recorded in the report (the error
// text), not returned, so the report is complete on a broken machine. Returns nonzero
// only when the report itself cannot be produced (never today).
int cuda_doctor_collect(DoctorReport *r, Status *st);

// "9.19.0", or "13.0" when `with_patch` is 0; "unknown" when the version is all 0.
static inline const char *doctor_version_format(const DoctorVersion *v, int with_patch,
                                                char *buf, size_t size) {
    if (!v->major && !v->minor && !v->patch) snprintf(buf, size, "unknown");
    else if (with_patch) snprintf(buf, size, "%d.%d.%d", v->major, v->minor, v->patch);
    else snprintf(buf, size, "%d.%d", v->major, v->minor);
    return buf;
}

// What both builds report alike, needing no CUDA library (kernels/nvidia_driver.c): clears
// *r, names the libraries, and records CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH and the
// NVIDIA kernel module's version from /proc/driver/nvidia/version ("" without a driver).
void doctor_collect_environment(DoctorReport *r);

#ifdef __cplusplus
}
#endif

#endif
