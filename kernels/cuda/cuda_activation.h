// The activations' forward formulas, one copy for every .cu file that applies one:
// activation_forward's per-kind kernels (cuda_elementwise.cu, the kind a template
// parameter) and the passes that apply a fused activation after a convolution
// (cuda_conv2d.cu, the kind a launch argument). The CPU's are the reference
// (kernels/cpu/cpu_elementwise.c); expf/tanhf/erff are within 2 ulp of glibc's.
#ifndef TRAINER_CUDA_ACTIVATION_H
#define TRAINER_CUDA_ACTIVATION_H

#include "kernels/backend.h"

template <ActivationKind K>
__device__ static inline float activation(float x, float slope) {
    switch (K) {
    case ACTIVATION_RELU: return x > 0.0f ? x : 0.0f;
    case ACTIVATION_LEAKY_RELU: return x > 0.0f ? x : slope * x;
    case ACTIVATION_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case ACTIVATION_TANH: return tanhf(x);
    // The exact (erf) form, PyTorch's default, as on the CPU.
    case ACTIVATION_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678f));
    default: return 0.0f;
    }
}

// act applied to v (v itself when act.apply is 0), the kind chosen at run time: a launch
// argument, the same for every thread, so the switch never diverges.
__device__ static inline float fused_activation(const FusedActivation &act, float v) {
    if (!act.apply) return v;
    switch (act.kind) {
    case ACTIVATION_RELU: return activation<ACTIVATION_RELU>(v, act.slope);
    case ACTIVATION_LEAKY_RELU: return activation<ACTIVATION_LEAKY_RELU>(v, act.slope);
    case ACTIVATION_SIGMOID: return activation<ACTIVATION_SIGMOID>(v, act.slope);
    case ACTIVATION_TANH: return activation<ACTIVATION_TANH>(v, act.slope);
    case ACTIVATION_GELU: return activation<ACTIVATION_GELU>(v, act.slope);
    default: return v;
    }
}

#endif
