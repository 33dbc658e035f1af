// `trainer train`'s learning-rate schedule and gradient clipping options, which override
// the model file's `schedule` statement and the optimizer's clip_norm=.
#ifndef TRAINER_TRAIN_SCHEDULE_ARGS_H
#define TRAINER_TRAIN_SCHEDULE_ARGS_H

#include "core/run_config.h"
#include "tools/cli.h"

#define SCHEDULE_OPTION_SPECS                                                                \
    {"--schedule", "SPEC", "override the model file's schedule: constant, cosine, or a "      \
                           "statement's words, e.g. 'step every=2 gamma=0.5'"},              \
    {"--warmup", "N", "linear learning-rate warmup over the first N steps"},                  \
    {"--min-lr", "RATE", "cosine schedule: the learning rate at the last step"},              \
    {"--clip-norm", "X", "clip gradients to global L2 norm X (0: off)"}

int apply_schedule_overrides(const Command *cmd, const ParsedArgs *args, RunConfig *config,
                             Status *st);
// A cosine schedule's min_lr above the run's learning rate (after --lr) is STATUS_BAD_INPUT
// naming both and where each came from (the option, or the model file's line).
int check_schedule_rates(const Command *cmd, const ParsedArgs *args, const RunConfig *config,
                         const char *model_path, Status *st);
// "schedule cosine warmup=100 min_lr=0" when the run has one other than a constant rate.
void print_schedule(const ScheduleConfig *schedule);

#endif
