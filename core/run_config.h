// What a run is asked to do, apart from the model it runs: the model file's `optimizer`
// and `train` statements (read by graph_build) with the command line's overrides. Kept out
// of the Graph so that a graph describes only the network, and replicas share one run.
#ifndef TRAINER_RUN_CONFIG_H
#define TRAINER_RUN_CONFIG_H

#include "base/precision.h"

typedef struct Normalization Normalization;  // data/transform.h

typedef enum OptimizerKind { OPTIMIZER_SGD, OPTIMIZER_ADAM, OPTIMIZER_ADAMW } OptimizerKind;

typedef struct OptimizerConfig {
    OptimizerKind kind;
    double lr;
    double momentum;       // sgd
    int nesterov;          // sgd
    double weight_decay;
    double beta1, beta2, eps;  // adam, adamw
    // Gradient clipping by global L2 norm over every trainable parameter's gradient
    // (core/grad_clip.h); 0: off.
    double clip_norm;
    int line;              // statement line, 0 when defaulted
} OptimizerConfig;

// How the learning rate moves over a run (core/lr_schedule.h computes it): constant
// (the default), step (times gamma every `every` epochs or steps) or cosine (down to
// min_lr at the last step); each after an optional linear warmup of `warmup` steps.
typedef enum ScheduleKind { SCHEDULE_CONSTANT, SCHEDULE_STEP, SCHEDULE_COSINE } ScheduleKind;
typedef enum ScheduleUnit { SCHEDULE_UNIT_EPOCH, SCHEDULE_UNIT_STEP } ScheduleUnit;

typedef struct ScheduleConfig {
    ScheduleKind kind;
    long warmup;           // steps of linear warmup from lr/warmup up to lr; 0: none
    long every;            // step: decay period, in `unit`s
    ScheduleUnit unit;     // step: what `every` counts
    double gamma;          // step: factor per period
    double min_lr;         // cosine: the rate at the last step
    int line;              // statement line, 0 when defaulted
} ScheduleConfig;

typedef struct TrainConfig {
    int batch;
    int epochs;
    long seed;
    // Stop once the validation loss has not improved for this many epochs in a row
    // (core/early_stop.h); 0: off. tools/ watches it; the training loop does not.
    int early_stop;
    // `train fuse=false` or --no-fuse: run each act= activation as its own pass, with the
    // pre-activation kept (graph_fuse_activations); 0: fused where it can be.
    int no_fusion;
    int line;              // statement line, 0 when defaulted
} TrainConfig;

// What GEMMs and convolutions compute in (base/precision.h): `train precision=` in the
// model file, then --precision (or --no-tf32, its older spelling of fp32) on the command
// line. core/precision_check.h checks it against the device before the first kernel.
typedef struct PrecisionConfig {
    Precision precision;   // PRECISION_DEFAULT: tf32 where the GPU has it, else fp32
    char source[32];       // where it was set, for messages: "--precision", "precision="
    int line, column;      // the precision= value in the model file; 0 from the command line
    // fp16's dynamic loss scaling starts at this scale (core/loss_scale.h); 0: 65536, as
    // PyTorch's GradScaler. Not an option: tests set it to force an overflow.
    double initial_loss_scale;
} PrecisionConfig;

// Where training starts: nothing done for a fresh run, a checkpoint's place when resumed.
typedef struct TrainStart {
    int epochs_done;       // epochs already trained; training goes on to train.epochs
    int step_in_epoch;     // steps already taken in the epoch after them
    // The checkpoint ends an epoch whose evaluation had not finished (a signal during it):
    // that evaluation is run first, so its figures, best.safetensors and the log's epoch
    // row are not lost.
    int evaluate_first;
} TrainStart;
// The model file's `data spec=SPEC val_split=F`: what --data and --val-split default to.
// The model file's `normalize` statement: none (the default: values / 255), auto (each
// channel's mean and std computed on the training split) or given values.
typedef enum NormalizeKind { NORMALIZE_NONE, NORMALIZE_AUTO, NORMALIZE_GIVEN } NormalizeKind;
#define NORMALIZE_GIVEN_MAX 4  // one value for all channels, or one per channel (RGB, RGBA)
typedef struct NormalizeConfig {
    NormalizeKind kind;
    int given;             // NORMALIZE_GIVEN: how many values mean= and std= hold
    double mean[NORMALIZE_GIVEN_MAX], std[NORMALIZE_GIVEN_MAX];
    int line;              // statement line, 0 when defaulted
} NormalizeConfig;

// The model file's `augment crop=P flip=true`: training samples only (data/transform.h).
typedef struct AugmentConfig {
    int crop_padding;      // 0: no random crop
    int flip;              // random left-right flip
    int line;
} AugmentConfig;

typedef struct DataConfig {
    char spec[256];        // "" when the model names no dataset
    double val_split;      // 0: none
    int line;              // statement line, 0 when defaulted
    int spec_column;       // of spec='s value, for errors of the dataset it names
    char model_path[512];  // the model file holding the statement
    NormalizeConfig normalize;
    AugmentConfig augment;
} DataConfig;

// The processes of an `mpirun` launch (kernels/mpi/mpi_world.h): each trains one replica on
// its share of every step. size 1: a single process.
typedef struct WorldConfig {
    int rank, size;
    // Gradients are summed in buckets of this many MiB, each started as soon as backward
    // has finished its gradients (core/grad_buckets.h); 0: one sum after backward.
    double bucket_mb;
    // --sync-batchnorm: batchnorm statistics over the whole step's batch, summed over the
    // processes (LayerContext.sum_over_ranks); 0: each process's own share.
    int sync_batchnorm;
    // --collective (core/collective.h's CollectiveChoice): how GPU replicas and ranks sum;
    // 0 is auto.
    int collective;
} WorldConfig;

// --cuda-graph: whether a training step on a GPU is captured as a CUDA Graph and replayed
// (core/step_graph.h). off (the default: never yet run on a card), auto (where the run
// allows it, else plain launches with a notice; plain on the CPU), on (auto, but refused
// on a device without CUDA Graphs).
typedef enum CudaGraphMode { CUDA_GRAPH_OFF, CUDA_GRAPH_AUTO, CUDA_GRAPH_ON } CudaGraphMode;

typedef struct RunConfig {
    OptimizerConfig optimizer;
    TrainConfig train;
    ScheduleConfig schedule;
    TrainStart start;
    DataConfig data;
    // The values data.normalize stands for, resolved by tools/ (computed on the training
    // split, given, or read from a checkpoint); NULL: none. Owned by the caller.
    const Normalization *normalization;
    int sync_check;        // --sync-check: see LayerContext.sync_check
    WorldConfig world;     // zeroed (size 0) counts as a world of one
    PrecisionConfig precision;
    CudaGraphMode cuda_graph;
} RunConfig;

extern const char *const optimizer_names[];
extern const char *const schedule_names[];

#endif
