#define _POSIX_C_SOURCE 200809L  // gethostname, mkdir, clock_gettime, ftruncate, fileno
#include "core/run_log.h"

#include "base/directories.h"
#include "data/metrics_file.h"

#include <errno.h>
#include <fcntl.h>
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

// A row's step, as trainer writes it: a whole number from 0 to 2^53, which a double holds
// exactly. 0 for anything else: a step of 1e300 or -1e300 (a log edited by hand, or written
// by another program) has no long to be cast to, a step of 16.5 is no step of a run.
static int row_step(const cJSON *row, long *step) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(row, "step");
    if (!cJSON_IsNumber(item)) return 0;
    double value = item->valuedouble;
    if (!(value >= 0 && value <= 9007199254740992.0) || value != (double)(long)value) return 0;
    *step = (long)value;
    return 1;
}

// A row's TensorBoard scalars: which of its keys, under which tag, by the row's kind. One
// table for the rows this run writes and for the earlier rows a resume repeats (below).
typedef struct ScalarKey {
    const char *kind, *key, *tag;
} ScalarKey;

static int add_row_scalars(RunLog *log, const cJSON *row, Status *st) {
    char loss_key[16], accuracy_key[24], loss_tag[16], accuracy_tag[24];
    snprintf(loss_key, sizeof loss_key, "%s_loss", log->evaluated);
    snprintf(accuracy_key, sizeof accuracy_key, "%s_accuracy", log->evaluated);
    snprintf(loss_tag, sizeof loss_tag, "%s/loss", log->evaluated);
    snprintf(accuracy_tag, sizeof accuracy_tag, "%s/accuracy", log->evaluated);
    const ScalarKey keys[] = {
        {"step", "loss", "train/loss"},
        {"step", "accuracy", "train/accuracy"},
        {"step", "lr", "lr"},
        {"step", "samples_per_second", "train/samples_per_second"},
        {"epoch", "loss", "epoch/train_loss"},
        {"epoch", "accuracy", "epoch/train_accuracy"},
        {"epoch", loss_key, loss_tag},
        {"epoch", accuracy_key, accuracy_tag},
        // After --val-split's last epoch: `test_*` keys and `test/` tags never mean val.
        {"test", "test_loss", "test/loss"},
        {"test", "test_accuracy", "test/accuracy"},
    };
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(row, "kind");
    long step;
    if (!cJSON_IsString(kind) || !row_step(row, &step)) return 0;
    double now = wall_seconds();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(row, keys[i].key);
        if (strcmp(kind->valuestring, keys[i].kind) != 0 || !cJSON_IsNumber(value)) continue;
        TRY(event_file_add_scalar(&log->events, now, step, keys[i].tag, (float)value->valuedouble,
                                  st));
    }
    return 0;
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

// The rows of metrics.jsonl a run finds there when it starts. Steps only grow down the
// file, so the rows to keep are a prefix: `keep` bytes. `cut`: the last line was cut short
// (what a killed writer leaves), dropped whatever its step. `unfinished`: the last row kept
// is whole but lacks its newline, which must be added before the next row is appended.
// `at_resumed`: the kept rows of the resumed step itself, whose scalars the new event file
// repeats (see run_log_open).
typedef struct EarlierRows {
    int rows, kept, dropped, cut, unfinished;
    long last_step, keep;
    cJSON *at_resumed;
} EarlierRows;

static int earlier_row_invalid(const RunLog *log, int number, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, log->metrics_path, number, 1, "not a row `trainer "
                   "train --logdir` writes, so the rows the resumed steps replace are unknown");
    status_hint(st, "fix or remove that line, or pass a new --logdir for the resumed run");
    return STATUS_BAD_INPUT;
}

// Reads the rows already in the file: those of steps up to `resumed_step` are kept (a
// fresh run, -1, keeps none), later ones dropped, as the resumed run trains those steps
// again. The last line without its newline that is no row is what a killed writer left:
// dropped.
static int read_earlier_rows(RunLog *log, long resumed_step, int evaluate_first,
                             EarlierRows *e, Status *st) {
    memset(e, 0, sizeof *e);
    e->last_step = -1;
    MetricsLine line = {0};
    int rc = 0, got = 0, dropping = 0;
    for (int number = 1; !rc; number++) {
        rc = metrics_line_read(log->metrics, &line, &got, log->metrics_path, number,
                               "remove that line, or pass a new --logdir for the resumed run",
                               st);
        if (rc || !got) break;
        if (metrics_line_blank(&line)) continue;
        e->rows++;
        cJSON *row = metrics_line_parse(&line);
        int kept_row = 0;
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(row, "kind");
        long step = -1;
        int valid = cJSON_IsObject(row) && row_step(row, &step);
        if (valid) e->last_step = step;
        // Rows of evaluations the resumed run does again at its first step: the test split
        // after the last epoch (a resume with nothing left to train), and the epoch whose
        // evaluation the checkpoint says had not finished.
        int redone = valid && cJSON_IsString(kind) &&
                     (strcmp(kind->valuestring, "test") == 0 ||
                      (evaluate_first && strcmp(kind->valuestring, "epoch") == 0));
        if (!valid && !line.finished) {  // the cut-short tail
            e->cut = 1;
        } else if (resumed_step >= 0 && !dropping && !valid) {
            rc = earlier_row_invalid(log, number, st);
        } else if (resumed_step >= 0) {
            dropping = dropping || e->last_step > resumed_step ||
                       (redone && e->last_step == resumed_step);
            if (dropping) {
                e->dropped++;
            } else {
                e->kept++;
                e->keep = ftell(log->metrics);
                e->unfinished = !line.finished;
                kept_row = e->last_step == resumed_step;
            }
        }
        if (kept_row && !e->at_resumed) e->at_resumed = cJSON_CreateArray();
        if (!kept_row || !cJSON_AddItemToArray(e->at_resumed, row)) cJSON_Delete(row);
        if (e->cut || rc) break;
    }
    metrics_line_free(&line);
    return rc;
}

// A fresh run appending to another run's rows would draw two runs as one curve, with the
// steps starting over halfway; replacing them would lose a run. So, as with the
// --checkpoint folder, a log that holds rows is refused: each run gets its own folder,
// which is also how TensorBoard compares runs (--logdir runs/1, runs/2, ...).
static int refuse_earlier_run(const RunLog *log, const EarlierRows *e, Status *st) {
    char last[64] = "";
    if (e->last_step >= 0) snprintf(last, sizeof last, ", the last at step %ld", e->last_step);
    status_fail_at(st, STATUS_BAD_INPUT, log->metrics_path, 0, 0, "already holds %d row%s of "
                   "an earlier run%s", e->rows, e->rows == 1 ? "" : "s", last);
    status_hint(st, "give each run its own --logdir (runs/2 beside runs/1); to continue that "
                "run, add --resume with its checkpoint; or remove %.600s", log->metrics_path);
    return STATUS_BAD_INPUT;
}

static int keep_earlier_rows(RunLog *log, long resumed_step, const EarlierRows *e,
                             Status *st) {
    log->kept_rows = e->kept;
    log->dropped_rows = e->dropped;
    log->cut_row = e->cut;
    // Truncated, then written at the end: stdio wants a seek between reading and writing.
    // A kept last row without its newline gets one, or the next row would share its line.
    if (ftruncate(fileno(log->metrics), (off_t)e->keep) != 0 ||
        fseek(log->metrics, 0, SEEK_END) != 0 ||
        (e->unfinished && (fputc('\n', log->metrics) == EOF || fflush(log->metrics) != 0))) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, log->metrics_path, 0, 0, "cannot cut the "
                       "metrics log back to step %ld: %s", resumed_step, strerror(errno));
        status_hint(st, "check the file's permissions and the --logdir disk");
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

static int path_too_long(const char *dir, size_t longest, Status *st) {
    status_fail(st, STATUS_BAD_INPUT, "--logdir: the path is too long (%zu bytes; at most %zu)",
                strlen(dir), longest);
    status_hint(st, "choose a --logdir with a shorter path");
    return STATUS_BAD_INPUT;
}

// Both file names must fit whole: cut short, a name would be another file's (a folder, or
// an event file of the run resumed). The longest event name is checked before anything is
// touched, with 10 digits of seconds and the ".999" of the last free name tried.
static int check_path_lengths(RunLog *log, const char *dir, const char *host, Status *st) {
    size_t metrics_room = sizeof log->metrics_path - sizeof "/metrics.jsonl";
    size_t events_room = sizeof log->events.path - sizeof "/events.out.tfevents.0123456789."
                         - strlen(host) - strlen(".999");
    size_t longest = metrics_room < events_room ? metrics_room : events_room;
    if (strlen(dir) > longest) return path_too_long(dir, longest, st);
    snprintf(log->metrics_path, sizeof log->metrics_path, "%s/metrics.jsonl", dir);
    return 0;
}

int run_log_check(const char *dir, int resuming, Status *st) {
    RunLog log;
    memset(&log, 0, sizeof log);
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    TRY(check_path_lengths(&log, dir, host, st));  // sets metrics_path, never cut short
    TRY(run_log_lock(dir, st));
    struct stat info;
    if (resuming || stat(log.metrics_path, &info) != 0) return 0;
    TRY(metrics_file_open(log.metrics_path, O_RDONLY, "r", "choose a --logdir where "
                          "metrics.jsonl is missing or a regular file", &log.metrics, st));
    EarlierRows e;
    int rc = read_earlier_rows(&log, -1, 0, &e, st);
    if (!rc && e.rows) rc = refuse_earlier_run(&log, &e, st);
    fclose(log.metrics);
    return rc;
}

// Nothing in DIR changes until everything that can be refused has been: the earlier rows
// are read (a fresh run into a used DIR is refused) and the event file created before
// metrics.jsonl is cut back to the resumed step.
// Two runs writing one log would interleave their rows, and a resume would cut back the
// other's. A filesystem without locks (errno other than EWOULDBLOCK) runs unlocked.
int run_log_lock(const char *dir, Status *st) {
    if (directory_lock(dir) == 0 || errno != EWOULDBLOCK) return 0;
    return directory_lock_refusal(dir, "--logdir", "give this run its own --logdir (runs/2 "
                                  "beside runs/1)", st);
}

int run_log_open(RunLog *log, const char *dir, const char *evaluated, long resumed_step,
                 int evaluate_first, Status *st) {
    memset(log, 0, sizeof *log);
    snprintf(log->evaluated, sizeof log->evaluated, "%s", evaluated);
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    TRY(check_path_lengths(log, dir, host, st));
    TRY(make_directory(dir, st));
    TRY(run_log_lock(dir, st));
    if (metrics_file_open(log->metrics_path, O_RDWR | O_CREAT, "r+", "choose a --logdir you "
                          "can write to, where metrics.jsonl is missing or a regular file",
                          &log->metrics, st))
        return st->code;
    EarlierRows e;
    int rc = read_earlier_rows(log, resumed_step, evaluate_first, &e, st);
    if (!rc && resumed_step < 0 && e.rows) rc = refuse_earlier_run(log, &e, st);
    if (!rc) rc = event_file_open(&log->events, dir, wall_seconds(), host, st);
    // TensorBoard drops what the earlier event files hold from this step on, as after a
    // restart from a checkpoint: the steps trained again, and the evaluations of the resumed
    // step done again (a START one step later kept those, each then drawn twice). The
    // resumed step's rows that are kept have their scalars written again after it.
    if (!rc && resumed_step >= 0)
        rc = event_file_add_start(&log->events, wall_seconds(), resumed_step, st);
    for (const cJSON *row = e.at_resumed ? e.at_resumed->child : NULL; !rc && row;
         row = row->next)
        rc = add_row_scalars(log, row, st);
    cJSON_Delete(e.at_resumed);
    if (!rc && keep_earlier_rows(log, resumed_step, &e, st)) rc = st->code;
    if (rc) {
        if (log->events.file) unlink(log->events.path);  // no empty part left behind
        event_file_close(&log->events);
        fclose(log->metrics);
        log->metrics = NULL;
    }
    return rc;
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
    // Flushed whole: a reader (trainer plot during the run) or a crash finds only whole rows,
    // where stdio's buffer would leave the file ending mid-row. A row per log step is cheap.
    int ok = text && fprintf(log->metrics, "%s\n", text) > 0 && fflush(log->metrics) == 0;
    cJSON_free(text);
    cJSON_Delete(object);
    return ok ? 0 : metrics_write_failed(log, st);
}

// A row into metrics.jsonl and its scalars into the event file (add_row_scalars).
static int write_row(RunLog *log, cJSON *row, Status *st) {
    int rc = add_row_scalars(log, row, st);
    if (rc) {
        cJSON_Delete(row);
        return rc;
    }
    return write_line(log, row, st);
}

static void add_memory(cJSON *object, size_t in_use, size_t peak) {
    cJSON_AddNumberToObject(object, "memory_in_use", (double)in_use);
    cJSON_AddNumberToObject(object, "memory_peak", (double)peak);
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
    return write_row(log, line, st);
}

static int flush_both(RunLog *log, Status *st) {
    if (fflush(log->metrics) != 0) return metrics_write_failed(log, st);
    return event_file_flush(&log->events, st);
}

int run_log_epoch(RunLog *log, const EpochReport *r, Status *st) {
    cJSON *line = new_row("epoch", r->global_step, r->epoch);
    // An evaluation-only row (the epoch's evaluation, cut short, done on resume) has no
    // train figures; a mid-epoch resume's cover only the steps from first_step.
    if (!r->evaluation_only) {
        cJSON_AddNumberToObject(line, "loss", r->train_loss);
        cJSON_AddNumberToObject(line, "accuracy", r->train_accuracy);
        if (r->first_step > 1) cJSON_AddNumberToObject(line, "first_step", r->first_step);
    }
    char loss_key[16], accuracy_key[24];
    snprintf(loss_key, sizeof loss_key, "%s_loss", log->evaluated);
    snprintf(accuracy_key, sizeof accuracy_key, "%s_accuracy", log->evaluated);
    if (r->has_test) {
        cJSON_AddNumberToObject(line, loss_key, r->test.loss);
        cJSON_AddNumberToObject(line, accuracy_key, r->test.accuracy);
    }
    cJSON_AddNumberToObject(line, "lr", r->lr);
    if (!r->evaluation_only) {
        cJSON_AddNumberToObject(line, "samples_per_second", r->samples_per_second);
        cJSON_AddNumberToObject(line, "seconds", r->seconds);
    }
    add_memory(line, r->memory_in_use, r->memory_peak);
    TRY(write_row(log, line, st));
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

// After --val-split's last epoch, the test split's only evaluation: in the log beside the
// val rows, where `test_*` keys and `test/` tags never mean the val split.
int run_log_test(RunLog *log, long step, int epoch, double loss, double accuracy,
                 int samples, Status *st) {
    cJSON *line = new_row("test", step, epoch);
    cJSON_AddNumberToObject(line, "test_loss", loss);
    cJSON_AddNumberToObject(line, "test_accuracy", accuracy);
    cJSON_AddNumberToObject(line, "samples", samples);
    TRY(write_row(log, line, st));
    return flush_both(log, st);
}

void run_log_close(RunLog *log) {
    if (log->metrics) fclose(log->metrics);
    log->metrics = NULL;
    event_file_close(&log->events);
}
