// Preparing host-staged batches ahead of the step: a thread gathers the samples of the
// loads a replica will ask for next into two pinned host buffers, while the device runs
// the step that came before.
//
// The training loop's order is known for a whole epoch (data/batcher.c shuffles it from
// (seed, epoch)), and how each step is cut into replicas' shares and micro-batches is
// arithmetic (LoadSchedule), so the thread can run ahead without asking. It only
// predicts: prefetch_take compares every load it hands out with the one asked for, and
// when the run changed course (a step redone in smaller passes after running out of
// memory, a schedule never given) it stops the thread and gathers what was asked for on
// the spot. A wrong prediction costs time, never a wrong batch.
#ifndef TRAINER_BATCH_PREFETCH_H
#define TRAINER_BATCH_PREFETCH_H

#include <pthread.h>

#include "data/dataset.h"
#include "kernels/backend.h"

// Which samples one replica loads, in order, over an epoch: `order` cut into steps of
// `batch` samples (the last may be short), each step into the replicas' shares
// (replica_share), each share into loads of at most `micro_batch` samples.
typedef struct LoadSchedule {
    const int32_t *order;
    int samples;            // length of order
    int batch;              // samples per step, over all replicas
    int replicas, replica;
    int micro_batch;
} LoadSchedule;

// A place in a schedule: the step starting at order[step_start], and how far into this
// replica's share of it the next load starts.
typedef struct LoadCursor {
    int step_start;
    int pass_start;
} LoadCursor;

// Replica r's share of a step of n samples: the first n % count replicas take one more.
void replica_share(int n, int count, int r, int *offset, int *share);

// The load at *cursor: its first index in the order and its size, and the cursor moves
// past it. 0 when the schedule has no more loads.
int schedule_next(const LoadSchedule *s, LoadCursor *cursor, const int32_t **indices,
                  int *count);

// One pinned buffer and the load it holds: images as batcher_next writes them (f32 in
// [0, 1]), int32 labels, and where the first label outside the model's classes is.
typedef struct StagedLoad {
    void *pinned;           // Backend.pinned_alloc: images, then labels
    float *images;
    int32_t *labels;
    const int32_t *indices; // the load's dataset indices (inside the schedule's order)
    int count;
    int first_bad;          // position in the load of the first label >= classes; -1: none
    int ready;              // filled and not yet taken
} StagedLoad;

typedef struct Prefetcher {
    const Backend *backend;
    const Dataset *dataset;
    int capacity;           // samples a buffer holds
    int classes;
    DataTransform transform;  // set while no thread runs; zeroed by prefetch_open
    StagedLoad loads[2];    // filled and taken in turn
    int fill, take;         // the buffer the thread fills next, the one the loader takes next

    // The thread and what it shares with the loader, under `lock`.
    pthread_t thread;
    int running;            // started and not yet joined
    pthread_mutex_t lock;
    pthread_cond_t changed; // a buffer was filled or given back, or the thread stopped
    int stop;               // the loader asks the thread to return
    int done;               // the thread has returned (end of schedule, stop or failure)
    int failed;             // and it returned because the backend failed: `failure` says why
    Status failure;
    LoadSchedule schedule;  // read by the thread only while it runs
    LoadCursor cursor;
} Prefetcher;

// Two pinned buffers of `capacity` samples on backend b; no thread yet.
int prefetch_open(Prefetcher *p, const Backend *b, const Dataset *ds, int capacity, int classes,
                  Status *st);
// Stops and joins the thread, then frees the buffers. Safe on a zeroed Prefetcher.
void prefetch_close(Prefetcher *p);
// Prepares the loads of `schedule` from `from` on, in a new thread (one already running is
// stopped first). schedule->order must stay unchanged until the next prefetch_start or
// prefetch_close.
int prefetch_start(Prefetcher *p, const LoadSchedule *schedule, LoadCursor from, Status *st);
// Stops and joins the thread, if one runs: until the next prefetch_start, prefetch_take
// gathers each load itself. Call it before changing what schedule->order points to.
void prefetch_stop(Prefetcher *p);
// The load of samples indices[0..count): the one prepared ahead when it is that one,
// otherwise gathered now (after stopping the thread). count <= capacity.
int prefetch_take(Prefetcher *p, const int32_t *indices, int count, StagedLoad **load,
                  Status *st);
// After the copies that read `load` were queued: fences its buffer and hands it back to
// the thread, which waits for the fence before filling it again.
int prefetch_give_back(Prefetcher *p, StagedLoad *load, Status *st);

#endif
