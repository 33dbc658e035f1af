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
