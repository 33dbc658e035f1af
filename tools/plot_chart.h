// One panel of `trainer plot`: axes with ticks and numeric labels, axis names, a legend,
// and each series as a line (with markers where points are sparse, e.g. once per epoch).
#ifndef TRAINER_PLOT_CHART_H
#define TRAINER_PLOT_CHART_H

#include "tools/plot_raster.h"

typedef struct Series {
    const char *label;
    const double *x, *y;
    int count;
    Rgb color;
    int markers;      // draw a square at each point
} Series;

typedef struct Panel {
    int left, top, width, height;  // where on the raster, labels included
    const char *x_label, *y_label;
    const Series *series;
    int series_count;
} Panel;

void chart_draw_panel(Raster *raster, const Panel *panel);

#endif
