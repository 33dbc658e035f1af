// The graph-level harness of the 16-bit storage tests (tests/unit/test_storage16*.c, and
// tests/gpu/test_cuda_storage16.c for its nets): a model built on the CPU backend (or the
// one a test names) with its activations stored as f32, bf16 or f16
// (graph_set_storage), a random batch, one training (or evaluation) pass, and the checks
// every storage test makes of such graphs: where the casts sit, that every layer reads
// the dtype it stores, and that 16-bit storage gives the loss and parameter gradients of
// f32 storage within a bound each test argues for its own model. Finite differences
// cannot check rounded storage, so f32 storage from the same weights is the reference.
//
// Every function is `static inline`, so a test that uses only part of the harness still
// compiles cleanly with -Wall -Wextra -Werror.
#ifndef TRAINER_TESTS_STORAGE16_NET_H
#define TRAINER_TESTS_STORAGE16_NET_H

#include "check.h"
#include "base/rng.h"
#include "core/graph.h"
#include "core/optimizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// What a test fixes for its model, so that both storages see the same weights, batch and
// dropout masks.
typedef struct StorageNetSpec {
    const char *model_name;  // the file name parse errors of the model text report
    const char *text;
    int batch;               // rows allocated and loaded
    int classes;             // labels are drawn in [0, classes)
    float input_low;         // inputs are drawn uniform in [input_low, input_low + 2)
    uint64_t param_seed;     // graph_init_params
    uint64_t ctx_seed;       // LayerContext.seed of every pass
} StorageNetSpec;

typedef struct StorageNet {
    const StorageNetSpec *spec;
    const Backend *b;
    ModelFile file;
    Graph g;
    Allocator alloc;
    int built;
} StorageNet;

// Parses and builds spec's model on backend b, stores its activations as `storage`,
// initialises the parameters and allocates for spec->batch rows. storage_net_free must
// follow either way.
static inline int storage_net_build_on(StorageNet *n, const StorageNetSpec *spec,
                                       const Backend *b, DType storage, Status *st) {
    memset(n, 0, sizeof *n);
    n->spec = spec;
    n->b = b;
    TRY(model_file_parse_text(spec->model_name, spec->text, &n->file, st));
    TRY(graph_build(&n->file, &n->g, NULL, st));
    n->built = 1;
    TRY(graph_set_storage(&n->g, storage, st));
    TRY(alloc_init(&n->alloc, b, ALLOC_GROW, 0, st));
    TRY(graph_init_params(&n->g, b, &n->alloc, spec->param_seed, st));
    return graph_allocate(&n->g, b, &n->alloc, spec->batch, NULL, st);
}

// storage_net_build_on the CPU backend, which every unit test runs on.
static inline int storage_net_build(StorageNet *n, const StorageNetSpec *spec, DType storage,
                                    Status *st) {
    return storage_net_build_on(n, spec, cpu_backend(), storage, st);
}

static inline void storage_net_free(StorageNet *n) {
    if (n->built) graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

// storage_net_build that counts and reports a failure (and frees the net again).
// Returns 0 when the net is built; storage_net_free must follow then.
static inline int storage_net_open(StorageNet *n, const StorageNetSpec *spec, DType storage) {
    Status st;
    status_clear(&st);
    if (!storage_net_build(n, spec, storage, &st)) return 0;
    fprintf(stderr, "build: %s\n", st.message);
    test_failures++;
    storage_net_free(n);
    return -1;
}

// A batch drawn from rng_seed(data_seed): every input first, then every label.
static inline int storage_net_load_batch(StorageNet *n, uint64_t data_seed, Status *st) {
    const StorageNetSpec *spec = n->spec;
    size_t values = (size_t)spec->batch * shape_numel(&n->g.input->out_shape);
    float *inputs = malloc((values ? values : 1) * sizeof *inputs);
    int32_t *labels = malloc((size_t)spec->batch * sizeof *labels);
    if (!inputs || !labels) {
        free(inputs);
        free(labels);
        return status_fail(st, STATUS_OUT_OF_MEMORY, "out of host memory for a test batch");
    }
    Rng rng;
    rng_seed(&rng, data_seed);
    for (size_t i = 0; i < values; i++) inputs[i] = spec->input_low + 2.0f * rng_uniform(&rng);
    for (int i = 0; i < spec->batch; i++)
        labels[i] = (int32_t)rng_below(&rng, (uint32_t)spec->classes);
    int rc = graph_load_batch(&n->g, n->b, inputs, labels, spec->batch, st);
    free(inputs);
    free(labels);
    return rc;
}

// One forward (and, training, backward) pass; *loss is the batch's summed loss.
static inline int storage_net_pass(StorageNet *n, int training, double *loss, Status *st) {
    const Backend *b = n->b;
    int batch = n->spec->batch;
    LayerContext ctx = {.backend = b, .alloc = &n->alloc, .batch = batch, .training = training,
                        .seed = n->spec->ctx_seed, .labels = (const int32_t *)n->g.labels.data};
    TRY(graph_reset_loss_sums(&n->g, b, st));
    TRY(graph_forward(&n->g, &ctx, st));
    if (training) TRY(graph_backward(&n->g, &ctx, st));
    TRY(graph_add_loss_sums(&n->g, b, batch, 0, st));
    double correct;
    return graph_read_loss_sums(&n->g, b, loss, &correct, st);
}

// ---- the storage plan ----------------------------------------------------------------------

static inline const Layer *layer_named(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    return NULL;
}

static inline int is_cast(const Layer *l) { return strcmp(l->kind->name, "cast") == 0; }

// The number of casts in g, each checked to sit right after what it converts and to
// convert (its dtype is the one its readers store).
static inline int check_casts_follow_their_input(const Graph *g) {
    int casts = 0;
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        if (!is_cast(l)) continue;
        casts++;
        CHECK(i > 0 && g->layers[i - 1] == l->inputs[0]);
        CHECK(l->out_dtype != l->inputs[0]->out_dtype);
    }
    return casts;
}

// What every storage plan keeps: each layer reads the dtype it stores (a view passes its
// input's through), and every cast converts.
static inline void check_reads_own_dtype(const Graph *g) {
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        for (int k = 0; k < l->input_count; k++) {
            int converts = l->inputs[k]->out_dtype != l->out_dtype;
            if (l->kind->output_is_view || converts == is_cast(l)) continue;
            fprintf(stderr, "  CHECK failed: %s (%s) reads %s (%s)\n", l->name,
                    dtype_name(l->out_dtype), l->inputs[k]->name,
                    dtype_name(l->inputs[k]->out_dtype));
            test_failures++;
        }
    }
}

// Storing f32 again removes the `casts` casts and leaves every layer f32.
static inline void check_f32_storage_removes_casts(Graph *g, int casts) {
    Status st;
    status_clear(&st);
    int count = g->count;
    CHECK_INT_EQ(graph_set_storage(g, DTYPE_F32, &st), 0);
    CHECK_INT_EQ(g->count, count - casts);
    for (int i = 0; i < g->count; i++) CHECK(g->layers[i]->out_dtype == DTYPE_F32);
}

// ---- 16-bit storage against f32 --------------------------------------------------------------

// sqrt(sum (got - want)^2 / sum want^2), or the absolute sqrt(sum (got - want)^2) where
// want is all zeros (a zero gradient must stay zero).
// Adds n values' squared differences to *diff and the reference's squares to *norm: a
// relative difference over several tensors together (a layer's parameters) is
// difference_ratio of the totals.
static inline void add_squared_difference(const float *got, const float *want, size_t n,
                                          double *diff, double *norm) {
    for (size_t j = 0; j < n; j++) {
        *diff += ((double)got[j] - want[j]) * ((double)got[j] - want[j]);
        *norm += (double)want[j] * want[j];
    }
}

// sqrt(diff / norm), or the absolute sqrt(diff) where the reference is all zero.
static inline double difference_ratio(double diff, double norm) {
    return norm > 0.0 ? sqrt(diff / norm) : sqrt(diff);
}

static inline double relative_difference(const float *got, const float *want, size_t n) {
    double diff = 0.0, norm = 0.0;
    add_squared_difference(got, want, n, &diff, &norm);
    return difference_ratio(diff, norm);
}

static inline void check_within_bound(const char *name, const char *what, double rel,
                                      double bound) {
    fprintf(stderr, "  %-12s %-16s relative difference %.2e\n", name, what, rel);
    if (!(rel < bound)) {
        fprintf(stderr, "  CHECK failed: %s %s: %.2e over the bound %.1e\n", name, what, rel,
                bound);
        test_failures++;
    }
}

// The same model, weights and batch with f32 and with 16-bit activations.
typedef struct StoragePair {
    StorageNet wide, half;
    double wide_loss, half_loss;  // summed over the batch
} StoragePair;

// Builds both nets, loads the batch drawn from data_seed into each and runs one training
// pass on each. Returns 0 on success; a failure is counted and reported under `label`.
// storage_pair_free must follow either way.
static inline int storage_pair_step(StoragePair *p, const StorageNetSpec *spec, DType storage,
                                    uint64_t data_seed, const char *label) {
    Status st;
    status_clear(&st);
    memset(p, 0, sizeof *p);
    int rc = storage_net_build(&p->wide, spec, DTYPE_F32, &st);
    if (!rc) rc = storage_net_build(&p->half, spec, storage, &st);
    if (!rc) rc = storage_net_load_batch(&p->wide, data_seed, &st);
    if (!rc) rc = storage_net_load_batch(&p->half, data_seed, &st);
    if (!rc) rc = storage_net_pass(&p->wide, 1, &p->wide_loss, &st);
    if (!rc) rc = storage_net_pass(&p->half, 1, &p->half_loss, &st);
    if (rc) {
        fprintf(stderr, "%s%s%s: %s\n", label, *label ? " " : "", dtype_name(storage),
                st.message);
        test_failures++;
    }
    return rc;
}

static inline void storage_pair_free(StoragePair *p) {
    storage_net_free(&p->wide);
    storage_net_free(&p->half);
}

// Two summed losses, 16-bit storage's first, within `bound` relative of f32 storage's.
static inline void check_losses_match(const char *label, DType storage, double half_loss,
                                      double wide_loss, int batch, double bound) {
    fprintf(stderr, "%s%s%s storage: loss %.6f vs f32 %.6f\n", label, *label ? " " : "",
            dtype_name(storage), half_loss / batch, wide_loss / batch);
    CHECK(fabs(half_loss - wide_loss) / wide_loss < bound);
}

// The step's losses match, and the 16-bit path did round something.
static inline void storage_pair_check_loss(const StoragePair *p, const char *label,
                                           DType storage, double bound) {
    check_losses_match(label, storage, p->half_loss, p->wide_loss, p->wide.spec->batch, bound);
    CHECK(p->half_loss != p->wide_loss);
}

// Per layer, over its weight and bias gradients together: a bias whose gradient is nearly
// zero (a dense layer's under a batchnorm, which takes every shift out) alone would make
// any rounding look large. Buffers (batchnorm's running statistics, which the step moved)
// are held to the same bound, each on its own.
static inline void storage_pair_check_gradients(const StoragePair *p, double bound) {
    const Graph *wide = &p->wide.g, *half = &p->half.g;
    for (int i = 0; i < wide->count; i++) {
        const Layer *w = wide->layers[i], *h = layer_named(half, w->name);
        CHECK(h != NULL);
        if (!h || !w->param_count) continue;
        double diff = 0.0, norm = 0.0;
        for (int k = 0; k < w->param_count; k++) {
            size_t count = shape_numel(&w->params[k].shape);
            if (w->params[k].buffer) {
                check_within_bound(w->name, w->params[k].name,
                                   relative_difference(tensor_f32(&h->params[k].value),
                                                       tensor_f32(&w->params[k].value), count),
                                   bound);
                continue;
            }
            add_squared_difference(tensor_f32(&h->params[k].grad),
                                   tensor_f32(&w->params[k].grad), count, &diff, &norm);
        }
        check_within_bound(w->name, "gradients", difference_ratio(diff, norm), bound);
    }
}

// storage_pair_step, then the checks every storage test makes of it: the losses and each
// layer's parameter gradients (and buffers) within `bound`. Returns storage_pair_step's
// result; storage_pair_free must follow either way.
static inline int storage_pair_matches_f32(StoragePair *p, const StorageNetSpec *spec,
                                           DType storage, uint64_t data_seed, const char *label,
                                           double bound) {
    int rc = storage_pair_step(p, spec, storage, data_seed, label);
    if (rc) return rc;
    storage_pair_check_loss(p, label, storage, bound);
    storage_pair_check_gradients(p, bound);
    return 0;
}

// storage_pair_matches_f32 on a pair of its own, freed again.
static inline void check_storage_matches_f32(const StorageNetSpec *spec, DType storage,
                                             uint64_t data_seed, double bound) {
    StoragePair p;
    storage_pair_matches_f32(&p, spec, storage, data_seed, "", bound);
    storage_pair_free(&p);
}

// An evaluation pass of each net on the batch they hold; the summed losses.
static inline int storage_pair_evaluate(StoragePair *p, double *wide_eval, double *half_eval) {
    Status st;
    status_clear(&st);
    int rc = storage_net_pass(&p->wide, 0, wide_eval, &st);
    if (!rc) rc = storage_net_pass(&p->half, 0, half_eval, &st);
    if (rc) fprintf(stderr, "evaluation: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    return rc;
}

// `steps` optimizer steps on the batch drawn from data_seed in `storage`: the loss must
// fall below `factor` times the first step's.
static inline void check_training_learns(const StorageNetSpec *spec, DType storage,
                                         const OptimizerConfig *opt, int steps,
                                         uint64_t data_seed, double factor) {
    StorageNet n;
    Status st;
    status_clear(&st);
    double first = 0.0, last = 0.0;
    int rc = storage_net_build(&n, spec, storage, &st);
    if (!rc) rc = optimizer_prepare(&n.g, opt, n.b, &n.alloc, &st);
    if (!rc) rc = storage_net_load_batch(&n, data_seed, &st);
    for (int i = 0; !rc && i < steps; i++) {
        rc = storage_net_pass(&n, 1, i ? &last : &first, &st);
        if (!rc) rc = optimizer_step(&n.g, opt, n.b, i + 1, &st);
    }
    if (rc) {
        fprintf(stderr, "%s training: %s\n", dtype_name(storage), st.message);
        test_failures++;
    } else {
        fprintf(stderr, "%s training: loss %.4f -> %.4f\n", dtype_name(storage),
                first / spec->batch, last / spec->batch);
        CHECK(last < factor * first);
    }
    storage_net_free(&n);
}

#endif
