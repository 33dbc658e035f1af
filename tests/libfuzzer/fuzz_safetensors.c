// libFuzzer target for the safetensors reader (data/safetensors.c), which reads checkpoints
// and weights files people download and pass around. Whatever the bytes: no crash, no read
// outside them, no leak, no undefined behaviour (the build adds ASan and UBSan), and a
// refusal is STATUS_BAD_INPUT with a message; an accepted file's tensors are all readable.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/utf8.h"
#include "data/safetensors.h"
#include "data/safetensors_header.h"

// Touches everything an accepted file promises: every tensor's values, every name, every
// metadata entry, as checkpoint loading would.
static void use_accepted(const Safetensors *s) {
    for (int i = 0; i < s->count; i++) {
        const SafetensorsTensor *t = &s->tensors[i];
        size_t n = shape_numel(&t->shape);
        float *values = malloc(n * sizeof *values + 1);
        if (values) safetensors_copy_f32(t, values);
        free(values);
        if (safetensors_find(s, t->name) != t) abort();
        char escaped[64];
        text_escape(t->name, strlen(t->name), escaped, sizeof escaped);
    }
    for (int i = 0; i < s->metadata_count; i++)
        if (!safetensors_metadata(s, s->metadata[i].key)) abort();
}

// What Python's safetensors demands of a header, checked on every file trainer accepts (it
// once took trailing bytes, NULs, Latin-1 and \u0000 that Python refuses or trainer cannot
// hold): valid UTF-8 with no NUL, no \u0000 escape, nothing but white space after the
// closing brace, and no more tensors than the documented limit.
static void check_header_as_python_would(const uint8_t *data, size_t size, const Safetensors *s) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | data[i];
    if (n > size - 8 || s->count > SAFETENSORS_MAX_TENSORS) abort();
    const uint8_t *h = data + 8;
    for (size_t at = 0; at < n;) {
        uint32_t c;
        int length = utf8_decode(h + at, (size_t)n - at, &c);
        if (!length || c == 0) abort();
        at += (size_t)length;
    }
    size_t end = (size_t)n;
    while (end > 0 && strchr(" \t\r\n", h[end - 1])) end--;
    if (end == 0 || h[end - 1] != '}') abort();
    for (size_t i = 0; i + 6 <= end; i++) {
        if (h[i] != '\\') continue;
        if (memcmp(h + i + 1, "u0000", 5) == 0) abort();
        i++;  // an escaped character, perhaps a backslash
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Safetensors s;
    Status st;
    status_clear(&st);
    int rc = safetensors_parse(data, size, "fuzz.safetensors", &s, &st);
    if (rc == 0) {
        check_header_as_python_would(data, size, &s);
        use_accepted(&s);
        safetensors_free(&s);
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    return 0;
}
