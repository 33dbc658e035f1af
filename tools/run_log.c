#define _POSIX_C_SOURCE 200809L  // gethostname, mkdir, clock_gettime
#include "tools/run_log.h"

#include "base/directories.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int unwritable(const char *path, const char *what, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot %s: %s", what, strerror(errno));
    status_hint(st, "choose a --logdir you can write to (it is created when missing)");
    return STATUS_BAD_INPUT;
}

static int make_directory(const char *dir, Status *st) {
    if (!make_directories(dir)) return 0;
    // The stat below fails for a folder that could not be made, setting its own errno
    // (ENOENT), where mkdir's (EACCES, EPERM, ENOTDIR) is the reason to report.
    int reason = errno;
    struct stat info;
    int is_file = stat(dir, &info) == 0 && !S_ISDIR(info.st_mode);
    errno = is_file ? ENOTDIR : reason;
    return unwritable(dir, is_file ? "use it as the log directory" : "create the log directory",
                      st);
}

int run_log_open(RunLog *log, const char *dir, const char *evaluated, Status *st) {
    memset(log, 0, sizeof *log);
    snprintf(log->evaluated, sizeof log->evaluated, "%s", evaluated);
    TRY(make_directory(dir, st));
    snprintf(log->metrics_path, sizeof log->metrics_path, "%s/metrics.jsonl", dir);
    log->metrics = fopen(log->metrics_path, "w");
    if (!log->metrics) return unwritable(log->metrics_path, "create the metrics log", st);
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    return event_file_open(&log->events, dir, wall_seconds(), host, st);
}

static int metrics_write_failed(const RunLog *log, Status *st) {
    status_fail_at(st, STATUS_RUNTIME_ERROR, log->metrics_path, 0, 0,
                   "cannot write the metrics log: %s", strerror(errno));
    status_hint(st, "check the free space of the --logdir directory");
    return STATUS_RUNTIME_ERROR;
}

// One object per line: cJSON's unformatted print never breaks a line.
static int write_line(RunLog *log, cJSON *object, Status *st) {
    char *text = cJSON_PrintUnformatted(object);
    int ok = text && fprintf(log->metrics, "%s\n", text) > 0;
    cJSON_free(text);
    cJSON_Delete(object);
    return ok ? 0 : metrics_write_failed(log, st);
}

static void add_memory(cJSON *object, size_t in_use, size_t peak) {
    cJSON_AddNumberToObject(object, "memory_in_use", (double)in_use);
    cJSON_AddNumberToObject(object, "memory_peak", (double)peak);
}

static int add_scalars(RunLog *log, long step, const char *const *tags, const double *values,
                       int count, Status *st) {
    double now = wall_seconds();
    for (int i = 0; i < count; i++)
        TRY(event_file_add_scalar(&log->events, now, step, tags[i], (float)values[i], st));
    return 0;
}

// Every row starts with what it is and where in the run it was written.
static cJSON *new_row(const char *kind, long step, int epoch) {
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "kind", kind);
    cJSON_AddNumberToObject(line, "step", (double)step);
    cJSON_AddNumberToObject(line, "epoch", epoch);
    return line;
}

int run_log_step(RunLog *log, const StepReport *r, Status *st) {
    cJSON *line = new_row("step", r->global_step, r->epoch);
    cJSON_AddNumberToObject(line, "loss", r->loss);
    cJSON_AddNumberToObject(line, "accuracy", r->accuracy);
    cJSON_AddNumberToObject(line, "lr", r->lr);
    cJSON_AddNumberToObject(line, "samples_per_second", r->samples_per_second);
    add_memory(line, r->memory_in_use, r->memory_peak);
    TRY(write_line(log, line, st));
    static const char *const tags[] = {"train/loss", "train/accuracy", "lr",
                                       "train/samples_per_second"};
    double values[] = {r->loss, r->accuracy, r->lr, r->samples_per_second};
    return add_scalars(log, r->global_step, tags, values, 4, st);
}

static int flush_both(RunLog *log, Status *st) {
    if (fflush(log->metrics) != 0) return metrics_write_failed(log, st);
    return event_file_flush(&log->events, st);
}

int run_log_epoch(RunLog *log, const EpochReport *r, Status *st) {
    cJSON *line = new_row("epoch", r->global_step, r->epoch);
    cJSON_AddNumberToObject(line, "loss", r->train_loss);
    cJSON_AddNumberToObject(line, "accuracy", r->train_accuracy);
    char loss_key[16], accuracy_key[24], loss_tag[16], accuracy_tag[24];
    snprintf(loss_key, sizeof loss_key, "%s_loss", log->evaluated);
    snprintf(accuracy_key, sizeof accuracy_key, "%s_accuracy", log->evaluated);
    snprintf(loss_tag, sizeof loss_tag, "%s/loss", log->evaluated);
    snprintf(accuracy_tag, sizeof accuracy_tag, "%s/accuracy", log->evaluated);
    if (r->has_test) {
        cJSON_AddNumberToObject(line, loss_key, r->test.loss);
        cJSON_AddNumberToObject(line, accuracy_key, r->test.accuracy);
    }
    cJSON_AddNumberToObject(line, "lr", r->lr);
    cJSON_AddNumberToObject(line, "samples_per_second", r->samples_per_second);
    cJSON_AddNumberToObject(line, "seconds", r->seconds);
    add_memory(line, r->memory_in_use, r->memory_peak);
    TRY(write_line(log, line, st));
    const char *const tags[] = {"epoch/train_loss", "epoch/train_accuracy", loss_tag,
                                accuracy_tag};
    double values[] = {r->train_loss, r->train_accuracy, r->test.loss, r->test.accuracy};
    TRY(add_scalars(log, r->global_step, tags, values, r->has_test ? 4 : 2, st));
    return flush_both(log, st);
}

// `trainer plot` passes over kinds it does not draw, so this row changes no chart.
int run_log_early_stop(RunLog *log, const EarlyStop *watch, const EpochReport *r, Status *st) {
    cJSON *line = new_row("early_stop", r->global_step, r->epoch);
    cJSON_AddNumberToObject(line, "patience", watch->patience);
    cJSON_AddNumberToObject(line, "best_epoch", watch->best_epoch);
    char best_key[24];
    snprintf(best_key, sizeof best_key, "best_%s_loss", log->evaluated);
    if (watch->best_epoch) cJSON_AddNumberToObject(line, best_key, watch->best_loss);
    TRY(write_line(log, line, st));
    return flush_both(log, st);
}

void run_log_close(RunLog *log) {
    if (log->metrics) fclose(log->metrics);
    log->metrics = NULL;
    event_file_close(&log->events);
}
