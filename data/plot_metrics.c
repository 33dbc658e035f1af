#include "data/plot_metrics.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/metrics_file.h"
#include "data/plot_chart.h"

static int curve_add(Curve *curve, double step, double value, Status *st) {
    if (curve->count == curve->capacity) {
        int capacity = curve->capacity ? 2 * curve->capacity : 64;
        double *steps = realloc(curve->step, (size_t)capacity * sizeof *steps);
        if (steps) curve->step = steps;
        double *values = steps ? realloc(curve->value, (size_t)capacity * sizeof *values) : NULL;
        if (!values)
            return status_out_of_host_memory(st, (size_t)capacity * sizeof *values,
                                             "for a curve's points");
        curve->value = values;
        curve->capacity = capacity;
    }
    curve->step[curve->count] = step;
    curve->value[curve->count++] = value;
    return 0;
}

// A row being read: its JSON, its step and its line in the file.
typedef struct Row {
    const cJSON *json;
    double step;
    int line;
} Row;

// A value the row may lack (test figures appear on epoch rows only). One that is there but
// not drawable: null (what the writer makes of NaN or infinity, a diverged run's last
// loss), 1e999 (infinite once read) or 1e308 (no axis holds it). It is left out and
// counted, for a notice.
static int add_value(RunCurves *curves, Curve *curve, const Row *row, const char *key,
                     Status *st) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(row->json, key);
    if (cJSON_IsNumber(item) && chart_value_drawable(item->valuedouble))
        return curve_add(curve, row->step, item->valuedouble, st);
    if (cJSON_IsNull(item) || cJSON_IsNumber(item)) {
        if (!curves->undrawable++) curves->first_undrawable_line = row->line;
    }
    return 0;
}

// A step row's running mean under `key` as the step's own value (*sum: the segment's sum
// before this step, then with it). A short last batch weighs a little more than it should
// (the mean is over samples): a wiggle the smoothing takes out.
static int add_step_value(RunCurves *curves, Curve *curve, const Row *row, const char *key,
                          double *sum, Status *st) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(row->json, key);
    if (!cJSON_IsNumber(item) || !chart_value_drawable(item->valuedouble))
        return add_value(curves, curve, row, key, st);
    double total = item->valuedouble * curves->segment.count;
    double value = total - *sum;
    *sum = total;
    // Means near the drawable bound can give a step value past it: left out like them.
    if (chart_value_drawable(value)) return curve_add(curve, row->step, value, st);
    if (!curves->undrawable++) curves->first_undrawable_line = row->line;
    return 0;
}

// A step row continues the segment when it is the next step of the same epoch.
static void enter_segment(StepSegment *segment, const Row *row) {
    const cJSON *epoch = cJSON_GetObjectItemCaseSensitive(row->json, "epoch");
    // Compared, not counted with: a double past int's range (the fuzzer wrote -1e308) would
    // be undefined behaviour to cast, so the segment keys on the double itself.
    double e = cJSON_IsNumber(epoch) ? epoch->valuedouble : 0.0;
    if (segment->count == 0 || e != segment->epoch || row->step != segment->last_step + 1)
        *segment = (StepSegment){.epoch = e};
    segment->count++;
    segment->last_step = row->step;
}

// An exponential moving average over about 1/40 of the curve's points (at least none),
// debiased at the start as TensorBoard's smoothing is, so the first points are not pulled
// toward zero.
static void smooth_curve(Curve *curve) {
    double span = curve->count / 40.0;
    if (span < 1.0) return;
    double alpha = 2.0 / (span + 1.0), average = 0.0, weight = 0.0;
    for (int i = 0; i < curve->count; i++) {
        average = (1.0 - alpha) * average + alpha * curve->value[i];
        weight = (1.0 - alpha) * weight + alpha;
        curve->value[i] = average / weight;
    }
}

// Every row drawn from widens the step range, its values finite or not: the panels share
// it, so that a step where only the loss is left out still lines up with the accuracy.
static void include_step(RunCurves *curves, double step) {
    if (step < curves->first_step) curves->first_step = step;
    if (step > curves->last_step) curves->last_step = step;
}

// A line is at most METRICS_LINE_MAX bytes, so a column fits an int.
static int malformed_at(const char *path, int line, int column, const char *what, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, line, column, "%s", what);
    status_hint(st, "each line must be one JSON object as `trainer train --logdir` writes it "
                    "(docs/cli.md)");
    return STATUS_BAD_INPUT;
}

static int malformed(const char *path, int line, const char *what, Status *st) {
    return malformed_at(path, line, 1, what, st);
}

// Step rows carry the training curve; epoch rows the evaluated split's (their training
// figures repeat the epoch's last step row); test rows the test split's after --val-split.
static int add_row(RunCurves *curves, const cJSON *json, const char *path, int line,
                   Status *st) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(json, "kind");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(json, "step");
    if (!cJSON_IsObject(json)) return malformed(path, line, "not a JSON object", st);
    if (!cJSON_IsString(kind) || !cJSON_IsNumber(step))
        return malformed(path, line, "a row without a \"kind\" string and a numeric \"step\"", st);
    Row row = {json, step->valuedouble, line};
    if (!isfinite(row.step)) return malformed(path, line, "a row whose \"step\" is not finite", st);
    if (!chart_value_drawable(row.step))
        return malformed(path, line, "a row whose \"step\" is over 1e+300 in size, past what "
                         "an axis can hold", st);
    if (strcmp(kind->valuestring, "step") == 0) {
        include_step(curves, row.step);
        enter_segment(&curves->segment, &row);
        TRY(add_step_value(curves, &curves->train_loss, &row, "loss",
                           &curves->segment.loss_sum, st));
        return add_step_value(curves, &curves->train_accuracy, &row, "accuracy",
                              &curves->segment.accuracy_sum, st);
    }
    if (strcmp(kind->valuestring, "epoch") == 0) {
        include_step(curves, row.step);
        // A run evaluates on one split each epoch: test, or val with --val-split.
        const char *split = cJSON_GetObjectItemCaseSensitive(json, "val_loss") ? "val" : "test";
        char loss_key[16], accuracy_key[24];
        snprintf(loss_key, sizeof loss_key, "%s_loss", split);
        snprintf(accuracy_key, sizeof accuracy_key, "%s_accuracy", split);
        if (cJSON_GetObjectItemCaseSensitive(json, loss_key))
            snprintf(curves->evaluated, sizeof curves->evaluated, "%s", split);
        TRY(add_value(curves, &curves->test_loss, &row, loss_key, st));
        return add_value(curves, &curves->test_accuracy, &row, accuracy_key, st);
    }
    if (strcmp(kind->valuestring, "test") == 0) {
        include_step(curves, row.step);
        TRY(add_value(curves, &curves->final_test_loss, &row, "test_loss", st));
        return add_value(curves, &curves->final_test_accuracy, &row, "test_accuracy", st);
    }
    return 0;  // a kind a later version writes: not ours to draw
}

static int read_rows(FILE *file, RunCurves *curves, const char *path, int *rows, Status *st) {
    MetricsLine line = {0};
    int rc = 0, got = 0;
    for (int number = 1; !rc; number++) {
        rc = metrics_line_read(file, &line, &got, path, number, "pass the metrics.jsonl of a "
                               "run trained with --logdir", st);
        if (rc || !got) break;
        if (metrics_line_blank(&line)) continue;
        cJSON *row = metrics_line_parse(&line);
        // The writer flushes whole lines, but a run killed mid-write, or read while its
        // line is on its way to the disk, ends in part of one: the rows before it stand.
        if (!row && !line.finished) {
            curves->unfinished_line = number;
            break;
        }
        const char *nul = memchr(line.text, '\0', line.length);
        rc = row ? add_row(curves, row, path, number, st)
             : nul ? malformed_at(path, number, (int)(nul - line.text) + 1, "a NUL byte (0x00): "
                                  "JSON text holds none", st)
                   : malformed(path, number, "not valid JSON", st);
        cJSON_Delete(row);
        if (!rc) (*rows)++;
    }
    metrics_line_free(&line);
    return rc;
}

static int no_loss(const RunCurves *curves, const char *path, int rows, Status *st) {
    if (!curves->undrawable) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "no loss to plot: %d row%s, none "
                       "with a loss", rows, rows == 1 ? "" : "s");
        status_hint(st, "the run wrote no step or epoch yet; plot it after its first epoch");
        return STATUS_BAD_INPUT;
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, curves->first_undrawable_line, 0, "no loss to "
                   "plot: %d row%s, none with a finite loss (%d value%s not finite or over "
                   "1e+300 in size, the first on this line)", rows, rows == 1 ? "" : "s",
                   curves->undrawable, curves->undrawable == 1 ? "" : "s");
    status_hint(st, "the run diverged before it logged a finite loss; train it again with a "
                    "lower learning rate (--lr)");
    return STATUS_BAD_INPUT;
}

int run_curves_read(const char *path, RunCurves *curves, Status *st) {
    memset(curves, 0, sizeof *curves);
    snprintf(curves->evaluated, sizeof curves->evaluated, "test");
    curves->first_step = INFINITY;
    curves->last_step = -INFINITY;
    FILE *file;
    TRY(metrics_file_open(path, O_RDONLY, "r", "`trainer train MODEL --logdir DIR` writes "
                          "DIR/metrics.jsonl, a regular file; pass DIR or that file", &file, st));
    int rows = 0;
    int rc = read_rows(file, curves, path, &rows, st);
    fclose(file);
    if (!rc && curves->train_loss.count + curves->test_loss.count +
                       curves->final_test_loss.count == 0)
        rc = no_loss(curves, path, rows, st);
    if (rc) {
        run_curves_free(curves);
        return rc;
    }
    smooth_curve(&curves->train_loss);
    smooth_curve(&curves->train_accuracy);
    return 0;
}

static void curve_free(Curve *curve) {
    free(curve->step);
    free(curve->value);
    memset(curve, 0, sizeof *curve);
}

void run_curves_free(RunCurves *curves) {
    curve_free(&curves->train_loss);
    curve_free(&curves->train_accuracy);
    curve_free(&curves->test_loss);
    curve_free(&curves->test_accuracy);
    curve_free(&curves->final_test_loss);
    curve_free(&curves->final_test_accuracy);
}
