#define _POSIX_C_SOURCE 200809L  // fileno
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/progress_line.h"
#include "core/train.h"
#include "tools/cli.h"

// Redrawing more often than 10 times a second costs time and nobody can read it.
#define PROGRESS_INTERVAL_SECONDS 0.1
#define PROGRESS_DEFAULT_COLUMNS 80

// --quiet (tools/result_sink.c): no bar is drawn by this process.
static int progress_hidden;

void progress_hide(void) { progress_hidden = 1; }

void progress_init(ProgressBar *bar, FILE *out) {
    bar->out = out;
    bar->enabled = isatty(fileno(out)) && !progress_hidden;
    bar->last_draw = 0.0;
    bar->drawn = 0;
}

// Read at every redraw, so a resized terminal gets lines that fit it.
static int terminal_columns(FILE *out) {
    struct winsize size;
    if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    const char *columns = getenv("COLUMNS");
    long value = columns ? strtol(columns, NULL, 10) : 0;
    return value > 0 && value < 10000 ? (int)value : PROGRESS_DEFAULT_COLUMNS;
}

void progress_update(ProgressBar *bar, int epoch, int epochs, int step, int steps, double loss,
                     double samples_per_second, double epoch_seconds) {
    if (!bar->enabled) return;
    double now = monotonic_seconds();
    if (step != steps && now - bar->last_draw < PROGRESS_INTERVAL_SECONDS) return;
    bar->last_draw = now;
    ProgressLine line = {.epoch = epoch, .epochs = epochs, .step = step, .steps = steps,
                         .loss = loss, .samples_per_second = samples_per_second,
                         .remaining_seconds = step ? epoch_seconds / step * (steps - step)
                                                   : 0.0};
    char text[256];
    progress_format_line(text, sizeof text, terminal_columns(bar->out), &line);
    fprintf(bar->out, "\r\033[K%s", text);
    fflush(bar->out);
    bar->drawn = 1;
}

void progress_update_eval(ProgressBar *bar, const char *split, int done, int total) {
    if (!bar->enabled) return;
    double now = monotonic_seconds();
    if (done != total && now - bar->last_draw < PROGRESS_INTERVAL_SECONDS) return;
    bar->last_draw = now;
    char cells[PROGRESS_BAR_CELLS + 1];
    int filled = total ? (int)((long long)done * PROGRESS_BAR_CELLS / total) : 0;
    for (int i = 0; i < PROGRESS_BAR_CELLS; i++) cells[i] = i < filled ? '#' : '.';
    cells[PROGRESS_BAR_CELLS] = '\0';
    char text[256];
    snprintf(text, sizeof text, "evaluating %s [%s] %d/%d", split, cells, done, total);
    int room = terminal_columns(bar->out) - 1;
    if (room >= 0 && (size_t)room < sizeof text) text[room] = '\0';
    fprintf(bar->out, "\r\033[K%s", text);
    fflush(bar->out);
    bar->drawn = 1;
}

void progress_clear(ProgressBar *bar) {
    if (!bar->drawn) return;
    fprintf(bar->out, "\r\033[K");
    fflush(bar->out);
    bar->drawn = 0;
}
