// Before the first step of an `mpirun` launch, every rank must be running the same run: the
// same model (parameter names and shapes, the model text), optimizer and schedule, batch,
// epochs, seed, data and sample counts, precision and the options that change the math or
// the number of collectives. Ranks that disagree would enter collectives with buffers of
// different sizes (a heap overflow), wait for each other forever (different step counts),
// or train something nobody asked for (different rates or seeds). So each rank describes
// its run in a RunRecord (core/run_record.h), rank 0's is sent to all, and any difference
// stops every rank with one message naming the field (docs/distributed.md).
#ifndef TRAINER_RUN_AGREEMENT_H
#define TRAINER_RUN_AGREEMENT_H

#include "core/graph.h"
#include "core/run_config.h"
#include "core/run_record.h"

// What defines a run beyond the graph and its RunConfig: known once the data is read and
// the device opened.
typedef struct RunFacts {
    const char *data_spec;   // the dataset as the run names it ("fashion-mnist", "idx:DIR")
    int train_samples;
    int val_samples, test_samples;  // -1: no such split
    Precision precision;     // what GEMMs and convolutions compute in, resolved
} RunFacts;

// The fields of this run, in the order a difference is looked for: the most telling first
// (a parameter's shape before the model text's hash).
int run_record_describe(RunRecord *r, const Graph *g, const RunConfig *config,
                        const RunFacts *facts, Status *st);

// Every rank of a launch of `size` calls it at the same point, before any collective whose
// size depends on the run. Rank 0's record goes to every rank (its length first, so no
// collective is entered with buffers of different sizes), each compares it with `mine`,
// and the first difference (lowest field, then lowest rank) is made known to all. On a
// difference every rank returns STATUS_BAD_INPUT with the same message ("ranks disagree on
// FIELD: rank 0 has X, rank R has Y") and sets *disagree; another failure (MPI's) leaves
// *disagree 0.
int run_agreement_check(const RunRecord *mine, int rank, int size, int *disagree, Status *st);
// The same for this run, described from `g`, `config` and `facts`, among config->world's
// processes: nothing to check when it runs alone. Every rank must call it.
int run_agreement_check_run(const Graph *g, const RunConfig *config, const RunFacts *facts,
                            int *disagree, Status *st);

#endif
