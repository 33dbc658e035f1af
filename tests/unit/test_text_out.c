// base/text_out.c: what library code writes for tools/ to print reaches the writer whole,
// also past the 1,024 bytes text_printf formats on the stack; text_join joins and cuts.
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

int main(void) {
    long_text_is_written_whole();
    join_quotes_and_cuts();
    return test_exit_code("test_text_out");
}
