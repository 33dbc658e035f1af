#include "data/batch_source.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/transform.h"

// Half of what the memory limit leaves is the most the dataset may take, so that the
// activations still fit; without a limit, the allocator's answer decides.
static int dataset_fits(const DeviceMemory *m, size_t bytes) {
    return m->room == SIZE_MAX || (m->room > 0 && bytes <= m->room / 2);
}

static int take(BatchSource *s, size_t bytes, void **ptr, Status *st) {
    return s->memory.alloc(s->memory.owner, bytes, ptr, st);
}

static int upload_dataset(BatchSource *s, Status *st) {
    const Dataset *ds = s->dataset;
    size_t image_bytes = (size_t)ds->count * dataset_sample_size(ds);
    size_t label_bytes = (size_t)ds->count;
    if (!dataset_fits(&s->memory, image_bytes + label_bytes)) return STATUS_OUT_OF_MEMORY;
    TRY(take(s, image_bytes, &s->images, st));
    TRY(take(s, label_bytes, &s->labels, st));
    TRY(take(s, (size_t)s->capacity * sizeof(int32_t), &s->indices, st));
    TRY(take(s, sizeof(int32_t), &s->first_bad_sample, st));
    const Backend *b = s->backend;
    const int32_t none = INT32_MAX;
    TRY(b->copy_to_device(b, s->first_bad_sample, &none, sizeof none, st));
    TRY(b->copy_to_device(b, s->images, ds->images, image_bytes, st));
    return b->copy_to_device(b, s->labels, ds->labels, label_bytes, st);
}

static void free_device_copies(BatchSource *s) {
    void **copies[] = {&s->images, &s->labels, &s->indices, &s->first_bad_sample};
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++) {
        if (*copies[i]) s->memory.free(s->memory.owner, *copies[i]);
        *copies[i] = NULL;
    }
}

void source_close(BatchSource *s) {
    free_device_copies(s);
    prefetch_close(&s->prefetch);
    free(s->order);
    memset(s, 0, sizeof *s);
}

static int open_staging(BatchSource *s, Status *st) {
    s->order_length = s->dataset->count;
    s->order = malloc((size_t)s->order_length * sizeof *s->order);
    if (!s->order)
        return status_out_of_host_memory(st, (size_t)s->order_length * sizeof *s->order,
                                         "for the order of %d samples", s->order_length);
    TRY(prefetch_open(&s->prefetch, s->backend, s->dataset, s->capacity, s->classes, st));
    s->prefetch.transform = s->transform;
    return 0;
}

int source_open(BatchSource *s, const Backend *b, const DeviceMemory *memory, const Dataset *ds,
                const DataTransform *transform, int capacity, int classes, Status *st) {
    memset(s, 0, sizeof *s);
    TRY(data_transform_check(transform, ds, st));
    if (transform) s->transform = *transform;
    s->dataset = ds;
    s->backend = b;
    s->memory = *memory;
    s->capacity = capacity;
    s->classes = classes;
    // f32 datasets are staged: the device gather op takes bytes; streamed ones too: their
    // bytes exist only as each batch is decoded.
    if (ds->features || ds->paths) return open_staging(s, st);
    Status upload;
    status_clear(&upload);
    int rc = upload_dataset(s, &upload);
    if (rc == 0) {
        s->on_device = 1;
        return 0;
    }
    if (rc != STATUS_OUT_OF_MEMORY) {
        *st = upload;
        return rc;
    }
    // Does not fit: give back what was taken and stage batches through the host.
    free_device_copies(s);
    return open_staging(s, st);
}

void source_set_augment_key(BatchSource *s, uint64_t key) {
    prefetch_stop(&s->prefetch);  // the thread reads its transform
    s->transform.augment_key = key;
    s->prefetch.transform.augment_key = key;
}

int source_expect(BatchSource *s, const int *order, int batch, int replicas, int replica,
                  int micro_batch, int step_start, Status *st) {
    if (s->on_device) return 0;
    prefetch_stop(&s->prefetch);  // the thread reads s->order
    for (int i = 0; i < s->order_length; i++) s->order[i] = order ? order[i] : i;
    LoadSchedule schedule = {.order = s->order, .samples = s->order_length, .batch = batch,
                             .replicas = replicas, .replica = replica,
                             .micro_batch = micro_batch};
    LoadCursor from = {.step_start = step_start, .pass_start = 0};
    return prefetch_start(&s->prefetch, &schedule, from, st);
}

// A label outside the model's classes, as a status with the values: where PyTorch stops
// with "device-side assert triggered", this names the sample, its label and the classes.
static int bad_label(const BatchSource *s, int sample, Status *st) {
    int label = s->dataset->labels[sample];
    const SamplePlace *at = s->dataset->label_places;
    if (at)  // csv: the cell to fix
        status_fail_at(st, STATUS_BAD_INPUT, s->dataset->source, at[sample].line,
                       at[sample].column, "label %d, but the model has %d classes (labels 0 "
                       "to %d)", label, s->classes, s->classes - 1);
    else
        status_fail(st, STATUS_BAD_INPUT, "sample %d of %s has label %d, but the model has %d "
                    "classes (labels 0 to %d)", sample, s->dataset->source, label, s->classes,
                    s->classes - 1);
    status_hint(st, "fix the label first; only if the data really has %d classes, give the "
                "last layer units=%d", label + 1, label + 1);
    snprintf(st->error_name, sizeof st->error_name, "device-side-assert");
    return STATUS_BAD_INPUT;
}

// The copies out of the pinned buffer are asynchronous on a GPU; the buffer goes back to
// the prefetch thread fenced behind them.
static int load_staged(BatchSource *s, const int32_t *indices, int count, float *images,
                       int32_t *labels, Status *st) {
    const Backend *b = s->backend;
    StagedLoad *load;
    TRY(prefetch_take(&s->prefetch, indices, count, &load, st));
    size_t values = (size_t)count * dataset_sample_size(s->dataset);
    int rc = load->first_bad >= 0
                 ? bad_label(s, indices[load->first_bad], st)
                 : b->copy_to_device(b, images, load->images, values * sizeof(float), st);
    if (!rc) rc = b->copy_to_device(b, labels, load->labels, (size_t)count * sizeof *labels, st);
    Status fence;
    status_clear(&fence);
    int fenced = prefetch_give_back(&s->prefetch, load, rc ? &fence : st);
    return rc ? rc : fenced;
}

int source_indices_target(BatchSource *s, int count, int32_t **device_indices, Status *st) {
    *device_indices = NULL;
    if (count > s->capacity) {
        status_fail(st, STATUS_RUNTIME_ERROR, "%d indices for a source of %d samples a load",
                    count, s->capacity);
        status_hint(st, "this is a bug in trainer; please report it with the command line");
        return STATUS_RUNTIME_ERROR;
    }
    *device_indices = s->indices;
    return 0;
}

int source_put_indices(BatchSource *s, const int32_t *indices, int count, Status *st) {
    int32_t *to;
    TRY(source_indices_target(s, count, &to, st));
    const Backend *b = s->backend;
    return b->copy_to_device(b, to, indices, (size_t)count * sizeof *indices, st);
}

int source_gather(BatchSource *s, int first, int count, float *images, int32_t *labels,
                  Status *st) {
    const Backend *b = s->backend;
    GatherArgs gather = {.count = count, .sample_size = dataset_sample_size(s->dataset),
                         .classes = s->classes};
    data_transform_for_bytes(&s->transform, s->dataset, &gather.transform);
    return b->gather_samples(b, &gather, &(GatherSamplesTensors){.images = s->images,
                             .labels = s->labels, .indices = (const int32_t *)s->indices + first,
                             .out_images = images, .out_labels = labels,
                             .first_bad_sample = s->first_bad_sample}, st);
}

int source_load(BatchSource *s, const int32_t *indices, int count, float *images,
                int32_t *labels, Status *st) {
    if (!s->on_device) return load_staged(s, indices, count, images, labels, st);
    TRY(source_put_indices(s, indices, count, st));
    return source_gather(s, 0, count, images, labels, st);
}

int source_check_labels(const BatchSource *s, Status *st) {
    if (!s->on_device) return 0;
    const Backend *b = s->backend;
    int32_t first_bad;
    TRY(b->copy_to_host(b, &first_bad, s->first_bad_sample, sizeof first_bad, st));
    return first_bad == INT32_MAX ? 0 : bad_label(s, first_bad, st);
}
