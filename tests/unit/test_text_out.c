// base/text_out.c: what library code writes for tools/ to print reaches the writer whole,
// also past the 1,024 bytes text_printf formats on the stack; text_join joins and cuts;
// text_say hands a formatted line to its callback, and to none.
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text_out.h"
#include "check.h"

typedef struct Collected {
    char text[8192];
    size_t length;
    int writes, flushes;
} Collected;

static void collect(void *user, const char *text, size_t length) {
    Collected *c = user;
    CHECK(c->length + length < sizeof c->text);
    memcpy(c->text + c->length, text, length);
    c->length += length;
    c->text[c->length] = '\0';
    c->writes++;
}

static void count_flush(void *user) { ((Collected *)user)->flushes++; }

static void long_text_is_written_whole(void) {
    Collected *c = calloc(1, sizeof *c);
    const TextOut out = {collect, count_flush, c};
    char word[3001];
    memset(word, 'x', 3000);
    word[3000] = '\0';
    text_printf(&out, "<%s>%d", word, 42);
    CHECK_INT_EQ((int)c->length, 3004);
    CHECK(c->text[0] == '<' && c->text[3001] == '>' && strcmp(c->text + 3002, "42") == 0);
    text_put(&out, "!");
    text_flush(&out);
    CHECK_INT_EQ(c->writes, 2);
    CHECK_INT_EQ(c->flushes, 1);
    text_flush(&(TextOut){collect, NULL, c});  // no flush function: nothing to do
    free(c);
}

static void join_quotes_and_cuts(void) {
    const char *words[] = {"nvidia-smi", "trainer doctor"};
    char out[64];
    text_join(words, 2, ", then ", "`", out, sizeof out);
    CHECK(strcmp(out, "`nvidia-smi`, then `trainer doctor`") == 0);
    text_join(words, 0, " ", "", out, sizeof out);
    CHECK(strcmp(out, "") == 0);
    char small[8];
    text_join(words, 2, " ", "", small, sizeof small);
    CHECK(strcmp(small, "nvidia-") == 0);
}

static void keep_line(void *user, const char *line) { snprintf(user, 64, "%s", line); }

static void say(void (*to)(void *, const char *), void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(void (*to)(void *, const char *), void *user, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    text_say(to, user, fmt, ap);
    va_end(ap);
}

static void say_formats_a_line(void) {
    char line[64] = "untouched";
    say(keep_line, line, "gemm %s %dx%d", "bf16", 64, 32);
    CHECK(strcmp(line, "gemm bf16 64x32") == 0);
    say(NULL, line, "%s", "no callback: nothing said");
    CHECK(strcmp(line, "gemm bf16 64x32") == 0);
}

// Counts with thousands' commas, the sign kept, the most negative long included.
static void counts_get_commas(void) {
    char buf[40];
    CHECK(strcmp(format_count(0, buf, sizeof buf), "0") == 0);
    CHECK(strcmp(format_count(999, buf, sizeof buf), "999") == 0);
    CHECK(strcmp(format_count(1234567, buf, sizeof buf), "1,234,567") == 0);
    CHECK(strcmp(format_count(-1000, buf, sizeof buf), "-1,000") == 0);
    CHECK(strcmp(format_count(LONG_MIN, buf, sizeof buf), "-9,223,372,036,854,775,808") == 0);
}

int main(void) {
    long_text_is_written_whole();
    join_quotes_and_cuts();
    say_formats_a_line();
    counts_get_commas();
    return test_exit_code("test_text_out");
}
