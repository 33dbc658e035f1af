// core/checkpoint_inputs: class names that are not UTF-8 are recorded with \xNN for their
// other bytes (the header stays one Python's safetensors opens) and read back so; a
// class_names value with bytes after its JSON array is refused, not read as the array.
#define _POSIX_C_SOURCE 200809L  // open_memstream

#include "check.h"
#include "core/checkpoint_inputs.h"

#include <stdlib.h>

// The file checkpoint_save would write for these metadata entries (no tensors), parsed.
static int round_trip(const SafetensorsEntry *metadata, int count, Safetensors *s,
                      char **bytes) {
    size_t size = 0;
    FILE *out = open_memstream(bytes, &size);
    Status st;
    status_clear(&st);
    int rc = safetensors_write(out, NULL, 0, metadata, count, "mem", &st);
    fclose(out);
    return rc ? rc : safetensors_parse((unsigned char *)*bytes, size, "mem", s, &st);
}

static void names_not_utf8_are_recorded_as_hex(void) {
    const char *names[2] = {"b", "caf\xe9"};
    CheckpointInputs in = {.class_count = 2, .class_names = names};
    char *mean = NULL, *std = NULL, *list = NULL;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(checkpoint_inputs_format(&in, &mean, &std, &list, &st), 0);
    CHECK_CONTAINS(list, "[\"b\",\"caf\\\\xe9\"]");
    SafetensorsEntry entry = {"class_names", list};
    Safetensors s;
    char *bytes = NULL;
    CHECK_INT_EQ(round_trip(&entry, 1, &s, &bytes), 0);
    LoadedInputs loaded;
    CHECK_INT_EQ(checkpoint_inputs_read(&s, "mem", &loaded, &st), 0);
    CHECK_INT_EQ(loaded.class_count, 2);
    if (loaded.class_count == 2) CHECK(strcmp(loaded.class_names[1], "caf\\xe9") == 0);
    char written[CHECKPOINT_CLASS_NAME_WRITTEN_MAX];
    checkpoint_class_name_as_written(names[1], written, sizeof written);
    CHECK(strcmp(written, "caf\\xe9") == 0);
    checkpoint_inputs_free(&loaded);
    safetensors_free(&s);
    free(bytes);
    free(list);
}

static void bytes_after_the_names_are_refused(void) {
    SafetensorsEntry entry = {"class_names", "[\"a\",\"b\"]x"};
    Safetensors s;
    char *bytes = NULL;
    CHECK_INT_EQ(round_trip(&entry, 1, &s, &bytes), 0);
    LoadedInputs loaded;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(checkpoint_inputs_read(&s, "mem", &loaded, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "checkpoint metadata 'class_names'");
    safetensors_free(&s);
    free(bytes);
}

int main(void) {
    names_not_utf8_are_recorded_as_hex();
    bytes_after_the_names_are_refused();
    return test_exit_code("test_checkpoint_inputs");
}
