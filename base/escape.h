// Names and strings read from files (a tensor name in a checkpoint, a metadata value) are
// bytes someone else chose: printed raw, an escape sequence in them would drive the
// user's terminal. Everything such text passes through on its way to a message goes here.
#ifndef TRAINER_ESCAPE_H
#define TRAINER_ESCAPE_H

#include <stddef.h>

#include "base/status.h"

// Copies `length` bytes of `text` into `out` (NUL-terminated, truncated to `size` with
// "..." at the end): printable ASCII as is, backslash as \\, everything else (control
// bytes, ESC, bytes >= 0x7f) as \xNN. Returns out.
const char *text_escape(const char *text, size_t length, char *out, size_t size);

// For a failure whose place (st->file) is a path read from the disk or given by the user,
// so holding any bytes: the place escaped as text_escape does. Returns rc, so that a call
// can wrap the failing one: `return status_escape_place(st, read(path, st));`.
int status_escape_place(Status *st, int rc);

#endif
