// Text from outside (environment variables, paths, library messages) is bytes, not
// necessarily UTF-8; JSON must be UTF-8. One place makes it so.
#ifndef TRAINER_UTF8_H
#define TRAINER_UTF8_H

#include <stddef.h>

// Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when s does not start one:
// overlong forms, surrogates and code points past U+10FFFF count as not well-formed, as
// strict decoders (Python's among them) reject them.
int utf8_sequence_length(const unsigned char *s);

// Bytes needed for utf8_make_valid's copy of text, the terminating NUL included.
size_t utf8_valid_size(const char *text);

// Copies text into out (size from utf8_valid_size), each byte that starts no well-formed
// sequence replaced by U+FFFD, as a reader that decodes with errors="replace" would.
void utf8_make_valid(const char *text, char *out, size_t size);

#endif
