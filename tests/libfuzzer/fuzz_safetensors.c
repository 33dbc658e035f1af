// libFuzzer target for the safetensors reader (data/safetensors.c), which reads checkpoints
// and weights files people download and pass around. Whatever the bytes: no crash, no read
// outside them, no leak, no undefined behaviour (the build adds ASan and UBSan), and a
// refusal is STATUS_BAD_INPUT with a message; an accepted file's tensors are all readable.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "data/safetensors.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Safetensors s;
    Status st;
    status_clear(&st);
    int rc = safetensors_parse(data, size, "fuzz.safetensors", &s, &st);
    if (rc == 0) {
        use_accepted(&s);
        safetensors_free(&s);
    } else if (rc != STATUS_BAD_INPUT || !st.message[0] || strchr(st.message, 0x1b)) {
        abort();  // a refusal must be bad input, said in words, with no raw escape byte
    }
    return 0;
}
