// One tiny kernel built twice, each time for a single GPU architecture as SASS with no
// PTX (CMakeLists.txt: trainer_lab_turing for sm_75, trainer_lab_other for sm_120, or
// sm_90 with toolkits older than 12.8), so that `trainer lab no-kernel-image` can launch
// one that the device cannot run. Not part of the backend.
#ifndef TRAINER_LAB_KERNEL_H
#define TRAINER_LAB_KERNEL_H

#ifdef __cplusplus
extern "C" {
#endif

// Launch lab_kernel_smXY<<<1, 32>>> on the current device and return what the launch
// returned (a cudaError_t; 0 is success), without synchronising. `out` may be NULL.
int lab_kernel_launch_turing(int *out);  // SASS for sm_75 only
int lab_kernel_launch_other(int *out);   // SASS for lab_kernel_arch_other() only
// The one architecture each object holds code for, e.g. 120 for sm_120.
int lab_kernel_arch_turing(void);
int lab_kernel_arch_other(void);

#ifdef __cplusplus
}
#endif

#endif
