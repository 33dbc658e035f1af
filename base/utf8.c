#include "base/utf8.h"

#include <string.h>

static const char REPLACEMENT[] = "\xef\xbf\xbd";  // U+FFFD in UTF-8

static int continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// The range the second byte may take after lead byte c (Unicode Table 3-7), which is what
// excludes overlong forms, surrogates and values past U+10FFFF.
static void second_byte_range(unsigned char c, unsigned char *lo, unsigned char *hi) {
    *lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    *hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
}

int utf8_sequence_length(const unsigned char *s) {
    if (s[0] < 0x80) return 1;
    int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
            : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (n == 0) return 0;
    unsigned char lo, hi;
    second_byte_range(s[0], &lo, &hi);
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (!continuation(s[i])) return 0;  // a NUL stops here too
    return n;
}

size_t utf8_valid_size(const char *text) {
    size_t size = 1;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_sequence_length(s);
        size += n ? (size_t)n : sizeof REPLACEMENT - 1;
        s += n ? n : 1;
    }
    return size;
}

void utf8_make_valid(const char *text, char *out, size_t size) {
    size_t used = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_sequence_length(s);
        const char *piece = n ? (const char *)s : REPLACEMENT;
        size_t length = n ? (size_t)n : sizeof REPLACEMENT - 1;
        if (used + length + 1 > size) break;
        memcpy(out + used, piece, length);
        used += length;
        s += n ? n : 1;
    }
    if (size) out[used] = '\0';
}
