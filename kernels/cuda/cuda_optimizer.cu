// CUDA optimizer ops: SGD (momentum, Nesterov, L2 weight decay) and Adam/AdamW, each one
// fused pass over the parameter. The CPU versions in kernels/cpu/cpu_optimizer.c are the
// reference, and these follow them operation for operation.
//
// An update reads the parameter, its gradient and the optimizer state and writes the
// parameter and state back (Adam: 4 loads and 3 stores per element), so it is bound by
// memory bandwidth; doing it in one kernel reads each array once. Everything that is the
// same for every element (Adam's bias corrections, lr * weight_decay, 1 - beta) is
// computed once on the host, with the same float expressions as the CPU, and passed in.
//
// Numerics: every product and quotient is rounded on its own (__fmul_rn, __fdiv_rn,
// __fsqrt_rn, __fadd_rn), which the compiler never contracts into FMAs. The CPU rounds each
// operation separately too (C11, no -ffp-contract), so given the same inputs the GPU's
// parameters and state are bitwise the CPU's, step after step, not merely close.
#include <math.h>

#include "kernels/cuda/cuda_internal.h"

// PyTorch's SGD: g = grad + wd * param; with momentum, v = momentum * v + g and the step
// is along v (or, Nesterov, g + momentum * v); param -= lr * g. Without momentum the
// velocity buffer is never touched (it may be NULL), as on the CPU.
__global__ static void sgd_update_kernel(float *param, const float *grad, float *velocity,
                                         size_t n, float lr, float momentum,
                                         float weight_decay, int use_momentum, int nesterov) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float p = param[i];
        float g = __fadd_rn(grad[i], __fmul_rn(weight_decay, p));
        if (use_momentum) {
            float v = __fadd_rn(__fmul_rn(momentum, velocity[i]), g);
            velocity[i] = v;
            g = nesterov ? __fadd_rn(g, __fmul_rn(momentum, v)) : v;
        }
        param[i] = __fsub_rn(p, __fmul_rn(lr, g));
    }
}

static int cuda_sgd_update(const Backend *b, float *param, const float *grad, float *velocity,
                           size_t n, const SgdHyper *h, Status *st) {
    if (n == 0) return 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "sgd_update_kernel", grid, CUDA_THREADS, 0, n, 64);
    sgd_update_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        param, grad, velocity, n, h->lr, h->momentum, h->weight_decay, h->momentum != 0.0f,
        h->nesterov != 0);
    CUDA_CHECK_LAUNCH("sgd_update_kernel");
    return 0;
}

// Adam with the bias corrections folded into the step size and epsilon (the Adam paper's
// efficient form, as on the CPU): one sqrt and one divide per element.
//   AdamW (decoupled): param -= lr * wd * param before the moment update;
//   Adam (L2):         g += wd * param.
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g g
//   param -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps),
//   step_size = lr / (1 - beta1^t).
typedef struct AdamFactors {
    float beta1, one_minus_beta1;
    float beta2, one_minus_beta2;
    float eps;
    float weight_decay;     // L2 form: added to the gradient
    float lr_weight_decay;  // decoupled form: lr * weight_decay, the CPU's (lr * wd) * param
    float step_size;        // lr / (1 - beta1^t)
    float sqrt_correction2; // sqrt(1 - beta2^t)
    int decoupled;
} AdamFactors;

__global__ static void adam_update_kernel(float *param, const float *grad, float *m, float *v,
                                          size_t n, AdamFactors f) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float p = param[i];
        float g = grad[i];
        if (f.decoupled) p = __fsub_rn(p, __fmul_rn(f.lr_weight_decay, p));
        else g = __fadd_rn(g, __fmul_rn(f.weight_decay, p));
        float mi = __fadd_rn(__fmul_rn(f.beta1, m[i]), __fmul_rn(f.one_minus_beta1, g));
        float vi = __fadd_rn(__fmul_rn(f.beta2, v[i]), __fmul_rn(__fmul_rn(f.one_minus_beta2, g), g));
        m[i] = mi;
        v[i] = vi;
        float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), f.sqrt_correction2), f.eps);
        param[i] = __fsub_rn(p, __fdiv_rn(__fmul_rn(f.step_size, mi), denom));
    }
}

static int cuda_adam_update(const Backend *b, float *param, const float *grad, float *m,
                            float *v, size_t n, const AdamHyper *h, Status *st) {
    if (n == 0) return 0;
    // The same float expressions, in the same order, as cpu_adam_update: powf and sqrtf
    // here are the host's libm, the very functions the CPU backend calls.
    float correction1 = 1.0f - powf(h->beta1, (float)h->step);
    float correction2 = 1.0f - powf(h->beta2, (float)h->step);
    AdamFactors f;
    f.beta1 = h->beta1;
    f.one_minus_beta1 = 1.0f - h->beta1;
    f.beta2 = h->beta2;
    f.one_minus_beta2 = 1.0f - h->beta2;
    f.eps = h->eps;
    f.weight_decay = h->weight_decay;
    f.lr_weight_decay = h->lr * h->weight_decay;
    f.step_size = h->lr / correction1;
    f.sqrt_correction2 = sqrtf(correction2);
    f.decoupled = h->decoupled_weight_decay != 0;
    CudaContext *ctx = cuda_context(b);
    unsigned grid = cuda_blocks_for(n);
    CUDA_CHECK_CONFIG(ctx, "adam_update_kernel", grid, CUDA_THREADS, 0, n, 64);
    adam_update_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        param, grad, m, v, n, f);
    CUDA_CHECK_LAUNCH("adam_update_kernel");
    return 0;
}

void cuda_register_optimizer_ops(Backend *table) {
    table->sgd_update = cuda_sgd_update;
    table->adam_update = cuda_adam_update;
}
