// After the loss went NaN or infinite: which layer it started at. Parameter values (an
// update's doing) are searched first, then outputs in execution order, then gradients in the
// order backward writes them (last layer first), so the layer named is the first whose
// values stopped being finite; when every parameter is, that is said instead.
#ifndef TRAINER_NONFINITE_H
#define TRAINER_NONFINITE_H

#include "core/graph.h"

typedef struct NonfiniteSite {
    const Layer *layer;   // NULL: every output and gradient is finite, or `everywhere`
    int everywhere;       // every parameter's value is non-finite: which went first is unknown
    // "the output", "the gradient of the output", "the gradient of parameter 'dense1.weight'"
    char what[128];
} NonfiniteSite;

int find_first_nonfinite(const Graph *g, const Backend *b, Allocator *a, NonfiniteSite *site,
                         Status *st);
// The same after a forward pass alone (an evaluation): parameter values, then outputs;
// the gradients, which no backward wrote, are not searched.
int find_first_nonfinite_forward(const Graph *g, const Backend *b, Allocator *a,
                                 NonfiniteSite *site, Status *st);

#endif
