// After the loss went NaN or infinite: which layer it started at. Outputs are searched in
// execution order, then gradients in the order backward writes them (last layer first),
// so the layer named is the first whose values stopped being finite.
#ifndef TRAINER_NONFINITE_H
#define TRAINER_NONFINITE_H

#include "core/graph.h"

typedef struct NonfiniteSite {
    const Layer *layer;   // NULL: every output and gradient is finite
    // "the output", "the gradient of the output", "the gradient of parameter 'dense1.weight'"
    char what[128];
} NonfiniteSite;

int find_first_nonfinite(const Graph *g, const Backend *b, Allocator *a, NonfiniteSite *site,
                         Status *st);

#endif
