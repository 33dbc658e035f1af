#include <math.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_parallel.h"

// PyTorch's SGD: weight decay is added to the gradient, the velocity buffer starts at the
// first gradient (v = momentum*v + g, with v zero-initialized this is the same), and
// Nesterov steps along g + momentum*v.
static int cpu_sgd_update(const Backend *b, const SgdUpdateTensors *t, const SgdHyper *h,
                          Status *st) {
    for (size_t i = 0; i < t->n; i++) {
        float g = t->grad[i] + h->weight_decay * t->param[i];
        if (h->momentum != 0.0f) {
            t->velocity[i] = h->momentum * t->velocity[i] + g;
            g = h->nesterov ? g + h->momentum * t->velocity[i] : t->velocity[i];
        }
        t->param[i] -= h->lr * g;
    }
    return 0;
}

typedef struct AdamJob {
    float *param, *m, *v;
    const float *grad;
    const AdamHyper *h;
    float step_size, sqrt_correction2;
} AdamJob;

static void adam_range(void *context, size_t begin, size_t end) {
    const AdamJob *j = context;
    const AdamHyper *h = j->h;
    float *param = j->param, *m = j->m, *v = j->v;
    for (size_t i = begin; i < end; i++) {
        float g = j->grad[i];
        if (h->decoupled_weight_decay) param[i] -= h->lr * h->weight_decay * param[i];
        else g += h->weight_decay * param[i];
        m[i] = h->beta1 * m[i] + (1.0f - h->beta1) * g;
        v[i] = h->beta2 * v[i] + (1.0f - h->beta2) * g * g;
        float denom = sqrtf(v[i]) / j->sqrt_correction2 + h->eps;
        param[i] -= j->step_size * m[i] / denom;
    }
}

static int cpu_adam_update(const Backend *b, const AdamUpdateTensors *t, const AdamHyper *h,
                           Status *st) {
    // Bias corrections folded into the step size and epsilon, as in the Adam paper's
    // efficient form, so the loop does one sqrt and one divide per element.
    float correction1 = 1.0f - powf(h->beta1, (float)h->step);
    float correction2 = 1.0f - powf(h->beta2, (float)h->step);
    AdamJob job = {.param = t->param,
                   .m = t->m,
                   .v = t->v,
                   .grad = t->grad,
                   .h = h,
                   .step_size = h->lr / correction1,
                   .sqrt_correction2 = sqrtf(correction2)};
    cpu_parallel_for(t->n, 8, adam_range, &job);
    return 0;
}

// The multi-tensor ops are the per-tensor ones in a loop: on the CPU there is no launch to
// save, and calling the very same functions makes every value bit for bit the per-tensor
// op's, which is what the CUDA versions are held to.
static int cpu_sgd_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                                const SgdHyper *h, Status *st) {
    for (int i = 0; i < count; i++) {
        const OptimizerTensor *t = &tensors[i];
        TRY(cpu_sgd_update(
            b,
            &(SgdUpdateTensors){
                .param = t->param, .grad = t->grad, .velocity = t->state[0], .n = t->n},
            h, st));
    }
    return 0;
}

static int cpu_adam_update_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                                 const AdamHyper *h, Status *st) {
    for (int i = 0; i < count; i++) {
        const OptimizerTensor *t = &tensors[i];
        TRY(cpu_adam_update(
            b,
            &(AdamUpdateTensors){
                .param = t->param, .grad = t->grad, .m = t->state[0], .v = t->state[1], .n = t->n},
            h, st));
    }
    return 0;
}

void cpu_register_optimizer_ops(Backend *table) {
    table->sgd_update = cpu_sgd_update;
    table->adam_update = cpu_adam_update;
    table->sgd_update_multi = cpu_sgd_update_multi;
    table->adam_update_multi = cpu_adam_update_multi;
}
