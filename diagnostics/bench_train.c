// `trainer bench train MODEL`: whole training steps of a model, as the training loop runs
// them (forward, backward, the loss sums, clipping when the model asks for it, the
// optimizer's update), on synthetic data of the model's input shape, so no dataset is
// needed. Samples/s is the median over repeats of `steps` steps each, after warm-up steps
// (the first steps allocate memory and, on a GPU, choose cuDNN algorithms).
//
// A batch comes from one of several sets of random inputs and labels kept on the device
// and copied into the graph's input each step: the device-to-device copy is what the
// training loop's gather costs for a dataset held on the device, and the rotation keeps
// one batch from staying in cache step after step.
//
// --per-layer: `steps` more steps with a timer mark between every two layers' forward and
// backward and around the update; each layer's figure is its median over those steps. The
// marks themselves cost a little (an event record each on a GPU), so these steps are not
// the ones samples/s is measured on.
//
// --precision fp16 scales the loss and checks and unscales the gradients every step, as
// core/train.c does (core/loss_scale.h): the check reads every gradient's sum of squares on
// the host, so each step waits for the device, and an overflow skips the update. Without
// them an fp16 figure would be what no training run gets. The update's per-layer figure
// holds the check and the unscale.
#include "diagnostics/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "core/grad_clip.h"
#include "core/loss_scale.h"
#include "core/optimizer.h"
#include "core/step_graph.h"

enum { TRAIN_MAX_SETS = 8 };

typedef struct SyntheticBatches {
    Allocator *alloc;
    float *images[TRAIN_MAX_SETS];
    int32_t *labels[TRAIN_MAX_SETS];
    int sets;
    size_t image_floats;  // per batch
} SyntheticBatches;

static void batches_free(SyntheticBatches *s) {
    for (int i = 0; i < s->sets; i++) {
        if (s->images[i]) alloc_put(s->alloc, s->images[i]);
        if (s->labels[i]) alloc_put(s->alloc, s->labels[i]);
    }
    s->sets = 0;
}

// Inputs uniform in [0, 1) (pixels scaled as the trainer scales them), labels uniform
// over the model's classes.
static int batches_make(Device *d, const BenchDevice *dev, const Graph *g, int batch,
                        SyntheticBatches *s, Status *st) {
    const Backend *b = d->backend;
    memset(s, 0, sizeof *s);
    s->alloc = &d->alloc;
    s->image_floats = (size_t)batch * shape_numel(&g->input->out_shape);
    int sets = bench_input_sets(dev, s->image_floats * sizeof(float), TRAIN_MAX_SETS);
    float *host = malloc(s->image_floats * sizeof *host);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    int rc = host && labels
                 ? 0
                 : status_out_of_host_memory(
                       st, s->image_floats * sizeof *host + (size_t)batch * sizeof *labels,
                       "for a synthetic batch");
    int classes = graph_classes(g);
    Rng rng;
    rng_seed(&rng, 1);
    for (int i = 0; !rc && i < sets; i++) {
        for (size_t k = 0; k < s->image_floats; k++) host[k] = rng_uniform(&rng);
        for (int k = 0; k < batch; k++)
            labels[k] = (int32_t)rng_below(&rng, (uint32_t)(classes > 0 ? classes : 1));
        rc = alloc_get(s->alloc, s->image_floats * sizeof(float), (void **)&s->images[i], st);
        if (!rc) rc = alloc_get(s->alloc, (size_t)batch * sizeof(int32_t),
                                (void **)&s->labels[i], st);
        s->sets = i + 1;
        if (!rc)
            rc = b->copy_to_device(b, s->images[i], host, s->image_floats * sizeof(float), st);
        if (!rc)
            rc = b->copy_to_device(b, s->labels[i], labels, (size_t)batch * sizeof(int32_t), st);
    }
    // copy_to_device may still read the host buffers (pinned on a GPU); wait before freeing.
    if (!rc) rc = b->synchronize(b, st);
    free(host);
    free(labels);
    return rc;
}

typedef struct TrainBench {
    Graph *graph;
    const RunConfig *config;
    Device *device;
    SyntheticBatches batches;
    LayerContext ctx;
    long step;  // optimizer steps taken, from 1
    // --precision fp16: the loss's gradient is multiplied by scaler.scale, and every step's
    // gradients are checked and unscaled before the update, as in training.
    int loss_scaling;
    LossScaler scaler;
    int use_graph;    // --cuda-graph: steps replayed from `replay`, captured at the first
    void *replay;
    char *graph_note; // the report's cuda_graph, graph_note_size bytes
    size_t graph_note_size;
} TrainBench;

static int load_batch(TrainBench *t, Status *st) {
    const Backend *b = t->device->backend;
    Graph *g = t->graph;
    int set = (int)(t->step % t->batches.sets);
    TRY(b->copy_on_device(b, g->input->output.data, t->batches.images[set],
                          t->batches.image_floats * sizeof(float), st));
    return b->copy_on_device(b, g->labels.data, t->batches.labels[set],
                             (size_t)t->ctx.batch * sizeof(int32_t), st);
}

// The next step's number, its dropout seed and, under fp16, the scale its loss gradient is
// multiplied by: the scaler's now, which the previous step may have halved or doubled.
static void begin_step(TrainBench *t) {
    t->step++;
    t->ctx.seed = (uint64_t)t->step * 0x9E3779B97F4A7C15ull;
    t->ctx.loss_scaling = t->loss_scaling ? (float)t->scaler.scale : 0.0f;
}

// fp16, core/train.c's unscale_or_skip on one device: the gradients are S times the true
// ones. Non-finite ones (S too large for fp16 somewhere in backward) skip the step: *skip,
// S halved, the skip counted in the scaler for the report (nothing here prints). Otherwise
// they are divided by the S they were made with, the scale before the update, which may
// have just doubled it.
static int unscale_or_skip(TrainBench *t, int *skip, Status *st) {
    const Backend *b = t->device->backend;
    LossScaleEvent event;
    double scale;
    TRY(loss_scale_check(t->graph, b, &t->device->alloc, &t->scaler, t->step, "the benchmark",
                         "the gradients overflow or are NaN unscaled: lower the model file's "
                         "optimizer lr=, add clip_norm=1 to it, or bench with --precision bf16 "
                         "(fp32's range)",
                         &event, &scale, st));
    *skip = event == LOSS_SCALE_HALVED;
    if (*skip) return 0;
    return loss_scale_unscale_gradients(t->graph, b, scale, st);
}

// What follows the backward pass in a training step: the loss sums, fp16's check and
// unscale (an overflow ends the step there, as in training), clipping and the update.
static int update(TrainBench *t, Status *st) {
    const Backend *b = t->device->backend;
    const OptimizerConfig *o = &t->config->optimizer;
    TRY(graph_add_loss_sums(t->graph, b, t->ctx.batch, 0, st));
    int skip = 0;
    if (t->loss_scaling) TRY(unscale_or_skip(t, &skip, st));
    if (skip) return 0;
    if (o->clip_norm > 0.0)
        TRY(clip_gradients(t->graph, b, &t->device->alloc, o->clip_norm, NULL, st));
    return optimizer_step(t->graph, o, b, (int)t->step, st);
}

// ---- the step from a CUDA Graph (--cuda-graph) ----
// Recorded: forward, backward, the loss sums and (without clipping, which reads the norm on
// the host) the update, as core/train.c records a training step. The batch's copy stays
// outside: each step copies another set. fp16 loss scaling never gets here: its check
// reads the gradients on the host every step, so step_graphs_refusal refuses graphs.

static int clipping(const TrainBench *t) { return t->config->optimizer.clip_norm > 0.0; }

static int capture_step(TrainBench *t, const StepValues *values, Status *st) {
    const Backend *b = t->device->backend;
    TRY(b->capture_begin(b, values, st));
    int rc = graph_forward(t->graph, &t->ctx, st);
    if (!rc) rc = graph_backward(t->graph, &t->ctx, st);
    if (!rc) rc = graph_add_loss_sums(t->graph, b, t->ctx.batch, 0, st);
    if (!rc && !clipping(t)) rc = optimizer_step(t->graph, &t->config->optimizer, b,
                                                  (int)t->step, st);
    Status ending;
    status_clear(&ending);
    int ended = b->capture_end(b, &t->replay, rc ? &ending : st);
    if (rc && t->replay) {
        b->graph_destroy(b, t->replay);
        t->replay = NULL;
    }
    return rc ? rc : ended;
}

static int plain_rest(TrainBench *t, Status *st) {
    TRY(graph_forward(t->graph, &t->ctx, st));
    TRY(graph_backward(t->graph, &t->ctx, st));
    return update(t, st);
}

// A capture that fails leaves graphs off: the step and the rest run plainly, and the
// report says why.
static int replayed_rest(TrainBench *t, Status *st) {
    const Backend *b = t->device->backend;
    const OptimizerConfig *o = &t->config->optimizer;
    StepValues values = {.lr = (float)o->lr, .step = (int)t->step, .seed = t->ctx.seed};
    if (!t->replay) {
        Status failed;
        status_clear(&failed);
        if (capture_step(t, &values, &failed)) {
            t->use_graph = 0;
            snprintf(t->graph_note, t->graph_note_size, "capturing the step failed, so plain "
                     "launches were timed: %.200s", failed.message);
            return plain_rest(t, st);
        }
    }
    TRY(b->graph_launch(b, t->replay, &values, st));
    if (!clipping(t)) return 0;
    TRY(clip_gradients(t->graph, b, &t->device->alloc, o->clip_norm, NULL, st));
    return optimizer_step(t->graph, o, b, (int)t->step, st);
}

static int step(TrainBench *t, Status *st) {
    begin_step(t);
    TRY(load_batch(t, st));
    return t->use_graph ? replayed_rest(t, st) : plain_rest(t, st);
}

// After the warm-up (one plain step at least: cuDNN chooses its algorithms and the
// libraries allocate there, which a capture would refuse), graphs for the timed steps,
// or the reason they cannot be used.
static int start_graphs(TrainBench *t, Status *st) {
    if (t->config->cuda_graph == CUDA_GRAPH_OFF) return 0;
    const Backend *b = t->device->backend;
    TRY(step_graphs_check_device(t->config->cuda_graph, b, st));
    StepGraphRun facts = {.has_graph_ops = b->capture_begin && b->capture_end &&
                                           b->graph_launch && b->graph_destroy,
                          .replicas = 1, .processes = 1, .sync_check = t->config->sync_check,
                          .loss_scaling = t->loss_scaling};
    const char *refusal = step_graphs_refusal(&facts);
    if (refusal) {
        snprintf(t->graph_note, t->graph_note_size, "plain launches: %s", refusal);
        return 0;
    }
    if (t->step == 0) TRY(step(t, st));
    t->use_graph = 1;
    snprintf(t->graph_note, t->graph_note_size, "timed steps replayed from one CUDA Graph");
    return 0;
}

static int measure_steps(TrainBench *t, const BenchOptions *o, int steps, BenchTrainReport *out,
                         Status *st) {
    BenchTimer timer;
    TRY(bench_timer_open(t->device->backend, &timer, st));
    int rc = 0;
    double ms[BENCH_MAX_REPEATS];
    for (int r = 0; !rc && r < o->repeats; r++) {
        bench_progress(o, "train %s: repeat %d/%d", out->model, r + 1, o->repeats);
        rc = bench_timer_start(&timer, st);
        for (int i = 0; !rc && i < steps; i++) {
            bench_range_push(t->device->backend, "bench train step");
            rc = step(t, st);
            bench_range_pop(t->device->backend);
        }
        if (!rc) rc = bench_timer_stop(&timer, &ms[r], st);
        if (!rc && ms[r] <= 0.0)
            rc = status_fail(st, STATUS_RUNTIME_ERROR, "train: %d steps measured %g ms",
                             steps, ms[r]);
        if (!rc) out->repeat_samples_per_second[r] = (double)steps * t->ctx.batch / (ms[r] * 1e-3);
    }
    bench_timer_close(&timer);
    if (rc) return rc;
    double median_ms = bench_median(ms, o->repeats);
    out->step_ms = median_ms / steps;
    out->samples_per_second = (double)steps * t->ctx.batch / (median_ms * 1e-3);
    return 0;
}

// ---- per layer ----------------------------------------------------------------------------

// Marks of one step: forward[i] after layer i's forward (forward[0] before the first),
// backward[i] after layer i's backward (backward[count] before the last layer's), and
// updated after the update.
typedef struct LayerMarks {
    const Backend *backend;
    int count;
    void **forward, **backward;
    void *updated;
} LayerMarks;

static void marks_free(LayerMarks *m) {
    const Backend *b = m->backend;
    for (int i = 0; i <= m->count; i++) {
        if (m->forward && m->forward[i]) b->timer_destroy(b, m->forward[i]);
        if (m->backward && m->backward[i]) b->timer_destroy(b, m->backward[i]);
    }
    if (m->updated) b->timer_destroy(b, m->updated);
    free(m->forward);
    free(m->backward);
}

static int marks_make(const Backend *b, int count, LayerMarks *m, Status *st) {
    memset(m, 0, sizeof *m);
    m->backend = b;
    m->count = count;
    m->forward = calloc((size_t)count + 1, sizeof *m->forward);
    m->backward = calloc((size_t)count + 1, sizeof *m->backward);
    if (!m->forward || !m->backward)
        return status_out_of_host_memory(st, 2 * ((size_t)count + 1) * sizeof *m->forward,
                                         "for per-layer timers");
    if (!b->timer_create)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no timer", b->name);
    for (int i = 0; i <= count; i++) {
        TRY(b->timer_create(b, &m->forward[i], st));
        TRY(b->timer_create(b, &m->backward[i], st));
    }
    return b->timer_create(b, &m->updated, st);
}

static int marked_step(TrainBench *t, LayerMarks *m, Status *st) {
    const Backend *b = t->device->backend;
    Graph *g = t->graph;
    int n = g->count;
    begin_step(t);
    TRY(load_batch(t, st));
    TRY(b->timer_record(b, m->forward[0], st));
    for (int i = 1; i < n; i++) {
        TRY(graph_run_layer(g, i, &t->ctx, 0, st));
        TRY(b->timer_record(b, m->forward[i], st));
    }
    TRY(b->timer_record(b, m->backward[n], st));
    for (int i = n - 1; i >= 1; i--) {
        TRY(graph_run_layer(g, i, &t->ctx, 1, st));
        TRY(b->timer_record(b, m->backward[i], st));
    }
    TRY(update(t, st));
    return b->timer_record(b, m->updated, st);
}

static int measure_layers(TrainBench *t, const BenchOptions *o, int steps, BenchTrainReport *out,
                          Status *st) {
    const Backend *b = t->device->backend;
    Graph *g = t->graph;
    int layers = g->count - 1;
    size_t slots = (size_t)(layers > 0 ? layers : 1);
    out->layers = calloc(slots, sizeof *out->layers);
    // Per step: each layer's forward and backward, and the update.
    size_t samples_bytes = ((size_t)2 * layers + 1) * (size_t)steps * sizeof(double);
    double *samples = malloc(samples_bytes);
    LayerMarks m;
    memset(&m, 0, sizeof m);
    m.backend = b;
    int rc = out->layers && samples
                 ? 0
                 : status_out_of_host_memory(st, slots * sizeof *out->layers + samples_bytes,
                                             "for per-layer times");
    if (!rc) rc = marks_make(b, g->count, &m, st);
    for (int s = 0; !rc && s < steps; s++) {
        bench_progress(o, "train %s: per-layer step %d/%d", out->model, s + 1, steps);
        bench_range_push(b, "bench train step (per layer)");
        rc = marked_step(t, &m, st);
        bench_range_pop(b);
        for (int i = 1; !rc && i <= layers; i++) {
            double *forward = &samples[((size_t)2 * (i - 1)) * steps + s];
            double *backward = &samples[((size_t)2 * (i - 1) + 1) * steps + s];
            rc = b->timer_elapsed(b, m.forward[i - 1], m.forward[i], forward, st);
            if (!rc) rc = b->timer_elapsed(b, m.backward[i + 1], m.backward[i], backward, st);
        }
        if (!rc) rc = b->timer_elapsed(b, m.backward[1], m.updated,
                                       &samples[(size_t)2 * layers * steps + s], st);
    }
    if (!rc) {
        for (int i = 1; i <= layers; i++) {
            BenchLayerTime *lt = &out->layers[i - 1];
            const Layer *l = g->layers[i];
            snprintf(lt->name, sizeof lt->name, "%s", l->name);
            lt->kind = l->kind->name;
            if (l->input_count && l->inputs[0]->fused_activation == l)
                snprintf(lt->fused_into, sizeof lt->fused_into, "%s", l->inputs[0]->name);
            lt->forward_flops = l->kind->flops ? l->kind->flops(l) : 0.0;
            // A timer that measured less than nothing (the clock's rounding) counts as 0.
            lt->forward_ms = bench_median(&samples[(size_t)2 * (i - 1) * steps], steps);
            lt->backward_ms = bench_median(&samples[((size_t)2 * (i - 1) + 1) * steps], steps);
            if (lt->forward_ms < 0.0) lt->forward_ms = 0.0;
            if (lt->backward_ms < 0.0) lt->backward_ms = 0.0;
        }
        out->layer_count = layers;
        out->optimizer_ms = bench_median(&samples[(size_t)2 * layers * steps], steps);
        out->per_layer_steps = steps;
    }
    marks_free(&m);
    free(samples);
    return rc;
}

// ---- the benchmark ------------------------------------------------------------------------

static double forward_flops_per_sample(const Graph *g) {
    double total = 0.0;
    for (int i = 1; i < g->count; i++)
        if (g->layers[i]->kind->flops) total += g->layers[i]->kind->flops(g->layers[i]);
    return total;
}

static int prepare(TrainBench *t, const BenchDevice *dev, int batch, Status *st) {
    Device *d = t->device;
    const Backend *b = d->backend;
    Graph *g = t->graph;
    TRY(graph_allocate(g, b, &d->alloc, batch, NULL, st));
    TRY(batches_make(d, dev, g, batch, &t->batches, st));
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .batch = batch, .training = 1,
                        .labels = (const int32_t *)g->labels.data,
                        .sync_check = t->config->sync_check};
    t->ctx = ctx;
    // As core/train.c decides it: config->precision is the run's, --precision included.
    t->loss_scaling = t->config->precision.precision == PRECISION_FP16;
    loss_scaler_init(&t->scaler, t->config->precision.initial_loss_scale);
    return 0;
}

int bench_train(Device *d, const BenchDevice *dev, const BenchOptions *o, Graph *g,
                const RunConfig *config, int batch, int steps, int per_layer,
                BenchTrainReport *out, Status *st) {
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", g->path);
    out->batch = batch;
    out->steps = steps;
    out->classes = graph_classes(g);
    out->optimizer = optimizer_names[config->optimizer.kind];
    out->forward_flops_per_sample = forward_flops_per_sample(g);
    // What the device computes in (core/device.h: the precision asked for, where it has it).
    out->precision = d->precision == PRECISION_BF16   ? BENCH_BF16
                     : d->precision == PRECISION_FP16 ? BENCH_FP16
                     : d->precision == PRECISION_TF32 ? BENCH_TF32
                                                      : BENCH_FP32;
    out->peak_tflops = dev->peak_tflops[out->precision];

    TrainBench t = {.graph = g, .config = config, .device = d, .graph_note = out->cuda_graph,
                    .graph_note_size = sizeof out->cuda_graph};
    int rc = prepare(&t, dev, batch, st);
    if (!rc) bench_progress(o, "train %s: %d warm-up steps", out->model, o->warmup);
    for (int i = 0; !rc && i < o->warmup; i++) rc = step(&t, st);
    if (!rc) rc = start_graphs(&t, st);
    if (!rc) rc = measure_steps(&t, o, steps, out, st);
    if (!rc) out->tflops = 3.0 * out->forward_flops_per_sample * out->samples_per_second / 1e12;
    if (!rc && per_layer) rc = measure_layers(&t, o, steps, out, st);
    if (!rc) rc = d->backend->synchronize(d->backend, st);
    out->steps_run = t.step;
    out->skipped_steps = t.scaler.skipped_steps;
    out->loss_scale = t.loss_scaling ? t.scaler.scale : 0.0;
    if (t.replay) d->backend->graph_destroy(d->backend, t.replay);
    batches_free(&t.batches);
    graph_release_activations(g);
    return rc;
}

void bench_train_report_free(BenchTrainReport *r) {
    free(r->layers);
    r->layers = NULL;
    r->layer_count = 0;
}
