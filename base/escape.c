#include "base/escape.h"

#include <stdio.h>
#include <string.h>

// Room for the longest escape (\xNN), the "..." of a cut and the NUL.
enum { ESCAPE_RESERVE = 4 + 3 + 1 };

const char *text_escape(const char *text, size_t length, char *out, size_t size) {
    if (size == 0) return out;
    size_t used = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (used + ESCAPE_RESERVE > size) {
            snprintf(out + used, size - used, "...");
            return out;
        }
        if (c == '\\') {
            out[used++] = '\\';
            out[used++] = '\\';
        } else if (c >= 0x20 && c < 0x7f) {
            out[used++] = (char)c;
        } else {
            used += (size_t)snprintf(out + used, size - used, "\\x%02x", c);
        }
    }
    out[used] = '\0';
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
