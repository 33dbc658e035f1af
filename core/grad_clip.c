#include "core/grad_clip.h"

#include <math.h>

#include "core/tensor_norms.h"

// PyTorch's guard against dividing by a zero norm, kept so a clipped run matches its.
static const double CLIP_EPSILON = 1e-6;


static int scale_gradients(const Backend *b, const Tensor **grads, int count,
                           float factor, Status *st) {
    for (int i = 0; i < count; i++)
        TRY(b->scale(b, tensor_f32(grads[i]), factor, tensor_numel(grads[i]), st));
    return 0;
}

static int clip_over(const Backend *b, Allocator *a, const Tensor **grads, int count,
                     double *sums, double max_norm, double *norm, Status *st) {
    TRY(tensor_sums_of_squares(b, a, grads, count, sums, st));
    double total = 0.0;
    for (int i = 0; i < count; i++) total += sums[i];
    double global_norm = sqrt(total);
    if (norm) *norm = global_norm;
    double factor = max_norm / (global_norm + CLIP_EPSILON);
    // A non-finite norm is left for the divergence check to name, not spread by scaling.
    if (!isfinite(global_norm) || factor >= 1.0) return 0;
    return scale_gradients(b, grads, count, (float)factor, st);
}

int clip_gradients(Graph *g, const Backend *b, Allocator *a, double max_norm, double *norm,
                   Status *st) {
    TrainableGradients t;
    TRY(trainable_gradients_open(g, &t, st));
    int rc = clip_over(b, a, t.grads, t.count, t.sums, max_norm, norm, st);
    trainable_gradients_close(&t);
    return rc;
}
