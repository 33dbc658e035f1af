// The CUDA backend against the CPU reference, elementwise ops: activations, their fused bias
// gradient, dropout (kernels/backend.h); parity_harness.c says how each op is checked and in
// which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Inputs over the range where every activation bends, with exact zeros (relu's kink).
static float *activation_inputs(size_t n) {
    float *x = uniform(n, -6.0f, 6.0f);
    for (size_t i = 0; i < n; i += 17) x[i] = 0.0f;
    return x;
}

static void activation_forward_case(ActivationKind kind, float slope, size_t n) {
    snprintf(shape, sizeof shape, "%s slope=%g n=%zu", activation_names[kind], slope, n);
    Status st;
    status_clear(&st);
    float *x = activation_inputs(n);
    float *dx = dev_floats(x, n), *dy = dev_poison_floats(n);
    if (GPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = dx, .y = dy, .n = n})) return;
    float *want = poisoned(n);
    CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
             .dtype = DTYPE_F32, .x = x, .y = want, .n = n});
    // Sigmoid is well conditioned everywhere: relative to its value. The others relative
    // to max(|x|, |y|): gelu's 1 + erf(x / sqrt 2) cancels for negative x, so its error
    // scales with x, not with the small result.
    float *mag = NULL;
    if (kind != ACTIVATION_SIGMOID) {
        mag = floats(n);
        for (size_t i = 0; i < n; i++) mag[i] = fmaxf(fabsf(x[i]), fabsf(want[i]));
    }
    compare("activation_forward", "y", fetch(dy, n), want, mag, n);
}

static void activation_backward_case(ActivationKind kind, float slope, size_t n, int accumulate) {
    snprintf(shape, sizeof shape, "%s slope=%g n=%zu accumulate=%d", activation_names[kind], slope,
             n, accumulate);
    Status st;
    status_clear(&st);
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    float *dx0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_x = dev_floats(x, n), *d_y = dev_floats(y, n), *d_dy = dev_floats(dy, n);
    float *d_dx = dev_floats(dx0, n);
    if (GPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = kind, .slope = slope,
                 .dtype = DTYPE_F32, .x = d_x, .y = d_y, .dy = d_dy, .dx = d_dx, .n = n,
                 .accumulate = accumulate}))
        return;
    float *want = copy_of(dx0, n);
    CPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = kind, .slope = slope,
             .dtype = DTYPE_F32, .x = x, .y = y, .dy = dy, .dx = want, .n = n,
             .accumulate = accumulate});
    // |f'| <= 1.13 for all five, and f' is computed from O(1) values: the error scales
    // with |dy| (plus what was there).
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fabsf(dy[i]) + (accumulate ? fabsf(dx0[i]) : 0.0f);
    compare("activation_backward", "dx", fetch(d_dx, n), want, mag, n);
}

static void test_activations(void) {
    static const size_t sizes[] = {1, 7, 1000, 65537};
    if (HAVE(activation_forward)) {
        for (int kind = 0; kind < ACTIVATION_COUNT; kind++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                activation_forward_case((ActivationKind)kind, 0.2f, sizes[s]);
                end_case();
            }
        activation_forward_case(ACTIVATION_LEAKY_RELU, 0.01f, 1001);
        end_case();
        activation_forward_case(ACTIVATION_RELU, 0.0f, BIG_N);
        end_case();
    }
    if (HAVE(activation_backward)) {
        for (int kind = 0; kind < ACTIVATION_COUNT; kind++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                for (int acc = 0; acc <= 1; acc++) {
                    activation_backward_case((ActivationKind)kind, 0.2f, sizes[s], acc);
                    end_case();
                }
        activation_backward_case(ACTIVATION_LEAKY_RELU, 0.01f, 1001, 1);
        end_case();
    }
}

static void activation_bias_backward_case(const FusedActivation *act, int rows, int cols,
                                          float beta, int with_bias) {
    snprintf(shape, sizeof shape, "%s rows=%d cols=%d beta=%g bias=%d", fused_name(act), rows,
             cols, beta, with_bias);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols;
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    float *db0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    float *d_y = dev_floats(y, n), *d_dy = dev_floats(dy, n), *d_dx = dev_poison_floats(n);
    float *d_db = with_bias ? dev_floats(db0, (size_t)cols) : NULL;
    if (GPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = DTYPE_F32, .y = d_y, .dy = d_dy, .dx = d_dx, .dbias = d_db, .rows = rows,
                 .cols = cols, .beta = beta})) return;
    float *want_dx = poisoned(n), *want_db = copy_of(db0, (size_t)cols);
    CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){.dtype = DTYPE_F32,
             .y = y, .dy = dy, .dx = want_dx, .dbias = with_bias ? want_db : NULL, .rows = rows,
             .cols = cols, .beta = beta});
    float *got_dx = fetch(d_dx, n);
    compare("activation_bias_backward", "dx", got_dx, want_dx, absolute(dy, n), n);
    // The op promises the unfused GPU ops' bits (activation_backward from y, then sum_rows),
    // so that a dense layer trains the same fused or not: check it exactly.
    float *u_dx = dev_poison_floats(n);
    if (GPU_CALL(activation_backward, &(ActivationBackwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = d_y, .y = d_y, .dy = d_dy,
                 .dx = u_dx, .n = n, .accumulate = 0}))
        return;
    compare_exact("activation_bias_backward", "dx vs activation_backward on the GPU", got_dx,
                  fetch(u_dx, n), n, 0, 0);
    if (!with_bias) return;
    float *got_db = fetch(d_db, (size_t)cols);
    float *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(db0, (size_t)cols);
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(want_dx, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("activation_bias_backward", "dbias", got_db, want_db, mag, (size_t)cols);
    float *u_db = dev_floats(db0, (size_t)cols);
    if (GPU_CALL(sum_rows, &(SumRowsArgs){.out = u_db, .x = u_dx, .x_dtype = DTYPE_F32,
                 .rows = rows, .cols = cols, .beta = beta})) return;
    compare_exact("activation_bias_backward", "dbias vs sum_rows on the GPU", got_db,
                  fetch(u_db, (size_t)cols), (size_t)cols, 0, 0);
}

static void test_activation_bias_backward(void) {
    REQUIRE(activation_bias_backward);
    // Odd shapes, one row or column, more columns than one block's tile, the dense layers
    // of mlp and lenet at batch 1024, and rows split into two chunks, one row short.
    static const int shapes[][2] = {{1, 1}, {3, 5}, {1, 1000}, {1000, 1}, {129, 257},
                                    {1024, 256}, {1024, 128}, {60000, 3}, {257, 33}};
    static const float betas[] = {0.0f, 1.0f, 0.5f};
    for (int a = 1; a < FUSED_ACTIVATIONS; a++) {
        if (fused_activations[a].kind == ACTIVATION_GELU) continue;  // not from its output
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t k = 0; k < sizeof betas / sizeof betas[0]; k++) {
                activation_bias_backward_case(&fused_activations[a], shapes[s][0], shapes[s][1],
                                              betas[k], 1);
                end_case();
            }
        activation_bias_backward_case(&fused_activations[a], 37, 41, 0.0f, 0);
        end_case();
    }
}

static void dropout_forward_case(size_t n, float rate, uint64_t seed) {
    snprintf(shape, sizeof shape, "n=%zu rate=%g seed=%llu", n, rate, (unsigned long long)seed);
    Status st;
    status_clear(&st);
    float *x = uniform(n, -2.0f, 2.0f);
    float *d_x = dev_floats(x, n), *d_y = dev_poison_floats(n), *d_mask = dev_poison_floats(n);
    if (GPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = d_x, .y = d_y,
                 .mask = d_mask, .n = n, .rate = rate, .seed = seed})) return;
    float *want_y = poisoned(n), *want_mask = poisoned(n);
    CPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x, .y = want_y,
             .mask = want_mask, .n = n, .rate = rate, .seed = seed});
    compare_exact("dropout_forward", "mask", fetch(d_mask, n), want_mask, n, 0, 0);
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++) mag[i] = fabsf(x[i]) / (1.0f - rate);
    compare("dropout_forward", "y", fetch(d_y, n), want_y, mag, n);
}

static void dropout_backward_case(size_t n, float rate, uint64_t seed, int accumulate) {
    snprintf(shape, sizeof shape, "n=%zu rate=%g seed=%llu accumulate=%d", n, rate,
             (unsigned long long)seed, accumulate);
    Status st;
    status_clear(&st);
    float *x = uniform(n, -2.0f, 2.0f), *y = floats(n), *mask = floats(n);
    if (CPU_CALL(dropout_forward, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x, .y = y,
                 .mask = mask, .n = n, .rate = rate, .seed = seed})) return;
    float *dy = uniform(n, -1.0f, 1.0f);
    float *dx0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_dy = dev_floats(dy, n), *d_mask = dev_floats(mask, n), *d_dx = dev_floats(dx0, n);
    if (GPU_CALL(dropout_backward, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = d_dy,
                 .mask = d_mask, .dx = d_dx, .n = n, .accumulate = accumulate})) return;
    float *want = copy_of(dx0, n);
    CPU_CALL(dropout_backward, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = dy, .mask = mask,
             .dx = want, .n = n, .accumulate = accumulate});
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++)
        mag[i] = fabsf(dy[i] * mask[i]) + (accumulate ? fabsf(dx0[i]) : 0.0f);
    compare("dropout_backward", "dx", fetch(d_dx, n), want, mag, n);
}

static void test_dropout(void) {
    static const size_t sizes[] = {1, 1001, 65537};
    static const float rates[] = {0.0f, 0.1f, 0.5f, 0.9f};
    static const uint64_t seeds[] = {0, 1, 0xDEADBEEFCAFEF00Dull};
    if (HAVE(dropout_forward)) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
                for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
                    dropout_forward_case(sizes[s], rates[r], seeds[k]);
                    end_case();
                }
        dropout_forward_case(BIG_N, 0.5f, 0x9E3779B97F4A7C15ull);
        end_case();
    }
    if (HAVE(dropout_backward)) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int acc = 0; acc <= 1; acc++) {
                dropout_backward_case(sizes[s], 0.5f, 7, acc);
                end_case();
                dropout_backward_case(sizes[s], 0.1f, 0xDEADBEEFCAFEF00Dull, acc);
                end_case();
            }
    }
}

// ---- activations stored in bf16 or f16 (--precision bf16|fp16): parity_harness.c ----

static void activation_bias_backward16_case(const FusedActivation *act, int rows, int cols,
                                            float beta, int with_bias) {
    snprintf(shape, sizeof shape, "%s %s rows=%d cols=%d beta=%g bias=%d",
             dtype_name(storage_dtype), fused_name(act), rows, cols, beta, with_bias);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * cols, bytes = n * dtype_size(storage_dtype);
    float *x = activation_inputs(n), *y = floats(n), *dy = uniform(n, -1.0f, 1.0f);
    if (CPU_CALL(activation_forward, &(ActivationForwardArgs){.kind = act->kind,
                 .slope = act->slope, .dtype = DTYPE_F32, .x = x, .y = y, .n = n})) return;
    void *y16 = stored(y, n, storage_dtype), *dy16 = stored(dy, n, storage_dtype);
    float *db0 = beta == 0.0f ? poisoned((size_t)cols) : uniform((size_t)cols, -1.0f, 1.0f);
    void *d_y = dev_copy(y16, bytes), *d_dy = dev_copy(dy16, bytes), *d_dx = dev_poisoned(bytes);
    float *d_db = with_bias ? dev_floats(db0, (size_t)cols) : NULL;
    if (GPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = storage_dtype, .y = d_y, .dy = d_dy, .dx = d_dx, .dbias = d_db,
                 .rows = rows, .cols = cols, .beta = beta}))
        return;
    void *want_dx = host_alloc(bytes);
    float *want_db = copy_of(db0, (size_t)cols);
    if (CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){
                 .dtype = storage_dtype, .y = y16, .dy = dy16, .dx = want_dx,
                 .dbias = with_bias ? want_db : NULL, .rows = rows, .cols = cols, .beta = beta}))
        return;
    double saved = rtol;
    rtol = storage_rtol(storage_dtype);
    compare("activation_bias_backward", "dx", fetch_widened(d_dx, n, storage_dtype),
            widened(want_dx, n, storage_dtype), absolute(dy, n), n);
    rtol = saved;
    if (!with_bias) return;
    // The bias gradient sums the unrounded f32 dx on both: the fp32 tolerance.
    float *dx_f32 = floats(n), *mag = beta == 0.0f ? zeros((size_t)cols) : absolute(db0, (size_t)cols);
    CPU_CALL(activation_bias_backward, act, &(ActivationBiasBackwardTensors){.dtype = DTYPE_F32,
             .y = y, .dy = dy, .dx = dx_f32, .dbias = NULL, .rows = rows, .cols = cols, .beta = 0.0f
             });
    CPU_CALL(sum_rows, &(SumRowsArgs){.out = mag, .x = absolute(dx_f32, n), .x_dtype = DTYPE_F32,
             .rows = rows, .cols = cols, .beta = fabsf(beta)});
    compare("activation_bias_backward", "dbias", fetch(d_db, (size_t)cols), want_db, mag,
            (size_t)cols);
}

static void test_activation_bias_backward16(void) {
    // The last: the wide MLP's hidden layers at batch 4096, rows in 16 chunks.
    static const int act_shapes[][2] = {{1, 1}, {3, 5}, {129, 257}, {1024, 256}, {4096, 4096}};
    for (int a = 1; a < FUSED_ACTIVATIONS; a++) {
        if (fused_activations[a].kind == ACTIVATION_GELU) continue;  // not from its output
        for (size_t s = 0; s < sizeof act_shapes / sizeof act_shapes[0]; s++) {
            activation_bias_backward16_case(&fused_activations[a], act_shapes[s][0],
                                            act_shapes[s][1], s & 1 ? 0.5f : 0.0f, 1);
            end_case();
        }
        activation_bias_backward16_case(&fused_activations[a], 37, 41, 0.0f, 0);
        end_case();
    }
}

static void run(const ParityPass *pass) {
    switch (pass->kind) {
    case PARITY_FP32:
        if (section("activations, dropout")) {
            test_activations();
            test_dropout();
        }
        if (section("activation and bias gradients in one pass")) test_activation_bias_backward();
        break;
    case PARITY_REDUCED:
        if (section("activations stored in 16 bits (activation_bias_backward)"))
            test_activation_bias_backward16();
        break;
    default:
        break;
    }
}

PARITY_MAIN("test_cuda_parity_elementwise", BACKEND_ELEMENTWISE_OPS, PARITY_REDUCED, run)
