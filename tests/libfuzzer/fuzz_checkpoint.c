// libFuzzer target for loading a checkpoint: arbitrary bytes through the safetensors reader
// and, when it accepts them, into a small model with Adam state on the CPU the three ways a
// file is loaded: resuming (checkpoint_load_resume_parsed: metadata read as numbers,
// tensors compared by name and shape with the model's, values copied in, NaN and infinity
// found), eval's and predict's weights (checkpoint_load_weights, with the metadata of how
// inputs were fed) and --init-from (checkpoint_init_from: the tensors that match). Whatever
// the bytes: no crash, no undefined behaviour, and a refusal is bad input said in words,
// with no raw escape byte from the file in it, nor in the tensor names reported.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc && (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b))) abort();
}

// The paths that read the file themselves: eval's and predict's weights, and --init-from.
static void load_from_file(Target *t, const uint8_t *data, size_t size) {
    const char *path = fuzz_write("fuzz.safetensors", data, size);
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
    Safetensors file;
    Status st;
    status_clear(&st);
    if (safetensors_parse(data, size, "fuzz.safetensors", &file, &st)) return 0;
    CheckpointLoaded loaded;
    int rc = checkpoint_load_resume_parsed(&t->graph, &t->config.optimizer,
                                           t->device.backend, &file, "fuzz.safetensors",
                                           &loaded, &st);
    check_refusal(rc, &st);
    // The metadata eval and predict read: normalization and class names.
    LoadedInputs inputs;
    status_clear(&st);
    rc = checkpoint_inputs_read(&file, "fuzz.safetensors", &inputs, &st);
    safetensors_free(&file);
    check_refusal(rc, &st);
    if (!rc) checkpoint_inputs_free(&inputs);
    load_from_file(t, data, size);
    return 0;
}
