// The fused CPU optimizer updates against a plain double-precision transcription of
// PyTorch's documented update rules (torch.optim.SGD, Adam, AdamW), three steps each.
//
// Tolerance: 1e-6 relative, measured against the magnitude of the terms that make up each
// value (|p| + lr |update| for a parameter, beta |m| + (1 - beta) |g| for a moment, ...),
// plus 1e-9 absolute for state that is ~0. A sum's rounding error is bounded by its
// terms' magnitude, not by its result: a momentum buffer that nearly cancels to 0.04 from
// terms of 0.5 legitimately carries 0.5 * 6e-8 of f32 rounding. The kernel runs in f32
// (6e-8 relative per operation); three steps of a handful of operations stay well inside
// 1e-6, while any departure from the rule (a missing bias correction, weight decay in the
// wrong place, Nesterov's extra term) moves the result by at least lr * |g| ~ 1e-3.
#include "check.h"
#include "base/rng.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>

#define OPT_RTOL 1e-6
#define OPT_ATOL 1e-9

enum { N = 9, STEPS = 3 };

static Rng rng;

// Parameters in +-[1, 2] so relative error is meaningful (no step brings one near 0);
// gradients in [-1, 1] with one exact zero (Adam's 0 / (0 + eps) case) and one large value.
static void draw(float *param, float grads[STEPS][N]) {
    for (int i = 0; i < N; i++) {
        float magnitude = 1.0f + rng_uniform(&rng);
        param[i] = i % 2 ? -magnitude : magnitude;
    }
    for (int s = 0; s < STEPS; s++) {
        for (int i = 0; i < N; i++) grads[s][i] = 2.0f * rng_uniform(&rng) - 1.0f;
        grads[s][0] = 0.0f;
        grads[s][1] = 25.0f * (s + 1);
    }
}

// `scale` is the summed magnitude of the terms behind each expected value.
static void compare(const char *what, int step, const char *array, const float *got,
                    const double *want, const double *scale) {
    for (int i = 0; i < N; i++) {
        double tol = OPT_RTOL * fmax(fabs(want[i]), scale[i]) + OPT_ATOL;
        if (!(fabs(got[i] - want[i]) <= tol)) {
            fprintf(stderr, "%s step %d: %s[%d] = %.9g, PyTorch rule gives %.9g "
                    "(diff %.3g, tol %.3g)\n",
                    what, step, array, i, got[i], want[i], fabs(got[i] - want[i]), tol);
            test_failures++;
        }
    }
}

// torch.optim.SGD (dampening 0):
//   g = grad + wd * p
//   if momentum: b = g at t = 1, else b = momentum * b + g
//                g = g + momentum * b if nesterov else b
//   p = p - lr * g
static void sgd_matches_pytorch(const char *what, SgdHyper h) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float param[N], velocity[N] = {0}, grads[STEPS][N];
    double ref_p[N], ref_b[N], mag_p[N], mag_b[N] = {0};
    draw(param, grads);
    for (int i = 0; i < N; i++) ref_p[i] = param[i];
    const double mu = h.momentum, wd = h.weight_decay, lr = h.lr;
    for (int t = 1; t <= STEPS; t++) {
        const float *grad = grads[t - 1];
        CHECK_INT_EQ(b->sgd_update(b, &(SgdUpdateTensors){.param = param, .grad = grad,
                                   .velocity = velocity, .n = N}, &h, &st), 0);
        for (int i = 0; i < N; i++) {
            double g = (double)grad[i] + wd * ref_p[i];
            double mag_g = fabs(grad[i]) + wd * fabs(ref_p[i]);
            if (h.momentum != 0.0f) {
                ref_b[i] = t == 1 ? g : mu * ref_b[i] + g;
                mag_b[i] = t == 1 ? mag_g : mu * mag_b[i] + mag_g;
                g = h.nesterov ? g + mu * ref_b[i] : ref_b[i];
                mag_g = h.nesterov ? mag_g + mu * mag_b[i] : mag_b[i];
            }
            mag_p[i] = fabs(ref_p[i]) + lr * mag_g;
            ref_p[i] -= lr * g;
        }
        compare(what, t, "param", param, ref_p, mag_p);
        if (h.momentum != 0.0f) compare(what, t, "momentum_buffer", velocity, ref_b, mag_b);
    }
}

// torch.optim.Adam / AdamW:
//   Adam:  g = grad + wd * p            AdamW: p = p * (1 - lr * wd)
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   m_hat = m / (1 - beta1^t);    v_hat = v / (1 - beta2^t)
//   p = p - lr * m_hat / (sqrt(v_hat) + eps)
static void adam_matches_pytorch(const char *what, AdamHyper h) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float param[N], m[N] = {0}, v[N] = {0}, grads[STEPS][N];
    double ref_p[N], ref_m[N] = {0}, ref_v[N] = {0}, mag_p[N], mag_m[N] = {0};
    draw(param, grads);
    for (int i = 0; i < N; i++) ref_p[i] = param[i];
    const double lr = h.lr, beta1 = h.beta1, beta2 = h.beta2, eps = h.eps, wd = h.weight_decay;
    for (int t = 1; t <= STEPS; t++) {
        const float *grad = grads[t - 1];
        h.step = t;
        CHECK_INT_EQ(b->adam_update(b, &(AdamUpdateTensors){.param = param, .grad = grad, .m = m,
                                    .v = v, .n = N}, &h, &st), 0);
        for (int i = 0; i < N; i++) {
            double g = grad[i], mag_g = fabs(grad[i]);
            mag_p[i] = fabs(ref_p[i]);
            if (h.decoupled_weight_decay) {
                ref_p[i] *= 1.0 - lr * wd;
            } else {
                g += wd * ref_p[i];
                mag_g += wd * fabs(ref_p[i]);
            }
            ref_m[i] = beta1 * ref_m[i] + (1.0 - beta1) * g;
            mag_m[i] = beta1 * mag_m[i] + (1.0 - beta1) * mag_g;
            ref_v[i] = beta2 * ref_v[i] + (1.0 - beta2) * g * g;
            double m_hat = ref_m[i] / (1.0 - pow(beta1, t));
            double v_hat = ref_v[i] / (1.0 - pow(beta2, t));
            double update = lr * m_hat / (sqrt(v_hat) + eps);
            ref_p[i] -= update;
            mag_p[i] += fabs(update);
        }
        compare(what, t, "param", param, ref_p, mag_p);
        compare(what, t, "exp_avg", m, ref_m, mag_m);
        compare(what, t, "exp_avg_sq", v, ref_v, ref_v);  // a sum of squares: no cancellation
    }
}

// A zero learning rate leaves parameters alone but still updates the state.
static void zero_learning_rate_keeps_parameters(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float param[N], start[N], m[N] = {0}, v[N] = {0}, grads[STEPS][N];
    draw(param, grads);
    memcpy(start, param, sizeof start);
    AdamHyper h = {.lr = 0.0f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .step = 1};
    CHECK_INT_EQ(b->adam_update(b, &(AdamUpdateTensors){.param = param, .grad = grads[0], .m = m,
                                .v = v, .n = N}, &h, &st), 0);
    for (int i = 0; i < N; i++) CHECK_NEAR(param[i], start[i], 0.0);
    CHECK_NEAR(m[2], 0.1 * grads[0][2], 1e-7);
    SgdHyper s = {.lr = 0.0f, .momentum = 0.9f};
    float velocity[N] = {0};
    CHECK_INT_EQ(b->sgd_update(b, &(SgdUpdateTensors){.param = param, .grad = grads[0],
                               .velocity = velocity, .n = N}, &s, &st), 0);
    for (int i = 0; i < N; i++) CHECK_NEAR(param[i], start[i], 0.0);
    CHECK_NEAR(velocity[2], grads[0][2], 0.0);
}

int main(void) {
    rng_seed(&rng, 31337);
    // Every case calls the CPU table's slots, so what is held to PyTorch's rules is what
    // cpu_optimizer.c registered there; without a slot there is nothing to call.
    const Backend *b = cpu_backend();
    if (!b->sgd_update || !b->adam_update) {
        fprintf(stderr, "test_optimizer: the CPU table has no %s\n",
                b->sgd_update ? "adam_update" : "sgd_update");
        return 1;
    }
    sgd_matches_pytorch("sgd", (SgdHyper){.lr = 0.1f});
    sgd_matches_pytorch("sgd_momentum", (SgdHyper){.lr = 0.02f, .momentum = 0.9f});
    sgd_matches_pytorch("sgd_nesterov", (SgdHyper){.lr = 0.02f, .momentum = 0.9f, .nesterov = 1});
    sgd_matches_pytorch("sgd_weight_decay", (SgdHyper){.lr = 0.1f, .weight_decay = 0.01f});
    sgd_matches_pytorch("sgd_momentum_weight_decay",
                        (SgdHyper){.lr = 0.02f, .momentum = 0.8f, .weight_decay = 0.05f});
    sgd_matches_pytorch("sgd_nesterov_weight_decay",
                        (SgdHyper){.lr = 0.02f, .momentum = 0.9f, .weight_decay = 0.01f,
                                   .nesterov = 1});
    adam_matches_pytorch("adam", (AdamHyper){.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
                                             .eps = 1e-8f});
    adam_matches_pytorch("adam_weight_decay",
                         (AdamHyper){.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                     .weight_decay = 0.1f});
    adam_matches_pytorch("adamw", (AdamHyper){.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
                                              .eps = 1e-8f, .weight_decay = 0.01f,
                                              .decoupled_weight_decay = 1});
    adam_matches_pytorch("adamw_strong_decay",
                         (AdamHyper){.lr = 0.02f, .beta1 = 0.8f, .beta2 = 0.99f, .eps = 1e-6f,
                                     .weight_decay = 0.5f, .decoupled_weight_decay = 1});
    zero_learning_rate_keeps_parameters();
    return test_exit_code("test_optimizer");
}
