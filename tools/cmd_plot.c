// `trainer plot DIR -o curves.png`: the loss and accuracy of a run logged with --logdir,
// against steps, train and test, as a PNG.
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"
#include "tools/plot_chart.h"
#include "tools/plot_metrics.h"

static const OptionSpec plot_options[] = {
    {"-o", "FILE", "the PNG to write (default: DIR/curves.png)"},
    {"--output", "FILE", "same as -o"},
    {NULL, NULL, NULL},
};

const Command plot_command = {
    .name = "plot",
    .usage = "DIR [-o FILE]",
    .summary = "draw the loss and accuracy curves of a run trained with --logdir DIR (reads "
               "DIR/metrics.jsonl) into a PNG",
    .options = plot_options,
    .run = run_plot,
};

enum { IMAGE_WIDTH = 1000, PANEL_HEIGHT = 400 };
static const Rgb TRAIN_COLOR = {31, 119, 180}, TEST_COLOR = {230, 85, 13};

static Series series_of(const char *label, const Curve *curve, Rgb color, int markers) {
    return (Series){.label = label, .x = curve->step, .y = curve->value, .count = curve->count,
                    .color = color, .markers = markers};
}

// Two panels, loss above accuracy; the test curve has a point per epoch, so it is marked.
static void draw_curves(Raster *raster, const RunCurves *c) {
    Series loss[] = {series_of("train", &c->train_loss, TRAIN_COLOR, 0),
                     series_of(c->evaluated, &c->test_loss, TEST_COLOR, 1)};
    Series accuracy[] = {series_of("train", &c->train_accuracy, TRAIN_COLOR, 0),
                         series_of(c->evaluated, &c->test_accuracy, TEST_COLOR, 1)};
    Panel top = {.left = 0, .top = 0, .width = IMAGE_WIDTH, .height = PANEL_HEIGHT,
                 .x_label = "step", .y_label = "loss", .series = loss, .series_count = 2};
    Panel bottom = top;
    bottom.top = PANEL_HEIGHT;
    bottom.y_label = "accuracy";
    bottom.series = accuracy;
    // One margin for both, wide enough for either's tick labels: the steps line up.
    Panel both[] = {top, bottom};
    top.margin_left = bottom.margin_left = chart_left_margin(both, 2);
    chart_draw_panel(raster, &top);
    chart_draw_panel(raster, &bottom);
}

// DIR, or the metrics file itself.
static void metrics_path(const char *given, char *path, size_t size) {
    struct stat info;
    if (stat(given, &info) == 0 && S_ISDIR(info.st_mode))
        snprintf(path, size, "%s/metrics.jsonl", given);
    else
        snprintf(path, size, "%s", given);
}

static int plot(const char *dir, const char *output, Status *st) {
    char path[1024], default_output[1024];
    metrics_path(dir, path, sizeof path);
    if (!output) {
        snprintf(default_output, sizeof default_output, "%s/curves.png", dir);
        output = default_output;
    }
    RunCurves curves;
    TRY(run_curves_read(path, &curves, st));
    Raster raster;
    int rc = raster_init(&raster, IMAGE_WIDTH, 2 * PANEL_HEIGHT, (Rgb){255, 255, 255}, st);
    if (!rc) {
        draw_curves(&raster, &curves);
        rc = raster_write_png(&raster, output, st);
        raster_free(&raster);
    }
    run_curves_free(&curves);
    if (!rc) printf("wrote %s (%d x %d): loss and accuracy of %s\n", output, IMAGE_WIDTH,
                    2 * PANEL_HEIGHT, path);
    return rc;
}

int run_plot(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (args->positional_count != 1) {
        status_fail(&st, STATUS_BAD_INPUT, "trainer plot takes one run directory, got %d "
                    "arguments", args->positional_count);
        status_hint(&st, "usage: trainer plot DIR -o curves.png (DIR as given to train --logdir)");
        return report_failure(&st);
    }
    const char *output = args_get(cmd, args, "-o");
    if (!output) output = args_get(cmd, args, "--output");
    return plot(args->positionals[0], output, &st) ? report_failure(&st) : 0;
}
