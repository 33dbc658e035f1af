// Gradients summed over the processes of an mpirun launch, in buckets started while backward
// is still running (DESIGN.md section 6; docs/distributed.md), as PyTorch's DDP does.
//
// Backward reaches the layers last to first; once a layer's backward has run on the step's
// last pass, its parameter gradients are final. They are copied, in that order, into one
// flat buffer, and each time `bucket_values` of them have gathered, a sum over the
// processes is started on that stretch of the buffer, so that the sum of the last layers
// travels while the first layers still compute. After backward the rest is started,
// everything is waited for, and the sums are copied back. Every process starts the same
// buckets in the same order: their bounds depend only on the model.
//
// This file keeps the books (which parameters, in which order, the bucket bounds, when a
// bucket is complete); a GradSums does the summing: MPI on host memory for CPU ranks, NCCL
// on a communication stream for GPU ranks (core/grad_sums.h), a recording fake in
// tests/unit/test_grad_buckets.c.
#ifndef TRAINER_GRAD_BUCKETS_H
#define TRAINER_GRAD_BUCKETS_H

#include <stddef.h>

#include "core/graph.h"

// Sums over the processes of stretches of one flat buffer of `total` floats.
typedef struct GradSums GradSums;
struct GradSums {
    float *flat;
    int on_device;   // flat is device memory of the gradients' backend, else host memory
    void *impl;
    // Starts summing flat[offset, offset + count) in place; returns without waiting. Every
    // process calls it with the same stretches in the same order.
    int (*start)(GradSums *s, size_t offset, size_t count, Status *st);
    // Lets started sums move along while backward goes on; may be NULL.
    void (*progress)(GradSums *s);
    // Every started sum is complete before anything the caller does next reads `flat`
    // (MPI: returns once they are; NCCL: the compute stream waits, the host does not).
    int (*finish)(GradSums *s, Status *st);
    // Seconds the steps waited for their sums, over the run so far; *measured 0 when the
    // implementation cannot say.
    int (*waited)(GradSums *s, double *seconds, int *measured, Status *st);
    void (*close)(GradSums *s);
};

typedef struct GradSlot {
    Param *param;
    const Layer *layer;
    size_t offset, count;   // where its gradient sits in `flat`
} GradSlot;

typedef struct GradBuckets {
    const Backend *backend;
    size_t bucket_values;   // floats per bucket; 0: one sum after backward (no overlap)
    GradSlot *slots;        // trainable parameters in the order backward finishes them
    int slot_count;
    size_t total;           // floats of every slot
    GradSums sums;          // opened by the caller once `total` is known
    int next_slot;          // slots before it are in `flat` for this step
    size_t started;         // flat[0, started) is being summed
    long steps;
} GradBuckets;

// Lays out the slots; gb->sums is left for the caller to open over gb->total floats.
// bucket_mb <= 0: no overlap.
int grad_buckets_open(GradBuckets *gb, Graph *g, const Backend *b, double bucket_mb,
                      Status *st);
void grad_buckets_close(GradBuckets *gb);
// Before the step's passes.
void grad_buckets_start_step(GradBuckets *gb);
// LayerContext.after_layer_backward for the step's last pass (user: the GradBuckets).
int grad_buckets_after_layer(void *user, struct Layer *layer, Status *st);
// After backward: whatever backward did not reach (a process with no samples in the step)
// is copied and started, layer by layer as backward would have, so that every process
// starts the same buckets; every sum is waited for, and the gradients get the sums. A step
// redone in smaller passes after running out of memory keeps the buckets it already
// started: their gradients were final, and every process starts each bucket once.
int grad_buckets_finish(GradBuckets *gb, Status *st);

#endif
