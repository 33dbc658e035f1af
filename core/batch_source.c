#include "core/batch_source.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Half of what the memory limit leaves is the most the dataset may take, so that the
// activations still fit; without a limit, the allocator's answer decides.
static int dataset_fits(const Allocator *a, size_t bytes) {
    if (!a->limit) return 1;
    return a->limit > a->stats.reserved && bytes <= (a->limit - a->stats.reserved) / 2;
}

static int upload_dataset(BatchSource *s, Device *d, Status *st) {
    const Dataset *ds = s->dataset;
    Shape bytes = shape_make1((int)dataset_sample_size(ds)), one = {.rank = 0};
    tensor_set_shape(&s->images, DTYPE_U8, ds->count, &bytes);
    tensor_set_shape(&s->labels, DTYPE_U8, ds->count, &one);
    tensor_set_shape(&s->indices, DTYPE_I32, s->capacity, &one);
    tensor_set_shape(&s->first_bad_sample, DTYPE_I32, 1, &one);
    if (!dataset_fits(&d->alloc, s->images.bytes + s->labels.bytes)) return STATUS_OUT_OF_MEMORY;
    TRY(tensor_alloc(&s->images, &d->alloc, st));
    TRY(tensor_alloc(&s->labels, &d->alloc, st));
    TRY(tensor_alloc(&s->indices, &d->alloc, st));
    TRY(tensor_alloc(&s->first_bad_sample, &d->alloc, st));
    const Backend *b = d->backend;
    const int32_t none = INT32_MAX;
    TRY(b->copy_to_device(b, s->first_bad_sample.data, &none, sizeof none, st));
    TRY(b->copy_to_device(b, s->images.data, ds->images, s->images.bytes, st));
    return b->copy_to_device(b, s->labels.data, ds->labels, s->labels.bytes, st);
}

static void free_device_copies(BatchSource *s) {
    tensor_free(&s->images);
    tensor_free(&s->labels);
    tensor_free(&s->indices);
    tensor_free(&s->first_bad_sample);
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
    if (!s->order) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    return prefetch_open(&s->prefetch, s->backend, s->dataset, s->capacity, s->classes, st);
}

int source_open(BatchSource *s, Device *d, const Dataset *ds, int capacity, int classes,
                Status *st) {
    memset(s, 0, sizeof *s);
    s->dataset = ds;
    s->backend = d->backend;
    s->capacity = capacity;
    s->classes = classes;
    Status upload;
    status_clear(&upload);
    int rc = upload_dataset(s, d, &upload);
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
    status_fail(st, STATUS_BAD_INPUT, "sample %d of %s has label %d, but the model has %d "
                "classes (labels 0 to %d)", sample, s->dataset->source, label, s->classes,
                s->classes - 1);
    status_hint(st, "fix the labels, or give the last layer units=%d to have %d classes",
                label + 1, label + 1);
    snprintf(st->error_name, sizeof st->error_name, "device-side-assert");
    return STATUS_BAD_INPUT;
}

// The copies out of the pinned buffer are asynchronous on a GPU; the buffer goes back to
// the prefetch thread fenced behind them.
static int load_staged(BatchSource *s, Graph *g, const Backend *b, const int32_t *indices,
                       int count, Status *st) {
    StagedLoad *load;
    TRY(prefetch_take(&s->prefetch, indices, count, &load, st));
    int rc = load->first_bad >= 0
                 ? bad_label(s, indices[load->first_bad], st)
                 : graph_load_batch(g, b, load->images, load->labels, count, st);
    Status fence;
    status_clear(&fence);
    int fenced = prefetch_give_back(&s->prefetch, load, rc ? &fence : st);
    return rc ? rc : fenced;
}

int source_load(BatchSource *s, Graph *g, const Backend *b, const int32_t *indices, int count,
                Status *st) {
    if (!s->on_device) return load_staged(s, g, b, indices, count, st);
    TRY(b->copy_to_device(b, s->indices.data, indices, (size_t)count * sizeof *indices, st));
    GatherArgs gather = {.count = count, .sample_size = dataset_sample_size(s->dataset),
                         .scale = 1.0f / 255.0f, .classes = s->classes};
    return b->gather_samples(b, &gather, (const uint8_t *)s->images.data,
                             (const uint8_t *)s->labels.data, (const int32_t *)s->indices.data,
                             tensor_f32(&g->input->output), (int32_t *)g->labels.data,
                             (int32_t *)s->first_bad_sample.data, st);
}

int source_check_labels(const BatchSource *s, const Backend *b, Status *st) {
    if (!s->on_device) return 0;
    int32_t first_bad;
    TRY(b->copy_to_host(b, &first_bad, s->first_bad_sample.data, sizeof first_bad, st));
    return first_bad == INT32_MAX ? 0 : bad_label(s, first_bad, st);
}
