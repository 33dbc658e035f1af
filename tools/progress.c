#define _POSIX_C_SOURCE 200809L  // fileno
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "core/train.h"
#include "tools/cli.h"

// Redrawing more often than 10 times a second costs time and nobody can read it.
#define PROGRESS_INTERVAL_SECONDS 0.1
#define PROGRESS_WIDTH 24
// A bar narrower than this says too little to be worth its columns: parts go instead.
#define PROGRESS_MIN_WIDTH 8
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

// Here, beside the bar that prints a loss at every redraw; the epoch and evaluation lines
// print theirs with it too.
const char *loss_text(double loss, char *buf, size_t size) {
    if (isnan(loss)) snprintf(buf, size, "nan");
    else if (isinf(loss)) snprintf(buf, size, "%sinf", loss < 0 ? "-" : "");
    else snprintf(buf, size, fabs(loss) < 1e6 ? "%.4f" : "%.4g", loss);
    return buf;
}

static void format_duration(double seconds, char *buf, size_t size) {
    int s = (int)(seconds + 0.5);
    if (s >= 3600) snprintf(buf, size, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, size, "%d:%02d", s / 60, s % 60);
}

// Which parts a line shows; a bar of `cells` 0 is left out, brackets and all.
typedef struct LineParts {
    int cells, loss, rate, eta;
} LineParts;

static int compose_line(char *buf, size_t size, const ProgressLine *p, LineParts parts) {
    char cells[PROGRESS_WIDTH + 1];
    int filled = p->steps ? (int)((long long)p->step * parts.cells / p->steps) : 0;
    for (int i = 0; i < parts.cells; i++) cells[i] = i < filled ? '#' : '.';
    cells[parts.cells] = '\0';
    char loss[48] = "", rate[40] = "", eta[40] = "", loss_value[24];
    if (parts.loss)
        snprintf(loss, sizeof loss, "  loss %s",
                 loss_text(p->loss, loss_value, sizeof loss_value));
    if (parts.rate) snprintf(rate, sizeof rate, "  %.0f samples/s", p->samples_per_second);
    if (parts.eta) {
        char duration[24];
        format_duration(p->remaining_seconds, duration, sizeof duration);
        snprintf(eta, sizeof eta, "  ETA %s", duration);
    }
    return snprintf(buf, size, "epoch %d/%d %s%s%s%d/%d%s%s%s", p->epoch, p->epochs,
                    parts.cells ? "[" : "", cells, parts.cells ? "] " : "", p->step, p->steps,
                    loss, rate, eta);
}

// The last column stays empty: a terminal that wraps when a line fills it would move the
// cursor down, and `\r\033[K` clears only the line the cursor is on, so every redraw of a
// wrapped line would leave its first part behind.
void progress_format_line(char *buf, size_t size, int columns, const ProgressLine *line) {
    int room = columns - 1;
    // Least important first to go: the rate, the ETA, the bar, the loss.
    const LineParts layouts[] = {{PROGRESS_WIDTH, 1, 1, 1}, {PROGRESS_WIDTH, 1, 0, 1},
                                 {PROGRESS_WIDTH, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0}};
    int count = (int)(sizeof layouts / sizeof layouts[0]);
    for (int i = 0; i < count; i++) {
        LineParts parts = layouts[i];
        if (parts.cells) {
            LineParts bare = parts;
            bare.cells = 0;
            // The bar adds its cells, two brackets and a space to the line without it.
            int spare = room - compose_line(NULL, 0, line, bare) - 3;
            if (spare < PROGRESS_MIN_WIDTH) continue;
            if (spare < parts.cells) parts.cells = spare;
        }
        if (compose_line(buf, size, line, parts) <= room || i == count - 1) break;
    }
    // Not even "epoch E/N S/T" fits: cut it rather than wrap.
    if (room < 0) room = 0;
    if (size > 0 && (size_t)room < size) buf[room] = '\0';
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
    char cells[PROGRESS_WIDTH + 1];
    int filled = total ? (int)((long long)done * PROGRESS_WIDTH / total) : 0;
    for (int i = 0; i < PROGRESS_WIDTH; i++) cells[i] = i < filled ? '#' : '.';
    cells[PROGRESS_WIDTH] = '\0';
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
