#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "core/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/optimizer.h"

double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Where batches come from. When the dataset fits on the device (Fashion-MNIST is 47 MB
// of bytes) it is copied there once and each batch is gathered on the device from the
// shuffled indices, so a step moves only the indices across the bus. Otherwise batches
// are converted on the host and copied in, one transfer per batch.
typedef struct BatchSource {
    Batcher batcher;
    const Dataset *dataset;
    int on_device;
    Tensor images, labels, indices;  // device copies (on_device)
    int32_t *host_indices;
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

static int upload_dataset(BatchSource *s, Device *d, int batch, Status *st) {
    const Dataset *ds = s->dataset;
    Shape bytes = shape_make1((int)sample_size(ds)), one = {.rank = 0};
    tensor_set_shape(&s->images, DTYPE_U8, ds->count, &bytes);
    tensor_set_shape(&s->labels, DTYPE_U8, ds->count, &one);
    tensor_set_shape(&s->indices, DTYPE_I32, batch, &one);
    if (!dataset_fits(&d->alloc, s->images.bytes + s->labels.bytes)) return STATUS_OUT_OF_MEMORY;
    TRY(tensor_alloc(&s->images, &d->alloc, st));
    TRY(tensor_alloc(&s->labels, &d->alloc, st));
    TRY(tensor_alloc(&s->indices, &d->alloc, st));
    const Backend *b = d->backend;
    TRY(b->copy_to_device(b, s->images.data, ds->images, s->images.bytes, st));
    return b->copy_to_device(b, s->labels.data, ds->labels, s->labels.bytes, st);
}

static void source_close(BatchSource *s) {
    tensor_free(&s->images);
    tensor_free(&s->labels);
    tensor_free(&s->indices);
    free(s->host_indices);
    free(s->host_images);
    free(s->host_labels);
    batcher_free(&s->batcher);
}

static int source_open(BatchSource *s, Device *d, const Dataset *ds, int batch, int shuffle,
                       uint64_t seed, Status *st) {
    memset(s, 0, sizeof *s);
    s->dataset = ds;
    TRY(batcher_init(&s->batcher, ds, batch, shuffle, seed, st));
    s->host_indices = malloc((size_t)batch * sizeof *s->host_indices);
    if (!s->host_indices) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    Status upload;
    status_clear(&upload);
    int rc = upload_dataset(s, d, batch, &upload);
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
    s->host_images = malloc((size_t)batch * sample_size(ds) * sizeof *s->host_images);
    s->host_labels = malloc((size_t)batch * sizeof *s->host_labels);
    if (!s->host_images || !s->host_labels)
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    return 0;
}

// Loads the next batch into the graph's input and labels; *count = 0 at the epoch's end.
static int source_next(BatchSource *s, Graph *g, Device *d, int *count, Status *st) {
    const Backend *b = d->backend;
    if (!s->on_device) {
        *count = batcher_next(&s->batcher, s->host_images, s->host_labels);
        return *count ? graph_load_batch(g, b, s->host_images, s->host_labels, *count, st) : 0;
    }
    *count = batcher_next_indices(&s->batcher, s->host_indices);
    if (*count == 0) return 0;
    TRY(b->copy_to_device(b, s->indices.data, s->host_indices,
                          (size_t)*count * sizeof *s->host_indices, st));
    return b->gather_samples(b, (const uint8_t *)s->images.data, (const uint8_t *)s->labels.data,
                             (const int32_t *)s->indices.data, *count, sample_size(s->dataset),
                             1.0f / 255.0f, tensor_f32(&g->input->output),
                             (int32_t *)g->labels.data, st);
}

// Each step gets its own dropout seed from (run seed, step), so a run is reproducible
// and two steps never share a mask.
static uint64_t step_seed(long seed, long step) {
    return (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)step * 0xD1B54A32D192ED03ull;
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

static int train_epoch(Graph *g, Device *d, BatchSource *source, int epoch, long *global_step,
                       const TrainHooks *hooks, EpochReport *report, Status *st) {
    const Backend *b = d->backend;
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 1,
                        .labels = (const int32_t *)g->labels.data};
    double loss_sum = 0.0, correct_sum = 0.0, start = monotonic_seconds();
    int seen = 0, steps = batcher_steps_per_epoch(&source->batcher);
    batcher_start_epoch(&source->batcher, epoch);
    TRY(graph_reset_loss_sums(g, b, st));
    for (int step = 1;; step++) {
        int n;
        TRY(source_next(source, g, d, &n, st));
        if (n == 0) break;
        ctx.batch = n;
        ctx.seed = step_seed(g->train.seed, ++*global_step);
        TRY(graph_forward(g, &ctx, st));
        TRY(graph_backward(g, &ctx, st));
        TRY(optimizer_step(g, b, (int)*global_step, st));
        TRY(graph_add_loss_sums(g, b, n, st));
        seen += n;
        if (step % LOSS_READ_INTERVAL != 0 && step != steps) continue;
        TRY(graph_read_loss_sums(g, b, &loss_sum, &correct_sum, st));
        TRY(check_finite_loss(g, loss_sum, epoch, step, st));
        if (hooks && hooks->on_step) {
            double elapsed = monotonic_seconds() - start;
            StepReport r = {.epoch = epoch, .epochs = g->train.epochs, .step = step,
                            .steps = steps, .loss = loss_sum / seen,
                            .samples_per_second = elapsed > 0 ? seen / elapsed : 0.0,
                            .epoch_seconds = elapsed};
            if (hooks->on_step(hooks->user, &r)) {
                report->interrupted = 1;
                status_fail(st, STATUS_RUNTIME_ERROR, "interrupted at epoch %d, step %d of %d",
                            epoch, step, steps);
                status_hint(st, "with --save FILE the weights so far are kept; `trainer eval` "
                                "reads them");
                return STATUS_RUNTIME_ERROR;
            }
        }
    }
    report->seconds = monotonic_seconds() - start;
    report->train_loss = seen ? loss_sum / seen : 0.0;
    report->train_accuracy = seen ? correct_sum / seen : 0.0;
    report->samples_per_second = report->seconds > 0 ? seen / report->seconds : 0.0;
    return 0;
}

int train_model(Graph *g, Device *d, const Dataset *train, const Dataset *test,
                const TrainHooks *hooks, int *interrupted, Status *st) {
    int batch = g->train.batch;
    if (batch > train->count) batch = train->count;
    TRY(graph_allocate(g, d->backend, &d->alloc, batch, st));
    TRY(optimizer_prepare(g, d->backend, &d->alloc, st));
    BatchSource source;
    int rc = source_open(&source, d, train, batch, 1, (uint64_t)g->train.seed, st);
    long global_step = g->optimizer_steps;
    for (int epoch = 1; !rc && epoch <= g->train.epochs; epoch++) {
        EpochReport report = {.epoch = epoch, .epochs = g->train.epochs};
        rc = train_epoch(g, d, &source, epoch, &global_step, hooks, &report, st);
        g->optimizer_steps = global_step;
        if (interrupted) *interrupted = report.interrupted;
        if (!rc && test) {
            report.has_test = 1;
            rc = evaluate_model(g, d, test, batch, &report.test, st);
        }
        if (!rc && hooks && hooks->on_epoch) rc = hooks->on_epoch(hooks->user, &report, g, d, st);
    }
    source_close(&source);
    return rc;
}

int evaluate_model(Graph *g, Device *d, const Dataset *ds, int batch, EvalResult *out,
                   Status *st) {
    const Backend *b = d->backend;
    if (batch > ds->count) batch = ds->count;
    if (g->allocated_batch < batch) TRY(graph_allocate(g, b, &d->alloc, batch, st));
    BatchSource source;
    int rc = source_open(&source, d, ds, batch, 0, 0, st);
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 0,
                        .labels = (const int32_t *)g->labels.data};
    double loss_sum = 0.0, correct_sum = 0.0;
    int seen = 0;
    batcher_start_epoch(&source.batcher, 0);
    if (!rc) rc = graph_reset_loss_sums(g, b, st);
    while (!rc) {
        int n = 0;
        rc = source_next(&source, g, d, &n, st);
        if (rc || n == 0) break;
        ctx.batch = n;
        rc = graph_forward(g, &ctx, st);
        if (!rc) rc = graph_add_loss_sums(g, b, n, st);
        seen += n;
    }
    if (!rc) rc = graph_read_loss_sums(g, b, &loss_sum, &correct_sum, st);
    source_close(&source);
    if (rc) return rc;
    out->samples = seen;
    out->loss = seen ? loss_sum / seen : 0.0;
    out->accuracy = seen ? correct_sum / seen : 0.0;
    return 0;
}
