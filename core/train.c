#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "core/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/collective.h"
#include "core/memory_plan.h"
#include "core/optimizer.h"

double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ---- where a replica's samples come from ----

// When the dataset fits on the device (Fashion-MNIST is 47 MB of bytes) it is copied there
// once and each batch is gathered on the device from the shuffled indices, so a step moves
// only the indices across the bus. Otherwise samples are converted on the host and copied
// in, one transfer per batch.
typedef struct BatchSource {
    const Dataset *dataset;
    int on_device;
    int capacity;                    // samples one load may carry
    int classes;                     // labels must lie in [0, classes)
    Tensor images, labels, indices;  // device copies (on_device)
    Tensor first_bad_sample;         // [1] int32 on the device: see Backend.gather_samples
    float *host_images;              // staging (!on_device)
    int32_t *host_labels;
} BatchSource;

static size_t sample_size(const Dataset *ds) {
    return (size_t)ds->channels * ds->height * ds->width;
}

// Half of what the memory limit leaves is the most the dataset may take, so that the
// activations still fit; without a limit, the allocator's answer decides.
static int dataset_fits(const Allocator *a, size_t bytes) {
    if (!a->limit) return 1;
    return a->limit > a->stats.reserved && bytes <= (a->limit - a->stats.reserved) / 2;
}

static int upload_dataset(BatchSource *s, Device *d, Status *st) {
    const Dataset *ds = s->dataset;
    Shape bytes = shape_make1((int)sample_size(ds)), one = {.rank = 0};
    tensor_set_shape(&s->images, DTYPE_U8, ds->count, &bytes);
    tensor_set_shape(&s->labels, DTYPE_U8, ds->count, &one);
    tensor_set_shape(&s->indices, DTYPE_I32, s->capacity, &one);
    tensor_set_shape(&s->first_bad_sample, DTYPE_I32, 1, &one);
    if (!dataset_fits(&d->alloc, s->images.bytes + s->labels.bytes)) return STATUS_OUT_OF_MEMORY;
    TRY(tensor_alloc(&s->images, &d->alloc, st));
    TRY(tensor_alloc(&s->labels, &d->alloc, st));
    TRY(tensor_alloc(&s->indices, &d->alloc, st));
    TRY(tensor_alloc(&s->first_bad_sample, &d->alloc, st));
    const Backend *b = d->backend;
    const int32_t none = INT32_MAX;
    TRY(b->copy_to_device(b, s->first_bad_sample.data, &none, sizeof none, st));
    TRY(b->copy_to_device(b, s->images.data, ds->images, s->images.bytes, st));
    return b->copy_to_device(b, s->labels.data, ds->labels, s->labels.bytes, st);
}

static void source_close(BatchSource *s) {
    tensor_free(&s->images);
    tensor_free(&s->labels);
    tensor_free(&s->indices);
    tensor_free(&s->first_bad_sample);
    free(s->host_images);
    free(s->host_labels);
    memset(s, 0, sizeof *s);
}

static int source_open(BatchSource *s, Device *d, const Dataset *ds, int capacity, int classes,
                       Status *st) {
    memset(s, 0, sizeof *s);
    s->dataset = ds;
    s->capacity = capacity;
    s->classes = classes;
    Status upload;
    status_clear(&upload);
    int rc = upload_dataset(s, d, &upload);
    if (rc == 0) {
        s->on_device = 1;
        return 0;
    }
    if (rc != STATUS_OUT_OF_MEMORY) {
        *st = upload;
        return rc;
    }
    // Does not fit: give back what was taken and stage batches through the host.
    tensor_free(&s->images);
    tensor_free(&s->labels);
    tensor_free(&s->indices);
    tensor_free(&s->first_bad_sample);
    s->host_images = malloc((size_t)capacity * sample_size(ds) * sizeof *s->host_images);
    s->host_labels = malloc((size_t)capacity * sizeof *s->host_labels);
    if (!s->host_images || !s->host_labels)
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    return 0;
}

// A label outside the model's classes, as a status with the values: where PyTorch stops
// with "device-side assert triggered", this names the sample, its label and the classes.
static int bad_label(const BatchSource *s, int sample, Status *st) {
    int label = s->dataset->labels[sample];
    status_fail(st, STATUS_BAD_INPUT, "sample %d of %s has label %d, but the model has %d "
                "classes (labels 0 to %d)", sample, s->dataset->source, label, s->classes,
                s->classes - 1);
    status_hint(st, "fix the labels, or give the last layer units=%d to have %d classes",
                label + 1, label + 1);
    snprintf(st->error_name, sizeof st->error_name, "device-side-assert");
    return STATUS_BAD_INPUT;
}

// Loads samples indices[0..count) into the graph's input and labels.
static int source_load(BatchSource *s, Graph *g, const Backend *b, const int32_t *indices,
                       int count, Status *st) {
    if (!s->on_device) {
        dataset_gather(s->dataset, indices, count, s->host_images, s->host_labels);
        for (int k = 0; k < count; k++)
            if (s->host_labels[k] >= s->classes) return bad_label(s, indices[k], st);
        return graph_load_batch(g, b, s->host_images, s->host_labels, count, st);
    }
    TRY(b->copy_to_device(b, s->indices.data, indices, (size_t)count * sizeof *indices, st));
    return b->gather_samples(b, (const uint8_t *)s->images.data, (const uint8_t *)s->labels.data,
                             (const int32_t *)s->indices.data, count, sample_size(s->dataset),
                             1.0f / 255.0f, s->classes, tensor_f32(&g->input->output),
                             (int32_t *)g->labels.data, (int32_t *)s->first_bad_sample.data, st);
}

// The device-side label check's verdict, read when the host syncs anyway (with the loss).
static int source_check_labels(const BatchSource *s, const Backend *b, Status *st) {
    if (!s->on_device) return 0;
    int32_t first_bad;
    TRY(b->copy_to_host(b, &first_bad, s->first_bad_sample.data, sizeof first_bad, st));
    return first_bad == INT32_MAX ? 0 : bad_label(s, first_bad, st);
}

// ---- a training run: replicas, their data, and how a step is cut up ----

typedef struct Replica {
    Graph *graph;
    Device *device;
    BatchSource source;
} Replica;

typedef struct TrainRun {
    Replica *replicas;
    int count;
    Collective collective;      // count > 1
    Batcher batcher;            // one order for the whole run; each step is split
    int32_t *step_indices;      // the step's samples
    int batch;                  // samples per step, over all replicas
    int micro_batch;            // samples per forward/backward pass on one replica
    const TrainHooks *hooks;
    int reported_split;         // the micro-batch notice is given once
    const char *failed_device;  // where the last failed step failed, for its message
} TrainRun;

static int make_current(const Device *d, Status *st) {
    const Backend *b = d->backend;
    return b->make_current ? b->make_current(b, st) : 0;
}

// Replica r's share of n samples: the first n % count replicas take one more.
static void replica_share(int n, int count, int r, int *offset, int *share) {
    int base = n / count, extra = n % count;
    *share = base + (r < extra ? 1 : 0);
    *offset = r * base + (r < extra ? r : extra);
}

static int largest_share(int batch, int count) { return (batch + count - 1) / count; }

// Each step gets its own dropout seed from (run seed, step), so a run is reproducible and
// no two steps share a mask; a pass over a slice of the step passes where the slice
// starts (LayerContext.sample_offset), not a seed of its own.
static uint64_t step_seed(long seed, long step) {
    return (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)step * 0xD1B54A32D192ED03ull;
}

static void notice(const TrainRun *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const TrainRun *run, const char *fmt, ...) {
    if (!run->hooks || !run->hooks->on_notice) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    run->hooks->on_notice(run->hooks->user, line);
}

static int graph_has_kind(const Graph *g, const char *kind) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->kind->name, kind) == 0) return 1;
    return 0;
}

static void release_activations(TrainRun *run) {
    for (int r = 0; r < run->count; r++) {
        graph_release_activations(run->replicas[r].graph);
        // Cached blocks go back too: the next attempt is smaller and may need them whole.
        alloc_release_cache(&run->replicas[r].device->alloc);
    }
}

static size_t reserved_bytes(const TrainRun *run) {
    size_t total = 0;
    for (int r = 0; r < run->count; r++) total += run->replicas[r].device->alloc.stats.reserved;
    return total;
}

// Out of memory with one sample per pass: the error shows the plan for that one sample,
// so the user sees what does not fit (the fixed part: parameters, gradients, optimizer
// state) beside the budget.
static int cannot_split(const Replica *failed, const Status *cause, Status *st) {
    *st = *cause;
    const Allocator *a = &failed->device->alloc;
    MemoryPlanOptions options = {.batch = 1, .training = 1, .limit = a->limit, .mode = a->mode};
    MemoryPlan plan;
    Status plan_status;
    status_clear(&plan_status);
    char text[400] = "";
    if (memory_plan(failed->graph, a->backend, &options, &plan, &plan_status) == 0) {
        char total[32], fixed[32], state[32], per_sample[32], budget[32] = "none";
        if (a->limit) alloc_format_bytes(a->limit, budget, sizeof budget);
        snprintf(text, sizeof text, " (the plan for one sample: %s in all; parameters and their "
                 "gradients %s, optimizer state %s, activations and their gradients %s; limit %s)",
                 alloc_format_bytes(plan.total, total, sizeof total),
                 alloc_format_bytes(plan.parameters + plan.gradients, fixed, sizeof fixed),
                 alloc_format_bytes(plan.optimizer_state, state, sizeof state),
                 alloc_format_bytes(plan.activations + plan.activation_gradients, per_sample,
                                    sizeof per_sample),
                 budget);
        memory_plan_free(&plan);
    }
    char message[sizeof st->message];
    snprintf(message, sizeof message, "%.600s; even one sample per pass does not fit%s",
             cause->message, text);
    snprintf(st->message, sizeof st->message, "%s", message);
    status_hint(st, "the parameters and optimizer state leave no room for one sample's "
                    "activations: raise --memory-limit; `trainer check MODEL --batch 1` shows "
                    "the plan layer by layer");
    return STATUS_OUT_OF_MEMORY;
}

// After running out of memory at run->micro_batch on `failed`: everything per-batch is
// given back, and the pass size halves. Logged once, in one line, as the issue asks.
static int halve_micro_batch(TrainRun *run, const Replica *failed, const Status *cause,
                             Status *st) {
    size_t before = reserved_bytes(run), failed_reserved = failed->device->alloc.stats.reserved;
    release_activations(run);
    int old_size = run->micro_batch;
    if (old_size <= 1) return cannot_split(failed, cause, st);
    run->micro_batch = (old_size + 1) / 2;
    int share = largest_share(run->batch, run->count);
    int passes = (share + run->micro_batch - 1) / run->micro_batch;
    if (!run->reported_split) {
        // "layer conv2, 1.5 GiB requested, 0.3 GiB free"
        const Allocator *a = &failed->device->alloc;
        char where[256], bytes[32];
        int used = snprintf(where, sizeof where, "layer %s",
                            failed->graph->failed_layer[0] ? failed->graph->failed_layer : "?");
        if (failed->graph->failed_bytes && used < (int)sizeof where)
            used += snprintf(where + used, sizeof where - (size_t)used, ", %s requested",
                             alloc_format_bytes(failed->graph->failed_bytes, bytes, sizeof bytes));
        size_t capacity = a->limit ? a->limit : a->backend->total_memory(a->backend);
        size_t free_bytes = capacity > failed_reserved ? capacity - failed_reserved : 0;
        if (capacity && used < (int)sizeof where)
            snprintf(where + used, sizeof where - (size_t)used, ", %s free",
                     alloc_format_bytes(free_bytes, bytes, sizeof bytes));
        char before_text[32], after_text[32];
        notice(run, "out of memory at batch %d on %s (%s): continuing as %d micro-batches of %d%s "
               "(reserved %s before releasing the step, %s after)",
               old_size, failed->device->name, where, passes, run->micro_batch,
               graph_has_kind(failed->graph, "batchnorm")
                   ? "; batchnorm layers now normalise over each micro-batch" : "",
               alloc_format_bytes(before, before_text, sizeof before_text),
               alloc_format_bytes(reserved_bytes(run), after_text, sizeof after_text));
    }
    run->reported_split = 1;
    return 0;
}

// Activations for one pass of run->micro_batch samples on every replica, halving the pass
// until it fits.
static int allocate_passes(TrainRun *run, Status *st) {
    for (;;) {
        int failed = -1;
        Status attempt;
        status_clear(&attempt);
        for (int r = 0; r < run->count && failed < 0; r++) {
            Replica *rep = &run->replicas[r];
            if (make_current(rep->device, st)) return st->code;
            if (graph_allocate(rep->graph, rep->device->backend, &rep->device->alloc,
                               run->micro_batch, &attempt))
                failed = r;
        }
        if (failed < 0) return 0;
        if (attempt.code != STATUS_OUT_OF_MEMORY) {
            *st = attempt;
            return st->code;
        }
        TRY(halve_micro_batch(run, &run->replicas[failed], &attempt, st));
    }
}

// Forward and backward of replica r's share of the step, in passes of run->micro_batch;
// parameter gradients add up over the passes.
static int replica_passes(TrainRun *run, int r, int n, long step, Status *st) {
    Replica *rep = &run->replicas[r];
    Graph *g = rep->graph;
    const Backend *b = rep->device->backend;
    int offset, share;
    replica_share(n, run->count, r, &offset, &share);
    TRY(make_current(rep->device, st));
    if (share == 0) {
        // Fewer samples than replicas: this one contributes a zero gradient to the sum.
        for (int i = 0; i < g->count; i++)
            for (int k = 0; k < g->layers[i]->param_count; k++) {
                Param *p = &g->layers[i]->params[k];
                if (!p->buffer) TRY(b->fill(b, tensor_f32(&p->grad), 0.0f, tensor_numel(&p->grad), st));
            }
        return 0;
    }
    int split = share > run->micro_batch;
    LayerContext ctx = {.backend = b, .alloc = &rep->device->alloc, .training = 1,
                        .labels = (const int32_t *)g->labels.data, .loss_batch = n,
                        .sync_check = g->sync_check};
    for (int start = 0; start < share; start += run->micro_batch) {
        int count = share - start < run->micro_batch ? share - start : run->micro_batch;
        if (source_load(&rep->source, g, b, run->step_indices + offset + start, count, st)) {
            status_prefix(st, "loading the batch: ");
            return st->code;
        }
        ctx.batch = count;
        ctx.seed = step_seed(g->train.seed, step);
        ctx.sample_offset = offset + start;
        ctx.accumulate_param_grads = start > 0;
        TRY(graph_forward(g, &ctx, st));
        TRY(graph_backward(g, &ctx, st));
        TRY(graph_add_loss_sums(g, b, count, split, st));
    }
    return split ? graph_commit_step_loss_sums(g, b, st) : 0;
}

// Every replica's gradient becomes the sum over replicas.
static int all_reduce_gradients(TrainRun *run, Status *st) {
    if (run->count == 1) return 0;
    Graph *first = run->replicas[0].graph;
    float *buffers[64];
    for (int i = 0; i < first->count; i++)
        for (int k = 0; k < first->layers[i]->param_count; k++) {
            if (first->layers[i]->params[k].buffer) continue;
            for (int r = 0; r < run->count; r++)
                buffers[r] = tensor_f32(&run->replicas[r].graph->layers[i]->params[k].grad);
            TRY(run->collective.all_reduce_sum(&run->collective, buffers,
                                               tensor_numel(&first->layers[i]->params[k].grad), st));
        }
    return 0;
}

// Every replica starts from replica 0's parameters and buffers.
static int broadcast_parameters(TrainRun *run, Status *st) {
    if (run->count == 1) return 0;
    Graph *first = run->replicas[0].graph;
    float *buffers[64];
    for (int i = 0; i < first->count; i++)
        for (int k = 0; k < first->layers[i]->param_count; k++) {
            for (int r = 0; r < run->count; r++)
                buffers[r] = tensor_f32(&run->replicas[r].graph->layers[i]->params[k].value);
            TRY(run->collective.broadcast(&run->collective, buffers,
                                          tensor_numel(&first->layers[i]->params[k].value), 0, st));
        }
    return 0;
}

// A step that ran out of memory part-way: its partial loss sums are dropped, what it
// allocated is given back, and it runs again in passes half the size. Nothing else has
// changed yet (the optimizer runs only after every pass), so the redo is the same step.
static int run_step(TrainRun *run, int n, long step, Status *st) {
    for (;;) {
        int failed = -1;
        Status attempt;
        status_clear(&attempt);
        for (int r = 0; r < run->count && failed < 0; r++)
            if (replica_passes(run, r, n, step, &attempt)) failed = r;
        if (failed < 0) break;
        if (attempt.code != STATUS_OUT_OF_MEMORY) {
            *st = attempt;
            run->failed_device = run->replicas[failed].device->name;
            return st->code;
        }
        for (int r = 0; r < run->count; r++) {
            Replica *rep = &run->replicas[r];
            TRY(make_current(rep->device, st));
            TRY(graph_discard_step_loss_sums(rep->graph, rep->device->backend, st));
        }
        run->failed_device = run->replicas[failed].device->name;
        TRY(halve_micro_batch(run, &run->replicas[failed], &attempt, st));
        TRY(allocate_passes(run, st));
    }
    run->failed_device = run->replicas[0].device->name;
    TRY(all_reduce_gradients(run, st));
    for (int r = 0; r < run->count; r++) {
        Replica *rep = &run->replicas[r];
        run->failed_device = rep->device->name;
        TRY(make_current(rep->device, st));
        TRY(optimizer_step(rep->graph, rep->device->backend, (int)step, st));
    }
    return 0;
}

static int read_loss_sums(TrainRun *run, double *loss_sum, double *correct_sum, Status *st) {
    *loss_sum = *correct_sum = 0.0;
    for (int r = 0; r < run->count; r++) {
        Replica *rep = &run->replicas[r];
        double loss, correct;
        TRY(make_current(rep->device, st));
        TRY(graph_read_loss_sums(rep->graph, rep->device->backend, &loss, &correct, st));
        TRY(source_check_labels(&rep->source, rep->device->backend, st));
        *loss_sum += loss;
        *correct_sum += correct;
    }
    return 0;
}

static int check_finite_loss(const Graph *g, double loss, int epoch, int step, Status *st) {
    if (isfinite(loss)) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "training diverged: the loss became %s at epoch %d, "
                "step %d", isnan(loss) ? "NaN" : "infinite", epoch, step);
    status_hint(st, "lower the learning rate (now lr=%g, try --lr %g)", g->optimizer.lr,
                g->optimizer.lr / 10.0);
    return STATUS_RUNTIME_ERROR;
}

// The host reads the running loss (a device sync) this often, and at an epoch's end: often
// enough for a live progress bar and to stop soon after a divergence, rare enough that a
// GPU runs ahead of the host between reads.
enum { LOSS_READ_INTERVAL = 16 };

static int report_step(TrainRun *run, int epoch, int step, int steps, int seen, double start,
                       double loss_sum, EpochReport *report, Status *st) {
    const TrainHooks *hooks = run->hooks;
    if (!hooks || !hooks->on_step) return 0;
    double elapsed = monotonic_seconds() - start;
    StepReport r = {.epoch = epoch, .epochs = run->replicas[0].graph->train.epochs, .step = step,
                    .steps = steps, .loss = loss_sum / seen,
                    .samples_per_second = elapsed > 0 ? seen / elapsed : 0.0,
                    .epoch_seconds = elapsed};
    if (!hooks->on_step(hooks->user, &r)) return 0;
    report->interrupted = 1;
    status_fail(st, STATUS_RUNTIME_ERROR, "interrupted at epoch %d, step %d of %d", epoch, step,
                steps);
    status_hint(st, "with --save FILE the weights so far are kept; `trainer eval` reads them");
    return STATUS_RUNTIME_ERROR;
}

static int train_epoch(TrainRun *run, int epoch, long *global_step, EpochReport *report,
                       Status *st) {
    Graph *first = run->replicas[0].graph;
    double loss_sum = 0.0, correct_sum = 0.0, start = monotonic_seconds();
    int seen = 0, steps = batcher_steps_per_epoch(&run->batcher);
    batcher_start_epoch(&run->batcher, epoch);
    for (int r = 0; r < run->count; r++) {
        TRY(make_current(run->replicas[r].device, st));
        TRY(graph_reset_loss_sums(run->replicas[r].graph, run->replicas[r].device->backend, st));
    }
    for (int step = 1;; step++) {
        int n = batcher_next_indices(&run->batcher, run->step_indices);
        if (n == 0) break;
        if (run_step(run, n, ++*global_step, st)) {
            // Which step, and on which device when there are several, beside the layer.
            status_prefix(st, "epoch %d, step %d on %s: ", epoch, step,
                          run->failed_device ? run->failed_device : "?");
            return st->code;
        }
        seen += n;
        if (step % LOSS_READ_INTERVAL != 0 && step != steps) continue;
        TRY(read_loss_sums(run, &loss_sum, &correct_sum, st));
        TRY(check_finite_loss(first, loss_sum, epoch, step, st));
        TRY(report_step(run, epoch, step, steps, seen, start, loss_sum, report, st));
    }
    report->seconds = monotonic_seconds() - start;
    report->train_loss = seen ? loss_sum / seen : 0.0;
    report->train_accuracy = seen ? correct_sum / seen : 0.0;
    report->samples_per_second = report->seconds > 0 ? seen / report->seconds : 0.0;
    return 0;
}

static void close_run(TrainRun *run) {
    for (int r = 0; r < run->count; r++) source_close(&run->replicas[r].source);
    if (run->count > 1) collective_close(&run->collective);
    batcher_free(&run->batcher);
    free(run->step_indices);
    free(run->replicas);
}

// Optimizer state and the dataset come before the activations, so that when memory is
// short it is the per-batch part that shrinks.
static int open_run(TrainRun *run, Graph *const *graphs, Device *const *devices, int count,
                    const Dataset *train, const TrainHooks *hooks, Status *st) {
    memset(run, 0, sizeof *run);
    if (count < 1 || count > 64) {
        status_fail(st, STATUS_BAD_INPUT, "data parallelism takes 1 to 64 replicas, got %d",
                    count);
        status_hint(st, "list at most 64 GPUs in --gpus");
        return STATUS_BAD_INPUT;
    }
    run->hooks = hooks;
    run->count = count;
    run->batch = graphs[0]->train.batch < train->count ? graphs[0]->train.batch : train->count;
    run->micro_batch = largest_share(run->batch, count);
    run->replicas = calloc((size_t)count, sizeof *run->replicas);
    run->step_indices = malloc((size_t)run->batch * sizeof *run->step_indices);
    if (!run->replicas || !run->step_indices)
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    TRY(batcher_init(&run->batcher, train, run->batch, 1, (uint64_t)graphs[0]->train.seed, st));
    for (int r = 0; r < count; r++) {
        Replica *rep = &run->replicas[r];
        rep->graph = graphs[r];
        rep->device = devices[r];
        TRY(make_current(rep->device, st));
        TRY(optimizer_prepare(rep->graph, rep->device->backend, &rep->device->alloc, st));
        TRY(source_open(&rep->source, rep->device, train, run->micro_batch,
                        graph_classes(rep->graph), st));
        if (!rep->source.on_device && r == 0) {
            char bytes[32];
            notice(run, "the training set (%s) does not fit on %s beside the model; batches are "
                   "staged through the host", alloc_format_bytes((size_t)train->count *
                   (sample_size(train) + 1), bytes, sizeof bytes), rep->device->name);
        }
    }
    if (count > 1) {
        TRY(collective_open(devices, count, &run->collective, st));
        TRY(broadcast_parameters(run, st));
    }
    return allocate_passes(run, st);
}

int train_replicas(Graph *const *graphs, Device *const *devices, int count, const Dataset *train,
                   const Dataset *test, const TrainHooks *hooks, int *interrupted, Status *st) {
    TrainRun run;
    int rc = open_run(&run, graphs, devices, count, train, hooks, st);
    Graph *first = graphs[0];
    long global_step = first->optimizer_steps;
    for (int epoch = 1; !rc && epoch <= first->train.epochs; epoch++) {
        EpochReport report = {.epoch = epoch, .epochs = first->train.epochs};
        rc = train_epoch(&run, epoch, &global_step, &report, st);
        for (int r = 0; r < count; r++) graphs[r]->optimizer_steps = global_step;
        if (interrupted) *interrupted = report.interrupted;
        if (!rc && test) {
            report.has_test = 1;
            if (!(rc = make_current(devices[0], st)))
                rc = evaluate_model(first, devices[0], test, run.batch, &report.test, st);
        }
        if (!rc && hooks && hooks->on_epoch) rc = hooks->on_epoch(hooks->user, &report, first,
                                                                  devices[0], st);
    }
    close_run(&run);
    return rc;
}

int train_model(Graph *g, Device *d, const Dataset *train, const Dataset *test,
                const TrainHooks *hooks, int *interrupted, Status *st) {
    return train_replicas(&g, &d, 1, train, test, hooks, interrupted, st);
}

int evaluate_model(Graph *g, Device *d, const Dataset *ds, int batch, EvalResult *out,
                   Status *st) {
    const Backend *b = d->backend;
    if (batch > ds->count) batch = ds->count;
    // After training split its batch to fit, evaluation takes the same smaller passes.
    if (g->allocated_batch > 0 && g->allocated_batch < batch) batch = g->allocated_batch;
    if (g->allocated_batch < batch) TRY(graph_allocate(g, b, &d->alloc, batch, st));
    Batcher batcher;
    TRY(batcher_init(&batcher, ds, batch, 0, 0, st));
    BatchSource source;
    int32_t *indices = malloc((size_t)batch * sizeof *indices);
    int rc = indices ? source_open(&source, d, ds, batch, graph_classes(g), st)
                     : status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    if (!indices) memset(&source, 0, sizeof source);
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 0,
                        .labels = (const int32_t *)g->labels.data, .sync_check = g->sync_check};
    double loss_sum = 0.0, correct_sum = 0.0;
    int seen = 0;
    batcher_start_epoch(&batcher, 0);
    if (!rc) rc = graph_reset_loss_sums(g, b, st);
    while (!rc) {
        int n = batcher_next_indices(&batcher, indices);
        if (n == 0) break;
        ctx.batch = n;
        rc = source_load(&source, g, b, indices, n, st);
        if (!rc) rc = graph_forward(g, &ctx, st);
        if (!rc) rc = graph_add_loss_sums(g, b, n, 0, st);
        seen += n;
    }
    if (!rc) rc = graph_read_loss_sums(g, b, &loss_sum, &correct_sum, st);
    if (!rc) rc = source_check_labels(&source, b, st);
    source_close(&source);
    batcher_free(&batcher);
    free(indices);
    if (rc) return rc;
    out->samples = seen;
    out->loss = seen ? loss_sum / seen : 0.0;
    out->accuracy = seen ? correct_sum / seen : 0.0;
    return 0;
}
