// The learning rate of each step under a ScheduleConfig (core/run_config.h), and the
// `schedule` statement that sets one.
#ifndef TRAINER_LR_SCHEDULE_H
#define TRAINER_LR_SCHEDULE_H

#include <stddef.h>

#include "base/status.h"
#include "core/run_config.h"
#include "models/model_file.h"

// The rate for the update after `step` earlier ones (0-based) of a run of `total_steps`,
// with `every` counted in steps (schedule_in_steps). Warmup first: base_lr * (step + 1) /
// warmup while step < warmup. Then constant: base_lr; step: base_lr * gamma^(step /
// every); cosine: from base_lr after warmup down to min_lr at step total_steps - 1,
// min_lr + (base_lr - min_lr) (1 + cos(pi t)) / 2. Without warmup a constant schedule
// returns base_lr itself, so training without a schedule is what it was before them.
double lr_at(const ScheduleConfig *schedule, double base_lr, long step, long total_steps);

// The same schedule with `every` in steps, for a run of steps_per_epoch steps per epoch.
ScheduleConfig schedule_in_steps(const ScheduleConfig *schedule, long steps_per_epoch);

// Reads a `schedule KIND key=value...` statement into *out (errors at file:line:col).
int schedule_read_statement(const char *path, const ModelStatement *s, ScheduleConfig *out,
                            Status *st);

// "cosine warmup=100 min_lr=0" for the run's header line.
const char *schedule_describe(const ScheduleConfig *schedule, char *buf, size_t size);

#endif
