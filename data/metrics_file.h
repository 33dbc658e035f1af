// What `trainer train --logdir` and `trainer plot` share about DIR/metrics.jsonl: it must be
// a regular file (a FIFO blocks the open or the first read forever, and /dev/full or
// /dev/zero never end), and its lines are read with a cap on their length, so that no file
// fills the memory with one endless line.
#ifndef TRAINER_METRICS_FILE_H
#define TRAINER_METRICS_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "base/status.h"

// A row is a few hundred bytes; a line of a mebibyte is not one `trainer train` wrote.
enum { METRICS_LINE_MAX = 1 << 20 };

// Opens `path` with open(2)'s `flags` (O_RDONLY, or O_RDWR | O_CREAT) without blocking,
// and only if it is a regular file; else STATUS_BAD_INPUT naming what it is (a FIFO, a
// directory, a device). `mode` is fopen's for the stream. A missing file under O_RDONLY
// fails with errno's reason; `hint` closes either message.
int metrics_file_open(const char *path, int flags, const char *mode, const char *hint,
                      FILE **out, Status *st);

typedef struct MetricsLine {
    char *text;        // NUL-terminated; may hold NUL bytes of its own (length says)
    size_t length, capacity;
    int finished;      // it ended with a newline: a writer cut short leaves an unfinished one
} MetricsLine;

// The next line of `file` (the newline not included) into `line`, *got 1; at the end of
// the file *got 0. A line longer than METRICS_LINE_MAX is STATUS_BAD_INPUT at path:number
// with `hint` (what the caller's user can do about it), memory running out
// STATUS_RUNTIME_ERROR.
int metrics_line_read(FILE *file, MetricsLine *line, int *got, const char *path, int number,
                      const char *hint, Status *st);
// The line's JSON value, or NULL when it is not exactly one: a NUL byte in it, invalid
// JSON, or anything but whitespace after the value. cJSON stops at the value's end, so
// `{...}{...}` (two rows run together) would otherwise read as its first row alone.
struct cJSON *metrics_line_parse(const MetricsLine *line);
// Only spaces, tabs and carriage returns: a line to pass over.
int metrics_line_blank(const MetricsLine *line);
void metrics_line_free(MetricsLine *line);

#endif
