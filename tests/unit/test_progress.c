// tools/progress's line fits the terminal it is drawn on: it is redrawn with `\r\033[K`,
// which clears only the cursor's line, so a line that wrapped (86 columns on an 80-column
// terminal) left a fragment behind at every redraw. Narrower terminals shrink the bar, then
// lose the rate, the ETA, the bar and the loss, in that order; the line never wraps.
#include "check.h"
#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

// The audit's line: 86 columns with the full 24-cell bar.
static const ProgressLine audit_line = {.epoch = 10, .epochs = 10, .step = 16, .steps = 157,
                                        .loss = 0.2679, .samples_per_second = 12015,
                                        .remaining_seconds = 2};

static const char *line_at(int columns, const ProgressLine *line) {
    static char text[256];
    progress_format_line(text, sizeof text, columns, line);
    if (strlen(text) >= (size_t)(columns > 0 ? columns : 1)) {
        fprintf(stderr, "at %d columns the line is %zu long: '%s'\n", columns, strlen(text),
                text);
        test_failures++;
    }
    return text;
}

static void wide_terminal_shows_everything(void) {
    CHECK(strcmp(line_at(200, &audit_line), "epoch 10/10 [##......................] 16/157"
                 "  loss 0.2679  12015 samples/s  ETA 0:02") == 0);
}

static void eighty_columns_narrow_the_bar(void) {
    const char *text = line_at(80, &audit_line);
    CHECK_CONTAINS(text, "] 16/157  loss 0.2679  12015 samples/s  ETA 0:02");
    CHECK_CONTAINS(text, "epoch 10/10 [#");
    CHECK(strstr(text, "########################") == NULL);
}

static void sixty_columns_drop_the_rate(void) {
    const char *text = line_at(60, &audit_line);
    CHECK_CONTAINS(text, "] 16/157  loss 0.2679  ETA 0:02");
    CHECK(strstr(text, "samples/s") == NULL);
}

static void forty_columns_keep_the_loss(void) {
    CHECK(strcmp(line_at(40, &audit_line), "epoch 10/10 16/157  loss 0.2679") == 0);
}

static void big_numbers_fit_too(void) {
    ProgressLine big = {.epoch = 1000, .epochs = 1000, .step = 123456, .steps = 1234567,
                        .loss = 123456.789, .samples_per_second = 98765432,
                        .remaining_seconds = 360000};
    for (int columns = 1; columns <= 200; columns++) line_at(columns, &big);
    for (int columns = 1; columns <= 200; columns++) line_at(columns, &audit_line);
    CHECK_CONTAINS(line_at(200, &big), "[##......................]");
}

static void tiny_terminals_cut_the_line(void) {
    CHECK(strcmp(line_at(10, &audit_line), "epoch 10/") == 0);
    CHECK(strcmp(line_at(1, &audit_line), "") == 0);
    CHECK(strcmp(line_at(0, &audit_line), "") == 0);
}

static void the_buffer_bounds_the_line(void) {
    char small[12];
    progress_format_line(small, sizeof small, 200, &audit_line);
    CHECK(strcmp(small, "epoch 10/10") == 0);
}

int main(void) {
    wide_terminal_shows_everything();
    eighty_columns_narrow_the_bar();
    sixty_columns_drop_the_rate();
    forty_columns_keep_the_loss();
    big_numbers_fit_too();
    tiny_terminals_cut_the_line();
    the_buffer_bounds_the_line();
    return test_exit_code("test_progress");
}
