// Shared by test_staged_batches.c and gpu/test_cuda_pinned_staging.c: training runs of
// tests/train_harness.h's model with the training set staged through the host (a memory
// limit that leaves room for the model but not for the dataset) or kept on the device.
#ifndef TRAINER_TESTS_STAGED_RUNS_H
#define TRAINER_TESTS_STAGED_RUNS_H

#include "train_harness.h"

// The synthetic samples repeated to `count` (37 bytes each: at a few thousand, large
// beside the model's ~30 KiB with Adam's state and its activations at batch 40, so a limit
// can hold the model and not the dataset).
static inline Dataset repeated_dataset(int count) {
    Dataset small = synthetic_dataset(), ds = small;
    ds.count = count;
    ds.images = malloc((size_t)count * SIDE * SIDE);
    ds.labels = malloc((size_t)count);
    for (int i = 0; i < count; i++) {
        memcpy(ds.images + (size_t)i * SIDE * SIDE,
               small.images + (size_t)(i % SAMPLES) * SIDE * SIDE, SIDE * SIDE);
        ds.labels[i] = small.labels[i % SAMPLES];
    }
    dataset_free(&small);
    return ds;
}

// What the training loop's copy of `ds` takes on the device (data/batch_source.c's
// upload_dataset): images, labels, the index tensor for a load of `batch`, and the int
// where the label check reports.
static inline size_t dataset_device_bytes(const Dataset *ds, int batch) {
    return alloc_charged_bytes((size_t)ds->count * dataset_sample_size(ds)) +
           alloc_charged_bytes((size_t)ds->count) +
           alloc_charged_bytes((size_t)batch * sizeof(int32_t)) +
           alloc_charged_bytes(sizeof(int32_t));
}

static inline int was_staged(const Run *run) {
    return strstr(run->notices_text, "staged through the host") != NULL;
}

typedef struct StopAt {
    Run *run;
    int step;   // on_step asks to stop at this step (0: never)
} StopAt;

static inline int stop_at_step(void *user, const StepReport *report) {
    StopAt *stop = user;
    return stop->step > 0 && report->step >= stop->step;
}

static inline void record_staged_notice(void *user, const char *line) {
    record_notice(((StopAt *)user)->run, line);
}

// train_run_on, and on_step stops the run at `stop_step` (0: runs to the end).
static inline int train_stopping_at(const char *device, Run *run, int replicas,
                                    size_t memory_limit, const Dataset *ds, int stop_step,
                                    Status *st) {
    StopAt stop = {.run = run, .step = stop_step};
    TrainHooks hooks = {.user = &stop, .on_notice = record_staged_notice,
                        .on_step = stop_at_step};
    return train_run_hooked(device, run, replicas, memory_limit, ds, &hooks, st);
}

// 1 when every parameter of replica ra of run a equals replica rb's of run b bit for bit.
static inline int parameters_identical(const Run *a, int ra, const Run *b, int rb) {
    const Graph *g = &a->graphs[ra];
    int same = 1;
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            float *u = parameter_on_host(a, ra, i, k), *v = parameter_on_host(b, rb, i, k);
            size_t bytes = g->layers[i]->params[k].value.bytes;
            if (!u || !v || memcmp(u, v, bytes) != 0) {
                if (u && v)
                    fprintf(stderr, "layer %s parameter %d differs\n", g->layers[i]->name, k);
                same = 0;
            }
            free(u);
            free(v);
        }
    return same;
}

#endif
