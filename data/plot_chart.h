// One panel of `trainer plot`: axes with ticks and numeric labels, axis names, a legend of
// the series that have points, and each series as a line (with markers where points are
// sparse, e.g. once per epoch).
#ifndef TRAINER_PLOT_CHART_H
#define TRAINER_PLOT_CHART_H

#include <stddef.h>

#include "data/plot_raster.h"

// The largest size of a value a chart draws. Past it a point is left out as a NaN is: an
// axis over values near a double's limit has no span or tick step that doubles can hold
// (steps of -1e308 and 1e308 made a NaN axis, and its tick labels undefined casts).
// Readers leave out the same values, with a notice (chart_value_drawable says which).
#define CHART_VALUE_MAX 1e300
int chart_value_drawable(double value);

// What is drawn at each point of a series: a diamond tells a point apart from the squares
// of another series of the same kind (the test split's final evaluation beside val's).
typedef enum MarkerShape { MARKER_NONE, MARKER_SQUARE, MARKER_DIAMOND } MarkerShape;

typedef struct Series {
    const char *label;
    const double *x, *y;
    int count;
    Rgb color;
    MarkerShape markers;  // drawn at each point (and in the legend)
} Series;

typedef struct Panel {
    int left, top, width, height;  // where on the raster, labels included
    const char *x_label, *y_label;
    const Series *series;
    int series_count;
    // Pixels left of the plot area, for the y tick labels; 0: fitted to this panel's own.
    // Stacked panels pass chart_left_margin of all of them, so their x axes line up.
    int margin_left;
    int x_whole;  // the x values are counts (steps): ticks only on whole numbers
    // With has_x_range, the x axis covers x_range as well as the points: stacked panels pass
    // the steps of all rows, so that one left without a point at a step still lines up.
    int has_x_range;
    double x_range[2];
    int y_fraction;  // the y values are fractions (accuracy): inside [0, 1], so is the axis
} Panel;

typedef struct ChartBox {
    int left, top, width, height;
} ChartBox;

// Where a panel's parts go on the raster, worked out before anything is drawn.
typedef struct ChartLayout {
    ChartBox plot;          // the frame the curves are drawn in
    ChartBox legend;        // above the plot, right-aligned: it never covers a curve
    ChartBox y_name;        // the y axis's name, above the plot at its left
    int widest_y_tick;      // the widest y tick label, in pixels
    int y_tick_left;        // where that label starts: the leftmost ink of the panel
} ChartLayout;

// The margin that fits every y tick label of the `count` panels, with room to spare.
int chart_left_margin(const Panel *panels, int count);
ChartLayout chart_layout(const Panel *panel);
// A tick label on an axis running from `low` to `high` in steps of `step`: as many
// decimals as the step needs (0.05 steps read 0.10, 0.15), or, for ticks all under 0.01
// that would need more than 4 decimals, or of a million and more, compact scientific
// notation (1.2e-4), so that labels stay a few characters wide. Any doubles give a label.
void chart_format_tick(double value, double low, double high, double step, char *buf,
                       size_t size);
// An axis's ticks: how many there are, the first `max` of them into `ticks`; the first and
// the last are the ends of the axis.
int chart_x_ticks(const Panel *panel, double *ticks, int max);
int chart_y_ticks(const Panel *panel, double *ticks, int max);
// Each series as a line through its points, with a marker at every point where it asks for
// them and at any point no line reaches (a series of one point, or one between gaps). A
// point that is not drawable (chart_value_drawable) is a gap, and no part of any axis.
void chart_draw_panel(Raster *raster, const Panel *panel);

#endif
