// Compiled once per object library in CMakeLists.txt, with LAB_KERNEL_ARCH (e.g. 75) and
// LAB_KERNEL_ROLE (turing or other) defined and CUDA_ARCHITECTURES LAB_KERNEL_ARCH-real:
// the object holds SASS for that one architecture and no PTX, so no driver can JIT it for
// another GPU. That is the situation behind "no kernel image is available for execution
// on the device".
#include <cuda_runtime.h>

#include "kernels/cuda/lab/lab_kernel.h"

#if !defined(LAB_KERNEL_ARCH) || !defined(LAB_KERNEL_ROLE)
#error "LAB_KERNEL_ARCH and LAB_KERNEL_ROLE must say which object this is"
#endif

#define LAB_CAT2(a, b) a##b
#define LAB_CAT(a, b) LAB_CAT2(a, b)
#define LAB_KERNEL LAB_CAT(lab_kernel_sm, LAB_KERNEL_ARCH)

__global__ static void LAB_KERNEL(int *out) {
    if (out) out[threadIdx.x] = (int)threadIdx.x;
}

extern "C" int LAB_CAT(lab_kernel_launch_, LAB_KERNEL_ROLE)(int *out) {
    LAB_KERNEL<<<1, 32>>>(out);
    return (int)cudaGetLastError();
}

extern "C" int LAB_CAT(lab_kernel_arch_, LAB_KERNEL_ROLE)(void) { return LAB_KERNEL_ARCH; }
