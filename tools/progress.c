#define _POSIX_C_SOURCE 200809L  // fileno
#include <stdio.h>
#include <unistd.h>

#include "core/train.h"
#include "tools/cli.h"

// Redrawing more often than 10 times a second costs time and nobody can read it.
#define PROGRESS_INTERVAL_SECONDS 0.1
#define PROGRESS_WIDTH 24

void progress_init(ProgressBar *bar, FILE *out) {
    bar->out = out;
    bar->enabled = isatty(fileno(out));
    bar->last_draw = 0.0;
    bar->drawn = 0;
}

static void format_duration(double seconds, char *buf, size_t size) {
    int s = (int)(seconds + 0.5);
    if (s >= 3600) snprintf(buf, size, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, size, "%d:%02d", s / 60, s % 60);
}

void progress_update(ProgressBar *bar, int epoch, int epochs, int step, int steps, double loss,
                     double samples_per_second, double epoch_seconds) {
    if (!bar->enabled) return;
    double now = monotonic_seconds();
    if (step != steps && now - bar->last_draw < PROGRESS_INTERVAL_SECONDS) return;
    bar->last_draw = now;
    int filled = steps ? step * PROGRESS_WIDTH / steps : 0;
    char cells[PROGRESS_WIDTH + 1];
    for (int i = 0; i < PROGRESS_WIDTH; i++) cells[i] = i < filled ? '#' : '.';
    cells[PROGRESS_WIDTH] = '\0';
    char eta[32];
    double remaining = step ? epoch_seconds / step * (steps - step) : 0.0;
    format_duration(remaining, eta, sizeof eta);
    fprintf(bar->out, "\r\033[Kepoch %d/%d [%s] %d/%d  loss %.4f  %.0f samples/s  ETA %s", epoch,
            epochs, cells, step, steps, loss, samples_per_second, eta);
    fflush(bar->out);
    bar->drawn = 1;
}

void progress_clear(ProgressBar *bar) {
    if (!bar->drawn) return;
    fprintf(bar->out, "\r\033[K");
    fflush(bar->out);
    bar->drawn = 0;
}
