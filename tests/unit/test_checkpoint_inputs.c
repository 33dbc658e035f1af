// core/checkpoint_inputs: class names that are not UTF-8 are recorded with \xNN for their
// other bytes (the header stays one Python's safetensors opens) and read back so; a
// class_names value with bytes after its JSON array is refused, not read as the array. The
// resize and the held-out split's limit order read back as written; a file without them
// (written before they were recorded) reads as no resize and a stratified limit, and a
// value that does not parse is refused naming the key. train --resume reads them from the
// checkpoint's header alone, before the data load, leaving its tensors for the resume; an
// empty --resume file is refused as empty. A test_accuracy that is not a number from 0 to 1
// is refused both where a resume reads it and where a run reads its folder's best so far.
#define _POSIX_C_SOURCE 200809L  // open_memstream, mkdtemp, ftruncate

#include "check.h"
#include "core/checkpoint.h"
#include "core/checkpoint_inputs.h"
#include "core/checkpoint_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// The short entries checkpoint_save writes for `in`, read back into *loaded.
static int short_entries_round_trip(const CheckpointInputs *in, LoadedInputs *loaded,
                                    Status *st) {
    CheckpointInputsEntry entries[CHECKPOINT_INPUTS_SHORT_KEYS];
    int count = checkpoint_inputs_short_entries(in, entries);
    SafetensorsEntry metadata[CHECKPOINT_INPUTS_SHORT_KEYS];
    for (int i = 0; i < count; i++)
        metadata[i] = (SafetensorsEntry){(char *)entries[i].key, entries[i].value};
    Safetensors s = {0};
    char *bytes = NULL;
    int rc = round_trip(metadata, count, &s, &bytes);
    if (!rc) rc = checkpoint_inputs_read(&s, "mem", loaded, st);
    safetensors_free(&s);
    free(bytes);
    return rc;
}

static void resize_and_limit_order_read_back(void) {
    CheckpointInputs in = {.resize_height = 28, .resize_width = 32,
                           .held_out = {.fraction = 0.25, .seed = 9, .train_limit = 200,
                                        .limit_order = LIMIT_FIRST, .samples = 200}};
    LoadedInputs loaded;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(short_entries_round_trip(&in, &loaded, &st), 0);
    CHECK_INT_EQ(loaded.resize_height, 28);
    CHECK_INT_EQ(loaded.resize_width, 32);
    CHECK_INT_EQ(loaded.held_out.limit_order, LIMIT_FIRST);
    CHECK_INT_EQ(loaded.held_out.train_limit, 200);
    CHECK(held_out_same(&loaded.held_out, &in.held_out));
    HeldOutSplit stratified = in.held_out;
    stratified.limit_order = LIMIT_STRATIFIED;
    CHECK(!held_out_same(&loaded.held_out, &stratified));
    char text[160];
    held_out_describe(&in.held_out, text, sizeof text);
    CHECK_CONTAINS(text, "of 200 training samples (--train-limit, --limit-order first)");
    // Without a limit the order draws nothing: the same split either way.
    HeldOutSplit whole = {.fraction = 0.25, .seed = 9, .limit_order = LIMIT_FIRST};
    HeldOutSplit whole_stratified = {.fraction = 0.25, .seed = 9};
    CHECK(held_out_same(&whole, &whole_stratified));
    checkpoint_inputs_free(&loaded);
    // No resize is written as none, and read as none.
    CheckpointInputs plain = {.held_out = {.fraction = 0}};
    CheckpointInputsEntry entries[CHECKPOINT_INPUTS_SHORT_KEYS];
    int count = checkpoint_inputs_short_entries(&plain, entries);
    CHECK_INT_EQ(count, 2);
    CHECK(strcmp(entries[0].key, "resize") == 0 && strcmp(entries[0].value, "none") == 0);
    CHECK_INT_EQ(short_entries_round_trip(&plain, &loaded, &st), 0);
    CHECK_INT_EQ(loaded.resize_height, 0);
    CHECK_INT_EQ(loaded.resize_recorded, 1);  // a resume refuses a --resize against it
    checkpoint_inputs_free(&loaded);
}

// Metadata of a file written before the resize and the limit order were recorded.
static void files_without_the_keys_read_as_before(void) {
    SafetensorsEntry metadata[] = {{"val_split", "0.25"}, {"val_split_seed", "9"},
                                   {"train_limit", "200"}};
    Safetensors s;
    char *bytes = NULL;
    CHECK_INT_EQ(round_trip(metadata, 3, &s, &bytes), 0);
    LoadedInputs loaded;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(checkpoint_inputs_read(&s, "mem", &loaded, &st), 0);
    CHECK_INT_EQ(loaded.resize_height, 0);
    CHECK_INT_EQ(loaded.resize_width, 0);
    CHECK_INT_EQ(loaded.resize_recorded, 0);  // says nothing either way
    CHECK_INT_EQ(loaded.held_out.limit_order, LIMIT_STRATIFIED);
    CHECK_INT_EQ(loaded.held_out.train_limit, 200);
    // Its run may have given --limit-order first: a resume or eval that does is not told
    // it draws another split.
    HeldOutSplit first = {.fraction = 0.25, .seed = 9, .train_limit = 200,
                          .limit_order = LIMIT_FIRST};
    CHECK(held_out_same(&loaded.held_out, &first));
    CHECK(held_out_same(&first, &loaded.held_out));
    checkpoint_inputs_free(&loaded);
    safetensors_free(&s);
    free(bytes);
}

// One metadata entry's value refused, the message naming the key.
static void refused(const char *key, const char *value) {
    SafetensorsEntry metadata[] = {{"val_split", "0.25"}, {"val_split_seed", "9"},
                                   {"train_limit", "200"}, {(char *)key, (char *)value}};
    Safetensors s;
    char *bytes = NULL;
    CHECK_INT_EQ(round_trip(metadata, 4, &s, &bytes), 0);
    LoadedInputs loaded;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(checkpoint_inputs_read(&s, "w.safetensors", &loaded, &st), STATUS_BAD_INPUT);
    char expected[80];
    snprintf(expected, sizeof expected, "checkpoint metadata '%s'", key);
    CHECK_CONTAINS(st.message, expected);
    CHECK_CONTAINS(st.file, "w.safetensors");
    safetensors_free(&s);
    free(bytes);
}

static void malformed_values_are_refused(void) {
    const char *resizes[] = {"28x", "x28", "28", "0x28", "28x0", "28x28x", " 28x28", "+28x28",
                             "28x+28", "28X28", "65536x1", "99999999999999999999x1", "", "Model"};
    for (size_t i = 0; i < sizeof resizes / sizeof *resizes; i++) refused("resize", resizes[i]);
    refused("train_limit_order", "last");
    refused("train_limit_order", "");
}

// A checkpoint whose one tensor is 2 TiB, as a sparse file: its inputs are read (more memory
// than any machine has, were the whole file read) and its tensor left unread.
static void a_resume_reads_its_inputs_from_the_header_alone(void) {
    static const char header[] = "{\"__metadata__\":{\"resize\":\"28x32\"},\"w\":{\"dtype\":"
                                 "\"F32\",\"shape\":[131072,4194304],\"data_offsets\":"
                                 "[0,2199023255552]}}";
    char folder[] = "/tmp/trainer-test-inputs-XXXXXX", path[64];
    CHECK(mkdtemp(folder) != NULL);
    snprintf(path, sizeof path, "%s/step-0000000001.safetensors", folder);
    FILE *f = fopen(path, "wb");
    unsigned char length[8] = {sizeof header - 1};
    CHECK(f && fwrite(length, 1, 8, f) == 8 && fwrite(header, 1, sizeof header - 1, f) ==
                                                   sizeof header - 1);
    if (f && ftruncate(fileno(f), (off_t)(8 + sizeof header - 1) + (1LL << 41)) != 0) {
        perror("ftruncate (a filesystem without sparse files of 2 TiB?): not checked");
        fclose(f);
        f = NULL;
    }
    if (f) {
        fclose(f);
        ResumeSource resume = {.given = folder};
        LoadedInputs loaded;
        Status st;
        status_clear(&st);
        int rc = checkpoints_read_resumed_inputs(&resume, &loaded, &st);
        CHECK_INT_EQ(rc, 0);
        if (rc) fprintf(stderr, "  (%s)\n", st.message);
        CHECK(strcmp(resume.file, path) == 0);
        CHECK_INT_EQ(loaded.resize_height, 28);
        CHECK_INT_EQ(loaded.resize_width, 32);
        checkpoint_inputs_free(&loaded);
    }
    unlink(path);
    rmdir(folder);
}

// --resume of an empty file is refused as that, naming it, not as a folder that cannot be
// opened (it once said: cannot open the checkpoint folder: Not a directory).
static void an_empty_resume_file_is_refused_as_empty(void) {
    char folder[] = "/tmp/trainer-test-inputs-XXXXXX", path[64];
    CHECK(mkdtemp(folder) != NULL);
    snprintf(path, sizeof path, "%s/empty.safetensors", folder);
    FILE *f = fopen(path, "wb");
    CHECK(f && fclose(f) == 0);
    ResumeSource resume = {.given = path};
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(checkpoints_resume_file(&resume, &st), STATUS_BAD_INPUT);
    CHECK(strcmp(st.file, path) == 0);
    CHECK(strcmp(st.message, "the checkpoint file is empty (0 bytes)") == 0);
    CHECK_CONTAINS(st.hint, "pass --resume the folder given to --checkpoint, or a checkpoint "
                            "file a run wrote");
    CHECK(!resume.found);
    unlink(path);
    rmdir(folder);
}

// The metadata a step file records of its place, with `accuracy` as its test_accuracy.
static void place_metadata(const char *accuracy, SafetensorsEntry metadata[6]) {
    static const char *keys[] = {"epoch", "step_in_epoch", "optimizer_steps", "seed", "batch"};
    static const char *values[] = {"1", "0", "3", "1", "2"};
    for (int i = 0; i < 5; i++)
        metadata[i] = (SafetensorsEntry){(char *)keys[i], (char *)values[i]};
    metadata[5] = (SafetensorsEntry){"test_accuracy", (char *)accuracy};
}

// A resume reads the place before the tensors: a graph without layers will do.
static void a_resume_refuses_an_accuracy_that_is_not_one(void) {
    const char *bad[] = {"0.9x", "", "x", "nan", "inf", "1.5", "-0.5", " 0.5z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        SafetensorsEntry metadata[6];
        place_metadata(bad[i], metadata);
        Safetensors s;
        char *bytes = NULL;
        CHECK_INT_EQ(round_trip(metadata, 6, &s, &bytes), 0);
        Graph g;
        memset(&g, 0, sizeof g);
        CheckpointLoaded loaded;
        Status st;
        status_clear(&st);
        CHECK_INT_EQ(checkpoint_load_resume_parsed(&g, NULL, NULL, &s, "s.safetensors", &loaded,
                                                   &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "checkpoint metadata 'test_accuracy' is ");
        CHECK_CONTAINS(st.message, "expected a number from 0 to 1");
        CHECK(strcmp(st.file, "s.safetensors") == 0);
        CHECK_CONTAINS(st.hint, "resume from another checkpoint");
        safetensors_free(&s);
        free(bytes);
    }
}

// best.safetensors in a new folder holding `accuracy` (NULL: no test_accuracy), read back.
static int best_accuracy_of(const char *accuracy, double *value, Status *st) {
    char folder[] = "/tmp/trainer-test-best-XXXXXX", path[64];
    CHECK(mkdtemp(folder) != NULL);
    snprintf(path, sizeof path, "%s/best.safetensors", folder);
    SafetensorsEntry metadata[6];
    place_metadata(accuracy, metadata);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) CHECK_INT_EQ(safetensors_write(f, NULL, 0, metadata, accuracy ? 6 : 5, path, st), 0);
    if (f) fclose(f);
    status_clear(st);
    int rc = checkpoint_best_accuracy(folder, value, st);
    unlink(path);
    rmdir(folder);
    return rc;
}

static void a_best_accuracy_that_is_not_one_is_refused(void) {
    double value = 0;
    Status st;
    CHECK_INT_EQ(best_accuracy_of("0.75", &value, &st), 0);
    CHECK(value == 0.75);
    CHECK_INT_EQ(best_accuracy_of(NULL, &value, &st), 0);
    CHECK(value == -1.0);
    // Read as 0.99 once: no later epoch would have counted as the best.
    CHECK_INT_EQ(best_accuracy_of("0.99\x1b[2J", &value, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "checkpoint metadata 'test_accuracy' is 0.99\\x1b[2J; expected "
                               "a number from 0 to 1");
    CHECK_CONTAINS(st.file, "/best.safetensors");
    CHECK_CONTAINS(st.hint, "best.safetensors out of the folder");
    CHECK_INT_EQ(best_accuracy_of("2", &value, &st), STATUS_BAD_INPUT);
}

int main(void) {
    a_resume_reads_its_inputs_from_the_header_alone();
    an_empty_resume_file_is_refused_as_empty();
    names_not_utf8_are_recorded_as_hex();
    bytes_after_the_names_are_refused();
    resize_and_limit_order_read_back();
    files_without_the_keys_read_as_before();
    malformed_values_are_refused();
    a_resume_refuses_an_accuracy_that_is_not_one();
    a_best_accuracy_that_is_not_one_is_refused();
    return test_exit_code("test_checkpoint_inputs");
}
