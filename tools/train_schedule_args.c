#include "tools/train_schedule_args.h"

#include <stdio.h>
#include <string.h>

#include "core/lr_schedule.h"

// An error of the statement read from the option: no file place, the option instead.
static int option_failed(const char *spec, Status *st) {
    st->file[0] = '\0';
    st->line = st->column = 0;
    status_prefix(st, "--schedule '%s': ", spec);
    return st->code;
}

// --schedule SPEC reads as the model file's statement `schedule SPEC`, so both take the
// same words and give the same errors.
static int parse_schedule_option(const char *spec, ScheduleConfig *out, Status *st) {
    char text[512];
    snprintf(text, sizeof text, "schedule %s\n", spec);
    ModelFile file;
    if (model_file_parse_text("--schedule", text, &file, st)) return option_failed(spec, st);
    int rc = file.count == 1 ? schedule_read_statement("--schedule", &file.statements[0], out, st)
                             : status_fail(st, STATUS_BAD_INPUT, "no schedule given");
    if (rc && file.count != 1) status_hint(st, "e.g. --schedule cosine");
    model_file_free(&file);
    return rc ? option_failed(spec, st) : 0;
}

int apply_schedule_overrides(const Command *cmd, const ParsedArgs *args, RunConfig *config,
                             Status *st) {
    const char *spec = args_get(cmd, args, "--schedule");
    if (spec) TRY(parse_schedule_option(spec, &config->schedule, st));
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
