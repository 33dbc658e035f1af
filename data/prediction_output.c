#include "data/prediction_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/json.h"
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

// Softmax of one row of scores, in double: large logits neither overflow nor lose the
// small probabilities the top-k list shows.
static int softmax_row(const float *scores, int classes, double *probs) {
    double max = scores[0];
    for (int c = 0; c < classes; c++) {
        if (!isfinite(scores[c])) return -1;
        if (scores[c] > max) max = scores[c];
    }
    double sum = 0.0;
    for (int c = 0; c < classes; c++) sum += probs[c] = exp((double)scores[c] - max);
    for (int c = 0; c < classes; c++) probs[c] /= sum;
    return 0;
}

static int more_likely_first(const void *a, const void *b) {
    const RankedClass *x = a, *y = b;
    if (x->probability != y->probability) return x->probability < y->probability ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

// Every class, most likely first; equal probabilities keep class order. One sort, not a
// selection per printed class: with --top near the class count (1,000 classes) that was
// K·C steps an image. `ranked` is room for `classes` entries.
static void rank_classes(const double *probs, int classes, RankedClass *ranked) {
    for (int c = 0; c < classes; c++) ranked[c] = (RankedClass){probs[c], c};
    qsort(ranked, (size_t)classes, sizeof *ranked, more_likely_first);
}

int prediction_rank(const float *scores, int classes, double *probs, RankedClass *ranked) {
    if (softmax_row(scores, classes, probs)) return -1;
    rank_classes(probs, classes, ranked);
    return 0;
}
