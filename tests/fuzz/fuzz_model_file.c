// Deterministic mutation fuzzer for the model-file tokenizer and attribute readers.
//
// No libFuzzer: a fixed-seed generator mutates a few embedded seed texts (byte flips,
// insertions of the bytes the grammar cares about, deletions, truncations, duplicated
// runs), and every result goes through the parser and every reader. The checks are the
// invariants callers rely on; memory errors are left to ASan/UBSan, which the
// sanitizer build turns into a failure. Same seed, same inputs: a failure reproduces.
#define _POSIX_C_SOURCE 200809L

#include "models/model_file.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "base/suggest.h"

#define ITERATIONS 20000
#define TEXT_MAX 8192
#define FILE_ROUNDS_EVERY 100 // also go through model_file_read, where NUL bytes survive

static const char *const seeds[] = {
    "# models/lenet.model \xe2\x80\x94 Fashion-MNIST / MNIST LeNet-style CNN\n"
    "input    shape=1x28x28 dtype=f32\n"
    "conv2d   filters=32 kernel=5 pad=same act=relu\n"
    "maxpool  size=2\n"
    "conv2d   filters=64 kernel=5 pad=same act=relu\n"
    "maxpool  size=2\n"
    "flatten\n"
    "dense    units=256 act=relu\n"
    "dropout  rate=0.5\n"
    "dense    units=10\n"
    "loss     softmax_cross_entropy\n"
    "\n"
    "optimizer adam lr=0.001\n"
    "train     batch=128 epochs=10 seed=1\n",

    "input shape=3x32x32\r\n"
    "conv2d name=c1 filters=16 kernel=3 stride=1 pad=same bias=true\r\n"
    "\tconv2d name=c2 filters=16 kernel=3 act=relu # residual\r\n"
    "add from=c1,c2 scale=+1e-3\r\n"
    "optimizer sgd lr=1e-2 momentum=0.9 nesterov=yes wd=5E-4\r\n"
    "train batch=64 epochs=-1 data=dir/x:y",

    "dense a0=0 a1=1 a2=2 a3=3 a4=4 a5=5 a6=6 a7=7 a8=8 a9=9 b0=0 b1=1 b2=2 b3=3 b4=4 b5=5 "
    "b6=6 b7=7 b8=8 b9=9 c0=0 c1=1 c2=2 c3=3 c4=4 c5=5 c6=6 c7=7 c8=8 c9=9 d0=nan d1=inf\n"
    "loss mse\n",

    "x huge=1e999 tiny=1e-400 big=99999999999999999999 neg=-0 hex=0x10 v=1..2 b=True\n"
    "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk "
    "v=vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\n",

    "",
};

// The bytes the grammar cares about, inserted far more often than chance would.
static const char interesting[] = "=#\n\r\t ,x:/+-.eE0123456789_aZ\"'\\\x01\x7f\x80\xc2\xff";

static uint64_t prng_state = 0x9e3779b97f4a7c15ull;

// xorshift64*: tiny, deterministic and the same everywhere.
static uint64_t prng_next(void) {
    prng_state ^= prng_state >> 12;
    prng_state ^= prng_state << 25;
    prng_state ^= prng_state >> 27;
    return prng_state * 0x2545f4914f6cdd1dull;
}

static size_t prng_below(size_t n) { return n ? (size_t)(prng_next() % n) : 0; }

// One random edit of text[0..*length); the buffer holds TEXT_MAX bytes.
static void mutate(char *text, size_t *length) {
    size_t n = *length;
    size_t at = prng_below(n + 1);
    switch (prng_below(7)) {
    case 0: // flip a bit
        if (n) text[prng_below(n)] ^= (char)(1u << prng_below(8));
        break;
    case 1: // any byte, NUL included (it survives the file path only)
        if (n) text[prng_below(n)] = (char)prng_below(256);
        break;
    case 2: // insert an interesting byte
    case 3:
        if (n + 1 >= TEXT_MAX) break;
        memmove(text + at + 1, text + at, n - at);
        text[at] = interesting[prng_below(sizeof interesting - 1)];
        n++;
        break;
    case 4: { // delete a run
        size_t run = 1 + prng_below(8);
        if (at + run > n) run = n - at;
        memmove(text + at, text + at + run, n - at - run);
        n -= run;
        break;
    }
    case 5: // truncate
        n = at;
        break;
    case 6: { // duplicate a run: grows words past their limit and lines past 32 pairs
        size_t run = 1 + prng_below(96);
        if (at + run > n) run = n - at;
        if (n + run >= TEXT_MAX) break;
        memmove(text + at + run, text + at, n - at);
        n += run;
        break;
    }
    }
    *length = n;
}

static int is_printable_ascii(const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) return 0;
    return 1;
}

// Every failure, from the parser or a reader, must look like the project's errors.
static void check_error(int rc, const Status *st, int has_line) {
    CHECK(rc == 0 || rc == STATUS_BAD_INPUT);
    if (rc == 0) return;
    CHECK_INT_EQ(st->code, STATUS_BAD_INPUT);
    CHECK(st->message[0] != '\0');
    CHECK(st->hint[0] != '\0');
    CHECK(is_printable_ascii(st->message));
    CHECK(is_printable_ascii(st->hint));
    if (has_line) {
        CHECK(st->line >= 1);
        CHECK(st->column >= 1);
    }
}

static void check_statement_shape(const ModelStatement *s, int previous_line) {
    CHECK(s->line > previous_line);
    CHECK(s->kind[0] != '\0');
    CHECK(s->kind_column >= 1);
    CHECK(strlen(s->kind) < MODEL_WORD_MAX);
    CHECK(s->choice[0] == '\0' || s->choice_column > s->kind_column);
    CHECK(s->attr_count >= 0 && s->attr_count <= MODEL_ATTR_MAX);
    for (int i = 0; i < s->attr_count; i++) {
        const ModelAttr *a = &s->attrs[i];
        CHECK(a->key[0] != '\0' && a->value[0] != '\0');
        CHECK(strlen(a->key) < MODEL_WORD_MAX && strlen(a->value) < MODEL_VALUE_MAX);
        CHECK(a->key_column >= 1);
        CHECK_INT_EQ(a->value_column, a->key_column + (int)strlen(a->key) + 1);
        CHECK(is_printable_ascii(a->key) && is_printable_ascii(a->value));
        CHECK(model_attr_find(s, a->key) == a);
    }
}

// Runs every reader over every key the statement has, plus one it has not.
static void exercise_readers(const ModelStatement *s) {
    static const char *const allowed[] = {"filters", "kernel", "units", "rate",
                                          "lr",      "act",    "shape", NULL};
    static const char *const acts[] = {"none", "relu", "sigmoid", "tanh", NULL};
    Status st;
    status_clear(&st);
    check_error(model_check_keys("f.model", s, allowed, &st), &st, 1);
    for (int i = 0; i <= s->attr_count; i++) {
        const char *key = i < s->attr_count ? s->attrs[i].key : "absent";
        long integer;
        double real;
        int flag, index;
        check_error(model_attr_int("f.model", s, key, 1, 1, 4096, &integer, &st), &st, 1);
        check_error(model_attr_int("f.model", s, key, 0, LONG_MIN, LONG_MAX, &integer, &st), &st,
                    1);
        check_error(model_attr_float("f.model", s, key, 0.5, 0, 1, &real, &st), &st, 1);
        check_error(model_attr_float_interval("f.model", s, key, 0.5, 0, INFINITY,
                                              MODEL_EXCLUDE_MIN, &real, &st),
                    &st, 1);
        check_error(model_attr_float("f.model", s, key, 0, -DBL_MAX, DBL_MAX, &real, &st), &st, 1);
        check_error(model_attr_bool("f.model", s, key, 0, &flag, &st), &st, 1);
        check_error(model_attr_choice("f.model", s, key, acts, 0, &index, &st), &st, 1);
        suggest(key, allowed);
        if (i < s->attr_count) suggest(s->attrs[i].value, acts);
    }
    suggest(s->kind, allowed);
}

static void check_parse(int rc, const Status *st, const ModelFile *file) {
    check_error(rc, st, 1);
    if (rc) {
        CHECK(file->statements == NULL && file->count == 0);
        return;
    }
    CHECK(file->count >= 0 && file->count <= MODEL_STATEMENT_MAX);
    int previous_line = 0;
    for (int i = 0; i < file->count; i++) {
        check_statement_shape(&file->statements[i], previous_line);
        previous_line = file->statements[i].line;
        exercise_readers(&file->statements[i]);
    }
}

// A file saved with CRLF line ends must parse exactly as with LF.
static void check_crlf_gives_the_same(const char *text, const ModelFile *lf_file) {
    static char crlf[2 * TEXT_MAX + 1];
    if (strchr(text, '\r')) return; // a CR already there changes meaning when doubled up
    size_t n = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') crlf[n++] = '\r';
        crlf[n++] = *p;
    }
    crlf[n] = '\0';
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_parse_text("f.model", crlf, &file, &st), 0);
    CHECK_INT_EQ(file.count, lf_file->count);
    for (int i = 0; i < file.count && i < lf_file->count; i++)
        CHECK(memcmp(&file.statements[i], &lf_file->statements[i], sizeof file.statements[i]) == 0);
    model_file_free(&file);
}

// The same input through model_file_read, so that NUL bytes reach the file path too.
static void parse_through_file(const char *text, size_t length) {
    char path[] = "/tmp/fuzz_model_file_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "wb");
    fwrite(text, 1, length, f);
    fclose(f);
    ModelFile file;
    Status st;
    status_clear(&st);
    int rc = model_file_read(path, &file, &st);
    check_parse(rc, &st, &file);
    model_file_free(&file);
    unlink(path);
}

int main(void) {
    static char text[TEXT_MAX + 1];
    const int seed_count = (int)(sizeof seeds / sizeof seeds[0]);
    int accepted = 0, refused = 0;
    for (int iteration = 0; iteration < ITERATIONS; iteration++) {
        const char *seed = seeds[iteration % seed_count];
        size_t length = strlen(seed);
        memcpy(text, seed, length);
        int edits = 1 + (int)prng_below(8);
        for (int e = 0; e < edits; e++) mutate(text, &length);
        text[length] = '\0';

        if (iteration % FILE_ROUNDS_EVERY == 0) parse_through_file(text, length);

        ModelFile file;
        Status st;
        status_clear(&st);
        int rc = model_file_parse_text("f.model", text, &file, &st);
        check_parse(rc, &st, &file);
        if (rc == 0) check_crlf_gives_the_same(text, &file);
        model_file_free(&file);
        if (rc == 0)
            accepted++;
        else
            refused++;
        if (test_failures) {
            fprintf(stderr, "fuzz_model_file: failed at iteration %d on input:\n", iteration);
            for (size_t i = 0; i < strlen(text); i++)
                fprintf(stderr, "\\x%02x", (unsigned char)text[i]);
            fprintf(stderr, "\n");
            break;
        }
    }
    // A fuzzer whose mutants all fail at the first byte (or all pass) tests nothing.
    fprintf(stderr, "fuzz_model_file: %d inputs accepted, %d refused\n", accepted, refused);
    CHECK(accepted >= ITERATIONS / 20);
    CHECK(refused >= ITERATIONS / 20);
    return test_exit_code("fuzz_model_file");
}
