#include <math.h>

#include "kernels/cpu/cpu_ops.h"

static int argmax(const float *row, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

int cpu_softmax_cross_entropy_forward(const Backend *b, const float *logits, const int32_t *labels,
                                      int rows, int classes, float *probs, float *row_stats,
                                      float *dlogits, float scale, Status *st) {
    for (int r = 0; r < rows; r++) {
        const float *z = logits + (size_t)r * classes;
        float *p = probs + (size_t)r * classes;
        // Subtracting the max keeps exp() finite; log-sum-exp gives the loss without
        // taking log of a probability that may have underflowed to 0.
        float max = z[0];
        for (int c = 1; c < classes; c++) max = z[c] > max ? z[c] : max;
        double sum = 0.0;
        for (int c = 0; c < classes; c++) {
            p[c] = expf(z[c] - max);
            sum += p[c];
        }
        float inv = (float)(1.0 / sum);
        for (int c = 0; c < classes; c++) p[c] *= inv;
        int label = labels[r];
        row_stats[2 * (size_t)r] = (float)(log(sum) - (double)(z[label] - max));
        row_stats[2 * (size_t)r + 1] = argmax(z, classes) == label ? 1.0f : 0.0f;
    }
    // The backward's own loop, on the probabilities just stored: the same bits.
    return dlogits ? cpu_softmax_cross_entropy_backward(b, probs, labels, rows, classes, scale,
                                                        dlogits, 0, st)
                   : 0;
}

int cpu_softmax_cross_entropy_backward(const Backend *b, const float *probs, const int32_t *labels,
                                       int rows, int classes, float scale, float *dlogits,
                                       int accumulate, Status *st) {
    for (int r = 0; r < rows; r++) {
        const float *p = probs + (size_t)r * classes;
        float *d = dlogits + (size_t)r * classes;
        for (int c = 0; c < classes; c++) {
            float g = (p[c] - (c == labels[r] ? 1.0f : 0.0f)) * scale;
            d[c] = accumulate ? d[c] + g : g;
        }
    }
    return 0;
}

int cpu_mse_forward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                    int classes, float *row_stats, Status *st) {
    for (int r = 0; r < rows; r++) {
        const float *y = predictions + (size_t)r * classes;
        double sum = 0.0;
        for (int c = 0; c < classes; c++) {
            double diff = y[c] - (c == labels[r] ? 1.0 : 0.0);
            sum += diff * diff;
        }
        row_stats[2 * (size_t)r] = (float)sum;
        row_stats[2 * (size_t)r + 1] = argmax(y, classes) == labels[r] ? 1.0f : 0.0f;
    }
    return 0;
}

int cpu_mse_backward(const Backend *b, const float *predictions, const int32_t *labels, int rows,
                     int classes, float scale, float *dpredictions, int accumulate, Status *st) {
    for (int r = 0; r < rows; r++) {
        const float *y = predictions + (size_t)r * classes;
        float *d = dpredictions + (size_t)r * classes;
        for (int c = 0; c < classes; c++) {
            float g = 2.0f * (y[c] - (c == labels[r] ? 1.0f : 0.0f)) * scale;
            d[c] = accumulate ? d[c] + g : g;
        }
    }
    return 0;
}
