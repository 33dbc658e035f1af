// The TensorBoard event encoding against bytes worked out by hand from the protobuf wire
// format (key = field << 3 | wire type; varints 7 bits at a time, low first; fixed64 and
// fixed32 little-endian), CRC-32C against its published check value, and the TFRecord
// framing's layout. tests/e2e/tensorboard_reads_logs.sh has TensorBoard itself read a file.
#include "check.h"
#include "base/crc32c.h"
#include "core/tf_event.h"

#include <string.h>

static void check_bytes(const char *what, const uint8_t *got, size_t got_size,
                        const uint8_t *want, size_t want_size) {
    if (got_size == want_size && memcmp(got, want, want_size) == 0) return;
    fprintf(stderr, "%s: %zu bytes, want %zu:\n  got ", what, got_size, want_size);
    for (size_t i = 0; i < got_size; i++) fprintf(stderr, "%02x ", got[i]);
    fprintf(stderr, "\n  want ");
    for (size_t i = 0; i < want_size; i++) fprintf(stderr, "%02x ", want[i]);
    fprintf(stderr, "\n");
    test_failures++;
}

static void crc32c_gives_the_check_value(void) {
    CHECK_INT_EQ(crc32c("123456789", 9), 0xE3069283u);
    CHECK_INT_EQ(crc32c("", 0), 0u);
    uint32_t crc = 0xE3069283u;
    CHECK_INT_EQ(crc32c_masked("123456789", 9), (uint32_t)(((crc >> 15) | (crc << 17)) +
                                                           0xA282EAD8u));
}

// Event{wall_time: 1.5, step: 3, summary {value {tag: "a", simple_value: 2}}}.
static void scalar_event_matches_the_wire_format(void) {
    static const uint8_t want[] = {
        0x09, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F,  // 1: wall_time, fixed64 1.5
        0x10, 0x03,                          // 2: step, varint 3
        0x2A, 0x0A,                          // 5: summary, 10 bytes
        0x0A, 0x08,                          //   1: value, 8 bytes
        0x0A, 0x01, 'a',                     //     1: tag "a"
        0x15, 0, 0, 0, 0x40,                 //     2: simple_value, fixed32 2.0f
    };
    uint8_t got[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_scalar(1.5, 3, "a", 2.0f, got, sizeof got);
    check_bytes("scalar event", got, size, want, sizeof want);
}

static void steps_above_127_take_more_varint_bytes(void) {
    uint8_t got[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_scalar(0.0, 300, "a", 0.0f, got, sizeof got);
    static const uint8_t want_step[] = {0x10, 0xAC, 0x02};  // 300 = 0b10_0101100
    CHECK(size > 12);
    check_bytes("step 300", got + 9, 3, want_step, sizeof want_step);
}

static void file_version_event_names_brain_event_2(void) {
    static const uint8_t want[] = {0x09, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F,  // wall_time 1.0
                                   0x1A, 13, 'b', 'r', 'a', 'i', 'n', '.', 'E', 'v', 'e', 'n',
                                   't', ':', '2'};
    uint8_t got[TF_EVENT_MAX_BYTES];
    size_t size = tf_event_encode_file_version(1.0, got, sizeof got);
    check_bytes("file_version event", got, size, want, sizeof want);
}

static void tfrecord_frame_is_length_crc_data_crc(void) {
    const uint8_t data[] = {1, 2, 3};
    uint8_t record[32];
    size_t size = tfrecord_frame(data, sizeof data, record, sizeof record);
    CHECK_INT_EQ(size, 8 + 4 + 3 + 4);
    static const uint8_t length[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    check_bytes("length", record, 8, length, 8);
    uint32_t length_crc = crc32c_masked(length, 8), data_crc = crc32c_masked(data, 3);
    uint8_t want_crcs[8];
    for (int i = 0; i < 4; i++) {
        want_crcs[i] = (uint8_t)(length_crc >> (8 * i));
        want_crcs[4 + i] = (uint8_t)(data_crc >> (8 * i));
    }
    check_bytes("length crc", record + 8, 4, want_crcs, 4);
    check_bytes("data", record + 12, 3, data, 3);
    check_bytes("data crc", record + 15, 4, want_crcs + 4, 4);
    CHECK_INT_EQ(tfrecord_frame(data, sizeof data, record, 10), 0);  // too small: refused
}

int main(void) {
    crc32c_gives_the_check_value();
    scalar_event_matches_the_wire_format();
    steps_above_127_take_more_varint_bytes();
    file_version_event_names_brain_event_2();
    tfrecord_frame_is_length_crc_data_crc();
    return test_exit_code("test_tf_event");
}
