#include "core/grad_buckets.h"

#include <stdlib.h>
#include <string.h>

int grad_buckets_open(GradBuckets *gb, Graph *g, const Backend *b, double bucket_mb,
                      Status *st) {
    memset(gb, 0, sizeof *gb);
    gb->backend = b;
    gb->bucket_values = bucket_mb > 0 ? (size_t)(bucket_mb * 1024 * 1024 / sizeof(float)) : 0;
    if (bucket_mb > 0 && gb->bucket_values == 0) gb->bucket_values = 1;
    gb->slots = calloc((size_t)g->count * LAYER_MAX_PARAMS + 1, sizeof *gb->slots);
    if (!gb->slots)
        return status_out_of_host_memory(
            st, ((size_t)g->count * LAYER_MAX_PARAMS + 1) * sizeof *gb->slots,
            "for gradient buckets");
    for (int i = g->count - 1; i >= 1; i--)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            Param *p = &g->layers[i]->params[k];
            if (p->buffer) continue;  // running statistics: each process's own
            size_t n = tensor_numel(&p->grad);
            gb->slots[gb->slot_count++] = (GradSlot){p, g->layers[i], gb->total, n};
            gb->total += n;
        }
    return 0;
}

void grad_buckets_close(GradBuckets *gb) {
    if (gb->sums.close) gb->sums.close(&gb->sums);
    free(gb->slots);
    memset(gb, 0, sizeof *gb);
}

void grad_buckets_start_step(GradBuckets *gb) {
    gb->next_slot = 0;
    gb->started = 0;
}

static int copy_in(GradBuckets *gb, const GradSlot *s, Status *st) {
    const Backend *b = gb->backend;
    float *into = gb->sums.flat + s->offset;
    const float *grad = tensor_f32(&s->param->grad);
    size_t bytes = s->count * sizeof(float);
    // On the device: queued on the compute stream after the layer's backward.
    return gb->sums.on_device ? b->copy_on_device(b, into, grad, bytes, st)
                              : b->copy_to_host(b, into, grad, bytes, st);
}

static int copy_out(GradBuckets *gb, const GradSlot *s, Status *st) {
    const Backend *b = gb->backend;
    float *grad = tensor_f32(&s->param->grad);
    const float *sum = gb->sums.flat + s->offset;
    size_t bytes = s->count * sizeof(float);
    return gb->sums.on_device ? b->copy_on_device(b, grad, sum, bytes, st)
                              : b->copy_to_device(b, grad, sum, bytes, st);
}

static int start_through(GradBuckets *gb, size_t end, Status *st) {
    if (end <= gb->started) return 0;
    TRY(gb->sums.start(&gb->sums, gb->started, end - gb->started, st));
    gb->started = end;
    return 0;
}

// `layer`'s backward has run for the last time this step: its gradients are final.
static int layer_final(GradBuckets *gb, const Layer *layer, Status *st) {
    while (gb->next_slot < gb->slot_count && gb->slots[gb->next_slot].layer == layer)
        TRY(copy_in(gb, &gb->slots[gb->next_slot++], st));
    size_t copied = gb->next_slot < gb->slot_count ? gb->slots[gb->next_slot].offset : gb->total;
    if (gb->bucket_values && copied - gb->started >= gb->bucket_values)
        TRY(start_through(gb, copied, st));
    if (gb->sums.progress) gb->sums.progress(&gb->sums);
    return 0;
}

int grad_buckets_after_layer(void *user, struct Layer *layer, Status *st) {
    return layer_final(user, layer, st);
}

int grad_buckets_finish(GradBuckets *gb, Status *st) {
    while (gb->next_slot < gb->slot_count)
        TRY(layer_final(gb, gb->slots[gb->next_slot].layer, st));
    TRY(start_through(gb, gb->total, st));
    TRY(gb->sums.finish(&gb->sums, st));
    gb->steps++;
    for (int i = 0; i < gb->slot_count; i++) TRY(copy_out(gb, &gb->slots[i], st));
    return 0;
}
