// Names and strings read from files (a tensor name in a checkpoint, a metadata value) are
// bytes someone else chose: printed raw, an escape sequence in them would drive the
// user's terminal. Everything such text passes through on its way to a message goes here.
#ifndef TRAINER_ESCAPE_H
#define TRAINER_ESCAPE_H

#include <stddef.h>

#include "base/status.h"

// Copies `length` bytes of `text` into `out` (NUL-terminated; when the whole does not fit
// in `size`, cut between characters, never inside one, with "..." at the end): printable
// ASCII and well-formed UTF-8 of printable characters as they are, so that a class named
// "Größe" or "猫" reads as its owner wrote it; backslash as \\; as \xNN, byte by byte,
// everything that could drive the terminal or make a name read as something it is not:
// C0 controls (ESC among them), DEL, C1 controls (U+0080-U+009F, which some terminals obey
// as ESC sequences), bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069: they reorder what follows, the rest of the message included), invisible
// format characters (U+200B-U+200D, U+2060-U+2064, U+206A-U+206F, U+FEFF, U+FFF9-U+FFFB,
// tags U+E0000-U+E007F: they hide or smuggle text), the line and paragraph separators
// U+2028 and U+2029 (they break a message's line), noncharacters (U+FDD0-U+FDEF, and each
// code point ending in FFFE or FFFF), private use (U+E000-U+F8FF, planes 15 and 16: a box
// or nothing in most fonts, so only the bytes tell two apart), and every byte that starts
// no well-formed sequence (a lone continuation byte, a cut sequence, an overlong form, a
// surrogate). The result is valid UTF-8. Returns out.
const char *text_escape(const char *text, size_t length, char *out, size_t size);

// For a failure whose place (st->file) is a path read from the disk or given by the user,
// so holding any bytes: the place escaped as text_escape does. Returns rc, so that a call
// can wrap the failing one: `return status_escape_place(st, read(path, st));`.
int status_escape_place(Status *st, int rc);

// The 1-based line and column (in bytes) of text[offset], for a message that points at a
// byte of a file: a NUL or a stray carriage return. The text before offset is read by
// length, so it may hold NUL bytes; a column past INT_MAX is said as INT_MAX.
void text_line_column(const char *text, size_t offset, int *line, int *column);

// Room kept at the end of a list of names for name_list_end's " and 99999 more".
enum { NAME_LIST_END = 24 };

// "name, name, ..." (each escaped) into a growing message in text[size]: a name is added
// whole, or, past the room, counted in *left_out for name_list_end (a name cut in the
// middle, "s2_bn2.running_me", reads as another name).
void name_list_append(char *text, size_t size, const char *name, int *left_out);
// " and N more" after the names, when any were left out.
void name_list_end(char *text, size_t size, int left_out);

#endif
