// Sums of squares of many tensors with one read back to the host: what gradient clipping
// and the search for a non-finite value both need.
#ifndef TRAINER_TENSOR_NORMS_H
#define TRAINER_TENSOR_NORMS_H

#include "core/graph.h"
#include "core/tensor.h"
#include "kernels/backend.h"

// sums[i] = the sum of squares of tensors[i]'s f32 values (0 for an unallocated tensor).
// The sums wait on the device, in memory from `a`, until one copy brings them all back,
// so a GPU is synchronised once rather than once per tensor.
int tensor_sums_of_squares(const Backend *b, Allocator *a, const Tensor **tensors,
                           int count, double *sums, Status *st);
// The gradients of g's trainable parameters (not buffers such as batchnorm's running
// statistics), with host room for a sum of squares each: what clipping and fp16's overflow
// check both start from.
typedef struct TrainableGradients {
    const Tensor **grads;
    double *sums;
    int count;
} TrainableGradients;
int trainable_gradients_open(const Graph *g, TrainableGradients *out, Status *st);
void trainable_gradients_close(TrainableGradients *t);

#endif
