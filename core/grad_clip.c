#include "core/grad_clip.h"

#include <math.h>
#include <stdlib.h>

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
    int capacity = g->count * LAYER_MAX_PARAMS;
    const Tensor **grads = malloc((size_t)(capacity ? capacity : 1) * sizeof *grads);
    double *sums = malloc((size_t)(capacity ? capacity : 1) * sizeof *sums);
    int rc = grads && sums ? 0 : status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    int count = rc ? 0 : graph_trainable_gradients(g, grads);
    if (!rc) rc = clip_over(b, a, grads, count, sums, max_norm, norm, st);
    free(grads);
    free(sums);
    return rc;
}
