#include <math.h>

#include "kernels/cpu/cpu_ops.h"

// Defined below, called earlier in this file.
static int cpu_softmax_cross_entropy_backward(const Backend *b,
                                              const SoftmaxCrossEntropyBackwardArgs *args,
                                              Status *st);

static int argmax(const float *row, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

static int cpu_softmax_cross_entropy_forward(const Backend *b,
                                             const SoftmaxCrossEntropyForwardArgs *args,
                                             Status *st) {
    for (int r = 0; r < args->rows; r++) {
        const float *z = args->logits + (size_t)r * args->classes;
        float *p = args->probs + (size_t)r * args->classes;
        // Subtracting the max keeps exp() finite; log-sum-exp gives the loss without
        // taking log of a probability that may have underflowed to 0.
        float max = z[0];
        for (int c = 1; c < args->classes; c++) max = z[c] > max ? z[c] : max;
        double sum = 0.0;
        for (int c = 0; c < args->classes; c++) {
            p[c] = expf(z[c] - max);
            sum += p[c];
        }
        float inv = (float)(1.0 / sum);
        for (int c = 0; c < args->classes; c++) p[c] *= inv;
        int label = args->labels[r];
        args->row_stats[2 * (size_t)r] = (float)(log(sum) - (double)(z[label] - max));
        args->row_stats[2 * (size_t)r + 1] = argmax(z, args->classes) == label ? 1.0f : 0.0f;
    }
    // The backward's own loop, on the probabilities just stored: the same bits.
    return args->dlogits ? cpu_softmax_cross_entropy_backward(
                               b,
                               &(SoftmaxCrossEntropyBackwardArgs){.probs = args->probs,
                                                                  .labels = args->labels,
                                                                  .rows = args->rows,
                                                                  .classes = args->classes,
                                                                  .scale = args->scale,
                                                                  .dlogits = args->dlogits,
                                                                  .accumulate = 0},
                               st)
                         : 0;
}

static int cpu_softmax_cross_entropy_backward(const Backend *b,
                                              const SoftmaxCrossEntropyBackwardArgs *args,
                                              Status *st) {
    for (int r = 0; r < args->rows; r++) {
        const float *p = args->probs + (size_t)r * args->classes;
        float *d = args->dlogits + (size_t)r * args->classes;
        for (int c = 0; c < args->classes; c++) {
            float g = (p[c] - (c == args->labels[r] ? 1.0f : 0.0f)) * args->scale;
            d[c] = args->accumulate ? d[c] + g : g;
        }
    }
    return 0;
}

static int cpu_mse_forward(const Backend *b, const MseForwardArgs *args, Status *st) {
    for (int r = 0; r < args->rows; r++) {
        const float *y = args->predictions + (size_t)r * args->classes;
        double sum = 0.0;
        for (int c = 0; c < args->classes; c++) {
            double diff = y[c] - (c == args->labels[r] ? 1.0 : 0.0);
            sum += diff * diff;
        }
        args->row_stats[2 * (size_t)r] = (float)sum;
        args->row_stats[2 * (size_t)r + 1] =
            argmax(y, args->classes) == args->labels[r] ? 1.0f : 0.0f;
    }
    return 0;
}

static int cpu_mse_backward(const Backend *b, const MseBackwardArgs *args, Status *st) {
    for (int r = 0; r < args->rows; r++) {
        const float *y = args->predictions + (size_t)r * args->classes;
        float *d = args->dpredictions + (size_t)r * args->classes;
        for (int c = 0; c < args->classes; c++) {
            float g = 2.0f * (y[c] - (c == args->labels[r] ? 1.0f : 0.0f)) * args->scale;
            d[c] = args->accumulate ? d[c] + g : g;
        }
    }
    return 0;
}

void cpu_register_loss_ops(Backend *table) {
    table->softmax_cross_entropy_forward = cpu_softmax_cross_entropy_forward;
    table->softmax_cross_entropy_backward = cpu_softmax_cross_entropy_backward;
    table->mse_forward = cpu_mse_forward;
    table->mse_backward = cpu_mse_backward;
}
