#include "base/status.h"

#include "base/text_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void status_clear(Status *st) { memset(st, 0, sizeof *st); }

static void set_message(Status *st, StatusCode code, const char *fmt, va_list ap) {
    st->code = code;
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    st->hint[0] = '\0';
    st->error_name[0] = '\0';
}

int status_fail(Status *st, StatusCode code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(st, code, fmt, ap);
    va_end(ap);
    st->file[0] = '\0';
    st->line = st->column = 0;
    return code;
}

int status_fail_at(Status *st, StatusCode code, const char *file, int line, int column,
                   const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(st, code, fmt, ap);
    va_end(ap);
    snprintf(st->file, sizeof st->file, "%s", file ? file : "");
    st->line = line;
    st->column = column;
    return code;
}

int status_out_of_host_memory(Status *st, size_t bytes, const char *what_fmt, ...) {
    char what[768], size[40] = "";
    va_list ap;
    va_start(ap, what_fmt);
    vsnprintf(what, sizeof what, what_fmt, ap);
    va_end(ap);
    if (bytes) {
        char amount[32];
        snprintf(size, sizeof size, ": %s", format_bytes(bytes, amount, sizeof amount));
    }
    status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory%s %s", size, what);
    // Each way out is true of some command and harmless to the others.
    status_hint(st, "free host memory (close other programs), or ask for less where the "
                    "command takes it: a lower --batch, fewer samples (--train-limit, "
                    "--test-limit, --limit), --decode stream for an images: folder");
    return STATUS_RUNTIME_ERROR;
}

void status_hint(Status *st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->hint, sizeof st->hint, fmt, ap);
    va_end(ap);
}

void status_hint_append(Status *st, const char *fmt, ...) {
    size_t used = strlen(st->hint);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->hint + used, sizeof st->hint - used, fmt, ap);
    va_end(ap);
}

void status_set_place_if_unset(Status *st, const char *file, int line, int column) {
    if (st->file[0]) return;
    snprintf(st->file, sizeof st->file, "%s", file ? file : "");
    st->line = line;
    st->column = column;
}

void status_prefix(Status *st, const char *fmt, ...) {
    char prefix[256], message[sizeof st->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(message, sizeof message, "%.255s%.760s", prefix, st->message);
    snprintf(st->message, sizeof st->message, "%s", message);
}

int status_exit_code(const Status *st) {
    switch (st->code) {
    case STATUS_OK: return 0;
    case STATUS_BAD_INPUT: return 2;
    case STATUS_NO_DEVICE: return 3;
    case STATUS_RUNTIME_ERROR:
    case STATUS_OUT_OF_MEMORY: return 1;
    }
    return 1;
}

void status_format(const Status *st, char *buf, size_t size) {
    char place[600] = "";
    if (st->file[0] && st->line > 0 && st->column > 0)
        snprintf(place, sizeof place, "%s:%d:%d: ", st->file, st->line, st->column);
    else if (st->file[0] && st->line > 0)
        snprintf(place, sizeof place, "%s:%d: ", st->file, st->line);
    else if (st->file[0])
        snprintf(place, sizeof place, "%s: ", st->file);
    if (st->hint[0])
        snprintf(buf, size, "trainer: error: %s%s\n  hint: %s\n", place, st->message, st->hint);
    else
        snprintf(buf, size, "trainer: error: %s%s\n", place, st->message);
}

const char *status_code_name(StatusCode code) {
    switch (code) {
    case STATUS_OK: return "ok";
    case STATUS_RUNTIME_ERROR: return "runtime error";
    case STATUS_OUT_OF_MEMORY: return "out of memory";
    case STATUS_BAD_INPUT: return "bad input";
    case STATUS_NO_DEVICE: return "no usable device";
    }
    return "unknown";
}
