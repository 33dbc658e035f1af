// What the two loss kinds share: their state is the per-sample LossRows (core/layer.h) on
// the device, and the rule that a loss reads a flat vector of class scores.
#ifndef TRAINER_LOSS_COMMON_H
#define TRAINER_LOSS_COMMON_H

#include "core/layer.h"

int loss_infer_scores(Layer *l, int min_classes, Status *st);
int loss_allocate_rows(Layer *l, const LayerContext *ctx, int batch, Status *st);
int loss_planned_rows(const Layer *l, const Backend *b, int batch, size_t *state,
                      size_t *workspace, Status *st);
void loss_release_rows(Layer *l);
// A loss's state is its LossRows (allocated by loss_allocate_rows).
const LossRows *loss_state_rows(const Layer *l);
static inline int loss_classes(const Layer *l) { return l->out_shape.dims[0]; }

#endif
