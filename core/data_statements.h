// The model file's `normalize` and `augment` statements (docs/model-format.md), read into
// the RunConfig; --normalize and --augment on the command line read the same words.
#ifndef TRAINER_DATA_STATEMENTS_H
#define TRAINER_DATA_STATEMENTS_H

#include <stddef.h>

#include "base/status.h"
#include "core/run_config.h"
#include "models/model_file.h"

// `normalize auto`, `normalize none`, `normalize mean=M[,M..] std=S[,S..]`.
int normalize_read_statement(const char *path, const ModelStatement *s, NormalizeConfig *out,
                             Status *st);
// `augment crop=P flip=BOOL`, `augment none`.
int augment_read_statement(const char *path, const ModelStatement *s, AugmentConfig *out,
                           Status *st);
// "crop=4 flip=true" for the run's header; "none" when off.
const char *augment_describe(const AugmentConfig *augment, char *buf, size_t size);

#endif
