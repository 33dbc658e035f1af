// libFuzzer target for loading a checkpoint: arbitrary bytes, as a file, through the
// safetensors reader and, when it accepts them, into a small model with Adam state on the CPU
// the three ways a file is loaded: resuming (checkpoint_load_resume_parsed: metadata read as
// numbers, tensors compared by name and shape with the model's, values copied in, NaN and
// infinity found), eval's and predict's weights (checkpoint_load_weights, with the metadata of
// how inputs were fed) and --init-from (checkpoint_init_from: the tensors that match). The
// header-only reader (safetensors_read_header, which train --resume reads the run's inputs
// with before the data load) must agree with the whole read: the same refusal in the same
// words, or the same tensors and metadata without their bytes. Whatever the bytes: no crash,
// no undefined behaviour, and a refusal is bad input said in words, with no raw escape byte
// from the file in it, nor in the tensor names reported.
#include "fuzz_files.h"  // first: it sets _POSIX_C_SOURCE

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/checkpoint.h"
#include "core/device.h"
#include "core/optimizer.h"
#include "models/model_file.h"

// The model the seeds in corpus/checkpoint/ were written for.
static const char model_text[] = "input shape=4\n"
                                 "dense units=3 act=relu\n"
                                 "dense units=2\n"
                                 "loss softmax_cross_entropy\n"
                                 "optimizer adam lr=0.01\n"
                                 "train batch=2 epochs=1 seed=1\n";

typedef struct Target {
    ModelFile file;
    Graph graph;
    RunConfig config;
    Device device;
} Target;

// Built once: the graph outlives every input, as a resumed run's would.
static Target *target_once(void) {
    static Target target;
    static int ready = 0;
    if (ready) return &target;
    Status st;
    status_clear(&st);
    DeviceOptions options = {.spec = "cpu", .threads = 1};
    char notice[256];
    if (model_file_parse_text("fuzz.model", model_text, &target.file, &st) ||
        graph_build(&target.file, &target.graph, &target.config, &st) ||
        device_open(&options, &target.device, notice, sizeof notice, &st) ||
        graph_init_params(&target.graph, target.device.backend, &target.device.alloc, 1, &st) ||
        optimizer_prepare(&target.graph, &target.config.optimizer, target.device.backend,
                          &target.device.alloc, &st))
        abort();  // the harness itself is broken: the model above must build
    ready = 1;
    return &target;
}

static void abort_unless_same_status(int rc, const Status *st, int other_rc,
                                     const Status *other) {
    if (rc != other_rc || strcmp(st->message, other->message) || strcmp(st->hint, other->hint))
        abort();
}

// The header-only read of `path` against the whole read `whole` (its code rc, its status
// st), and the inputs a resume reads from each.
static void check_header_read(const char *path, int rc, const Safetensors *whole,
                              const Status *st) {
    Safetensors header;
    Status header_st;
    status_clear(&header_st);
    abort_unless_same_status(rc, st, safetensors_read_header(path, &header, &header_st),
                             &header_st);
    if (rc) return;
    if (header.count != whole->count || header.metadata_count != whole->metadata_count) abort();
    for (int i = 0; i < whole->count; i++)
        if (strcmp(header.tensors[i].name, whole->tensors[i].name) ||
            !shape_equal(&header.tensors[i].shape, &whole->tensors[i].shape) ||
            header.tensors[i].bytes)
            abort();
    for (int i = 0; i < whole->metadata_count; i++)
        if (strcmp(header.metadata[i].key, whole->metadata[i].key) ||
            strcmp(header.metadata[i].value, whole->metadata[i].value))
            abort();
    LoadedInputs from_whole, from_header;
    Status whole_inputs_st, header_inputs_st;
    status_clear(&whole_inputs_st);
    status_clear(&header_inputs_st);
    int inputs_rc = checkpoint_inputs_read(whole, path, &from_whole, &whole_inputs_st);
    abort_unless_same_status(inputs_rc, &whole_inputs_st,
                             checkpoint_inputs_read(&header, path, &from_header,
                                                    &header_inputs_st),
                             &header_inputs_st);
    if (!inputs_rc && (from_whole.resize_height != from_header.resize_height ||
                       from_whole.resize_width != from_header.resize_width ||
                       from_whole.class_count != from_header.class_count))
        abort();
    checkpoint_inputs_free(&from_whole);
    checkpoint_inputs_free(&from_header);
    safetensors_free(&header);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc && (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b))) abort();
}

// The paths that read the file themselves: eval's and predict's weights, and --init-from.
static void load_from_file(Target *t, const char *path) {
    CheckpointLoaded loaded;
    Status st;
    status_clear(&st);
    int rc = checkpoint_load_weights(&t->graph, t->device.backend, path, &loaded, &st);
    check_refusal(rc, &st);
    if (!rc && (strchr(loaded.nonfinite, 0x1b) || strchr(loaded.largest_value_tensor, 0x1b)))
        abort();
    if (!rc) checkpoint_loaded_free(&loaded);
    int count = 0;
    char skipped[512];
    status_clear(&st);
    rc = checkpoint_init_from(&t->graph, t->device.backend, path, &count, skipped,
                              sizeof skipped, &st);
    check_refusal(rc, &st);
    if (!rc && strchr(skipped, 0x1b)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Target *t = target_once();
    const char *path = fuzz_write("fuzz.safetensors", data, size);
    Safetensors file;
    Status st;
    status_clear(&st);
    int rc = safetensors_read_file(path, &file, &st);
    check_header_read(path, rc, &file, &st);
    if (rc) return 0;
    CheckpointLoaded loaded;
    rc = checkpoint_load_resume_parsed(&t->graph, &t->config.optimizer, t->device.backend, &file,
                                       path, &loaded, &st);
    check_refusal(rc, &st);
    // The metadata eval and predict read: normalization and class names.
    LoadedInputs inputs;
    status_clear(&st);
    rc = checkpoint_inputs_read(&file, path, &inputs, &st);
    safetensors_free(&file);
    check_refusal(rc, &st);
    if (!rc) checkpoint_inputs_free(&inputs);
    load_from_file(t, path);
    return 0;
}
