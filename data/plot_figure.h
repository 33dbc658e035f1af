// The image `trainer plot` draws of a run's curves (data/plot_metrics.h): two panels, loss
// above accuracy, against the step, on one white raster.
#ifndef TRAINER_PLOT_FIGURE_H
#define TRAINER_PLOT_FIGURE_H

#include "data/plot_chart.h"
#include "data/plot_metrics.h"

enum { PLOT_IMAGE_WIDTH = 1000, PLOT_PANEL_HEIGHT = 400, PLOT_SERIES_PER_PANEL = 3 };

// The panels and their series; panels[k].series points into this struct, so it is filled
// in place (plot_figure_layout) and never copied.
typedef struct PlotFigure {
    Series loss[PLOT_SERIES_PER_PANEL], accuracy[PLOT_SERIES_PER_PANEL];
    Panel panels[2];
} PlotFigure;

void plot_figure_layout(const RunCurves *curves, PlotFigure *figure);
// A raster of PLOT_IMAGE_WIDTH x 2 * PLOT_PANEL_HEIGHT with both panels drawn; the caller
// frees it (raster_free).
int plot_figure_draw(const RunCurves *curves, Raster *raster, Status *st);

#endif
