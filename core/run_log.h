// --logdir DIR: the record of a run that outlives its terminal. DIR/metrics.jsonl gets one
// JSON object per logged step and per epoch (what `trainer plot` draws), and
// DIR/events.out.tfevents.* the same figures as TensorBoard scalars. metrics.jsonl is
// flushed after every row, so it holds whole rows only (a crash mid-write aside); the
// event file at every epoch's end, so a crash loses at most the epoch it happened in.
#ifndef TRAINER_RUN_LOG_H
#define TRAINER_RUN_LOG_H

#include <stdio.h>

#include "core/early_stop.h"
#include "core/tf_event.h"
#include "core/train.h"

typedef struct RunLog {
    FILE *metrics;
    char metrics_path[1024];
    EventFile events;
    // The split each epoch is evaluated on, "test" or "val" (--val-split): it names the
    // epoch rows' figures (test_loss or val_loss) and the TensorBoard tags (test/loss...).
    char evaluated[8];
    int kept_rows, dropped_rows;  // of an earlier metrics.jsonl, when resuming
    int cut_row;  // its last line was cut short (a killed writer's), dropped too
} RunLog;

// Locks DIR, a folder, for this process's life (base/directories.h): STATUS_BAD_INPUT when
// another trainer process holds it. run_log_open calls it.
int run_log_lock(const char *dir, Status *st);
// Before the data load, for a DIR that exists, so that a wrong one is refused without the
// wait: run_log_lock, and for a fresh run (not `resuming`) the refusal of a metrics.jsonl
// that holds rows, which run_log_open would make after it.
int run_log_check(const char *dir, int resuming, Status *st);

// Creates DIR (with its parents) when missing, locks it and opens both files; an unwritable
// DIR, one another trainer process is writing into, or a metrics.jsonl that is not a
// regular file, fails here, before training starts.
// `resumed_step`: the optimizer step a --resume'd run starts after; its rows up to that step
// are kept and the later ones (trained again) dropped, new rows appended. -1: a fresh run,
// refused (STATUS_BAD_INPUT) when metrics.jsonl already holds rows. Each run opens an event
// file of its own, which TensorBoard reads together with the earlier ones.
// `evaluate_first`: the resumed run evaluates the epoch that ends at resumed_step again
// (TrainStart.evaluate_first), so an epoch row there is dropped too.
int run_log_open(RunLog *log, const char *dir, const char *evaluated, long resumed_step,
                 int evaluate_first, Status *st);
int run_log_step(RunLog *log, const StepReport *report, Status *st);
// Writes the epoch's line and flushes both files.
int run_log_epoch(RunLog *log, const EpochReport *report, Status *st);
// After the epoch early stopping ended training at: a "kind":"early_stop" row saying why.
int run_log_early_stop(RunLog *log, const EarlyStop *watch, const EpochReport *report,
                       Status *st);
// With --val-split, the test split evaluated once after the last epoch: a "kind":"test" row
// and test/loss, test/accuracy scalars at the run's last step. A run resumed at that step
// drops the earlier row from metrics.jsonl, as it writes its own; TensorBoard, told to drop
// events only after that step, keeps the earlier scalars beside the new ones.
int run_log_test(RunLog *log, long step, int epoch, double loss, double accuracy,
                 int samples, Status *st);
void run_log_close(RunLog *log);

#endif
