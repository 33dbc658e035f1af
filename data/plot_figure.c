#include "data/plot_figure.h"

static const Rgb TRAIN_COLOR = {31, 119, 180}, EVALUATED_COLOR = {230, 85, 13},
                 FINAL_TEST_COLOR = {44, 160, 44};

static Series series_of(const char *label, const Curve *curve, Rgb color, MarkerShape markers) {
    return (Series){.label = label, .x = curve->step, .y = curve->value, .count = curve->count,
                    .color = color, .markers = markers};
}

// The evaluated split has a point per epoch, so it is marked. After --val-split the test
// split's one evaluation is a diamond beside val's squares: a point of its own, not a
// continuation of the val curve.
void plot_figure_layout(const RunCurves *c, PlotFigure *f) {
    f->loss[0] = series_of("train", &c->train_loss, TRAIN_COLOR, MARKER_NONE);
    f->loss[1] = series_of(c->evaluated, &c->test_loss, EVALUATED_COLOR, MARKER_SQUARE);
    f->loss[2] = series_of("test", &c->final_test_loss, FINAL_TEST_COLOR, MARKER_DIAMOND);
    f->accuracy[0] = series_of("train", &c->train_accuracy, TRAIN_COLOR, MARKER_NONE);
    f->accuracy[1] = series_of(c->evaluated, &c->test_accuracy, EVALUATED_COLOR, MARKER_SQUARE);
    f->accuracy[2] = series_of("test", &c->final_test_accuracy, FINAL_TEST_COLOR,
                               MARKER_DIAMOND);
    Panel *top = &f->panels[0], *bottom = &f->panels[1];
    *top = (Panel){.left = 0, .top = 0, .width = PLOT_IMAGE_WIDTH, .height = PLOT_PANEL_HEIGHT,
                   .x_label = "step", .y_label = "loss", .series = f->loss,
                   .series_count = PLOT_SERIES_PER_PANEL, .x_whole = 1,
                   .has_x_range = c->first_step <= c->last_step,
                   .x_range = {c->first_step, c->last_step}};
    *bottom = *top;
    bottom->top = PLOT_PANEL_HEIGHT;
    bottom->y_label = "accuracy";
    bottom->y_fraction = 1;
    bottom->series = f->accuracy;
    // One margin for both, wide enough for either's tick labels: the steps line up.
    top->margin_left = bottom->margin_left = chart_left_margin(f->panels, 2);
}

int plot_figure_draw(const RunCurves *curves, Raster *raster, Status *st) {
    TRY(raster_init(raster, PLOT_IMAGE_WIDTH, 2 * PLOT_PANEL_HEIGHT, (Rgb){255, 255, 255}, st));
    PlotFigure figure;
    plot_figure_layout(curves, &figure);
    chart_draw_panel(raster, &figure.panels[0]);
    chart_draw_panel(raster, &figure.panels[1]);
    return 0;
}
