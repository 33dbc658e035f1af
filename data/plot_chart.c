#include "data/plot_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const Rgb INK = {0, 0, 0}, GRID = {225, 225, 225};
enum { TEXT_SCALE = 2, TICK_LENGTH = 6, LINE_THICKNESS = 2, MARKER_SIZE = 7 };
// From the centre to a tip: a diamond a little larger than the square, as it covers less.
enum { DIAMOND_RADIUS = 6 };
enum { MARGIN_RIGHT = 24, MARGIN_TOP = 40, MARGIN_BOTTOM = 56 };
// Left of the plot: the widest y tick label, the gap to its tick, the tick, and a border
// so that no label touches the image's edge; never less than MARGIN_LEFT_MIN.
enum { TICK_LABEL_GAP = 4, LEFT_BORDER = 12, MARGIN_LEFT_MIN = 60 };
enum { LEGEND_SWATCH = 28, LEGEND_GAP = 8, LEGEND_SPACING = 24 };

typedef struct Axis {
    double low, high, step;  // the range, widened to whole ticks, and the tick spacing
} Axis;

// The plot area inside a panel, in pixels.
typedef struct Area {
    int left, top, right, bottom;
} Area;

int chart_value_drawable(double value) {
    return isfinite(value) && fabs(value) <= CHART_VALUE_MAX;
}

// The power of ten of |value| (the floor of its log10) as an int, for any double: 0 for 0
// or a non-finite value, whose log10 cast to int would be undefined (INT_MIN, negated).
static int power_of_ten(double value) {
    double power = floor(log10(fabs(value)) + 1e-9);
    return isfinite(power) ? (int)power : 0;
}

// 1, 2 or 5 times a power of ten, about a fifth of the span: five or so labelled ticks.
static double tick_step(double span) {
    double rough = span / 5.0, power = pow(10.0, floor(log10(rough)));
    double fraction = rough / power;
    return (fraction < 1.5 ? 1.0 : fraction < 3.5 ? 2.0 : fraction < 7.5 ? 5.0 : 10.0) * power;
}

// `whole`: the values are counts (steps), so a tick between two of them (3.4) names
// nothing; the spacing is at least 1, and 1, 2 or 5 times a power of ten above it.
// One value, none, or values closer together than a millionth of a millionth of their size
// (which ticks could not tell apart, and past 2^52 a unit-wide range around a value is the
// value itself: a span of 0): a range around them, a unit wide or a tenth of their size.
static int too_narrow(double low, double high) {
    double size = fmax(fabs(low), fabs(high));
    return !(high - low > size * 1e-12) || !(high - low > 1e-200);
}

static Axis axis_over(double low, double high, int whole) {
    if (!(low <= high)) low = high = 0.0;  // no value
    if (too_narrow(low, high)) {
        double middle = low / 2 + high / 2, half = fmax(0.5, fabs(middle) * 0.05);
        low = middle - half;
        high = middle + half;
    }
    Axis axis = {.step = tick_step(high - low)};
    if (whole && axis.step < 1.0) axis.step = 1.0;
    axis.low = floor(low / axis.step) * axis.step;
    axis.high = ceil(high / axis.step) * axis.step;
    return axis;
}

static void data_range(const Panel *panel, int use_y, double *low, double *high) {
    *low = INFINITY;
    *high = -INFINITY;
    for (int s = 0; s < panel->series_count; s++)
        for (int i = 0; i < panel->series[s].count; i++) {
            double v = use_y ? panel->series[s].y[i] : panel->series[s].x[i];
            if (!chart_value_drawable(v)) continue;
            if (v < *low) *low = v;
            if (v > *high) *high = v;
        }
}

// An accuracy axis past 0 or 1 shows values no run can have (it ran from -0.2 to 1.2): the
// padding stays inside [0, 1]. Both are ticks, as the step over a range inside [0, 1] is
// 0.2 or finer.
static void keep_inside_unit(Axis *axis, double low, double high) {
    if (low >= 0.0 && axis->low < 0.0) axis->low = 0.0;
    if (high <= 1.0 && axis->high > 1.0) axis->high = 1.0;
}

static Axis panel_axis(const Panel *panel, int use_y) {
    double low, high;
    data_range(panel, use_y, &low, &high);
    for (int end = 0; !use_y && panel->has_x_range && end < 2; end++)
        if (chart_value_drawable(panel->x_range[end])) {
            low = fmin(low, panel->x_range[end]);
            high = fmax(high, panel->x_range[end]);
        }
    Axis axis = axis_over(low, high, !use_y && panel->x_whole);
    if (use_y && panel->y_fraction) keep_inside_unit(&axis, low, high);
    return axis;
}

static int tick_count(const Axis *axis) {
    return (int)lround((axis->high - axis->low) / axis->step) + 1;
}

// The i-th tick, as a whole multiple of the step: summing steps would print 0.30000004.
static double tick_value(const Axis *axis, int i) {
    return (round(axis->low / axis->step) + i) * axis->step;
}

static int to_pixel_x(const Area *area, const Axis *axis, double x) {
    return area->left + (int)lround((x - axis->low) / (axis->high - axis->low) *
                                    (area->right - area->left));
}

static int to_pixel_y(const Area *area, const Axis *axis, double y) {
    return area->bottom - (int)lround((y - axis->low) / (axis->high - axis->low) *
                                      (area->bottom - area->top));
}

void chart_format_tick(double value, double low, double high, double step, char *buf,
                       size_t size) {
    if (fabs(value) < step * 1e-6) value = 0.0;  // no "-0.00"
    int step_power = power_of_ten(step);
    int decimals = step_power >= 0 ? 0 : -step_power;  // steps are 1, 2 or 5 times 10^power
    double largest = fmax(fabs(low), fabs(high));
    if (!((decimals > 4 && largest < 0.01) || largest >= 1e6)) {
        snprintf(buf, size, "%.*f", decimals, value);
        return;
    }
    if (value == 0.0) {  // not "0.0e-5"
        snprintf(buf, size, "0");
        return;
    }
    // Scientific: the mantissa gets the digits down to the step's, as the decimals do above.
    int power = power_of_ten(value);
    double mantissa = value / pow(10.0, power);
    int digits = power > step_power ? power - step_power : 0;
    char text[32];
    snprintf(text, sizeof text, "%.*f", digits, mantissa);
    if (fabs(atof(text)) >= 10.0) {  // 9.96 printed as 10.0: one power up
        power++;
        snprintf(text, sizeof text, "%.*f", digits, mantissa / 10.0);
    }
    snprintf(buf, size, "%se%d", text, power);
}

static int axis_ticks(const Panel *panel, int use_y, double *ticks, int max) {
    Axis axis = panel_axis(panel, use_y);
    int count = tick_count(&axis);
    for (int i = 0; i < count && i < max; i++) ticks[i] = tick_value(&axis, i);
    return count;
}

int chart_x_ticks(const Panel *panel, double *ticks, int max) {
    return axis_ticks(panel, 0, ticks, max);
}

int chart_y_ticks(const Panel *panel, double *ticks, int max) {
    return axis_ticks(panel, 1, ticks, max);
}

static void format_tick(const Axis *axis, int i, char *buf, size_t size) {
    chart_format_tick(tick_value(axis, i), axis->low, axis->high, axis->step, buf, size);
}

static int widest_tick_label(const Axis *axis) {
    int widest = 0;
    for (int i = 0; i < tick_count(axis); i++) {
        char label[48];
        format_tick(axis, i, label, sizeof label);
        int w = raster_text_width(label, TEXT_SCALE);
        if (w > widest) widest = w;
    }
    return widest;
}

static int margin_for(int widest_label) {
    int margin = LEFT_BORDER + widest_label + TICK_LABEL_GAP + TICK_LENGTH;
    return margin > MARGIN_LEFT_MIN ? margin : MARGIN_LEFT_MIN;
}

int chart_left_margin(const Panel *panels, int count) {
    int margin = MARGIN_LEFT_MIN;
    for (int p = 0; p < count; p++) {
        Axis y_axis = panel_axis(&panels[p], 1);
        int m = margin_for(widest_tick_label(&y_axis));
        if (m > margin) margin = m;
    }
    return margin;
}

static int point_drawable(const Series *s, int i) {
    return i >= 0 && i < s->count && chart_value_drawable(s->x[i]) &&
           chart_value_drawable(s->y[i]);
}

// A series with no point to draw (a log without evaluated rows) gets no legend entry: the
// legend names only the curves that are there.
static int series_drawn(const Series *s) {
    for (int i = 0; i < s->count; i++)
        if (point_drawable(s, i)) return 1;
    return 0;
}

static int legend_entry_width(const Series *s) {
    return LEGEND_SWATCH + LEGEND_GAP + raster_text_width(s->label, TEXT_SCALE);
}

ChartLayout chart_layout(const Panel *panel) {
    ChartLayout layout;
    Axis y_axis = panel_axis(panel, 1);
    layout.widest_y_tick = widest_tick_label(&y_axis);
    int margin = panel->margin_left ? panel->margin_left : margin_for(layout.widest_y_tick);
    int right = panel->left + panel->width - MARGIN_RIGHT;
    int bottom = panel->top + panel->height - MARGIN_BOTTOM;
    layout.plot = (ChartBox){panel->left + margin, panel->top + MARGIN_TOP,
                             right - (panel->left + margin), bottom - (panel->top + MARGIN_TOP)};
    layout.y_tick_left = layout.plot.left - TICK_LENGTH - TICK_LABEL_GAP - layout.widest_y_tick;
    int text_height = raster_text_height(TEXT_SCALE);
    int band_top = panel->top + (MARGIN_TOP - text_height) / 2;
    layout.y_name = (ChartBox){layout.plot.left, band_top,
                               raster_text_width(panel->y_label, TEXT_SCALE), text_height};
    // In the band above the plot, where the y axis's name leaves room: inside the plot the
    // curves go anywhere (a noisy accuracy fills every corner), so no place there is free.
    int width = 0;
    for (int s = 0; s < panel->series_count; s++)
        if (series_drawn(&panel->series[s]))
            width += (width ? LEGEND_SPACING : 0) + legend_entry_width(&panel->series[s]);
    layout.legend = (ChartBox){right - width, band_top, width, text_height};
    return layout;
}

static Area area_of(const ChartLayout *layout) {
    return (Area){layout->plot.left, layout->plot.top, layout->plot.left + layout->plot.width,
                  layout->plot.top + layout->plot.height};
}

static void draw_x_ticks(Raster *raster, const Area *area, const Axis *axis) {
    for (int i = 0; i < tick_count(axis); i++) {
        int x = to_pixel_x(area, axis, tick_value(axis, i));
        raster_line(raster, x, area->top, x, area->bottom, 1, GRID);
        raster_line(raster, x, area->bottom, x, area->bottom + TICK_LENGTH, 1, INK);
        char label[48];
        format_tick(axis, i, label, sizeof label);
        raster_text(raster, x - raster_text_width(label, TEXT_SCALE) / 2,
                    area->bottom + TICK_LENGTH + 4, label, TEXT_SCALE, INK);
    }
}

static void draw_y_ticks(Raster *raster, const Area *area, const Axis *axis) {
    for (int i = 0; i < tick_count(axis); i++) {
        int y = to_pixel_y(area, axis, tick_value(axis, i));
        raster_line(raster, area->left, y, area->right, y, 1, GRID);
        raster_line(raster, area->left - TICK_LENGTH, y, area->left, y, 1, INK);
        char label[48];
        format_tick(axis, i, label, sizeof label);
        raster_text(raster, area->left - TICK_LENGTH - TICK_LABEL_GAP -
                                raster_text_width(label, TEXT_SCALE),
                    y - raster_text_height(TEXT_SCALE) / 2, label, TEXT_SCALE, INK);
    }
}

static void draw_frame_and_labels(Raster *raster, const Panel *panel, const Area *area,
                                  const ChartLayout *layout) {
    raster_line(raster, area->left, area->top, area->left, area->bottom, 1, INK);
    raster_line(raster, area->left, area->bottom, area->right, area->bottom, 1, INK);
    raster_line(raster, area->right, area->top, area->right, area->bottom, 1, INK);
    raster_line(raster, area->left, area->top, area->right, area->top, 1, INK);
    int x_label_width = raster_text_width(panel->x_label, TEXT_SCALE);
    raster_text(raster, (area->left + area->right - x_label_width) / 2,
                area->bottom + TICK_LENGTH + 8 + raster_text_height(TEXT_SCALE) + 6,
                panel->x_label, TEXT_SCALE, INK);
    raster_text(raster, layout->y_name.left, layout->y_name.top, panel->y_label, TEXT_SCALE,
                INK);
}

static void draw_marker(Raster *raster, int x, int y, MarkerShape shape, Rgb color) {
    if (shape != MARKER_DIAMOND) {
        raster_fill_rect(raster, x - MARKER_SIZE / 2, y - MARKER_SIZE / 2, MARKER_SIZE,
                         MARKER_SIZE, color);
        return;
    }
    for (int dy = -DIAMOND_RADIUS; dy <= DIAMOND_RADIUS; dy++) {
        int half = DIAMOND_RADIUS - abs(dy);
        raster_fill_rect(raster, x - half, y + dy, 2 * half + 1, 1, color);
    }
}

static void draw_series(Raster *raster, const Area *area, const Axis *x_axis,
                        const Axis *y_axis, const Series *s) {
    int previous_x = 0, previous_y = 0, has_previous = 0;
    for (int i = 0; i < s->count; i++) {
        if (!point_drawable(s, i)) {
            has_previous = 0;  // a gap rather than a line to infinity
            continue;
        }
        int x = to_pixel_x(area, x_axis, s->x[i]), y = to_pixel_y(area, y_axis, s->y[i]);
        if (has_previous) raster_line(raster, previous_x, previous_y, x, y, LINE_THICKNESS,
                                      s->color);
        // A point no line reaches (a run's first logged step alone) is drawn as a marker,
        // or it would not show at all.
        int alone = !point_drawable(s, i - 1) && !point_drawable(s, i + 1);
        if (s->markers || alone) draw_marker(raster, x, y, s->markers, s->color);
        previous_x = x;
        previous_y = y;
        has_previous = 1;
    }
}

// Each series' colour (a line, with a marker where its curve has them) beside its label.
static void draw_legend(Raster *raster, const Panel *panel, const ChartBox *box) {
    int x = box->left, middle = box->top + box->height / 2;
    for (int s = 0; s < panel->series_count; s++) {
        const Series *series = &panel->series[s];
        if (!series_drawn(series)) continue;
        raster_line(raster, x, middle, x + LEGEND_SWATCH, middle, LINE_THICKNESS + 1,
                    series->color);
        if (series->markers)
            draw_marker(raster, x + LEGEND_SWATCH / 2, middle, series->markers, series->color);
        raster_text(raster, x + LEGEND_SWATCH + LEGEND_GAP, box->top, series->label, TEXT_SCALE,
                    INK);
        x += legend_entry_width(series) + LEGEND_SPACING;
    }
}

void chart_draw_panel(Raster *raster, const Panel *panel) {
    ChartLayout layout = chart_layout(panel);
    Area area = area_of(&layout);
    Axis x_axis = panel_axis(panel, 0), y_axis = panel_axis(panel, 1);
    draw_x_ticks(raster, &area, &x_axis);
    draw_y_ticks(raster, &area, &y_axis);
    draw_frame_and_labels(raster, panel, &area, &layout);
    for (int s = 0; s < panel->series_count; s++)
        draw_series(raster, &area, &x_axis, &y_axis, &panel->series[s]);
    draw_legend(raster, panel, &layout.legend);
}
