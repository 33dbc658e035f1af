// What happens to a sample between the dataset and the model: normalization (for every
// split) and augmentation (training only). The values are applied by the gather op on a
// device and by data/batcher.c on the host, both through kernels/sample_transform.h.
#ifndef TRAINER_TRANSFORM_H
#define TRAINER_TRANSFORM_H

#include <stdint.h>

#include "base/status.h"
#include "data/dataset.h"
#include "kernels/sample_transform.h"

// value' = (value - mean[g]) / std[g] for group g: an image's channel, or a CSV feature.
// mean and std are in the values' own units (bytes / 255, or features as they are), as
// torchvision's Normalize takes them.
struct Normalization {
    int count;          // groups (dataset_stat_groups); 0: no normalization
    float *mean, *std;  // count entries each, owned
};

// The mean and std of each group over `ds` (the training split). A group whose std is 0
// (a constant column of a CSV file) keeps std 1 so that nothing divides by zero;
// *constant_groups (may be NULL) counts them.
int normalization_compute(const Dataset *ds, Normalization *out, int *constant_groups,
                          Status *st);
// `given` values each of mean and std: 1 applies to every one of `count` groups, else
// given must equal count. STATUS_BAD_INPUT otherwise, naming both numbers.
int normalization_from_values(const double *mean, const double *std, int given, int count,
                              Normalization *out, Status *st);
int normalization_copy(const Normalization *from, Normalization *out, Status *st);
void normalization_free(Normalization *n);
// "0.2860,0.3530": `count` values with `digits` significant digits, comma-separated, cut at
// `size` (for the log and a checkpoint's metadata, which uses 9 digits: exact for a float).
void normalization_format(const float *values, int count, int digits, char *buf, size_t size);
// The inverse of normalization_format: exactly `count` finite numbers; -1 when the text
// holds anything else.
int normalization_parse(const char *text, float *values, int count);

// The key of an epoch's crops and flips: from the run's seed, so a run is reproducible, and
// the epoch, so each epoch sees other crops of the same image.
uint64_t data_transform_epoch_key(uint64_t seed, int epoch);
// Whether `t` fits `ds`: a normalization of as many groups as the dataset has, no more
// channels than the gather op takes, and augmentation only on images (a CSV row has no
// rows and columns to crop). STATUS_BAD_INPUT naming the numbers otherwise. Everything
// that gathers (batcher_set_transform, source_open) checks before the first batch.
int data_transform_check(const DataTransform *t, const Dataset *ds, Status *st);
// The gather op's transform for an image dataset held as bytes; t checked for ds (NULL:
// bytes / 255).
void data_transform_for_bytes(const DataTransform *t, const Dataset *ds, SampleTransform *out);
// Channel c's byte-to-value map under `n` (NULL: none): value = byte * scale + shift, as
// data_transform_for_bytes sets it, for a reader of single images (predict) to give the
// model the values training gave it, bit for bit.
void byte_scale_shift(const Normalization *n, int c, float *scale, float *shift);

#endif
