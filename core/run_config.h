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

// The model file's `data spec=SPEC val_split=F`: what --data and --val-split default to.
typedef struct DataConfig {
    char spec[256];        // "" when the model names no dataset
    double val_split;      // 0: none
    int line;              // statement line, 0 when defaulted
} DataConfig;

typedef struct RunConfig {
    OptimizerConfig optimizer;
    TrainConfig train;
    DataConfig data;
    int sync_check;        // --sync-check: see LayerContext.sync_check
} RunConfig;

extern const char *const optimizer_names[];

#endif
