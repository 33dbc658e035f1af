// A tensor: a typed, shaped span of one device's memory. The first dimension is the
// batch when the tensor holds activations.
#ifndef TRAINER_TENSOR_H
#define TRAINER_TENSOR_H

#include <stddef.h>

#include "core/alloc.h"
#include "base/dtype.h"
#include "base/shape.h"

#define TENSOR_MAX_RANK (SHAPE_MAX_RANK + 1)

typedef struct Tensor {
    DType dtype;
    int rank;
    int dims[TENSOR_MAX_RANK];
    void *data;         // device memory; NULL until allocated
    size_t bytes;
    Allocator *owner;   // the allocator to return data to; NULL for a view
} Tensor;

size_t tensor_numel(const Tensor *t);
// Shape a tensor as [batch] + sample (batch <= 0: no batch dimension).
void tensor_set_shape(Tensor *t, DType dtype, int batch, const Shape *sample);
// Allocate data for the shape already set.
int tensor_alloc(Tensor *t, Allocator *a, Status *st);
// Make `view` share `base`'s memory with its own (equal-sized) shape.
void tensor_view(Tensor *view, const Tensor *base);
void tensor_free(Tensor *t);
static inline float *tensor_f32(const Tensor *t) { return (float *)t->data; }

#endif
