// The names predict shows for the model's classes, in score order: from --classes FILE (one
// name per line), a known dataset's (fashion-mnist), or those a weights file records.
#ifndef TRAINER_CLASS_NAMES_H
#define TRAINER_CLASS_NAMES_H

#include "base/status.h"
#include "core/checkpoint_inputs.h"

// names == NULL: no names, classes are shown by index.
typedef struct ClassNames {
    const char **names;
    char *text;  // the names file's contents, or a weights file's names, which names point into
} ClassNames;

void class_names_free(ClassNames *cn);
// PATH's lines, line 1 naming class 0; their count must be `classes`. Trailing blanks and a
// final empty line are ignored; an empty line inside the list is an error (it would shift
// every later name).
int class_names_from_file(const char *path, int classes, ClassNames *cn, Status *st);
// `spec` (fashion-mnist) as --classes takes it: its names, when it has `classes` of them.
int class_names_known(const char *spec, int classes, ClassNames *cn, Status *st);
// `classes` names: those the weights file recorded, then `class N` for the outputs past them.
int class_names_recorded(const LoadedInputs *in, int classes, ClassNames *cn, Status *st);

#endif
