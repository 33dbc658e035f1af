// Why an evaluation's loss is NaN or infinite, as an error: such a loss measures nothing.
#ifndef TRAINER_EVAL_NONFINITE_H
#define TRAINER_EVAL_NONFINITE_H

#include "core/checkpoint.h"
#include "core/device.h"
#include "core/train.h"

// STATUS_RUNTIME_ERROR (exit 1, as predict's non-finite class scores) at `weights`, saying
// why as far as the weights tell: NaN or infinity in them, else how large the largest value
// is and where, with the first layer of `g` whose output went non-finite in the last batch.
// `split` names what was measured ("test", "val").
int eval_nonfinite_loss(const Graph *g, Device *d, const char *split, const EvalResult *result,
                        const CheckpointLoaded *loaded, const char *weights, Status *st);

#endif
