#define _POSIX_C_SOURCE 200809L  // fdopen
#include "core/tf_event.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32c.h"

// Protobuf wire types.
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LENGTH_DELIMITED = 2, WIRE_FIXED32 = 5 };
// Field numbers of tensorflow.Event and tensorflow.Summary(.Value).
enum { EVENT_WALL_TIME = 1, EVENT_STEP = 2, EVENT_FILE_VERSION = 3, EVENT_SUMMARY = 5,
       EVENT_SESSION_LOG = 7 };  // 6 is the deprecated log_message
// tensorflow.SessionLog: status = 1, an enum whose START is 1.
enum { SESSION_LOG_STATUS = 1, SESSION_LOG_START = 1 };
enum { SUMMARY_VALUE = 1, VALUE_TAG = 1, VALUE_SIMPLE_VALUE = 2 };

// A bounded output buffer; `size` runs past `capacity` on overflow, which callers test once.
typedef struct Writer {
    uint8_t *out;
    size_t size, capacity;
} Writer;

static void put_byte(Writer *w, uint8_t byte) {
    if (w->size < w->capacity) w->out[w->size] = byte;
    w->size++;
}

static void put_varint(Writer *w, uint64_t value) {
    while (value >= 0x80) {
        put_byte(w, (uint8_t)(value | 0x80));
        value >>= 7;
    }
    put_byte(w, (uint8_t)value);
}

static void put_little_endian(Writer *w, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; i++) put_byte(w, (uint8_t)(value >> (8 * i)));
}

static void put_key(Writer *w, int field, int wire_type) {
    put_varint(w, (uint64_t)field << 3 | (uint64_t)wire_type);
}

static void put_double_field(Writer *w, int field, double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    put_key(w, field, WIRE_FIXED64);
    put_little_endian(w, bits, 8);
}

static void put_float_field(Writer *w, int field, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    put_key(w, field, WIRE_FIXED32);
    put_little_endian(w, bits, 4);
}

static void put_bytes_field(Writer *w, int field, const void *data, size_t size) {
    put_key(w, field, WIRE_LENGTH_DELIMITED);
    put_varint(w, size);
    for (size_t i = 0; i < size; i++) put_byte(w, ((const uint8_t *)data)[i]);
}

static size_t finished(const Writer *w) { return w->size <= w->capacity ? w->size : 0; }

size_t tf_event_encode_scalar(double wall_time, long step, const char *tag, float value,
                              uint8_t *out, size_t capacity) {
    uint8_t value_bytes[TF_EVENT_MAX_BYTES], summary_bytes[TF_EVENT_MAX_BYTES];
    Writer value_message = {value_bytes, 0, sizeof value_bytes};
    put_bytes_field(&value_message, VALUE_TAG, tag, strlen(tag));
    put_float_field(&value_message, VALUE_SIMPLE_VALUE, value);
    if (!finished(&value_message)) return 0;
    Writer summary = {summary_bytes, 0, sizeof summary_bytes};
    put_bytes_field(&summary, SUMMARY_VALUE, value_bytes, value_message.size);
    if (!finished(&summary)) return 0;
    Writer event = {out, 0, capacity};
    put_double_field(&event, EVENT_WALL_TIME, wall_time);
    put_key(&event, EVENT_STEP, WIRE_VARINT);
    put_varint(&event, (uint64_t)(int64_t)step);  // int64: negative steps sign-extend
    put_bytes_field(&event, EVENT_SUMMARY, summary_bytes, summary.size);
    return finished(&event);
}

size_t tf_event_encode_file_version(double wall_time, uint8_t *out, size_t capacity) {
    static const char version[] = "brain.Event:2";
    Writer event = {out, 0, capacity};
    put_double_field(&event, EVENT_WALL_TIME, wall_time);
    put_bytes_field(&event, EVENT_FILE_VERSION, version, sizeof version - 1);
    return finished(&event);
}

size_t tf_event_encode_start(double wall_time, long step, uint8_t *out, size_t capacity) {
    uint8_t session_log[8];
    Writer status = {session_log, 0, sizeof session_log};
    put_key(&status, SESSION_LOG_STATUS, WIRE_VARINT);
    put_varint(&status, SESSION_LOG_START);
    Writer event = {out, 0, capacity};
    put_double_field(&event, EVENT_WALL_TIME, wall_time);
    put_key(&event, EVENT_STEP, WIRE_VARINT);
    put_varint(&event, (uint64_t)(int64_t)step);
    put_bytes_field(&event, EVENT_SESSION_LOG, session_log, status.size);
    return finished(&event);
}

size_t tfrecord_frame(const uint8_t *data, size_t size, uint8_t *out, size_t capacity) {
    uint8_t length[8];
    Writer length_writer = {length, 0, sizeof length};
    put_little_endian(&length_writer, size, 8);
    Writer record = {out, 0, capacity};
    put_little_endian(&record, size, 8);
    put_little_endian(&record, crc32c_masked(length, sizeof length), 4);
    for (size_t i = 0; i < size; i++) put_byte(&record, data[i]);
    put_little_endian(&record, crc32c_masked(data, size), 4);
    return finished(&record);
}

static int write_record(EventFile *events, const uint8_t *payload, size_t size, Status *st) {
    uint8_t record[TF_EVENT_MAX_BYTES + 16];
    size_t framed = tfrecord_frame(payload, size, record, sizeof record);
    if (fwrite(record, 1, framed, events->file) != framed) {
        status_fail_at(st, STATUS_RUNTIME_ERROR, events->path, 0, 0,
                       "cannot write the TensorBoard event file: %s", strerror(errno));
        status_hint(st, "check the free space and permissions of the --logdir directory");
        return STATUS_RUNTIME_ERROR;
    }
    return 0;
}

int event_file_open(EventFile *events, const char *dir, double wall_time, const char *host,
                    Status *st) {
    // A name taken (a resumed run started in the same second as the run it resumes) is
    // never written over: that would lose the first part's scalars. The next free
    // ".N" is used; TensorBoard reads every file whose name holds "tfevents", and sorts
    // them by name, which keeps the parts in order.
    int fd = -1;
    for (int n = 0; fd < 0 && n < 1000; n++) {
        char part[16] = "";
        if (n) snprintf(part, sizeof part, ".%d", n);
        int used = snprintf(events->path, sizeof events->path, "%s/events.out.tfevents.%ld.%s%s",
                            dir, (long)wall_time, host, part);
        // Cut short, the name would be another file's, or the same one for every n.
        if (used < 0 || (size_t)used >= sizeof events->path) {
            status_fail(st, STATUS_BAD_INPUT, "--logdir: the path is too long for the "
                        "TensorBoard event file's name (%d bytes; at most %zu)", used,
                        sizeof events->path - 1);
            status_hint(st, "choose a --logdir with a shorter path");
            return STATUS_BAD_INPUT;
        }
        fd = open(events->path, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    events->file = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!events->file) {
        if (fd >= 0) close(fd);
        status_fail_at(st, STATUS_BAD_INPUT, events->path, 0, 0,
                       "cannot create the TensorBoard event file: %s", strerror(errno));
        status_hint(st, "choose a --logdir you can write to");
        return STATUS_BAD_INPUT;
    }
    uint8_t payload[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_file_version(wall_time, payload, sizeof payload);
    return write_record(events, payload, size, st);
}

int event_file_add_scalar(EventFile *events, double wall_time, long step, const char *tag,
                          float value, Status *st) {
    uint8_t payload[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_scalar(wall_time, step, tag, value, payload, sizeof payload);
    if (size == 0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "TensorBoard tag '%.80s' is too long", tag);
    return write_record(events, payload, size, st);
}

int event_file_add_start(EventFile *events, double wall_time, long step, Status *st) {
    uint8_t payload[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_start(wall_time, step, payload, sizeof payload);
    return write_record(events, payload, size, st);
}

int event_file_flush(EventFile *events, Status *st) {
    if (fflush(events->file) == 0) return 0;
    status_fail_at(st, STATUS_RUNTIME_ERROR, events->path, 0, 0,
                   "cannot write the TensorBoard event file: %s", strerror(errno));
    status_hint(st, "check the free space and permissions of the --logdir directory");
    return STATUS_RUNTIME_ERROR;
}

void event_file_close(EventFile *events) {
    if (events->file) fclose(events->file);
    events->file = NULL;
}
