#define _POSIX_C_SOURCE 200809L  // fdopen, fileno
#include "data/metrics_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/atomic_file.h"

static int not_regular(const char *path, mode_t mode, const char *hint, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "the metrics log is %s, not a regular "
                   "file (reading or writing it could block or never end)", file_kind_name(mode));
    status_hint(st, "%s", hint);
    return STATUS_BAD_INPUT;
}

int metrics_file_open(const char *path, int flags, const char *mode, const char *hint,
                      FILE **out, Status *st) {
    *out = NULL;
    struct stat info;
    if (stat(path, &info) == 0 && !S_ISREG(info.st_mode))
        return not_regular(path, info.st_mode, hint, st);
    // Not blocking, in case the path became a FIFO since the stat: fstat says so below.
    int fd = open(path, flags | O_NONBLOCK, 0666);
    if (fd < 0) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot %s the metrics log: %s",
                       flags & O_CREAT ? "create" : "read", strerror(errno));
        status_hint(st, "%s", hint);
        return STATUS_BAD_INPUT;
    }
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(fd);
        return not_regular(path, info.st_mode, hint, st);
    }
    // A regular file never blocks; the flag only mattered for the open.
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    *out = fdopen(fd, mode);
    if (!*out) {
        int error = errno;
        close(fd);
        status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot open the metrics log: %s",
                       strerror(error));
        status_hint(st, "%s", hint);
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

static int grow(MetricsLine *line, Status *st) {
    size_t capacity = line->capacity ? 2 * line->capacity : 512;
    char *text = realloc(line->text, capacity);
    if (!text) return status_out_of_host_memory(st, capacity, "reading a metrics line");
    line->text = text;
    line->capacity = capacity;
    return 0;
}

// Byte by byte, so that the cap holds before the memory is taken and NUL bytes are counted
// (getline would hold a whole endless line, fgets loses the length at a NUL).
int metrics_line_read(FILE *file, MetricsLine *line, int *got, const char *path, int number,
                      const char *hint, Status *st) {
    *got = 0;
    line->length = 0;
    line->finished = 0;
    int c;
    while ((c = getc(file)) != EOF && c != '\n') {
        if (line->length == METRICS_LINE_MAX) {
            status_fail_at(st, STATUS_BAD_INPUT, path, number, 1, "a line longer than %d bytes: "
                           "not a row `trainer train --logdir` writes", METRICS_LINE_MAX);
            status_hint(st, "%s", hint);
            return STATUS_BAD_INPUT;
        }
        if (line->length + 1 >= line->capacity) TRY(grow(line, st));
        line->text[line->length++] = (char)c;
    }
    if (ferror(file)) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, path, number, 0, "cannot read the metrics log: "
                       "%s", strerror(errno));
        status_hint(st, "check the disk the file is on");
        return STATUS_RUNTIME_ERROR;
    }
    if (c == EOF && line->length == 0) return 0;
    if (!line->capacity) TRY(grow(line, st));
    line->text[line->length] = '\0';
    line->finished = c == '\n';
    *got = 1;
    return 0;
}

struct cJSON *metrics_line_parse(const MetricsLine *line) {
    if (memchr(line->text, '\0', line->length)) return NULL;
    const char *end = NULL;
    cJSON *value = cJSON_ParseWithLengthOpts(line->text, line->length, &end, 0);
    if (!value) return NULL;
    for (const char *c = end; c < line->text + line->length; c++) {
        if (!strchr(" \t\r", *c)) {
            cJSON_Delete(value);
            return NULL;
        }
    }
    return value;
}

int metrics_line_blank(const MetricsLine *line) {
    for (size_t i = 0; i < line->length; i++)
        if (!strchr(" \t\r", line->text[i]) || line->text[i] == '\0') return 0;
    return 1;
}

void metrics_line_free(MetricsLine *line) {
    free(line->text);
    memset(line, 0, sizeof *line);
}
