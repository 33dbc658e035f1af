#include "kernels/cpu/cpu_ops.h"

int cpu_gather_samples(const Backend *b, const GatherArgs *g, const uint8_t *images,
                       const uint8_t *labels, const int32_t *indices, float *out_images,
                       int32_t *out_labels, int32_t *first_bad_sample, Status *st) {
    int count = g->count, classes = g->classes;
    size_t sample_size = g->sample_size;
    for (int k = 0; k < count; k++) {
        const uint8_t *src = images + (size_t)indices[k] * sample_size;
        sample_transform_apply(&g->transform, src, (uint64_t)indices[k],
                               out_images + (size_t)k * sample_size);
        int label = labels[indices[k]];
        if (label >= classes) {
            if (indices[k] < *first_bad_sample) *first_bad_sample = indices[k];
            label = 0;
        }
        out_labels[k] = label;
    }
    return 0;
}
