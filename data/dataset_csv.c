// csv:FILE[,label=COLUMN], a table of numeric features: a header row of column names, then
// one sample per line, fields separated by commas (no quoting: every field is a number).
// The label column (named `label=`, else the one called "label", else the first) holds
// integer classes 0 to 255; every other column is a feature, used as it is (f32, no /255).
// A CSV file is all training data; --val-split holds part of it out.
#define _POSIX_C_SOURCE 200809L

#include "base/escape.h"
#include "data/dataset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_BYTES ((long long)1 << 30)
#define CSV_MAX_COLUMNS 65536
#define CSV_NUMBER_BYTES 64  // a number cell's longest text, and its NUL
#define CSV_HINT "a csv:FILE starts with a header row of column names; then one sample a " \
                 "line, numbers separated by commas"
#define CSV_OPTION_HINT "csv:FILE takes one option, label=COLUMN (the label column's name)"

// The text being parsed, and where in it: line and column are 1-based, for messages.
typedef struct CsvCursor {
    const char *path;
    char *text;
    size_t length;
    size_t line_start;  // offset of the current line
    int line;
} CsvCursor;

// A cell's bytes for a message, escaped as every name read from a file is, and cut to about
// 40 characters: a message quotes the cell, it does not reproduce a long one.
static void escape_cell(const char *cell, size_t length, char *out, size_t size) {
    text_escape(cell, length, out, size < 48 ? size : 48);
}

static int read_whole_file(const char *path, char **text, size_t *length, Status *st) {
    FILE *file = NULL;
    long long bytes = 0;
    TRY(dataset_open_regular(path, "a CSV file", &file, &bytes, st));
    int rc = 0;
    if (bytes > CSV_MAX_BYTES) {
        rc = status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the file is %lld bytes; at most "
                            "%lld are read", bytes, CSV_MAX_BYTES);
        status_hint(st, "use a binary format for data this large");
    } else if (!(*text = malloc((size_t)bytes + 1))) {
        rc = status_out_of_host_memory(st, (size_t)bytes + 1, "reading %s", path);
    } else {
        *length = fread(*text, 1, (size_t)bytes, file);
        (*text)[*length] = '\0';
        if (ferror(file)) {
            rc = status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "read error");
            status_hint(st, "check the disk, or copy the file again");
        }
    }
    fclose(file);
    return rc;
}

// The file's name for a shell command in a hint: as it is when the shell reads it so, else
// FILE for the user to fill in (quoting a name with quotes in it is not worth a hint's room).
static const char *name_for_shell(const char *path) {
    return path[strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "_./+-")] ? "FILE" : path;
}

// Old Mac OS ends a line with a carriage return alone. Such a file read as one long header
// line, and the reader said "no rows after the header", which sent the user looking at the
// rows. LF and CRLF end lines (a '\r' ending the text is the last line's CRLF, cut short);
// any other '\r' is named where it is, in the words the model-file parser uses for it.
static int refuse_lone_carriage_return(const CsvCursor *c, Status *st) {
    const char *end = c->text + c->length;
    const char *cr = c->text;
    while ((cr = memchr(cr, '\r', (size_t)(end - cr))) && (cr + 1 == end || cr[1] == '\n'))
        cr++;
    if (!cr) return 0;
    int line, column;
    text_line_column(c->text, (size_t)(cr - c->text), &line, &column);
    status_fail_at(st, STATUS_BAD_INPUT, c->path, line, column,
                   "a lone carriage return '\\r' (byte 0x0d) is not a line break: lines end "
                   "in LF or CRLF");
    const char *name = name_for_shell(c->path);
    size_t stem = strlen(name);
    if (stem > 4 && strcmp(name + stem - 4, ".csv") == 0) stem -= 4;
    status_hint(st, "convert the line endings (old Mac files end lines in CR alone): "
                "tr '\\r' '\\n' < %s > %.*s-lf.csv", name, (int)stem, name);
    return STATUS_BAD_INPUT;
}

// A NUL byte ended the text for a reader that took it as a C string: a 60-row file trained
// on the rows before it without a word. A CSV file is text, which holds none; said where
// it is. The lines below are found by length all the same.
static int refuse_nul_byte(const CsvCursor *c, Status *st) {
    const char *nul = memchr(c->text, '\0', c->length);
    if (!nul) return 0;
    int line, column;
    text_line_column(c->text, (size_t)(nul - c->text), &line, &column);
    status_fail_at(st, STATUS_BAD_INPUT, c->path, line, column, "a NUL byte (0x00): a CSV file "
                   "is text, and holds none");
    status_hint(st, "is this a binary file, or a text file in UTF-16? save it as UTF-8 text");
    return STATUS_BAD_INPUT;
}

// The current line's end (its '\n' or the text's end), without a trailing '\r'.
static size_t line_length(const CsvCursor *c) {
    const char *line = c->text + c->line_start;
    const char *newline = memchr(line, '\n', c->length - c->line_start);
    size_t n = newline ? (size_t)(newline - line) : c->length - c->line_start;
    if (n > 0 && line[n - 1] == '\r') n--;
    return n;
}

static int next_line(CsvCursor *c) {
    const char *newline = memchr(c->text + c->line_start, '\n', c->length - c->line_start);
    if (!newline) return 0;
    c->line_start = (size_t)(newline - c->text) + 1;
    c->line++;
    return c->line_start < c->length;
}

static int count_fields(const char *line, size_t length) {
    int fields = 1;
    for (size_t i = 0; i < length; i++) fields += line[i] == ',';
    return fields;
}

// The field that starts at offset *at of a line: its offset and length, spaces trimmed.
// *at moves past the field's comma, so that a row is read field by field in one pass: a
// row found anew for each field costs columns^2 / 2 steps, 300,000 for Fashion-MNIST's
// 785 columns, and a 5,000-row file took 12 s.
static void field_next(const char *line, size_t length, size_t *at, size_t *start,
                       size_t *size) {
    size_t begin = *at < length ? *at : length;
    const char *comma = memchr(line + begin, ',', length - begin);
    size_t end = comma ? (size_t)(comma - line) : length;
    *at = end + 1;
    while (begin < end && (line[begin] == ' ' || line[begin] == '\t')) begin++;
    while (end > begin && (line[end - 1] == ' ' || line[end - 1] == '\t')) end--;
    *start = begin;
    *size = end - begin;
}

// Whether a cell, all of it, is a number strtof reads: *value is what it reads, and
// *overflow whether the number is too large for a float.
static int read_float(const char *cell, size_t size, float *value, int *overflow) {
    char copy[CSV_NUMBER_BYTES];
    if (size == 0 || size >= sizeof copy) return 0;
    memcpy(copy, cell, size);
    copy[size] = '\0';
    char *end = NULL;
    errno = 0;
    *value = strtof(copy, &end);
    // strtof sets ERANGE on underflow as well: 1e-40 reads as a denormal and 1e-50 as 0,
    // values a float holds (and as near as it gets). Only overflow, +-HUGE_VALF, is out of
    // a float's range.
    *overflow = errno == ERANGE && fabsf(*value) == HUGE_VALF;
    return end == copy + size;
}

// Column names are words. A first line of numbers only is a sample, in a file with no
// header row, and reading it as the header lost that sample without a word. A number here
// holds a digit: "nan" and "inf" read as numbers, and are as likely to be names.
static int holds_only_numbers(const char *line, size_t length) {
    for (size_t at = 0; at <= length;) {
        const char *comma = memchr(line + at, ',', length - at);
        size_t end = comma ? (size_t)(comma - line) : length, start = at;
        at = end + 1;
        while (start < end && (line[start] == ' ' || line[start] == '\t')) start++;
        while (end > start && (line[end - 1] == ' ' || line[end - 1] == '\t')) end--;
        float value;
        int overflow, digits = 0;
        for (size_t i = start; i < end; i++) digits += line[i] >= '0' && line[i] <= '9';
        if (!digits || !read_float(line + start, end - start, &value, &overflow)) return 0;
    }
    return 1;
}

// The header a table of `columns` columns could have: NAME,x1,x2 or NAME,x1,x2,...,xN.
static void example_header(const char *name, int columns, char *out, size_t size) {
    int features = columns - 1;
    size_t n = (size_t)snprintf(out, size, "%s", name);
    for (int f = 1; f <= features && n < size; f++) {
        if (features > 3 && f == 3) {
            snprintf(out + n, size - n, ",...,x%d", features);
            return;
        }
        n += (size_t)snprintf(out + n, size - n, ",x%d", f);
    }
}

static int refuse_numbers_header(const CsvCursor *c, size_t length, const char *label,
                                 int columns, Status *st) {
    char shown[200], name[200] = "label", example[300];
    escape_cell(c->text + c->line_start, length, shown, sizeof shown);
    if (label) escape_cell(label, strlen(label), name, sizeof name);
    example_header(name, columns, example, sizeof example);
    status_fail_at(st, STATUS_BAD_INPUT, c->path, 1, 1, "the first line '%s' holds only "
                   "numbers, where a header row of column names is expected%s%s%s", shown,
                   label ? " (and no column is '" : "", label ? name : "", label ? "')" : "");
    // With label= given, naming a numbered column was tried already: not proposed again.
    if (label)
        status_hint(st, "add a header line such as '%s' above the rows", example);
    else
        status_hint(st, "add a header line such as '%s' above the rows (if the line is a "
                    "header of numbered columns, name its label column: csv:FILE,label=0)",
                    example);
    return STATUS_BAD_INPUT;
}

typedef struct CsvHeader {
    int columns;
    int label_column;
} CsvHeader;

// The index of the header's column called `name`, or -1 when there is none.
static int column_named(const char *line, size_t length, int columns, const char *name) {
    size_t name_length = strlen(name), at = 0;
    for (int f = 0; f < columns; f++) {
        size_t start, size;
        field_next(line, length, &at, &start, &size);
        if (size == name_length && strncmp(line + start, name, size) == 0) return f;
    }
    return -1;
}

static int find_label_column(const CsvCursor *c, size_t length, const char *wanted,
                             CsvHeader *h, Status *st) {
    const char *line = c->text + c->line_start;
    h->label_column = column_named(line, length, h->columns, wanted ? wanted : "label");
    if (h->label_column >= 0) return 0;
    if (!wanted) {
        h->label_column = 0;  // no column named "label": the first is the label
        return 0;
    }
    // The wanted name is escaped like the header: it comes from a spec, and a spec can come
    // from a model file's `data` statement, so a terminal escape code in it (found by
    // tests/libfuzzer/fuzz_csv.c) must not reach the terminal raw.
    char shown[200], shown_wanted[200];
    escape_cell(line, length, shown, sizeof shown);
    escape_cell(wanted, strlen(wanted), shown_wanted, sizeof shown_wanted);
    status_fail_at(st, STATUS_BAD_INPUT, c->path, 1, 1, "no column '%s' in the header "
                   "'%s'", shown_wanted, shown);
    status_hint(st, "name one of the header's columns: csv:FILE,label=COLUMN");
    return STATUS_BAD_INPUT;
}

static int read_header(CsvCursor *c, const char *label, CsvHeader *h, Status *st) {
    size_t length = line_length(c);
    if (c->length == 0 || length == 0) {
        status_fail_at(st, STATUS_BAD_INPUT, c->path, 1, 1, c->length == 0
                       ? "empty file: no header row" : "the header row is empty");
        status_hint(st, "%s", CSV_HINT);
        return STATUS_BAD_INPUT;
    }
    h->columns = count_fields(c->text + c->line_start, length);
    if (h->columns < 2 || h->columns > CSV_MAX_COLUMNS) {
        status_fail_at(st, STATUS_BAD_INPUT, c->path, 1, 1, "the header has %d column%s; a "
                       "label and 1 to %d features are needed", h->columns,
                       h->columns == 1 ? "" : "s", CSV_MAX_COLUMNS - 1);
        status_hint(st, "%s", CSV_HINT);
        return STATUS_BAD_INPUT;
    }
    // A label= naming one of the numbers says the line is a header of numbered columns
    // (pandas writes 0,1,2,... for a frame without column names).
    const char *line = c->text + c->line_start;
    // A label= naming no column of a line of numbers: the missing header is the likelier
    // cause (the message says the column is not there either).
    if ((!label || column_named(line, length, h->columns, label) < 0) &&
        holds_only_numbers(line, length))
        return refuse_numbers_header(c, length, label, h->columns, st);
    return find_label_column(c, length, label, h, st);
}

static int fail_cell(const CsvCursor *c, size_t start, size_t size, const char *why,
                     Status *st) {
    char shown[200];
    escape_cell(c->text + c->line_start + start, size, shown, sizeof shown);
    status_fail_at(st, STATUS_BAD_INPUT, c->path, c->line, (int)start + 1, "'%s' is %s",
                   shown, why);
    status_hint(st, "%s", CSV_HINT);
    return STATUS_BAD_INPUT;
}

static int parse_number(const CsvCursor *c, size_t start, size_t size, float *value,
                        Status *st) {
    if (size == 0) return fail_cell(c, start, size, "an empty cell, not a number", st);
    if (size >= CSV_NUMBER_BYTES) return fail_cell(c, start, size, "not a number (too long)", st);
    int overflow = 0;
    if (!read_float(c->text + c->line_start + start, size, value, &overflow))
        return fail_cell(c, start, size, "not a number", st);
    if (!isfinite(*value) || overflow)
        return fail_cell(c, start, size, "not a finite number a float holds", st);
    return 0;
}

static int parse_label(const CsvCursor *c, size_t start, size_t size, uint8_t *label,
                       SamplePlace *place, Status *st) {
    float value = 0;
    TRY(parse_number(c, start, size, &value, st));
    if (value < 0 || value > 255 || value != floorf(value))
        return fail_cell(c, start, size, "not a class label (an integer 0 to 255)", st);
    *label = (uint8_t)value;
    *place = (SamplePlace){.line = c->line, .column = (int)start + 1};
    return 0;
}

static int parse_row(const CsvCursor *c, const CsvHeader *h, float *features, uint8_t *label,
                     SamplePlace *place, Status *st) {
    const char *line = c->text + c->line_start;
    size_t length = line_length(c);
    int fields = count_fields(line, length);
    if (fields != h->columns) {
        // The place to fix: the comma that starts the first extra field, or the line's end
        // where a field is missing.
        size_t at = length;
        for (int commas = 0, i = 0; fields > h->columns && (size_t)i < length; i++)
            if (line[i] == ',' && ++commas == h->columns) {
                at = (size_t)i;
                break;
            }
        status_fail_at(st, STATUS_BAD_INPUT, c->path, c->line, (int)at + 1, "row has %d "
                       "field%s, but the header has %d columns", fields, fields == 1 ? "" : "s",
                       h->columns);
        status_hint(st, "every row needs one value per header column");
        return STATUS_BAD_INPUT;
    }
    size_t at = 0;
    for (int f = 0, feature = 0; f < h->columns; f++) {
        size_t start, size;
        field_next(line, length, &at, &start, &size);
        if (f == h->label_column) TRY(parse_label(c, start, size, label, place, st));
        else TRY(parse_number(c, start, size, &features[feature++], st));
    }
    return 0;
}

// Rows that hold something: blank lines (a trailing newline, say) are not samples.
static int count_rows(CsvCursor c) {
    int rows = 0;
    while (next_line(&c))
        if (line_length(&c) > 0) rows++;
    return rows;
}

static int parse_rows(CsvCursor *c, const CsvHeader *h, Dataset *out, Status *st) {
    int rows = count_rows(*c);
    if (rows == 0) {
        status_fail_at(st, STATUS_BAD_INPUT, c->path, 1, 1, "no rows after the header");
        status_hint(st, "%s", CSV_HINT);
        return STATUS_BAD_INPUT;
    }
    size_t features = (size_t)h->columns - 1;
    out->features = malloc((size_t)rows * features * sizeof *out->features);
    out->labels = malloc((size_t)rows);
    out->label_places = malloc((size_t)rows * sizeof *out->label_places);
    if (!out->features || !out->labels || !out->label_places)
        return status_out_of_host_memory(
            st, (size_t)rows * (features * sizeof *out->features + 1 + sizeof *out->label_places),
            "for %d rows", rows);
    while (next_line(c)) {
        if (line_length(c) == 0) continue;
        TRY(parse_row(c, h, out->features + (size_t)out->count * features,
                      &out->labels[out->count], &out->label_places[out->count], st));
        out->count++;
    }
    out->channels = out->height = 1;
    out->width = (int)features;
    out->label_max = dataset_largest_label(out->labels, out->count);
    return 0;
}

// "FILE" or "FILE,label=COLUMN" into its parts.
static int parse_spec(const char *spec, char *path, size_t size, const char **label,
                      Status *st) {
    const char *option = strstr(spec, ",label=");
    size_t length = option ? (size_t)(option - spec) : strlen(spec);
    *label = option ? option + 7 : NULL;
    if (length == 0 || length >= size || (option && !**label)) {
        // Escaped: a spec can come from a model file's `data` statement.
        char shown[300];
        text_escape(spec, strlen(spec), shown, sizeof shown);
        status_fail(st, STATUS_BAD_INPUT, "dataset 'csv:%s': expected csv:FILE or "
                    "csv:FILE,label=COLUMN", shown);
        status_hint(st, "%s", CSV_HINT);
        return STATUS_BAD_INPUT;
    }
    // Column names hold no comma (the header is split at every one): one here starts
    // another option, and label= is the only one.
    const char *after = option ? strchr(*label, ',') : NULL;
    if (after) {
        char shown_spec[300], shown[300];
        text_escape(spec, (size_t)(after - spec), shown_spec, sizeof shown_spec);
        text_escape(after + 1, strlen(after + 1), shown, sizeof shown);
        status_fail(st, STATUS_BAD_INPUT, "dataset 'csv:%s': unknown option '%s' after "
                    "label=", shown_spec, shown);
        status_hint(st, "%s", CSV_OPTION_HINT);
        return STATUS_BAD_INPUT;
    }
    memcpy(path, spec, length);
    path[length] = '\0';
    return 0;
}

// "FILE,labl=a": said as the mistyped option it is, not as a missing file.
static int refuse_unknown_option(const char *path, Status *st) {
    char file[1024], option[300], shown_file[300];
    if (!dataset_option_after_path(path, 0, file, sizeof file, option, sizeof option))
        return 0;
    text_escape(file, strlen(file), shown_file, sizeof shown_file);
    status_fail(st, STATUS_BAD_INPUT, "dataset 'csv:%s': unknown option '%s' after the file "
                "name", shown_file, option);
    status_hint(st, "%s", CSV_OPTION_HINT);
    return STATUS_BAD_INPUT;
}

int dataset_load_csv(const char *spec, Dataset *out, Status *st) {
    char path[1024];
    const char *label = NULL;
    TRY(parse_spec(spec, path, sizeof path, &label, st));
    TRY(refuse_unknown_option(path, st));
    CsvCursor cursor = {.path = path, .line = 1};
    TRY(read_whole_file(path, &cursor.text, &cursor.length, st));
    dataset_set_source(out, path);
    CsvHeader header;
    int rc = refuse_nul_byte(&cursor, st);
    if (!rc) rc = refuse_lone_carriage_return(&cursor, st);
    if (!rc) rc = read_header(&cursor, label, &header, st);
    if (!rc) rc = parse_rows(&cursor, &header, out, st);
    free(cursor.text);
    return rc;
}
