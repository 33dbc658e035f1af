// The factors of an optimizer launch, computed on the host once per step: for a plain
// launch's arguments (cuda_optimizer.cu) and for the block a captured step's replay reads
// (cuda_graph.cu). A file of their own, which both call and which calls neither.
#include <math.h>

#include "kernels/cuda/cuda_graph.h"

SgdFactors cuda_sgd_factors(const SgdHyper *h) {
    SgdFactors f;
    f.lr = h->lr;
    f.momentum = h->momentum;
    f.weight_decay = h->weight_decay;
    f.use_momentum = h->momentum != 0.0f;
    f.nesterov = h->nesterov != 0;
    return f;
}

// The same float expressions, in the same order, as cpu_adam_update: powf and sqrtf here
// are the host's libm, the very functions the CPU backend calls.
AdamFactors cuda_adam_factors(const AdamHyper *h) {
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
    return f;
}
