// How samples reached the model, kept in a checkpoint's metadata so that eval and predict
// feed the model the same way: the size images were resized to, the normalization's mean
// and std, and the class names of a png:DIR (or a known dataset). docs/checkpoints.md lists
// the keys.
#ifndef TRAINER_CHECKPOINT_INPUTS_H
#define TRAINER_CHECKPOINT_INPUTS_H

#include "data/dataset.h"
#include "data/safetensors.h"
#include "data/transform.h"

#define CHECKPOINT_CLASS_NAME_MAX 64  // bytes of a name with its NUL, as Dataset holds them
// Bytes of a name as a checkpoint records it (checkpoint_class_name_as_written), NUL
// included: each byte that is not UTF-8 takes 4.
#define CHECKPOINT_CLASS_NAME_WRITTEN_MAX (4 * CHECKPOINT_CLASS_NAME_MAX)

// The validation split a run held out of its training data (--val-split), recorded so that
// `eval --val-split` draws the same samples again: with another seed or limit it would
// measure samples the weights were trained on.
typedef struct HeldOutSplit {
    double fraction;   // 0: the run held none out
    long seed;         // chose which samples
    long train_limit;  // the training samples kept before the split (--train-limit); 0: all
    DatasetLimitOrder limit_order;  // how train_limit kept them; LIMIT_STRATIFIED without one
    int limit_order_unknown;        // a file written before the order was recorded
    long samples;      // the training samples it was drawn from (val_split_of); 0: unknown
} HeldOutSplit;

// Whether two splits hold out the same samples (no split is the same as no split), as far
// as the options tell (an order not recorded is taken to be the same): the sample counts are
// compared apart (held_out_same_data).
int held_out_same(const HeldOutSplit *a, const HeldOutSplit *b);
// 0 when both know how many training samples they were drawn from and the counts differ:
// the same options then draw another split (a bad image fixed, another CSV file).
int held_out_same_data(const HeldOutSplit *a, const HeldOutSplit *b);
// "--val-split 0.1 with seed 3 of 2000 training samples (--train-limit)" (", --limit-order
// first" inside the brackets when so), or "no validation split".
void held_out_describe(const HeldOutSplit *split, char *text, size_t size);

typedef struct CheckpointInputs {
    const Normalization *normalization;  // NULL: none
    int class_count;                     // 0: no names
    const char *const *class_names;      // each under CHECKPOINT_CLASS_NAME_MAX bytes
    HeldOutSplit held_out;
    int resize_height, resize_width;     // images resized to this (--resize); 0: none
} CheckpointInputs;

// What a loaded file said; everything owned (checkpoint_inputs_free).
typedef struct LoadedInputs {
    Normalization normalization;         // count 0: the file names none
    int class_count;
    char (*class_names)[CHECKPOINT_CLASS_NAME_WRITTEN_MAX];  // as written
    HeldOutSplit held_out;               // fraction 0: none held out, or none recorded
    int held_out_recorded;               // the file says (val_split, "0" for none)
    int resize_height, resize_width;     // 0: not resized, or not recorded
    int resize_recorded;                 // the file says (resize, "none" included)
} LoadedInputs;

// A class name as the metadata records it, into out (CHECKPOINT_CLASS_NAME_WRITTEN_MAX
// bytes hold any name): UTF-8 as it is, each other byte as the text \xNN. What a loaded name is
// compared with.
void checkpoint_class_name_as_written(const char *name, char *out, size_t size);

// The metadata values: heap strings for normalize_mean, normalize_std (NULL without a
// normalization) and class_names (a JSON array; NULL without names).
int checkpoint_inputs_format(const CheckpointInputs *in, char **mean, char **std,
                             char **class_names, Status *st);
// A metadata entry of a short value: the held-out split's and the resize's.
typedef struct CheckpointInputsEntry {
    const char *key;
    char value[32];
} CheckpointInputsEntry;
enum { CHECKPOINT_INPUTS_SHORT_KEYS = 6 };
// Those entries to write, in order; returns how many. resize is "HxW" or "none"; val_split
// is "0" for a run without a split (so that a resume can tell it from a file written before
// trainer recorded splits), and val_split_seed, train_limit, train_limit_order and
// val_split_of follow a split.
int checkpoint_inputs_short_entries(const CheckpointInputs *in,
                                    CheckpointInputsEntry out[CHECKPOINT_INPUTS_SHORT_KEYS]);
// Reads them back. Absent keys leave the parts empty; a value that does not parse is
// STATUS_BAD_INPUT naming the file and key.
int checkpoint_inputs_read(const Safetensors *file, const char *path, LoadedInputs *out,
                           Status *st);
void checkpoint_inputs_free(LoadedInputs *in);

#endif
