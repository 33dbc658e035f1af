// Text from outside (environment variables, paths, library messages) is bytes, not
// necessarily UTF-8; JSON must be UTF-8. One place makes it so.
#ifndef TRAINER_UTF8_H
#define TRAINER_UTF8_H

#include <stddef.h>
#include <stdint.h>

// Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when s does not start one:
// overlong forms, surrogates and code points past U+10FFFF count as not well-formed, as
// strict decoders (Python's among them) reject them.
int utf8_sequence_length(const unsigned char *s);

// utf8_sequence_length for text that need not be NUL-terminated: reads at most `available`
// bytes of s, and a sequence cut short by that end is not well-formed. When it is
// well-formed, its code point goes to *code_point.
int utf8_decode(const unsigned char *s, size_t available, uint32_t *code_point);

// A closed range of code points, for tables of them.
typedef struct CodePointRange {
    uint32_t first, last;
} CodePointRange;

// Whether c lies in one of the `count` ranges.
int code_point_in_ranges(uint32_t c, const CodePointRange *ranges, size_t count);

// Columns `text` takes on a terminal, for padding a table of names: a code point takes one,
// an East Asian wide or fullwidth one (CJK, Hangul, fullwidth forms, most emoji) two, a
// combining mark or variation selector none, and a byte that starts no well-formed
// sequence one. A table of the common ranges, not the whole of Unicode's East Asian Width:
// rarer scripts' wide and zero-width characters count one.
int utf8_display_columns(const char *text);

// Bytes needed for utf8_make_valid's copy of text, the terminating NUL included.
size_t utf8_valid_size(const char *text);

// Copies text into out (size from utf8_valid_size), each byte that starts no well-formed
// sequence replaced by U+FFFD, as a reader that decodes with errors="replace" would.
void utf8_make_valid(const char *text, char *out, size_t size);

// Copies text into out (size from utf8_escaped_size), each byte that starts no well-formed
// sequence written as the four characters \xNN (lowercase hex): for text that must be UTF-8
// where it goes (a safetensors header) and should still show which bytes it held. Valid
// UTF-8 is copied as it is, so only text that was not UTF-8 changes.
size_t utf8_escaped_size(const char *text);
void utf8_escape_invalid(const char *text, char *out, size_t size);

// The offset of the first byte of text[0..length) that starts no well-formed sequence (a
// NUL is well-formed: look for it apart), or length when all of it is UTF-8.
size_t utf8_first_invalid(const char *text, size_t length);

// The length of text's longest prefix of at most max bytes that ends between characters:
// a name cut to fit a field keeps whole characters (a byte that starts no well-formed
// sequence counts as one).
size_t utf8_cut_length(const char *text, size_t max);

#endif
