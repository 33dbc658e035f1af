#include "kernels/cpu/cpu_ops.h"

static int cpu_gather_samples(const Backend *b, const GatherArgs *g, const GatherSamplesTensors *t,
                              Status *st) {
    int count = g->count, classes = g->classes;
    size_t sample_size = g->sample_size;
    for (int k = 0; k < count; k++) {
        const uint8_t *src = t->images + (size_t)t->indices[k] * sample_size;
        sample_transform_apply(&g->transform, src, (uint64_t)t->indices[k],
                               t->out_images + (size_t)k * sample_size);
        int label = t->labels[t->indices[k]];
        if (label >= classes) {
            if (t->indices[k] < *t->first_bad_sample) *t->first_bad_sample = t->indices[k];
            label = 0;
        }
        t->out_labels[k] = label;
    }
    return 0;
}

void cpu_register_data_ops(Backend *table) { table->gather_samples = cpu_gather_samples; }
