#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "core/train.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "core/optimizer.h"

double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Host staging buffers for one batch: the dataset is converted u8 -> f32 here and then
// copied to the device in one transfer.
typedef struct HostBatch {
    float *images;
    int32_t *labels;
} HostBatch;

static int host_batch_init(HostBatch *hb, const Graph *g, int batch, Status *st) {
    hb->images = malloc((size_t)batch * shape_numel(&g->input->out_shape) * sizeof(float));
    hb->labels = malloc((size_t)batch * sizeof(int32_t));
    if (!hb->images || !hb->labels) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    return 0;
}

static void host_batch_free(HostBatch *hb) {
    free(hb->images);
    free(hb->labels);
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

static int train_epoch(Graph *g, Device *d, Batcher *batcher, HostBatch *hb, int epoch,
                       long *global_step, const TrainHooks *hooks, EpochReport *report,
                       Status *st) {
    const Backend *b = d->backend;
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 1,
                        .labels = (const int32_t *)g->labels.data};
    double loss_sum = 0.0, correct_sum = 0.0, start = monotonic_seconds();
    int seen = 0, steps = batcher_steps_per_epoch(batcher);
    batcher_start_epoch(batcher, epoch);
    for (int step = 1;; step++) {
        int n = batcher_next(batcher, hb->images, hb->labels);
        if (n == 0) break;
        ctx.batch = n;
        ctx.seed = step_seed(g->train.seed, ++*global_step);
        TRY(graph_load_batch(g, b, hb->images, hb->labels, n, st));
        TRY(graph_forward(g, &ctx, st));
        TRY(graph_backward(g, &ctx, st));
        TRY(optimizer_step(g, b, (int)*global_step, st));
        double batch_loss, batch_correct;
        TRY(graph_read_loss(g, b, n, &batch_loss, &batch_correct, st));
        TRY(check_finite_loss(g, batch_loss, epoch, step, st));
        loss_sum += batch_loss;
        correct_sum += batch_correct;
        seen += n;
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
    Batcher batcher;
    HostBatch hb = {0};
    TRY(batcher_init(&batcher, train, batch, 1, (uint64_t)g->train.seed, st));
    int rc = host_batch_init(&hb, g, batch, st);
    long global_step = g->optimizer_steps;
    for (int epoch = 1; !rc && epoch <= g->train.epochs; epoch++) {
        EpochReport report = {.epoch = epoch, .epochs = g->train.epochs};
        rc = train_epoch(g, d, &batcher, &hb, epoch, &global_step, hooks, &report, st);
        g->optimizer_steps = global_step;
        if (interrupted) *interrupted = report.interrupted;
        if (!rc && test) {
            report.has_test = 1;
            rc = evaluate_model(g, d, test, batch, &report.test, st);
        }
        if (!rc && hooks && hooks->on_epoch) rc = hooks->on_epoch(hooks->user, &report, g, d, st);
    }
    host_batch_free(&hb);
    batcher_free(&batcher);
    return rc;
}

int evaluate_model(Graph *g, Device *d, const Dataset *ds, int batch, EvalResult *out,
                   Status *st) {
    const Backend *b = d->backend;
    if (batch > ds->count) batch = ds->count;
    if (g->allocated_batch < batch) TRY(graph_allocate(g, b, &d->alloc, batch, st));
    Batcher batcher;
    HostBatch hb = {0};
    TRY(batcher_init(&batcher, ds, batch, 0, 0, st));
    int rc = host_batch_init(&hb, g, batch, st);
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 0,
                        .labels = (const int32_t *)g->labels.data};
    double loss_sum = 0.0, correct_sum = 0.0;
    int seen = 0;
    batcher_start_epoch(&batcher, 0);
    while (!rc) {
        int n = batcher_next(&batcher, hb.images, hb.labels);
        if (n == 0) break;
        ctx.batch = n;
        double batch_loss = 0.0, batch_correct = 0.0;
        rc = graph_load_batch(g, b, hb.images, hb.labels, n, st);
        if (!rc) rc = graph_forward(g, &ctx, st);
        if (!rc) rc = graph_read_loss(g, b, n, &batch_loss, &batch_correct, st);
        loss_sum += batch_loss;
        correct_sum += batch_correct;
        seen += n;
    }
    host_batch_free(&hb);
    batcher_free(&batcher);
    if (rc) return rc;
    out->samples = seen;
    out->loss = seen ? loss_sum / seen : 0.0;
    out->accuracy = seen ? correct_sum / seen : 0.0;
    return 0;
}
