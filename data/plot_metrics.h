// The curves `trainer plot` draws, read from a run's metrics.jsonl (core/run_log.h):
// training loss and accuracy at each logged step, at each epoch the loss and accuracy on
// the split the run evaluated (test, or val with --val-split), and with --val-split the
// test split's one evaluation after the last epoch.
#ifndef TRAINER_PLOT_METRICS_H
#define TRAINER_PLOT_METRICS_H

#include "base/status.h"

typedef struct Curve {
    double *step, *value;
    int count, capacity;
} Curve;

// Consecutive step rows of one epoch: their logged figures are running means since the
// epoch began (or the run resumed), so each step's own value is k * mean_k minus the sum
// before it.
typedef struct StepSegment {
    int count;
    double epoch, last_step, loss_sum, accuracy_sum;
} StepSegment;

typedef struct RunCurves {
    // The training curves: each step's own loss and accuracy, smoothed by an exponential
    // moving average across epochs (the logged running means restart at every epoch, a
    // jump at each boundary where nothing changed).
    Curve train_loss, train_accuracy, test_loss, test_accuracy;
    StepSegment segment;  // while reading
    char evaluated[8];  // "test" or "val": which split test_loss and test_accuracy are of
    // The "kind":"test" rows: the test split evaluated after --val-split's last epoch.
    Curve final_test_loss, final_test_accuracy;
    int unfinished_line;  // the last line, cut short by its writer and passed over; 0: none
    // Values present but not drawable (null, a number past a double's range, or one over
    // CHART_VALUE_MAX in size), left out of the curves; where the first was, 0 when none.
    int undrawable, first_undrawable_line;
    // The lowest and highest step of the rows drawn from, whether or not their values are
    // finite: one step range for every panel.
    double first_step, last_step;
} RunCurves;

// `path` is the metrics.jsonl file, a regular file (anything else is refused before it is
// read). A line that is not a JSON object with a "kind" and a drawable numeric "step" is an
// error at path:line, as is one longer than METRICS_LINE_MAX; a last line without its newline
// that is not JSON is what a writer cut short leaves: passed over, its number in
// unfinished_line. A file without any loss is an error too.
int run_curves_read(const char *path, RunCurves *curves, Status *st);
void run_curves_free(RunCurves *curves);

#endif
