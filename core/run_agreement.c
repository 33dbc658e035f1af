#include "core/run_agreement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/transform.h"
#include "kernels/mpi/mpi_world.h"

// The shortest text that reads back as exactly `value`: 0.05, not 0.050000000000000003,
// and two rates that differ in the last bit still differ.
static const char *exact_number(double value, char *buf, size_t size) {
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, value);
        if (strtod(buf, NULL) == value) break;
    }
    return buf;
}

#define NUMBER(value) exact_number((value), (char[40]){0}, 40)

static int describe_parameters(RunRecord *r, const Graph *g, Status *st) {
    int tensors = 0;
    for (int i = 0; i < g->count; i++) tensors += g->layers[i]->param_count;
    TRY(run_record_add(r, st, "parameter tensors", "%d", tensors));
    int index = 0;
    for (int i = 0; i < g->count; i++)
        for (int p = 0; p < g->layers[i]->param_count; p++) {
            const Param *param = &g->layers[i]->params[p];
            char name[32], shape[64];
            snprintf(name, sizeof name, "parameter %d", ++index);
            TRY(run_record_add(r, st, name, "%s %s", param->name,
                               shape_format(&param->shape, shape, sizeof shape)));
        }
    return 0;
}

static int describe_optimizer(RunRecord *r, const OptimizerConfig *o, Status *st) {
    TRY(run_record_add(r, st, "optimizer", "%s", optimizer_names[o->kind]));
    TRY(run_record_add(r, st, "lr", "%s", NUMBER(o->lr)));
    TRY(run_record_add(r, st, "momentum", "%s", NUMBER(o->momentum)));
    TRY(run_record_add(r, st, "nesterov", "%s", o->nesterov ? "true" : "false"));
    TRY(run_record_add(r, st, "weight_decay", "%s", NUMBER(o->weight_decay)));
    TRY(run_record_add(r, st, "beta1", "%s", NUMBER(o->beta1)));
    TRY(run_record_add(r, st, "beta2", "%s", NUMBER(o->beta2)));
    TRY(run_record_add(r, st, "eps", "%s", NUMBER(o->eps)));
    return run_record_add(r, st, "clip_norm", "%s", NUMBER(o->clip_norm));
}

static int describe_schedule(RunRecord *r, const ScheduleConfig *s, Status *st) {
    TRY(run_record_add(r, st, "schedule", "%s", schedule_names[s->kind]));
    TRY(run_record_add(r, st, "warmup", "%ld steps", s->warmup));
    TRY(run_record_add(r, st, "every", "%ld %s", s->every,
                       s->unit == SCHEDULE_UNIT_STEP ? "steps" : "epochs"));
    TRY(run_record_add(r, st, "gamma", "%s", NUMBER(s->gamma)));
    return run_record_add(r, st, "min_lr", "%s", NUMBER(s->min_lr));
}

// Steps per epoch, epochs and where a resumed run starts set how many collectives each
// rank enters; a rank that stops early would leave the others waiting.
static int describe_training(RunRecord *r, const Graph *g, const RunConfig *c, Status *st) {
    const TrainConfig *t = &c->train;
    TRY(run_record_add(r, st, "batch", "%d", t->batch));
    TRY(run_record_add(r, st, "epochs", "%d", t->epochs));
    TRY(run_record_add(r, st, "seed", "%ld", t->seed));
    TRY(run_record_add(r, st, "early_stop", "%d", t->early_stop));
    TRY(run_record_add(r, st, "fuse", "%s", t->no_fusion ? "false" : "true"));
    return run_record_add(r, st, "resume point", "epoch %d, step %d, %ld updates done%s",
                          c->start.epochs_done, c->start.step_in_epoch, g->optimizer_steps,
                          c->start.evaluate_first ? ", its evaluation first" : "");
}

static const char *split_count(int count, char *buf, size_t size) {
    if (count < 0) snprintf(buf, size, "none");
    else snprintf(buf, size, "%d", count);
    return buf;
}

// The resolved values (computed on each rank's own training split under `auto`) go in as a
// hash: a CSV file's columns can be too many to spell out.
static int describe_transform(RunRecord *r, const RunConfig *c, Status *st) {
    static const char *const kinds[] = {"none", "auto", "given"};
    const Normalization *n = c->normalization;
    uint64_t hash = 0;
    int groups = n ? n->count : 0;
    if (groups)
        hash = run_record_hash(n->mean, (size_t)groups * sizeof *n->mean) ^
               (run_record_hash(n->std, (size_t)groups * sizeof *n->std) * 31);
    TRY(run_record_add(r, st, "normalize", "%s, %d value group%s (hash %016llx)",
                       kinds[c->data.normalize.kind], groups, groups == 1 ? "" : "s",
                       (unsigned long long)hash));
    return run_record_add(r, st, "augment", "crop=%d flip=%s", c->data.augment.crop_padding,
                          c->data.augment.flip ? "true" : "false");
}

static int describe_data(RunRecord *r, const RunConfig *c, const RunFacts *facts,
                         Status *st) {
    char count[24];
    TRY(run_record_add(r, st, "data", "%s", facts->data_spec ? facts->data_spec : ""));
    TRY(run_record_add(r, st, "train samples", "%d", facts->train_samples));
    TRY(run_record_add(r, st, "val samples", "%s",
                       split_count(facts->val_samples, count, sizeof count)));
    TRY(run_record_add(r, st, "test samples", "%s",
                       split_count(facts->test_samples, count, sizeof count)));
    TRY(run_record_add(r, st, "val_split", "%s", NUMBER(c->data.val_split)));
    return describe_transform(r, c, st);
}

// The bucket size sets how many sums each step starts, --sync-batchnorm adds sums of its
// own, --collective chooses what carries them: each must be the same on every rank.
static int describe_math(RunRecord *r, const Graph *g, const RunConfig *c,
                         const RunFacts *facts, Status *st) {
    TRY(run_record_add(r, st, "precision", "%s", precision_name(facts->precision)));
    TRY(run_record_add(r, st, "loss scale", "%s", NUMBER(c->precision.initial_loss_scale)));
    TRY(run_record_add(r, st, "bucket_mb", "%s", NUMBER(c->world.bucket_mb)));
    TRY(run_record_add(r, st, "sync_batchnorm", "%s", c->world.sync_batchnorm ? "on" : "off"));
    // Ranks of one launch on different paths would meet in different collectives and wait.
    static const char *const collectives[] = {"auto", "nccl", "mpi"};
    TRY(run_record_add(r, st, "collective", "%s",
                       collectives[c->world.collective >= 0 && c->world.collective < 3
                                       ? c->world.collective : 0]));
    return run_record_add(r, st, "nhwc layers", "%d", graph_nhwc_layers(g));
}

int run_record_describe(RunRecord *r, const Graph *g, const RunConfig *config,
                        const RunFacts *facts, Status *st) {
    // First, so that a rank that cannot read rank 0's record has this to show.
    TRY(run_record_add(r, st, "run record", "version %d (trainer %s)", RUN_RECORD_VERSION,
                       TRAINER_VERSION));
    TRY(describe_parameters(r, g, st));
    TRY(describe_optimizer(r, &config->optimizer, st));
    TRY(describe_schedule(r, &config->schedule, st));
    TRY(describe_training(r, g, config, st));
    TRY(describe_data(r, config, facts, st));
    TRY(describe_math(r, g, config, facts, st));
    // Last: whatever the fields above miss (an activation, a dropout rate) is still in it.
    const char *text = g->model_text ? g->model_text : "";
    return run_record_add(r, st, "model text hash", "%016llx",
                          (unsigned long long)run_record_hash(text, strlen(text)));
}

// Rank 0's record, on every rank: its length first, the same on all, then its bytes.
static int receive_first_record(const RunRecord *mine, int rank, RunRecord *first,
                                Status *decode_st, Status *st) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    run_record_init(first);
    TRY(run_record_encode(mine, &bytes, &size, st));
    uint64_t length = size;
    int rc = mpi_broadcast_bytes(&length, sizeof length, 0, st);
    if (!rc && length > RUN_RECORD_MAX_BYTES)  // the same on every rank
        rc = status_fail(st, STATUS_RUNTIME_ERROR, "rank 0's run record is %llu bytes, past "
                         "the %zu a record can take", (unsigned long long)length,
                         (size_t)RUN_RECORD_MAX_BYTES);
    if (!rc && rank != 0) {
        free(bytes);
        bytes = malloc(length ? (size_t)length : 1);
        if (!bytes) rc = status_out_of_host_memory(st, (size_t)length, "for rank 0's run record");
    }
    if (!rc) rc = mpi_broadcast_bytes(bytes, (size_t)length, 0, st);
    if (!rc && run_record_decode(bytes, (size_t)length, first, decode_st)) run_record_free(first);
    free(bytes);
    return rc;
}

// The lowest field any rank differs in (-1: none), then the lowest rank differing there:
// the smallest of the values is the largest of their negations.
static int agree_on_difference(int mine, int rank, int *field, int *at_rank, Status *st) {
    int none = RUN_RECORD_MAX_FIELDS + 1;
    int lowest = -(mine < 0 ? none : mine);
    TRY(mpi_all_reduce_max_int(&lowest, st));
    *field = -lowest == none ? -1 : -lowest;
    if (*field < 0) return 0;
    int who = -(mine == *field ? rank : 0x7fffffff);
    TRY(mpi_all_reduce_max_int(&who, st));
    *at_rank = -who;
    return 0;
}

// The differing rank's field (or why it could not read rank 0's record), to every rank.
static int receive_their_field(const RunRecord *mine, const Status *decode_st, int field,
                               int rank, int from, RunField *theirs, Status *st) {
    memset(theirs, 0, sizeof *theirs);
    if (rank == from) {
        snprintf(theirs->name, sizeof theirs->name, "%s", run_record_name_at(mine, field));
        if (decode_st->code)
            snprintf(theirs->value, sizeof theirs->value, "a record it cannot read (%.400s)",
                     decode_st->message);
        else
            snprintf(theirs->value, sizeof theirs->value, "%s", run_record_value_at(mine, field));
    }
    return mpi_broadcast_bytes(theirs, sizeof *theirs, from, st);
}

int run_agreement_check(const RunRecord *mine, int rank, int size, int *disagree, Status *st) {
    *disagree = 0;
    if (size <= 1) return 0;
    RunRecord first;
    Status decode_st;
    status_clear(&decode_st);
    TRY(receive_first_record(mine, rank, &first, &decode_st, st));
    int difference = decode_st.code ? 0 : run_record_first_difference(&first, mine);
    int field = -1, from = 0;
    RunField theirs;
    int rc = agree_on_difference(difference, rank, &field, &from, st);
    if (!rc && field >= 0)
        rc = receive_their_field(mine, &decode_st, field, rank, from, &theirs, st);
    if (!rc && field >= 0) {
        *disagree = 1;
        rc = run_record_disagreement(&first, field, from, size, &theirs, st);
    }
    run_record_free(&first);
    return rc;
}

int run_agreement_check_run(const Graph *g, const RunConfig *config, const RunFacts *facts,
                            int *disagree, Status *st) {
    *disagree = 0;
    if (config->world.size <= 1) return 0;
    RunRecord mine;
    run_record_init(&mine);
    int rc = run_record_describe(&mine, g, config, facts, st);
    if (!rc) rc = run_agreement_check(&mine, config->world.rank, config->world.size, disagree, st);
    run_record_free(&mine);
    return rc;
}
