// predict's results as data: the JSON of one sample's prediction (--json's "prediction"
// lines, and each line of --output FILE.jsonl), and --output FILE.csv's rows, one per
// sample and rank: path,label,rank,index,class,probability.
#ifndef TRAINER_PREDICTION_OUTPUT_H
#define TRAINER_PREDICTION_OUTPUT_H

#include <stdio.h>

#include "base/status.h"

typedef struct RankedClass {
    double probability;
    int index;
} RankedClass;

typedef struct Prediction {
    const char *path;           // the image's path, or SPEC#N for --data's N-th sample
    int label;                  // the sample's label (--data), -1: none known
    const RankedClass *ranked;  // most likely first
    int top;                    // entries of ranked shown
} Prediction;

// Every class of a row of `classes` scores, most likely first (their softmax), into
// ranked (room for `classes`); probs is scratch of `classes`. -1 when a score is NaN or
// infinite.
int prediction_rank(const float *scores, int classes, double *probs, RankedClass *ranked);

// names[c] names class c; names NULL or names[c] NULL: unnamed (JSON null, CSV empty).
typedef struct PredictionFile {
    const char *path;
    FILE *file;
    int jsonl;                  // else CSV
} PredictionFile;

// FILE.csv or FILE.jsonl (any case); another ending is refused with a hint.
int prediction_output_check(const char *path, Status *st);
int prediction_output_open(PredictionFile *out, const char *path, Status *st);
void prediction_output_write(PredictionFile *out, const Prediction *p,
                             const char *const *names, int named);
int prediction_output_close(PredictionFile *out, Status *st);
// {"path", "label", "top": [{"rank", "index", "class", "probability"}...]} (label null when
// not known), after {"event": EVENT} unless `event` is NULL (a --output FILE.jsonl line).
struct cJSON *prediction_json(const Prediction *p, const char *const *names, int named,
                              const char *event);

#endif
