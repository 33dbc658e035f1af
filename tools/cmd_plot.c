// `trainer plot DIR -o curves.png`: the loss and accuracy of a run logged with --logdir,
// against steps, train and test, as a PNG.
#include <stdio.h>

#include "data/plot_output.h"
#include "tools/cli.h"

static const OptionSpec plot_options[] = {
    {"-o", "FILE", "the PNG to write (default: curves.png beside the log); an existing file "
                   "is replaced only if it is a PNG"},
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

// What the image leaves out, by the line it is on: a diverged run's log is one to plot, but
// a loss that vanished without a word reads as a run that never had it.
static void print_notices(const RunCurves *curves, const char *path) {
    if (curves->undrawable)
        print_notice("%s:%d: %d value%s not finite (null or beyond a double's range, as a "
                     "diverging run logs it) or over 1e+300 in size, left out of the plot; the "
                     "first is on this line", path, curves->first_undrawable_line,
                     curves->undrawable, curves->undrawable == 1 ? " is" : "s are");
    if (curves->unfinished_line)
        print_notice("%s:%d: the last line is unfinished (the run is writing it, or was killed "
                     "mid-line); plotting the rows before it", path, curves->unfinished_line);
}

static int plot(const char *dir, const char *output, Status *st) {
    char path[1024], default_output[1024];
    plot_paths(dir, path, sizeof path, default_output, sizeof default_output);
    if (!output) output = default_output;
    TRY(plot_output_check(output, path, st));
    RunCurves curves;
    TRY(run_curves_read(path, &curves, st));
    print_notices(&curves, path);
    int rc = plot_write_png(&curves, output, st);
    run_curves_free(&curves);
    if (!rc) printf("wrote %s (%d x %d): loss and accuracy of %s\n", output, PLOT_IMAGE_WIDTH,
                    2 * PLOT_PANEL_HEIGHT, path);
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
