// Where `trainer plot` reads and writes: the metrics log of a run directory, and the PNG
// it draws, checked before the log is read and replaced whole (never half an image).
#ifndef TRAINER_PLOT_OUTPUT_H
#define TRAINER_PLOT_OUTPUT_H

#include <stddef.h>

#include "data/plot_figure.h"

// `given` is a run directory (its metrics.jsonl is the log) or the metrics file itself;
// the image's default path is curves.png beside the log.
void plot_paths(const char *given, char *log, size_t log_size, char *image,
                size_t image_size);
// STATUS_BAD_INPUT when `output` may not be written: it is the log itself, not a regular
// file, a non-empty file that is not a PNG, or its name ends in another kind (.jpg).
int plot_output_check(const char *output, const char *log, Status *st);
// Draws the curves (plot_figure_draw) and replaces `output` with the PNG atomically; a
// missing or read-only folder is STATUS_BAD_INPUT.
int plot_write_png(const RunCurves *curves, const char *output, Status *st);

#endif
