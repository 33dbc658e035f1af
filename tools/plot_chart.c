#include "tools/plot_chart.h"

#include <math.h>
#include <stdio.h>

static const Rgb INK = {0, 0, 0}, GRID = {225, 225, 225}, LEGEND_EDGE = {150, 150, 150};
static const Rgb WHITE = {255, 255, 255};
enum { TEXT_SCALE = 2, TICK_LENGTH = 6, LINE_THICKNESS = 2, MARKER_SIZE = 7 };
enum { MARGIN_LEFT = 90, MARGIN_RIGHT = 24, MARGIN_TOP = 40, MARGIN_BOTTOM = 56 };

typedef struct Axis {
    double low, high, step;  // the range, widened to whole ticks, and the tick spacing
} Axis;

// The plot area inside a panel, in pixels.
typedef struct Area {
    int left, top, right, bottom;
} Area;

// 1, 2 or 5 times a power of ten, about a fifth of the span: five or so labelled ticks.
static double tick_step(double span) {
    double rough = span / 5.0, power = pow(10.0, floor(log10(rough)));
    double fraction = rough / power;
    return (fraction < 1.5 ? 1.0 : fraction < 3.5 ? 2.0 : fraction < 7.5 ? 5.0 : 10.0) * power;
}

static Axis axis_over(double low, double high) {
    if (!(high > low)) {  // one value, or none: a unit-wide range around it
        double middle = isfinite(low) ? low : 0.0;
        low = middle - 0.5;
        high = middle + 0.5;
    }
    Axis axis = {.step = tick_step(high - low)};
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
            if (!isfinite(v)) continue;
            if (v < *low) *low = v;
            if (v > *high) *high = v;
        }
}

static int to_pixel_x(const Area *area, const Axis *axis, double x) {
    return area->left + (int)lround((x - axis->low) / (axis->high - axis->low) *
                                    (area->right - area->left));
}

static int to_pixel_y(const Area *area, const Axis *axis, double y) {
    return area->bottom - (int)lround((y - axis->low) / (axis->high - axis->low) *
                                      (area->bottom - area->top));
}

// As many decimals as the tick step needs, so 0.05 steps read 0.10, 0.15, not 0.1, 0.15.
static void format_tick(double value, double step, char *buf, size_t size) {
    int decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(value) < step * 1e-6) value = 0.0;  // no "-0.00"
    snprintf(buf, size, "%.*f", decimals, value);
}

static void draw_x_ticks(Raster *raster, const Area *area, const Axis *axis) {
    for (double v = axis->low; v <= axis->high + axis->step * 1e-6; v += axis->step) {
        int x = to_pixel_x(area, axis, v);
        raster_line(raster, x, area->top, x, area->bottom, 1, GRID);
        raster_line(raster, x, area->bottom, x, area->bottom + TICK_LENGTH, 1, INK);
        char label[32];
        format_tick(v, axis->step, label, sizeof label);
        raster_text(raster, x - raster_text_width(label, TEXT_SCALE) / 2,
                    area->bottom + TICK_LENGTH + 4, label, TEXT_SCALE, INK);
    }
}

static void draw_y_ticks(Raster *raster, const Area *area, const Axis *axis) {
    for (double v = axis->low; v <= axis->high + axis->step * 1e-6; v += axis->step) {
        int y = to_pixel_y(area, axis, v);
        raster_line(raster, area->left, y, area->right, y, 1, GRID);
        raster_line(raster, area->left - TICK_LENGTH, y, area->left, y, 1, INK);
        char label[32];
        format_tick(v, axis->step, label, sizeof label);
        raster_text(raster, area->left - TICK_LENGTH - 4 - raster_text_width(label, TEXT_SCALE),
                    y - raster_text_height(TEXT_SCALE) / 2, label, TEXT_SCALE, INK);
    }
}

static void draw_frame_and_labels(Raster *raster, const Panel *panel, const Area *area) {
    raster_line(raster, area->left, area->top, area->left, area->bottom, 1, INK);
    raster_line(raster, area->left, area->bottom, area->right, area->bottom, 1, INK);
    raster_line(raster, area->right, area->top, area->right, area->bottom, 1, INK);
    raster_line(raster, area->left, area->top, area->right, area->top, 1, INK);
    int x_label_width = raster_text_width(panel->x_label, TEXT_SCALE);
    raster_text(raster, (area->left + area->right - x_label_width) / 2,
                area->bottom + TICK_LENGTH + 8 + raster_text_height(TEXT_SCALE) + 6,
                panel->x_label, TEXT_SCALE, INK);
    raster_text(raster, area->left, panel->top + (MARGIN_TOP - raster_text_height(TEXT_SCALE)) / 2,
                panel->y_label, TEXT_SCALE, INK);
}

static void draw_series(Raster *raster, const Area *area, const Axis *x_axis,
                        const Axis *y_axis, const Series *s) {
    int previous_x = 0, previous_y = 0, has_previous = 0;
    for (int i = 0; i < s->count; i++) {
        if (!isfinite(s->x[i]) || !isfinite(s->y[i])) {
            has_previous = 0;  // a gap rather than a line to infinity
            continue;
        }
        int x = to_pixel_x(area, x_axis, s->x[i]), y = to_pixel_y(area, y_axis, s->y[i]);
        if (has_previous) raster_line(raster, previous_x, previous_y, x, y, LINE_THICKNESS,
                                      s->color);
        if (s->markers)
            raster_fill_rect(raster, x - MARKER_SIZE / 2, y - MARKER_SIZE / 2, MARKER_SIZE,
                             MARKER_SIZE, s->color);
        previous_x = x;
        previous_y = y;
        has_previous = 1;
    }
}

typedef struct Box {
    int left, top, width, height;
} Box;

static int points_inside(const Panel *panel, const Area *area, const Axis *x_axis,
                         const Axis *y_axis, const Box *box) {
    int count = 0;
    for (int s = 0; s < panel->series_count; s++)
        for (int i = 0; i < panel->series[s].count; i++) {
            int x = to_pixel_x(area, x_axis, panel->series[s].x[i]);
            int y = to_pixel_y(area, y_axis, panel->series[s].y[i]);
            count += x >= box->left && x < box->left + box->width && y >= box->top &&
                     y < box->top + box->height;
        }
    return count;
}

// Top right inside the plot area, or bottom right when the curves crowd the top (accuracy
// rises there): a swatch of each series' colour beside its label.
static void draw_legend(Raster *raster, const Panel *panel, const Area *area,
                        const Axis *x_axis, const Axis *y_axis) {
    int widest = 0, line_height = raster_text_height(TEXT_SCALE) + 8, swatch = 28;
    for (int s = 0; s < panel->series_count; s++) {
        int w = raster_text_width(panel->series[s].label, TEXT_SCALE);
        if (w > widest) widest = w;
    }
    int width = swatch + 8 + widest + 16, height = panel->series_count * line_height + 8;
    Box top = {area->right - width - 10, area->top + 10, width, height};
    Box bottom = {top.left, area->bottom - height - 10, width, height};
    Box box = points_inside(panel, area, x_axis, y_axis, &bottom) <
                      points_inside(panel, area, x_axis, y_axis, &top)
                  ? bottom : top;
    raster_fill_rect(raster, box.left, box.top, width, height, LEGEND_EDGE);
    raster_fill_rect(raster, box.left + 1, box.top + 1, width - 2, height - 2, WHITE);
    for (int s = 0; s < panel->series_count; s++) {
        int y = box.top + 8 + s * line_height + raster_text_height(TEXT_SCALE) / 2;
        raster_line(raster, box.left + 8, y, box.left + 8 + swatch, y, LINE_THICKNESS + 1,
                    panel->series[s].color);
        raster_text(raster, box.left + 8 + swatch + 8, y - raster_text_height(TEXT_SCALE) / 2,
                    panel->series[s].label, TEXT_SCALE, INK);
    }
}

void chart_draw_panel(Raster *raster, const Panel *panel) {
    Area area = {panel->left + MARGIN_LEFT, panel->top + MARGIN_TOP,
                 panel->left + panel->width - MARGIN_RIGHT,
                 panel->top + panel->height - MARGIN_BOTTOM};
    double low, high;
    data_range(panel, 0, &low, &high);
    Axis x_axis = axis_over(low, high);
    data_range(panel, 1, &low, &high);
    Axis y_axis = axis_over(low, high);
    draw_x_ticks(raster, &area, &x_axis);
    draw_y_ticks(raster, &area, &y_axis);
    draw_frame_and_labels(raster, panel, &area);
    for (int s = 0; s < panel->series_count; s++)
        draw_series(raster, &area, &x_axis, &y_axis, &panel->series[s]);
    draw_legend(raster, panel, &area, &x_axis, &y_axis);
}
