#include "core/early_stop.h"

#include <math.h>

EarlyStop early_stop_start(int patience) {
    return (EarlyStop){.patience = patience, .best_loss = INFINITY};
}

int early_stop_update(EarlyStop *watch, int epoch, double loss) {
    // `<` is false for NaN, and nothing is below +infinity: neither ever becomes the best.
    if (loss < watch->best_loss) {
        watch->best_loss = loss;
        watch->best_epoch = epoch;
        watch->epochs_without_improvement = 0;
        return 0;
    }
    watch->epochs_without_improvement++;
    return watch->epochs_without_improvement >= watch->patience;
}

int early_stop_check_split(const RunConfig *config, int from_option, int val_split_given,
                           const char *model_path, Status *st) {
    int patience = config->train.early_stop;
    if (!patience || val_split_given || config->data.val_split > 0) return 0;
    if (from_option)
        status_fail(st, STATUS_BAD_INPUT, "--early-stop %d needs a validation split, and this "
                    "run has none", patience);
    else
        status_fail_at(st, STATUS_BAD_INPUT, model_path, config->train.line, 1, "train "
                       "early_stop=%d needs a validation split, and this run has none", patience);
    status_hint(st, "add --val-split 0.1 (or val_split= in the data statement) to hold out a "
                "tenth of the training data; the test split is never watched, as stopping by "
                "it would leak the test set into training");
    return STATUS_BAD_INPUT;
}
