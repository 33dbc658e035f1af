#define _POSIX_C_SOURCE 200809L  // fdopen
#include "core/tf_event.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/protobuf.h"

// Field numbers of tensorflow.Event and tensorflow.Summary(.Value).
enum { EVENT_WALL_TIME = 1, EVENT_STEP = 2, EVENT_FILE_VERSION = 3, EVENT_SUMMARY = 5,
       EVENT_SESSION_LOG = 7 };  // 6 is the deprecated log_message
// tensorflow.SessionLog: status = 1, an enum whose START is 1.
enum { SESSION_LOG_STATUS = 1, SESSION_LOG_START = 1 };
enum { SUMMARY_VALUE = 1, VALUE_TAG = 1, VALUE_SIMPLE_VALUE = 2 };

size_t tf_event_encode_scalar(double wall_time, long step, const char *tag, float value,
                              uint8_t *out, size_t capacity) {
    uint8_t value_bytes[TF_EVENT_MAX_BYTES], summary_bytes[TF_EVENT_MAX_BYTES];
    ProtoWriter value_message = proto_writer_fixed(value_bytes, sizeof value_bytes);
    proto_put_bytes_field(&value_message, VALUE_TAG, tag, strlen(tag));
    proto_put_float_field(&value_message, VALUE_SIMPLE_VALUE, value);
    if (!proto_finished(&value_message)) return 0;
    ProtoWriter summary = proto_writer_fixed(summary_bytes, sizeof summary_bytes);
    proto_put_bytes_field(&summary, SUMMARY_VALUE, value_bytes, value_message.size);
    if (!proto_finished(&summary)) return 0;
    ProtoWriter event = proto_writer_fixed(out, capacity);
    proto_put_double_field(&event, EVENT_WALL_TIME, wall_time);
    proto_put_int_field(&event, EVENT_STEP, step);  // int64: negative steps sign-extend
    proto_put_bytes_field(&event, EVENT_SUMMARY, summary_bytes, summary.size);
    return proto_finished(&event);
}

size_t tf_event_encode_file_version(double wall_time, uint8_t *out, size_t capacity) {
    static const char version[] = "brain.Event:2";
    ProtoWriter event = proto_writer_fixed(out, capacity);
    proto_put_double_field(&event, EVENT_WALL_TIME, wall_time);
    proto_put_bytes_field(&event, EVENT_FILE_VERSION, version, sizeof version - 1);
    return proto_finished(&event);
}

size_t tf_event_encode_start(double wall_time, long step, uint8_t *out, size_t capacity) {
    uint8_t session_log[8];
    ProtoWriter status = proto_writer_fixed(session_log, sizeof session_log);
    proto_put_varint_field(&status, SESSION_LOG_STATUS, SESSION_LOG_START);
    ProtoWriter event = proto_writer_fixed(out, capacity);
    proto_put_double_field(&event, EVENT_WALL_TIME, wall_time);
    proto_put_int_field(&event, EVENT_STEP, step);
    proto_put_bytes_field(&event, EVENT_SESSION_LOG, session_log, status.size);
    return proto_finished(&event);
}

size_t tfrecord_frame(const uint8_t *data, size_t size, uint8_t *out, size_t capacity) {
    uint8_t length[8];
    ProtoWriter length_writer = proto_writer_fixed(length, sizeof length);
    proto_put_little_endian(&length_writer, size, 8);
    ProtoWriter record = proto_writer_fixed(out, capacity);
    proto_put_little_endian(&record, size, 8);
    proto_put_little_endian(&record, crc32c_masked(length, sizeof length), 4);
    proto_put_bytes(&record, data, size);
    proto_put_little_endian(&record, crc32c_masked(data, size), 4);
    return proto_finished(&record);
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
