#include "base/escape.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

// Well-formed code points that still never reach the terminal as they are. Each one either
// drives the terminal or makes a name read as something it is not: invisible, reordering
// the text around it, or breaking the line.
static const CodePointRange HIDDEN[] = {
    {0x0080, 0x009f},      // C1 controls: CSI (U+009B) and OSC (U+009D) start sequences
    {0x061c, 0x061c},      // Arabic letter mark: bidirectional
    {0x200b, 0x200f},      // zero width space, (non-)joiner; left-to-right, right-to-left marks
    {0x2028, 0x202e},      // line and paragraph separators; bidirectional embeddings, overrides
    {0x2060, 0x206f},      // word joiner, invisible operators; isolates; deprecated format
    {0xe000, 0xf8ff},      // private use: a box or nothing in most fonts, so bytes say more
    {0xfdd0, 0xfdef},      // noncharacters
    {0xfeff, 0xfeff},      // zero width no-break space (byte order mark)
    {0xfff9, 0xfffb},      // interlinear annotation: hides the text it annotates
    {0xe0000, 0xe007f},    // tags: invisible copies of ASCII
    {0xf0000, 0x10ffff},   // private use planes 15 and 16
};

static int shown_as_is(uint32_t c) {
    if ((c & 0xfffe) == 0xfffe) return 0;  // U+FFFE, U+FFFF and their copies in every plane
    return !code_point_in_ranges(c, HIDDEN, sizeof HIDDEN / sizeof HIDDEN[0]);
}

// The next piece of text that is escaped or kept whole: an ASCII byte, a printable UTF-8
// sequence, or a sequence or byte that is escaped byte by byte. Its length in `text`, and
// what it takes in the output in *shown.
static size_t next_piece(const unsigned char *text, size_t left, int *escaped, size_t *shown) {
    if (text[0] < 0x80) {
        *escaped = text[0] < 0x20 || text[0] == 0x7f;
        *shown = *escaped ? 4 : text[0] == '\\' ? 2 : 1;
        return 1;
    }
    uint32_t c = 0;
    int n = utf8_decode(text, left, &c);
    if (n == 0) {  // starts no well-formed sequence: this byte alone, the next looked at anew
        *escaped = 1;
        *shown = 4;
        return 1;
    }
    *escaped = !shown_as_is(c);
    *shown = *escaped ? 4 * (size_t)n : (size_t)n;
    return (size_t)n;
}

static size_t shown_length(const unsigned char *text, size_t length) {
    size_t total = 0, shown;
    int escaped;
    for (size_t i = 0; i < length; total += shown)
        i += next_piece(text + i, length - i, &escaped, &shown);
    return total;
}

const char *text_escape(const char *text, size_t length, char *out, size_t size) {
    if (size == 0) return out;
    const unsigned char *bytes = (const unsigned char *)text;
    int escaped;
    size_t shown;
    // Cut only when the whole does not fit, and then between pieces, room left for "...".
    size_t room = shown_length(bytes, length) < size ? size : size > 3 ? size - 3 : 0;
    size_t used = 0, i = 0;
    while (i < length) {
        size_t n = next_piece(bytes + i, length - i, &escaped, &shown);
        if (used + shown + 1 > room) break;
        if (!escaped) {
            if (bytes[i] == '\\') out[used++] = '\\';
            memcpy(out + used, bytes + i, n);
            used += n;
        } else {
            for (size_t k = 0; k < n; k++)
                used += (size_t)snprintf(out + used, size - used, "\\x%02x", bytes[i + k]);
        }
        i += n;
    }
    if (i < length) snprintf(out + used, size - used, "...");
    else out[used] = '\0';
    return out;
}

int status_escape_place(Status *st, int rc) {
    if (rc && st->file[0]) {
        char place[sizeof st->file];
        text_escape(st->file, strlen(st->file), place, sizeof place);
        memcpy(st->file, place, sizeof place);
    }
    return rc;
}

void text_line_column(const char *text, size_t offset, int *line, int *column) {
    size_t line_start = 0;
    long long lines = 1;
    for (const char *p = text; (p = memchr(p, '\n', offset - (size_t)(p - text))); p++) {
        lines++;
        line_start = (size_t)(p - text) + 1;
    }
    *line = lines > INT_MAX ? INT_MAX : (int)lines;
    *column = offset - line_start >= INT_MAX ? INT_MAX : (int)(offset - line_start) + 1;
}

void name_list_append(char *text, size_t size, const char *name, int *left_out) {
    size_t used = strlen(text);
    char escaped[512];
    text_escape(name, strlen(name), escaped, sizeof escaped);
    if (used + 2 + strlen(escaped) + NAME_LIST_END >= size) {
        (*left_out)++;
        return;
    }
    snprintf(text + used, size - used, "%s%s", used ? ", " : "", escaped);
}

void name_list_end(char *text, size_t size, int left_out) {
    size_t used = strlen(text);
    if (left_out) snprintf(text + used, size - used, " and %d more", left_out);
}
