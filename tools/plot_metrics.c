#include "tools/plot_metrics.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tools/metrics_file.h"

static int curve_add(Curve *curve, double step, double value, Status *st) {
    if (curve->count == curve->capacity) {
        int capacity = curve->capacity ? 2 * curve->capacity : 64;
        double *steps = realloc(curve->step, (size_t)capacity * sizeof *steps);
        if (steps) curve->step = steps;
        double *values = steps ? realloc(curve->value, (size_t)capacity * sizeof *values) : NULL;
        if (!values) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
        curve->value = values;
        curve->capacity = capacity;
    }
    curve->step[curve->count] = step;
    curve->value[curve->count++] = value;
    return 0;
}

// A value the row may lack (test figures appear on epoch rows only).
static int add_if_present(Curve *curve, const cJSON *row, const char *key, double step,
                          Status *st) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(row, key);
    // A diverged loss is written as null and left out; 1e999 (infinite once read) is too,
    // as nothing can be drawn at infinity.
    return cJSON_IsNumber(item) && isfinite(item->valuedouble)
               ? curve_add(curve, step, item->valuedouble, st) : 0;
}

static int malformed(const char *path, int line, const char *what, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, line, 1, "%s", what);
    status_hint(st, "each line must be one JSON object as `trainer train --logdir` writes it "
                    "(docs/cli.md)");
    return STATUS_BAD_INPUT;
}

// Step rows carry the training curve; epoch rows the test curve (their training figures
// repeat the epoch's last step row).
static int add_row(RunCurves *curves, const cJSON *row, const char *path, int line,
                   Status *st) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(row, "kind");
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(row, "step");
    if (!cJSON_IsObject(row)) return malformed(path, line, "not a JSON object", st);
    if (!cJSON_IsString(kind) || !cJSON_IsNumber(step))
        return malformed(path, line, "a row without a \"kind\" string and a numeric \"step\"", st);
    double at = step->valuedouble;
    if (!isfinite(at)) return malformed(path, line, "a row whose \"step\" is not finite", st);
    if (strcmp(kind->valuestring, "step") == 0) {
        TRY(add_if_present(&curves->train_loss, row, "loss", at, st));
        return add_if_present(&curves->train_accuracy, row, "accuracy", at, st);
    }
    if (strcmp(kind->valuestring, "epoch") == 0) {
        // A run evaluates on one split each epoch: test, or val with --val-split.
        const char *split = cJSON_GetObjectItemCaseSensitive(row, "val_loss") ? "val" : "test";
        char loss_key[16], accuracy_key[24];
        snprintf(loss_key, sizeof loss_key, "%s_loss", split);
        snprintf(accuracy_key, sizeof accuracy_key, "%s_accuracy", split);
        if (cJSON_GetObjectItemCaseSensitive(row, loss_key))
            snprintf(curves->evaluated, sizeof curves->evaluated, "%s", split);
        TRY(add_if_present(&curves->test_loss, row, loss_key, at, st));
        return add_if_present(&curves->test_accuracy, row, accuracy_key, at, st);
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
        rc = row ? add_row(curves, row, path, number, st)
                 : malformed(path, number, "not valid JSON", st);
        cJSON_Delete(row);
        if (!rc) (*rows)++;
    }
    metrics_line_free(&line);
    return rc;
}

int run_curves_read(const char *path, RunCurves *curves, Status *st) {
    memset(curves, 0, sizeof *curves);
    snprintf(curves->evaluated, sizeof curves->evaluated, "test");
    FILE *file;
    TRY(metrics_file_open(path, O_RDONLY, "r", "`trainer train MODEL --logdir DIR` writes "
                          "DIR/metrics.jsonl, a regular file; pass DIR or that file", &file, st));
    int rows = 0;
    int rc = read_rows(file, curves, path, &rows, st);
    fclose(file);
    if (!rc && curves->train_loss.count + curves->test_loss.count == 0) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "no loss to plot: %d row%s, none with "
                       "a loss", rows, rows == 1 ? "" : "s");
        status_hint(st, "the run wrote no step or epoch yet; plot it after its first epoch");
        rc = STATUS_BAD_INPUT;
    }
    if (rc) run_curves_free(curves);
    return rc;
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
}
