// train's JSON lines (--json, tools/result_sink.h): the run, each epoch, the result.
#ifndef TRAINER_TRAIN_EVENTS_H
#define TRAINER_TRAIN_EVENTS_H

#include "core/train.h"

// What the header says in words, as fields.
typedef struct TrainRunFacts {
    const char *model, *data, *devices, *optimizer, *evaluated;
    long parameters, seed;
    int train_samples, val_samples, test_samples;  // -1: the run has no such split
    int replicas, processes, batch, epochs;
} TrainRunFacts;

void train_emit_run(const TrainRunFacts *facts);
// `evaluated`: "val" or "test", what the epoch's evaluation measured.
void train_emit_epoch(const EpochReport *r, const char *evaluated);
// The run's final figures: `split`'s evaluation (NULL: none was made), after `epochs`.
void train_emit_result(int epochs, const char *split, const EvalResult *result,
                       int stopped_early);

#endif
