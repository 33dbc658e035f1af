// --batch auto: the largest batch that fits the device, chosen before training.
//
// The memory plan (core/memory_plan.h) proposes a batch from the graph alone; a trial step
// (forward and backward at that size, with the optimizer state already allocated) confirms
// it on the real allocator under a tighter limit, the safety margin, and bisection finds
// the largest batch that passes when the plan was too hopeful (memory the plan does not
// see: library workspaces, fragmentation).
#ifndef TRAINER_BATCH_AUTO_H
#define TRAINER_BATCH_AUTO_H

#include "core/device.h"
#include "core/graph.h"
#include "data/dataset.h"

// The share of the budget a trial step may use: the rest is headroom for what changes
// between the trial and training (the dataset copy, the test set's evaluation passes).
#define BATCH_AUTO_TRIAL_SHARE 0.90
// On a device without a limit the plan's answer can be absurd (a CPU with 20 GiB fits a
// batch of a million); past a few thousand samples a bigger batch buys no speed.
#define BATCH_AUTO_MAX 8192

typedef struct BatchChoice {
    int batch;              // the choice, per replica
    int planned;            // what the plan alone allowed (before the cap)
    size_t budget;          // bytes the choice was made against (the trial share)
    int trials;             // trial steps run
    int capped;             // the plan allowed more than BATCH_AUTO_MAX or the dataset
} BatchChoice;

// Chooses the batch for `g` (parameters initialised) on `d`, at most `max_batch` (the
// training set's size). `sharing`: the replicas that train on `d` (CPU replicas), each of
// which holds its own parameters, gradients, optimizer state, data copy and activations:
// the choice is per replica, planned and tried in 1/sharing of the budget. Leaves g without
// activations and its batchnorm running statistics as they were. STATUS_OUT_OF_MEMORY when
// not even one sample fits.
int batch_auto_choose(Graph *g, const RunConfig *config, Device *d, const Dataset *train,
                      const Dataset *test, int max_batch, int sharing, BatchChoice *choice,
                      Status *st);

#endif
