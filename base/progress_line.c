// The text of a training progress line, fitted to a terminal's width: pure formatting, so
// tests/unit/test_progress.c checks every width without a terminal; tools/progress.c draws it.
#include "base/progress_line.h"

#include <math.h>
#include <stdio.h>

// A bar narrower than this says too little to be worth its columns: parts go instead.
#define PROGRESS_MIN_WIDTH 8

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
    char cells[PROGRESS_BAR_CELLS + 1];
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
    const LineParts layouts[] = {{PROGRESS_BAR_CELLS, 1, 1, 1}, {PROGRESS_BAR_CELLS, 1, 0, 1},
                                 {PROGRESS_BAR_CELLS, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 0}};
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
