// Checkpoints and weights files: a graph's parameters (and, for a checkpoint, the optimizer
// state and where training stood) in one safetensors file (data/safetensors.h), written
// atomically (base/atomic_file.h). docs/checkpoints.md describes the names and metadata.
#ifndef TRAINER_CHECKPOINT_H
#define TRAINER_CHECKPOINT_H

#include "core/checkpoint_inputs.h"
#include "core/graph.h"
#include "core/run_config.h"
#include "data/safetensors.h"

// Where a run stood when a checkpoint was written: enough to go on as if it never stopped.
// The data order of an epoch depends only on (seed, epoch) and dropout's masks only on
// (seed, optimizer step), so these numbers are the whole RNG and data-order state.
typedef struct CheckpointPlace {
    int epochs_done;        // completed epochs
    int step_in_epoch;      // steps done in the epoch after them (0 at an epoch boundary)
    long optimizer_steps;   // updates applied so far (Adam's bias correction, dropout seeds)
    long seed;              // the run's seed
    int batch;              // samples per step: positions in an epoch count in these
    double test_accuracy;   // after the last completed epoch; < 0 when not measured
    // At an epoch's end (step_in_epoch 0): its evaluation had finished when the file was
    // written. 0 for a step file written before it, or a signal during it; a file that does
    // not say (written before trainer recorded it) reads as 1.
    int epoch_evaluated;
    // The run's optimizer and schedule as optimizer_describe and schedule_describe word
    // them ("" when not recorded), so that a resume can say which settings it changes.
    char optimizer_settings[128];
    char schedule[128];
} CheckpointPlace;

// Parameters, then optimizer state when `optimizer` is not NULL, then metadata (the
// model file's text and hash, `place` and `inputs` when not NULL, trainer's version).
// Atomic.
int checkpoint_save(const Graph *g, const OptimizerConfig *optimizer, const Backend *b,
                    const CheckpointPlace *place, const CheckpointInputs *inputs,
                    const char *path, Status *st);

// What loading found beside the values.
typedef struct CheckpointLoaded {
    int has_place;
    CheckpointPlace place;
    int nonfinite_count;    // tensors holding NaN or infinity
    char nonfinite[512];    // their names, escaped, comma-separated (maybe cut short)
    // The largest |value| among the finite values loaded, and its tensor's name (escaped):
    // what eval names when its loss is not finite although every value is.
    double largest_value;
    char largest_value_tensor[160];
    LoadedInputs inputs;    // normalization, class names, held-out split (not from _parsed)
    // The graph's model text is not the one the file records (model_hash): the tensors
    // match, but an activation, dropout rate or loss may have changed since.
    int model_changed;
} CheckpointLoaded;
void checkpoint_loaded_free(CheckpointLoaded *loaded);

// Weights for eval and predict: every parameter by name and shape, nothing missing or
// extra (optimizer state in the file is ignored). Non-finite values load but are reported.
// out->inputs says how the samples were normalized and the classes named; free out with
// checkpoint_loaded_free.
int checkpoint_load_weights(Graph *g, const Backend *b, const char *path, CheckpointLoaded *out,
                            Status *st);
// Resuming, from a file already read and checked by safetensors_parse (`path` names it in
// errors): parameters and the optimizer's state (already allocated by optimizer_prepare)
// must match exactly, the place must be there, and nothing may be NaN or infinite. The
// file is read once for every replica (run_resume), which also reads out->inputs, how the
// run fed its samples, with checkpoint_inputs_read; the checkpoint fuzz target drives this
// with arbitrary bytes.
int checkpoint_load_resume_parsed(Graph *g, const OptimizerConfig *optimizer, const Backend *b,
                                  const Safetensors *file, const char *path,
                                  CheckpointLoaded *out, Status *st);
// Fine-tuning: parameters that match by name and shape are loaded; `skipped` lists the
// model's others (new or reshaped layers), escaped. Optimizer state is never loaded. A
// loaded tensor holding NaN or infinity is refused (STATUS_BAD_INPUT, naming them), as
// --resume refuses it: the run would diverge at once and blame the learning rate.
int checkpoint_init_from(Graph *g, const Backend *b, const char *path, int *loaded,
                         char *skipped, size_t skipped_size, Status *st);

// ---- a checkpoint folder: step-NNNNNNNNNN.safetensors files and best.safetensors ----

// Creates the folder if needed, removes the *.tmp files a killed run left (*swept says how
// many), and proves it writable with a probe file, so a bad folder fails before step 1.
int checkpoint_folder_prepare(const char *folder, int *swept, Status *st);
// FOLDER/NAME, one slash between them however many FOLDER ends with.
void checkpoint_folder_file(const char *folder, const char *name, char *path, size_t size);
void checkpoint_step_path(const char *folder, long optimizer_steps, char *path, size_t size);
// The step file with the most steps; STATUS_BAD_INPUT when there is none.
int checkpoint_latest(const char *folder, char *path, size_t size, Status *st);
// What a run would find already in `folder`: the newest step file into `path`, or
// best.safetensors when there is no step file; 0 (and path "") when it holds neither or
// does not exist.
int checkpoint_folder_holds(const char *folder, char *path, size_t size);
// The test accuracy recorded in the folder's best.safetensors (its header read) into
// *accuracy; -1 when there is none, or the file is not one the reader takes. A recorded
// value that is not a number from 0 to 1 is refused (STATUS_BAD_INPUT).
int checkpoint_best_accuracy(const char *folder, double *accuracy, Status *st);
// Removes all but the `keep` newest step files (best.safetensors is never removed).
int checkpoint_prune(const char *folder, int keep, Status *st);

#endif
