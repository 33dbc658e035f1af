// data/safetensors.c: what the writer writes reads back (names, shapes, values, metadata,
// the header padded so the data starts 8-byte aligned), and every malformed header a
// hostile file could carry is refused with STATUS_BAD_INPUT and a message saying what.
// Each file is also written out and read by safetensors_read_header, which must take and
// refuse exactly what safetensors_read_file does, in the same words, without the bytes.
#define _POSIX_C_SOURCE 200809L  // open_memstream, mkdtemp

#include "check.h"
#include "data/safetensors.h"
#include "data/safetensors_header.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char folder[] = "/tmp/trainer-test-safetensors.XXXXXX";

// Writes `bytes` to a file and reads it whole and by its header alone: the two agree on
// the code, message and hint of a refusal, and on the names, shapes and metadata of what
// they take, where only the whole read has the tensors' bytes.
static void file_readers_agree(const unsigned char *bytes, size_t n) {
    char path[64];
    snprintf(path, sizeof path, "%s/f.safetensors", folder);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0);
    Safetensors whole, header;
    Status whole_st, header_st;
    status_clear(&whole_st);
    status_clear(&header_st);
    int rc = safetensors_read_file(path, &whole, &whole_st);
    CHECK_INT_EQ(safetensors_read_header(path, &header, &header_st), rc);
    CHECK(strcmp(whole_st.message, header_st.message) == 0);
    CHECK(strcmp(whole_st.hint, header_st.hint) == 0);
    if (rc) return;
    CHECK_INT_EQ(header.count, whole.count);
    for (int i = 0; i < whole.count && i < header.count; i++) {
        CHECK(strcmp(header.tensors[i].name, whole.tensors[i].name) == 0);
        CHECK(shape_equal(&header.tensors[i].shape, &whole.tensors[i].shape));
        CHECK(header.tensors[i].bytes == NULL);
    }
    CHECK_INT_EQ(header.metadata_count, whole.metadata_count);
    for (int i = 0; i < whole.metadata_count; i++)
        CHECK_CONTAINS(safetensors_metadata(&header, whole.metadata[i].key),
                       whole.metadata[i].value);
    safetensors_free(&whole);
    safetensors_free(&header);
}

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
// Parses n file bytes (then frees them): the status code, and its message into message.
static int parse_owned_bytes(unsigned char *bytes, size_t n, char *message, size_t size) {
    Safetensors s;
    Status st;
    status_clear(&st);
    int rc = safetensors_parse(bytes, n, "test.safetensors", &s, &st);
    snprintf(message, size, "%s", st.message);
    if (!rc) safetensors_free(&s);
    file_readers_agree(bytes, n);
    free(bytes);
    return rc;
}

static int parse_header_text(const char *header, size_t data_size, char *message, size_t size) {
    size_t n;
    unsigned char *bytes = file_of(header, data_size, &n);
    return parse_owned_bytes(bytes, n, message, size);
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

// Parses `length` bytes of header (NULs allowed) and `data_size` zero bytes of data.
static int parse_header_bytes(const char *header, size_t length, size_t data_size,
                              char *message, size_t size) {
    size_t n = 8 + length + data_size;
    unsigned char *bytes = calloc(1, n);
    for (int b = 0; b < 8; b++) bytes[b] = (unsigned char)((uint64_t)length >> (8 * b));
    memcpy(bytes + 8, header, length);
    return parse_owned_bytes(bytes, n, message, size);
}

#define TENSOR_A "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"
#define TENSOR_A_AND_B TENSOR_A ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}"

// What Python's safetensors (serde_json over UTF-8) refuses and cJSON took: each once loaded.
static void header_bytes_are_as_strict_as_the_reference(void) {
    static const struct {
        const char *header;
        size_t length;  // 0: strlen
        const char *message;
    } cases[] = {
        {"{" TENSOR_A "}x", 0, "goes on after its JSON object ends"},
        {"{" TENSOR_A "}\0", sizeof("{" TENSOR_A "}"), "holds a NUL byte (0x00)"},
        {"{\0" TENSOR_A "}", sizeof("{" TENSOR_A "}"), "holds a NUL byte (0x00), at byte 9 "},
        {"{\"a\0b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
         sizeof("{\"a\0b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}") - 1,
         "holds a NUL byte"},
        {"{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0,
         "holds a NUL written \\u0000"},
        {"{\"__metadata__\":{\"k\":\"v\\u0000\"}," TENSOR_A "}", 0, "\\u0000"},
        {"{\"__metadata__\":{\"k\":\"caf\xe9\"}," TENSOR_A "}", 0,
         "is not UTF-8 (byte 0xe9 starts no UTF-8 character), at byte 33 "},
        {"{\x01" TENSOR_A "}", 0, "control byte 0x01"},
        {"{\"a\x1b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0,
         "control byte 0x1b inside a string"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 0, "bad shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1e0],\"data_offsets\":[0,4]}}", 0, "bad shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 0, "bad shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-0,1],\"data_offsets\":[0,0]}}", 0, "bad shape"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4.0]}}", 0,
         "data_offsets that are not two whole numbers"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char message[1024];
        size_t length = cases[i].length ? cases[i].length : strlen(cases[i].header);
        CHECK_INT_EQ(parse_header_bytes(cases[i].header, length, 4, message, sizeof message),
                     STATUS_BAD_INPUT);
        CHECK_CONTAINS(message, cases[i].message);
    }
    // What the reference takes: white space around the JSON, a field it does not know
    // (whatever its number), and a backslash before "u0000" that is itself escaped.
    static const char *const accepted[] = {
        " {" TENSOR_A "} \t\r\n",
        "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1.5}}",
        "{\"a\\\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
        "{\"__metadata__\":{\"k\":\"caf\xc3\xa9\"}," TENSOR_A "}",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        char message[1024];
        CHECK_INT_EQ(parse_header_bytes(accepted[i], strlen(accepted[i]), 4, message, sizeof message),
                     0);
    }
}

// A header of `count` zero-size tensors, or of one tensor whose shape lists `count` zeros.
static char *many_header(int count, int as_shape, size_t *length) {
    char *text = malloc((size_t)count * 64 + 64);
    size_t n = (size_t)sprintf(text, "{");
    for (int i = 0; i < count; i++)
        n += (size_t)(as_shape ? sprintf(text + n, "%s0", i ? "," : "\"a\":{\"shape\":[")
                               : sprintf(text + n, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],"
                                         "\"data_offsets\":[0,0]}", i ? "," : "", i));
    n += (size_t)sprintf(text + n, as_shape ? "]}}" : "}");
    *length = n;
    return text;
}

// A header of 1.2M zero-size tensors (84 MB) took 1.1 GB and 15 s to refuse: now the count
// is refused before a tree is built.
static void tensor_and_value_counts_are_bounded(void) {
    char message[1024];
    size_t length;
    char *text = many_header(SAFETENSORS_MAX_TENSORS, 0, &length);
    CHECK_INT_EQ(parse_header_bytes(text, length, 0, message, sizeof message), 0);
    free(text);
    text = many_header(SAFETENSORS_MAX_TENSORS + 1, 0, &length);
    CHECK_INT_EQ(parse_header_bytes(text, length, 0, message, sizeof message), STATUS_BAD_INPUT);
    CHECK_CONTAINS(message, "lists more than 65536 tensors; at most 65536 are read");
    free(text);
    text = many_header(SAFETENSORS_MAX_VALUES + 1, 1, &length);
    CHECK_INT_EQ(parse_header_bytes(text, length, 0, message, sizeof message), STATUS_BAD_INPUT);
    CHECK_CONTAINS(message, "lists more than 1048576 JSON values");
    free(text);
}

// A class folder or model path in Latin-1 went into the header raw, and Python's reader
// refused the whole file as not UTF-8.
static void what_is_written_is_utf8(void) {
    float value = 1.0f;
    SafetensorsOutput tensors[1] = {{"w\xe9ight", {1, {1}}, &value}};
    SafetensorsEntry metadata[2] = {{"model_file", "mod\xe8le.model"}, {"k\xff", "caf\xc3\xa9"}};
    char *bytes = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&bytes, &size);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(safetensors_write(out, tensors, 1, metadata, 2, "mem", &st), 0);
    fclose(out);
    Safetensors s;
    CHECK_INT_EQ(safetensors_parse((unsigned char *)bytes, size, "mem", &s, &st), 0);
    CHECK(safetensors_find(&s, "w\\xe9ight") != NULL);
    CHECK_CONTAINS(safetensors_metadata(&s, "model_file"), "mod\\xe8le.model");
    CHECK_CONTAINS(safetensors_metadata(&s, "k\\xff"), "caf\xc3\xa9");  // UTF-8 as it is
    safetensors_free(&s);
    free(bytes);
}

// What safetensors_parse is given apart (short files, lengths, text), and what only the
// file readers check (trainer's old format, tensor bytes cut short), read both ways.
static void header_read_refuses_as_the_whole_read(void) {
    static const struct {
        const char *bytes;
        size_t size;
    } files[] = {
        {"", 0},
        {"\1\0\0\0\0", 5},
        {"\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10},
        {"\0\0\0\0\0\0\0\x40{}", 10},
        {"# models/mlp.model\ninput shape=784\n", 36},
        {"TRNWEIGH\1\0\0\0\0\0\0\0", 16},
        {"\2\0\0\0\0\0\0\0{}", 10},
        {"\2\0\0\0\0\0\0\0{}\0\0\0\0", 14},  // data no tensor covers
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        file_readers_agree((const unsigned char *)files[i].bytes, files[i].size);
    // A tensor's bytes cut short: refused by both, as what it is.
    size_t n;
    unsigned char *bytes = file_of("{" TENSOR_A_AND_B "}", 8, &n);
    for (size_t cut = 0; cut <= 8; cut++) file_readers_agree(bytes, n - cut);
    Safetensors s;
    Status st;
    status_clear(&st);
    char path[64];
    snprintf(path, sizeof path, "%s/f.safetensors", folder);
    CHECK_INT_EQ(safetensors_read_header(path, &s, &st), STATUS_BAD_INPUT);  // cut by 8
    CHECK_CONTAINS(st.message, "has data_offsets that are not two whole numbers (in digits "
                               "alone) within the file's data");
    free(bytes);
    // A folder, and a path that is not there.
    CHECK_INT_EQ(safetensors_read_header(folder, &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "is a folder, not a weights file");
    snprintf(path, sizeof path, "%s/absent.safetensors", folder);
    CHECK_INT_EQ(safetensors_read_header(path, &s, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.hint, "`trainer train MODEL --save FILE` writes one");
}

int main(void) {
    if (!mkdtemp(folder)) {
        perror("mkdtemp");
        return 1;
    }
    round_trip_keeps_names_shapes_values_and_metadata();
    malformed_headers_are_refused();
    lengths_are_checked_before_parsing();
    text_is_named_as_such();
    header_bytes_are_as_strict_as_the_reference();
    tensor_and_value_counts_are_bounded();
    what_is_written_is_utf8();
    header_read_refuses_as_the_whole_read();
    char path[64];
    snprintf(path, sizeof path, "%s/f.safetensors", folder);
    unlink(path);
    rmdir(folder);
    return test_exit_code("test_safetensors");
}
