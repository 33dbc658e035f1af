// The CUDA backend against the CPU reference, the losses (kernels/backend.h); parity_harness.c
// says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// rows x classes scores, offset + U(-5, 5), rerolled until each row has one largest value,
// so argmax (row_stats' second column) is well defined on any backend.
static float *scores(int rows, int classes, float offset) {
    float *z = floats((size_t)rows * classes);
    for (int r = 0; r < rows; r++) {
        float *row = z + (size_t)r * classes;
        for (;;) {
            int best = 0, tied = 0;
            for (int c = 0; c < classes; c++) row[c] = offset - 5.0f + 10.0f * rng_uniform(&rng);
            for (int c = 1; c < classes; c++) {
                if (row[c] > row[best]) best = c, tied = 0;
                else if (row[c] == row[best]) tied = 1;
            }
            if (!tied) break;
        }
    }
    return z;
}

static int32_t *labels_for(int rows, int classes) {
    int32_t *labels = host_alloc((size_t)rows * sizeof *labels);
    for (int r = 0; r < rows; r++) labels[r] = (int32_t)rng_below(&rng, (uint32_t)classes);
    return labels;
}

// A loss op's [rows][2] row_stats as its two columns: each row's loss, and whether it was
// right.
static void split_row_stats(const float *row_stats, int rows, float **loss, float **correct) {
    *loss = floats((size_t)rows);
    *correct = floats((size_t)rows);
    for (int r = 0; r < rows; r++) {
        (*loss)[r] = row_stats[2 * (size_t)r];
        (*correct)[r] = row_stats[2 * (size_t)r + 1];
    }
}

static const int loss_shapes[][2] = {{1, 1}, {1, 10}, {7, 3}, {128, 10}, {33, 1000}, {5, 4099},
                                     {1024, 10}};
enum { LOSS_SHAPES = sizeof loss_shapes / sizeof loss_shapes[0] };

// with_gradient: the forward training runs, which also writes the logits' gradient; it
// must be the CPU's, and bit for bit what the GPU's own backward makes from its probs.
static void softmax_forward_case(int rows, int classes, float offset, int with_gradient) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d logits %+g + U(-5,5) gradient=%d", rows,
             classes, offset, with_gradient);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float scale = 1.0f / (float)rows;
    float *z = scores(rows, classes, offset);
    int32_t *labels = labels_for(rows, classes);
    float *d_z = dev_floats(z, n), *d_probs = dev_poison_floats(n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    float *d_stats = dev_poison_floats(2 * (size_t)rows);
    float *d_grad = with_gradient ? dev_poison_floats(n) : NULL;
    if (GPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = d_z,
                 .labels = d_labels, .rows = rows, .classes = classes, .probs = d_probs,
                 .row_stats = d_stats, .dlogits = d_grad, .scale = scale}))
        return;
    float *probs = poisoned(n), *row_stats = poisoned(2 * (size_t)rows), *loss, *correct;
    float *grad = with_gradient ? poisoned(n) : NULL;
    CPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = z,
             .labels = labels, .rows = rows, .classes = classes, .probs = probs,
             .row_stats = row_stats, .dlogits = grad, .scale = scale});
    split_row_stats(row_stats, rows, &loss, &correct);
    float *gpu_loss, *gpu_correct;
    split_row_stats(fetch(d_stats, 2 * (size_t)rows), rows, &gpu_loss, &gpu_correct);
    // Probabilities relative to themselves (exp and a division, no cancellation). The loss
    // is log(sum) + (max - z[label]), two terms >= 0, so relative too, except that a float
    // log(sum) near log(1) is off by ~6e-8 absolute: hence the 0.01.
    float *loss_mag = floats((size_t)rows);
    for (int r = 0; r < rows; r++) loss_mag[r] = fabsf(loss[r]) + 0.01f;
    compare("softmax_cross_entropy_forward", "probs", fetch(d_probs, n), probs, NULL, n);
    compare("softmax_cross_entropy_forward", "row_stats (loss)", gpu_loss, loss, loss_mag,
            (size_t)rows);
    compare_exact("softmax_cross_entropy_forward", "row_stats (correct)", gpu_correct, correct,
                  (size_t)rows, 0, 0);
    if (!with_gradient) return;
    float *mag = floats(n);
    for (size_t i = 0; i < n; i++)
        mag[i] = (probs[i] + (labels[i / (size_t)classes] == (int32_t)(i % (size_t)classes))) * scale;
    float *gpu_grad = fetch(d_grad, n);
    compare("softmax_cross_entropy_forward", "dlogits", gpu_grad, grad, mag, n);
    float *d_backward = dev_poison_floats(n);
    if (GPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){
                 .probs = d_probs, .labels = d_labels, .rows = rows, .classes = classes,
                 .scale = scale, .dlogits = d_backward, .accumulate = 0}))
        return;
    compare_exact("softmax_cross_entropy_forward", "dlogits (= the GPU's backward)", gpu_grad,
                  fetch(d_backward, n), n, 0, 0);
}

static void softmax_backward_case(int rows, int classes, int accumulate) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d accumulate=%d", rows, classes, accumulate);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *z = scores(rows, classes, 0.0f), *probs = floats(n);
    float *row_stats = floats(2 * (size_t)rows);
    int32_t *labels = labels_for(rows, classes);
    if (CPU_CALL(softmax_cross_entropy_forward, &(SoftmaxCrossEntropyForwardArgs){.logits = z,
                 .labels = labels, .rows = rows, .classes = classes, .probs = probs,
                 .row_stats = row_stats, .dlogits = NULL, .scale = 0.0f}))
        return;
    float scale = 1.0f / (float)rows;
    float *d0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_probs = dev_floats(probs, n), *d_d = dev_floats(d0, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    if (GPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){
                 .probs = d_probs, .labels = d_labels, .rows = rows, .classes = classes,
                 .scale = scale, .dlogits = d_d, .accumulate = accumulate}))
        return;
    float *want = copy_of(d0, n), *mag = floats(n);
    CPU_CALL(softmax_cross_entropy_backward, &(SoftmaxCrossEntropyBackwardArgs){.probs = probs,
             .labels = labels, .rows = rows, .classes = classes, .scale = scale, .dlogits = want,
             .accumulate = accumulate});
    for (size_t i = 0; i < n; i++)
        mag[i] = (probs[i] + (labels[i / (size_t)classes] == (int32_t)(i % (size_t)classes))) * scale +
                 (accumulate ? fabsf(d0[i]) : 0.0f);
    compare("softmax_cross_entropy_backward", "dlogits", fetch(d_d, n), want, mag, n);
}

static void mse_forward_case(int rows, int classes) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d", rows, classes);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *y = scores(rows, classes, 0.0f);
    for (size_t i = 0; i < n; i++) y[i] *= 0.3f;  // around the one-hot targets
    int32_t *labels = labels_for(rows, classes);
    float *d_y = dev_floats(y, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    float *d_stats = dev_poison_floats(2 * (size_t)rows);
    if (GPU_CALL(mse_forward, &(MseForwardArgs){.predictions = d_y, .labels = d_labels,
                 .rows = rows, .classes = classes, .row_stats = d_stats})) return;
    float *row_stats = poisoned(2 * (size_t)rows), *loss, *correct, *gpu_loss, *gpu_correct;
    CPU_CALL(mse_forward, &(MseForwardArgs){.predictions = y, .labels = labels, .rows = rows,
             .classes = classes, .row_stats = row_stats});
    split_row_stats(row_stats, rows, &loss, &correct);
    split_row_stats(fetch(d_stats, 2 * (size_t)rows), rows, &gpu_loss, &gpu_correct);
    // A sum of squares: every term >= 0, so relative to the result.
    compare("mse_forward", "row_stats (loss)", gpu_loss, loss, NULL, (size_t)rows);
    compare_exact("mse_forward", "row_stats (correct)", gpu_correct, correct, (size_t)rows, 0, 0);
}

static void mse_backward_case(int rows, int classes, int accumulate) {
    snprintf(shape, sizeof shape, "rows=%d classes=%d accumulate=%d", rows, classes, accumulate);
    Status st;
    status_clear(&st);
    size_t n = (size_t)rows * classes;
    float *y = uniform(n, -1.5f, 1.5f);
    int32_t *labels = labels_for(rows, classes);
    float scale = 1.0f / (float)rows;
    float *d0 = accumulate ? uniform(n, -1.0f, 1.0f) : poisoned(n);
    float *d_y = dev_floats(y, n), *d_d = dev_floats(d0, n);
    int32_t *d_labels = dev_copy(labels, (size_t)rows * sizeof *labels);
    if (GPU_CALL(mse_backward, &(MseBackwardArgs){.predictions = d_y, .labels = d_labels,
                 .rows = rows, .classes = classes, .scale = scale, .dpredictions = d_d,
                 .accumulate = accumulate})) return;
    float *want = copy_of(d0, n), *mag = floats(n);
    CPU_CALL(mse_backward, &(MseBackwardArgs){.predictions = y, .labels = labels, .rows = rows,
             .classes = classes, .scale = scale, .dpredictions = want, .accumulate = accumulate});
    for (size_t i = 0; i < n; i++)
        mag[i] = 2.0f * (fabsf(y[i]) + 1.0f) * scale + (accumulate ? fabsf(d0[i]) : 0.0f);
    compare("mse_backward", "dpredictions", fetch(d_d, n), want, mag, n);
}

static void test_losses(void) {
    if (HAVE(softmax_cross_entropy_forward)) {
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int with_gradient = 0; with_gradient <= 1; with_gradient++) {
                softmax_forward_case(loss_shapes[s][0], loss_shapes[s][1], 0.0f, with_gradient);
                end_case();
            }
        // Far from 0, where exp() without subtracting the row's max overflows (+100) or
        // underflows to a zero sum (-100).
        for (int with_gradient = 0; with_gradient <= 1; with_gradient++) {
            softmax_forward_case(64, 10, 100.0f, with_gradient);
            end_case();
            softmax_forward_case(64, 10, -100.0f, with_gradient);
            end_case();
        }
    }
    if (HAVE(softmax_cross_entropy_backward))
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                softmax_backward_case(loss_shapes[s][0], loss_shapes[s][1], acc);
                end_case();
            }
    if (HAVE(mse_forward))
        for (int s = 0; s < LOSS_SHAPES; s++) {
            mse_forward_case(loss_shapes[s][0], loss_shapes[s][1]);
            end_case();
        }
    if (HAVE(mse_backward))
        for (int s = 0; s < LOSS_SHAPES; s++)
            for (int acc = 0; acc <= 1; acc++) {
                mse_backward_case(loss_shapes[s][0], loss_shapes[s][1], acc);
                end_case();
            }
}

static void run(const ParityPass *pass) {
    (void)pass;
    if (section("losses")) test_losses();
}

PARITY_MAIN("test_cuda_parity_losses", BACKEND_LOSS_OPS, 0, run)
