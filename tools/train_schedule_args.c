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

void print_schedule(const ScheduleConfig *schedule) {
    if (schedule->kind == SCHEDULE_CONSTANT && schedule->warmup == 0) return;
    char text[160];
    printf("schedule %s\n", schedule_describe(schedule, text, sizeof text));
}
