// The training loop and evaluation. Progress and epoch results reach the caller through
// hooks, because core/ never prints: tools/ decides between a progress bar and log lines.
#ifndef TRAINER_TRAIN_H
#define TRAINER_TRAIN_H

#include "core/confusion.h"
#include "core/device.h"
#include "core/graph.h"
#include "data/dataset.h"

typedef struct StepReport {
    int epoch, epochs;          // 1-based
    int step, steps;            // within the epoch, 1-based
    double loss;                // mean training loss so far this epoch
    double samples_per_second;  // this epoch so far
    double epoch_seconds;       // elapsed in this epoch
    long global_step;           // optimizer steps taken in the run, over all epochs
    double accuracy;            // training accuracy so far this epoch
    double lr;                  // the learning rate of the last step (after the schedule)
    size_t memory_in_use, memory_peak;  // replica 0's device, bytes
} StepReport;

typedef struct EvalResult {
    double loss;                // mean over samples
    double accuracy;            // fraction correct
    int samples;
} EvalResult;

typedef struct EpochReport {
    int epoch, epochs;
    // The train figures are over steps first_step..steps of the epoch: first_step is 1 but
    // in the epoch a run resumed mid-way, whose earlier steps the figures do not cover.
    int first_step, steps;
    // Only the evaluation of an epoch trained before the resume (TrainStart.evaluate_first):
    // no train figures, no training time.
    int evaluation_only;
    double train_loss, train_accuracy;
    int has_test;
    EvalResult test;
    double seconds;             // training time of the epoch (evaluation excluded)
    double samples_per_second;
    int interrupted;            // on_step asked to stop during this epoch
    long global_step;           // optimizer steps taken in the run, over all epochs
    double lr;                  // the learning rate of the epoch's last step
    size_t memory_in_use, memory_peak;  // replica 0's device, bytes
} EpochReport;

// Where training stands after a step (for checkpoints).
typedef struct StepPlace {
    int epoch, step, steps;     // 1-based, the step within its epoch
    long optimizer_steps;       // over the whole run
} StepPlace;

typedef struct TrainHooks {
    void *user;
    // Optional: a one-line message the user should see (a batch split into micro-batches
    // after running out of memory). tools/ prints it; core/ never does.
    void (*on_notice)(void *user, const char *line);
    // Called after every step; a nonzero return stops training: train_model then
    // returns STATUS_RUNTIME_ERROR and sets *interrupted.
    int (*on_step)(void *user, const StepReport *report);
    // Optional: called after every step (e.g. to write a checkpoint). Setting *stop ends
    // training as on_step's nonzero return does; a nonzero return is a failure in *st.
    int (*after_step)(void *user, const StepPlace *place, Graph *g, Device *d, int *stop,
                      Status *st);
    // Called after each epoch (e.g. to save weights); a nonzero return stops training.
    int (*on_epoch)(void *user, const EpochReport *report, Graph *g, Device *d, Status *st);
    // Optional: the newest checkpoint written so far (NULL when none), named when training
    // stops on a non-finite loss as the place to go back to.
    const char *(*last_checkpoint)(void *user);
    // Optional: nonzero once a stop was asked for (a signal). The evaluation after each
    // epoch asks between batches, so that a stop does not wait for the whole test set.
    int (*stop_requested)(void *user);
    // Optional: after each batch of an evaluation, `done` of `total` samples evaluated on
    // `split` ("test", "val"), for a progress line.
    void (*on_eval_batch)(void *user, const char *split, int done, int total);
    const char *eval_split;  // the name on_eval_batch is given; NULL: "test"
} TrainHooks;

// Trains for config->train.epochs with config->optimizer, evaluating on `test` (may be
// NULL) after each epoch. The graph must already have its parameters (graph_init_params).
// *interrupted (may be NULL) is set when on_step asked to stop.
//
// When a step runs out of memory, what it allocated is given back and the same step runs
// again as smaller micro-batches (under a memory limit the largest the memory plan fits,
// otherwise half the size), with gradient accumulation, so the batch the optimizer sees,
// and so what is learned, does not change (on_notice reports it once, with the size
// training continues at).
int train_model(Graph *g, const RunConfig *config, Device *d, const Dataset *train,
                const Dataset *test, const TrainHooks *hooks, int *interrupted, Status *st);

// Mirrored data parallelism in one process: graphs[r] runs on devices[r], each built from
// the same model with parameters initialised on its device. Replica 0's parameters are
// broadcast to the others, each step's batch is split evenly across replicas, gradients
// are summed over replicas (NCCL between GPUs) before an identical update on every replica,
// so `count` replicas learn what one device would with the same batch. Evaluation and the
// hooks see replica 0. count == 1 is train_model.
int train_replicas(Graph *const *graphs, Device *const *devices, int count,
                   const RunConfig *config, const Dataset *train, const Dataset *test,
                   const TrainHooks *hooks, int *interrupted, Status *st);
// `batch` rather than config's: training evaluates at the batch it clamped to its data.
int evaluate_model(Graph *g, const RunConfig *config, Device *d, const Dataset *ds, int batch,
                   EvalResult *out, Status *st);
// The same as evaluate_model, asking hooks->stop_requested before each batch (hooks may be
// NULL): *stopped 1 when it said stop, *out then partial (a signal during the test
// evaluation after training). With a confusion (confusion_open'ed for graph_classes(g)
// classes and `batch` rows; NULL: none), each sample's predicted class is counted against
// its label.
int evaluate_model_stoppable(Graph *g, const RunConfig *config, Device *d, const Dataset *ds,
                             int batch, const TrainHooks *hooks, int *stopped,
                             Confusion *confusion, EvalResult *out, Status *st);

#endif
