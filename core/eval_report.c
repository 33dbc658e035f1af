#include "core/eval_report.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/escape.h"
#include "base/json.h"
#include "base/text_out.h"
#include "base/utf8.h"
#include "data/result_output.h"

enum { NAME_COLUMNS_MAX = 24, SHOWN_NAME_MAX = 4 * 256 + 8 };

int eval_output_check(const char *path, Status *st) {
    if (output_has_extension(path, ".csv") || output_has_extension(path, ".json")) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--output %s: eval writes FILE.csv or FILE.json", path);
    status_hint(st, "name the file by the format wanted: e.g. --output per_class.csv (one row "
                "a class) or --output per_class.json (the result with the matrix)");
    return STATUS_BAD_INPUT;
}

// One class's figures, from its row (true class) and column (predicted) of the matrix.
typedef struct ClassFigures {
    long samples, predicted, correct;
} ClassFigures;

static ClassFigures class_figures(const Confusion *c, int k) {
    ClassFigures f = {0, 0, c->counts[(size_t)k * c->classes + k]};
    for (int j = 0; j < c->classes; j++) {
        f.samples += c->counts[(size_t)k * c->classes + j];
        f.predicted += c->counts[(size_t)j * c->classes + k];
    }
    return f;
}

static const char *label_name(const ClassLabels *labels, int k) {
    return labels->names && k < labels->count ? labels->names[k] : NULL;
}

// Class k as text shows it: its name escaped (bytes from a folder or a file), else `class k`.
static const char *shown_name(const ClassLabels *labels, int k, char *out, size_t size) {
    const char *name = label_name(labels, k);
    if (name) return text_escape(name, strlen(name), out, size);
    snprintf(out, size, "class %d", k);
    return out;
}

static void print_ratio(const TextOut *out, long part, long whole) {
    if (whole) text_printf(out, "  %9.4f", (double)part / whole);
    else text_printf(out, "  %9s", "-");
}

static void print_class_table(const TextOut *out, const Confusion *c,
                              const ClassLabels *labels, int width) {
    text_put(out, "per class (accuracy: of the class's samples, the share predicted as it, its "
                  "recall; precision: of the samples predicted as it, the share that are):\n");
    text_printf(out, "  %4s %-*s  %8s  %9s  %9s\n", "", width, "class", "samples", "accuracy",
                "precision");
    for (int k = 0; k < c->classes; k++) {
        char name[SHOWN_NAME_MAX];
        shown_name(labels, k, name, sizeof name);
        int pad = width - utf8_display_columns(name);
        ClassFigures f = class_figures(c, k);
        text_printf(out, "  %4d %s%*s  %8ld", k, name, pad > 0 ? pad : 0, "", f.samples);
        print_ratio(out, f.correct, f.samples);
        print_ratio(out, f.correct, f.predicted);
        text_put(out, "\n");
    }
}

static void print_matrix(const TextOut *out, const Confusion *c) {
    long largest = c->classes - 1;
    for (size_t i = 0; i < (size_t)c->classes * c->classes; i++)
        if (c->counts[i] > largest) largest = c->counts[i];
    char digits[32];
    int width = snprintf(digits, sizeof digits, "%ld", largest);
    text_printf(out, "confusion matrix (rows: true class, columns: predicted class):\n      ");
    for (int j = 0; j < c->classes; j++) text_printf(out, " %*d", width, j);
    text_put(out, "\n");
    for (int k = 0; k < c->classes; k++) {
        text_printf(out, "  %4d", k);
        for (int j = 0; j < c->classes; j++)
            text_printf(out, " %*ld", width, c->counts[(size_t)k * c->classes + j]);
        text_put(out, "\n");
    }
}

void eval_report_text(const TextOut *out, const Confusion *c, const ClassLabels *labels) {
    int width = 5;  // "class"
    for (int k = 0; k < c->classes; k++) {
        char name[SHOWN_NAME_MAX];
        int columns = utf8_display_columns(shown_name(labels, k, name, sizeof name));
        if (columns > width) width = columns < NAME_COLUMNS_MAX ? columns : NAME_COLUMNS_MAX;
    }
    print_class_table(out, c, labels, width);
    print_matrix(out, c);
}

static void add_ratio(cJSON *object, const char *key, long part, long whole) {
    if (whole) cJSON_AddNumberToObject(object, key, (double)part / whole);
    else cJSON_AddNullToObject(object, key);
}

static void add_classes_json(cJSON *object, const Confusion *c, const ClassLabels *labels) {
    cJSON *classes = cJSON_AddArrayToObject(object, "classes");
    cJSON *matrix = cJSON_AddArrayToObject(object, "confusion");
    for (int k = 0; k < c->classes; k++) {
        ClassFigures f = class_figures(c, k);
        cJSON *item = cJSON_CreateObject();
        cJSON_AddNumberToObject(item, "index", k);
        json_add_text(item, "name", label_name(labels, k));
        cJSON_AddNumberToObject(item, "samples", (double)f.samples);
        cJSON_AddNumberToObject(item, "correct", (double)f.correct);
        add_ratio(item, "accuracy", f.correct, f.samples);
        add_ratio(item, "precision", f.correct, f.predicted);
        cJSON_AddItemToArray(classes, item);
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < c->classes; j++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber((double)c->counts[(size_t)k * c->classes + j]));
        cJSON_AddItemToArray(matrix, row);
    }
}

cJSON *eval_result_json(const char *split, const EvalResult *result, const Confusion *c,
                        const ClassLabels *labels) {
    cJSON *item = cJSON_CreateObject();
    if (!item) return NULL;
    json_add_text(item, "event", "result");
    json_add_text(item, "command", "eval");
    json_add_text(item, "split", split);
    cJSON_AddNumberToObject(item, "loss", result->loss);
    cJSON_AddNumberToObject(item, "accuracy", result->accuracy);
    cJSON_AddNumberToObject(item, "samples", result->samples);
    if (c) add_classes_json(item, c, labels);
    return item;
}

static void write_csv_ratio(FILE *f, long part, long whole) {
    if (whole) fprintf(f, ",%.6f", (double)part / whole);
    else fputc(',', f);
}

static void write_csv(FILE *f, const Confusion *c, const ClassLabels *labels) {
    fputs("index,class,samples,correct,accuracy,precision", f);
    for (int j = 0; j < c->classes; j++) fprintf(f, ",predicted_%d", j);
    fputc('\n', f);
    for (int k = 0; k < c->classes; k++) {
        ClassFigures f_k = class_figures(c, k);
        const char *name = label_name(labels, k);
        fprintf(f, "%d,", k);
        output_csv_field(f, name ? name : "");
        fprintf(f, ",%ld,%ld", f_k.samples, f_k.correct);
        write_csv_ratio(f, f_k.correct, f_k.samples);
        write_csv_ratio(f, f_k.correct, f_k.predicted);
        for (int j = 0; j < c->classes; j++)
            fprintf(f, ",%ld", c->counts[(size_t)k * c->classes + j]);
        fputc('\n', f);
    }
}

int eval_report_write(const char *path, const cJSON *result, const Confusion *c,
                      const ClassLabels *labels, Status *st) {
    FILE *f;
    TRY(output_open(path, &f, st));
    if (output_has_extension(path, ".json")) json_print(f, result, 1);
    else write_csv(f, c, labels);
    return output_close(path, f, st);
}
