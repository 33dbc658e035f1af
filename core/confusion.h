// Per-class counts of an evaluation: which class each sample was predicted as, against its
// label. Counted on the host from the logits of each batch, so only an evaluation that asks
// for it (eval --per-class, --output) pays for the copy; training never does.
#ifndef TRAINER_CONFUSION_H
#define TRAINER_CONFUSION_H

#include <stdint.h>

#include "base/status.h"
#include "core/graph.h"
#include "data/dataset.h"

typedef struct Confusion {
    int classes;
    long *counts;    // classes x classes: counts[true * classes + predicted]
    float *scores;   // one batch of logits on the host (scratch)
    int batch;       // rows `scores` has room for
} Confusion;

int confusion_open(Confusion *c, int classes, int batch, Status *st);
void confusion_close(Confusion *c);
// Adds the batch just run through `g` (its logits, the loss layer's input): sample i of
// the batch is dataset sample indices[i], whose label is ds->labels[indices[i]]. The
// predicted class is the first largest score, as the accuracy counts it.
int confusion_add_batch(Confusion *c, const Graph *g, const Backend *b, const Dataset *ds,
                        const int32_t *indices, int n, Status *st);
// The index of the first largest of `classes` scores, as the accuracy counts it: a score
// above every earlier one moves it (so a NaN first score is never passed).
int confusion_argmax(const float *scores, int classes);

#endif
