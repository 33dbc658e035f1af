// The facts behind `trainer doctor`: versions built in (header macros) beside the versions
// loaded (each library's own query) and where each library was loaded from, because the
// classic breakage is a second copy of a library earlier on the search path; then every
// visible device, and whether this binary carries code for it.
//
// Every query that fails is written into the report as the CUDA API words it, so the
// report is complete on a broken machine and the verdict is left to tools/cmd_doctor.c.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <link.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_doctor.h"

#ifndef TRAINER_CUDA_ARCHITECTURES
#define TRAINER_CUDA_ARCHITECTURES ""  // CMake passes CMAKE_CUDA_ARCHITECTURES
#endif

// A kernel compiled exactly like every other kernel of trainer_cuda, so asking the runtime
// which image of it loads on a device says whether trainer's own kernels can run there.
__global__ static void doctor_probe_kernel(int *x) {
    if (x) x[threadIdx.x] = 0;
}

static void record_error(char *buf, size_t size, cudaError_t err) {
    snprintf(buf, size, "%s (%d): %s", cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
}

// Libraries encode versions as major*10000 + minor*100 + patch since cuDNN 9 and
// NCCL 2.9; older releases used major*1000 + minor*100 + patch.
static DoctorVersion decode_version(long code) {
    DoctorVersion v = {0, 0, 0};
    if (code <= 0) return v;
    if (code >= 10000) {
        v.major = (int)(code / 10000);
        v.minor = (int)(code / 100 % 100);
    } else {
        v.major = (int)(code / 1000);
        v.minor = (int)(code / 100 % 10);
    }
    v.patch = (int)(code % 100);
    return v;
}

// CUDA's own versions are 1000 * major + 10 * minor (13000 = 13.0, 12040 = 12.4).
static DoctorVersion decode_cuda_version(int code) {
    DoctorVersion v = {code / 1000, (code % 1000) / 10, 0};
    return v;
}

// The file the symbol at `address` was loaded from.
static void library_path(const void *address, char *path, size_t size) {
    Dl_info info;
    path[0] = '\0';
    if (dladdr(address, &info) && info.dli_fname) snprintf(path, size, "%s", info.dli_fname);
}

typedef struct FindLibrary {
    const char *prefix;  // "libcuda.so"
    char *path;
    size_t size;
} FindLibrary;

static int find_library_callback(struct dl_phdr_info *info, size_t size, void *data) {
    FindLibrary *find = (FindLibrary *)data;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    if (strncmp(base, find->prefix, strlen(find->prefix)) != 0) return 0;
    snprintf(find->path, find->size, "%s", info->dlpi_name);
    return 1;
}

// The driver library is not linked: the runtime dlopens it, so look among what is loaded.
static void loaded_library(const char *prefix, char *path, size_t size) {
    path[0] = '\0';
    FindLibrary find = {prefix, path, size};
    dl_iterate_phdr(find_library_callback, &find);
}

// Names and keys are set by doctor_collect_environment; here, the versions and paths.
static void collect_libraries(DoctorReport *r) {
    DoctorLibraryInfo *lib = r->libraries;
    lib[DOCTOR_CUDART].built = decode_cuda_version(CUDART_VERSION);
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
        lib[DOCTOR_CUDART].loaded = decode_cuda_version(runtime);
    library_path((const void *)&cudaRuntimeGetVersion, lib[DOCTOR_CUDART].path,
                 sizeof lib[DOCTOR_CUDART].path);

    lib[DOCTOR_CUBLAS].built = {CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH};
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        lib[DOCTOR_CUBLAS].loaded = {major, minor, patch};
    library_path((const void *)&cublasGetProperty, lib[DOCTOR_CUBLAS].path,
                 sizeof lib[DOCTOR_CUBLAS].path);

    lib[DOCTOR_CUDNN].built = {CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL};
    lib[DOCTOR_CUDNN].loaded = decode_version((long)cudnnGetVersion());
    library_path((const void *)&cudnnGetVersion, lib[DOCTOR_CUDNN].path,
                 sizeof lib[DOCTOR_CUDNN].path);

    lib[DOCTOR_NCCL].built = {NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH};
    int nccl = 0;
    if (ncclGetVersion(&nccl) == ncclSuccess) lib[DOCTOR_NCCL].loaded = decode_version(nccl);
    library_path((const void *)&ncclGetVersion, lib[DOCTOR_NCCL].path,
                 sizeof lib[DOCTOR_NCCL].path);
}

static void collect_device(int ordinal, DoctorDevice *d) {
    d->ordinal = ordinal;
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDeviceProperties(&prop, ordinal);
    if (err != cudaSuccess) {
        record_error(d->error, sizeof d->error, err);
        return;
    }
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    d->compute_major = prop.major;
    d->compute_minor = prop.minor;
    d->multiprocessors = prop.multiProcessorCount;
    d->total_memory = prop.totalGlobalMem;
    if (cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, ordinal) != cudaSuccess)
        d->pci_bus_id[0] = '\0';
    // Attributes that fail leave 0, which the report prints as unknown.
    cudaDeviceGetAttribute(&d->clock_khz, cudaDevAttrClockRate, ordinal);
    cudaDeviceGetAttribute(&d->memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal);
    cudaDeviceGetAttribute(&d->memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal);
    // Free memory and the kernel image need a context on the device: this is the first
    // point where a device that enumerates but cannot be used (busy, exclusive-process
    // mode held by another process, fallen off the bus) says so.
    err = cudaSetDevice(ordinal);
    size_t free_bytes = 0, total = 0;
    if (err == cudaSuccess) err = cudaMemGetInfo(&free_bytes, &total);
    if (err != cudaSuccess) {
        record_error(d->error, sizeof d->error, err);
        return;
    }
    d->free_memory = free_bytes;
    cudaFuncAttributes attributes;
    err = cudaFuncGetAttributes(&attributes, doctor_probe_kernel);
    if (err != cudaSuccess) {
        char what[200];
        record_error(what, sizeof what, err);
        snprintf(d->error, sizeof d->error, "cudaFuncGetAttributes(doctor_probe_kernel) -> %s",
                 what);
        cudaGetLastError();  // not sticky: clear it so later queries start clean
        return;
    }
    d->binary_version = attributes.binaryVersion;
    d->ptx_version = attributes.ptxVersion;
}

extern "C" int cuda_doctor_collect(DoctorReport *r, Status *st) {
    doctor_collect_environment(r);
    r->built_with_cuda = 1;
    snprintf(r->architectures, sizeof r->architectures, "%s", TRAINER_CUDA_ARCHITECTURES);
    collect_libraries(r);

    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
        r->driver_cuda = decode_cuda_version(driver);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    // The runtime has tried to load the driver by now: see where it came from.
    loaded_library("libcuda.so", r->driver_library, sizeof r->driver_library);
    if (err != cudaSuccess) {
        record_error(r->device_count_error, sizeof r->device_count_error, err);
        r->device_count_error_code = (int)err;
        cudaGetLastError();
        return 0;
    }
    r->device_count = count;
    r->devices_listed = count < CUDA_DOCTOR_MAX_DEVICES ? count : CUDA_DOCTOR_MAX_DEVICES;
    for (int i = 0; i < r->devices_listed; i++) collect_device(i, &r->devices[i]);
    return 0;
}
