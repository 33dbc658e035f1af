// Where a replica's samples come from.
//
// When the dataset fits on the device (Fashion-MNIST is 47 MB of bytes) it is copied there
// once and each load is gathered on the device from the shuffled indices, so a load moves
// only the indices across the bus. Otherwise loads are staged through the host: a prefetch
// thread (data/batch_prefetch.h) gathers the next loads into pinned buffers while the
// device runs the current pass, and each load is one asynchronous copy into the graph's
// input and labels.
//
// Staging allocates nothing on the device: the floats go straight into the input the
// graph already holds, so the memory plan (core/memory_plan.h), which counts a staged
// dataset as 0 bytes, stays exact, and what the limit leaves goes to the batch. The
// price is 4 bytes per pixel on the bus instead of 1, and the host doing the conversion
// (on the prefetch thread, beside the step, not in front of it).
#ifndef TRAINER_BATCH_SOURCE_H
#define TRAINER_BATCH_SOURCE_H

#include "data/batch_prefetch.h"
#include "data/dataset.h"
#include "kernels/backend.h"

// Device memory for a resident dataset, from whoever keeps the device's budget: core/
// passes its caching allocator, so the copies count against --memory-limit like any
// tensor and the memory plan stays exact.
typedef struct DeviceMemory {
    void *owner;
    // Bytes the budget has left, or SIZE_MAX without a limit: a dataset may take half, so
    // that the activations still fit.
    size_t room;
    int (*alloc)(void *owner, size_t bytes, void **ptr, Status *st);
    void (*free)(void *owner, void *ptr);
} DeviceMemory;

typedef struct BatchSource {
    const Dataset *dataset;
    const Backend *backend;
    DeviceMemory memory;
    int on_device;
    int capacity;                    // samples one load may carry
    int classes;                     // labels must lie in [0, classes)
    DataTransform transform;         // normalization, and augmentation when training
    // Device copies (on_device): u8 images and labels, int32 indices of one load, and the
    // int32 first_bad_sample that Backend.gather_samples sets. NULL when not held.
    void *images, *labels, *indices, *first_bad_sample;
    // Staged (!on_device): the order the prefetch thread follows (a copy: the Batcher
    // reshuffles its own at the next epoch) and the thread with its pinned buffers.
    int32_t *order;
    int order_length;
    Prefetcher prefetch;
} BatchSource;

// Uploads the dataset to memory->alloc when it fits (see dataset_fits in batch_source.c),
// else sets up the staging buffers for loads of up to `capacity` samples. Every load is
// transformed by `transform` (NULL: bytes / 255), checked against the dataset here.
int source_open(BatchSource *s, const Backend *b, const DeviceMemory *memory, const Dataset *ds,
                const DataTransform *transform, int capacity, int classes, Status *st);
// The augmentation key of the epoch about to start (data_transform_epoch_key); call it
// before source_expect.
void source_set_augment_key(BatchSource *s, uint64_t key);
// Joins the prefetch thread and frees everything. Safe on a zeroed or failed-open source.
void source_close(BatchSource *s);

// The loads coming next, so a staged source can prepare them (a resident one needs no
// notice): `order` (the Batcher's, NULL for dataset order) cut as LoadSchedule says,
// from the step that starts at order[step_start] on. Call it at the start of an epoch and
// again whenever the cut changes (a smaller micro_batch after running out of memory).
// source_load stays correct without it, only slower.
int source_expect(BatchSource *s, const int *order, int batch, int replicas, int replica,
                  int micro_batch, int step_start, Status *st);

// Loads samples indices[0..count) into `images` (count samples of f32, device memory) and
// `labels` (count int32, device memory): the graph's input and labels.
int source_load(BatchSource *s, const int32_t *indices, int count, float *images,
                int32_t *labels, Status *st);

// source_load's two halves, for a resident source (on_device): the indices copied to the
// device (at most `capacity`), then samples [first, first + count) of them gathered there.
// A step replayed from a CUDA Graph (core/train.c) copies its indices before the replay
// and records only the gathers, since a copy from host memory recorded in the graph would
// replay the indices it was recorded with. source_indices_target is where
// source_put_indices copies them, for a replay that copies them in its own launch
// (StepValues.indices); it fails as source_put_indices does.
int source_put_indices(BatchSource *s, const int32_t *indices, int count, Status *st);
int source_indices_target(BatchSource *s, int count, int32_t **device_indices, Status *st);
int source_gather(BatchSource *s, int first, int count, float *images, int32_t *labels,
                  Status *st);

// The device-side label check's verdict, read when the host syncs anyway (with the loss).
// Staged loads are checked on the host as they are gathered, and reported by source_load.
int source_check_labels(const BatchSource *s, Status *st);

#endif
