// Batcher: cuts an in-memory Dataset into batches, in an order shuffled per epoch.
//
// Bytes stay bytes until here. The dataset is kept as u8 (a quarter of the memory of
// f32, and exactly what the file held), and each batch is converted as it is made: the
// conversion touches batch_size * C*H*W values once, which is noise next to the forward
// and backward passes that follow, while converting the whole dataset up front would
// quadruple its host footprint (and the copy to the device) for nothing.
#include "data/dataset.h"

#include <stdlib.h>
#include <string.h>

#include "data/transform.h"

int batcher_init(Batcher *b, const Dataset *ds, int batch_size, int shuffle, uint64_t seed,
                 Status *st) {
    memset(b, 0, sizeof *b);
    if (!ds || ds->count <= 0 || (!ds->images && !ds->features && !ds->paths) || !ds->labels)
        return status_fail(st, STATUS_BAD_INPUT, "cannot batch an empty dataset");
    if (batch_size <= 0) {
        status_fail(st, STATUS_BAD_INPUT, "batch size must be at least 1, got %d", batch_size);
        status_hint(st, "set batch=N in the model's train statement or pass --batch N");
        return STATUS_BAD_INPUT;
    }
    b->order = malloc((size_t)ds->count * sizeof *b->order);
    if (!b->order)
        return status_out_of_host_memory(st, (size_t)ds->count * sizeof *b->order,
                                         "for the order of %d samples", ds->count);
    b->dataset = ds;
    b->batch_size = batch_size;
    b->shuffle = shuffle;
    b->seed = seed;
    batcher_start_epoch(b, 0);
    return 0;
}

// The order of an epoch depends only on (seed, epoch), never on earlier epochs, so a
// run resumed at epoch e sees exactly the batches the uninterrupted run would have.
int batcher_set_transform(Batcher *b, const DataTransform *t, Status *st) {
    TRY(data_transform_check(t, b->dataset, st));
    b->transform = *t;
    b->transform.augment_key = data_transform_epoch_key(b->seed, 0);
    return 0;
}

void batcher_start_epoch(Batcher *b, int epoch) {
    b->transform.augment_key = data_transform_epoch_key(b->seed, epoch);
    int n = b->dataset->count;
    for (int i = 0; i < n; i++) b->order[i] = i;
    b->position = 0;
    if (!b->shuffle) return;
    Rng rng;
    rng_seed(&rng, b->seed * 1000003ull + (uint64_t)(uint32_t)epoch);
    // Fisher-Yates: every permutation equally likely, one pass.
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&rng, (uint32_t)i + 1);
        int t = b->order[i];
        b->order[i] = b->order[j];
        b->order[j] = t;
    }
}

// Features are normalized one value at a time: a CSV row is a few dozen values, and
// the division keeps them the values the log reports.
static void gather_features(const Dataset *ds, const Normalization *n, int index, float *out) {
    size_t sample = dataset_sample_size(ds);
    const float *src = ds->features + (size_t)index * sample;
    if (!n) {
        memcpy(out, src, sample * sizeof *out);
        return;
    }
    for (size_t p = 0; p < sample; p++) out[p] = (src[p] - n->mean[p]) / n->std[p];
}

int dataset_gather(const Dataset *ds, const DataTransform *t, const int32_t *indices,
                   int count, float *images, int32_t *labels, Status *st) {
    size_t sample = dataset_sample_size(ds);
    SampleTransform bytes;
    data_transform_for_bytes(t, ds, &bytes);
    SampleScratch scratch;
    TRY(sample_scratch_open(ds, &scratch, st));
    int rc = 0;
    for (int k = 0; !rc && k < count; k++) {
        int index = indices[k];
        if (images && ds->features) {
            gather_features(ds, t ? t->normalization : NULL, index, images + (size_t)k * sample);
        } else if (images) {
            const uint8_t *src;
            rc = dataset_sample_bytes(ds, index, &scratch, &src, st);
            if (!rc)
                sample_transform_apply(&bytes, src, (uint64_t)index, images + (size_t)k * sample);
        }
        if (labels) labels[k] = ds->labels[index];
    }
    sample_scratch_close(&scratch);
    return rc;
}

int batcher_next(Batcher *b, float *images, int32_t *labels) {
    int n = b->dataset->count - b->position;
    if (n > b->batch_size) n = b->batch_size;
    if (n <= 0) return 0;
    if (dataset_gather(b->dataset, &b->transform, b->order + b->position, n, images, labels,
                       &b->failure))
        return -1;
    b->position += n;
    return n;
}

int batcher_next_indices(Batcher *b, int32_t *indices) {
    int n = b->dataset->count - b->position;
    if (n > b->batch_size) n = b->batch_size;
    if (n <= 0) return 0;
    for (int k = 0; k < n; k++) indices[k] = b->order[b->position + k];
    b->position += n;
    return n;
}

int batcher_steps_per_epoch(const Batcher *b) {
    return (b->dataset->count + b->batch_size - 1) / b->batch_size;
}

void batcher_free(Batcher *b) {
    if (!b) return;
    free(b->order);
    memset(b, 0, sizeof *b);
}
