// The CUDA backend against the CPU reference, the optimizers, single and multi-tensor
// (kernels/backend.h); parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPTIMIZER_STEPS = 5 };

static void sgd_case(size_t n, SgdHyper h) {
    Status st;
    status_clear(&st);
    int momentum = h.momentum != 0.0f;
    float *p = uniform(n, -1.0f, 1.0f);
    // Mid-training velocity; no buffer at all without momentum (core/optimizer.c keeps
    // no state then, so the op gets NULL).
    float *v = momentum ? uniform(n, -0.1f, 0.1f) : NULL;
    float *d_p = dev_floats(p, n), *d_v = momentum ? dev_floats(v, n) : NULL;
    for (int step = 1; step <= OPTIMIZER_STEPS && !device_broken; step++) {
        snprintf(shape, sizeof shape, "n=%zu lr=%g momentum=%g weight_decay=%g nesterov=%d step %d", n,
                 h.lr, h.momentum, h.weight_decay, h.nesterov, step);
        float *g = gradients(n);
        float *d_g = dev_floats(g, n);
        if (GPU_CALL(sgd_update, &(SgdUpdateTensors){.param = d_p, .grad = d_g, .velocity = d_v,
                     .n = n}, &h)) return;
        float *p_before = copy_of(p, n);
        CPU_CALL(sgd_update, &(SgdUpdateTensors){.param = p, .grad = g, .velocity = v, .n = n}, &h);
        // The step is lr times g + weight_decay * p and the velocity.
        float *p_mag = floats(n), *v_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            float vel = momentum ? fabsf(v[i]) : 0.0f;
            float grad = fabsf(g[i]) + h.weight_decay * fabsf(p_before[i]);
            p_mag[i] = fabsf(p_before[i]) + 2.0f * h.lr * (grad + vel);
            v_mag[i] = vel + grad;
        }
        compare("sgd_update", "param", fetch(d_p, n), p, p_mag, n);
        if (momentum) compare("sgd_update", "velocity", fetch(d_v, n), v, v_mag, n);
    }
}

static void adam_case(size_t n, AdamHyper h) {
    Status st;
    status_clear(&st);
    float *p = uniform(n, -1.0f, 1.0f), *m = zeros(n), *v = zeros(n);
    float *d_p = dev_floats(p, n), *d_m = dev_floats(m, n), *d_v = dev_floats(v, n);
    for (int step = 1; step <= OPTIMIZER_STEPS && !device_broken; step++) {
        h.step = step;
        snprintf(shape, sizeof shape, "n=%zu lr=%g betas=%g,%g eps=%g weight_decay=%g %s step %d", n,
                 h.lr, h.beta1, h.beta2, h.eps, h.weight_decay,
                 h.decoupled_weight_decay ? "AdamW" : "Adam", step);
        float *g = gradients(n);
        for (size_t i = 7; i < n; i += 23) g[i] = 1e-6f;  // v ~ 1e-12: eps dominates
        float *d_g = dev_floats(g, n);
        if (GPU_CALL(adam_update, &(AdamUpdateTensors){.param = d_p, .grad = d_g, .m = d_m,
                     .v = d_v, .n = n}, &h)) return;
        float *p_before = copy_of(p, n);
        CPU_CALL(adam_update, &(AdamUpdateTensors){.param = p, .grad = g, .m = m, .v = v, .n = n},
                 &h);
        // Adam's step is at most about lr * (1 - beta1) / sqrt(1 - beta2) (~3.2 lr) per
        // element; the moments are sums of O(|g|) terms; v is a sum of squares, relative.
        float *p_mag = floats(n), *m_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            p_mag[i] = fabsf(p_before[i]) + 4.0f * h.lr;
            m_mag[i] = fabsf(m[i]) + fabsf(g[i]) + h.weight_decay * fabsf(p_before[i]);
        }
        compare("adam_update", "param", fetch(d_p, n), p, p_mag, n);
        compare("adam_update", "m", fetch(d_m, n), m, m_mag, n);
        compare("adam_update", "v", fetch(d_v, n), v, NULL, n);
    }
}

static void test_optimizers(void) {
    static const size_t sizes[] = {1, 1000, 65537, ((size_t)1 << 20) + 3};
    static const SgdHyper sgd[] = {
        {.lr = 0.1f},
        {.lr = 0.05f, .momentum = 0.9f},
        {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = 1},
        {.lr = 0.1f, .weight_decay = 0.01f},
    };
    static const AdamHyper adam[] = {
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f,
         .decoupled_weight_decay = 1},
        {.lr = 0.001f, .beta1 = 0.5f, .beta2 = 0.9f, .eps = 1e-3f},
    };
    if (HAVE(sgd_update))
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof sgd / sizeof sgd[0]; k++) {
                sgd_case(sizes[s], sgd[k]);
                end_case();
            }
    if (HAVE(adam_update))
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t k = 0; k < sizeof adam / sizeof adam[0]; k++) {
                adam_case(sizes[s], adam[k]);
                end_case();
            }
}

// ---- multi-tensor optimizer updates --------------------------------------------------------

// Tensors of a multi-tensor case lie in one buffer per array, each followed by MULTI_GAP
// poisoned (NaN) values, so a write past a tensor's end lands in a gap and shows as a
// number where the CPU's buffer still holds NaN.
enum { MULTI_GAP = 64, MULTI_MAX = 80 };

typedef struct MultiLayout {
    int count;
    size_t n[MULTI_MAX], at[MULTI_MAX];
    size_t total;
} MultiLayout;

static MultiLayout multi_layout(const size_t *sizes, int count) {
    MultiLayout l = {.count = count};
    for (int i = 0; i < count; i++) {
        l.n[i] = sizes[i];
        l.at[i] = l.total;
        l.total += sizes[i] + MULTI_GAP;
    }
    return l;
}

// `base` holds finite values inside the tensors, NaN in the gaps.
static void poison_gaps(const MultiLayout *l, float *base) {
    for (int i = 0; i < l->count; i++)
        memset(base + l->at[i] + l->n[i], POISON_BYTE, MULTI_GAP * sizeof *base);
}

static void multi_tensors(const MultiLayout *l, float *param, const float *grad, float *s0,
                          float *s1, OptimizerTensor *out) {
    for (int i = 0; i < l->count; i++)
        out[i] = (OptimizerTensor){.param = param + l->at[i], .grad = grad + l->at[i],
                                   .state = {s0 ? s0 + l->at[i] : NULL, s1 ? s1 + l->at[i] : NULL},
                                   .n = l->n[i]};
}

// `steps` updates of the tensors by sgd_update_multi (adam = 0) or adam_update_multi: on the
// GPU against the CPU's op (the per-tensor math: the tolerances of sgd_case and adam_case),
// and against the GPU's own per-tensor op on a second copy, bit for bit (both kernels call
// one element function).
static void multi_case(const char *what, const size_t *sizes, int count, int adam, SgdHyper sh,
                       AdamHyper ah, int steps) {
    Status st;
    status_clear(&st);
    MultiLayout l = multi_layout(sizes, count);
    size_t n = l.total;
    int states = adam ? 2 : sh.momentum != 0.0f ? 1 : 0;
    float *p = uniform(n, -1.0f, 1.0f), *s[2] = {NULL, NULL};
    poison_gaps(&l, p);
    for (int k = 0; k < states; k++) {
        s[k] = adam ? zeros(n) : uniform(n, -0.1f, 0.1f);  // Adam from zero, SGD mid-training
        poison_gaps(&l, s[k]);
    }
    // Set A runs the multi-tensor op, set B the per-tensor op, on the device.
    float *a_p = dev_floats(p, n), *b_p = dev_floats(p, n), *a_s[2] = {NULL, NULL};
    float *b_s[2] = {NULL, NULL};
    for (int k = 0; k < states; k++) {
        a_s[k] = dev_floats(s[k], n);
        b_s[k] = dev_floats(s[k], n);
    }
    float *d_g = dev_poison_floats(n);
    OptimizerTensor a_t[MULTI_MAX], b_t[MULTI_MAX], h_t[MULTI_MAX];
    multi_tensors(&l, a_p, d_g, a_s[0], a_s[1], a_t);
    multi_tensors(&l, b_p, d_g, b_s[0], b_s[1], b_t);
    for (int step = 1; step <= steps && !device_broken; step++) {
        ah.step = step;
        snprintf(shape, sizeof shape, "%s, %d tensors (%zu values in all), step %d", what, count,
                 n - (size_t)count * MULTI_GAP, step);
        float *g = gradients(n);
        upload(d_g, g, n * sizeof *g);
        int rc = adam ? GPU_CALL(adam_update_multi, a_t, count, &ah)
                      : GPU_CALL(sgd_update_multi, a_t, count, &sh);
        for (int i = 0; i < count && !rc; i++)
            rc = adam ? GPU_CALL(adam_update, &(AdamUpdateTensors){.param = b_t[i].param,
                                 .grad = b_t[i].grad, .m = b_t[i].state[0], .v = b_t[i].state[1],
                                 .n = b_t[i].n}, &ah)
                      : GPU_CALL(sgd_update, &(SgdUpdateTensors){.param = b_t[i].param,
                                 .grad = b_t[i].grad, .velocity = b_t[i].state[0], .n = b_t[i].n},
                                 &sh);
        if (rc) return;
        float *before = copy_of(p, n);
        multi_tensors(&l, p, g, s[0], s[1], h_t);
        if (adam ? CPU_CALL(adam_update_multi, h_t, count, &ah)
                 : CPU_CALL(sgd_update_multi, h_t, count, &sh))
            return;
        const char *op = adam ? "adam_update_multi" : "sgd_update_multi";
        compare_exact(op, "param (against the per-tensor op)", fetch(a_p, n), fetch(b_p, n), n,
                      0, 1);
        for (int k = 0; k < states; k++)
            compare_exact(op, "state (against the per-tensor op)", fetch(a_s[k], n),
                          fetch(b_s[k], n), n, 0, 1);
        // What the steps are made of, as in sgd_case and adam_case.
        float *p_mag = floats(n), *s_mag = floats(n);
        for (size_t i = 0; i < n; i++) {
            float wd_p = (adam ? ah.weight_decay : sh.weight_decay) * fabsf(before[i]);
            if (adam) {
                p_mag[i] = fabsf(before[i]) + 4.0f * ah.lr;
                s_mag[i] = fabsf(s[0][i]) + fabsf(g[i]) + wd_p;
            } else {
                float vel = states ? fabsf(s[0][i]) : 0.0f;
                p_mag[i] = fabsf(before[i]) + 2.0f * sh.lr * (fabsf(g[i]) + wd_p + vel);
                s_mag[i] = vel + fabsf(g[i]) + wd_p;
            }
        }
        compare(op, "param", fetch(a_p, n), p, p_mag, n);
        if (states) compare(op, adam ? "m" : "velocity", fetch(a_s[0], n), s[0], s_mag, n);
        if (states == 2) compare(op, "v", fetch(a_s[1], n), s[1], NULL, n);
    }
}

static void test_optimizers_multi(void) {
    // Empty, 1, a bias, around the 4096-value chunk of a block, lenet's largest tensor.
    static const size_t mixed[] = {0, 1, 10, 4095, 4096, 4097, 802816, 65537, 3};
    // More tensors than one launch's table holds (64).
    size_t many[70];
    for (int i = 0; i < 70; i++) many[i] = (size_t)(i * 37) % 5000 + 1;
    // One tensor past the largest table entry (64 Mi values, MULTI_PIECE in
    // kernels/cuda/cuda_optimizer.cu): entered in two pieces.
    static const size_t pieces[] = {((size_t)4096 * 16384) + 4099, 5};
    // The kernels' two paths (kernels/cuda/cuda_optimizer.cu): float4s where all of a
    // tensor's arrays are 16-byte aligned, one value at a time where not. The layout puts
    // these at offsets of 0, 1, 0, 0 and 2 floats past alignment: 3 chunks and 1 float4 and
    // 1 value; 1 float off, over 3 chunks; whole chunks; 513 float4s (3 for thread 0, 2 for
    // the others) and 2 values; and 6 values at 2 floats off.
    static const size_t aligned[] = {3 * 4096 + 5, 8195, 8192, 2054, 6};
    static const size_t aligned_offset[] = {0, 1, 0, 0, 2};
    MultiLayout aligned_layout = multi_layout(aligned, 5);
    for (int i = 0; i < 5; i++)
        if (aligned_layout.at[i] % 4 != aligned_offset[i]) {
            fprintf(stderr, "FAIL multi-tensor layout: tensor %d is %zu floats past alignment, "
                            "not %zu (MULTI_GAP changed?)\n",
                    i, aligned_layout.at[i] % 4, aligned_offset[i]);
            test_failures++;
        }
    static const SgdHyper sgd[] = {
        {.lr = 0.1f},
        {.lr = 0.05f, .momentum = 0.9f},
        {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = 1},
        {.lr = 0.1f, .weight_decay = 0.01f},
    };
    static const AdamHyper adam[] = {
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f},
        {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f,
         .decoupled_weight_decay = 1},
    };
    const SgdHyper no_sgd = {0};
    const AdamHyper no_adam = {0};
    if (HAVE(sgd_update_multi) && HAVE(sgd_update)) {
        for (size_t k = 0; k < sizeof sgd / sizeof sgd[0]; k++) {
            multi_case("sgd, mixed sizes", mixed, 9, 0, sgd[k], no_adam, 3);
            end_case();
            multi_case("sgd, 70 tensors", many, 70, 0, sgd[k], no_adam, 2);
            end_case();
            multi_case("sgd, aligned and not", aligned, 5, 0, sgd[k], no_adam, 2);
            end_case();
        }
        multi_case("sgd, a tensor in two pieces", pieces, 2, 0, sgd[2], no_adam, 1);
        end_case();
    }
    if (HAVE(adam_update_multi) && HAVE(adam_update)) {
        for (size_t k = 0; k < sizeof adam / sizeof adam[0]; k++) {
            multi_case("adam, mixed sizes", mixed, 9, 1, no_sgd, adam[k], 3);
            end_case();
            multi_case("adam, 70 tensors", many, 70, 1, no_sgd, adam[k], 2);
            end_case();
            multi_case("adam, aligned and not", aligned, 5, 1, no_sgd, adam[k], 2);
            end_case();
        }
        multi_case("adam, a tensor in two pieces", pieces, 2, 1, no_sgd, adam[2], 1);
        end_case();
    }
}

static void run(const ParityPass *pass) {
    if (pass->kind == PARITY_FP32 && section("optimizers")) test_optimizers();
    if (section(pass->kind == PARITY_LEVERS_OFF
                    ? "multi-tensor optimizers: one launch per tensor (multi-tensor)"
                    : "multi-tensor optimizers"))
        test_optimizers_multi();
}

PARITY_MAIN("test_cuda_parity_optimizers", BACKEND_OPTIMIZER_OPS, PARITY_LEVERS_OFF, run)
