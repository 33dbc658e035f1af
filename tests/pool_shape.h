// A pooling window over an image batch as the 16-bit pooling tests list it
// (tests/unit/test_storage16_pool.c, tests/gpu/test_cuda_parity16_pool.c), and the
// Pool2dGeometry it describes, with the sizes of its input and output.
#ifndef TRAINER_TESTS_POOL_SHAPE_H
#define TRAINER_TESTS_POOL_SHAPE_H

#include "kernels/backend.h"

#include <stddef.h>

typedef struct PoolShape {
    int n, c, h, w;  // input
    int kh, kw;      // window
    int sh, sw;      // stride
    int ph, pw;      // padding, top/left and bottom/right
    const char *what;  // what the case is for, in messages (may be left out)
} PoolShape;

static inline Pool2dGeometry pool_geometry_of(const PoolShape *s) {
    return (Pool2dGeometry){.batch = s->n, .channels = s->c, .in_h = s->h, .in_w = s->w,
                            .out_h = (s->h + 2 * s->ph - s->kh) / s->sh + 1,
                            .out_w = (s->w + 2 * s->pw - s->kw) / s->sw + 1,
                            .kernel_h = s->kh, .kernel_w = s->kw, .stride_h = s->sh,
                            .stride_w = s->sw, .pad_top = s->ph, .pad_left = s->pw};
}

static inline size_t pool_inputs_of(const Pool2dGeometry *g) {
    return (size_t)g->batch * g->channels * g->in_h * g->in_w;
}

static inline size_t pool_outputs_of(const Pool2dGeometry *g) {
    return (size_t)g->batch * g->channels * g->out_h * g->out_w;
}

#endif
