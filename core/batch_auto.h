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
    size_t budget;          // bytes the choice was made against (the trial share), per replica
    int trials;             // trial steps run
    int capped;             // the plan allowed more than BATCH_AUTO_MAX or the dataset
} BatchChoice;

// Chooses the batch for graphs[0] (parameters initialised) on `d`, at most `max_batch` (the
// training set's size). graphs[0 .. sharing-1]: the replicas that train on `d` (CPU
// replicas; one graph otherwise), each of which holds its own parameters, gradients,
// optimizer state, data copy and activations: the choice is per replica and planned in
// 1/sharing of the budget; each trial holds every sharing replica's optimizer state and
// activations at once, as training does, in the whole trial share. Leaves the graphs
// without activations, with their optimizer state allocated, and graphs[0]'s batchnorm
// running statistics as they were; the allocator's peaks and out-of-memory events count
// none of the trials' own (its allocation count keeps them: some of what they took stays
// for the run). STATUS_OUT_OF_MEMORY when not even one sample fits.
int batch_auto_choose(Graph *const *graphs, int sharing, const RunConfig *config, Device *d,
                      const Dataset *train, const Dataset *test, int max_batch,
                      BatchChoice *choice, Status *st);

#endif
