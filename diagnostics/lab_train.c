// The lab scenarios trainer diagnoses with no GPU at all, on models and datasets made up
// in memory: training out of memory under a limit, a label past the model's classes, a
// dtype mismatch. What a framework shows for each comes with it.
#include "diagnostics/lab.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "core/run.h"
#include "core/train.h"

// Clears r for a scenario to fill.
static void start(LabResult *r, const char *framework) {
    memset(r, 0, sizeof *r);
    status_clear(&r->diagnosis);
    r->framework = framework;
    r->bad_index = -1;
}

// ---- oom: the training half (the raw half is in lab.c) ----------------------------------

// A convolution whose output (64 channels of 28x28: 196 KiB a sample, twice with its
// gradient) cannot fit a 256 KiB limit even for one sample, while the parameters (5 KiB)
// and the data do: the first step runs out of memory, tries a pass of one sample (what
// the memory plan falls back to when nothing fits), and only then gives up.
const char lab_oom_model[] = "input shape=1x28x28 dtype=f32\n"
                             "conv2d filters=64 kernel=3 pad=same act=relu\n"
                             "global_avgpool\n"
                             "dense units=10\n"
                             "loss softmax_cross_entropy\n"
                             "optimizer sgd lr=0.1\n"
                             "train batch=32 epochs=1 seed=1\n";
const char lab_oom_limit[] = "256K";

// A dataset made up in memory: `count` random samples of channels x height x width bytes
// with the labels given (or i % 10).
static int make_dataset(Dataset *ds, const char *name, int count, int channels, int height,
                        int width, const uint8_t *labels, Status *st) {
    memset(ds, 0, sizeof *ds);
    size_t sample = (size_t)channels * height * width;
    ds->images = malloc((size_t)count * sample);
    ds->labels = malloc((size_t)count);
    if (!ds->images || !ds->labels) {
        dataset_free(ds);
        return status_out_of_host_memory(st, (size_t)count * (sample + 1), "for %s", name);
    }
    snprintf(ds->source, sizeof ds->source, "%s", name);
    ds->count = count;
    ds->channels = channels;
    ds->height = height;
    ds->width = width;
    Rng rng;
    rng_seed(&rng, 7);
    for (size_t i = 0; i < (size_t)count * sample; i++)
        ds->images[i] = (uint8_t)rng_below(&rng, 256);
    for (int i = 0; i < count; i++) {
        ds->labels[i] = labels ? labels[i] : (uint8_t)(i % 10);
        if (ds->labels[i] > ds->label_max) ds->label_max = ds->labels[i];
    }
    return 0;
}

// The run opened as `trainer train --device cpu --memory-limit` opens one (core/run.h).
static int train_until_out_of_memory(const TrainHooks *hooks, Status *st) {
    ModelFile file;
    TRY(model_file_parse_text("lab-oom.model", lab_oom_model, &file, st));
    Graph g;
    RunConfig config;
    int rc = graph_build(&file, &g, &config, st);
    if (rc) {
        model_file_free(&file);
        return rc;
    }
    Dataset ds;
    rc = make_dataset(&ds, "the lab's random images", 64, 1, 28, 28, NULL, st);
    RunRequest request = {.device = "cpu", .purpose = RUN_TRAIN, .command = "lab"};
    RunOptions options;
    if (!rc) rc = run_options_resolve(&config, &request, NULL, &options, st);
    RunSetup setup = {.purpose = RUN_TRAIN, .file = &file, .options = &options,
                      .device = {.memory_limit = lab_oom_limit, .mode = ALLOC_GROW},
                      .config = &config};
    Run run;
    memset(&run, 0, sizeof run);
    if (!rc) rc = run_open(&run, &setup, &g, st);
    else graph_free(&g);
    if (!rc) rc = graph_check_dataset(run.graph_list[0], &ds, "the lab's random images", st);
    if (!rc) rc = run_init_params(&run, 1, st);
    if (!rc) rc = train_model(run.graph_list[0], &config, run.device_list[0], &ds, NULL, hooks,
                              NULL, st);
    run_close(&run);
    dataset_free(&ds);
    model_file_free(&file);
    return rc;
}

void lab_oom_train(LabResult *r, void (*on_notice)(void *user, const char *line), void *user) {
    TrainHooks hooks = {.user = user, .on_notice = on_notice};
    status_clear(&r->diagnosis);
    r->diagnosed = train_until_out_of_memory(&hooks, &r->diagnosis) != 0;
    // The CPU's limit stands in for a full GPU here, so the diagnosis links the framework's
    // entry, which a CPU out-of-memory outside the lab does not (core/alloc.c).
    if (r->diagnosis.code == STATUS_OUT_OF_MEMORY && !r->diagnosis.error_name[0])
        snprintf(r->diagnosis.error_name, sizeof r->diagnosis.error_name, "cuda-out-of-memory");
    int raw_failed = !r->raw_ran || r->raw.triggered;
    r->code = raw_failed && r->diagnosed && r->diagnosis.code == STATUS_OUT_OF_MEMORY
                  ? LAB_SHOWN
                  : LAB_WENT_WRONG;
}

// ---- bad-label --------------------------------------------------------------------------

static const char label_model[] = "input shape=16 dtype=f32\n"
                                  "dense units=10\n"
                                  "loss softmax_cross_entropy\n";

const unsigned char lab_bad_labels[LAB_BAD_LABEL_COUNT] = {3, 1, 4, 1, 5, 9, 12, 6};

// r->bad_index and bad_label: the first of lab_bad_labels a model of `classes` classes
// cannot have.
static void find_bad_label(LabResult *r, int classes) {
    r->classes = classes;
    for (int i = 0; i < LAB_BAD_LABEL_COUNT; i++) {
        if (lab_bad_labels[i] < classes) continue;
        r->bad_index = i;
        r->bad_label = lab_bad_labels[i];
        return;
    }
}

// Parses and builds `model`: 0 with *file and *g to free, or nonzero with both freed.
static int build_model(const char *name, const char *model, ModelFile *file, Graph *g,
                       Status *st) {
    TRY(model_file_parse_text(name, model, file, st));
    int rc = graph_build(file, g, NULL, st);
    if (rc) model_file_free(file);
    return rc;
}

void lab_bad_label(LabResult *r) {
    start(r, "/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_"
             "kernel_2d: block: [0,0,0], thread: [6,0,0] Assertion `t >= 0 && t < n_classes` "
             "failed.\n"
             "RuntimeError: CUDA error: device-side assert triggered\n"
             "(on the CPU: IndexError: Target 12 is out of bounds.)");
    ModelFile file;
    Graph g;
    if (build_model("lab-bad-label.model", label_model, &file, &g, &r->diagnosis)) {
        r->diagnosed = 1;
        r->code = LAB_WENT_WRONG;
        return;
    }
    Dataset ds;
    int rc = make_dataset(&ds, "the lab dataset", LAB_BAD_LABEL_COUNT, 1, 4, 4, lab_bad_labels,
                          &r->diagnosis);
    if (rc == 0) rc = graph_check_dataset(&g, &ds, "the lab dataset", &r->diagnosis);
    r->diagnosed = rc != 0;
    find_bad_label(r, graph_classes(&g));
    dataset_free(&ds);
    graph_free(&g);
    model_file_free(&file);
    r->code = r->diagnosed && r->diagnosis.code == STATUS_BAD_INPUT ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- dtype-mismatch ---------------------------------------------------------------------

const char lab_dtype_model[] = "input shape=784 dtype=f16\n"
                               "dense units=10\n"
                               "loss softmax_cross_entropy\n";

void lab_dtype_mismatch(LabResult *r) {
    start(r, "RuntimeError: Expected object of scalar type Float but got scalar type Half for "
             "argument #2 'mat2' in call to _th_mm\n"
             "(PyTorch 2.x: RuntimeError: mat1 and mat2 must have the same dtype, but got Half "
             "and Float)");
    ModelFile file;
    if (model_file_parse_text("lab-dtype-mismatch.model", lab_dtype_model, &file,
                              &r->diagnosis)) {
        r->diagnosed = 1;
        r->code = LAB_WENT_WRONG;
        return;
    }
    Graph g;
    r->diagnosed = graph_build(&file, &g, NULL, &r->diagnosis) != 0;
    if (!r->diagnosed) graph_free(&g);
    model_file_free(&file);
    int refused_for_dtype = r->diagnosed && r->diagnosis.code == STATUS_BAD_INPUT &&
                            strstr(r->diagnosis.message, "dtype");
    r->code = refused_for_dtype ? LAB_SHOWN : LAB_WENT_WRONG;
}
