// One way to open a run of a model: train, eval, predict, check and bench train all open
// theirs here, from the model (core/run.h's run_build_model) and the options
// core/run_options.h resolved. run_open, in order:
//   1. opens the devices the options name (one per --gpus entry, else one the replicas
//      share) and checks what they allow (levers, layout, --replicas);
//   2. train: the collective and CUDA Graph choices against them;
//   3. decides the precision on each device (precision_check) and sets replica 0's
//      16-bit storage and layouts (graph_set_storage, graph_set_layouts);
//   4. builds the other replicas' graphs, fused, stored and laid out alike;
//   5. eval, predict: initialises the parameters and loads the weights file; bench train:
//      initialises them from the seed and prepares the optimizer's state.
// Train initialises its parameters once the data are read (run_init_params); the training
// loop allocates per batch. Nothing here prints: lines for the user go through the
// setup's RunNotice callbacks.
#ifndef TRAINER_RUN_H
#define TRAINER_RUN_H

#include "core/batch_auto.h"
#include "core/checkpoint.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/layer.h"
#include "core/run_options.h"

typedef struct RunSetup {
    RunPurpose purpose;
    const ModelFile *file;     // what the other replicas' graphs are built from
    const RunOptions *options;
    // Memory limit and mode, and threads; the spec, precision, ordinal, levers and layout
    // come from options.
    DeviceOptions device;
    RunConfig *config;
    const char *weights;       // eval, predict: the file to load
    RunNotice notice;          // notices for the user
    RunNotice fallback;        // "using the CPU; no usable GPU: ..." (--device auto)
    // check, on a CPU no --device named: a precision the CPU lacks is not refused but kept
    // in *refusal, and the graph stored as asked, so the plan stays the GPU's.
    int keep_refusal;
    Status *refusal;
} RunSetup;

typedef struct Run {
    RunPurpose purpose;
    int count;                 // replicas
    Graph graphs[RUN_MAX_REPLICAS];
    Graph *graph_list[RUN_MAX_REPLICAS];
    Device devices[RUN_MAX_REPLICAS];
    Device *device_list[RUN_MAX_REPLICAS];
    int graphs_built, devices_open;
    // The batch the options resolved (RunOptions.batch); train's config->train.batch may
    // change after (--batch auto, a resume).
    int batch;
    int batch_auto;            // --batch auto: still to be chosen (run_choose_batch)
    Precision precision;       // what replica 0's GEMMs and convolutions compute in
    CheckpointLoaded loaded;   // eval, predict: what the weights file records
    int32_t *labels;           // run_allocate's batch of class 0: the loss needs labels
} Run;

// The model file at `path` read and built (graph_build) into *file, *g and *config; the
// activations unfused with no_fuse. Freed by the caller (or by run_close once run_open
// took *g).
int run_build_model(const char *path, int no_fuse, ModelFile *file, Graph *g,
                    RunConfig *config, Status *st);

// Opens the run of `first` (built by run_build_model; the run takes it, also on failure).
// On failure what was opened stays in *run for the caller to read (which devices opened)
// and run_close to free.
int run_open(Run *run, const RunSetup *setup, Graph *first, Status *st);

// Each replica's parameters initialised from `seed` on its device (train, after its data).
int run_init_params(Run *run, uint64_t seed, Status *st);

// --batch auto: the largest batch per replica the memory plan and trial steps allow on
// replica 0's device (in its share of it for the `*shared` replicas there), times the
// replicas, at most the training set, into config->train.batch.
int run_choose_batch(Run *run, RunConfig *config, const Dataset *train, const Dataset *test,
                     BatchChoice *choice, int *shared, Status *st);

// --resume: every replica's parameters and optimizer state from the checkpoint at `path`,
// its seed, batch and place into config (they decide the data order), what it records of its
// inputs into *resumed (the caller frees it); what changed since is said through `notice`.
int run_resume(Run *run, RunConfig *config, const char *path, LoadedInputs *resumed,
               const RunNotice *notice, Status *st);
// --init-from: the parameters that match by name and shape from `path`, the rest kept fresh.
int run_init_from(Run *run, const char *path, const RunNotice *notice, Status *st);

// The forward pass of n samples (`images`, n rows of the input's size) through replica
// 0, allocated for at most `batch`: their logits into `scores` (n rows of the classes).
int run_allocate(Run *run, int batch, Status *st);
int run_forward_batch(Run *run, const float *images, int n, int sync_check, float *scores,
                      Status *st);

// What `trainer train --layout nhwc` would lay out NHWC on a GPU, for check: the layers of
// the NHWC trunk (consecutive in the table), the layer converting the input into it and the
// one copying images back into NCHW order ("" when none). `g` is laid out for NHWC to see,
// then back as `here` says (graph_set_layouts), which the plan was made for.
typedef struct NhwcPreview {
    int count;
    char first[LAYER_NAME_MAX], last[LAYER_NAME_MAX];
    char converts[LAYER_NAME_MAX], reorders[LAYER_NAME_MAX];
} NhwcPreview;
int run_preview_nhwc(Graph *g, int here, NhwcPreview *out, Status *st);

void run_close(Run *run);

#endif
