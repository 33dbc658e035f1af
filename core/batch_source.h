// Where a replica's samples come from.
//
// When the dataset fits on the device (Fashion-MNIST is 47 MB of bytes) it is copied there
// once and each load is gathered on the device from the shuffled indices, so a load moves
// only the indices across the bus. Otherwise loads are staged through the host: a prefetch
// thread (core/batch_prefetch.h) gathers the next loads into pinned buffers while the
// device runs the current pass, and each load is one asynchronous copy into the graph's
// input and labels.
//
// Staging allocates nothing on the device: the floats go straight into the input tensor
// the graph already holds, so the memory plan (core/memory_plan.h), which counts a staged
// dataset as 0 bytes, stays exact, and what the limit leaves goes to the batch. The
// price is 4 bytes per pixel on the bus instead of 1, and the host doing the conversion
// (on the prefetch thread, beside the step, not in front of it).
#ifndef TRAINER_BATCH_SOURCE_H
#define TRAINER_BATCH_SOURCE_H

#include "core/batch_prefetch.h"
#include "core/device.h"
#include "core/graph.h"

typedef struct BatchSource {
    const Dataset *dataset;
    const Backend *backend;
    int on_device;
    int capacity;                    // samples one load may carry
    int classes;                     // labels must lie in [0, classes)
    Tensor images, labels, indices;  // device copies (on_device)
    Tensor first_bad_sample;         // [1] int32 on the device: see Backend.gather_samples
    // Staged (!on_device): the order the prefetch thread follows (a copy: the Batcher
    // reshuffles its own at the next epoch) and the thread with its pinned buffers.
    int32_t *order;
    int order_length;
    Prefetcher prefetch;
} BatchSource;

// Uploads the dataset when it fits (see dataset_fits in batch_source.c), else sets up the
// staging buffers for loads of up to `capacity` samples.
int source_open(BatchSource *s, Device *d, const Dataset *ds, int capacity, int classes,
                Status *st);
// Joins the prefetch thread and frees everything. Safe on a zeroed or failed-open source.
void source_close(BatchSource *s);

// The loads coming next, so a staged source can prepare them (a resident one needs no
// notice): `order` (the Batcher's, NULL for dataset order) cut as LoadSchedule says,
// from the step that starts at order[step_start] on. Call it at the start of an epoch and
// again whenever the cut changes (a smaller micro_batch after running out of memory).
// source_load stays correct without it, only slower.
int source_expect(BatchSource *s, const int *order, int batch, int replicas, int replica,
                  int micro_batch, int step_start, Status *st);

// Loads samples indices[0..count) into the graph's input and labels.
int source_load(BatchSource *s, Graph *g, const Backend *b, const int32_t *indices, int count,
                Status *st);

// The device-side label check's verdict, read when the host syncs anyway (with the loss).
// Staged loads are checked on the host as they are gathered, and reported by source_load.
int source_check_labels(const BatchSource *s, const Backend *b, Status *st);

#endif
