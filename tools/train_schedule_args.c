#include "tools/train_schedule_args.h"

#include <stdio.h>
#include <string.h>

#include "core/lr_schedule.h"

static int read_schedule(const char *path, const ModelStatement *s, void *out, Status *st) {
    return schedule_read_statement(path, s, out, st);
}

int apply_schedule_overrides(const Command *cmd, const ParsedArgs *args, RunConfig *config,
                             Status *st) {
    const char *spec = args_get(cmd, args, "--schedule");
    if (spec)
        TRY(read_statement_option("--schedule", "schedule", spec, read_schedule,
                                  &config->schedule, st));
    long warmup;
    int present;
    TRY(args_int(cmd, args, "--warmup", 0, 1L << 40, &warmup, &present, st));
    if (present) config->schedule.warmup = warmup;
    double value;
    TRY(args_float(cmd, args, "--min-lr", 0.0, 100.0, &value, &present, st));
    if (present) {
        if (config->schedule.kind != SCHEDULE_COSINE) {
            status_fail(st, STATUS_BAD_INPUT, "--min-lr %g applies to the cosine schedule, but the "
                        "schedule is %s", value, schedule_names[config->schedule.kind]);
            status_hint(st, "add --schedule cosine");
            return STATUS_BAD_INPUT;
        }
        config->schedule.min_lr = value;
    }
    TRY(args_float(cmd, args, "--clip-norm", 0.0, 1e30, &value, &present, st));
    if (present) config->optimizer.clip_norm = value;
    return 0;
}

int check_schedule_rates(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                         const char *model_path, Status *st) {
    const ScheduleConfig *schedule = &config->schedule;
    double lr = config->optimizer.lr;
    if (schedule->kind != SCHEDULE_COSINE || !(schedule->min_lr > lr)) return 0;
    // A cosine "decay" from lr to a min_lr above it raises the rate over the run: a slip
    // (min_lr=0.1 meant for lr=1) that diverges at the end of training, not at its start.
    char where[96];
    const char *lr_option = args_get(cmd, args, "--lr");
    if (lr_option) snprintf(where, sizeof where, "--lr %s", lr_option);
    else if (config->optimizer.line)
        snprintf(where, sizeof where, "optimizer lr=, line %d", config->optimizer.line);
    else snprintf(where, sizeof where, "the default");
    const char *min_lr_option = args_get(cmd, args, "--min-lr");
    const char *schedule_option = args_get(cmd, args, "--schedule");
    const char *what = "min_lr=%g is above the learning rate %g (%s): the cosine schedule "
                       "would raise the rate to %g over the run instead of lowering it";
    if (min_lr_option || schedule_option || !schedule->line) {
        char option[600];
        if (min_lr_option) snprintf(option, sizeof option, "--min-lr %s", min_lr_option);
        else snprintf(option, sizeof option, "--schedule '%.500s'", schedule_option);
        status_fail(st, STATUS_BAD_INPUT, what, schedule->min_lr, lr, where, schedule->min_lr);
        status_prefix(st, "%s: ", option);
    } else {
        status_fail_at(st, STATUS_BAD_INPUT, model_path, schedule->line, 1, what,
                       schedule->min_lr, lr, where, schedule->min_lr);
    }
    status_hint(st, "give a min_lr below the learning rate (e.g. min_lr=%g), or raise it "
                "with --lr", lr / 100);
    return STATUS_BAD_INPUT;
}

void print_schedule(const ScheduleConfig *schedule) {
    if (schedule->kind == SCHEDULE_CONSTANT && schedule->warmup == 0) return;
    char text[160];
    printf("schedule %s\n", schedule_describe(schedule, text, sizeof text));
}
