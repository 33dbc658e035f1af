// Plain-C facts about the CUDA side that the floors above kernels/ hold and print: the
// devices and versions (`trainer devices`, `--version`), doctor's report, lab's raw
// outcome, bench's device and precisions. Types only, and what needs no CUDA library: so
// that core/ and diagnostics/ headers, and everything in tools/, know these without
// reaching a kernels/cuda/ header. The CUDA module fills them (kernels/cuda/*.h declare
// how).
#ifndef TRAINER_DEVICE_FACTS_H
#define TRAINER_DEVICE_FACTS_H

#include <stddef.h>
#include <stdio.h>

#include "base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- devices and versions (kernels/cuda/cuda_device.h) ----

typedef struct CudaDeviceInfo {
    int ordinal;
    char name[256];
    int compute_major, compute_minor;
    int multiprocessors;
    size_t total_memory;
    // "0000:1a:00.0": the same card whatever ordinal CUDA_VISIBLE_DEVICES gives it, so ranks
    // of one host can tell that they share one (NCCL refuses two ranks on one device).
    char pci_bus_id[32];
} CudaDeviceInfo;

typedef struct CudaVersions {
    int built_with_cuda;     // 0: this binary has no CUDA backend
    int runtime_version;     // e.g. 13000 for 13.0; 0 when unknown
    int driver_version;      // 0 when no driver is loaded
    long cublas_version;
    long cudnn_version;
    int nccl_version;
} CudaVersions;

// ---- doctor (kernels/cuda/cuda_doctor.h) ----

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

// ---- lab (kernels/cuda/cuda_lab.h) ----

typedef struct LabOutcome {
    int triggered;      // 1: the API really returned the error below
    int api_error;      // that error's number (a cudaError_t), 0 when none
    char raw[768];      // the failing call and the API's words, one call per line
    Status diagnosis;   // trainer's diagnosis of the same failure
} LabOutcome;

// ---- bench (kernels/cuda/cuda_bench.h) ----

// The GEMM precisions, by their input type; every one accumulates in fp32.
typedef enum BenchPrecision {
    BENCH_FP32,  // fp32 inputs and math, tensor cores off
    BENCH_TF32,  // fp32 inputs rounded to TF32 on tensor cores (compute capability 8.0+)
    BENCH_BF16,  // bf16 inputs and output, fp32 accumulation (8.0+)
    BENCH_FP16,  // fp16 inputs and output, fp32 accumulation
    BENCH_PRECISION_COUNT
} BenchPrecision;

typedef struct CudaBenchDevice {
    char name[256];                 // "NVIDIA H100 80GB HBM3"
    int compute_major, compute_minor;
    int multiprocessors;
    int clock_khz;                  // the SM clock's maximum (cudaDevAttrClockRate)
    int memory_clock_khz;           // cudaDevAttrMemoryClockRate; 0 when unknown
    int memory_bus_bits;            // cudaDevAttrGlobalMemoryBusWidth; 0 when unknown
    size_t l2_bytes;                // cudaDevAttrL2CacheSize
} CudaBenchDevice;

// A cuBLAS handle of bench's own (cuda_bench_gemm_open).
typedef struct CudaBenchGemm CudaBenchGemm;

#ifdef __cplusplus
}
#endif

#endif
