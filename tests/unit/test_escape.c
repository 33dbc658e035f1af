// base/escape: text_escape keeps printable ASCII and well-formed UTF-8 of printable
// characters (Latin accents, CJK, 4-byte emoji) as they are, and writes as \xNN, byte by
// byte, every control (C0, DEL, C1), bidirectional control, invisible format character,
// line/paragraph separator, noncharacter, private-use character and every byte that starts
// no well-formed sequence; a cut never splits a character and leaves valid UTF-8.
#include "check.h"
#include "base/escape.h"
#include "base/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK_STR_EQ(a, b)                                                          \
    do {                                                                            \
        const char *check_a_ = (a), *check_b_ = (b);                                \
        if (strcmp(check_a_, check_b_) != 0) {                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == \"%s\" (got \"%s\")\n",     \
                    __FILE__, __LINE__, #a, check_b_, check_a_);                    \
            test_failures++;                                                        \
        }                                                                           \
    } while (0)

// text_escape of a NUL-terminated text into a buffer that holds anything.
static const char *escaped(const char *text) {
    static char out[512];
    return text_escape(text, strlen(text), out, sizeof out);
}

static int is_valid_utf8(const char *text) {
    size_t left = strlen(text);
    const unsigned char *s = (const unsigned char *)text;
    while (left > 0) {
        uint32_t ignored;
        int n = utf8_decode(s, left, &ignored);
        if (n == 0) return 0;
        s += n;
        left -= (size_t)n;
    }
    return 1;
}

static void ascii_is_kept_and_controls_escaped(void) {
    CHECK_STR_EQ(escaped("cat dog_1.png"), "cat dog_1.png");
    CHECK_STR_EQ(escaped("a\\b"), "a\\\\b");
    CHECK_STR_EQ(escaped("x\x1b[31mred"), "x\\x1b[31mred");
    CHECK_STR_EQ(escaped("line\nnext\ttab\rdel\x7f"), "line\\x0anext\\x09tab\\x0ddel\\x7f");
    char out[32];
    CHECK_STR_EQ(text_escape("a\0b", 3, out, sizeof out), "a\\x00b");
}

static void printable_utf8_is_kept(void) {
    CHECK_STR_EQ(escaped("Größe"), "Größe");
    CHECK_STR_EQ(escaped("café crème, Ørsted, señal"), "café crème, Ørsted, señal");
    CHECK_STR_EQ(escaped("猫"), "猫");
    CHECK_STR_EQ(escaped("日本語のクラス"), "日本語のクラス");
    CHECK_STR_EQ(escaped("한국어"), "한국어");
    CHECK_STR_EQ(escaped("\xf0\x9f\x90\x88 cat"), "\xf0\x9f\x90\x88 cat");  // U+1F408, 4 bytes
    CHECK_STR_EQ(escaped("\xf0\xa0\x80\x80"), "\xf0\xa0\x80\x80");          // U+20000, CJK ext B
    CHECK_STR_EQ(escaped("\xc2\xa0"), "\xc2\xa0");  // U+00A0, the first past the C1 controls
    CHECK_STR_EQ(escaped("o\xcc\x88"), "o\xcc\x88");  // "ö" decomposed, as macOS writes it
    CHECK_STR_EQ(escaped("\xef\xbf\xbd"), "\xef\xbf\xbd");  // U+FFFD, the replacement character
    CHECK_STR_EQ(escaped("\xe2\x80\x90"), "\xe2\x80\x90");  // U+2010 hyphen, below U+2028
    CHECK_STR_EQ(escaped("\xe2\x80\xb0"), "\xe2\x80\xb0");  // U+2030 per mille, above U+202E
    CHECK_STR_EQ(escaped("\xef\xb7\x8f"), "\xef\xb7\x8f");  // U+FDCF, below the noncharacters
    CHECK_STR_EQ(escaped("\xef\xb7\xb0"), "\xef\xb7\xb0");  // U+FDF0, above them
    CHECK_STR_EQ(escaped("\xef\xa4\x80"), "\xef\xa4\x80");  // U+F900, past private use
    // A backslash between multibyte characters is still doubled.
    CHECK_STR_EQ(escaped("猫\\ö"), "猫\\\\ö");
}

static void c1_controls_are_escaped(void) {
    CHECK_STR_EQ(escaped("a\xc2\x80z"), "a\\xc2\\x80z");   // U+0080
    CHECK_STR_EQ(escaped("\xc2\x85"), "\\xc2\\x85");       // U+0085 next line
    CHECK_STR_EQ(escaped("\xc2\x9b""31m"), "\\xc2\\x9b31m");  // U+009B CSI
    CHECK_STR_EQ(escaped("\xc2\x9d"), "\\xc2\\x9d");       // U+009D OSC
    CHECK_STR_EQ(escaped("\xc2\x9f"), "\\xc2\\x9f");       // U+009F
}

static void bidirectional_controls_are_escaped(void) {
    CHECK_STR_EQ(escaped("\xd8\x9c"), "\\xd8\\x9c");          // U+061C Arabic letter mark
    CHECK_STR_EQ(escaped("\xe2\x80\x8e"), "\\xe2\\x80\\x8e");  // U+200E left-to-right mark
    CHECK_STR_EQ(escaped("\xe2\x80\x8f"), "\\xe2\\x80\\x8f");  // U+200F right-to-left mark
    CHECK_STR_EQ(escaped("\xe2\x80\xaa"), "\\xe2\\x80\\xaa");  // U+202A
    CHECK_STR_EQ(escaped("cat\xe2\x80\xaegnp.exe"), "cat\\xe2\\x80\\xaegnp.exe");  // U+202E
    CHECK_STR_EQ(escaped("\xe2\x81\xa6"), "\\xe2\\x81\\xa6");  // U+2066
    CHECK_STR_EQ(escaped("\xe2\x81\xa9"), "\\xe2\\x81\\xa9");  // U+2069
}

static void invisible_characters_are_escaped(void) {
    CHECK_STR_EQ(escaped("a\xe2\x80\x8b" "b"), "a\\xe2\\x80\\x8bb");  // U+200B zero width space
    CHECK_STR_EQ(escaped("\xe2\x80\x8c"), "\\xe2\\x80\\x8c");  // U+200C zero width non-joiner
    CHECK_STR_EQ(escaped("\xe2\x80\x8d"), "\\xe2\\x80\\x8d");  // U+200D zero width joiner
    CHECK_STR_EQ(escaped("\xe2\x81\xa0"), "\\xe2\\x81\\xa0");  // U+2060 word joiner
    CHECK_STR_EQ(escaped("\xe2\x81\xa4"), "\\xe2\\x81\\xa4");  // U+2064 invisible plus
    CHECK_STR_EQ(escaped("\xef\xbb\xbf" "cat"), "\\xef\\xbb\\xbfcat");  // U+FEFF, a BOM
    CHECK_STR_EQ(escaped("\xef\xbf\xb9"), "\\xef\\xbf\\xb9");  // U+FFF9 annotation anchor
    CHECK_STR_EQ(escaped("\xf3\xa0\x81\x81"), "\\xf3\\xa0\\x81\\x81");  // U+E0041 tag A
}

static void separators_and_noncharacters_are_escaped(void) {
    CHECK_STR_EQ(escaped("a\xe2\x80\xa8" "b"), "a\\xe2\\x80\\xa8b");  // U+2028 line separator
    CHECK_STR_EQ(escaped("\xe2\x80\xa9"), "\\xe2\\x80\\xa9");  // U+2029 paragraph separator
    CHECK_STR_EQ(escaped("\xef\xb7\x90"), "\\xef\\xb7\\x90");  // U+FDD0
    CHECK_STR_EQ(escaped("\xef\xb7\xaf"), "\\xef\\xb7\\xaf");  // U+FDEF
    CHECK_STR_EQ(escaped("\xef\xbf\xbe"), "\\xef\\xbf\\xbe");  // U+FFFE
    CHECK_STR_EQ(escaped("\xef\xbf\xbf"), "\\xef\\xbf\\xbf");  // U+FFFF
    CHECK_STR_EQ(escaped("\xf0\x9f\xbf\xbe"), "\\xf0\\x9f\\xbf\\xbe");  // U+1FFFE
    CHECK_STR_EQ(escaped("\xf4\x8f\xbf\xbf"), "\\xf4\\x8f\\xbf\\xbf");  // U+10FFFF
}

static void private_use_is_escaped(void) {
    CHECK_STR_EQ(escaped("\xee\x80\x80"), "\\xee\\x80\\x80");          // U+E000
    CHECK_STR_EQ(escaped("\xef\xa3\xbf"), "\\xef\\xa3\\xbf");          // U+F8FF
    CHECK_STR_EQ(escaped("\xf3\xb0\x80\x80"), "\\xf3\\xb0\\x80\\x80");  // U+F0000
    CHECK_STR_EQ(escaped("\xf4\x80\x80\x80"), "\\xf4\\x80\\x80\\x80");  // U+100000
}

static void bytes_that_start_no_sequence_are_escaped(void) {
    CHECK_STR_EQ(escaped("\x80"), "\\x80");                      // lone continuation
    CHECK_STR_EQ(escaped("a\xbf\xbf" "b"), "a\\xbf\\xbfb");      // two of them
    CHECK_STR_EQ(escaped("\xe7\x8c"), "\\xe7\\x8c");             // "猫" without its last byte
    CHECK_STR_EQ(escaped("\xe7\x8c" "a猫"), "\\xe7\\x8ca猫");    // ... then ASCII, then whole
    CHECK_STR_EQ(escaped("\xf0\x9f\x90"), "\\xf0\\x9f\\x90");    // an emoji cut short
    CHECK_STR_EQ(escaped("\xc3" "\xc3\xb6"), "\\xc3ö");          // a lead byte, then "ö"
    CHECK_STR_EQ(escaped("\xc0\xaf"), "\\xc0\\xaf");             // overlong "/"
    CHECK_STR_EQ(escaped("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");    // overlong "/", 3 bytes
    CHECK_STR_EQ(escaped("\xf0\x80\x80\xaf"), "\\xf0\\x80\\x80\\xaf");  // ... 4 bytes
    CHECK_STR_EQ(escaped("\xc1\x9b"), "\\xc1\\x9b");             // overlong ESC "["
    CHECK_STR_EQ(escaped("\xed\xa0\x80"), "\\xed\\xa0\\x80");    // surrogate U+D800
    CHECK_STR_EQ(escaped("\xed\xbf\xbf"), "\\xed\\xbf\\xbf");    // surrogate U+DFFF
    CHECK_STR_EQ(escaped("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
    CHECK_STR_EQ(escaped("\xf5\xfe\xff"), "\\xf5\\xfe\\xff");    // never in UTF-8
    // Only `length` bytes are read: a character that goes on past them is cut, so escaped.
    char out[32];
    CHECK_STR_EQ(text_escape("猫", 2, out, sizeof out), "\\xe7\\x8c");
    CHECK_STR_EQ(text_escape("a\xf0\x9f\x90\x88", 4, out, sizeof out), "a\\xf0\\x9f\\x90");
}

static void a_cut_never_splits_a_character(void) {
    char out[16];
    // 9 bytes into 8: "猫" and "..." fit, the second "猫" would leave no room for "...".
    CHECK_STR_EQ(text_escape("猫猫猫", 9, out, 8), "猫...");
    CHECK_STR_EQ(text_escape("猫猫猫", 9, out, 10), "猫猫猫");  // all of it fits: not cut
    CHECK_STR_EQ(text_escape("猫猫猫", 9, out, 9), "猫...");
    CHECK_STR_EQ(text_escape("猫猫猫", 9, out, 6), "...");
    CHECK_STR_EQ(text_escape("Größe", 7, out, 8), "Größe");
    CHECK_STR_EQ(text_escape("Größe", 7, out, 7), "Gr...");  // "Grö..." needs 8 with its NUL
    CHECK_STR_EQ(text_escape("\xf0\x9f\x90\x88\xf0\x9f\x90\x88", 8, out, 8), "\xf0\x9f\x90\x88...");
    // An escaped character is not cut either: all of its \xNN or none.
    CHECK_STR_EQ(text_escape("a\xe2\x80\x8e" "b", 5, out, 15), "a\\xe2\\x80\\x8eb");
    CHECK_STR_EQ(text_escape("a\xe2\x80\x8e" "b", 5, out, 14), "a...");
    CHECK_STR_EQ(text_escape("ab", 2, out, 2), ".");
    // Every size, for a text with each kind of piece: shorter than `size`, valid UTF-8, and
    // the whole escape or a start of it (ending where a piece ends) and "...".
    static const char mixed[] = "aé猫\xf0\x9f\x90\x88\x1b[1m\xe2\x80\x8e\\\xff" "b";
    char whole[128], cut[128];
    text_escape(mixed, strlen(mixed), whole, sizeof whole);
    CHECK_STR_EQ(whole, "aé猫\xf0\x9f\x90\x88\\x1b[1m\\xe2\\x80\\x8e\\\\\\xffb");
    for (size_t size = 1; size <= strlen(whole) + 1; size++) {
        text_escape(mixed, strlen(mixed), cut, size);
        CHECK(strlen(cut) < size);
        CHECK(is_valid_utf8(cut));
        if (size == strlen(whole) + 1) {
            CHECK_STR_EQ(cut, whole);
        } else if (size >= 4) {
            size_t kept = strlen(cut) - 3;
            CHECK(strcmp(cut + kept, "...") == 0);
            CHECK(strncmp(cut, whole, kept) == 0);
            // Ends where a piece ends: what follows in the whole starts a new one.
            char next = whole[kept];
            CHECK(next == '\\' || (unsigned char)next < 0x80 || (next & 0xc0) == 0xc0);
        }
    }
}

static void a_place_is_escaped(void) {
    Status st;
    status_fail_at(&st, STATUS_BAD_INPUT, "data/Größe/x\x1b[7m.png", 0, 0, "not a PNG file");
    CHECK_INT_EQ(status_escape_place(&st, STATUS_BAD_INPUT), STATUS_BAD_INPUT);
    CHECK_STR_EQ(st.file, "data/Größe/x\\x1b[7m.png");
}

// The place of a byte in a text that may hold NULs before it: lines counted by '\n'.
static void line_and_column_of_a_byte(void) {
    static const char text[] = "ab\ncd\0e\n\nf";
    static const struct {
        size_t offset;
        int line, column;
    } cases[] = {{0, 1, 1}, {1, 1, 2}, {3, 2, 1}, {5, 2, 3}, {6, 2, 4}, {8, 3, 1}, {9, 4, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int line = 0, column = 0;
        text_line_column(text, cases[i].offset, &line, &column);
        CHECK_INT_EQ(line, cases[i].line);
        CHECK_INT_EQ(column, cases[i].column);
    }
}

// A list of names keeps each whole or counts it: a library folder or tensor name cut in the
// middle reads as another one (doctor's folder list was cut by snprintf, which GCC's
// -Werror=format-truncation refused in the Release sanitizer build).
static void a_name_list_keeps_names_whole(void) {
    char list[NAME_LIST_END + 40] = "";
    int left_out = 0;
    name_list_append(list, sizeof list, "/usr/lib", &left_out);
    name_list_append(list, sizeof list, "/opt/x\x1b", &left_out);
    name_list_append(list, sizeof list, "/a/folder/far/too/long/to/fit/here", &left_out);
    name_list_append(list, sizeof list, "/b", &left_out);
    name_list_end(list, sizeof list, left_out);
    CHECK_STR_EQ(list, "/usr/lib, /opt/x\\x1b, /b and 1 more");
    char empty[NAME_LIST_END + 8] = "";
    left_out = 0;
    name_list_append(empty, sizeof empty, "/usr/local/cuda/lib64", &left_out);
    name_list_end(empty, sizeof empty, left_out);
    CHECK_STR_EQ(empty, " and 1 more");
}

int main(void) {
    ascii_is_kept_and_controls_escaped();
    printable_utf8_is_kept();
    c1_controls_are_escaped();
    bidirectional_controls_are_escaped();
    invisible_characters_are_escaped();
    separators_and_noncharacters_are_escaped();
    private_use_is_escaped();
    bytes_that_start_no_sequence_are_escaped();
    a_cut_never_splits_a_character();
    a_place_is_escaped();
    line_and_column_of_a_byte();
    a_name_list_keeps_names_whole();
    return test_exit_code("test_escape");
}
