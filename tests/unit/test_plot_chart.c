// data/plot_chart's layout, before anything is drawn: the y tick labels of very small
// losses fit left of the plot (they ran off the image's left edge at 0.00012), stacked
// panels share one margin, the legend sits outside the plot area (it covered curves that
// filled both right corners), and tick labels read compactly (1.5e-4, not 0.00015); the
// step axis ticks whole steps only, a series of one point is drawn (as a marker), the
// legend names only the series that have points, an accuracy axis stays inside [0, 1], and
// a panel's step axis spans the range it is given (all rows' steps), not only its points;
// a diamond marker is one; values near a double's limit give axes whose ticks read.
#include "check.h"
#include "data/plot_chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { COUNT = 200 };
static double steps[COUNT], small_loss[COUNT], noisy_accuracy[COUNT], big_loss[COUNT];

static void make_curves(void) {
    for (int i = 0; i < COUNT; i++) {
        steps[i] = i + 1;
        small_loss[i] = 0.00012 + 0.0002 * exp(-4.0 * i / COUNT);
        // Jumping from top to bottom at every step: no corner of the plot is free of it.
        noisy_accuracy[i] = i % 2 ? 0.98 : 1.0;
        big_loss[i] = 1.0 + 3e7 * i / COUNT;
    }
}

static Panel panel_of(const Series *series) {
    return (Panel){.left = 0, .top = 400, .width = 1000, .height = 400, .x_label = "step",
                   .y_label = "loss", .series = series, .series_count = 2};
}

static int overlap(const ChartBox *a, const ChartBox *b) {
    return a->left < b->left + b->width && b->left < a->left + a->width &&
           a->top < b->top + b->height && b->top < a->top + a->height;
}

// The panel drawn alone on a white 1000x400 raster (the caller frees it); its layout.
static ChartLayout draw_alone(const Panel *panel, Raster *raster) {
    Status st;
    status_clear(&st);
    CHECK(raster_init(raster, 1000, 400, (Rgb){255, 255, 255}, &st) == 0);
    chart_draw_panel(raster, panel);
    return chart_layout(panel);
}

static void check_layout(const Panel *panel, const char *what) {
    ChartLayout layout = chart_layout(panel);
    fprintf(stderr, "%s: plot left %d, widest tick %d, ticks start at %d\n", what,
            layout.plot.left, layout.widest_y_tick, layout.y_tick_left);
    CHECK(layout.y_tick_left >= panel->left + 8);  // inside the image, with a border
    CHECK(layout.plot.width > 0 && layout.plot.height > 0);
    CHECK(!overlap(&layout.legend, &layout.plot));
    CHECK(!overlap(&layout.legend, &layout.y_name));
    CHECK(layout.legend.left >= panel->left && layout.legend.top >= panel->top);
    CHECK(layout.legend.left + layout.legend.width <= panel->left + panel->width);
    CHECK(layout.legend.width >= raster_text_width("train", 2) + raster_text_width("test", 2));
}

static void small_losses_fit(void) {
    Series series[] = {{"train", steps, small_loss, COUNT, {31, 119, 180}, 0},
                       {"test", steps, small_loss, COUNT, {230, 85, 13}, 1}};
    Panel panel = panel_of(series);
    check_layout(&panel, "losses of 1.2e-4");
    Series noisy[] = {{"train", steps, noisy_accuracy, COUNT, {31, 119, 180}, 0},
                      {"test", steps, noisy_accuracy, COUNT, {230, 85, 13}, 1}};
    Panel accuracy = panel_of(noisy);
    check_layout(&accuracy, "an accuracy filling the plot");
    Series big[] = {{"train", steps, big_loss, COUNT, {31, 119, 180}, 0},
                    {"test", steps, big_loss, COUNT, {230, 85, 13}, 1}};
    Panel diverged = panel_of(big);
    check_layout(&diverged, "losses of 3e7");

    // Stacked: the margin fits the wider labels of both, and both panels take it.
    Panel both[] = {panel, accuracy};
    int margin = chart_left_margin(both, 2);
    ChartLayout own = chart_layout(&panel), other = chart_layout(&accuracy);
    CHECK(margin >= own.plot.left - panel.left && margin >= other.plot.left - accuracy.left);
    panel.margin_left = accuracy.margin_left = margin;
    CHECK_INT_EQ(chart_layout(&panel).plot.left, chart_layout(&accuracy).plot.left);
    check_layout(&panel, "stacked");
}

static void expect_tick(double value, double low, double high, double step, const char *want) {
    char label[48];
    chart_format_tick(value, low, high, step, label, sizeof label);
    if (strcmp(label, want) != 0) {
        fprintf(stderr, "tick %g on [%g, %g] by %g: \"%s\", expected \"%s\"\n", value, low,
                high, step, label, want);
        test_failures++;
    }
}

static void ticks_read_compactly(void) {
    expect_tick(0.5, 0.0, 2.5, 0.5, "0.5");
    expect_tick(0.0, 0.0, 2.5, 0.5, "0.0");
    expect_tick(0.15, 0.0, 0.3, 0.05, "0.15");
    expect_tick(0.985, 0.98, 1.0, 0.005, "0.985");
    expect_tick(400.0, 0.0, 500.0, 100.0, "400");
    expect_tick(1e-18, -0.2, 0.2, 0.1, "0.0");       // no -0.0 from rounding
    expect_tick(0.00015, 0.0001, 0.00035, 0.00005, "1.5e-4");
    expect_tick(0.0001, 0.0001, 0.00035, 0.00005, "1.0e-4");
    expect_tick(0.00012, 0.0001, 0.00013, 0.00001, "1.2e-4");
    expect_tick(4.5e-7, 1e-7, 4.5e-7, 5e-8, "4.5e-7");
    expect_tick(0.0, 0.0, 4e-7, 1e-7, "0");
    expect_tick(2e7, 0.0, 3e7, 5e6, "2.0e7");
    expect_tick(3e7, 0.0, 3e7, 1e7, "3e7");
    // Near 1 with a fine step, decimals read better than 9.9998e-1.
    expect_tick(0.99998, 0.99996, 1.0, 0.00001, "0.99998");
}

// A run of a few steps: ticks on the step axis at 3.4 and 4.6 named steps that never were.
static void step_ticks_are_whole(void) {
    static const double few[] = {3, 4, 5}, one[] = {1}, two[] = {40, 80}, odd[] = {3, 7};
    static const double *xs[] = {few, one, two, odd};
    static const int counts[] = {3, 1, 2, 2};
    for (int c = 0; c < 4; c++) {
        Series series[] = {{"train", xs[c], xs[c], counts[c], {31, 119, 180}, 0},
                           {"test", xs[c], xs[c], counts[c], {230, 85, 13}, 1}};
        Panel panel = panel_of(series);
        panel.x_whole = 1;
        double ticks[64];
        int n = chart_x_ticks(&panel, ticks, 64);
        CHECK(n >= 2 && n <= 64);
        for (int i = 0; i < n && i < 64; i++)
            if (ticks[i] != floor(ticks[i])) {
                fprintf(stderr, "steps %g..%g: a tick at %g\n", xs[c][0], xs[c][counts[c] - 1],
                        ticks[i]);
                test_failures++;
            }
        CHECK(ticks[0] <= xs[c][0] && ticks[n - 1] >= xs[c][counts[c] - 1]);
    }
    // Losses are no counts: their axis keeps fractional ticks.
    Series series[] = {{"train", few, small_loss, 3, {31, 119, 180}, 0},
                       {"test", few, small_loss, 3, {230, 85, 13}, 1}};
    Panel panel = panel_of(series);
    double ticks[64];
    CHECK(chart_x_ticks(&panel, ticks, 64) >= 2 && ticks[1] != floor(ticks[1]));
}

static int count_color(const Raster *raster, const ChartBox *box, Rgb color) {
    int n = 0;
    for (int y = box->top; y < box->top + box->height; y++)
        for (int x = box->left; x < box->left + box->width; x++) {
            const uint8_t *p = raster->pixels + 3 * ((size_t)y * raster->width + x);
            n += p[0] == color.r && p[1] == color.g && p[2] == color.b;
        }
    return n;
}

// A training curve of one logged step has no line to draw: without a marker it vanished.
static void a_lone_point_shows(void) {
    static const double step[] = {5}, loss[] = {2.3};
    Rgb blue = {31, 119, 180};
    Series series[] = {{"train", step, loss, 1, blue, 0}};
    Panel panel = panel_of(series);
    panel.series_count = 1;
    panel.top = 0;
    panel.x_whole = 1;
    Raster raster;
    ChartLayout layout = draw_alone(&panel, &raster);
    int inked = count_color(&raster, &layout.plot, blue);
    fprintf(stderr, "a lone point: %d pixels of its colour in the plot\n", inked);
    CHECK(inked >= 25);
    raster_free(&raster);
}

// A log with step rows only: the legend listed `test` beside `train`, a curve not drawn.
static void legend_names_drawn_series_only(void) {
    static const double step[] = {1, 2}, loss[] = {2.3, 2.1};
    Rgb blue = {31, 119, 180}, orange = {230, 85, 13};
    Series both[] = {{"train", step, loss, 2, blue, 0}, {"test", NULL, NULL, 0, orange, 1}};
    Panel panel = panel_of(both), train_only = panel_of(both);
    panel.top = train_only.top = 0;
    train_only.series_count = 1;
    Raster raster;
    ChartLayout layout = draw_alone(&panel, &raster);
    CHECK_INT_EQ(layout.legend.width, chart_layout(&train_only).legend.width);
    ChartBox whole = {0, 0, 1000, 400};
    CHECK_INT_EQ(count_color(&raster, &whole, orange), 0);
    CHECK(count_color(&raster, &layout.legend, blue) > 0);
    raster_free(&raster);
}

// Accuracy is a fraction: its axis ran from -0.2 to 1.2 (a constant 1.0 up to 1.6). Inside
// [0, 1] whatever the data, and still around them; a loss axis keeps its padding.
static void accuracy_axis_stays_in_unit(void) {
    static const double step[] = {1, 2}, lows[] = {0.0, 0.1, 1.0, 0.0, 0.3, 0.97},
                        highs[] = {1.0, 0.9, 1.0, 0.0, 0.3, 0.99};
    for (int c = 0; c < 6; c++) {
        double values[] = {lows[c], highs[c]}, ticks[64];
        Series series[] = {{"train", step, values, 2, {31, 119, 180}, 0}};
        Panel panel = panel_of(series);
        panel.series_count = 1;
        panel.y_fraction = 1;
        int n = chart_y_ticks(&panel, ticks, 64);
        fprintf(stderr, "accuracy %g..%g: axis %g..%g, %d ticks\n", lows[c], highs[c],
                ticks[0], ticks[n - 1], n);
        CHECK(n >= 2 && n <= 64);
        CHECK(ticks[0] >= -1e-12 && ticks[n - 1] <= 1.0 + 1e-12);
        CHECK(ticks[0] <= lows[c] && ticks[n - 1] >= highs[c]);
        CHECK(ticks[n - 1] > ticks[0]);
        panel.y_fraction = 0;
        n = chart_y_ticks(&panel, ticks, 64);
        if (c == 2) CHECK(ticks[n - 1] > 1.0);  // a loss of 1.0 keeps room above it
    }
}

// Stacked panels share the steps of all rows: a loss left out at step 16 drew its panel's
// axis around step 32 alone (31 to 33) above an accuracy axis from 16 to 32.
static void x_range_covers_all_rows(void) {
    static const double late[] = {32}, loss[] = {0.7};
    Series series[] = {{"train", late, loss, 1, {31, 119, 180}, 0}};
    Panel panel = panel_of(series);
    panel.series_count = 1;
    panel.x_whole = 1;
    panel.has_x_range = 1;
    panel.x_range[0] = 16;
    panel.x_range[1] = 32;
    double ticks[64];
    int n = chart_x_ticks(&panel, ticks, 64);
    CHECK(n >= 2 && n <= 64);
    CHECK(ticks[0] <= 16 && ticks[0] > 0 && ticks[n - 1] >= 32 && ticks[n - 1] < 40);
}

// The test split's final evaluation is a diamond, told apart from val's squares by shape
// as well as colour: its bounding square's corners stay blank, its tips are drawn.
static void a_diamond_marks_a_point(void) {
    static const double step[] = {1, 5}, loss[] = {2.0, 1.0}, final_step[] = {3},
                        final_loss[] = {1.5};
    Rgb blue = {31, 119, 180}, green = {44, 160, 44};
    Series series[] = {{"train", step, loss, 2, blue, MARKER_NONE},
                       {"test", final_step, final_loss, 1, green, MARKER_DIAMOND}};
    Panel panel = panel_of(series);
    panel.top = 0;
    Raster raster;
    ChartLayout layout = draw_alone(&panel, &raster);
    int green_pixels = count_color(&raster, &layout.plot, green);
    fprintf(stderr, "a diamond: %d pixels of its colour in the plot\n", green_pixels);
    CHECK(green_pixels >= 60);
    int cx = layout.plot.left + layout.plot.width / 2, cy = layout.plot.top +
             layout.plot.height / 2;  // step 3 of 1..5, loss 1.5 of 1..2: the middle
    ChartBox tip = {cx - 1, cy - 6, 3, 2}, corner = {cx - 6, cy - 6, 2, 2};
    CHECK(count_color(&raster, &tip, green) > 0);
    CHECK_INT_EQ(count_color(&raster, &corner, green), 0);
    CHECK(count_color(&raster, &layout.legend, green) > 0);
    raster_free(&raster);
}

// Every tick of the panel's axis `use_y` is a finite number (an axis reaches a little past
// its values, so up to twice CHART_VALUE_MAX), above the one before it, and its label reads
// as one (no "nan", no "inf").
static void check_axis(const Panel *panel, int use_y, const char *what) {
    double ticks[64];
    int n = use_y ? chart_y_ticks(panel, ticks, 64) : chart_x_ticks(panel, ticks, 64);
    int bad = !(n >= 2 && n <= 64);
    for (int i = 0; !bad && i < n; i++) {
        char label[48];
        chart_format_tick(ticks[i], ticks[0], ticks[n - 1], ticks[1] - ticks[0], label,
                          sizeof label);
        bad = !(fabs(ticks[i]) <= 2 * CHART_VALUE_MAX) || (i && !(ticks[i] > ticks[i - 1])) ||
              strstr(label, "nan") || strstr(label, "inf");
    }
    if (!bad) return;
    fprintf(stderr, "%s: %d %s ticks, from %g to %g\n", what, n, use_y ? "y" : "x", ticks[0],
            n > 1 && n <= 64 ? ticks[n - 1] : ticks[0]);
    test_failures++;
}

// Steps of -1e308 and 1e308 made a NaN axis (a span past a double's range) and its labels a
// negation of INT_MIN (log10 of NaN cast to int); one loss of 1e20 made an axis without a
// span (1e20 +- 0.5 is 1e20). Values over CHART_VALUE_MAX in size are left out, like NaN,
// and every axis over the rest has ticks that read.
static void extreme_values_give_axes(void) {
    static const double huge_x[] = {-1e308, 1e308, 3}, huge_y[] = {1, 2, 1e308};
    static const double limit[] = {-1e300, 1e300}, one_x[] = {16}, one_y[] = {1e20};
    static const double close_x[] = {1e20, 1.0000000000000002e20}, tiny_y[] = {0, 5e-324};
    static const double lowest[] = {-1e300};  // one value: the axis reaches past -1e300
    const double *xs[] = {huge_x, limit, one_x, close_x, one_x};
    const double *ys[] = {huge_y, limit, one_y, tiny_y, lowest};
    static const int counts[] = {3, 2, 1, 2, 1};
    for (int c = 0; c < 5; c++) {
        Series series[] = {{"train", xs[c], ys[c], counts[c], {31, 119, 180}, 0}};
        Panel panel = panel_of(series);
        panel.series_count = 1;
        panel.x_whole = c % 2;
        char what[32];
        snprintf(what, sizeof what, "extreme values, case %d", c);
        check_axis(&panel, 0, what);
        check_axis(&panel, 1, what);
        Raster raster;
        draw_alone(&panel, &raster);  // under UBSan: no undefined cast or overflow
        raster_free(&raster);
    }
    CHECK(!chart_value_drawable(1e301) && !chart_value_drawable(NAN));
    CHECK(chart_value_drawable(-1e300));
    // Whatever the doubles, a label and no undefined behaviour.
    char label[48];
    chart_format_tick(NAN, 0.0, 1.0, INFINITY, label, sizeof label);
    chart_format_tick(1e300, -INFINITY, INFINITY, NAN, label, sizeof label);
    chart_format_tick(1.0, 0.0, 1.0, 0.0, label, sizeof label);
    CHECK(label[0] != '\0');
}

int main(void) {
    make_curves();
    small_losses_fit();
    ticks_read_compactly();
    step_ticks_are_whole();
    a_lone_point_shows();
    legend_names_drawn_series_only();
    accuracy_axis_stays_in_unit();
    x_range_covers_all_rows();
    a_diamond_marks_a_point();
    extreme_values_give_axes();
    return test_exit_code("test_plot_chart");
}
