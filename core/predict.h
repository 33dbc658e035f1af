// predict's run: how an image becomes the model's input, and the samples through the model
// in batches, each sample's classes ranked for the caller to report.
#ifndef TRAINER_PREDICT_H
#define TRAINER_PREDICT_H

#include "core/run.h"
#include "data/predict_samples.h"
#include "data/prediction_output.h"

// The model's input as an image: CxHxW with C 1 or 3, or N (a gray image of N pixels).
// Another shape is STATUS_BAD_INPUT at the input's line.
int predict_image_input(const Graph *g, ImageInput *in, Status *st);

// What predict_batches calls: `start` once the run is allocated, before the first batch
// (NULL: nothing); `sample` for each sample in order with its classes ranked, or ranked
// NULL when its scores are not finite.
typedef struct PredictHooks {
    void *user;
    int (*start)(void *user, Status *st);
    int (*sample)(void *user, int index, const RankedClass *ranked, Status *st);
} PredictHooks;

// `count` samples of `images` through replica 0 in batches of at most `batch_cap`.
int predict_batches(Run *run, const float *images, int count, int batch_cap, int sync_check,
                    const PredictHooks *hooks, Status *st);

#endif
