// What eval measures: the test split, or the validation split a run held out, drawn again
// as train drew it: the training split cut to train_limit in its limit order, then
// dataset_split_off with the same fraction and seed.
#ifndef TRAINER_EVAL_SPLIT_H
#define TRAINER_EVAL_SPLIT_H

#include <stddef.h>

#include "core/checkpoint_inputs.h"
#include "core/run_config.h"

typedef struct EvalSplit {
    HeldOutSplit held;  // fraction 0: the test split
    const char *name;   // "test" or "val", for the result line
} EvalSplit;

// What eval's command line says about the split: the options' texts, NULL when not given.
typedef struct EvalSplitAsk {
    const char *spec;         // the dataset (--data, else the model file's)
    int val_split_given;      // --val-split F
    double val_split;
    const char *test_limit;   // --test-limit
    const char *seed;         // --seed
    const char *train_limit;  // --train-limit
} EvalSplitAsk;

// Room for eval_split_other's text: a path of PATH_MAX and two splits described.
enum { EVAL_SPLIT_NOTICE_MAX = 4096 + 1024 };

// The split to evaluate: --val-split; else the test split; else, for a spec without one,
// the split the weights record (`recorded`), or the model file's `data val_split=`. With
// none, STATUS_BAD_INPUT with a hint that fits eval. A validation split's seed, limit and
// limit order come from the weights' record, else the model file's seed and no limit (a
// given --seed, --train-limit or --limit-order is the caller's to apply). --seed or
// --train-limit without a split to choose, or --test-limit with --val-split, is refused
// rather than ignored.
int eval_split_choose(const EvalSplitAsk *ask, const RunConfig *config,
                      const HeldOutSplit *recorded, EvalSplit *split, Status *st);

// Another seed, fraction, limit or limit order than the run's draws other samples, most of
// them ones the weights were trained on: the figures would flatter them. Said, not refused
// (the user may mean it): 1 and the notice's text in `text` when `split` is not the one
// `recorded` (a run's held-out split) describes; 0 when it is, or the weights record none.
int eval_split_other(const EvalSplit *split, const HeldOutSplit *recorded, const char *weights,
                     char *text, size_t size);

#endif
