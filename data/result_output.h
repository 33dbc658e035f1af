// The files --output writes (predict's FILE.csv or FILE.jsonl, eval's FILE.csv or
// FILE.json): chosen by the name's ending, written whole, a failed write an error naming the
// file.
#ifndef TRAINER_RESULT_OUTPUT_H
#define TRAINER_RESULT_OUTPUT_H

#include <stdio.h>

#include "base/status.h"

struct cJSON;

// Whether `path` ends in `extension` (".csv"), in any case.
int output_has_extension(const char *path, const char *extension);
int output_open(const char *path, FILE **out, Status *st);
// Closes it; a write that failed (a full disk) is STATUS_RUNTIME_ERROR naming the file.
int output_close(const char *path, FILE *f, Status *st);
// A CSV field: as it is, or in double quotes (doubled inside) when it holds a comma, a quote,
// a line break, or starts or ends with a space (RFC 4180).
void output_csv_field(FILE *f, const char *text);


// What eval and predict are about to run, as --json's {"event": "run"} line: "command",
// "model", "weights", "data" (null when NULL), "split" (eval's; left out when NULL),
// "samples", "top" (predict's; left out when 0) and "device". NULL when out of memory.
typedef struct RunRecord {
    const char *command, *model, *weights, *data, *split, *device;
    int samples, top;
} RunRecord;
struct cJSON *run_record_json(const RunRecord *r);

#endif
