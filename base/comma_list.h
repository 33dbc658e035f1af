#ifndef TRAINER_BASE_COMMA_LIST_H
#define TRAINER_BASE_COMMA_LIST_H

#include <stddef.h>

#include "base/status.h"

// Copies the comma-separated `text` into `copy` (its `size` bytes), for strtok_r to cut. A
// text that does not fit is refused (STATUS_BAD_INPUT, `what` naming it: "--sizes: the
// list"), where a cut copy would drop its last items without a word; the caller adds the
// hint.
int comma_list_copy(const char *what, const char *text, char *copy, size_t size, Status *st);

#endif
