// The data a training run reads (train, check --data): the splits loaded, cut to their
// limits, the validation split held out, each checked against the model, and the model's
// normalization made values. Facts only: tools/ turns them into the run header's lines.
#ifndef TRAINER_RUN_DATA_H
#define TRAINER_RUN_DATA_H

#include "base/status.h"
#include "core/checkpoint.h"
#include "core/checkpoint_inputs.h"
#include "core/graph.h"
#include "core/run_config.h"
#include "core/run_options.h"
#include "data/dataset.h"
#include "data/dataset_stats.h"

// A limit on a split: dataset_limit to `limit` (0: none) as `order` chooses, from `seed`.
typedef struct SplitLimit {
    long limit;
    const char *option;  // "--train-limit", for messages
    const char *split;   // "training"
    DatasetLimitOrder order;
    uint64_t seed;
} SplitLimit;
// Applies it, saying through `notice` when the limit is past the split's size
// ("--train-limit 60001 is more than the 60000 training samples: all 60000 are used"),
// where the user may have meant another count. *cut: 1 when samples were dropped.
int split_limit_apply(Dataset *ds, const SplitLimit *limit, const RunNotice *notice, int *cut,
                      Status *st);

// Where a run's normalization values came from.
typedef enum {
    NORMALIZATION_FROM_NONE,      // no normalize statement (or `normalize none`)
    NORMALIZATION_FROM_GIVEN,     // `normalize mean=M std=S` or --normalize with values
    NORMALIZATION_FROM_COMPUTED,  // `normalize auto`: computed on the training split
    NORMALIZATION_FROM_RESUMED,   // taken from the checkpoint a run resumed
} NormalizationSource;

// What the command line asked of the data; tools/ parses it, run_data_load does it.
typedef struct RunDataRequest {
    const char *spec;      // --data, or the model's `data spec=`, or fashion-mnist
    int spec_in_model;     // the model's `data spec=`: a dataset's error points there
    DatasetOptions options;
    long train_limit;      // --train-limit; 0: none
    long test_limit;       // --test-limit; 0: none
    DatasetLimitOrder limit_order;
    double val_fraction;   // --val-split or the model's `data val_split=`
    int val_given;         // --val-split was given
    RunNotice notice;      // a limit past its split's size, a skipped sample
} RunDataRequest;

// `train` (--train-limit), `val` (--val-split of it) when asked, `test` (--test-limit) when
// the spec has a test split. PNG images are read at the graph's input shape;
// --on-bad-sample skip counts what it leaves out in `skipped`.
typedef struct RunData {
    Dataset train, val, test;
    int has_val, has_test;
    HeldOutSplit held_out;  // how val was drawn, recorded in the weights for eval
    int skipped;
    // --train-limit: the training samples before it cut them; 0 when it cut none.
    int limited_from;
    DatasetLimitOrder limit_order;
    uint64_t limit_seed;
    Normalization normalization;  // what config's normalize statement came to; count 0: none
    NormalizationSource normalization_source;
    int normalization_samples;    // computed: on this many training samples
    int normalization_constant;   // computed: some channel was constant and keeps std 1
} RunData;

// A spec without a test split needs a validation split to evaluate on.
int run_data_check_splits(const char *spec, int val_given, const RunConfig *config,
                          Status *st);
// Loads what `request` asks into *data (zeroed first; run_data_free frees it, also after a
// failure).
int run_data_load(const RunDataRequest *request, const RunConfig *config, RunData *data,
                  Status *st);
// Every split against the model (shape, labels) and the normalization and augmentation
// against the data, so `check --data` refuses what `train` would.
int check_run_data(const Graph *g, const RunConfig *config, const RunData *data, Status *st);
// The model's `normalize` statement made values into data->normalization: computed on the
// training split (auto), the values given, or none; data->normalization_source says which.
int resolve_run_normalization(const RunConfig *config, const char *model_path, RunData *data,
                              Status *st);
// For eval and predict: the normalization a weights file records (loaded->inputs), else the
// model's given values; `normalize auto` with a file that records none is an error, since
// the training split's values are not known. *out is owned by the caller.
int weights_normalization(const RunConfig *config, const char *model_path,
                          const char *weights_path, const CheckpointLoaded *loaded, int groups,
                          Normalization *out, Status *st);
// An error of the dataset the model's `data spec=` names: placed at the statement, or,
// when it names the dataset's own file, the statement named in the hint. Returns rc.
int place_in_data_spec(const RunConfig *config, int rc, Status *st);
void run_data_free(RunData *data);

#endif
