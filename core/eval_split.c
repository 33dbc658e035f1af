#include "core/eval_split.h"

#include <stdio.h>

#include "data/dataset.h"

// Without a split to choose, these would be ignored: say so rather than measure something
// else than the user meant.
static int refuse_unused_options(const EvalSplitAsk *ask, Status *st) {
    const char *unused = ask->seed ? "--seed" : ask->train_limit ? "--train-limit" : NULL;
    if (!unused) return 0;
    status_fail(st, STATUS_BAD_INPUT, "%s %s chooses the validation split with --val-split, "
                "but this eval measures %s's test split", unused,
                ask->seed ? ask->seed : ask->train_limit, ask->spec);
    status_hint(st, "add the run's --val-split F to evaluate its validation split, or drop %s",
                unused);
    return STATUS_BAD_INPUT;
}

int eval_split_choose(const EvalSplitAsk *ask, const RunConfig *config,
                      const HeldOutSplit *recorded, EvalSplit *split, Status *st) {
    *split = (EvalSplit){.name = "test"};
    HeldOutSplit *held = &split->held;
    if (ask->val_split_given) held->fraction = ask->val_split;
    if (ask->val_split_given && ask->test_limit) {
        status_fail(st, STATUS_BAD_INPUT, "--test-limit %s limits the test split, but "
                    "--val-split %g evaluates the validation split", ask->test_limit,
                    held->fraction);
        status_hint(st, "drop --test-limit; --train-limit, as the run had it, sizes the "
                    "training data the validation split is drawn from");
        return STATUS_BAD_INPUT;
    }
    if (!ask->val_split_given && dataset_has_test_split(ask->spec))
        return refuse_unused_options(ask, st);
    // The weights' own record first: it is the split their run held out.
    if (!ask->val_split_given)
        held->fraction = recorded->fraction > 0 ? recorded->fraction : config->data.val_split;
    if (!(held->fraction > 0)) {
        status_fail(st, STATUS_BAD_INPUT, "dataset %s has no test split to evaluate on",
                    ask->spec);
        status_hint(st, "evaluate the part `trainer train --val-split F` held out: give eval "
                    "the same --val-split F, and the run's --seed and --train-limit if it had "
                    "them");
        return STATUS_BAD_INPUT;
    }
    split->name = "val";
    int from_record = recorded->fraction > 0;
    held->seed = from_record ? recorded->seed : config->train.seed;
    held->train_limit = from_record ? recorded->train_limit : 0;
    held->limit_order = from_record ? recorded->limit_order : LIMIT_STRATIFIED;
    return 0;
}

int eval_split_other(const EvalSplit *split, const HeldOutSplit *recorded, const char *weights,
                     char *text, size_t size) {
    if (!(recorded->fraction > 0)) return 0;
    int same = held_out_same(&split->held, recorded);
    if (same && held_out_same_data(&split->held, recorded)) return 0;
    if (same) {
        snprintf(text, size, "%s was trained holding out its validation split of %ld training "
                 "samples; the same options draw another split of the %ld here, which holds "
                 "samples the weights were trained on", weights, recorded->samples,
                 split->held.samples);
        return 1;
    }
    char theirs[160], ours[160];
    held_out_describe(recorded, theirs, sizeof theirs);
    held_out_describe(&split->held, ours, sizeof ours);
    snprintf(text, size, "%s was trained holding out %s; this eval draws %s, another split, "
             "which holds samples the weights were trained on", weights, theirs, ours);
    return 1;
}

