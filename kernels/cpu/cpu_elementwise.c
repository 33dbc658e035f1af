#include <math.h>

#include "kernels/cpu/cpu_ops.h"

int cpu_activation_forward(const Backend *b, ActivationKind kind, float slope, const float *x,
                           float *y, size_t n, Status *st) {
    switch (kind) {
    case ACTIVATION_RELU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case ACTIVATION_LEAKY_RELU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
        break;
    case ACTIVATION_SIGMOID:
        for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case ACTIVATION_TANH:
        for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
        break;
    case ACTIVATION_GELU:
        // The exact (erf) form, which is PyTorch's default, so results compare 1:1.
        for (size_t i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
        break;
    default:
        return status_fail(st, STATUS_RUNTIME_ERROR, "unknown activation %d", (int)kind);
    }
    return 0;
}

// Derivatives are written in terms of the output where that is cheaper (sigmoid, tanh)
// and of the input where the output does not determine them (relu at 0, gelu).
static float activation_derivative(ActivationKind kind, float slope, float x, float y) {
    switch (kind) {
    case ACTIVATION_RELU: return x > 0.0f ? 1.0f : 0.0f;
    case ACTIVATION_LEAKY_RELU: return x > 0.0f ? 1.0f : slope;
    case ACTIVATION_SIGMOID: return y * (1.0f - y);
    case ACTIVATION_TANH: return 1.0f - y * y;
    case ACTIVATION_GELU: {
        float cdf = 0.5f * (1.0f + erff(x * 0.70710678f));
        float pdf = 0.39894228f * expf(-0.5f * x * x);
        return cdf + x * pdf;
    }
    default: return 0.0f;
    }
}

int cpu_activation_backward(const Backend *b, ActivationKind kind, float slope, const float *x,
                            const float *y, const float *dy, float *dx, size_t n, int accumulate,
                            Status *st) {
    if (kind < 0 || kind >= ACTIVATION_COUNT)
        return status_fail(st, STATUS_RUNTIME_ERROR, "unknown activation %d", (int)kind);
    if (kind == ACTIVATION_RELU && !accumulate) {
        // The hot case in most models: keep it a branch-free loop the compiler vectorizes.
        for (size_t i = 0; i < n; i++) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        float g = dy[i] * activation_derivative(kind, slope, x[i], y[i]);
        dx[i] = accumulate ? dx[i] + g : g;
    }
    return 0;
}

int cpu_dropout_forward(const Backend *b, const float *x, float *y, float *mask, size_t n,
                        float rate, uint64_t seed, Status *st) {
    float keep_scale = 1.0f / (1.0f - rate);
    for (size_t i = 0; i < n; i++) {
        mask[i] = dropout_uniform(seed, i) >= rate ? keep_scale : 0.0f;
        y[i] = x[i] * mask[i];
    }
    return 0;
}

int cpu_dropout_backward(const Backend *b, const float *dy, const float *mask, float *dx, size_t n,
                         int accumulate, Status *st) {
    for (size_t i = 0; i < n; i++) dx[i] = (accumulate ? dx[i] : 0.0f) + dy[i] * mask[i];
    return 0;
}
