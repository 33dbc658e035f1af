// Early stopping on the validation loss, as Keras's EarlyStopping(monitor='val_loss',
// patience=N): training stops once the loss has gone `patience` epochs in a row without
// improving on the best so far (strictly lower). Only the decision lives here, so it can
// be tested without training; tools/ feeds it each epoch's loss and says why it stopped.
#ifndef TRAINER_EARLY_STOP_H
#define TRAINER_EARLY_STOP_H

#include "base/status.h"
#include "core/run_config.h"

typedef struct EarlyStop {
    int patience;                    // epochs without improvement that stop training
    double best_loss;                // the lowest loss so far; +infinity before any
    int best_epoch;                  // the epoch that reached it; 0 before any
    int epochs_without_improvement;  // since best_epoch (or since the start)
} EarlyStop;

// A fresh watch: no best yet, so the first finite loss is an improvement.
EarlyStop early_stop_start(int patience);

// Records `epoch`'s loss; returns 1 when training should stop after this epoch. A NaN or
// infinite loss never counts as an improvement.
int early_stop_update(EarlyStop *watch, int epoch, double loss);

// Early stopping watches the validation loss only: stopping where the test loss is lowest
// would pick the model by the test set, which then no longer measures it honestly. So a
// patience (config->train.early_stop, set by the model file's train line or, when
// `from_option`, by --early-stop) with no validation split (the data statement's val_split=,
// or --val-split when `val_split_given`) is STATUS_BAD_INPUT, placed at `model_path`'s train
// line when the model file set it.
int early_stop_check_split(const RunConfig *config, int from_option, int val_split_given,
                           const char *model_path, Status *st);

#endif
