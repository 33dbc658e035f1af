// eval's per-class figures: a table of each class's samples, accuracy and precision, and
// the confusion matrix (rows: the true class, columns: the predicted one), as text, as
// JSON fields, and as the --output file (FILE.csv or FILE.json).
#ifndef TRAINER_EVAL_REPORT_H
#define TRAINER_EVAL_REPORT_H

#include "base/text_out.h"
#include "core/confusion.h"
#include "core/train.h"

struct cJSON;

// The names of the classes, by label; NULL entries (and names NULL) are shown as indices.
typedef struct ClassLabels {
    const char *const *names;
    int count;  // entries in names
} ClassLabels;

// --output's FILE ends in .csv or .json (any case); another ending is refused with a hint.
int eval_output_check(const char *path, Status *st);
// The table and the matrix as text, to `out`.
void eval_report_text(const TextOut *out, const Confusion *c, const ClassLabels *labels);
// eval's result as --json's line and --output FILE.json hold it: {"event": "result",
// "command": "eval", "split", "loss", "accuracy", "samples"}, with the confusion (NULL:
// none) as "classes": [{index, name, samples, correct, accuracy, precision}...] and
// "confusion": [[...], ...]. NULL when out of memory.
struct cJSON *eval_result_json(const char *split, const EvalResult *result, const Confusion *c,
                               const ClassLabels *labels);
// `result` (the JSON of the result, with the fields above) to PATH.json, or the per-class
// rows to PATH.csv: index,class,samples,correct,accuracy,precision,predicted_0,...
int eval_report_write(const char *path, const struct cJSON *result, const Confusion *c,
                      const ClassLabels *labels, Status *st);

#endif
