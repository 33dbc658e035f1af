#include <math.h>

#include <stdlib.h>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/cpu_parallel.h"

// Elementwise loops split across the cores (cpu_parallel.h): between two GEMMs the
// second core would otherwise idle while one core walks the activations.
typedef struct ElementwiseJob {
    ActivationKind kind;
    float slope, rate;
    uint64_t seed;
    int accumulate;
    const float *x, *y, *dy, *mask;
    float *out, *out_mask;
} ElementwiseJob;

static void activation_forward_range(void *context, size_t begin, size_t end) {
    const ElementwiseJob *j = context;
    const float *x = j->x;
    float *y = j->out, slope = j->slope;
    switch (j->kind) {
    case ACTIVATION_RELU:
        for (size_t i = begin; i < end; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case ACTIVATION_LEAKY_RELU:
        for (size_t i = begin; i < end; i++) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
        break;
    case ACTIVATION_SIGMOID:
        for (size_t i = begin; i < end; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case ACTIVATION_TANH:
        for (size_t i = begin; i < end; i++) y[i] = tanhf(x[i]);
        break;
    case ACTIVATION_GELU:
        // The exact (erf) form, which is PyTorch's default, so results compare 1:1.
        for (size_t i = begin; i < end; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
        break;
    default: break;
    }
}

// Rough cost per element, in the units cpu_parallel_for takes (floats touched): the
// transcendental activations cost about ten times a relu.
static size_t activation_cost(ActivationKind kind) {
    return kind == ACTIVATION_RELU || kind == ACTIVATION_LEAKY_RELU ? 2 : 20;
}

static int activation_forward_f32(ActivationKind kind, float slope, const float *x, float *y,
                                  size_t n) {
    ElementwiseJob job = {.kind = kind, .slope = slope, .x = x, .out = y};
    cpu_parallel_for(n, activation_cost(kind), activation_forward_range, &job);
    return 0;
}

// 16-bit storage, here and in the ops below: the operands widened into f32 scratch, the f32
// loop run on them, and the result rounded once on the store. A dx that is added to is
// widened too, so the accumulation happens in f32 before that one rounding.
typedef struct WideOperands {
    float *v[4];
} WideOperands;

static void wide_free(WideOperands *w) {
    for (int k = 0; k < 4; k++) free(w->v[k]);
}

// w->v[k] = src[k] widened (k < count), or, where src[k] is NULL, n floats of scratch.
static int wide_load(WideOperands *w, const void *const *src, int count, DType dtype, size_t n,
                     Status *st) {
    *w = (WideOperands){{NULL}};
    for (int k = 0; k < count; k++) {
        w->v[k] = cpu_wide_room(src[k], dtype, n, src[k] != NULL, st);
        if (!w->v[k]) {
            wide_free(w);
            return STATUS_RUNTIME_ERROR;
        }
    }
    return 0;
}

int cpu_activation_forward(const Backend *b, const ActivationForwardArgs *args, Status *st) {
    if (args->kind < 0 || args->kind >= ACTIVATION_COUNT)
        return status_fail(st, STATUS_RUNTIME_ERROR, "unknown activation %d", (int)args->kind);
    if (args->dtype == DTYPE_F32)
        return activation_forward_f32(args->kind, args->slope, args->x, args->y, args->n);
    TRY(backend_dtype_check(b, args->dtype, "activation_forward", st));
    WideOperands w;
    const void *src[1] = {args->x};
    TRY(wide_load(&w, src, 1, args->dtype, args->n, st));
    activation_forward_f32(args->kind, args->slope, w.v[0], w.v[0], args->n);
    cpu_narrow(w.v[0], args->y, args->dtype, args->n);
    wide_free(&w);
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

static void activation_backward_range(void *context, size_t begin, size_t end) {
    const ElementwiseJob *j = context;
    const float *x = j->x, *y = j->y, *dy = j->dy;
    float *dx = j->out;
    if (j->kind == ACTIVATION_RELU && !j->accumulate) {
        // The hot case in most models: keep it a branch-free loop the compiler vectorizes.
        for (size_t i = begin; i < end; i++) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
        return;
    }
    for (size_t i = begin; i < end; i++) {
        float g = dy[i] * activation_derivative(j->kind, j->slope, x[i], y[i]);
        dx[i] = j->accumulate ? dx[i] + g : g;
    }
}

static void activation_backward_f32(ActivationKind kind, float slope, const float *x,
                                   const float *y, const float *dy, float *dx, size_t n,
                                   int accumulate) {
    ElementwiseJob job = {.kind = kind, .slope = slope, .accumulate = accumulate, .x = x, .y = y,
                          .dy = dy, .out = dx};
    cpu_parallel_for(n, activation_cost(kind) + 2, activation_backward_range, &job);
}

static int cpu_activation_backward(const Backend *b, const ActivationBackwardArgs *args,
                                   Status *st) {
    if (args->kind < 0 || args->kind >= ACTIVATION_COUNT)
        return status_fail(st, STATUS_RUNTIME_ERROR, "unknown activation %d", (int)args->kind);
    if (args->dtype == DTYPE_F32) {
        activation_backward_f32(args->kind, args->slope, args->x, args->y, args->dy, args->dx,
                                args->n, args->accumulate);
        return 0;
    }
    TRY(backend_dtype_check(b, args->dtype, "activation_backward", st));
    WideOperands w;
    const void *src[4] = {args->x, args->y, args->dy, args->accumulate ? args->dx : NULL};
    TRY(wide_load(&w, src, 4, args->dtype, args->n, st));
    activation_backward_f32(args->kind, args->slope, w.v[0], w.v[1], w.v[2], w.v[3], args->n,
                            args->accumulate);
    cpu_narrow(w.v[3], args->dx, args->dtype, args->n);
    wide_free(&w);
    return 0;
}

// The unfused ops in turn, so a dense layer trains to the same bits fused or not. 16-bit
// storage: y and dy widened, dx computed in f32, the bias gradient summed from that f32 dx,
// and dx rounded once.
// activation_bias_backward on f32 y, dy and dx (t's own, or widened copies of them).
static int bias_backward_f32(const Backend *b, const FusedActivation *act,
                             const ActivationBiasBackwardTensors *t, const void *y,
                             const void *dy, void *dx, Status *st) {
    TRY(cpu_activation_backward(b,
                                &(ActivationBackwardArgs){.kind = act->kind,
                                                          .slope = act->slope,
                                                          .dtype = DTYPE_F32,
                                                          .x = y,
                                                          .y = y,
                                                          .dy = dy,
                                                          .dx = dx,
                                                          .n = (size_t)t->rows * (size_t)t->cols,
                                                          .accumulate = 0},
                                st));
    if (!t->dbias) return 0;
    return cpu_sum_rows(b,
                        &(SumRowsArgs){.out = t->dbias,
                                       .x = dx,
                                       .x_dtype = DTYPE_F32,
                                       .rows = t->rows,
                                       .cols = t->cols,
                                       .beta = t->beta},
                        st);
}

static int cpu_activation_bias_backward(const Backend *b, const FusedActivation *act,
                                        const ActivationBiasBackwardTensors *t, Status *st) {
    if (t->dtype == DTYPE_F32) return bias_backward_f32(b, act, t, t->y, t->dy, t->dx, st);
    TRY(backend_dtype_check(b, t->dtype, "activation_bias_backward", st));
    size_t n = (size_t)t->rows * (size_t)t->cols;
    float *wide_y = cpu_widen(t->y, t->dtype, n, st);
    float *wide_dy = wide_y ? cpu_widen(t->dy, t->dtype, n, st) : NULL;
    float *wide_dx = wide_dy ? cpu_widen(t->dy, t->dtype, n, st) : NULL;  // overwritten below
    int rc = wide_dx ? bias_backward_f32(b, act, t, wide_y, wide_dy, wide_dx, st)
                     : (int)st->code;
    if (!rc) cpu_narrow(wide_dx, t->dx, t->dtype, n);
    free(wide_y);
    free(wide_dy);
    free(wide_dx);
    return rc;
}

static void dropout_forward_range(void *context, size_t begin, size_t end) {
    const ElementwiseJob *j = context;
    float keep_scale = 1.0f / (1.0f - j->rate);
    for (size_t i = begin; i < end; i++) {
        j->out_mask[i] = dropout_uniform(j->seed, i) >= j->rate ? keep_scale : 0.0f;
        j->out[i] = j->x[i] * j->out_mask[i];
    }
}

static int cpu_dropout_forward(const Backend *b, const DropoutForwardArgs *args, Status *st) {
    ElementwiseJob job = {.rate = args->rate,
                          .seed = args->seed,
                          .x = args->x,
                          .out = args->y,
                          .out_mask = args->mask};
    if (args->dtype == DTYPE_F32) {
        cpu_parallel_for(args->n, 8, dropout_forward_range, &job);
        return 0;
    }
    TRY(backend_dtype_check(b, args->dtype, "dropout_forward", st));
    WideOperands w;
    const void *src[1] = {args->x};
    TRY(wide_load(&w, src, 1, args->dtype, args->n, st));
    job.x = job.out = w.v[0];
    cpu_parallel_for(args->n, 8, dropout_forward_range, &job);
    cpu_narrow(w.v[0], args->y, args->dtype, args->n);
    wide_free(&w);
    return 0;
}

static void dropout_backward_range(void *context, size_t begin, size_t end) {
    const ElementwiseJob *j = context;
    for (size_t i = begin; i < end; i++)
        j->out[i] = (j->accumulate ? j->out[i] : 0.0f) + j->dy[i] * j->mask[i];
}

static int cpu_dropout_backward(const Backend *b, const DropoutBackwardArgs *args, Status *st) {
    ElementwiseJob job = {
        .accumulate = args->accumulate, .dy = args->dy, .mask = args->mask, .out = args->dx};
    if (args->dtype == DTYPE_F32) {
        cpu_parallel_for(args->n, 3, dropout_backward_range, &job);
        return 0;
    }
    TRY(backend_dtype_check(b, args->dtype, "dropout_backward", st));
    WideOperands w;
    const void *src[2] = {args->dy, args->accumulate ? args->dx : NULL};
    TRY(wide_load(&w, src, 2, args->dtype, args->n, st));
    job.dy = w.v[0];
    job.out = w.v[1];
    cpu_parallel_for(args->n, 3, dropout_backward_range, &job);
    cpu_narrow(w.v[1], args->dx, args->dtype, args->n);
    wide_free(&w);
    return 0;
}

void cpu_register_elementwise_ops(Backend *table) {
    table->activation_forward = cpu_activation_forward;
    table->activation_backward = cpu_activation_backward;
    table->activation_bias_backward = cpu_activation_bias_backward;
    table->dropout_forward = cpu_dropout_forward;
    table->dropout_backward = cpu_dropout_backward;
}
