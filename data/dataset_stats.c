#include "data/dataset_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// A value of sample-major position `i`, as the batcher would give it to the model.
static double value_at(const Dataset *ds, size_t i) {
    return ds->features ? (double)ds->features[i] : ds->images[i] / 255.0;
}

void dataset_stats(const Dataset *ds, DatasetStats *out) {
    memset(out, 0, sizeof *out);
    out->count = ds->count;
    for (int i = 0; i < ds->count; i++) out->per_class[ds->labels[i]]++;
    size_t values = (size_t)ds->count * dataset_sample_size(ds);
    if (values == 0) return;
    // Sums in double: 50 000 CIFAR images are 1.5e8 values, beyond float's exact integers.
    double sum = 0, sum_squares = 0;
    out->min = out->max = value_at(ds, 0);
    for (size_t i = 0; i < values; i++) {
        double v = value_at(ds, i);
        sum += v;
        sum_squares += v * v;
        if (v < out->min) out->min = v;
        if (v > out->max) out->max = v;
    }
    out->mean = sum / (double)values;
    double variance = sum_squares / (double)values - out->mean * out->mean;
    out->std = variance > 0 ? sqrt(variance) : 0;
}

int dataset_stat_groups(const Dataset *ds) {
    return ds->features ? (int)dataset_sample_size(ds) : ds->channels;
}

// One pass over the samples, each value added to its group's sums; a streamed dataset's
// images are decoded one at a time.
int dataset_group_stats(const Dataset *ds, double *mean, double *std, Status *st) {
    int groups = dataset_stat_groups(ds);
    size_t sample = dataset_sample_size(ds);
    size_t run = ds->features ? 1 : sample / (size_t)ds->channels;  // values per group in turn
    for (int g = 0; g < groups; g++) mean[g] = std[g] = 0;  // sums first, then the moments
    SampleScratch scratch;
    TRY(sample_scratch_open(ds, &scratch, st));
    for (int i = 0; i < ds->count; i++) {
        const uint8_t *bytes = NULL;
        if (!ds->features && dataset_sample_bytes(ds, i, &scratch, &bytes, st)) {
            sample_scratch_close(&scratch);
            return st->code;
        }
        for (size_t p = 0; p < sample; p++) {
            double v = ds->features ? (double)ds->features[(size_t)i * sample + p]
                                    : bytes[p] / 255.0;
            int g = (int)(p / run);
            mean[g] += v;
            std[g] += v * v;
        }
    }
    sample_scratch_close(&scratch);
    double per_group = (double)ds->count * (double)run;
    for (int g = 0; g < groups; g++) {
        if (per_group == 0) break;
        double m = mean[g] / per_group;
        double variance = std[g] / per_group - m * m;
        mean[g] = m;
        std[g] = variance > 0 ? sqrt(variance) : 0;
    }
    return 0;
}
