// data/safetensors.c: what the writer writes reads back (names, shapes, values, metadata,
// the header padded so the data starts 8-byte aligned), and every malformed header a
// hostile file could carry is refused with STATUS_BAD_INPUT and a message saying what.
#define _POSIX_C_SOURCE 200809L  // open_memstream

#include "check.h"
#include "data/safetensors.h"

#include <stdint.h>
#include <stdlib.h>

// A file from a header text and `data_size` bytes of data (value i: byte i).
static unsigned char *file_of(const char *header, size_t data_size, size_t *size) {
    size_t n = strlen(header);
    *size = 8 + n + data_size;
    unsigned char *bytes = malloc(*size);
    for (int b = 0; b < 8; b++) bytes[b] = (unsigned char)((uint64_t)n >> (8 * b));
    memcpy(bytes + 8, header, n);
    for (size_t i = 0; i < data_size; i++) bytes[8 + n + i] = (unsigned char)i;
    return bytes;
}

// Parses header + data; returns the status code, the message in `message`.
static int parse_header_text(const char *header, size_t data_size, char *message, size_t size) {
    size_t n;
    unsigned char *bytes = file_of(header, data_size, &n);
    Safetensors s;
    Status st;
    status_clear(&st);
    int rc = safetensors_parse(bytes, n, "test.safetensors", &s, &st);
    snprintf(message, size, "%s", st.message);
    if (!rc) safetensors_free(&s);
    free(bytes);
    return rc;
}

static void round_trip_keeps_names_shapes_values_and_metadata(void) {
    float weight[6] = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e-30f}, bias[2] = {7.0f, -8.0f};
    SafetensorsOutput tensors[2] = {{"dense1.weight", {2, {2, 3}}, weight},
                                    {"dense1.bias", {1, {2}}, bias}};
    SafetensorsEntry metadata[1] = {{"epoch", "3"}};
    char *bytes = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&bytes, &size);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(safetensors_write(out, tensors, 2, metadata, 1, "mem", &st), 0);
    fclose(out);
    uint64_t header = 0;
    for (int b = 7; b >= 0; b--) header = header << 8 | (unsigned char)bytes[b];
    CHECK_INT_EQ(header % 8, 0);
    CHECK_INT_EQ(size, 8 + header + 4 * 8);
    Safetensors s;
    CHECK_INT_EQ(safetensors_parse((unsigned char *)bytes, size, "mem", &s, &st), 0);
    CHECK_INT_EQ(s.count, 2);
    const SafetensorsTensor *w = safetensors_find(&s, "dense1.weight");
    CHECK(w != NULL);
    if (w) {
        CHECK_INT_EQ(w->shape.rank, 2);
        CHECK_INT_EQ(w->shape.dims[1], 3);
        float values[6];
        safetensors_copy_f32(w, values);
        CHECK(memcmp(values, weight, sizeof weight) == 0);
    }
    CHECK_CONTAINS(safetensors_metadata(&s, "epoch"), "3");
    CHECK(safetensors_metadata(&s, "absent") == NULL);
    safetensors_free(&s);
    free(bytes);
}

typedef struct BadCase {
    const char *header;
    size_t data_size;
    const char *message;  // part of the error
} BadCase;

static void malformed_headers_are_refused(void) {
    static const BadCase cases[] = {
        {"[1,2]", 0, "not a JSON object"},
        {"{\"a\":", 0, "not valid JSON"},
        {"{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2,
         "tensor 'a' is F16; trainer reads F32 weights only"},
        {"{\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8,
         "dtype other than F32"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 4, "data_offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "data_offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0.5,4.5]}}", 8, "data_offsets"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[65536,65536,65536,65536],"
         "\"data_offsets\":[0,0]}}", 0, "shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "overlaps"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "gap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "less than all"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "twice"},
        {"{\"__metadata__\":{\"k\":1}}", 0, "not a string"},
        {"{\"__metadata__\":[]}", 0, "not a JSON object"},
        {"{\"a\":7}", 0, "not a JSON object"},
        {"{\"a\\u001b[2J\":7}", 0, "a\\x1b[2J"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char message[1024];
        int rc = parse_header_text(cases[i].header, cases[i].data_size, message, sizeof message);
        CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
        CHECK_CONTAINS(message, cases[i].message);
        CHECK(strchr(message, 0x1b) == NULL);
    }
}

static void lengths_are_checked_before_parsing(void) {
    unsigned char short_file[5] = {0};
    unsigned char huge[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'};
    Safetensors s;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(safetensors_parse(short_file, sizeof short_file, "f", &s, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(safetensors_parse(huge, sizeof huge, "f", &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "header length is 9223372036854775807 bytes, more than the 8 "
                               "bytes");
    // Its 8 bytes hold NULs, which once passed for text (strchr finds the string's end).
    unsigned char nuls[16] = {0, 0, 0, 0, 0, 0, 0, 0x40, '{', '}'};
    CHECK_INT_EQ(safetensors_parse(nuls, sizeof nuls, "f", &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "header length is 4611686018427387904 bytes");
    char message[256];
    CHECK_INT_EQ(parse_header_text("{}", 0, message, sizeof message), 0);
    CHECK_INT_EQ(parse_header_text("{}      ", 0, message, sizeof message), 0);  // padded
}

// A model file given as the weights: its first 8 bytes are text, not a length.
static void text_is_named_as_such(void) {
    const char text[] = "# models/mlp.model\ninput shape=784\n";
    Safetensors s;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(safetensors_parse((const unsigned char *)text, sizeof text - 1, "m.model", &s,
                                   &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "not a safetensors file: it starts with text ('# models/mlp.mod");
    CHECK_CONTAINS(st.hint, "a model file (.model) comes first");
}

int main(void) {
    round_trip_keeps_names_shapes_values_and_metadata();
    malformed_headers_are_refused();
    lengths_are_checked_before_parsing();
    text_is_named_as_such();
    return test_exit_code("test_safetensors");
}
