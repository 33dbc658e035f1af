// base/utf8: utf8_decode reads no further than it is allowed and gives the code point of a
// well-formed sequence; utf8_display_columns counts what a terminal draws, so that tables of
// names padded by it line up: a code point one column, CJK and emoji two, a combining mark
// none, a byte of no sequence one.
#include "check.h"
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

static void decode_gives_the_code_point(void) {
    uint32_t c = 0;
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"A", 1, &c), 1);
    CHECK_INT_EQ(c, 0x41);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xc3\xb6", 2, &c), 2);
    CHECK_INT_EQ(c, 0xf6);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"猫", 3, &c), 3);
    CHECK_INT_EQ(c, 0x732b);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xf0\x9f\x90\x88", 4, &c), 4);
    CHECK_INT_EQ(c, 0x1f408);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xf4\x8f\xbf\xbf", 4, &c), 4);
    CHECK_INT_EQ(c, 0x10ffff);
}

static void decode_refuses_what_is_not_well_formed(void) {
    uint32_t c = 0;
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\x80", 1, &c), 0);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xc0\xaf", 2, &c), 0);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &c), 0);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &c), 0);
    // A sequence that goes on past `available` is cut there, so not well-formed.
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"猫", 2, &c), 0);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"\xf0\x9f\x90\x88", 3, &c), 0);
    CHECK_INT_EQ(utf8_decode((const unsigned char *)"A", 0, &c), 0);
}

static void display_columns(void) {
    CHECK_INT_EQ(utf8_display_columns(""), 0);
    CHECK_INT_EQ(utf8_display_columns("T-shirt/top"), 11);
    CHECK_INT_EQ(utf8_display_columns("Größe"), 5);
    CHECK_INT_EQ(utf8_display_columns("Gro\xcc\x88\xc3\x9f" "e"), 5);  // "ö" decomposed
    CHECK_INT_EQ(utf8_display_columns("猫"), 2);
    CHECK_INT_EQ(utf8_display_columns("日本語"), 6);
    CHECK_INT_EQ(utf8_display_columns("한국"), 4);
    CHECK_INT_EQ(utf8_display_columns("ＡＢ"), 4);  // fullwidth forms
    CHECK_INT_EQ(utf8_display_columns("\xf0\x9f\x90\x88"), 2);  // U+1F408 cat emoji
    CHECK_INT_EQ(utf8_display_columns("cat \\x1b[1m"), 11);   // what text_escape writes
    CHECK_INT_EQ(utf8_display_columns("a\xff" "b"), 3);
}

// What a safetensors header gets for a name that is not UTF-8: its other bytes as \xNN,
// UTF-8 kept, and the size asked for is the size written.
static void invalid_bytes_are_escaped_as_hex(void) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"caf\xe9", "caf\\xe9"},
        {"Gr\xc3\xb6\xc3\x9f" "e", "Gr\xc3\xb6\xc3\x9f" "e"},  // UTF-8 as it is
        {"\xff\xfe", "\\xff\\xfe"},
        {"a\xe2\x82", "a\\xe2\\x82"},  // a cut sequence, byte by byte
        {"back\\slash", "back\\slash"},  // valid: kept
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        size_t size = utf8_escaped_size(cases[i].in);
        CHECK_INT_EQ(size, strlen(cases[i].out) + 1);
        utf8_escape_invalid(cases[i].in, out, sizeof out);
        CHECK(strcmp(out, cases[i].out) == 0);
        CHECK_INT_EQ(utf8_first_invalid(out, strlen(out)), strlen(out));
    }
    char small[6];
    utf8_escape_invalid("ab\xe9" "cd", small, sizeof small);  // no room: cut before the \xNN
    CHECK(strcmp(small, "ab") == 0);
    CHECK_INT_EQ(utf8_first_invalid("ab\xe9" "cd", 5), 2);
    CHECK_INT_EQ(utf8_first_invalid("a\0b", 3), 3);  // a NUL is well-formed
    CHECK_INT_EQ(utf8_cut_length("ab\xc3\xa9", 3), 2);  // not inside the e-acute
    CHECK_INT_EQ(utf8_cut_length("ab\xc3\xa9", 4), 4);
    CHECK_INT_EQ(utf8_cut_length("ab\xe9" "cd", 3), 3);  // a stray byte is one
    CHECK_INT_EQ(utf8_cut_length("ab", 10), 2);
}

int main(void) {
    decode_gives_the_code_point();
    decode_refuses_what_is_not_well_formed();
    display_columns();
    invalid_bytes_are_escaped_as_hex();
    return test_exit_code("test_utf8");
}
