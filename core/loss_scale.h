// Dynamic loss scaling for --precision fp16, the scheme of PyTorch's GradScaler.
//
// fp16 keeps 11 significant bits down to 6e-8 (subnormal) and up to 65504. Under
// --precision fp16 the GPU rounds each GEMM's and convolution's inputs to fp16, in
// backward too, where gradients of 1e-8 and below are common: they would round to zero.
// So the loss's gradient is multiplied by a scale S (65536 to start) before backward, every
// gradient comes out S times too large, well inside fp16's range, and is divided by S
// again (exactly: S is a power of two) before clipping and the update. When S is too
// large, some product overflows and a gradient holds inf or NaN: that step is skipped (no
// update), S is halved, and the log says so. After LOSS_SCALE_GROWTH_INTERVAL clean steps
// in a row S doubles, to find again the largest scale that does not overflow.
//
// Parameters, their gradients and the optimizer state stay f32 throughout (activations may
// be f16: an overflow there reaches the parameter gradients as inf or NaN); the backend
// independent part (the state machine, the check and the division) is here, and the CPU
// backend runs it too (tests/unit/test_loss_scale.c).
#ifndef TRAINER_LOSS_SCALE_H
#define TRAINER_LOSS_SCALE_H

#include "core/graph.h"

#define LOSS_SCALE_INITIAL 65536.0          // 2^16, GradScaler's init_scale
#define LOSS_SCALE_GROWTH_INTERVAL 2000     // GradScaler's growth_interval
// Below this the gradients themselves are not finite (a NaN, or values past fp32 even
// unscaled): skipping more steps cannot help, so training stops with an error.
#define LOSS_SCALE_MINIMUM (1.0 / 65536.0)

typedef struct LossScaler {
    double scale;        // what the loss's gradient is multiplied by
    int clean_steps;     // steps since the last overflow or growth
    long skipped_steps;  // over the run
} LossScaler;

typedef enum LossScaleEvent {
    LOSS_SCALE_KEPT,       // a clean step, the scale unchanged
    LOSS_SCALE_DOUBLED,    // the growth interval's last clean step
    LOSS_SCALE_HALVED,     // an overflow: skip the step
    LOSS_SCALE_TOO_SMALL,  // an overflow with the scale already below LOSS_SCALE_MINIMUM
} LossScaleEvent;

// initial <= 0: LOSS_SCALE_INITIAL.
void loss_scaler_init(LossScaler *s, double initial);
// After a step's gradients were checked (overflow: one of them is not finite).
LossScaleEvent loss_scaler_update(LossScaler *s, int overflow);

// *finite = every trainable gradient of g is finite (one device read for all of them).
int loss_scale_gradients_finite(Graph *g, const Backend *b, Allocator *a, int *finite,
                                Status *st);
// After a backward with the loss scaled by s->scale: *scale = that scale (what to unscale
// by), then s updated from whether every trainable gradient of g is finite; *event says
// which way. LOSS_SCALE_TOO_SMALL is returned as an error instead, naming `step` of `what`
// ("the run") with `hint`. Training and `trainer bench train` both step through here.
int loss_scale_check(Graph *g, const Backend *b, Allocator *a, LossScaler *s, long step,
                     const char *what, const char *hint, LossScaleEvent *event, double *scale,
                     Status *st);
// Divides every trainable gradient of g by `scale`, undoing the scaled loss.
int loss_scale_unscale_gradients(Graph *g, const Backend *b, double scale, Status *st);

#endif
