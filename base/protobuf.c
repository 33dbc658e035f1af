#include "base/protobuf.h"

#include <stdlib.h>
#include <string.h>

void proto_writer_free(ProtoWriter *w) {
    if (w->growing) free(w->out);
    w->out = NULL;
    w->size = w->capacity = 0;
}

size_t proto_finished(const ProtoWriter *w) {
    return !w->failed && w->size <= w->capacity ? w->size : 0;
}

// Room for `more` bytes in a growing writer, doubling so that appending stays linear.
static int reserve(ProtoWriter *w, size_t more) {
    if (w->size + more <= w->capacity) return 1;
    size_t capacity = w->capacity ? w->capacity : 256;
    while (capacity < w->size + more) capacity *= 2;
    uint8_t *out = realloc(w->out, capacity);
    if (!out) {
        w->failed = 1;
        return 0;
    }
    w->out = out;
    w->capacity = capacity;
    return 1;
}

void proto_put_bytes(ProtoWriter *w, const void *data, size_t size) {
    if (w->failed || size == 0) return;
    if (w->growing && !reserve(w, size)) return;
    if (w->size <= w->capacity && size <= w->capacity - w->size)
        memcpy(w->out + w->size, data, size);
    else if (w->size < w->capacity)  // fixed and overflowing: keep size counting past it
        memcpy(w->out + w->size, data, w->capacity - w->size);
    w->size += size;
}

void proto_put_varint(ProtoWriter *w, uint64_t value) {
    uint8_t bytes[10];
    size_t n = 0;
    while (value >= 0x80) {
        bytes[n++] = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    bytes[n++] = (uint8_t)value;
    proto_put_bytes(w, bytes, n);
}

void proto_put_little_endian(ProtoWriter *w, uint64_t value, int bytes) {
    uint8_t out[8];
    for (int i = 0; i < bytes; i++) out[i] = (uint8_t)(value >> (8 * i));
    proto_put_bytes(w, out, (size_t)bytes);
}

void proto_put_key(ProtoWriter *w, int field, int wire_type) {
    proto_put_varint(w, (uint64_t)field << 3 | (uint64_t)wire_type);
}

void proto_put_varint_field(ProtoWriter *w, int field, uint64_t value) {
    proto_put_key(w, field, PROTO_VARINT);
    proto_put_varint(w, value);
}

void proto_put_int_field(ProtoWriter *w, int field, int64_t value) {
    proto_put_varint_field(w, field, (uint64_t)value);
}

void proto_put_double_field(ProtoWriter *w, int field, double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    proto_put_key(w, field, PROTO_FIXED64);
    proto_put_little_endian(w, bits, 8);
}

void proto_put_float_field(ProtoWriter *w, int field, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    proto_put_key(w, field, PROTO_FIXED32);
    proto_put_little_endian(w, bits, 4);
}

void proto_put_bytes_field(ProtoWriter *w, int field, const void *data, size_t size) {
    proto_put_key(w, field, PROTO_LENGTH_DELIMITED);
    proto_put_varint(w, size);
    proto_put_bytes(w, data, size);
}

void proto_put_string_field(ProtoWriter *w, int field, const char *text) {
    proto_put_bytes_field(w, field, text, strlen(text));
}

void proto_put_message_field(ProtoWriter *w, int field, const ProtoWriter *inner) {
    if (inner->failed || inner->size > inner->capacity) {
        w->failed = 1;
        return;
    }
    proto_put_bytes_field(w, field, inner->out, inner->size);
}
