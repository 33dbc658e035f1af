// A training progress line as text ("epoch 3/10 [######....] 120/469  loss 0.4213  ...")
// and a loss as trainer prints it; tools/progress.c draws the line on a terminal.
#ifndef TRAINER_PROGRESS_LINE_H
#define TRAINER_PROGRESS_LINE_H

#include <stddef.h>

// The cells of a full bar, training's and evaluation's.
#define PROGRESS_BAR_CELLS 24

// What one redraw shows.
typedef struct ProgressLine {
    int epoch, epochs, step, steps;
    double loss, samples_per_second, remaining_seconds;
} ProgressLine;

// The line for a terminal `columns` wide, in at most columns - 1 characters (and size - 1):
// the bar narrows, then the rate, the ETA, the bar and the loss are left out, in that order.
void progress_format_line(char *buf, size_t size, int columns, const ProgressLine *line);

// A loss as printed: 4 decimals (4 digits from a million on: 1.955e+13), or nan / inf
// (printf writes "-nan" for some NaNs).
const char *loss_text(double loss, char *buf, size_t size);

#endif
