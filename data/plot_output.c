// The files of `trainer plot` (data/plot_output.h).
#define _POSIX_C_SOURCE 200809L  // strcasecmp
#include "data/plot_output.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/escape.h"

void plot_paths(const char *given, char *log, size_t log_size, char *image,
                size_t image_size) {
    struct stat info;
    if (stat(given, &info) == 0 && S_ISDIR(info.st_mode)) {
        snprintf(log, log_size, "%s/metrics.jsonl", given);
        snprintf(image, image_size, "%s/curves.png", given);
        return;
    }
    snprintf(log, log_size, "%s", given);
    const char *slash = strrchr(given, '/');
    if (slash)
        snprintf(image, image_size, "%.*s/curves.png", (int)(slash - given), given);
    else
        snprintf(image, image_size, "curves.png");
}

static int refuse_output(const char *output, const char *why, const char *hint, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, output, 0, 0, "%s", why);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// -o is a path typed by hand, one slip away from the log itself or a model file: only a
// new file, an empty one or an earlier PNG is replaced. Anything that is not a regular file
// (a directory, a FIFO, /dev/full) is refused too, before the log is read.
static int check_existing_output(const char *output, const char *log, Status *st) {
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

int plot_output_check(const char *output, const char *log, Status *st) {
    TRY(check_existing_output(output, log, st));
    return check_output_kind(output, st);
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

int plot_write_png(const RunCurves *curves, const char *output, Status *st) {
    Raster raster;
    TRY(plot_figure_draw(curves, &raster, st));
    int rc = write_image(&raster, output, st);
    raster_free(&raster);
    return rc;
}
