// The model-file tokenizer: text -> statements, with the line and column of every word.
//
// The scanner walks the text byte by byte rather than splitting lines with strtok or
// sscanf, because every error must point at an exact column, and because the text is
// untrusted: no byte of it is ever echoed raw into a message (a stray ESC would
// reprogram the user's terminal), and no input may crash it (it is fuzzed).
#define _POSIX_C_SOURCE 200809L

#include "models/model_file.h"
#include "base/escape.h"
#include "base/suggest.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// ---------------------------------------------------------------------------------
// characters

// Spelled out instead of <ctype.h>: isalpha depends on the locale and is undefined for
// the negative chars that UTF-8 bytes become.
static int is_word_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

// Values also hold lists (from=a,b), exponents (lr=1e+3) and paths (data=dir/x:y);
// shapes (1x28x28) need nothing extra since 'x' is a letter.
static int is_value_char(int c) {
    return is_word_char(c) || c == ',' || c == ':' || c == '/' || c == '+';
}

// A dataset spec (`data spec=csv:~/t.csv,label=kind`) is a --data value: a path, with
// `~`, and csv's label= option. Its value alone takes those two bytes besides a value's.
static int is_spec_char(int c) { return is_value_char(c) || c == '=' || c == '~'; }

static int is_blank(int c) { return c == ' ' || c == '\t'; }

// A CR ends a line only right before LF or at the end of the text (CRLF files from
// Windows editors); a lone CR anywhere else is reported, not silently taken as a break.
static int is_line_end(const char *p) {
    return p[0] == '\0' || p[0] == '\n' || (p[0] == '\r' && (p[1] == '\n' || p[1] == '\0'));
}

static int ends_token(const char *p) {
    return is_blank((unsigned char)*p) || *p == '#' || is_line_end(p);
}

static int lower_ascii(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

static int equals_ignoring_case(const char *a, const char *b) {
    for (; *a && lower_ascii((unsigned char)*a) == lower_ascii((unsigned char)*b); a++) b++;
    return lower_ascii((unsigned char)*a) == lower_ascii((unsigned char)*b);
}

// A byte as it may appear inside a quoted message: itself when printable, otherwise an
// escape, so that messages are always plain printable ASCII.
static void describe_byte(unsigned char c, char out[8]) {
    switch (c) {
    case '\t': snprintf(out, 8, "\\t"); return;
    case '\r': snprintf(out, 8, "\\r"); return;
    case '\n': snprintf(out, 8, "\\n"); return;
    case '\\': snprintf(out, 8, "\\\\"); return;
    case '\'': snprintf(out, 8, "\\'"); return;
    default: break;
    }
    if (c >= 0x20 && c < 0x7f)
        snprintf(out, 8, "%c", c);
    else
        snprintf(out, 8, "\\x%02x", c);
}

// Copies a run of already validated characters whose length is known to fit.
static void copy_run(char *dst, const char *src, size_t length) {
    memcpy(dst, src, length);
    dst[length] = '\0';
}

// ---------------------------------------------------------------------------------
// the scanner

typedef struct Scanner {
    const char *path;
    const char *text;
    size_t pos;        // offset of the next byte to look at
    size_t line_start; // offset of the current line's first byte
    int line;          // 1-based
    Status *st;
} Scanner;

// The text is at most MODEL_FILE_BYTES_MAX bytes, so a column always fits an int.
static int column_at(const Scanner *sc, size_t pos) { return (int)(pos - sc->line_start) + 1; }

static int scan_fail(Scanner *sc, size_t pos, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int scan_fail(Scanner *sc, size_t pos, const char *hint, const char *fmt, ...) {
    char message[sizeof sc->st->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    status_fail_at(sc->st, STATUS_BAD_INPUT, sc->path, sc->line, column_at(sc, pos), "%s", message);
    status_hint(sc->st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// What to tell the user about a byte that cannot appear where it is; the common cases
// (pasted smart quotes, YAML habits, quoting values) get a specific hint.
static const char *hint_for_unexpected(int c, int in_value) {
    if (c >= 0x80)
        return "only ASCII is allowed outside comments; look for curly quotes, a non-breaking "
               "space or other pasted characters";
    if (c == '"' || c == '\'' || c == '`')
        return "values are written without quotes, e.g. name=conv1";
    if (c == '\r')
        return "lines must end in LF or CRLF; a lone carriage return is not a line break";
    if (c < 0x20 || c == 0x7f) return "the file contains a control character; is it a text file?";
    if (c == '=' && in_value)
        return "a value cannot contain '='; separate key=value pairs with spaces";
    if (c == ':' && !in_value) return "write key=value with '=', e.g. units=10";
    if (in_value) return "values may contain only letters, digits and '_' '-' '.' ',' ':' '/' '+'";
    return "kinds, choices and keys may contain only letters, digits and '_' '-' '.'";
}

// `so_far` is the validated text of the token before the bad byte ("" at its start).
static int fail_unexpected(Scanner *sc, size_t pos, const char *so_far, int in_value) {
    unsigned char c = (unsigned char)sc->text[pos];
    char shown[8];
    describe_byte(c, shown);
    const char *hint = hint_for_unexpected(c, in_value);
    if (so_far[0])
        return scan_fail(sc, pos, hint, "unexpected character '%s' (byte 0x%02x) after '%s'", shown,
                         c, so_far);
    return scan_fail(sc, pos, hint, "unexpected character '%s' (byte 0x%02x)", shown, c);
}

// Quotes the start of an over-long run, which is all valid characters by construction.
static int fail_too_long(Scanner *sc, size_t start, size_t length, const char *what, int most,
                         const char *hint) {
    char head[24];
    copy_run(head, sc->text + start, 20);
    return scan_fail(sc, start, hint, "%s too long (%zu characters, at most %d): '%s...'", what,
                     length, most, head);
}

static size_t run_length(const char *text, size_t pos, int (*accept)(int)) {
    size_t n = 0;
    while (accept((unsigned char)text[pos + n])) n++;
    return n;
}

static void statement_reset(ModelStatement *s, int line) {
    s->line = line;
    s->kind[0] = '\0';
    s->kind_column = 0;
    s->choice[0] = '\0';
    s->choice_column = 0;
    s->attr_count = 0;
}

// The first bare word is the kind, the second (before any key=value) the choice.
static int add_bare_word(Scanner *sc, ModelStatement *s, const char *word, size_t start) {
    if (!s->kind[0]) {
        snprintf(s->kind, sizeof s->kind, "%s", word);
        s->kind_column = column_at(sc, start);
        return 0;
    }
    if (!s->choice[0] && s->attr_count == 0) {
        snprintf(s->choice, sizeof s->choice, "%s", word);
        s->choice_column = column_at(sc, start);
        return 0;
    }
    char hint[sizeof sc->st->hint];
    if (s->choice[0])
        snprintf(hint, sizeof hint,
                 "write it as %s=VALUE; a statement takes one bare word and '%s' already has '%s'",
                 word, s->kind, s->choice);
    else
        snprintf(
            hint, sizeof hint,
            "write it as %s=VALUE, or move it right after '%s' if it is the statement's choice",
            word, s->kind);
    return scan_fail(sc, start, hint, "expected key=value after '%s', found '%s'", s->kind, word);
}

// key=value, with sc->pos just past the key and on the '='.
static int parse_attr(Scanner *sc, ModelStatement *s, size_t key_start) {
    const char *text = sc->text;
    size_t key_length = sc->pos - key_start;
    char key[MODEL_WORD_MAX];
    copy_run(key, text + key_start, key_length);

    size_t value_start = sc->pos + 1;
    int spec = strcmp(key, "spec") == 0;
    size_t value_length = run_length(text, value_start, spec ? is_spec_char : is_value_char);
    if (value_length >= MODEL_VALUE_MAX)
        return fail_too_long(sc, value_start, value_length, "value", MODEL_VALUE_MAX - 1,
                             "values are short: numbers, shapes, names, lists of names");
    char value[MODEL_VALUE_MAX];
    copy_run(value, text + value_start, value_length);
    sc->pos = value_start + value_length;
    if (!ends_token(text + sc->pos)) {
        char so_far[MODEL_WORD_MAX + MODEL_VALUE_MAX + 1];
        snprintf(so_far, sizeof so_far, "%s=%s", key, value);
        return fail_unexpected(sc, sc->pos, so_far, 1);
    }

    char hint[sizeof sc->st->hint];
    if (value_length == 0) {
        snprintf(hint, sizeof hint, "write %s=VALUE, with no space after '='", key);
        return scan_fail(sc, key_start, hint, "key '%s' has no value", key);
    }
    if (!s->kind[0])
        return scan_fail(sc, key_start, "a statement starts with its kind, e.g. 'dense units=10'",
                         "expected a kind before '%s=%s'", key, value);
    if (s->attr_count == MODEL_ATTR_MAX)
        return scan_fail(sc, key_start, "no statement takes that many; is a line break missing?",
                         "more than %d key=value pairs on one line", MODEL_ATTR_MAX);
    for (int i = 0; i < s->attr_count; i++) {
        if (strcmp(s->attrs[i].key, key) != 0) continue;
        snprintf(hint, sizeof hint, "give %s once; remove one of the two", key);
        return scan_fail(sc, key_start, hint, "duplicate key '%s' (first at column %d)", key,
                         s->attrs[i].key_column);
    }
    ModelAttr *a = &s->attrs[s->attr_count++];
    memcpy(a->key, key, key_length + 1);
    memcpy(a->value, value, value_length + 1);
    a->key_column = column_at(sc, key_start);
    a->value_column = column_at(sc, value_start);
    return 0;
}

// One whitespace-separated token: a bare word or key=value.
static int parse_token(Scanner *sc, ModelStatement *s) {
    const char *text = sc->text;
    size_t start = sc->pos;
    int c = (unsigned char)text[start];
    if (c == '=')
        return scan_fail(sc, start, "write KEY=VALUE with no spaces around '='",
                         "'=' without a key");
    if (!is_word_char(c)) return fail_unexpected(sc, start, "", 0);

    size_t length = run_length(text, start, is_word_char);
    if (length >= MODEL_WORD_MAX)
        return fail_too_long(sc, start, length, "word", MODEL_WORD_MAX - 1,
                             "kinds, choices and keys are short names like 'conv2d' or 'filters'; "
                             "is a space or '=' missing?");
    sc->pos = start + length;
    if (text[sc->pos] == '=') return parse_attr(sc, s, start);

    char word[MODEL_WORD_MAX];
    copy_run(word, text + start, length);
    if (!ends_token(text + sc->pos)) return fail_unexpected(sc, sc->pos, word, 0);
    return add_bare_word(sc, s, word, start);
}

// Fills *s from the current line; s->kind stays "" for a blank or comment-only line.
// Leaves sc->pos on the line's end or its comment.
static int parse_line(Scanner *sc, ModelStatement *s) {
    statement_reset(s, sc->line);
    for (;;) {
        while (is_blank((unsigned char)sc->text[sc->pos])) sc->pos++;
        if (sc->text[sc->pos] == '#' || is_line_end(sc->text + sc->pos)) return 0;
        TRY(parse_token(sc, s));
    }
}

static void skip_to_next_line(Scanner *sc) {
    while (sc->text[sc->pos] != '\0' && sc->text[sc->pos] != '\n') sc->pos++;
    if (sc->text[sc->pos] == '\n') {
        sc->pos++;
        sc->line++;
        sc->line_start = sc->pos;
    }
}

// An upper bound on the statements in `text`: lines whose first non-blank byte starts a
// token, counting at most one past the cap so that the line beyond it can be parsed in
// place and reported with its own line number. Sizing the array once from this avoids
// regrowing ~10 KB statements as the file is read.
static int count_statement_lines(const char *text) {
    int count = 0;
    for (const char *p = text; *p;) {
        while (is_blank((unsigned char)*p)) p++;
        if (*p != '#' && !is_line_end(p) && count <= MODEL_STATEMENT_MAX) count++;
        while (*p && *p != '\n') p++;
        if (*p == '\n') p++;
    }
    return count;
}

static int parse_all_lines(Scanner *sc, ModelFile *out) {
    int lines = count_statement_lines(sc->text);
    if (lines == 0) return 0;
    // One spare slot: a blank line after the last statement is parsed into the next slot
    // before it is known to be blank. calloc so that every byte is defined, not only the
    // attrs in use.
    int capacity = lines + 1;
    out->statements = calloc((size_t)capacity, sizeof *out->statements);
    if (!out->statements)
        return status_out_of_host_memory(sc->st, (size_t)capacity * sizeof *out->statements,
                                         "reading model file %s (%d statements)", out->path,
                                         capacity);
    while (sc->text[sc->pos] != '\0') {
        ModelStatement *s = &out->statements[out->count];
        TRY(parse_line(sc, s));
        if (s->kind[0]) {
            if (out->count == MODEL_STATEMENT_MAX)
                return scan_fail(sc, sc->line_start + (size_t)s->kind_column - 1,
                                 "split the model or check that this is a model file",
                                 "more than %d statements in one file", MODEL_STATEMENT_MAX);
            out->count++;
        }
        skip_to_next_line(sc);
    }
    return 0;
}

static int fail_too_large(const char *path, const char *size_text, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                   "model file is too large (%s, at most %d bytes)", size_text,
                   MODEL_FILE_BYTES_MAX);
    status_hint(st, "a model file is a few dozen lines of text; check that this is the right file");
    return STATUS_BAD_INPUT;
}

int model_file_parse_text(const char *path, const char *text, ModelFile *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (!path) path = "";
    snprintf(out->path, sizeof out->path, "%s", path);
    if (!text) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "no model text given");
        status_hint(st, "pass the file's contents, or an empty string for an empty model");
        return STATUS_BAD_INPUT;
    }
    // A UTF-8 byte order mark, which some Windows editors write first, is no statement: it
    // was refused as "unexpected character '\xef'" with a hint about curly quotes.
    if (strncmp(text, "\xef\xbb\xbf", 3) == 0) text += 3;
    size_t length = strlen(text);
    if (length > MODEL_FILE_BYTES_MAX) {
        char size_text[64];
        snprintf(size_text, sizeof size_text, "%zu bytes", length);
        return fail_too_large(path, size_text, st);
    }
    Scanner sc = {.path = path, .text = text, .pos = 0, .line_start = 0, .line = 1, .st = st};
    int rc = parse_all_lines(&sc, out);
    // Kept as parsed: the file on disk may change while a run trains from this text.
    if (!rc && !(out->text = malloc(length + 1))) {
        rc = status_out_of_host_memory(st, length + 1, "keeping the text of model file %s", path);
    }
    if (!rc) memcpy(out->text, text, length + 1);
    if (rc) model_file_free(out);
    return rc;
}

// ---------------------------------------------------------------------------------
// reading a file

static int fail_unreadable(const char *path, const char *action, int error, Status *st) {
    char near[1024];
    if (error == ENOENT && suggest_file(path, near, sizeof near)) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot %s model file: %s; did you "
                       "mean '%s'?", action, strerror(error), near);
        status_hint(st, "run it again naming '%s'; relative paths start from the current "
                    "directory", near);
        return STATUS_BAD_INPUT;
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot %s model file: %s", action,
                   strerror(error));
    status_hint(st, "check the path and that the file is readable; relative paths start from "
                    "the current directory; a bundled model goes by its name: `trainer train "
                    "mlp` (`trainer --version` says where they are)");
    return STATUS_BAD_INPUT;
}

// parse_text sees a C string, so a NUL byte would silently end the file early; report it
// where it is instead.
static int fail_nul_byte(const char *path, const char *buffer, size_t nul_at, Status *st) {
    int line, column;
    text_line_column(buffer, nul_at, &line, &column);
    status_fail_at(st, STATUS_BAD_INPUT, path, line, column,
                   "unexpected character '\\x00' (byte 0x00)");
    status_hint(st, "a model file is plain text; is this a binary file?");
    return STATUS_BAD_INPUT;
}

// A NUL among the first bytes: a binary file, most often the weights given where the model
// goes (`eval W.safetensors --weights M.model`). Checked before the size limit, since
// weights are often larger than a model file may be.
enum { BINARY_START = 16 };

static int fail_binary_start(const char *path, const char *buffer, size_t length, size_t nul_at,
                             Status *st) {
    uint64_t header = 0;
    for (int i = 7; i >= 0 && length >= 9; i--) header = header << 8 | (unsigned char)buffer[i];
    if (length >= 9 && buffer[8] == '{' && header <= (uint64_t)length - 8)
        status_fail_at(st, STATUS_BAD_INPUT, path, 1, 1, "this is a safetensors file (an 8-byte "
                       "header length, then '{'), not a model file");
    else if (memchr(buffer, '\n', nul_at))
        return fail_nul_byte(path, buffer, nul_at, st);  // a text line came first
    else
        status_fail_at(st, STATUS_BAD_INPUT, path, 1, (int)nul_at + 1, "unexpected character "
                       "'\\x00' (byte 0x00) among the first bytes: this looks like a binary "
                       "file, not a model file");
    status_hint(st, "a model file is plain text; the model file (.model) comes first and the "
                    "weights after --weights: trainer eval MODEL --weights FILE");
    return STATUS_BAD_INPUT;
}

// The size a file past the limit has, for its message: a regular file's from fstat; a
// pipe's is not known, as it is read only up to the limit.
static void describe_size(FILE *f, char *out, size_t size) {
    struct stat info;
    if (fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode))
        snprintf(out, size, "%lld bytes", (long long)info.st_size);
    else
        snprintf(out, size, "more than %d bytes read", MODEL_FILE_BYTES_MAX);
}

int model_file_read(const char *path, ModelFile *out, Status *st) {
    memset(out, 0, sizeof *out);
    if (!path) path = "";
    snprintf(out->path, sizeof out->path, "%s", path);
    FILE *f = fopen(path, "rb");
    if (!f) return fail_unreadable(path, "open", errno, st);

    // One byte past the limit tells "exactly 1 MiB" from "more"; fread rather than
    // fseek/ftell so that pipes and /dev/stdin work too.
    char *buffer = malloc((size_t)MODEL_FILE_BYTES_MAX + 2);
    if (!buffer) {
        fclose(f);
        return status_out_of_host_memory(st, (size_t)MODEL_FILE_BYTES_MAX + 2,
                                         "reading model file %s", path);
    }
    errno = 0;
    size_t length = fread(buffer, 1, (size_t)MODEL_FILE_BYTES_MAX + 1, f);
    char size_text[64];
    describe_size(f, size_text, sizeof size_text);
    int read_error = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    int rc;
    const char *early_nul = memchr(buffer, '\0', length < BINARY_START ? length : BINARY_START);
    if (read_error)
        rc = fail_unreadable(path, "read", read_error, st);
    else if (early_nul)
        rc = fail_binary_start(path, buffer, length, (size_t)(early_nul - buffer), st);
    else if (length > MODEL_FILE_BYTES_MAX)
        rc = fail_too_large(path, size_text, st);
    else {
        buffer[length] = '\0';
        const char *nul = memchr(buffer, '\0', length);
        if (nul)
            rc = fail_nul_byte(path, buffer, (size_t)(nul - buffer), st);
        else
            rc = model_file_parse_text(path, buffer, out, st);
    }
    free(buffer);
    return rc;
}

void model_file_free(ModelFile *file) {
    if (!file) return;
    free(file->statements);
    file->statements = NULL;
    file->count = 0;
    free(file->text);
    file->text = NULL;
}

// ---------------------------------------------------------------------------------
// attribute helpers

const ModelAttr *model_attr_find(const ModelStatement *s, const char *key) {
    if (!s || !key) return NULL;
    for (int i = 0; i < s->attr_count; i++)
        if (strcmp(s->attrs[i].key, key) == 0) return &s->attrs[i];
    return NULL;
}

static int attr_fail(const char *path, const ModelStatement *s, const ModelAttr *a, Status *st,
                     const char *hint, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int attr_fail(const char *path, const ModelStatement *s, const ModelAttr *a, Status *st,
                     const char *hint, const char *fmt, ...) {
    char message[sizeof st->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->value_column, "%s", message);
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

// "a, b, c" into buf, ending in ", ..." rather than in the middle of a word when the
// list does not fit.
static void join_words(char *buf, size_t size, const char *const *words) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; words && words[i]; i++) {
        const char *separator = i ? ", " : "";
        size_t need = strlen(separator) + strlen(words[i]);
        if (used + need + sizeof ", ..." > size) {
            snprintf(buf + used, size - used, "%s...", separator);
            return;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s", separator, words[i]);
    }
}

// "conv2d", or "optimizer adam" when the kind has a choice: keys depend on both.
static void describe_statement(char *buf, size_t size, const ModelStatement *s) {
    if (s->choice[0])
        snprintf(buf, size, "%s %s", s->kind, s->choice);
    else
        snprintf(buf, size, "%s", s->kind);
}

static int is_listed(const char *word, const char *const *list) {
    for (int i = 0; list && list[i]; i++)
        if (strcmp(list[i], word) == 0) return 1;
    return 0;
}

int model_check_keys(const char *path, const ModelStatement *s, const char *const *allowed,
                     Status *st) {
    for (int i = 0; i < s->attr_count; i++) {
        const ModelAttr *a = &s->attrs[i];
        if (is_listed(a->key, allowed)) continue;
        char statement[2 * MODEL_WORD_MAX], keys[360], hint[sizeof st->hint];
        describe_statement(statement, sizeof statement, s);
        join_words(keys, sizeof keys, allowed);
        if (keys[0])
            snprintf(hint, sizeof hint, "%s accepts: %s", statement, keys);
        else
            snprintf(hint, sizeof hint, "%s takes no key=value pairs", statement);
        const char *suggestion = suggest(a->key, allowed);
        if (suggestion)
            status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->key_column,
                           "unknown key '%s' for %s; did you mean '%s'?", a->key, statement,
                           suggestion);
        else
            status_fail_at(st, STATUS_BAD_INPUT, path, s->line, a->key_column,
                           "unknown key '%s' for %s", a->key, statement);
        status_hint(st, "%s", hint);
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// How an accepted range reads in a message. `interval` is "[1, 10]" when both ends are
// bounded and "" otherwise; `phrase` always reads after "takes a number": "in [1, 10]",
// "at least 1", "less than 1".
typedef struct RangeText {
    char interval[96];
    char phrase[112];
} RangeText;

static void describe_range(RangeText *r, const char *low, const char *high, int has_low,
                           int has_high, int exclude) {
    const char *open = (exclude & MODEL_EXCLUDE_MIN) ? "(" : "[";
    const char *close = (exclude & MODEL_EXCLUDE_MAX) ? ")" : "]";
    r->interval[0] = r->phrase[0] = '\0';
    if (has_low && has_high) {
        snprintf(r->interval, sizeof r->interval, "%s%s, %s%s", open, low, high, close);
        snprintf(r->phrase, sizeof r->phrase, "in %s", r->interval);
    } else if (has_low) {
        snprintf(r->phrase, sizeof r->phrase, "%s %s",
                 (exclude & MODEL_EXCLUDE_MIN) ? "greater than" : "at least", low);
    } else if (has_high) {
        snprintf(r->phrase, sizeof r->phrase, "%s %s",
                 (exclude & MODEL_EXCLUDE_MAX) ? "less than" : "at most", high);
    }
}

// What was wrong with a number; the message and hint are built only on failure, so that
// reading a good value costs a strtol and nothing more.
typedef enum NumberProblem {
    NUMBER_UNREADABLE,
    NUMBER_NOT_FINITE,
    NUMBER_OUT_OF_RANGE
} NumberProblem;

// `noun` names what an unreadable value failed to be ("an integer"); `what` is what the
// hint says the key takes ("a whole number").
static int fail_number(const char *path, const ModelStatement *s, const ModelAttr *a,
                       NumberProblem problem, const RangeText *range, const char *noun,
                       const char *what, Status *st) {
    char hint[sizeof st->hint];
    const char *example = problem == NUMBER_UNREADABLE && strcmp(noun, "a number") == 0
                              ? ", written like 0.5 or 1e-3"
                              : "";
    snprintf(hint, sizeof hint, "%s takes %s%s%s%s", a->key, what, range->phrase[0] ? " " : "",
             range->phrase, example);
    if (problem == NUMBER_NOT_FINITE)
        return attr_fail(path, s, a, st, hint, "%s=%s is not a finite number", a->key, a->value);
    if (problem == NUMBER_UNREADABLE)
        return attr_fail(path, s, a, st, hint, "%s=%s is not %s", a->key, a->value, noun);
    if (range->interval[0])
        return attr_fail(path, s, a, st, hint, "%s=%s is out of range %s", a->key, a->value,
                         range->interval);
    if (range->phrase[0])
        return attr_fail(path, s, a, st, hint, "%s=%s is out of range: it must be %s", a->key,
                         a->value, range->phrase);
    return attr_fail(path, s, a, st, hint, "%s=%s is out of range: it is too large to represent",
                     a->key, a->value);
}

static int fail_int(const char *path, const ModelStatement *s, const ModelAttr *a,
                    NumberProblem problem, long min, long max, Status *st) {
    // With no bound on either side, still name the limits that overflow runs into.
    int has_low = min != LONG_MIN, has_high = max != LONG_MAX;
    if (!has_low && !has_high) has_low = has_high = 1;
    char low[32], high[32];
    snprintf(low, sizeof low, "%ld", min);
    snprintf(high, sizeof high, "%ld", max);
    RangeText range;
    describe_range(&range, low, high, has_low, has_high, 0);
    return fail_number(path, s, a, problem, &range, "an integer", "a whole number", st);
}

int model_attr_int(const char *path, const ModelStatement *s, const char *key, long fallback,
                   long min, long max, long *out, Status *st) {
    *out = fallback;
    const ModelAttr *a = model_attr_find(s, key);
    if (!a) return 0;
    char *end = NULL;
    errno = 0;
    long value = strtol(a->value, &end, 10);
    if (end == a->value || *end != '\0')
        return fail_int(path, s, a, NUMBER_UNREADABLE, min, max, st);
    if (errno == ERANGE || value < min || value > max)
        return fail_int(path, s, a, NUMBER_OUT_OF_RANGE, min, max, st);
    *out = value;
    return 0;
}

// The shortest "%.Ng" that reads back as the same double, so that a bound of 0.1 prints
// as "0.1" and not "0.10000000000000001", and 0.9999999 is not rounded to "1".
static void format_double(char *buf, size_t size, double x) {
    // Whole numbers print as such ("100", not "1e+02"); others in their shortest exact form.
    if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(buf, size, "%.0f", x);
        return;
    }
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, x);
        if (strtod(buf, NULL) == x) return;
    }
}

static int is_bounded(double bound) { return isfinite(bound) && fabs(bound) < DBL_MAX; }

static int fail_float(const char *path, const ModelStatement *s, const ModelAttr *a,
                      NumberProblem problem, double min, double max, int exclude, Status *st) {
    char low[40], high[40];
    format_double(low, sizeof low, min);
    format_double(high, sizeof high, max);
    RangeText range;
    describe_range(&range, low, high, is_bounded(min), is_bounded(max), exclude);
    return fail_number(path, s, a, problem, &range, "a number",
                       range.phrase[0] ? "a number" : "a finite number", st);
}

// strtod alone would also take "nan", "inf", hex floats and leading spaces; a model file
// number is plain decimal.
static int looks_decimal(const char *text) {
    for (const char *p = text; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.' || *p == 'e' ||
              *p == 'E'))
            return 0;
    return 1;
}

static int names_non_finite(const char *text) {
    if (*text == '+' || *text == '-') text++;
    return equals_ignoring_case(text, "nan") || equals_ignoring_case(text, "inf") ||
           equals_ignoring_case(text, "infinity");
}

int model_attr_float_interval(const char *path, const ModelStatement *s, const char *key,
                              double fallback, double min, double max, int exclude, double *out,
                              Status *st) {
    *out = fallback;
    const ModelAttr *a = model_attr_find(s, key);
    if (!a) return 0;
    if (names_non_finite(a->value))
        return fail_float(path, s, a, NUMBER_NOT_FINITE, min, max, exclude, st);
    if (!looks_decimal(a->value))
        return fail_float(path, s, a, NUMBER_UNREADABLE, min, max, exclude, st);
    char *end = NULL;
    errno = 0;
    double value = strtod(a->value, &end);
    if (end == a->value || *end != '\0')
        return fail_float(path, s, a, NUMBER_UNREADABLE, min, max, exclude, st);
    // Underflow (1e-400) is left to the range check as the 0 or tiny value it became;
    // overflow is out of any range.
    int overflow = errno == ERANGE && !isfinite(value);
    int below = is_bounded(min) && ((exclude & MODEL_EXCLUDE_MIN) ? value <= min : value < min);
    int above = is_bounded(max) && ((exclude & MODEL_EXCLUDE_MAX) ? value >= max : value > max);
    if (overflow || below || above)
        return fail_float(path, s, a, NUMBER_OUT_OF_RANGE, min, max, exclude, st);
    *out = value;
    return 0;
}

int model_attr_float(const char *path, const ModelStatement *s, const char *key, double fallback,
                     double min, double max, double *out, Status *st) {
    return model_attr_float_interval(path, s, key, fallback, min, max, 0, out, st);
}

// Case-insensitive because people coming from Python write `True`.
int model_attr_bool(const char *path, const ModelStatement *s, const char *key, int fallback,
                    int *out, Status *st) {
    *out = fallback;
    const ModelAttr *a = model_attr_find(s, key);
    if (!a) return 0;
    static const char *const truths[] = {"true", "yes", "1"};
    static const char *const falsehoods[] = {"false", "no", "0"};
    for (int i = 0; i < 3; i++) {
        if (equals_ignoring_case(a->value, truths[i])) {
            *out = 1;
            return 0;
        }
        if (equals_ignoring_case(a->value, falsehoods[i])) {
            *out = 0;
            return 0;
        }
    }
    char hint[sizeof st->hint];
    snprintf(hint, sizeof hint, "%s takes true or false (also yes/no or 1/0)", a->key);
    return attr_fail(path, s, a, st, hint, "%s=%s is not a boolean", a->key, a->value);
}

int model_attr_choice(const char *path, const ModelStatement *s, const char *key,
                      const char *const *choices, int fallback_index, int *out, Status *st) {
    *out = fallback_index;
    const ModelAttr *a = model_attr_find(s, key);
    if (!a) return 0;
    for (int i = 0; choices && choices[i]; i++) {
        if (strcmp(choices[i], a->value) == 0) {
            *out = i;
            return 0;
        }
    }

    char listed[400], hint[sizeof st->hint];
    join_words(listed, sizeof listed, choices);
    snprintf(hint, sizeof hint, "%s takes one of: %s", a->key, listed);
    const char *suggestion = suggest(a->value, choices);
    if (suggestion)
        return attr_fail(path, s, a, st, hint, "%s=%s is not a valid choice; did you mean '%s'?",
                         a->key, a->value, suggestion);
    return attr_fail(path, s, a, st, hint, "%s=%s is not a valid choice", a->key, a->value);
}
