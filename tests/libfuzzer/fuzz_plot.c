// libFuzzer target for `trainer plot` as a whole but the PNG encoding: the metrics log
// reader (data/plot_metrics.c), then the figure it makes drawn into its raster
// (data/plot_figure.c over plot_chart.c, plot_raster.c, plot_font.c) with the values read.
// fuzz_metrics checks the reader alone; this one reaches the axes, ticks and lines with
// whatever values a log can hold (steps of -1e308 and 1e308 made a NaN axis and an
// undefined cast in the tick labels). Whatever the bytes: no crash, no undefined behaviour,
// no leak, no raw escape byte in a refusal; every tick of every panel is a finite number
// (at most twice CHART_VALUE_MAX: an axis reaches a little past its values), above the one
// before, a handful of them, and its label holds neither "nan" nor "inf".
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/plot_figure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_TICKS = 64 };

static void check_ticks(const Panel *panel, int use_y) {
    double ticks[MAX_TICKS];
    int count = use_y ? chart_y_ticks(panel, ticks, MAX_TICKS)
                      : chart_x_ticks(panel, ticks, MAX_TICKS);
    // A step of 1, 2 or 5 times a power of ten over the range: five or so, never one.
    if (count < 2 || count > MAX_TICKS) abort();
    for (int i = 0; i < count; i++) {
        if (!(fabs(ticks[i]) <= 2 * CHART_VALUE_MAX)) abort();
        if (i && !(ticks[i] > ticks[i - 1])) abort();
        char label[48];
        chart_format_tick(ticks[i], ticks[0], ticks[count - 1], ticks[1] - ticks[0], label,
                          sizeof label);
        if (!label[0] || strstr(label, "nan") || strstr(label, "inf")) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("metrics.jsonl", data, size);
    RunCurves curves;
    Status st;
    status_clear(&st);
    int rc = run_curves_read(path, &curves, &st);
    if (rc) {
        if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) abort();
        return 0;
    }
    PlotFigure figure;
    plot_figure_layout(&curves, &figure);
    for (int p = 0; p < 2; p++) {
        check_ticks(&figure.panels[p], 0);
        check_ticks(&figure.panels[p], 1);
    }
    Raster raster;
    if (plot_figure_draw(&curves, &raster, &st) == 0) raster_free(&raster);
    run_curves_free(&curves);
    return 0;
}
