// What a run is asked to do, apart from the model it runs: the model file's `optimizer`
// and `train` statements (read by graph_build) with the command line's overrides. Kept out
// of the Graph so that a graph describes only the network, and replicas share one run.
#ifndef TRAINER_RUN_CONFIG_H
#define TRAINER_RUN_CONFIG_H

typedef enum OptimizerKind { OPTIMIZER_SGD, OPTIMIZER_ADAM, OPTIMIZER_ADAMW } OptimizerKind;

typedef struct OptimizerConfig {
    OptimizerKind kind;
    double lr;
    double momentum;       // sgd
    int nesterov;          // sgd
    double weight_decay;
    double beta1, beta2, eps;  // adam, adamw
    int line;              // statement line, 0 when defaulted
} OptimizerConfig;

typedef struct TrainConfig {
    int batch;
    int epochs;
    long seed;
    int line;              // statement line, 0 when defaulted
} TrainConfig;

// Where training starts: nothing done for a fresh run, a checkpoint's place when resumed.
typedef struct TrainStart {
    int epochs_done;       // epochs already trained; training goes on to train.epochs
    int step_in_epoch;     // steps already taken in the epoch after them
} TrainStart;

typedef struct RunConfig {
    OptimizerConfig optimizer;
    TrainConfig train;
    TrainStart start;
    int sync_check;        // --sync-check: see LayerContext.sync_check
} RunConfig;

extern const char *const optimizer_names[];

#endif
