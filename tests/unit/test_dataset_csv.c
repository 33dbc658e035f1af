// csv:FILE (data/dataset_csv.c) on the inputs a user audit found read wrong: the values a
// table's cells read as, and where a refusal points (file, line, column) and what it says.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char folder[] = "/tmp/test_dataset_csv.XXXXXX";
static char path[256];

// Writes `text` to the table file and loads it as csv:FILE (with ",label=NAME" when label is
// not NULL). Returns the loader's status code; *ds is the table when it is 0.
static int load_bytes(const char *text, size_t length, const char *label, Dataset *ds,
                      Status *st) {
    FILE *file = fopen(path, "wb");
    if (!file) {
        perror(path);
        exit(1);
    }
    fwrite(text, 1, length, file);
    fclose(file);
    char spec[400];
    if (label) snprintf(spec, sizeof spec, "%s,label=%s", path, label);
    else snprintf(spec, sizeof spec, "%s", path);
    memset(ds, 0, sizeof *ds);
    status_clear(st);
    return dataset_load_csv(spec, ds, st);
}

static int load(const char *text, const char *label, Dataset *ds, Status *st) {
    return load_bytes(text, strlen(text), label, ds, st);
}

// A NUL ended the text for the line finder: a 60-row file trained on the rows before it,
// exit 0. It is refused where it is, wherever it is (a row, the header, the last byte).
static void nul_byte_is_named_not_a_cut(void) {
    static const struct {
        const char text[40];
        size_t length;
        int line, column;
    } cases[] = {
        {"label,x\n0,1\n1,\0002\n1,3\n", 21, 3, 3},
        {"label,x\n0,1\n1,2\n\0001,3\n", 21, 4, 1},
        {"lab\000el,x\n0,1\n", 13, 1, 4},
        {"label,x\n0,1\n1,2\n\000", 17, 4, 1},
    };
    Dataset ds;
    Status st;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK_INT_EQ(load_bytes(cases[i].text, cases[i].length, NULL, &ds, &st),
                     STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "a NUL byte (0x00)");
        CHECK_INT_EQ(st.line, cases[i].line);
        CHECK_INT_EQ(st.column, cases[i].column);
        dataset_free(&ds);
    }
}

// strtof says ERANGE for a number too small for a float as for one too large; only the
// large ones are out of a float's range. The small ones read as the float nearest them.
static void tiny_numbers_read_as_floats(void) {
    Dataset ds;
    Status st;
    CHECK_INT_EQ(load("label,x\n0,1e-38\n1,1e-40\n0,1e-50\n1,-1e-45\n0,3.4e38\n", NULL, &ds,
                      &st), 0);
    CHECK_INT_EQ(ds.count, 5);
    if (ds.count == 5) {
        CHECK(ds.features[0] == strtof("1e-38", NULL) && ds.features[0] > 0);
        CHECK(ds.features[1] == strtof("1e-40", NULL) && ds.features[1] > 0);
        CHECK(ds.features[1] < FLT_MIN);  // a denormal
        CHECK(ds.features[2] == 0.0f);
        CHECK(ds.features[3] < 0 && ds.features[3] > -FLT_MIN);
        CHECK(ds.features[4] == 3.4e38f);
        CHECK_INT_EQ(ds.labels[1], 1);
    }
    dataset_free(&ds);

    // A label too small to be anything but 0 is the class 0.
    CHECK_INT_EQ(load("label,x\n1e-50,1\n", NULL, &ds, &st), 0);
    if (ds.count == 1) CHECK_INT_EQ(ds.labels[0], 0);
    dataset_free(&ds);

    const char *too_large[] = {"label,x\n0,1e39\n", "label,x\n0,-3.5e38\n",
                               "label,x\n0,1e400\n"};
    for (size_t i = 0; i < sizeof too_large / sizeof *too_large; i++) {
        CHECK_INT_EQ(load(too_large[i], NULL, &ds, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "is not a finite number a float holds");
        CHECK_INT_EQ(st.line, 2);
        CHECK_INT_EQ(st.column, 3);
        dataset_free(&ds);
    }
}

// A carriage return ends a line only before a line feed (or at the end of the file, a CRLF
// cut short); one anywhere else is named at its line and column, whatever comes after it.
static void lone_carriage_return_is_named(void) {
    Dataset ds;
    Status st;
    CHECK_INT_EQ(load("label,x\r\n0,1\r\n\r\n1,2\r\n", NULL, &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 2);
    dataset_free(&ds);
    CHECK_INT_EQ(load("label,x\n0,1\n1,2\r", NULL, &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 2);
    dataset_free(&ds);

    struct {
        const char *text;
        int line, column;
    } lone[] = {
        {"label,x\r0,1\r1,2\r", 1, 8},            // old Mac line endings
        {"label,x\r\n0,1\r\n1,2\r1,3\r\n", 3, 4},  // one lone among CRLFs
        {"label,x\n0,1\r\r\n", 2, 4},              // CR CR LF: the first is lone
        {"\rlabel,x\n0,1\n", 1, 1},
    };
    for (size_t i = 0; i < sizeof lone / sizeof *lone; i++) {
        CHECK_INT_EQ(load(lone[i].text, NULL, &ds, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "a lone carriage return '\\r' (byte 0x0d) is not a line "
                                   "break");
        CHECK_INT_EQ(st.line, lone[i].line);
        CHECK_INT_EQ(st.column, lone[i].column);
        CHECK_CONTAINS(st.hint, "tr '\\r' '\\n' < ");
        CHECK_CONTAINS(st.hint, "/table-lf.csv");
        dataset_free(&ds);
    }
}

// A file with no header row: its first line is a sample, and was read as the header,
// losing that sample. A first line of numbers only is refused, unless label= names one of
// them (a header of numbered columns, as pandas writes for a frame without names).
static void header_of_numbers_is_refused(void) {
    Dataset ds;
    Status st;
    const char *no_header[] = {"0,1,2\n0,1,2\n1,3,4\n", " 1 , -2.5e3,0x1p3\n0,1,2\n",
                               "0,1,2\r\n1,3,4\r\n"};
    for (size_t i = 0; i < sizeof no_header / sizeof *no_header; i++) {
        CHECK_INT_EQ(load(no_header[i], NULL, &ds, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "holds only numbers, where a header row of column names is "
                                   "expected");
        CHECK_INT_EQ(st.line, 1);
        CHECK_INT_EQ(st.column, 1);
        CHECK_CONTAINS(st.hint, "add a header line such as 'label,x1,x2'");
        dataset_free(&ds);
    }
    CHECK_INT_EQ(load("0,1,2,3,4,5\n0,1,2,3,4,5\n", NULL, &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "the first line '0,1,2,3,4,5' holds only numbers");
    CHECK_CONTAINS(st.hint, "'label,x1,x2,...,x5'");
    dataset_free(&ds);
    // label= naming no column of a line of numbers: the missing header is the likelier cause.
    CHECK_INT_EQ(load("0,1,2\n0,1,2\n", "y", &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "holds only numbers");
    CHECK_CONTAINS(st.hint, "'y,x1,x2'");
    dataset_free(&ds);

    CHECK_INT_EQ(load("0,1,2\n1,3,4\n0,5,6\n", "2", &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 2);
    if (ds.count == 2) CHECK(ds.labels[0] == 4 && ds.labels[1] == 6 && ds.features[0] == 1);
    dataset_free(&ds);
    // A name that is not a number makes a header, and so do "nan" and "inf", which strtof
    // reads as numbers but hold no digit.
    const char *headers[] = {"label,1,2\n0,1,2\n", "1,x\n0,1\n", "nan,inf\n0,1\n",
                             "0,,2\n0,1,2\n"};
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        CHECK_INT_EQ(load(headers[i], NULL, &ds, &st), 0);
        CHECK_INT_EQ(ds.count, 1);
        dataset_free(&ds);
    }
}

// Each cell reaches its own feature, whichever column the label is in: the row is read in
// one pass, field after field, so a slip would shift every feature after it. Spaces and
// tabs around a cell are trimmed; an empty cell is named at its column.
static void cells_reach_their_features(void) {
    Dataset ds;
    Status st;
    CHECK_INT_EQ(load("a, label ,b\tc\n 1 ,\t7, 2.5\t\n-3,2 ,4\n", "label", &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 2);
    if (ds.count == 2) {
        CHECK(ds.labels[0] == 7 && ds.labels[1] == 2);
        CHECK(ds.features[0] == 1.0f && ds.features[1] == 2.5f);
        CHECK(ds.features[2] == -3.0f && ds.features[3] == 4.0f);
    }
    dataset_free(&ds);

    CHECK_INT_EQ(load("label,a,b\n0,1,\n", NULL, &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "an empty cell");
    CHECK_INT_EQ(st.line, 2);
    CHECK_INT_EQ(st.column, 5);
    dataset_free(&ds);

    // Fashion-MNIST's shape as a table: a label, then 784 pixels, feature f holding f.
    enum { pixels = 784 };
    static char table[2 * 8 * (pixels + 1)];
    int used = snprintf(table, sizeof table, "label");
    for (int f = 0; f < pixels; f++)
        used += snprintf(table + used, sizeof table - (size_t)used, ",p%d", f);
    used += snprintf(table + used, sizeof table - (size_t)used, "\n9");
    for (int f = 0; f < pixels; f++)
        used += snprintf(table + used, sizeof table - (size_t)used, ",%d", f);
    snprintf(table + used, sizeof table - (size_t)used, "\n");
    CHECK_INT_EQ(load(table, NULL, &ds, &st), 0);
    CHECK_INT_EQ(ds.count, 1);
    if (ds.count == 1) {
        int wrong = 0;
        for (int f = 0; f < pixels; f++) wrong += ds.features[f] != (float)f;
        CHECK_INT_EQ(wrong, 0);
        CHECK_INT_EQ(ds.labels[0], 9);
    }
    dataset_free(&ds);
}

int main(void) {
    if (!mkdtemp(folder)) {
        perror(folder);
        return 1;
    }
    snprintf(path, sizeof path, "%s/table.csv", folder);
    tiny_numbers_read_as_floats();
    lone_carriage_return_is_named();
    nul_byte_is_named_not_a_cut();
    header_of_numbers_is_refused();
    cells_reach_their_features();
    unlink(path);
    rmdir(folder);
    return test_exit_code("test_dataset_csv");
}
