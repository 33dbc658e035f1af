#define _POSIX_C_SOURCE 200809L  // mkstemp
// data/plot_metrics reads a run's metrics.jsonl for `trainer plot`. Step rows log the
// running mean since the epoch began, so plotting them as they are drew a jump at every
// epoch boundary where the training changed nothing: the curve is each step's own value,
// smoothed across epochs.
#include "check.h"
#include "data/plot_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { EPOCHS = 3, STEPS = 40 };

// Step s (1-based over the run) has its own loss 2 - 0.01 s; rows log the epoch's running
// mean, as core/run_log.c writes them.
static void write_log(const char *path) {
    FILE *f = fopen(path, "w");
    for (int e = 1; e <= EPOCHS; e++) {
        double sum = 0;
        for (int k = 1; k <= STEPS; k++) {
            int step = (e - 1) * STEPS + k;
            sum += 2.0 - 0.01 * step;
            fprintf(f, "{\"kind\":\"step\",\"step\":%d,\"epoch\":%d,\"loss\":%.17g,"
                       "\"accuracy\":0.5}\n", step, e, sum / k);
        }
    }
    fclose(f);
}

static void train_curve_has_no_jump_at_epoch_boundaries(void) {
    char path[] = "/tmp/test_plot_metrics_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    write_log(path);
    RunCurves curves;
    Status st;
    status_clear(&st);
    CHECK(run_curves_read(path, &curves, &st) == 0);
    remove(path);
    CHECK(curves.train_loss.count == EPOCHS * STEPS);
    // The loss falls 0.01 a step: no step to the next rises, and none falls by much more.
    double worst_rise = 0, worst_fall = 0;
    for (int i = 1; i < curves.train_loss.count; i++) {
        double change = curves.train_loss.value[i] - curves.train_loss.value[i - 1];
        if (change > worst_rise) worst_rise = change;
        if (-change > worst_fall) worst_fall = -change;
    }
    if (worst_rise > 1e-9 || worst_fall > 0.02)
        fprintf(stderr, "step to step: rose by up to %g, fell by up to %g\n", worst_rise,
                worst_fall);
    CHECK(worst_rise <= 1e-9);
    CHECK(worst_fall <= 0.02);
    // Accuracy 0.5 at every step stays 0.5.
    CHECK(fabs(curves.train_accuracy.value[curves.train_accuracy.count - 1] - 0.5) < 1e-9);
    run_curves_free(&curves);
}

int main(void) {
    train_curve_has_no_jump_at_epoch_boundaries();
    return test_exit_code("test_plot_metrics");
}
