// The model-file tokenizer and its attribute readers: what parses into what (with
// columns), and the exact message, line and column of every error.
#define _POSIX_C_SOURCE 200809L

#include "models/model_file.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "base/suggest.h"

static const char *const lenet_text =
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
    "train     batch=128 epochs=10 seed=1\n";

// ---- helpers ------------------------------------------------------------------------

// Parses one-statement text that must succeed; returns the statement (file kept in *file).
static const ModelStatement *parse_one(const char *text, ModelFile *file) {
    Status st;
    status_clear(&st);
    int rc = model_file_parse_text("t.model", text, file, &st);
    CHECK_INT_EQ(rc, 0);
    if (rc) fprintf(stderr, "  unexpected error: %s (hint: %s)\n", st.message, st.hint);
    CHECK_INT_EQ(file->count, 1);
    return file->count >= 1 ? &file->statements[0] : NULL;
}

static void check_attr(const ModelStatement *s, int index, const char *key, const char *value,
                       int key_column, int value_column) {
    if (!s || index >= s->attr_count) {
        CHECK(!"attribute missing");
        return;
    }
    const ModelAttr *a = &s->attrs[index];
    CHECK_CONTAINS(a->key, key);
    CHECK_INT_EQ(strcmp(a->key, key), 0);
    CHECK_INT_EQ(strcmp(a->value, value), 0);
    CHECK_INT_EQ(a->key_column, key_column);
    CHECK_INT_EQ(a->value_column, value_column);
}

// Messages must be plain printable ASCII whatever the input held.
static void check_printable(const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p >= 0x7f) {
            fprintf(stderr, "  non-printable byte 0x%02x in \"%s\"\n", *p, text);
            CHECK(!"message is printable");
            return;
        }
}

static void expect_parse_error(const char *text, int line, int column, const char *message,
                               const char *hint) {
    ModelFile file;
    Status st;
    status_clear(&st);
    int rc = model_file_parse_text("bad.model", text, &file, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.code, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.line, line);
    CHECK_INT_EQ(st.column, column);
    CHECK_CONTAINS(st.message, message);
    CHECK_CONTAINS(st.hint, hint);
    CHECK_INT_EQ(strcmp(st.file, "bad.model"), 0);
    CHECK(file.statements == NULL);
    CHECK_INT_EQ(file.count, 0);
    check_printable(st.message);
    check_printable(st.hint);
    model_file_free(&file);
}

static void expect_reader_error(const Status *st, int rc, int line, int column, const char *message,
                                const char *hint) {
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st->line, line);
    CHECK_INT_EQ(st->column, column);
    CHECK_CONTAINS(st->message, message);
    CHECK_CONTAINS(st->hint, hint);
}

// ---- parsing ------------------------------------------------------------------------

static void lenet_parses_into_kinds_choices_and_attrs(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_parse_text("lenet.model", lenet_text, &file, &st), 0);
    CHECK_INT_EQ(strcmp(file.path, "lenet.model"), 0);
    CHECK_INT_EQ(file.count, 12);
    if (file.count != 12) return;
    const char *kinds[] = {"input", "conv2d",  "maxpool", "conv2d", "maxpool",   "flatten",
                           "dense", "dropout", "dense",   "loss",   "optimizer", "train"};
    const int lines[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14};
    const int attr_counts[] = {2, 4, 1, 4, 1, 0, 2, 1, 1, 0, 1, 3};
    for (int i = 0; i < 12; i++) {
        const ModelStatement *s = &file.statements[i];
        CHECK_INT_EQ(strcmp(s->kind, kinds[i]), 0);
        CHECK_INT_EQ(s->line, lines[i]);
        CHECK_INT_EQ(s->kind_column, 1);
        CHECK_INT_EQ(s->attr_count, attr_counts[i]);
    }
    const ModelStatement *input = &file.statements[0];
    CHECK_INT_EQ(strcmp(input->choice, ""), 0);
    check_attr(input, 0, "shape", "1x28x28", 10, 16);
    check_attr(input, 1, "dtype", "f32", 24, 30);

    const ModelStatement *conv = &file.statements[1];
    check_attr(conv, 0, "filters", "32", 10, 18);
    check_attr(conv, 1, "kernel", "5", 21, 28);
    check_attr(conv, 2, "pad", "same", 30, 34);
    check_attr(conv, 3, "act", "relu", 39, 43);

    check_attr(&file.statements[7], 0, "rate", "0.5", 10, 15);

    const ModelStatement *loss = &file.statements[9];
    CHECK_INT_EQ(strcmp(loss->choice, "softmax_cross_entropy"), 0);
    CHECK_INT_EQ(loss->choice_column, 10);

    const ModelStatement *optimizer = &file.statements[10];
    CHECK_INT_EQ(strcmp(optimizer->choice, "adam"), 0);
    CHECK_INT_EQ(optimizer->choice_column, 11);
    check_attr(optimizer, 0, "lr", "0.001", 16, 19);

    const ModelStatement *train = &file.statements[11];
    check_attr(train, 0, "batch", "128", 11, 17);
    check_attr(train, 1, "epochs", "10", 21, 28);
    check_attr(train, 2, "seed", "1", 31, 36);
    model_file_free(&file);
    CHECK(file.statements == NULL);
    CHECK_INT_EQ(file.count, 0);
}

static void empty_and_comment_only_files_have_no_statements(void) {
    const char *texts[] = {
        "", "\n\n", "# only a comment", "  # indented\n\t\n# another\n", "\r\n\r\n", "   \t  "};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ModelFile file;
        Status st;
        status_clear(&st);
        CHECK_INT_EQ(model_file_parse_text("e.model", texts[i], &file, &st), 0);
        CHECK_INT_EQ(file.count, 0);
        model_file_free(&file);
    }
}

static void comments_end_a_statement_anywhere(void) {
    ModelFile file;
    const ModelStatement *s = parse_one("dense units=10# ten classes = 'x' \x01\xff\n", &file);
    if (s) {
        CHECK_INT_EQ(s->attr_count, 1);
        check_attr(s, 0, "units", "10", 7, 13);
    }
    model_file_free(&file);
    s = parse_one("# header\n\n   loss mse   # squared error\n", &file);
    if (s) {
        CHECK_INT_EQ(s->line, 3);
        CHECK_INT_EQ(s->kind_column, 4);
        CHECK_INT_EQ(strcmp(s->choice, "mse"), 0);
        CHECK_INT_EQ(s->choice_column, 9);
    }
    model_file_free(&file);
}

static void crlf_and_missing_final_newline(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    const char *text = "input shape=4\r\n\r\ndense units=2\r\nloss mse";
    CHECK_INT_EQ(model_file_parse_text("c.model", text, &file, &st), 0);
    CHECK_INT_EQ(file.count, 3);
    if (file.count == 3) {
        check_attr(&file.statements[0], 0, "shape", "4", 7, 13);
        CHECK_INT_EQ(file.statements[1].line, 3);
        check_attr(&file.statements[1], 0, "units", "2", 7, 13);
        CHECK_INT_EQ(file.statements[2].line, 4);
        CHECK_INT_EQ(strcmp(file.statements[2].choice, "mse"), 0);
    }
    model_file_free(&file);
    // A final CR with no LF still ends the line.
    const ModelStatement *s = parse_one("dense units=2\r", &file);
    if (s) check_attr(s, 0, "units", "2", 7, 13);
    model_file_free(&file);
    // A UTF-8 byte order mark first is passed over; columns count from after it, as an
    // editor shows them.
    s = parse_one("\xef\xbb\xbf" "dense units=2", &file);
    if (s) check_attr(s, 0, "units", "2", 7, 13);
    model_file_free(&file);
}

static void tabs_separate_and_count_one_column(void) {
    ModelFile file;
    const ModelStatement *s = parse_one("\tconv2d\tfilters=8\t\tkernel=3 \t pad=valid\n", &file);
    if (s) {
        CHECK_INT_EQ(s->kind_column, 2);
        check_attr(s, 0, "filters", "8", 9, 17);
        check_attr(s, 1, "kernel", "3", 20, 27);
        check_attr(s, 2, "pad", "valid", 31, 35);
    }
    model_file_free(&file);
}

static void values_take_lists_shapes_exponents_and_paths(void) {
    ModelFile file;
    const ModelStatement *s =
        parse_one("add name=res_1 from=a,b.c lr=1e-3 wd=2E+4 shape=3x32x32 data=dir/x:y\n", &file);
    if (s) {
        CHECK_INT_EQ(s->attr_count, 6);
        check_attr(s, 1, "from", "a,b.c", 16, 21);
        check_attr(s, 2, "lr", "1e-3", 27, 30);
        check_attr(s, 3, "wd", "2E+4", 35, 38);
        check_attr(s, 4, "shape", "3x32x32", 43, 49);
        check_attr(s, 5, "data", "dir/x:y", 57, 62);
    }
    model_file_free(&file);
}

static void longest_word_and_value_and_most_pairs_are_accepted(void) {
    char text[4096];
    int n = snprintf(text, sizeof text, "%.*s ", MODEL_WORD_MAX - 1,
                     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
    for (int i = 0; i < MODEL_ATTR_MAX - 1; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "k%d=%d ", i, i);
    n += snprintf(text + n, sizeof text - (size_t)n, "long=");
    for (int i = 0; i < MODEL_VALUE_MAX - 1; i++) text[n++] = 'v';
    text[n] = '\0';
    ModelFile file;
    const ModelStatement *s = parse_one(text, &file);
    if (s) {
        CHECK_INT_EQ(strlen(s->kind), MODEL_WORD_MAX - 1);
        CHECK_INT_EQ(s->attr_count, MODEL_ATTR_MAX);
        CHECK_INT_EQ(strlen(s->attrs[MODEL_ATTR_MAX - 1].value), MODEL_VALUE_MAX - 1);
    }
    model_file_free(&file);
}

// ---- parse errors -------------------------------------------------------------------

static void bare_word_after_pairs_or_choice_is_an_error(void) {
    expect_parse_error("dense units=10 relu\n", 1, 16,
                       "expected key=value after 'dense', found 'relu'", "write it as relu=VALUE");
    expect_parse_error("input shape=4\ndense relu units\n", 2, 12,
                       "expected key=value after 'dense', found 'units'",
                       "write it as units=VALUE");
    expect_parse_error("dense relu units\n", 1, 12, "found 'units'", "already has 'relu'");
}

static void key_without_value_and_equals_without_key(void) {
    expect_parse_error("dense units=\n", 1, 7, "key 'units' has no value", "units=VALUE");
    expect_parse_error("dense units= 10\n", 1, 7, "key 'units' has no value", "no space after '='");
    expect_parse_error("dense units=#c\n", 1, 7, "key 'units' has no value", "units=VALUE");
    expect_parse_error("dense units =10\n", 1, 13, "'=' without a key", "no spaces around '='");
    expect_parse_error("=3\n", 1, 1, "'=' without a key", "KEY=VALUE");
    expect_parse_error("dense units==10\n", 1, 13,
                       "unexpected character '=' (byte 0x3d) after 'units='", "cannot contain '='");
    expect_parse_error("dense units=1=0\n", 1, 14,
                       "unexpected character '=' (byte 0x3d) after 'units=1'",
                       "cannot contain '='");
}

static void statement_must_start_with_a_kind(void) {
    expect_parse_error("  units=10\n", 1, 3, "expected a kind before 'units=10'",
                       "starts with its kind");
}

static void duplicate_keys_name_the_first_column(void) {
    expect_parse_error("dense units=10 act=relu units=20\n", 1, 25,
                       "duplicate key 'units' (first at column 7)", "remove one");
}

static void too_many_pairs_on_one_line(void) {
    char text[1024];
    int n = snprintf(text, sizeof text, "dense");
    for (int i = 0; i <= MODEL_ATTR_MAX; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, " a%02d=1", i);
    // " aNN=1" is 6 columns wide; the 33rd pair starts after "dense" and 32 of them.
    expect_parse_error(text, 1, 5 + 6 * MODEL_ATTR_MAX + 2,
                       "more than 32 key=value pairs on one line", "line break");
}

static void over_long_words_and_values(void) {
    char text[1024];
    memset(text, 'w', 70);
    strcpy(text + 70, " units=1\n");
    expect_parse_error(text, 1, 1, "word too long (70 characters, at most 63)", "short names");
    snprintf(text, sizeof text, "dense %.*s=1\n", 64,
             "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk");
    expect_parse_error(text, 1, 7, "word too long (64 characters, at most 63)", "short names");
    int n = snprintf(text, sizeof text, "dense from=");
    memset(text + n, 'v', 300);
    strcpy(text + n + 300, "\n");
    expect_parse_error(text, 1, 12, "value too long (300 characters, at most 255)", "short");
}

static void invalid_bytes_are_shown_escaped(void) {
    expect_parse_error("dense \x01units=1\n", 1, 7, "unexpected character '\\x01' (byte 0x01)",
                       "control character");
    expect_parse_error("dense units=1\x1b[31m\n", 1, 14,
                       "unexpected character '\\x1b' (byte 0x1b) after 'units=1'", "control");
    expect_parse_error("dense units=\xc2\xa0"
                       "1\n",
                       1, 13, "unexpected character '\\xc2' (byte 0xc2)", "only ASCII");
    expect_parse_error("dense\xc2\xa0units=1\n", 1, 6,
                       "unexpected character '\\xc2' (byte 0xc2) after 'dense'",
                       "non-breaking space");
    expect_parse_error("dense units=1\rloss mse\n", 1, 14, "unexpected character '\\r' (byte 0x0d)",
                       "lone carriage return");
    expect_parse_error("input name=\"x\"\n", 1, 12, "unexpected character '\"' (byte 0x22)",
                       "without quotes");
    expect_parse_error("input name='x'\n", 1, 12, "unexpected character '\\'' (byte 0x27)",
                       "without quotes");
    expect_parse_error("dense units:10\n", 1, 12,
                       "unexpected character ':' (byte 0x3a) after 'units'", "with '='");
    expect_parse_error("conv2d@ x=1\n", 1, 7, "unexpected character '@' (byte 0x40) after 'conv2d'",
                       "letters, digits");
    expect_parse_error("dense units=a\\b\n", 1, 14, "unexpected character '\\\\' (byte 0x5c)",
                       "values may contain only");
    expect_parse_error("\n\n  ,x\n", 3, 3, "unexpected character ',' (byte 0x2c)",
                       "letters, digits");
}

static void errors_report_the_right_line(void) {
    expect_parse_error("# c\ninput shape=4\r\n\r\n  dense units=\r\n", 4, 9,
                       "key 'units' has no value", "units=VALUE");
}

static void too_many_statements_are_refused(void) {
    size_t size = (size_t)(MODEL_STATEMENT_MAX + 1) * 2 + 1;
    char *text = malloc(size);
    for (int i = 0; i <= MODEL_STATEMENT_MAX; i++) memcpy(text + 2 * i, "a\n", 2);
    text[size - 1] = '\0';
    expect_parse_error(text, MODEL_STATEMENT_MAX + 1, 1, "more than 8192 statements", "split");
    text[size - 3] = '\0'; // exactly the cap is fine
    ModelFile file;
    Status st;
    CHECK_INT_EQ(model_file_parse_text("many.model", text, &file, &st), 0);
    CHECK_INT_EQ(file.count, MODEL_STATEMENT_MAX);
    model_file_free(&file);
    free(text);
}

static void over_large_text_is_refused(void) {
    size_t size = (size_t)MODEL_FILE_BYTES_MAX + 2;
    char *text = malloc(size);
    memset(text, '\n', size - 1);
    text[size - 1] = '\0';
    ModelFile file;
    Status st;
    CHECK_INT_EQ(model_file_parse_text("big.model", text, &file, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "model file is too large (1048577 bytes, at most 1048576 bytes)");
    CHECK_CONTAINS(st.hint, "right file");
    CHECK_INT_EQ(st.line, 0);
    text[size - 2] = '\0'; // exactly 1 MiB is fine
    CHECK_INT_EQ(model_file_parse_text("big.model", text, &file, &st), 0);
    CHECK_INT_EQ(file.count, 0);
    model_file_free(&file);
    free(text);
}

// ---- reading files ------------------------------------------------------------------

// Writes `size` bytes to a fresh temporary file; the caller unlinks it.
static void write_temp_file(char *path, size_t path_size, const char *bytes, size_t size) {
    snprintf(path, path_size, "/tmp/test_model_file_XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "wb");
    CHECK_INT_EQ(fwrite(bytes, 1, size, f), size);
    fclose(f);
}

static void reads_a_file_from_disk(void) {
    char path[64];
    write_temp_file(path, sizeof path, lenet_text, strlen(lenet_text));
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(path, &file, &st), 0);
    CHECK_INT_EQ(file.count, 12);
    CHECK_INT_EQ(strcmp(file.path, path), 0);
    model_file_free(&file);
    unlink(path);
}

static void unreadable_files_name_the_reason(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_read("/nonexistent/dir/x.model", &file, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(strcmp(st.file, "/nonexistent/dir/x.model"), 0);
    CHECK_INT_EQ(st.line, 0);
    CHECK_CONTAINS(st.message, "cannot open model file");
    CHECK_CONTAINS(st.message, strerror(ENOENT));
    CHECK_CONTAINS(st.hint, "check the path");
    CHECK_INT_EQ(file.count, 0);
    model_file_free(&file);

    status_clear(&st);
    CHECK_INT_EQ(model_file_read("/tmp", &file, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, strerror(EISDIR));
    CHECK_CONTAINS(st.hint, "check the path");
    model_file_free(&file);
}

// A missing model file names the nearest file of its folder: in a named folder, and in the
// current one (a bare name, whose folder "." was once printed as an empty one and found
// nothing).
static void missing_files_suggest_a_neighbour(void) {
    char dir[] = "/tmp/test_model_file_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128], typed[128], near[256];
    snprintf(path, sizeof path, "%s/mlp.model", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(typed, sizeof typed, "%s/mpl.model", dir);
    CHECK(suggest_file(typed, near, sizeof near) != NULL && strcmp(near, path) == 0);
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(typed, &file, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "did you mean");
    CHECK_CONTAINS(st.message, path);
    model_file_free(&file);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_INT_EQ(chdir(dir), 0);
    CHECK(suggest_file("mpl.model", near, sizeof near) != NULL && strcmp(near, "mlp.model") == 0);
    CHECK(suggest_file("zzzzzz.txt", near, sizeof near) == NULL);
    CHECK_INT_EQ(chdir(cwd), 0);
    unlink(path);
    rmdir(dir);
}

static void nul_bytes_and_huge_files_are_refused_when_read(void) {
    char path[64];
    const char bytes[] = "input shape=4\ndense u\0nits=3\n";
    write_temp_file(path, sizeof path, bytes, sizeof bytes - 1);
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(path, &file, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.line, 2);
    CHECK_INT_EQ(st.column, 8);
    CHECK_CONTAINS(st.message, "unexpected character '\\x00' (byte 0x00)");
    CHECK_CONTAINS(st.hint, "plain text");
    model_file_free(&file);
    unlink(path);

    // A NUL among the first bytes: a binary file, named as one, even past the size limit.
    const char binary[] = "ab\0cd\n";
    write_temp_file(path, sizeof path, binary, sizeof binary - 1);
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(path, &file, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.line, 1);
    CHECK_INT_EQ(st.column, 3);
    CHECK_CONTAINS(st.message, "this looks like a binary file, not a model file");
    CHECK_CONTAINS(st.hint, "the model file (.model) comes first");
    model_file_free(&file);
    unlink(path);
    // Safetensors weights given as the model: 8 bytes of header length, then '{'.
    size_t weights_size = (size_t)MODEL_FILE_BYTES_MAX + 100;
    char *weights = calloc(weights_size, 1);
    weights[0] = 2;
    memcpy(weights + 8, "{}", 2);
    write_temp_file(path, sizeof path, weights, weights_size);
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(path, &file, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(st.column, 1);
    CHECK_CONTAINS(st.message, "this is a safetensors file");
    CHECK_CONTAINS(st.hint, "--weights");
    model_file_free(&file);
    unlink(path);
    free(weights);

    size_t size = (size_t)MODEL_FILE_BYTES_MAX + 10;
    char *big = malloc(size);
    memset(big, '#', size);
    write_temp_file(path, sizeof path, big, size);
    status_clear(&st);
    CHECK_INT_EQ(model_file_read(path, &file, &st), STATUS_BAD_INPUT);
    // The file's own size, not "more than that": what to compare with the limit.
    CHECK_CONTAINS(st.message, "model file is too large (1048586 bytes, at most 1048576 bytes)");
    CHECK_INT_EQ(st.line, 0);
    model_file_free(&file);
    unlink(path);
    free(big);
}

// ---- attribute helpers --------------------------------------------------------------

static void finds_attributes_by_exact_key(void) {
    ModelFile file;
    const ModelStatement *s = parse_one("dense units=10 act=relu\n", &file);
    if (s) {
        const ModelAttr *a = model_attr_find(s, "act");
        CHECK(a != NULL);
        if (a) CHECK_INT_EQ(strcmp(a->value, "relu"), 0);
        CHECK(model_attr_find(s, "Act") == NULL);
        CHECK(model_attr_find(s, "unit") == NULL);
        CHECK(model_attr_find(s, "") == NULL);
    }
    model_file_free(&file);
}

static void unknown_keys_get_a_suggestion_or_the_key_list(void) {
    static const char *const conv_keys[] = {"filters", "kernel", "stride", "pad", "act", NULL};
    static const char *const no_keys[] = {NULL};
    ModelFile file;
    Status st;
    const ModelStatement *s = parse_one("conv2d kernel=3 filter=8\n", &file);
    if (s) {
        status_clear(&st);
        int rc = model_check_keys("t.model", s, conv_keys, &st);
        expect_reader_error(&st, rc, 1, 17,
                            "unknown key 'filter' for conv2d; did you mean 'filters'?",
                            "conv2d accepts: filters, kernel, stride, pad, act");
    }
    model_file_free(&file);

    s = parse_one("conv2d kernel=3 colour=red\n", &file);
    if (s) {
        status_clear(&st);
        int rc = model_check_keys("t.model", s, conv_keys, &st);
        expect_reader_error(&st, rc, 1, 17, "unknown key 'colour' for conv2d",
                            "conv2d accepts: filters, kernel, stride, pad, act");
        CHECK(strstr(st.message, "did you mean") == NULL);
        CHECK_INT_EQ(model_check_keys("t.model", s, no_keys, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.hint, "conv2d takes no key=value pairs");
    }
    model_file_free(&file);

    s = parse_one("optimizer adam lr=0.1 momentun=0.9\n", &file);
    if (s) {
        static const char *const sgd_keys[] = {"lr", "momentum", NULL};
        int rc = model_check_keys("t.model", s, sgd_keys, &st);
        expect_reader_error(&st, rc, 1, 23,
                            "unknown key 'momentun' for optimizer adam; did you mean 'momentum'?",
                            "optimizer adam accepts: lr, momentum");
    }
    model_file_free(&file);

    s = parse_one("conv2d filters=8 kernel=3\n", &file);
    if (s) CHECK_INT_EQ(model_check_keys("t.model", s, conv_keys, &st), 0);
    model_file_free(&file);
}

static void integer_reader(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    long value = -1;
    const ModelStatement *s = parse_one(
        "dense units=10 neg=-7 plus=+3 bad=abc half=3.5 hex=0x10 big=99999999999999999999999 "
        "zero=0\n",
        &file);
    if (!s) return;
    CHECK_INT_EQ(model_attr_int("t.model", s, "units", 1, 1, 100, &value, &st), 0);
    CHECK_INT_EQ(value, 10);
    CHECK_INT_EQ(model_attr_int("t.model", s, "neg", 0, -10, 10, &value, &st), 0);
    CHECK_INT_EQ(value, -7);
    CHECK_INT_EQ(model_attr_int("t.model", s, "plus", 0, 0, 10, &value, &st), 0);
    CHECK_INT_EQ(value, 3);
    CHECK_INT_EQ(model_attr_int("t.model", s, "absent", 42, 1, 100, &value, &st), 0);
    CHECK_INT_EQ(value, 42);

    int rc = model_attr_int("t.model", s, "bad", 1, 1, 100, &value, &st);
    expect_reader_error(&st, rc, 1, 35, "bad=abc is not an integer",
                        "bad takes a whole number in [1, 100]");
    CHECK_INT_EQ(value, 1);
    rc = model_attr_int("t.model", s, "half", 1, 1, 100, &value, &st);
    expect_reader_error(&st, rc, 1, 44, "half=3.5 is not an integer", "whole number");
    rc = model_attr_int("t.model", s, "hex", 1, 1, 100, &value, &st);
    expect_reader_error(&st, rc, 1, 52, "hex=0x10 is not an integer", "whole number");
    rc = model_attr_int("t.model", s, "units", 1, 1, 5, &value, &st);
    expect_reader_error(&st, rc, 1, 13, "units=10 is out of range [1, 5]",
                        "units takes a whole number in [1, 5]");
    rc = model_attr_int("t.model", s, "zero", 1, 1, LONG_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 90, "zero=0 is out of range: it must be at least 1",
                        "zero takes a whole number at least 1");
    rc = model_attr_int("t.model", s, "units", 1, LONG_MIN, 4, &value, &st);
    expect_reader_error(&st, rc, 1, 13, "units=10 is out of range: it must be at most 4",
                        "at most 4");
    rc = model_attr_int("t.model", s, "big", 1, 1, LONG_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 61, "big=99999999999999999999999 is out of range",
                        "at least 1");
    rc = model_attr_int("t.model", s, "big", 1, LONG_MIN, LONG_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 61, "big=99999999999999999999999 is out of range [",
                        "whole number in [");
    model_file_free(&file);
}

static void float_reader(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    double value = -1;
    const ModelStatement *s = parse_one(
        "x lr=1e-3 rate=0.5 r1=1.5 one=1 neg=-2.25 word=fast nan=nan inf=-Inf exp=1e hexf=0x1p3 "
        "huge=1e999 tiny=1e-400 dots=1..2\n",
        &file);
    if (!s) return;
    CHECK_INT_EQ(model_attr_float("t.model", s, "lr", 0.1, 0, 1, &value, &st), 0);
    CHECK_NEAR(value, 1e-3, 1e-15);
    CHECK_INT_EQ(model_attr_float("t.model", s, "neg", 0, -10, 10, &value, &st), 0);
    CHECK_NEAR(value, -2.25, 0);
    CHECK_INT_EQ(model_attr_float("t.model", s, "absent", 0.25, 0, 1, &value, &st), 0);
    CHECK_NEAR(value, 0.25, 0);
    CHECK_INT_EQ(model_attr_float("t.model", s, "one", 0, 0, 1, &value, &st), 0); // inclusive
    CHECK_NEAR(value, 1, 0);

    int rc =
        model_attr_float_interval("t.model", s, "r1", 0.5, 0, 1, MODEL_EXCLUDE_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 23, "r1=1.5 is out of range [0, 1)",
                        "r1 takes a number in [0, 1)");
    CHECK_NEAR(value, 0.5, 0);
    rc = model_attr_float_interval("t.model", s, "one", 0.5, 0, 1, MODEL_EXCLUDE_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 31, "one=1 is out of range [0, 1)", "[0, 1)");
    rc = model_attr_float_interval("t.model", s, "rate", 0, 0.5, 1,
                                   MODEL_EXCLUDE_MIN | MODEL_EXCLUDE_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 16, "rate=0.5 is out of range (0.5, 1)", "(0.5, 1)");
    rc = model_attr_float_interval("t.model", s, "neg", 0, 0, INFINITY, MODEL_EXCLUDE_MIN, &value,
                                   &st);
    expect_reader_error(&st, rc, 1, 37, "neg=-2.25 is out of range: it must be greater than 0",
                        "neg takes a number greater than 0");
    rc = model_attr_float("t.model", s, "neg", 0, 0, DBL_MAX, &value, &st);
    expect_reader_error(&st, rc, 1, 37, "it must be at least 0", "at least 0");
    rc = model_attr_float_interval("t.model", s, "one", 0, -INFINITY, 1, MODEL_EXCLUDE_MAX, &value,
                                   &st);
    expect_reader_error(&st, rc, 1, 31, "one=1 is out of range: it must be less than 1",
                        "less than 1");
    rc = model_attr_float("t.model", s, "lr", 0, 0.1, 0.9999999, &value, &st);
    expect_reader_error(&st, rc, 1, 6, "lr=1e-3 is out of range [0.1, 0.9999999]",
                        "[0.1, 0.9999999]");

    rc = model_attr_float("t.model", s, "word", 0, 0, 1, &value, &st);
    expect_reader_error(&st, rc, 1, 48, "word=fast is not a number", "written like 0.5 or 1e-3");
    rc = model_attr_float("t.model", s, "nan", 0, -1e9, 1e9, &value, &st);
    expect_reader_error(&st, rc, 1, 57, "nan=nan is not a finite number", "in [-1000000000, 1000000000]");
    rc = model_attr_float("t.model", s, "inf", 0, -INFINITY, INFINITY, &value, &st);
    expect_reader_error(&st, rc, 1, 65, "inf=-Inf is not a finite number", "takes a finite number");
    rc = model_attr_float("t.model", s, "exp", 0, 0, 10, &value, &st);
    expect_reader_error(&st, rc, 1, 74, "exp=1e is not a number", "number");
    rc = model_attr_float("t.model", s, "hexf", 0, 0, 10, &value, &st);
    expect_reader_error(&st, rc, 1, 82, "hexf=0x1p3 is not a number", "number");
    rc = model_attr_float("t.model", s, "dots", 0, 0, 10, &value, &st);
    expect_reader_error(&st, rc, 1, 116, "dots=1..2 is not a number", "number");
    rc = model_attr_float("t.model", s, "huge", 0, 0, INFINITY, &value, &st);
    expect_reader_error(&st, rc, 1, 93, "huge=1e999 is out of range: it must be at least 0",
                        "at least 0");
    rc = model_attr_float("t.model", s, "huge", 0, -INFINITY, INFINITY, &value, &st);
    expect_reader_error(&st, rc, 1, 93, "huge=1e999 is out of range", "finite number");
    // Underflow becomes a tiny value that the range then judges.
    CHECK_INT_EQ(model_attr_float("t.model", s, "tiny", 1, 0, 1, &value, &st), 0);
    CHECK(value >= 0 && value < 1e-300);
    rc = model_attr_float_interval("t.model", s, "tiny", 1, 0, 1, MODEL_EXCLUDE_MIN, &value, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    model_file_free(&file);
}

static void bool_reader(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    const ModelStatement *s =
        parse_one("x a=true b=false c=1 d=0 e=yes f=no g=True h=maybe i=2\n", &file);
    if (!s) return;
    const char *keys[] = {"a", "b", "c", "d", "e", "f", "g"};
    const int expected[] = {1, 0, 1, 0, 1, 0, 1};
    for (int i = 0; i < 7; i++) {
        int value = -1;
        CHECK_INT_EQ(model_attr_bool("t.model", s, keys[i], -5, &value, &st), 0);
        CHECK_INT_EQ(value, expected[i]);
    }
    int value = -1;
    CHECK_INT_EQ(model_attr_bool("t.model", s, "absent", 1, &value, &st), 0);
    CHECK_INT_EQ(value, 1);
    int rc = model_attr_bool("t.model", s, "h", 0, &value, &st);
    expect_reader_error(&st, rc, 1, 46, "h=maybe is not a boolean",
                        "h takes true or false (also yes/no or 1/0)");
    CHECK_INT_EQ(value, 0);
    rc = model_attr_bool("t.model", s, "i", 0, &value, &st);
    expect_reader_error(&st, rc, 1, 54, "i=2 is not a boolean", "true or false");
    model_file_free(&file);
}

static void choice_reader(void) {
    static const char *const acts[] = {"none", "relu", "sigmoid", "tanh", NULL};
    ModelFile file;
    Status st;
    status_clear(&st);
    const ModelStatement *s = parse_one("dense act=tanh a2=rleu a3=swish a4=ReLU\n", &file);
    if (!s) return;
    int index = -1;
    CHECK_INT_EQ(model_attr_choice("t.model", s, "act", acts, 0, &index, &st), 0);
    CHECK_INT_EQ(index, 3);
    CHECK_INT_EQ(model_attr_choice("t.model", s, "absent", acts, 1, &index, &st), 0);
    CHECK_INT_EQ(index, 1);
    int rc = model_attr_choice("t.model", s, "a2", acts, 0, &index, &st);
    expect_reader_error(&st, rc, 1, 19, "a2=rleu is not a valid choice; did you mean 'relu'?",
                        "a2 takes one of: none, relu, sigmoid, tanh");
    CHECK_INT_EQ(index, 0);
    rc = model_attr_choice("t.model", s, "a3", acts, 0, &index, &st);
    expect_reader_error(&st, rc, 1, 27, "a3=swish is not a valid choice",
                        "none, relu, sigmoid, tanh");
    CHECK(strstr(st.message, "did you mean") == NULL);
    // Choices are exact; a case slip is still a suggestion away.
    rc = model_attr_choice("t.model", s, "a4", acts, 0, &index, &st);
    expect_reader_error(&st, rc, 1, 36, "a4=ReLU is not a valid choice; did you mean 'relu'?",
                        "relu");
    model_file_free(&file);
}

static void check_suggestion(const char *word, const char *const *candidates,
                             const char *expected) {
    const char *got = suggest(word, candidates);
    if (expected == NULL ? got == NULL : (got && strcmp(got, expected) == 0)) return;
    fprintf(stderr, "  suggest(\"%s\") gave %s, expected %s\n", word, got ? got : "NULL",
            expected ? expected : "NULL");
    CHECK(!"suggestion");
}

static void suggestions_catch_typos_not_unrelated_words(void) {
    static const char *const keys[] = {"filters", "kernel", "stride", "pad", "units", NULL};
    static const char *const kinds[] = {"input", "dense", "conv2d", "maxpool", "dropout", NULL};
    static const char *const keys_with_relu[] = {"none", "relu", "tanh", NULL};
    check_suggestion("filter", keys, "filters");
    check_suggestion("unit", keys, "units");
    check_suggestion("dnse", kinds, "dense");
    check_suggestion("Kernal", keys, "kernel");
    check_suggestion("FILTERS", keys, "filters");
    check_suggestion("conv", kinds, NULL); // two edits from conv2d: too far for 4 letters
    CHECK(suggest("xyz", keys) == NULL);
    CHECK(suggest("colour", keys) == NULL);
    CHECK(suggest("banana", kinds) == NULL);
    CHECK(suggest("", keys) == NULL);
    CHECK(suggest("units", NULL) == NULL);
    CHECK(suggest(NULL, keys) == NULL);
    static const char *const none[] = {NULL};
    CHECK(suggest("units", none) == NULL);
    // One edit is always allowed, even for a short word; two are not.
    CHECK(suggest("pd", keys) != NULL);
    CHECK(suggest("p", keys) == NULL);
    // The closest wins over an earlier, farther one.
    static const char *const close[] = {"strides", "stride", NULL};
    check_suggestion("stride", close, "stride");
    // A swap of neighbours is one edit, so short words still find their match.
    check_suggestion("rleu", keys_with_relu, "relu");
    check_suggestion("dnese", kinds, "dense");
    check_suggestion("fitlers", keys, "filters");
}

int main(void) {
    missing_files_suggest_a_neighbour();
    lenet_parses_into_kinds_choices_and_attrs();
    empty_and_comment_only_files_have_no_statements();
    comments_end_a_statement_anywhere();
    crlf_and_missing_final_newline();
    tabs_separate_and_count_one_column();
    values_take_lists_shapes_exponents_and_paths();
    longest_word_and_value_and_most_pairs_are_accepted();
    bare_word_after_pairs_or_choice_is_an_error();
    key_without_value_and_equals_without_key();
    statement_must_start_with_a_kind();
    duplicate_keys_name_the_first_column();
    too_many_pairs_on_one_line();
    over_long_words_and_values();
    invalid_bytes_are_shown_escaped();
    errors_report_the_right_line();
    too_many_statements_are_refused();
    over_large_text_is_refused();
    reads_a_file_from_disk();
    unreadable_files_name_the_reason();
    nul_bytes_and_huge_files_are_refused_when_read();
    finds_attributes_by_exact_key();
    unknown_keys_get_a_suggestion_or_the_key_list();
    integer_reader();
    float_reader();
    bool_reader();
    choice_reader();
    suggestions_catch_typos_not_unrelated_words();
    return test_exit_code("test_model_file");
}
