#include "core/loss_scale.h"

#include <float.h>
#include <math.h>

#include "core/tensor_norms.h"

void loss_scaler_init(LossScaler *s, double initial) {
    s->scale = initial > 0.0 ? initial : LOSS_SCALE_INITIAL;
    s->clean_steps = 0;
    s->skipped_steps = 0;
}

LossScaleEvent loss_scaler_update(LossScaler *s, int overflow) {
    if (overflow) {
        s->skipped_steps++;
        s->clean_steps = 0;
        if (s->scale < LOSS_SCALE_MINIMUM) return LOSS_SCALE_TOO_SMALL;
        s->scale *= 0.5;
        return LOSS_SCALE_HALVED;
    }
    if (++s->clean_steps < LOSS_SCALE_GROWTH_INTERVAL) return LOSS_SCALE_KEPT;
    s->clean_steps = 0;
    s->scale *= 2.0;
    return LOSS_SCALE_DOUBLED;
}


// A sum of squares accumulated in double is finite exactly when every f32 value is
// (kernels/backend.h, sum_squares), so one read of all the sums answers for every value.
int loss_scale_gradients_finite(Graph *g, const Backend *b, Allocator *a, int *finite,
                                Status *st) {
    *finite = 1;
    TrainableGradients t;
    TRY(trainable_gradients_open(g, &t, st));
    int rc = tensor_sums_of_squares(b, a, t.grads, t.count, t.sums, st);
    for (int i = 0; !rc && i < t.count; i++)
        if (!isfinite(t.sums[i])) *finite = 0;
    trainable_gradients_close(&t);
    return rc;
}

int loss_scale_check(Graph *g, const Backend *b, Allocator *a, LossScaler *s, long step,
                     const char *what, const char *hint, LossScaleEvent *event, double *scale,
                     Status *st) {
    int finite = 1;
    TRY(loss_scale_gradients_finite(g, b, a, &finite, st));
    *scale = s->scale;
    *event = loss_scaler_update(s, !finite);
    if (*event != LOSS_SCALE_TOO_SMALL) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "fp16 loss scaling: the gradients are not finite even "
                "with the loss scaled by %g (step %ld of %s, %ld steps skipped)", *scale, step,
                what, s->skipped_steps);
    status_hint(st, "%s", hint);
    return STATUS_RUNTIME_ERROR;
}

static int scale_gradients(Graph *g, const Backend *b, float factor, Status *st) {
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            Param *p = &g->layers[i]->params[k];
            if (!p->buffer && p->grad.data)
                TRY(b->scale(b, tensor_f32(&p->grad), factor, tensor_numel(&p->grad), st));
        }
    return 0;
}

// 1/scale is a power of two, so dividing is exact. Past a scale of 2^126 it is a subnormal
// float, which the CPU's flush-to-zero mode reads as 0: then it is applied in two normal
// steps.
int loss_scale_unscale_gradients(Graph *g, const Backend *b, double scale, Status *st) {
    double factor = 1.0 / scale;
    if (factor < FLT_MIN) {
        TRY(scale_gradients(g, b, 0x1p-64f, st));
        factor *= 0x1p64;
    }
    return scale_gradients(g, b, (float)factor, st);
}
