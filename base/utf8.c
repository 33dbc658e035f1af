#include "base/utf8.h"

#include <stdio.h>
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

int utf8_decode(const unsigned char *s, size_t available, uint32_t *code_point) {
    // Past `available` reads as NUL, which no sequence holds: a cut one is not well-formed.
    unsigned char bytes[4] = {0};
    memcpy(bytes, s, available < 4 ? available : 4);
    int n = available ? utf8_sequence_length(bytes) : 0;
    static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    if (n) {
        uint32_t value = bytes[0] & lead_mask[n];
        for (int i = 1; i < n; i++) value = value << 6 | (bytes[i] & 0x3f);
        *code_point = value;
    }
    return n;
}

int code_point_in_ranges(uint32_t c, const CodePointRange *ranges, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (c >= ranges[i].first && c <= ranges[i].last) return 1;
    return 0;
}

// East Asian Wide and Fullwidth, as terminals draw them (after Markus Kuhn's wcwidth).
static const CodePointRange WIDE[] = {
    {0x1100, 0x115f},   {0x2329, 0x232a},   {0x2e80, 0x303e},   {0x3041, 0x33ff},
    {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xac00, 0xd7a3},
    {0xf900, 0xfaff},   {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},   {0xff00, 0xff60},
    {0xffe0, 0xffe6},   {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff}, {0x20000, 0x2fffd},
    {0x30000, 0x3fffd},
};

// Drawn on the character before them. Names written on macOS often come decomposed
// ("o" + U+0308 for "ö"), so the combining diacritics are the ones that matter.
static const CodePointRange ZERO_WIDTH[] = {
    {0x0300, 0x036f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff},
    {0x20d0, 0x20ff}, {0xfe00, 0xfe0f}, {0xfe20, 0xfe2f},
};

int utf8_display_columns(const char *text) {
    int columns = 0;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t left = strlen(text); left > 0;) {
        uint32_t c = 0;
        int n = utf8_decode(s, left, &c);
        if (n == 0) columns += 1;
        else if (code_point_in_ranges(c, WIDE, sizeof WIDE / sizeof WIDE[0])) columns += 2;
        else if (!code_point_in_ranges(c, ZERO_WIDTH, sizeof ZERO_WIDTH / sizeof ZERO_WIDTH[0]))
            columns += 1;
        s += n ? n : 1;
        left -= n ? (size_t)n : 1;
    }
    return columns;
}

// The copy of text with each byte that starts no well-formed sequence replaced: by U+FFFD,
// or by its value as the four characters \xNN. Writes at most size bytes of out (none when
// out is NULL) and returns the size the whole copy needs, its NUL included.
static size_t copy_valid(const char *text, char *out, size_t size, int as_hex) {
    size_t used = 0, needed = 1;
    int full = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_sequence_length(s);
        char hex[5];
        if (!n && as_hex) snprintf(hex, sizeof hex, "\\x%02x", *s);
        const char *piece = n ? (const char *)s : as_hex ? hex : REPLACEMENT;
        size_t length = n ? (size_t)n : as_hex ? 4 : sizeof REPLACEMENT - 1;
        needed += length;
        full |= used + length + 1 > size;
        if (out && !full) {
            memcpy(out + used, piece, length);
            used += length;
        }
        s += n ? n : 1;
    }
    if (out && size) out[used] = '\0';
    return needed;
}

size_t utf8_valid_size(const char *text) { return copy_valid(text, NULL, 0, 0); }

void utf8_make_valid(const char *text, char *out, size_t size) {
    copy_valid(text, out, size, 0);
}

size_t utf8_escaped_size(const char *text) { return copy_valid(text, NULL, 0, 1); }

void utf8_escape_invalid(const char *text, char *out, size_t size) {
    copy_valid(text, out, size, 1);
}

size_t utf8_first_invalid(const char *text, size_t length) {
    const unsigned char *s = (const unsigned char *)text;
    for (size_t at = 0; at < length;) {
        uint32_t c;
        int n = utf8_decode(s + at, length - at, &c);
        if (!n) return at;
        at += (size_t)n;
    }
    return length;
}

size_t utf8_cut_length(const char *text, size_t max) {
    const unsigned char *s = (const unsigned char *)text;
    size_t at = 0;
    while (s[at]) {
        int n = utf8_sequence_length(s + at);
        size_t step = n ? (size_t)n : 1;
        if (at + step > max) break;
        at += step;
    }
    return at;
}
