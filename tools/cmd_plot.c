// `trainer plot DIR -o curves.png`: the loss and accuracy of a run logged with --logdir,
// against steps, train and test, as a PNG.
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/escape.h"
#include "tools/cli.h"
#include "tools/plot_figure.h"

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

// DIR, or the metrics file itself; the image goes beside the log by default.
static void metrics_path(const char *given, char *path, size_t size, char *output,
                         size_t output_size) {
    struct stat info;
    if (stat(given, &info) == 0 && S_ISDIR(info.st_mode)) {
        snprintf(path, size, "%s/metrics.jsonl", given);
        snprintf(output, output_size, "%s/curves.png", given);
        return;
    }
    snprintf(path, size, "%s", given);
    const char *slash = strrchr(given, '/');
    if (slash)
        snprintf(output, output_size, "%.*s/curves.png", (int)(slash - given), given);
    else
        snprintf(output, output_size, "curves.png");
}

static int refuse_output(const char *output, const char *why, const char *hint, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, output, 0, 0, "%s", why);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// -o is a path typed by hand, one slip away from the log itself or a model file: only a
// new file, an empty one or an earlier PNG is replaced. Anything that is not a regular file
// (a directory, a FIFO, /dev/full) is refused too, before the log is read.
static int check_output(const char *output, const char *log, Status *st) {
    struct stat out;
    if (stat(output, &out) != 0) return 0;
    if (files_are_same(output, log))
        return refuse_output(output, "-o names the metrics log being plotted; writing the "
                             "image there would replace the log", "choose another -o, e.g. "
                             "curves.png beside the log (the default without -o)", st);
    if (!S_ISREG(out.st_mode))
        return refuse_output(output, S_ISDIR(out.st_mode)
                                         ? "-o names a directory, not an image file"
                                         : "-o names something that is not a regular file "
                                           "(a FIFO or a device), and trainer does not replace it",
                             "name the PNG to write, e.g. curves.png", st);
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8] = {0};
    FILE *file = fopen(output, "rb");
    size_t got = file ? fread(head, 1, sizeof head, file) : 0;
    if (file) fclose(file);
    if (out.st_size == 0 || (got == sizeof head && memcmp(head, signature, sizeof head) == 0))
        return 0;
    return refuse_output(output, "the file exists and is not a PNG image; trainer plot "
                         "replaces only an earlier image", "choose another -o, or remove the "
                         "file first if it is really meant to go", st);
}

// The PNG writer takes a path, not a stream: it writes the temporary file AtomicFile made,
// so that a crash or a full disk leaves the earlier image whole, never half of a new one.
static int write_image(const Raster *raster, const char *output, Status *st) {
    AtomicFile file;
    // A missing or read-only folder is the -o given (exit 2), not a failed write.
    if (atomic_file_check_target(output, st)) {
        status_hint(st, "choose an -o path in a directory you can write to");
        return STATUS_BAD_INPUT;
    }
    TRY(atomic_file_open(&file, output, st));
    if (raster_write_png(raster, file.temporary, st)) {
        atomic_file_abandon(&file);
        return st->code;
    }
    return atomic_file_commit(&file, st);
}

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

// The image is a PNG whatever -o says: a name ending in another kind (.jpg, .svg) would
// hold PNG bytes under a name that promises something else, so it is refused.
static int check_output_kind(const char *output, Status *st) {
    const char *slash = strrchr(output, '/');
    const char *dot = strrchr(slash ? slash + 1 : output, '.');
    if (!dot || dot == (slash ? slash + 1 : output) || strcasecmp(dot, ".png") == 0) return 0;
    char shown[300];
    text_escape(dot, strlen(dot), shown, sizeof shown);
    status_fail_at(st, STATUS_BAD_INPUT, output, 0, 0, "trainer plot writes PNG images only, "
                   "not '%s'", shown);
    status_hint(st, "name a .png file: -o %.*s.png", (int)(dot - output), output);
    return STATUS_BAD_INPUT;
}

static int plot(const char *dir, const char *output, Status *st) {
    char path[1024], default_output[1024];
    metrics_path(dir, path, sizeof path, default_output, sizeof default_output);
    if (!output) output = default_output;
    TRY(check_output(output, path, st));
    TRY(check_output_kind(output, st));
    RunCurves curves;
    TRY(run_curves_read(path, &curves, st));
    print_notices(&curves, path);
    Raster raster;
    int rc = plot_figure_draw(&curves, &raster, st);
    if (!rc) {
        rc = write_image(&raster, output, st);
        raster_free(&raster);
    }
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
