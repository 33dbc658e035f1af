// The CUDA backend's entry points that code outside kernels/cuda calls, listed once.
//
// Why a list: the trainer does not link the CUDA libraries. Linked, they cost every start
// 0.3 s (51,000 page faults, most in cuBLASLt's static constructors), which every command
// paid, `trainer check` and `trainer train --device cpu` too, and a machine missing one
// CUDA library could not start the binary at all. The backend is built as a module,
// trainer_cuda.so (cuda_module.cu hands out this table), that cuda_loader.c opens the
// first time one of these is called; when it cannot, each gives its absent answer, saying
// why it did not load.
//
// CUDA_ENTRY(return type, name, (parameters), (arguments), absent) for functions returning a
// value; CUDA_ENTRY_VOID(name, (parameters), (arguments), absent) for the others. `absent`
// is what the entry answers when no module can be used (a build without CUDA, or
// trainer_cuda.so did not load): an expression of the parameters, usually
// cuda_unavailable(st), which fails with the loader's reason. A new entry point that code
// above kernels/ calls goes here alone: the module's table, the loader's forwarding
// functions and their absent answers are all made from this list.
#ifndef TRAINER_CUDA_ENTRIES_H
#define TRAINER_CUDA_ENTRIES_H

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_bench.h"
#include "kernels/cuda/cuda_collective.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_doctor.h"
#include "kernels/cuda/cuda_fault.h"
#include "kernels/cuda/cuda_lab.h"

#define CUDA_ENTRIES                                                                          \
    CUDA_ENTRY(int, cuda_list_devices,                                                        \
               (CudaDeviceInfo *devices, int max, int *count, Status *st),                    \
               (devices, max, count, st), (*count = 0, cuda_unavailable(st)))                 \
    CUDA_ENTRY_VOID(cuda_versions, (CudaVersions *out), (out), absent_versions(out))          \
    CUDA_ENTRY(int, cuda_backend_open,                                                        \
               (const CudaBackendOptions *options, const Backend **out, Status *st),          \
               (options, out, st), (*out = NULL, cuda_unavailable(st)))                       \
    CUDA_ENTRY_VOID(cuda_backend_close, (const Backend *b), (b), (void)b)                     \
    CUDA_ENTRY(Precision, cuda_backend_precision, (const Backend *b), (b), PRECISION_FP32)    \
    CUDA_ENTRY(int, cuda_conv2d_describe,                                                     \
               (const Backend *b, const Conv2dGeometry *g, size_t workspace_bytes, char *out, \
                size_t size, Status *st),                                                     \
               (b, g, workspace_bytes, out, size, st),                                        \
               (size ? out[0] = '\0' : 0, cuda_unavailable(st)))                              \
    CUDA_ENTRY(int, cuda_doctor_collect, (DoctorReport *r, Status *st), (r, st),              \
               absent_doctor_report(r))                                                       \
    CUDA_ENTRY(int, cuda_bench_device, (const Backend *b, CudaBenchDevice *out, Status *st),  \
               (b, out, st), (memset(out, 0, sizeof *out), cuda_unavailable(st)))             \
    CUDA_ENTRY(int, cuda_bench_gemm_open,                                                     \
               (const Backend *b, CudaBenchGemm **out, Status *st), (b, out, st),             \
               (*out = NULL, cuda_unavailable(st)))                                           \
    CUDA_ENTRY_VOID(cuda_bench_gemm_close, (CudaBenchGemm *g), (g), (void)g)                  \
    CUDA_ENTRY(int, cuda_bench_fill,                                                          \
               (const Backend *b, BenchPrecision p, void *x, size_t n, uint64_t seed,         \
                Status *st),                                                                  \
               (b, p, x, n, seed, st), cuda_unavailable(st))                                  \
    CUDA_ENTRY(int, cuda_bench_gemm,                                                          \
               (CudaBenchGemm *g, BenchPrecision p, int m, int n, int k, const void *a,       \
                const void *bm, void *c, Status *st),                                         \
               (g, p, m, n, k, a, bm, c, st), cuda_unavailable(st))                           \
    CUDA_ENTRY(int, cuda_collective_open,                                                     \
               (const Backend *const *backends, int count, CudaCollective **out, Status *st), \
               (backends, count, out, st), (*out = NULL, cuda_unavailable(st)))               \
    CUDA_ENTRY(int, cuda_collective_all_reduce_sum,                                           \
               (CudaCollective *c, float *const *buffers, size_t n, Status *st),              \
               (c, buffers, n, st), cuda_unavailable(st))                                     \
    CUDA_ENTRY(int, cuda_collective_broadcast,                                                \
               (CudaCollective *c, float *const *buffers, size_t n, int root, Status *st),    \
               (c, buffers, n, root, st), cuda_unavailable(st))                               \
    CUDA_ENTRY_VOID(cuda_collective_close, (CudaCollective *c), (c), (void)c)                 \
    CUDA_ENTRY(int, cuda_collective_unique_id,                                                \
               (unsigned char id[CUDA_NCCL_ID_BYTES], Status *st), (id, st),                  \
               cuda_unavailable(st))                                                          \
    CUDA_ENTRY(int, cuda_collective_open_rank,                                                \
               (const Backend *b, const unsigned char id[CUDA_NCCL_ID_BYTES], int rank, int size,\
                CudaCollective **out, Status *st),                                            \
               (b, id, rank, size, out, st), (*out = NULL, cuda_unavailable(st)))             \
    CUDA_ENTRY(int, cuda_collective_sum_doubles_over_ranks,                                   \
               (CudaCollective *c, double *values, size_t n, Status *st), (c, values, n, st), \
               cuda_unavailable(st))                                                          \
    CUDA_ENTRY(int, cuda_stream_sums_open,                                                    \
               (CudaCollective *c, const Backend *b, CudaStreamSums **out, Status *st),       \
               (c, b, out, st), (*out = NULL, cuda_unavailable(st)))                          \
    CUDA_ENTRY(int, cuda_stream_sums_start,                                                   \
               (CudaStreamSums *s, float *values, size_t n, Status *st), (s, values, n, st),  \
               cuda_unavailable(st))                                                          \
    CUDA_ENTRY(int, cuda_stream_sums_finish, (CudaStreamSums *s, Status *st), (s, st),        \
               cuda_unavailable(st))                                                          \
    CUDA_ENTRY(int, cuda_stream_sums_waited, (CudaStreamSums *s, double *ms, Status *st),     \
               (s, ms, st), (*ms = 0.0, cuda_unavailable(st)))                                \
    CUDA_ENTRY_VOID(cuda_stream_sums_close, (CudaStreamSums *s), (s), (void)s)                \
    CUDA_ENTRY(int, cuda_lab_gpu_available, (char *why, size_t size), (why, size),            \
               (snprintf(why, size, "%s", cuda_backend_unavailable(NULL)), 0))                \
    CUDA_ENTRY(int, cuda_lab_invalid_device, (int *ordinal, LabOutcome *out, Status *st),     \
               (ordinal, out, st), (*ordinal = 7, lab_unavailable(out, st)))                  \
    CUDA_ENTRY(int, cuda_lab_oom, (LabOutcome *out, Status *st), (out, st),                   \
               lab_unavailable(out, st))                                                      \
    CUDA_ENTRY(int, cuda_lab_bad_launch,                                                      \
               (const LaunchConfig *config, LaunchLimits *limits, LabOutcome *out,            \
                Status *st),                                                                  \
               (config, limits, out, st), lab_unavailable(out, st))                           \
    CUDA_ENTRY(int, cuda_lab_illegal_address, (LabOutcome *out, Status *st), (out, st),       \
               lab_unavailable(out, st))                                                      \
    CUDA_ENTRY(int, cuda_lab_no_kernel_image, (LabOutcome *out, Status *st), (out, st),       \
               lab_unavailable(out, st))                                                      \
    CUDA_ENTRY(int, cuda_lab_duplicate_gpu,                                                   \
               (char *bus_id, size_t size, LabOutcome *out, Status *st),                      \
               (bus_id, size, out, st),                                                       \
               (size ? bus_id[0] = '\0' : 0, lab_unavailable(out, st)))                       \
    CUDA_ENTRY(int, cuda_plant_out_of_bounds_write, (const Backend *b, Status *st), (b, st),  \
               cuda_unavailable(st))

#ifdef __cplusplus
extern "C" {
#endif

// The module's table: one pointer per entry, behind what identifies the build it came
// from, so that a trainer_cuda.so of another build is refused rather than called with
// structures of another layout.
typedef struct CudaModule {
    size_t layout;        // cuda_module_layout() where the module was built
    const char *version;  // TRAINER_VERSION
#define CUDA_ENTRY(type, name, parameters, arguments, absent) type(*name) parameters;
#define CUDA_ENTRY_VOID(name, parameters, arguments, absent) void(*name) parameters;
    CUDA_ENTRIES
#undef CUDA_ENTRY
#undef CUDA_ENTRY_VOID
} CudaModule;

// The sizes of what crosses between the two, mixed: differs when a structure changed
// between the builds, where the version string may not have.
static inline size_t cuda_module_layout(void) {
    size_t sizes[] = {sizeof(CudaModule), sizeof(CudaBackendOptions), sizeof(Backend),
                      sizeof(Conv2dGeometry), sizeof(CudaVersions), sizeof(CudaDeviceInfo),
                      sizeof(DoctorReport), sizeof(CudaBenchDevice), sizeof(LabOutcome),
                      sizeof(LaunchConfig), sizeof(LaunchLimits), sizeof(Status)};
    size_t layout = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) layout = layout * 131 + sizes[i];
    return layout;
}

// The one symbol trainer_cuda.so exports.
#define CUDA_MODULE_SYMBOL "trainer_cuda_module"
typedef const CudaModule *(*CudaModuleFunction)(void);

#ifdef __cplusplus
}
#endif

#endif
