#include "core/lr_schedule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/suggest.h"

const char *const schedule_names[] = {"constant", "step", "cosine", NULL};
static const char *const unit_names[] = {"epoch", "step", NULL};
static const double PI = 3.14159265358979323846;  // strict C11 has no M_PI

static double warmup_lr(const ScheduleConfig *s, double base_lr, long step) {
    return base_lr * (double)(step + 1) / (double)s->warmup;
}

static double step_decay_lr(const ScheduleConfig *s, double base_lr, long step) {
    if (s->every <= 0) return base_lr;
    return base_lr * pow(s->gamma, (double)(step / s->every));
}

// t runs from 0 at the first step after warmup to 1 at the run's last step. A run with one
// step after warmup trains it at base_lr: at min_lr (often 0) a one-step run would not learn.
static double cosine_lr(const ScheduleConfig *s, double base_lr, long step, long total_steps) {
    long span = total_steps - 1 - s->warmup;
    if (span <= 0) return base_lr;
    double t = (double)(step - s->warmup) / (double)span;
    if (t > 1.0) t = 1.0;
    return s->min_lr + (base_lr - s->min_lr) * 0.5 * (1.0 + cos(PI * t));
}

double lr_at(const ScheduleConfig *schedule, double base_lr, long step, long total_steps) {
    if (schedule->warmup > 0 && step < schedule->warmup)
        return warmup_lr(schedule, base_lr, step);
    switch (schedule->kind) {
    case SCHEDULE_STEP: return step_decay_lr(schedule, base_lr, step);
    case SCHEDULE_COSINE: return cosine_lr(schedule, base_lr, step, total_steps);
    case SCHEDULE_CONSTANT: break;
    }
    return base_lr;
}

ScheduleConfig schedule_in_steps(const ScheduleConfig *schedule, long steps_per_epoch) {
    ScheduleConfig in_steps = *schedule;
    if (schedule->unit == SCHEDULE_UNIT_EPOCH) in_steps.every = schedule->every * steps_per_epoch;
    in_steps.unit = SCHEDULE_UNIT_STEP;
    return in_steps;
}

static int schedule_kind_from(const char *path, const ModelStatement *s, int *kind,
                              Status *st) {
    for (int i = 0; schedule_names[i]; i++)
        if (strcmp(s->choice, schedule_names[i]) == 0) {
            *kind = i;
            return 0;
        }
    const char *near = suggest(s->choice, schedule_names);
    char suffix[96] = "";
    if (near) snprintf(suffix, sizeof suffix, "; did you mean '%s'?", near);
    status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->choice_column,
                   "unknown schedule '%s'%s", s->choice, suffix);
    status_hint(st, "schedules: constant, step, cosine (docs/model-format.md)");
    return STATUS_BAD_INPUT;
}

static int read_step_keys(const char *path, const ModelStatement *s, ScheduleConfig *out,
                          Status *st) {
    if (!model_attr_find(s, "every")) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->choice_column,
                       "schedule step needs every=N: how many epochs (or steps) between decays");
        status_hint(st, "e.g. `schedule step every=3 gamma=0.5`, or every=500 unit=step");
        return STATUS_BAD_INPUT;
    }
    int unit;
    TRY(model_attr_int(path, s, "every", 1, 1, 1L << 40, &out->every, st));
    TRY(model_attr_float_interval(path, s, "gamma", 0.1, 0.0, 1.0, MODEL_EXCLUDE_MIN, &out->gamma,
                                  st));
    TRY(model_attr_choice(path, s, "unit", unit_names, SCHEDULE_UNIT_EPOCH, &unit, st));
    out->unit = (ScheduleUnit)unit;
    return 0;
}

int schedule_read_statement(const char *path, const ModelStatement *s, ScheduleConfig *out,
                            Status *st) {
    if (!s->choice[0]) {
        status_fail_at(st, STATUS_BAD_INPUT, path, s->line, s->kind_column,
                       "schedule needs a kind: constant, step or cosine");
        status_hint(st, "write e.g. `schedule cosine warmup=100 min_lr=0.00001`");
        return STATUS_BAD_INPUT;
    }
    int kind;
    TRY(schedule_kind_from(path, s, &kind, st));
    static const char *const constant_keys[] = {"warmup", NULL};
    static const char *const step_keys[] = {"warmup", "every", "gamma", "unit", NULL};
    static const char *const cosine_keys[] = {"warmup", "min_lr", NULL};
    const char *const *keys[] = {constant_keys, step_keys, cosine_keys};
    TRY(model_check_keys(path, s, keys[kind], st));
    *out = (ScheduleConfig){.kind = (ScheduleKind)kind, .gamma = 0.1, .line = s->line};
    TRY(model_attr_int(path, s, "warmup", 0, 0, 1L << 40, &out->warmup, st));
    if (kind == SCHEDULE_STEP) TRY(read_step_keys(path, s, out, st));
    if (kind == SCHEDULE_COSINE)
        TRY(model_attr_float(path, s, "min_lr", 0.0, 0.0, 100.0, &out->min_lr, st));
    return 0;
}

const char *schedule_describe(const ScheduleConfig *schedule, char *buf, size_t size) {
    int used = snprintf(buf, size, "%s", schedule_names[schedule->kind]);
    if (schedule->kind == SCHEDULE_STEP && used >= 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, " every=%ld unit=%s gamma=%g",
                         schedule->every, unit_names[schedule->unit], schedule->gamma);
    if (schedule->kind == SCHEDULE_COSINE && used >= 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, " min_lr=%g", schedule->min_lr);
    if (schedule->warmup > 0 && used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, " warmup=%ld", schedule->warmup);
    return buf;
}
