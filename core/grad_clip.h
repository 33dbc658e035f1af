// Gradient clipping by global norm, as PyTorch's clip_grad_norm_ does it: the L2 norm over
// every trainable parameter's gradient taken together (buffers have none), and when it
// exceeds max_norm every gradient is scaled by max_norm / (norm + 1e-6), so the update
// keeps its direction and only its length is capped.
#ifndef TRAINER_GRAD_CLIP_H
#define TRAINER_GRAD_CLIP_H

#include "core/graph.h"

// *norm (may be NULL) receives the norm before clipping.
int clip_gradients(Graph *g, const Backend *b, Allocator *a, double max_norm, double *norm,
                   Status *st);

#endif
