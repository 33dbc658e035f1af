#include "tools/predict_output.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "tools/cli.h"
#include "data/result_output.h"

int prediction_output_check(const char *path, Status *st) {
    if (output_has_extension(path, ".csv") || output_has_extension(path, ".jsonl")) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--output %s: predict writes FILE.csv or FILE.jsonl",
                path);
    status_hint(st, "name the file by the format wanted: e.g. --output predictions.csv (a row "
                "per sample and rank) or --output predictions.jsonl (a JSON object per sample)");
    return STATUS_BAD_INPUT;
}

int prediction_output_open(PredictionFile *out, const char *path, Status *st) {
    out->path = path;
    out->jsonl = output_has_extension(path, ".jsonl");
    TRY(output_open(path, &out->file, st));
    if (!out->jsonl) fputs("path,label,rank,index,class,probability\n", out->file);
    return 0;
}

static const char *class_name(const char *const *names, int named, int c) {
    return names && c < named ? names[c] : NULL;
}

cJSON *prediction_json(const Prediction *p, const char *const *names, int named,
                       const char *event) {
    cJSON *item = cJSON_CreateObject();
    if (event) json_add_text(item, "event", event);
    json_add_text(item, "path", p->path);
    if (p->label >= 0) cJSON_AddNumberToObject(item, "label", p->label);
    else cJSON_AddNullToObject(item, "label");
    cJSON *top = cJSON_AddArrayToObject(item, "top");
    for (int r = 0; r < p->top; r++) {
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddNumberToObject(entry, "rank", r + 1);
        cJSON_AddNumberToObject(entry, "index", p->ranked[r].index);
        json_add_text(entry, "class", class_name(names, named, p->ranked[r].index));
        cJSON_AddNumberToObject(entry, "probability", p->ranked[r].probability);
        cJSON_AddItemToArray(top, entry);
    }
    return item;
}

static void write_csv_rows(FILE *f, const Prediction *p, const char *const *names, int named) {
    for (int r = 0; r < p->top; r++) {
        output_csv_field(f, p->path);
        if (p->label >= 0) fprintf(f, ",%d", p->label);
        else fputc(',', f);
        int c = p->ranked[r].index;
        const char *name = class_name(names, named, c);
        fprintf(f, ",%d,%d,", r + 1, c);
        output_csv_field(f, name ? name : "");
        fprintf(f, ",%.6g\n", p->ranked[r].probability);
    }
}

void prediction_output_write(PredictionFile *out, const Prediction *p,
                             const char *const *names, int named) {
    if (!out->file) return;
    if (!out->jsonl) {
        write_csv_rows(out->file, p, names, named);
        return;
    }
    cJSON *item = prediction_json(p, names, named, NULL);
    json_print(out->file, item, 0);
    cJSON_Delete(item);
}

int prediction_output_close(PredictionFile *out, Status *st) {
    if (!out->file) return 0;
    FILE *f = out->file;
    out->file = NULL;
    return output_close(out->path, f, st);
}
