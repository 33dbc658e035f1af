// What a dataset holds, for `trainer data info`: samples per class, and the values as the
// model sees them (bytes / 255, or CSV features as they are).
#ifndef TRAINER_DATASET_STATS_H
#define TRAINER_DATASET_STATS_H

#include "base/text_out.h"
#include "data/dataset.h"

typedef struct DatasetStats {
    int count;
    int per_class[256];     // samples with each label
    double min, max;        // over every value of every sample
    double mean, std;       // population std over every value
} DatasetStats;

void dataset_stats(const Dataset *ds, DatasetStats *out);

// What normalization goes by: an image's channels, or each feature of a CSV dataset.
int dataset_stat_groups(const Dataset *ds);
// The mean and population std of each group's values (as the model sees them, bytes / 255
// or features as they are); mean and std hold dataset_stat_groups(ds) entries. Zeros for
// an empty dataset. Fails only when a streamed dataset's file no longer decodes.
int dataset_group_stats(const Dataset *ds, double *mean, double *std, Status *st);

// One split described (data/dataset_describe.c): its shape and source, the samples of
// each class under its name (names[0..named), the dataset's own or a known dataset's;
// escaped and padded to 16 columns), the values, the per-channel `normalize` statement,
// and how many unreadable samples were skipped.
void dataset_describe(const TextOut *out, const char *split, const Dataset *ds,
                      const char *const *names, int named, int skipped);

#endif
