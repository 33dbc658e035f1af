// `trainer lab`: CUDA failures triggered on purpose, each returning the error exactly as
// the CUDA API gave it ("cudaSetDevice(1) -> cudaErrorInvalidDevice (101): invalid device
// ordinal") beside the Status trainer makes of it. Nothing here prints; tools/cmd_lab.c
// shows the two side by side.
//
// Implemented in cuda_lab.cu, or answered by the loader (every scenario says why there is
// no CUDA) when the toolkit is absent or trainer_cuda.so did not load (cuda_entries.h).
#ifndef TRAINER_CUDA_LAB_H
#define TRAINER_CUDA_LAB_H

#include <stddef.h>

#include "base/status.h"
#include "kernels/device_facts.h"
#include "kernels/launch_check.h"

#ifdef __cplusplus
extern "C" {
#endif

// Each scenario returns 0 when it ran (whether or not the failure came: see
// out->triggered), or a nonzero status saying why it cannot run on this machine: no
// driver, no device, a build without CUDA (STATUS_NO_DEVICE).

// 1 when a usable GPU is visible; else 0 and `why` says what is missing. Initialises
// CUDA in this process: call it only where no fork() follows.
int cuda_lab_gpu_available(char *why, size_t size);

// cudaSetDevice(N) with N the number of visible devices: one past the last. Runs even
// without a driver, where the runtime answers with the driver's absence instead.
int cuda_lab_invalid_device(int *ordinal, LabOutcome *out, Status *st);
// cudaMalloc of twice the device's memory.
int cuda_lab_oom(LabOutcome *out, Status *st);
// Launches lab_empty_kernel with config's grid, block and shared bytes (config->kernel is
// for messages only) on device 0; `limits` receives that device's launch limits, so the
// caller can run launch_check on the same configuration.
int cuda_lab_bad_launch(const LaunchConfig *config, LaunchLimits *limits, LabOutcome *out,
                        Status *st);
// A kernel that writes far outside its allocation, then the synchronisation that reports
// it, then one more call to show the context stays broken. Leaves this process's CUDA
// context unusable: run it in a child process that exits afterwards.
int cuda_lab_illegal_address(LabOutcome *out, Status *st);
// A kernel compiled for one architecture only (SASS, no PTX) that is not the device's:
// sm_120 on a compute 7.x device, sm_75 on any other.
int cuda_lab_no_kernel_image(LabOutcome *out, Status *st);
// Two NCCL ranks of this process on cuda:0 (ncclCommInitAll with {0, 0}), which NCCL
// refuses with ncclInvalidUsage ("Duplicate GPU detected"); api_error is the ncclResult_t.
// `bus_id` receives cuda:0's PCI bus id.
int cuda_lab_duplicate_gpu(char *bus_id, size_t size, LabOutcome *out, Status *st);

#ifdef __cplusplus
}
#endif

#endif
