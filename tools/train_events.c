#include "tools/train_events.h"

#include <cjson/cJSON.h>

#include "tools/result_sink.h"

// A count that may be absent: -1 is JSON null.
static void add_count(cJSON *event, const char *key, long value) {
    if (value < 0) cJSON_AddNullToObject(event, key);
    else cJSON_AddNumberToObject(event, key, (double)value);
}

void train_emit_run(const TrainRunFacts *f) {
    if (!result_sink_json()) return;
    cJSON *event = result_event("run");
    json_add_text(event, "command", "train");
    json_add_text(event, "model", f->model);
    cJSON_AddNumberToObject(event, "parameters", (double)f->parameters);
    json_add_text(event, "data", f->data);
    add_count(event, "train_samples", f->train_samples);
    add_count(event, "val_samples", f->val_samples);
    add_count(event, "test_samples", f->test_samples);
    json_add_text(event, "device", f->devices);
    cJSON_AddNumberToObject(event, "replicas", f->replicas);
    cJSON_AddNumberToObject(event, "processes", f->processes);
    json_add_text(event, "optimizer", f->optimizer);
    cJSON_AddNumberToObject(event, "batch", f->batch);
    cJSON_AddNumberToObject(event, "epochs", f->epochs);
    cJSON_AddNumberToObject(event, "seed", (double)f->seed);
    json_add_text(event, "evaluated", f->evaluated);
    result_emit(event);
}

// `value` unless `absent`, which is JSON null.
static void add_figure(cJSON *event, const char *key, double value, int absent) {
    if (absent) cJSON_AddNullToObject(event, key);
    else cJSON_AddNumberToObject(event, key, value);
}

void train_emit_epoch(const EpochReport *r, const char *evaluated) {
    if (!result_sink_json()) return;
    cJSON *event = result_event("epoch");
    cJSON_AddNumberToObject(event, "epoch", r->epoch);
    cJSON_AddNumberToObject(event, "epochs", r->epochs);
    cJSON_AddBoolToObject(event, "evaluation_only", r->evaluation_only);
    add_figure(event, "train_loss", r->train_loss, r->evaluation_only);
    add_figure(event, "train_accuracy", r->train_accuracy, r->evaluation_only);
    json_add_text(event, "split", r->has_test ? evaluated : NULL);
    add_figure(event, "loss", r->test.loss, !r->has_test);
    add_figure(event, "accuracy", r->test.accuracy, !r->has_test);
    add_figure(event, "samples", r->test.samples, !r->has_test);
    cJSON_AddNumberToObject(event, "lr", r->lr);
    add_figure(event, "samples_per_second", r->samples_per_second, r->evaluation_only);
    add_figure(event, "seconds", r->seconds, r->evaluation_only);
    cJSON_AddNumberToObject(event, "global_step", (double)r->global_step);
    result_emit(event);
}

void train_emit_result(int epochs, const char *split, const EvalResult *result,
                       int stopped_early) {
    if (!result_sink_json()) return;
    cJSON *event = result_event("result");
    json_add_text(event, "command", "train");
    cJSON_AddNumberToObject(event, "epochs", epochs);
    cJSON_AddBoolToObject(event, "stopped_early", stopped_early);
    json_add_text(event, "split", split);
    add_figure(event, "loss", split ? result->loss : 0, !split);
    add_figure(event, "accuracy", split ? result->accuracy : 0, !split);
    add_figure(event, "samples", split ? result->samples : 0, !split);
    result_emit(event);
}
