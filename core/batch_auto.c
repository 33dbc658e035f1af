#include "core/batch_auto.h"

#include <stdlib.h>
#include <string.h>

#include "core/memory_plan.h"
#include "core/optimizer.h"

// A trial step's forward updates batchnorm's running statistics; training must start
// from the values it would have had without the trial.
typedef struct BufferSnapshot {
    float **values;
    int count;
} BufferSnapshot;

static int param_buffers(const Graph *g, Param **out, int max) {
    int count = 0;
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++)
            if (g->layers[i]->params[k].buffer && count < max) out[count++] = &g->layers[i]->params[k];
    return count;
}

enum { MAX_BUFFERS = 256 };

static void snapshot_free(BufferSnapshot *s) {
    for (int i = 0; i < s->count; i++) free(s->values[i]);
    free(s->values);
    memset(s, 0, sizeof *s);
}

static int snapshot_take(const Graph *g, const Backend *b, BufferSnapshot *s, Status *st) {
    Param *buffers[MAX_BUFFERS];
    int count = param_buffers(g, buffers, MAX_BUFFERS);
    memset(s, 0, sizeof *s);
    s->values = calloc((size_t)(count ? count : 1), sizeof *s->values);
    if (!s->values)
        return status_out_of_host_memory(st, (size_t)(count ? count : 1) * sizeof *s->values,
                                         "saving the parameters");
    for (int i = 0; i < count; i++) {
        size_t bytes = buffers[i]->value.bytes;
        s->values[i] = malloc(bytes ? bytes : 1);
        s->count = i + 1;
        if (!s->values[i])
            return status_out_of_host_memory(st, bytes ? bytes : 1, "saving the parameters");
        TRY(b->copy_to_host(b, s->values[i], buffers[i]->value.data, bytes, st));
    }
    return 0;
}

static int snapshot_restore(const Graph *g, const Backend *b, const BufferSnapshot *s,
                            Status *st) {
    Param *buffers[MAX_BUFFERS];
    int count = param_buffers(g, buffers, MAX_BUFFERS);
    for (int i = 0; i < count && i < s->count; i++)
        TRY(b->copy_to_device(b, buffers[i]->value.data, s->values[i], buffers[i]->value.bytes, st));
    return 0;
}

// Every sharing replica's activations for `batch` samples, then forward and backward of
// graphs[0] with everything a step allocates, then all of it given back.
// STATUS_OUT_OF_MEMORY when the batch does not fit. Training holds every replica's
// activations at once but runs the replicas' passes one after another, so one pass beside
// the others' activations is the peak a step reaches.
static int trial_step(Graph *const *graphs, int sharing, Device *d, const Dataset *train,
                      int batch, Status *st) {
    const Backend *b = d->backend;
    Graph *g = graphs[0];
    size_t sample = (size_t)train->channels * train->height * train->width;
    float *images = malloc((size_t)batch * sample * sizeof *images);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    int32_t *indices = malloc((size_t)batch * sizeof *indices);
    int rc =
        (!images || !labels || !indices)
            ? status_out_of_host_memory(
                  st, (size_t)batch * (sample * sizeof *images + sizeof *labels + sizeof *indices),
                  "for a trial batch of %d", batch)
            : 0;
    if (!rc) {
        for (int i = 0; i < batch; i++) indices[i] = i % train->count;
        rc = dataset_gather(train, NULL, indices, batch, images, labels, st);
    }
    for (int r = 0; r < sharing && !rc; r++)
        rc = graph_allocate(graphs[r], b, &d->alloc, batch, NULL, st);
    if (!rc) rc = graph_load_batch(g, b, images, labels, batch, st);
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .batch = batch, .training = 1,
                        .labels = (const int32_t *)g->labels.data, .seed = 1};
    if (!rc) rc = graph_forward(g, &ctx, st);
    if (!rc) rc = graph_backward(g, &ctx, st);
    if (!rc) rc = b->synchronize(b, st);
    for (int r = 0; r < sharing; r++) graph_release_activations(graphs[r]);
    alloc_release_cache(&d->alloc);
    free(images);
    free(labels);
    free(indices);
    return rc;
}

// The trial under the tighter limit; the allocator's own limit is back afterwards.
static int trial_fits(Graph *const *graphs, int sharing, Device *d, const Dataset *train,
                      int batch, size_t trial_limit, BatchChoice *choice, int *fits,
                      Status *st) {
    Allocator *a = &d->alloc;
    size_t saved_limit = a->limit;
    if (a->mode == ALLOC_GROW) a->limit = trial_limit;
    Status trial;
    status_clear(&trial);
    int rc = trial_step(graphs, sharing, d, train, batch, &trial);
    a->limit = saved_limit;
    choice->trials++;
    *fits = rc == 0;
    if (rc && rc != STATUS_OUT_OF_MEMORY) {
        *st = trial;
        return rc;
    }
    return 0;
}

// The trials are the search for a batch, not the run: the memory line after training
// would count their probes past the limit as the run's out-of-memory events, and the
// largest probe's peak as the run's. The allocation counts keep the trials' calls: some of
// what they took (each graph's loss sums) stays for the run.
static void forget_trials(Allocator *a, const AllocStats *before) {
    AllocStats *s = &a->stats;
    s->out_of_memory = before->out_of_memory;
    s->peak_in_use = before->peak_in_use > s->in_use ? before->peak_in_use : s->in_use;
    s->peak_reserved = before->peak_reserved > s->reserved ? before->peak_reserved : s->reserved;
}

static size_t budget_of(const Device *d) {
    if (d->alloc.limit) return d->alloc.limit;
    size_t total = d->backend->total_memory(d->backend);
    return (size_t)((double)total * (1.0 - MEMORY_PLAN_DEVICE_MARGIN));
}

int batch_auto_choose(Graph *const *graphs, int sharing, const RunConfig *config, Device *d,
                      const Dataset *train, const Dataset *test, int max_batch,
                      BatchChoice *choice, Status *st) {
    memset(choice, 0, sizeof *choice);
    const Backend *b = d->backend;
    Graph *g = graphs[0];
    if (sharing < 1) sharing = 1;
    // Every sharing replica's state, which training allocates next anyway: the trials
    // must find the others' state beside their own, as training's steps do.
    for (int r = 0; r < sharing; r++)
        TRY(optimizer_prepare(graphs[r], &config->optimizer, b, &d->alloc, st));
    // Plan against the trial's share, so the plan's answer is usually the one that passes.
    // The replicas are alike, so one replica planned in 1/sharing of it is all of them.
    size_t trial_limit = (size_t)((double)budget_of(d) * BATCH_AUTO_TRIAL_SHARE);
    choice->budget = trial_limit / (size_t)sharing;
    MemoryPlanOptions options = {
        .optimizer = &config->optimizer, .train_samples = train->count, .test_samples = test ? test->count : 0,
        // Staged datasets (features, streamed images) keep no copy on the device.
        .sample_bytes = train->features || train->paths ? 0 : dataset_sample_size(train),
        .limit = d->alloc.limit / (size_t)sharing, .mode = d->alloc.mode};
    TRY(memory_plan_largest_batch_with(g, b, &options, choice->budget, &choice->planned, st));
    int candidate = choice->planned;
    int cap = max_batch < BATCH_AUTO_MAX ? max_batch : BATCH_AUTO_MAX;
    if (candidate > cap) {
        candidate = cap;
        choice->capped = 1;
    }
    BufferSnapshot snapshot;
    TRY(snapshot_take(g, b, &snapshot, st));
    AllocStats before_trials = d->alloc.stats;
    // The plan's answer first; when the trial refuses it, bisect below it.
    int fits = 0, rc = 0;
    if (candidate > 0)
        rc = trial_fits(graphs, sharing, d, train, candidate, trial_limit, choice, &fits, st);
    int good = fits ? candidate : 0, bad = fits ? 0 : candidate;
    while (!rc && !fits && bad - good > 1) {
        int mid = good + (bad - good) / 2;
        int mid_fits = 0;
        rc = trial_fits(graphs, sharing, d, train, mid, trial_limit, choice, &mid_fits, st);
        if (mid_fits) good = mid;
        else bad = mid;
    }
    forget_trials(&d->alloc, &before_trials);
    if (!rc) rc = snapshot_restore(g, b, &snapshot, st);
    snapshot_free(&snapshot);
    TRY(rc);
    if (good == 0) {
        char budget[32];
        status_fail(st, STATUS_OUT_OF_MEMORY, "--batch auto: not even one sample fits in %s on %s "
                    "beside the parameters and optimizer state",
                    alloc_format_bytes(choice->budget, budget, sizeof budget), d->name);
        status_hint(st, "raise --memory-limit; `trainer check MODEL --batch 1` shows the plan");
        return STATUS_OUT_OF_MEMORY;
    }
    choice->batch = good;
    return 0;
}
