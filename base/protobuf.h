// The few protobuf wire encodings our files need (TensorBoard events, ONNX models), written
// by hand rather than through a protobuf library: varints, fixed 32/64-bit values and
// length-delimited fields. A message is written into a ProtoWriter; a nested message is
// written into a writer of its own and then put into its parent as a bytes field.
#ifndef TRAINER_PROTOBUF_H
#define TRAINER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

// Protobuf wire types.
enum { PROTO_VARINT = 0, PROTO_FIXED64 = 1, PROTO_LENGTH_DELIMITED = 2, PROTO_FIXED32 = 5 };

// An output buffer: fixed (`out` of `capacity` bytes; `size` runs past `capacity` on
// overflow, which callers test once at the end), or growing (proto_writer_growing: `out`
// is allocated and grows; `failed` is set when host memory ran out).
typedef struct ProtoWriter {
    uint8_t *out;
    size_t size, capacity;
    int growing;
    int failed;
} ProtoWriter;

static inline ProtoWriter proto_writer_fixed(uint8_t *out, size_t capacity) {
    return (ProtoWriter){.out = out, .capacity = capacity};
}
static inline ProtoWriter proto_writer_growing(void) { return (ProtoWriter){.growing = 1}; }
// Frees a growing writer's buffer.
void proto_writer_free(ProtoWriter *w);
// The message's length, or 0 when it did not fit (fixed) or memory ran out (growing).
size_t proto_finished(const ProtoWriter *w);

void proto_put_bytes(ProtoWriter *w, const void *data, size_t size);
void proto_put_varint(ProtoWriter *w, uint64_t value);
void proto_put_little_endian(ProtoWriter *w, uint64_t value, int bytes);
void proto_put_key(ProtoWriter *w, int field, int wire_type);

// Whole fields: the key, then the value.
void proto_put_varint_field(ProtoWriter *w, int field, uint64_t value);
// int64 and int32 fields: a negative value sign-extends to ten bytes, as protobuf says.
void proto_put_int_field(ProtoWriter *w, int field, int64_t value);
void proto_put_double_field(ProtoWriter *w, int field, double value);
void proto_put_float_field(ProtoWriter *w, int field, float value);
void proto_put_bytes_field(ProtoWriter *w, int field, const void *data, size_t size);
void proto_put_string_field(ProtoWriter *w, int field, const char *text);
// A nested message that `inner` holds; a failed inner writer fails `w` too.
void proto_put_message_field(ProtoWriter *w, int field, const ProtoWriter *inner);

#endif
