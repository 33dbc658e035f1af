// libFuzzer target for the metrics log reader of `trainer plot` (data/plot_metrics.c over
// data/metrics_file.c, whose line reader and row parser --logdir's resume shares). A
// metrics.jsonl is outside bytes: copied from another machine, cut by a crash, edited by
// hand. Whatever the bytes: no crash, no read outside them, no leak; a refusal is
// STATUS_BAD_INPUT with a message holding no raw escape byte; an accepted log has a loss
// (training, evaluated, or the final test row's), one finite step range, and every
// curve's points are numbers a chart draws (finite, at most CHART_VALUE_MAX in size).
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/plot_chart.h"
#include "data/plot_metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_curve(const Curve *c) {
    if (c->count < 0 || (c->count && (!c->step || !c->value))) abort();
    for (int i = 0; i < c->count; i++)
        if (!chart_value_drawable(c->step[i]) || !chart_value_drawable(c->value[i])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write("metrics.jsonl", data, size);
    RunCurves curves;
    memset(&curves, 0, sizeof curves);
    Status st;
    status_clear(&st);
    int rc = run_curves_read(path, &curves, &st);
    if (rc) {
        if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) abort();
    } else {
        if (curves.train_loss.count + curves.test_loss.count +
                curves.final_test_loss.count <= 0)
            abort();
        // Every row's step bounds the panels' one step range.
        if (!isfinite(curves.first_step) || !isfinite(curves.last_step) ||
            curves.first_step > curves.last_step)
            abort();
        check_curve(&curves.train_loss);
        check_curve(&curves.train_accuracy);
        check_curve(&curves.test_loss);
        check_curve(&curves.test_accuracy);
        check_curve(&curves.final_test_loss);
        check_curve(&curves.final_test_accuracy);
    }
    run_curves_free(&curves);
    return 0;
}
