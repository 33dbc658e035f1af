#include "core/run_record.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

static const uint8_t record_magic[4] = {'T', 'R', 'R', 'A'};
enum { HEADER_BYTES = 7 };

void run_record_init(RunRecord *r) { memset(r, 0, sizeof *r); }

void run_record_free(RunRecord *r) {
    free(r->fields);
    run_record_init(r);
}

static int grow(RunRecord *r, Status *st) {
    if (r->count < r->capacity) return 0;
    if (r->count == RUN_RECORD_MAX_FIELDS)
        return status_fail(st, STATUS_BAD_INPUT, "a run record holds at most %d fields",
                           RUN_RECORD_MAX_FIELDS);
    int capacity = r->capacity ? r->capacity * 2 : 32;
    if (capacity > RUN_RECORD_MAX_FIELDS) capacity = RUN_RECORD_MAX_FIELDS;
    RunField *fields = realloc(r->fields, (size_t)capacity * sizeof *fields);
    if (!fields)
        return status_out_of_host_memory(st, (size_t)capacity * sizeof *fields,
                                         "for a run record of %d fields", capacity);
    r->fields = fields;
    r->capacity = capacity;
    return 0;
}

int run_record_add(RunRecord *r, Status *st, const char *name, const char *fmt, ...) {
    size_t name_length = strlen(name);
    if (name_length == 0 || name_length >= RUN_FIELD_NAME_MAX)
        return status_fail(st, STATUS_BAD_INPUT, "run record field name '%s': 1 to %d "
                           "characters", name, RUN_FIELD_NAME_MAX - 1);
    TRY(grow(r, st));
    RunField *f = &r->fields[r->count];
    memcpy(f->name, name, name_length + 1);
    va_list ap;
    va_start(ap, fmt);
    int length = vsnprintf(f->value, sizeof f->value, fmt, ap);
    va_end(ap);
    if (length < 0 || length >= RUN_FIELD_VALUE_MAX)
        return status_fail(st, STATUS_BAD_INPUT, "run record field '%s': its value is longer "
                           "than %d bytes", name, RUN_FIELD_VALUE_MAX - 1);
    r->count++;
    return 0;
}

static uint8_t *put_u16(uint8_t *p, size_t value) {
    p[0] = (uint8_t)(value & 0xff);
    p[1] = (uint8_t)(value >> 8);
    return p + 2;
}

int run_record_encode(const RunRecord *r, uint8_t **bytes, size_t *size, Status *st) {
    size_t total = HEADER_BYTES;
    for (int i = 0; i < r->count; i++)
        total += 3 + strlen(r->fields[i].name) + strlen(r->fields[i].value);
    uint8_t *out = malloc(total), *p = out;
    if (!out) return status_out_of_host_memory(st, total, "for a run record");
    memcpy(p, record_magic, sizeof record_magic);
    p += sizeof record_magic;
    *p++ = RUN_RECORD_VERSION;
    p = put_u16(p, (size_t)r->count);
    for (int i = 0; i < r->count; i++) {
        size_t name = strlen(r->fields[i].name), value = strlen(r->fields[i].value);
        *p++ = (uint8_t)name;
        memcpy(p, r->fields[i].name, name);
        p = put_u16(p + name, value);
        memcpy(p, r->fields[i].value, value);
        p += value;
    }
    *bytes = out;
    *size = total;
    return 0;
}

// A reader over bytes someone else wrote: each take checks what is left first.
typedef struct Reader {
    const uint8_t *p;
    size_t left;
    int field;  // the field being read, for messages
} Reader;

static int truncated(const Reader *rd, const char *what, Status *st) {
    return status_fail(st, STATUS_BAD_INPUT, "run record cut short in field %d: %s needs more "
                       "than the %zu bytes left", rd->field, what, rd->left);
}

static int take_length(Reader *rd, int bytes, const char *what, size_t *out, Status *st) {
    if (rd->left < (size_t)bytes) return truncated(rd, what, st);
    *out = rd->p[0] | (bytes == 2 ? (size_t)rd->p[1] << 8 : 0);
    rd->p += bytes;
    rd->left -= (size_t)bytes;
    return 0;
}

// `length` bytes of text into out (room for `room` with its NUL), checked.
static int take_text(Reader *rd, size_t length, size_t room, const char *what, char *out,
                     Status *st) {
    if (length >= room)
        return status_fail(st, STATUS_BAD_INPUT, "run record field %d: a %s of %zu bytes (at "
                           "most %zu)", rd->field, what, length, room - 1);
    if (rd->left < length) return truncated(rd, what, st);
    if (memchr(rd->p, 0, length))
        return status_fail(st, STATUS_BAD_INPUT, "run record field %d: a NUL byte in its %s",
                           rd->field, what);
    memcpy(out, rd->p, length);
    out[length] = 0;
    rd->p += length;
    rd->left -= length;
    return 0;
}

static int read_field(Reader *rd, RunField *f, Status *st) {
    size_t length = 0;
    TRY(take_length(rd, 1, "its name's length", &length, st));
    if (length == 0)
        return status_fail(st, STATUS_BAD_INPUT, "run record field %d: an empty name",
                           rd->field);
    TRY(take_text(rd, length, sizeof f->name, "name", f->name, st));
    TRY(take_length(rd, 2, "its value's length", &length, st));
    return take_text(rd, length, sizeof f->value, "value", f->value, st);
}

static int read_header(Reader *rd, size_t *count, Status *st) {
    if (rd->left < HEADER_BYTES || memcmp(rd->p, record_magic, sizeof record_magic) != 0)
        return status_fail(st, STATUS_BAD_INPUT, "not a run record (%zu bytes, without its "
                           "\"TRRA\" header)", rd->left);
    if (rd->p[4] != RUN_RECORD_VERSION)
        return status_fail(st, STATUS_BAD_INPUT, "run record version %d; this trainer reads "
                           "version %d", rd->p[4], RUN_RECORD_VERSION);
    rd->p += 5;
    rd->left -= 5;
    TRY(take_length(rd, 2, "the field count", count, st));
    if (*count > RUN_RECORD_MAX_FIELDS)
        return status_fail(st, STATUS_BAD_INPUT, "run record of %zu fields (at most %d)",
                           *count, RUN_RECORD_MAX_FIELDS);
    return 0;
}

int run_record_decode(const uint8_t *bytes, size_t size, RunRecord *out, Status *st) {
    run_record_init(out);
    Reader rd = {bytes, size, 0};
    size_t count = 0;
    TRY(read_header(&rd, &count, st));
    for (size_t i = 0; i < count; i++) {
        rd.field = (int)i;
        TRY(grow(out, st));
        TRY(read_field(&rd, &out->fields[out->count], st));
        out->count++;
    }
    if (rd.left)
        return status_fail(st, STATUS_BAD_INPUT, "run record of %zu fields followed by %zu "
                           "more bytes", count, rd.left);
    return 0;
}

int run_record_first_difference(const RunRecord *a, const RunRecord *b) {
    int common = a->count < b->count ? a->count : b->count;
    for (int i = 0; i < common; i++)
        if (strcmp(a->fields[i].name, b->fields[i].name) != 0 ||
            strcmp(a->fields[i].value, b->fields[i].value) != 0)
            return i;
    return a->count == b->count ? -1 : common;
}

const char *run_record_value_at(const RunRecord *r, int index) {
    return index >= 0 && index < r->count ? r->fields[index].value : "(nothing)";
}

const char *run_record_name_at(const RunRecord *r, int index) {
    return index >= 0 && index < r->count ? r->fields[index].name : "";
}

int run_record_disagreement(const RunRecord *first, int field, int from, int size,
                            const RunField *theirs, Status *st) {
    const char *name = run_record_name_at(first, field);
    if (!name[0]) name = theirs->name;
    char ours[RUN_FIELD_VALUE_MAX * 2], other[RUN_FIELD_VALUE_MAX * 2],
        other_text[RUN_FIELD_VALUE_MAX + RUN_FIELD_NAME_MAX + 4],
        shown_name[RUN_FIELD_NAME_MAX * 4];
    const char *value = run_record_value_at(first, field);
    text_escape(value, strlen(value), ours, sizeof ours);
    // The name too is another process's bytes, rank 0's or the differing rank's.
    text_escape(name, strlen(name), shown_name, sizeof shown_name);
    // A field of another name (records of different lengths) is shown with its name.
    if (strcmp(theirs->name, name) != 0 && theirs->name[0])
        snprintf(other_text, sizeof other_text, "%s %s", theirs->name, theirs->value);
    else snprintf(other_text, sizeof other_text, "%s", theirs->value);
    text_escape(other_text, strlen(other_text), other, sizeof other);
    status_fail(st, STATUS_BAD_INPUT, "mpirun -np %d: ranks disagree on %s: rank 0 has %s, "
                "rank %d has %s", size, shown_name, ours, from, other);
    status_hint(st, "start every rank with the same model file, data and options (one "
                "command line after mpirun); docs/distributed.md lists what must agree");
    return STATUS_BAD_INPUT;
}

uint64_t run_record_hash(const void *bytes, size_t size) {
    const uint8_t *p = bytes;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
