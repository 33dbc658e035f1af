#include "core/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "core/collective.h"
#include "core/grad_buckets.h"
#include "core/grad_clip.h"
#include "core/grad_sums.h"
#include "core/loss_scale.h"
#include "core/lr_schedule.h"
#include "core/memory_plan.h"
#include "core/nonfinite.h"
#include "core/optimizer.h"
#include "core/step_graph.h"
#include "data/batch_source.h"
#include "data/transform.h"
#include "kernels/mpi/mpi_world.h"

// ---- a training run: replicas, their data, and how a step is cut up ----

typedef struct Replica {
    Graph *graph;
    Device *device;
    BatchSource source;
    AllocationFailure allocation_failure;  // its graph's last allocation out of memory
} Replica;

// What the notice of the first micro-batch split says, kept as facts until the pass size
// has settled: where it ran out of memory, the memory before and after releasing the step,
// and the workspace given up when it came to that.
typedef struct SplitFacts {
    int happened;
    int old_size;                     // the pass size that ran out of memory
    const char *device;               // its device's name
    AllocationFailure failure;        // the layer and bytes of the allocation that failed
    size_t capacity, free_bytes;      // the device's (or --memory-limit's) and what was free
    size_t before, after;             // reserved before and after releasing the step
    size_t workspace_before, workspace_after;  // at one sample; after 0: none given up
} SplitFacts;

typedef struct TrainRun {
    Replica *replicas;
    int count;                  // in this process
    // Every step is cut into `shares` parts: count replicas in each of the world's
    // processes; this process's replicas take parts first_share .. first_share + count - 1.
    int shares, first_share;
    const RunConfig *config;    // shared by every replica
    Collective collective;      // shares > 1
    GradBuckets buckets;        // over the processes of an mpirun launch, when use_buckets
    int use_buckets;            // an mpirun launch: MPI (CPU ranks) or NCCL (GPU ranks)
    int sync_batchnorm;         // --sync-batchnorm over several processes, with batchnorms
    int world;                  // processes
    Batcher batcher;            // one order for the whole run; each step is split
    int32_t *step_indices;      // the step's samples
    int batch;                  // samples per step, over all replicas
    int micro_batch;            // samples per forward/backward pass on one replica
    const TrainHooks *hooks;
    int reported_split;         // the micro-batch notice is given once
    SplitFacts split;           // the first split, for that notice
    const char *failed_device;  // where the last failed step failed, for its message
    ScheduleConfig schedule;    // config's, with `every` in steps
    long total_steps;           // of the whole run, for the schedule
    double lr;                  // the rate of the last update
    int loss_scaling;           // --precision fp16: gradients come scaled by scaler.scale
    LossScaler scaler;
    // --cuda-graph (core/step_graph.h), one replica only: its steps replayed from graphs.
    int use_graphs;
    StepGraphs graphs;
    int gather_put_indices;     // passes gather the indices put before (while capturing)
    uint64_t augment_key;       // the epoch's, when the run augments: part of a step's shape
} TrainRun;

static int make_current(const Device *d, Status *st) {
    const Backend *b = d->backend;
    return b->make_current ? b->make_current(b, st) : 0;
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

static int graph_normalises_over_batch(const Graph *g) {
    for (int i = 0; i < g->count; i++)
        if (g->layers[i]->kind->normalises_over_batch) return 1;
    return 0;
}

static void release_activations(TrainRun *run) {
    step_graphs_forget(&run->graphs);  // recorded with the memory given back here
    for (int r = 0; r < run->count; r++) {
        graph_release_activations(run->replicas[r].graph);
        // Cached blocks go back too: the next attempt is smaller and may need them whole.
        alloc_release_cache(&run->replicas[r].device->alloc);
    }
}

// A batch source takes its device copies from the device's caching allocator, so they
// count against --memory-limit and the memory plan, like every tensor.
static int allocator_take(void *owner, size_t bytes, void **ptr, Status *st) {
    return alloc_get(owner, bytes, ptr, st);
}

static void allocator_give_back(void *owner, void *ptr) { alloc_put(owner, ptr); }

static DeviceMemory device_memory(Device *d) {
    Allocator *a = &d->alloc;
    size_t room = !a->limit ? SIZE_MAX
                  : a->limit > a->stats.reserved ? a->limit - a->stats.reserved
                                                 : 0;
    return (DeviceMemory){.owner = a, .room = room, .alloc = allocator_take,
                          .free = allocator_give_back};
}

// Each device's allocator counted once: CPU replicas share one (summed per replica, the
// micro-batch notice said 126 MiB reserved under a 64 MiB limit).
static size_t reserved_bytes(const TrainRun *run) {
    size_t total = 0;
    for (int r = 0; r < run->count; r++) {
        const Device *device = run->replicas[r].device;
        int counted = 0;
        for (int earlier = 0; earlier < r; earlier++)
            counted |= run->replicas[earlier].device == device;
        if (!counted) total += device->alloc.stats.reserved;
    }
    return total;
}

// Out of memory with one sample per pass: the error shows the plan for that one sample,
// so the user sees what does not fit (the fixed part: parameters, gradients, optimizer
// state; and the convolutions' workspace, which on a GPU is what cuDNN's fastest
// algorithms ask for and need not shrink with the batch) beside the budget.
static int cannot_split(const TrainRun *run, const Replica *failed, const Status *cause,
                        Status *st) {
    *st = *cause;
    const Allocator *a = &failed->device->alloc;
    MemoryPlanOptions options = {.batch = 1, .optimizer = &run->config->optimizer,
                                 .limit = a->limit, .mode = a->mode};
    MemoryPlan plan;
    Status plan_status;
    status_clear(&plan_status);
    char text[480] = "", workspace[32] = "";
    int workspace_dominates = 0;  // more workspace than one sample's activations
    if (memory_plan(failed->graph, a->backend, &options, &plan, &plan_status) == 0) {
        char total[32], fixed[32], state[32], per_sample[32], budget[32] = "none";
        if (a->limit) alloc_format_bytes(a->limit, budget, sizeof budget);
        if (plan.workspace) alloc_format_bytes(plan.workspace, workspace, sizeof workspace);
        snprintf(text, sizeof text, " (the plan for one sample: %s in all; parameters and their "
                 "gradients %s, optimizer state %s, activations and their gradients %s%s%s; "
                 "limit %s)",
                 alloc_format_bytes(plan.total, total, sizeof total),
                 alloc_format_bytes(plan.parameters + plan.gradients, fixed, sizeof fixed),
                 alloc_format_bytes(plan.optimizer_state, state, sizeof state),
                 alloc_format_bytes(plan.activations + plan.activation_gradients, per_sample,
                                    sizeof per_sample),
                 workspace[0] ? ", convolution workspace " : "", workspace, budget);
        workspace_dominates = plan.workspace > plan.activations + plan.activation_gradients;
        memory_plan_free(&plan);
    }
    // Room for all of it, then cut to the status's size with a bound gcc sees (the sanitizer
    // Debug build's -Werror=format-truncation).
    char message[sizeof st->message + sizeof text + 64];
    snprintf(message, sizeof message, "%.600s; even one sample per pass does not fit%s",
             cause->message, text);
    snprintf(st->message, sizeof st->message, "%.*s", (int)sizeof st->message - 1, message);
    if (workspace_dominates)
        status_hint(st, "the parameters, optimizer state and the convolutions' workspace (%s at "
                        "one sample) leave no room: raise --memory-limit; `trainer check MODEL "
                        "--batch 1` shows the plan layer by layer", workspace);
    else
        status_hint(st, "the parameters and optimizer state leave no room for one sample's "
                        "activations: raise --memory-limit; `trainer check MODEL --batch 1` "
                        "shows the plan layer by layer");
    return STATUS_OUT_OF_MEMORY;
}

// What a pass of `g` holds whatever its size: parameters, their gradients, optimizer state.
static int fixed_bytes(const Graph *g, const OptimizerConfig *o, const Backend *b,
                       size_t *bytes, Status *st) {
    MemoryPlanOptions options = {.batch = 1, .optimizer = o};
    MemoryPlan plan;
    TRY(memory_plan(g, b, &options, &plan, st));
    *bytes = plan.parameters + plan.gradients + plan.optimizer_state;
    memory_plan_free(&plan);
    return 0;
}

// The largest pass the memory plan fits on `failed`'s device once every per-batch tensor
// is given back: its graph's fixed part plus its share of what the limit leaves beside
// what stays held (all replicas' fixed parts, dataset copies). 0 without a limit: how
// much of a device is free is not the allocator's to know.
static int planned_micro_batch(const TrainRun *run, const Replica *failed, int *fits,
                               Status *st) {
    *fits = 0;
    const Allocator *a = &failed->device->alloc;
    if (!a->limit || a->limit <= a->stats.in_use) return 0;
    size_t sharers = 0, fixed;
    for (int r = 0; r < run->count; r++) sharers += run->replicas[r].device == failed->device;
    TRY(fixed_bytes(failed->graph, &run->config->optimizer, a->backend, &fixed, st));
    size_t budget = fixed + (a->limit - a->stats.in_use) / sharers;
    return memory_plan_largest_batch(failed->graph, a->backend, budget, &run->config->optimizer,
                                     fits, st);
}

// `size` samples per pass evened out over the passes a share then takes, so that the last
// pass is not a sliver (no larger than the share).
static int evened_micro_batch(const TrainRun *run, int size) {
    int share = largest_share(run->batch, run->shares);
    int passes = (share + size - 1) / size;
    return (share + passes - 1) / passes;
}

// The pass size after running out of memory at run->micro_batch. Under a limit, the
// largest the plan fits: the plan counts exactly what the allocator holds to the limit,
// so one failure finds it, where halving fails once per halving (each releasing the
// allocator's cache: on a GPU a cudaFree, which waits for the device) and lands on a
// power-of-two fraction that can be far below what fits (LeNet at batch 1024 under
// --memory-limit 64M beside 8192 training samples: five failures to reach 32, where 45
// fit). Half when the plan cannot tell (no limit, or it says the size that just
// failed fits: memory it does not see). Then evened out over the passes a share takes,
// so the last pass is not a sliver.
static int next_micro_batch(const TrainRun *run, const Replica *failed) {
    int old_size = run->micro_batch, next = (old_size + 1) / 2, planned = 0;
    Status ignored;
    status_clear(&ignored);
    if (planned_micro_batch(run, failed, &planned, &ignored) == 0 && planned < old_size &&
        failed->device->alloc.limit)
        next = planned >= 1 ? planned : 1;  // 0: not even one sample fits; one try says so
    return evened_micro_batch(run, next);
}

// The first split's cause and the memory before and after releasing the step, kept for
// the notice, which waits until the pass size has settled (a split may take more than one
// step down) so that it states the size training continues with.
static void describe_split(TrainRun *run, const Replica *failed, int old_size, size_t before,
                           size_t failed_reserved) {
    const Allocator *a = &failed->device->alloc;
    SplitFacts *f = &run->split;
    f->happened = 1;
    f->old_size = old_size;
    f->device = failed->device->name;
    f->failure = failed->allocation_failure;
    f->capacity = a->limit ? a->limit : a->backend->total_memory(a->backend);
    f->free_bytes = f->capacity > failed_reserved ? f->capacity - failed_reserved : 0;
    f->before = before;
    f->after = reserved_bytes(run);
}

// "out of memory at batch 128 on cpu (layer conv2, 1.5 GiB requested, 0.3 GiB free)"
static void split_cause_text(const SplitFacts *f, char *text, size_t size) {
    char where[256], bytes[32];
    const AllocationFailure *last = &f->failure;
    int used = snprintf(where, sizeof where, "layer %s", last->layer[0] ? last->layer : "?");
    if (last->bytes && used < (int)sizeof where)
        used += snprintf(where + used, sizeof where - (size_t)used, ", %s requested",
                         alloc_format_bytes(last->bytes, bytes, sizeof bytes));
    if (f->capacity && used < (int)sizeof where)
        snprintf(where + used, sizeof where - (size_t)used, ", %s free",
                 alloc_format_bytes(f->free_bytes, bytes, sizeof bytes));
    snprintf(text, size, "out of memory at batch %d on %s (%s)", f->old_size, f->device, where);
}

// Logged once, in one line, as the issue asks.
static void report_split(TrainRun *run) {
    const SplitFacts *f = &run->split;
    if (run->reported_split || !f->happened) return;
    int share = largest_share(run->batch, run->shares);
    int passes = (share + run->micro_batch - 1) / run->micro_batch;
    // Giving up the convolutions' workspace may leave room for the whole share.
    char passes_text[64];
    if (passes > 1)
        snprintf(passes_text, sizeof passes_text, "as %d micro-batches of %d", passes,
                 run->micro_batch);
    else
        snprintf(passes_text, sizeof passes_text, "with whole batches of %d", run->micro_batch);
    char cause[400], workspace[160] = "", was[32], now[32], before[32], after[32];
    split_cause_text(f, cause, sizeof cause);
    if (f->workspace_after || f->workspace_before)
        snprintf(workspace, sizeof workspace, "; convolutions in their least workspace, %s at "
                 "one sample (the %s their fastest algorithms ask for did not fit)",
                 alloc_format_bytes(f->workspace_after, now, sizeof now),
                 alloc_format_bytes(f->workspace_before, was, sizeof was));
    notice(run, "%s: continuing %s%s%s (reserved %s before releasing the step, %s after)",
           cause, passes_text, workspace,
           graph_normalises_over_batch(run->replicas[0].graph)
               ? "; batchnorm layers now normalise over each micro-batch" : "",
           alloc_format_bytes(f->before, before, sizeof before),
           alloc_format_bytes(f->after, after, sizeof after));
    run->reported_split = 1;
}

// A rank that splits its share makes more batchnorm sums than the others, which would
// wait for it forever; so the run stops, naming the rank (every rank aborts with it).
static int refuse_split_with_sync(const TrainRun *run, const Replica *failed,
                                  const Status *cause, Status *st) {
    *st = *cause;
    // Other ranks' errors start "rank R of N (host): " (tools/train_world.c); rank 0's do
    // not, so it names itself.
    char message[sizeof st->message], who[32] = "";
    if (run->config->world.rank == 0) snprintf(who, sizeof who, "rank 0 of %d ", run->world);
    snprintf(message, sizeof message, "%sran out of memory with %d samples per pass on %s, and "
             "with --sync-batchnorm a rank cannot split its share into micro-batches (the other "
             "ranks would wait in the batchnorm sums it makes more often): %.500s", who,
             run->micro_batch, failed->device->name, cause->message);
    snprintf(st->message, sizeof st->message, "%s", message);
    status_hint(st, "lower --batch (now %d, %d per rank) or raise --memory-limit; without "
                "--sync-batchnorm the rank would go on in micro-batches", run->batch,
                largest_share(run->batch, run->shares));
    return st->code;
}

// The workspace `failed`'s plan holds at one sample; 0 when it cannot tell.
static size_t one_sample_workspace(const TrainRun *run, const Replica *failed) {
    MemoryPlanOptions options = {.batch = 1, .optimizer = &run->config->optimizer};
    MemoryPlan plan;
    Status ignored;
    status_clear(&ignored);
    if (memory_plan(failed->graph, failed->device->alloc.backend, &options, &plan, &ignored))
        return 0;
    size_t workspace = plan.workspace;
    memory_plan_free(&plan);
    return workspace;
}

// Out of memory with one sample per pass: every replica's convolutions are given the least
// workspace their ops run in (graph_limit_workspace; on a GPU none: cuDNN's algorithms that
// need none, or our direct kernels), slower, and the pass takes what the plan then fits.
// Why: on an H200 LeNet's plan for one sample was 31.1 MiB, 17.5 MiB of it the workspace
// of cuDNN's fastest algorithms, so a 24 MiB limit, which holds the 13.7 MB of parameters
// and Adam state and dozens of samples' activations, stopped the run. 0: nothing to give
// up (capped already, or the least is what they take).
static int give_up_workspace(TrainRun *run, const Replica *failed) {
    if (graph_workspace_limited(failed->graph)) return 0;
    size_t before = one_sample_workspace(run, failed);
    for (int r = 0; r < run->count; r++) graph_limit_workspace(run->replicas[r].graph, 0);
    size_t after = one_sample_workspace(run, failed);
    if (after >= before) {
        for (int r = 0; r < run->count; r++)
            graph_limit_workspace(run->replicas[r].graph, SIZE_MAX);
        return 0;
    }
    run->split.workspace_before = before;
    run->split.workspace_after = after;
    Status ignored;
    status_clear(&ignored);
    int planned = 0;
    if (planned_micro_batch(run, failed, &planned, &ignored) || planned < 1) planned = 1;
    run->micro_batch = evened_micro_batch(run, planned);
    return 1;
}

// After running out of memory at run->micro_batch on `failed`: everything per-batch is
// given back, and the pass size shrinks (next_micro_batch).
static int shrink_micro_batch(TrainRun *run, const Replica *failed, const Status *cause,
                              Status *st) {
    if (run->sync_batchnorm) return refuse_split_with_sync(run, failed, cause, st);
    size_t before = reserved_bytes(run), failed_reserved = failed->device->alloc.stats.reserved;
    release_activations(run);
    int old_size = run->micro_batch;
    if (old_size <= 1) {
        if (give_up_workspace(run, failed)) {
            if (!run->split.happened)
                describe_split(run, failed, old_size, before, failed_reserved);
            return 0;
        }
        report_split(run);  // a split that was tried is told before why it is given up
        return cannot_split(run, failed, cause, st);
    }
    if (!run->split.happened) describe_split(run, failed, old_size, before, failed_reserved);
    run->micro_batch = next_micro_batch(run, failed);
    return 0;
}

// Activations for one pass of run->micro_batch samples on every replica, shrinking the
// pass until it fits.
static int allocate_passes(TrainRun *run, Status *st) {
    for (;;) {
        int failed = -1;
        Status attempt;
        status_clear(&attempt);
        for (int r = 0; r < run->count && failed < 0; r++) {
            Replica *rep = &run->replicas[r];
            if (make_current(rep->device, st)) return st->code;
            if (graph_allocate(rep->graph, rep->device->backend, &rep->device->alloc,
                               run->micro_batch, &rep->allocation_failure, &attempt))
                failed = r;
        }
        if (failed < 0) {
            report_split(run);
            return 0;
        }
        if (attempt.code != STATUS_OUT_OF_MEMORY) {
            *st = attempt;
            return st->code;
        }
        TRY(shrink_micro_batch(run, &run->replicas[failed], &attempt, st));
    }
}

static int sum_statistics_over_ranks(void *user, double *values, size_t count, Status *st) {
    return collective_sum_doubles_over_ranks(user, values, count, st);
}

// --sync-batchnorm, a rank with no samples in the step (fewer than ranks): it still makes
// every batchnorm sum over the ranks, in the order the others make them (forward first to
// last, then backward last to first, the gradient buckets started in between as
// graph_backward starts them), adding zeros; its running statistics move with everyone's.
static int join_without_samples(Graph *g, LayerContext *ctx, Status *st) {
    ctx->batch = 0;
    for (int i = 1; i < g->count; i++)
        if (g->layers[i]->kind->normalises_over_batch) TRY(graph_run_layer(g, i, ctx, 0, st));
    for (int i = g->count - 1; i >= 1; i--) {
        if (g->layers[i]->kind->normalises_over_batch) TRY(graph_run_layer(g, i, ctx, 1, st));
        if (ctx->after_layer_backward)
            TRY(ctx->after_layer_backward(ctx->after_layer_user, g->layers[i], st));
    }
    return 0;
}

// Forward and backward of replica r's share of the step, in passes of run->micro_batch;
// parameter gradients add up over the passes.
static int replica_passes(TrainRun *run, int r, int n, long step, Status *st) {
    Replica *rep = &run->replicas[r];
    Graph *g = rep->graph;
    const Backend *b = rep->device->backend;
    int offset, share;
    replica_share(n, run->shares, run->first_share + r, &offset, &share);
    TRY(make_current(rep->device, st));
    LayerContext ctx = {.backend = b, .alloc = &rep->device->alloc, .training = 1,
                        .labels = (const int32_t *)g->labels.data, .loss_batch = n,
                        .sync_check = run->config->sync_check,
                        .loss_scaling = run->loss_scaling ? (float)run->scaler.scale : 0.0f};
    if (run->sync_batchnorm) {
        ctx.sum_over_ranks = sum_statistics_over_ranks;
        ctx.sum_over_ranks_user = &run->collective;
    }
    if (share == 0) {
        // Fewer samples than replicas: this one contributes a zero gradient to the sum.
        for (int i = 0; i < g->count; i++)
            for (int k = 0; k < g->layers[i]->param_count; k++) {
                Param *p = &g->layers[i]->params[k];
                if (!p->buffer) TRY(b->fill(b, tensor_f32(&p->grad), 0.0f, tensor_numel(&p->grad), st));
            }
        if (!run->sync_batchnorm) return 0;
        ctx.seed = step_seed(run->config->train.seed, step);
        ctx.after_layer_backward = run->use_buckets ? grad_buckets_after_layer : NULL;
        ctx.after_layer_user = &run->buckets;
        return join_without_samples(g, &ctx, st);
    }
    int split = share > run->micro_batch;
    for (int start = 0; start < share; start += run->micro_batch) {
        int count = share - start < run->micro_batch ? share - start : run->micro_batch;
        // On the last pass each layer's gradients are final once its backward has run: the
        // sum over the processes can start then.
        int last = start + count >= share;
        ctx.after_layer_backward = last && run->use_buckets ? grad_buckets_after_layer : NULL;
        ctx.after_layer_user = &run->buckets;
        int32_t *labels = (int32_t *)g->labels.data;
        float *images = tensor_f32(&g->input->output);
        if (run->gather_put_indices
                ? source_gather(&rep->source, offset + start, count, images, labels, st)
                : source_load(&rep->source, run->step_indices + offset + start, count, images,
                              labels, st)) {
            status_prefix(st, "loading the batch: ");
            return st->code;
        }
        ctx.batch = count;
        ctx.seed = step_seed(run->config->train.seed, step);
        ctx.sample_offset = offset + start;
        ctx.accumulate_param_grads = start > 0;
        TRY(graph_forward(g, &ctx, st));
        TRY(graph_backward(g, &ctx, st));
        TRY(graph_add_loss_sums(g, b, count, split, st));
    }
    return split ? graph_commit_step_loss_sums(g, b, st) : 0;
}

// Every replica's gradient becomes the sum over replicas (of every process).
static int all_reduce_gradients(TrainRun *run, Status *st) {
    if (run->shares == 1) return 0;
    if (run->use_buckets) return grad_buckets_finish(&run->buckets, st);
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

// Every replica starts from replica 0's parameters and buffers (rank 0's, across processes).
static int broadcast_parameters(TrainRun *run, Status *st) {
    if (run->shares == 1) return 0;
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

// Tells each replica's source which loads are coming, as replica_passes will cut them:
// the epoch's order from the step that starts at order[step_start] on.
static int expect_loads(TrainRun *run, int step_start, Status *st) {
    for (int r = 0; r < run->count; r++)
        TRY(source_expect(&run->replicas[r].source, run->batcher.order, run->batch,
                          run->shares, run->first_share + r, run->micro_batch, step_start,
                          st));
    return 0;
}

// Clipping (when asked) and the update at the scheduled rate. Every replica holds the same
// summed gradients, so each computes the same norm and takes the same step.
static int update_replica(TrainRun *run, Replica *rep, long step, Status *st) {
    const OptimizerConfig *o = &run->config->optimizer;
    const Backend *b = rep->device->backend;
    TRY(make_current(rep->device, st));
    if (o->clip_norm > 0.0)
        TRY(clip_gradients(rep->graph, b, &rep->device->alloc, o->clip_norm, NULL, st));
    return optimizer_step_at(rep->graph, o, b, (int)step, run->lr, st);
}

// fp16: the summed gradients are S times the true ones. Non-finite ones (S too large for
// fp16 somewhere in backward) skip the step: *skip, S halved, said in the log; otherwise
// every replica divides its gradients by S before clipping and the update. Every replica
// holds the same sums, so replica 0's answer is everyone's. Skipping leaves Adam's step
// count (the run's step, for bias correction) and the schedule moving on, a shift of a
// step or two where GradScaler's Adam would not count the skipped one.
static int unscale_or_skip(TrainRun *run, long step, int *skip, Status *st) {
    Replica *first = &run->replicas[0];
    *skip = 0;
    TRY(make_current(first->device, st));
    LossScaleEvent event;
    double scale;
    TRY(loss_scale_check(first->graph, first->device->backend, &first->device->alloc,
                         &run->scaler, step, "the run",
                         "the gradients overflow or are NaN unscaled: lower the learning rate, "
                         "add --clip-norm 1, or train with --precision bf16 (fp32's range)",
                         &event, &scale, st));
    if (event == LOSS_SCALE_HALVED) {
        *skip = 1;
        notice(run, "fp16 loss scaling: non-finite gradients at step %ld of the run with the "
               "loss scaled by %g: step skipped, scale now %g (%ld skipped so far)", step, scale,
               run->scaler.scale, run->scaler.skipped_steps);
        return 0;
    }
    for (int r = 0; r < run->count; r++) {
        Replica *rep = &run->replicas[r];
        TRY(make_current(rep->device, st));
        TRY(loss_scale_unscale_gradients(rep->graph, rep->device->backend, scale, st));
    }
    return 0;
}

// ---- the step as a CUDA Graph (--cuda-graph, core/step_graph.h) ----
//
// Only runs of one replica get here (step_graphs_refusal), so a step is replica 0's passes
// and its update: no sum over replicas and no fp16 skip between them.

// Clipping reads the gradients' norm on the host (core/grad_clip.h), so with --clip-norm
// the graph ends after the passes and clipping and the update run as plain launches.
static int update_in_graph(const TrainRun *run) {
    return run->config->optimizer.clip_norm <= 0.0;
}

// Records replica 0's passes, and the update where it belongs in the graph, into *graph;
// nothing runs. On failure *graph is NULL and the device's stream is as before.
static int capture_step(TrainRun *run, int n, long step, const StepValues *values,
                        void **graph, Status *st) {
    Replica *rep = &run->replicas[0];
    const Backend *b = rep->device->backend;
    *graph = NULL;
    TRY(b->capture_begin(b, values, st));
    run->gather_put_indices = 1;
    int rc = replica_passes(run, 0, n, step, st);
    if (!rc && update_in_graph(run)) rc = update_replica(run, rep, step, st);
    run->gather_put_indices = 0;
    Status ending;
    status_clear(&ending);
    int ended = b->capture_end(b, graph, rc ? &ending : st);
    if (rc && *graph) {
        b->graph_destroy(b, *graph);
        *graph = NULL;
    }
    return rc ? rc : ended;
}

// A step replayed from a graph, captured first when its shape has warmed up. *done = 0
// leaves the step to plain launches: a shape's first step, or a failed capture (which ran
// nothing, so the plain launches run the same step).
static int graph_step(TrainRun *run, int n, long step, int *done, Status *st) {
    *done = 0;
    Replica *rep = &run->replicas[0];
    const Backend *b = rep->device->backend;
    StepShape shape = {.samples = n, .micro_batch = run->micro_batch,
                       .augment_key = run->augment_key};
    void *graph;
    StepGraphAction action = step_graphs_plan(&run->graphs, &shape, &graph);
    if (action == STEP_RUN_PLAIN) return 0;
    run->failed_device = rep->device->name;
    run->lr = lr_at(&run->schedule, run->config->optimizer.lr, step - 1, run->total_steps);
    StepValues values = {.lr = (float)run->lr, .step = (int)step,
                         .seed = step_seed(run->config->train.seed, step)};
    TRY(make_current(rep->device, st));
    if (action == STEP_CAPTURE) {
        // Outside the graph: a copy from host memory recorded in it would copy the
        // recorded step's indices at every replay.
        TRY(source_put_indices(&rep->source, run->step_indices, n, st));
        // A graph's first launch counts as part of its capture: a graph the driver will
        // not launch has run nothing either.
        Status failed;
        status_clear(&failed);
        int rc = capture_step(run, n, step, &values, &graph, &failed);
        if (!rc) {
            step_graphs_keep(&run->graphs, &shape, graph);
            rc = b->graph_launch(b, graph, &values, &failed);
        }
        if (rc) {
            step_graphs_disable(&run->graphs);
            notice(run, "CUDA Graph: capturing the training step failed, so training goes on "
                   "with plain launches: %.300s", failed.message);
            return 0;
        }
        if (run->graphs.captures == 1)
            notice(run, "CUDA Graph: the training step is captured at step %ld of the run and "
                   "replayed from then on (one graph per step shape, at most %d kept)", step,
                   STEP_GRAPHS_KEPT);
    } else {
        // A replay's indices go with its values (StepValues): one launch on CUDA for a
        // small batch.
        values.indices = run->step_indices;
        values.index_count = n;
        TRY(source_indices_target(&rep->source, n, &values.indices_to, st));
        TRY(b->graph_launch(b, graph, &values, st));
    }
    if (!update_in_graph(run)) TRY(update_replica(run, rep, step, st));
    *done = 1;
    return 0;
}

// A step that ran out of memory part-way: its partial loss sums are dropped, what it
// allocated is given back, and it runs again in smaller passes (next_micro_batch).
// Nothing else has changed yet (the optimizer runs only after every pass), so the redo is
// the same step.
static int run_step(TrainRun *run, int n, long step, Status *st) {
    if (run->use_graphs) {
        int done;
        TRY(graph_step(run, n, step, &done, st));
        if (done) return 0;
    }
    if (run->use_buckets) grad_buckets_start_step(&run->buckets);  // kept over a redo
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
        TRY(shrink_micro_batch(run, &run->replicas[failed], &attempt, st));
        TRY(allocate_passes(run, st));
        TRY(expect_loads(run, run->batcher.position - n, st));
    }
    run->failed_device = run->replicas[0].device->name;
    TRY(all_reduce_gradients(run, st));
    run->lr = lr_at(&run->schedule, run->config->optimizer.lr, step - 1, run->total_steps);
    int skip = 0;
    if (run->loss_scaling) TRY(unscale_or_skip(run, step, &skip, st));
    if (skip) return 0;
    for (int r = 0; r < run->count; r++) {
        run->failed_device = run->replicas[r].device->name;
        TRY(update_replica(run, &run->replicas[r], step, st));
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
        TRY(source_check_labels(&rep->source, st));
        *loss_sum += loss;
        *correct_sum += correct;
    }
    if (run->shares == run->count) return 0;
    // Every process logs the loss and accuracy of the whole step, not of its share.
    double sums[2] = {*loss_sum, *correct_sum};
    TRY(mpi_all_reduce_sum_doubles(sums, 2, st));
    *loss_sum = sums[0];
    *correct_sum = sums[1];
    return 0;
}

// Which layer's values went non-finite first (site->layer NULL when the search finds none
// or cannot run: the loss alone is then reported).
static void find_nonfinite_site(TrainRun *run, NonfiniteSite *site) {
    Replica *first = &run->replicas[0];
    Status search;
    status_clear(&search);
    site->layer = NULL;
    if (make_current(first->device, &search) ||
        find_first_nonfinite(first->graph, first->device->backend, &first->device->alloc, site,
                             &search))
        site->layer = NULL;
}

// The error is placed at the statement of the first layer that went non-finite.
static int check_finite_loss(TrainRun *run, double loss, int epoch, int step, long global_step,
                             Status *st) {
    if (isfinite(loss)) return 0;
    const OptimizerConfig *o = &run->config->optimizer;
    NonfiniteSite site;
    find_nonfinite_site(run, &site);
    char where[320] = "";
    if (site.everywhere)
        snprintf(where, sizeof where, "; every parameter is non-finite (the updates since the "
                 "last loss read spread it), so where it began is not known");
    else if (site.layer)
        snprintf(where, sizeof where, "; the first non-finite value: %s of layer '%s'", site.what,
                 site.layer->name);
    status_fail_at(st, STATUS_RUNTIME_ERROR, site.layer ? site.layer->path : "",
                   site.layer ? site.layer->line : 0, site.layer ? site.layer->column : 0,
                   "training diverged: the loss became %s at epoch %d, step %d (step %ld of the "
                   "run, learning rate %g)%s", isnan(loss) ? "NaN" : "infinite", epoch, step,
                   global_step, run->lr, where);
    const TrainHooks *hooks = run->hooks;
    const char *checkpoint = hooks && hooks->last_checkpoint
                                 ? hooks->last_checkpoint(hooks->user) : NULL;
    if (checkpoint)
        status_hint(st, "lower the learning rate (now lr=%g, try --lr %g) or add --clip-norm 1, "
                    "and go back to the last good checkpoint, %s", o->lr, o->lr / 10.0,
                    checkpoint);
    else
        status_hint(st, "lower the learning rate (now lr=%g, try --lr %g) or add --clip-norm 1",
                    o->lr, o->lr / 10.0);
    return STATUS_RUNTIME_ERROR;
}

// The host reads the running loss (a device sync) this often, and at an epoch's end: often
// enough for a live progress bar and to stop soon after a divergence, rare enough that a
// GPU runs ahead of the host between reads.
enum { LOSS_READ_INTERVAL = 16 };

static const AllocStats *first_device_stats(const TrainRun *run) {
    return &run->replicas[0].device->alloc.stats;
}

static int stop_training(int epoch, int step, int steps, EpochReport *report, Status *st) {
    report->interrupted = 1;
    status_fail(st, STATUS_RUNTIME_ERROR, "interrupted at epoch %d, step %d of %d", epoch, step,
                steps);
    status_hint(st, "with --checkpoint DIR a checkpoint of this step is kept and --resume DIR "
                    "continues from it");
    return STATUS_RUNTIME_ERROR;
}

// A signal reaches the processes of an mpirun launch at different moments: they stop at the
// same step, or the ones still going would wait in a collective forever. Called at the same
// step on every process.
static int agree_on_stop(TrainRun *run, int *stop, Status *st) {
    return run->shares == run->count ? 0 : mpi_all_reduce_max_int(stop, st);
}

static int after_step(TrainRun *run, const StepPlace *place, EpochReport *report, Status *st) {
    const TrainHooks *hooks = run->hooks;
    if (!hooks || !hooks->after_step) return 0;
    int stop = 0;
    Replica *first = &run->replicas[0];
    TRY(make_current(first->device, st));
    TRY(hooks->after_step(hooks->user, place, first->graph, first->device, &stop, st));
    TRY(agree_on_stop(run, &stop, st));
    return stop ? stop_training(place->epoch, place->step, place->steps, report, st) : 0;
}

static int report_step(TrainRun *run, int epoch, int step, int steps, int seen, double start,
                       double loss_sum, double correct_sum, long global_step,
                       EpochReport *report, Status *st) {
    const TrainHooks *hooks = run->hooks;
    if (!hooks || !hooks->on_step) return 0;
    double elapsed = monotonic_seconds() - start;
    StepReport r = {.epoch = epoch, .epochs = run->config->train.epochs, .step = step,
                    .steps = steps, .loss = loss_sum / seen,
                    .samples_per_second = elapsed > 0 ? seen / elapsed : 0.0,
                    .epoch_seconds = elapsed, .global_step = global_step,
                    .accuracy = correct_sum / seen, .lr = run->lr,
                    .memory_in_use = first_device_stats(run)->in_use,
                    .memory_peak = first_device_stats(run)->peak_in_use};
    int stop = hooks->on_step(hooks->user, &r);
    TRY(agree_on_stop(run, &stop, st));
    return stop ? stop_training(epoch, step, steps, report, st) : 0;
}

// `done`: steps of this epoch a resumed run already took; the epoch's order is the same,
// so they are skipped by position.
static int train_epoch(TrainRun *run, int epoch, int done, long *global_step,
                       EpochReport *report, Status *st) {
    double loss_sum = 0.0, correct_sum = 0.0, start = monotonic_seconds();
    int seen = 0, steps = batcher_steps_per_epoch(&run->batcher);
    batcher_start_epoch(&run->batcher, epoch);
    uint64_t augment_key = data_transform_epoch_key((uint64_t)run->config->train.seed, epoch);
    for (int r = 0; r < run->count; r++)
        source_set_augment_key(&run->replicas[r].source, augment_key);
    const AugmentConfig *augment = &run->config->data.augment;
    run->augment_key = augment->crop_padding || augment->flip ? augment_key : 0;
    report->first_step = done + 1;
    report->steps = steps;
    long skipped = (long)done * run->batch, count = run->batcher.dataset->count;
    run->batcher.position = (int)(skipped < count ? skipped : count);
    TRY(expect_loads(run, run->batcher.position, st));
    for (int r = 0; r < run->count; r++) {
        TRY(make_current(run->replicas[r].device, st));
        TRY(graph_reset_loss_sums(run->replicas[r].graph, run->replicas[r].device->backend, st));
    }
    for (int step = done + 1;; step++) {
        int n = batcher_next_indices(&run->batcher, run->step_indices);
        if (n == 0) break;
        if (run_step(run, n, ++*global_step, st)) {
            // Which step, and on which device when there are several, beside the layer.
            status_prefix(st, "epoch %d, step %d on %s: ", epoch, step,
                          run->failed_device ? run->failed_device : "?");
            return st->code;
        }
        StepPlace place = {.epoch = epoch, .step = step, .steps = steps,
                           .optimizer_steps = *global_step};
        TRY(after_step(run, &place, report, st));
        seen += n;
        if (step % LOSS_READ_INTERVAL != 0 && step != steps) continue;
        TRY(read_loss_sums(run, &loss_sum, &correct_sum, st));
        // Reported first: the log's last row is the non-finite loss (null), where a
        // diverged run's log stopped at its last finite row, as if nothing had happened.
        int reported = report_step(run, epoch, step, steps, seen, start, loss_sum,
                                   correct_sum, *global_step, report, st);
        if (check_finite_loss(run, loss_sum, epoch, step, *global_step, st)) {
            report->interrupted = 0;  // a stop asked at this step is not what ended the run
            return st->code;
        }
        if (reported) return reported;
    }
    report->seconds = monotonic_seconds() - start;
    report->train_loss = seen ? loss_sum / seen : 0.0;
    report->train_accuracy = seen ? correct_sum / seen : 0.0;
    report->samples_per_second = report->seconds > 0 ? seen / report->seconds : 0.0;
    report->global_step = *global_step;
    report->lr = run->lr;
    report->memory_in_use = first_device_stats(run)->in_use;
    report->memory_peak = first_device_stats(run)->peak_in_use;
    return 0;
}

// Rank 0's last word on the sums: how long the steps waited for them. On a GPU the compute
// stream's wait, timed with CUDA events.
static void report_gradient_sums(TrainRun *run) {
    GradBuckets *gb = &run->buckets;
    if (!run->use_buckets || run->config->world.rank != 0 || gb->steps == 0) return;
    char how[96] = "one sum after backward";
    if (gb->bucket_values)
        snprintf(how, sizeof how, "buckets of %.3g MiB started during backward",
                 (double)gb->bucket_values * sizeof(float) / (1024.0 * 1024.0));
    if (gb->sums.on_device)
        snprintf(how + strlen(how), sizeof how - strlen(how), ", on a communication stream");
    else if (run->replicas[0].device->backend->kind == BACKEND_CUDA)
        snprintf(how + strlen(how), sizeof how - strlen(how), ", through host memory (MPI)");
    double waited = 0.0;
    int measured = 0;
    Status ignored;
    status_clear(&ignored);
    if (gb->sums.waited(&gb->sums, &waited, &measured, &ignored) || !measured) {
        notice(run, "gradient sums over %d processes in %ld steps (waited: not measured), %s",
               run->world, gb->steps, how);
        return;
    }
    notice(run, "gradient sums over %d processes: %.2f s waited in %ld steps (%.2f ms a step), "
           "%s", run->world, waited, gb->steps, 1e3 * waited / (double)gb->steps, how);
}

// The buckets go before the collective: their stream's sums use its communicator.
static void close_run(TrainRun *run) {
    step_graphs_close(&run->graphs);
    for (int r = 0; r < run->count; r++) source_close(&run->replicas[r].source);
    report_gradient_sums(run);
    grad_buckets_close(&run->buckets);
    if (run->collective.close) collective_close(&run->collective);
    batcher_free(&run->batcher);
    free(run->step_indices);
    free(run->replicas);
}

// --cuda-graph auto or on: graphs where this run allows them, else one notice saying why
// not (on the CPU, auto says nothing: there is nothing to capture).
static int open_step_graphs(TrainRun *run, Status *st) {
    Device *first = run->replicas[0].device;
    const Backend *b = first->backend;
    step_graphs_init(&run->graphs, b);
    CudaGraphMode mode = run->config->cuda_graph;
    if (mode == CUDA_GRAPH_OFF) return 0;
    TRY(step_graphs_check_device(mode, b, st));
    StepGraphRun facts = {.has_graph_ops = b->capture_begin && b->capture_end &&
                                           b->graph_launch && b->graph_destroy,
                          .replicas = run->count, .processes = run->world,
                          .sync_check = run->config->sync_check,
                          .loss_scaling = run->loss_scaling,
                          .staged = !run->replicas[0].source.on_device};
    const char *refusal = step_graphs_refusal(&facts);
    if (refusal) {
        if (facts.has_graph_ops)
            notice(run, "--cuda-graph %s: %s, so training uses plain launches",
                   cuda_graph_mode_name(mode), refusal);
        return 0;
    }
    run->use_graphs = 1;
    return 0;
}

// One process trains 1 to 64 replicas; under mpirun, one each.
static int check_replica_count(int count, int world, Status *st) {
    if (count < 1 || count > 64) {
        status_fail(st, STATUS_BAD_INPUT, "data parallelism takes 1 to 64 replicas, got %d",
                    count);
        status_hint(st, "list at most 64 GPUs in --gpus");
        return STATUS_BAD_INPUT;
    }
    if (world > 1 && count > 1) {
        status_fail(st, STATUS_BAD_INPUT, "each of the %d processes of this mpirun launch "
                    "asks for %d replicas; with mpirun, a process trains one", world, count);
        status_hint(st, "drop --gpus/--replicas: mpirun -np N starts one process per GPU "
                        "(its local rank picks the GPU) or per CPU replica");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// --sync-batchnorm where it changes something: batchnorm layers and more than one process.
static void choose_sync_batchnorm(TrainRun *run, const Graph *g) {
    if (!run->config->world.sync_batchnorm) return;
    int batchnorms = graph_normalises_over_batch(g);
    run->sync_batchnorm = run->world > 1 && batchnorms;
    if (!batchnorms)
        notice(run, "--sync-batchnorm: the model has no batchnorm layer; nothing to "
               "synchronise");
    else if (run->world == 1)
        notice(run, "--sync-batchnorm: one process, whose batchnorm statistics are already "
               "the whole batch's");
}

// The batcher, the schedule in steps and the loss scaler, from the run's batch.
static int open_schedule(TrainRun *run, const Dataset *train, Status *st) {
    const RunConfig *config = run->config;
    TRY(batcher_init(&run->batcher, train, run->batch, 1, (uint64_t)config->train.seed, st));
    long steps_per_epoch = batcher_steps_per_epoch(&run->batcher);
    run->schedule = schedule_in_steps(&config->schedule, steps_per_epoch);
    run->total_steps = steps_per_epoch * config->train.epochs;
    // Known only now (the batch may be --batch auto's): a warmup past the run's end leaves
    // the rate below lr for good, and that is worth a word, not a refusal.
    if (config->schedule.warmup > run->total_steps)
        notice(run, "warmup of %ld steps is longer than the run's %ld; the rate rises only to "
               "%g (lr %g) by its last step", config->schedule.warmup, run->total_steps,
               lr_at(&run->schedule, config->optimizer.lr, run->total_steps - 1,
                     run->total_steps), config->optimizer.lr);
    run->lr = config->optimizer.lr;
    run->loss_scaling = config->precision.precision == PRECISION_FP16;
    loss_scaler_init(&run->scaler, config->precision.initial_loss_scale);
    return 0;
}

// Each replica's optimizer state and batch source on its device.
static int open_replicas(TrainRun *run, Graph *const *graphs, Device *const *devices,
                         const Dataset *train, Status *st) {
    const RunConfig *config = run->config;
    for (int r = 0; r < run->count; r++) {
        Replica *rep = &run->replicas[r];
        rep->graph = graphs[r];
        rep->device = devices[r];
        TRY(make_current(rep->device, st));
        TRY(optimizer_prepare(rep->graph, &config->optimizer, rep->device->backend,
                              &rep->device->alloc, st));
        DeviceMemory memory = device_memory(rep->device);
        DataTransform transform = {.normalization = config->normalization,
                                   .crop_padding = config->data.augment.crop_padding,
                                   .flip = config->data.augment.flip};
        TRY(source_open(&rep->source, rep->device->backend, &memory, train, &transform,
                        run->micro_batch, graph_classes(rep->graph), st));
        // Staged by design, not for want of room: a streamed dataset (tools/ says so in the
        // header) and CSV features (floats; the device's gather op takes bytes).
        if (!rep->source.on_device && r == 0 && !train->paths && !train->features) {
            char bytes[32];
            notice(run, "the training set (%s) does not fit on %s beside the model; batches are "
                   "staged through the host", alloc_format_bytes((size_t)train->count *
                   (dataset_sample_size(train) + 1), bytes, sizeof bytes), rep->device->name);
        }
    }
    return 0;
}

// The sums over ranks (MPI or NCCL, in buckets started during backward) or over this
// process's replicas, and the parameters made equal.
static int open_collectives(TrainRun *run, Graph *const *graphs, Device *const *devices,
                            Status *st) {
    const RunConfig *config = run->config;
    char said[512];
    if (run->world > 1) {
        TRY(collective_open_mpi(devices[0], config->world.rank, run->world,
                                (CollectiveChoice)config->world.collective, &run->collective,
                                said, sizeof said, st));
        if (said[0] && config->world.rank == 0) notice(run, "%s", said);
        // Buckets started during backward: MPI on the host for CPU ranks, NCCL on a
        // communication stream for GPU ranks.
        run->use_buckets = 1;
        TRY(grad_buckets_open(&run->buckets, graphs[0], devices[0]->backend,
                              config->world.bucket_mb, st));
        TRY(grad_sums_open(&run->collective, devices[0], run->buckets.total,
                           &run->buckets.sums, st));
        return broadcast_parameters(run, st);
    }
    if (run->count == 1) return 0;
    TRY(collective_open(devices, run->count, (CollectiveChoice)config->world.collective,
                        &run->collective, said, sizeof said, st));
    if (said[0]) notice(run, "%s", said);
    return broadcast_parameters(run, st);
}

// Optimizer state and the dataset come before the activations, so that when memory is
// short it is the per-batch part that shrinks.
static int open_run(TrainRun *run, Graph *const *graphs, Device *const *devices, int count,
                    const RunConfig *config, const Dataset *train, const TrainHooks *hooks,
                    Status *st) {
    memset(run, 0, sizeof *run);
    int world = config->world.size > 1 ? config->world.size : 1;
    TRY(check_replica_count(count, world, st));
    run->hooks = hooks;
    run->count = count;
    run->world = world;
    run->config = config;
    choose_sync_batchnorm(run, graphs[0]);
    run->shares = count * world;
    run->first_share = config->world.rank * count;
    // A batch past the training set is one step of the whole set.
    run->batch = config->train.batch < train->count ? config->train.batch : train->count;
    run->micro_batch = largest_share(run->batch, run->shares);
    run->replicas = calloc((size_t)count, sizeof *run->replicas);
    run->step_indices = malloc((size_t)run->batch * sizeof *run->step_indices);
    if (!run->replicas || !run->step_indices)
        return status_out_of_host_memory(
            st,
            (size_t)count * sizeof *run->replicas + (size_t)run->batch * sizeof *run->step_indices,
            "opening the run");
    TRY(open_schedule(run, train, st));
    TRY(open_replicas(run, graphs, devices, train, st));
    TRY(open_collectives(run, graphs, devices, st));
    TRY(open_step_graphs(run, st));
    return allocate_passes(run, st);
}

// *stopped: hooks->stop_requested said stop before the last batch; *out is then partial.
// confusion (may be NULL: training's evaluations) counts each sample's predicted class.
static int evaluate_stoppable(Graph *g, const RunConfig *config, Device *d, const Dataset *ds,
                              int batch, const TrainHooks *hooks, int *stopped,
                              Confusion *confusion, EvalResult *out, Status *st) {
    const Backend *b = d->backend;
    if (batch > ds->count) batch = ds->count;
    // After training split its batch to fit, evaluation takes the same smaller passes.
    if (g->allocated_batch > 0 && g->allocated_batch < batch) batch = g->allocated_batch;
    if (g->allocated_batch < batch) TRY(graph_allocate(g, b, &d->alloc, batch, NULL, st));
    Batcher batcher;
    TRY(batcher_init(&batcher, ds, batch, 0, 0, st));
    BatchSource source;
    int32_t *indices = malloc((size_t)batch * sizeof *indices);
    DeviceMemory memory = device_memory(d);
    DataTransform transform = {.normalization = config->normalization};  // no augmentation
    int rc = indices ? source_open(&source, b, &memory, ds, &transform, batch, graph_classes(g), st)
                     : status_out_of_host_memory(st, (size_t)batch * sizeof *indices,
                                                 "for an evaluation batch");
    if (!indices) memset(&source, 0, sizeof source);
    LayerContext ctx = {.backend = b, .alloc = &d->alloc, .training = 0,
                        .labels = (const int32_t *)g->labels.data,
                        .sync_check = config->sync_check};
    double loss_sum = 0.0, correct_sum = 0.0;
    int seen = 0;
    batcher_start_epoch(&batcher, 0);
    if (!rc) rc = source_expect(&source, NULL, batch, 1, 0, batch, 0, st);
    if (!rc) rc = graph_reset_loss_sums(g, b, st);
    while (!rc) {
        if (hooks && hooks->stop_requested && hooks->stop_requested(hooks->user)) {
            *stopped = 1;
            break;
        }
        int n = batcher_next_indices(&batcher, indices);
        if (n == 0) break;
        ctx.batch = n;
        rc = source_load(&source, indices, n, tensor_f32(&g->input->output),
                         (int32_t *)g->labels.data, st);
        if (!rc) rc = graph_forward(g, &ctx, st);
        if (!rc) rc = graph_add_loss_sums(g, b, n, 0, st);
        if (!rc && confusion) rc = confusion_add_batch(confusion, g, b, ds, indices, n, st);
        seen += n;
        if (!rc && hooks && hooks->on_eval_batch)
            hooks->on_eval_batch(hooks->user, hooks->eval_split ? hooks->eval_split : "test",
                                 seen, ds->count);
    }
    if (!rc) rc = graph_read_loss_sums(g, b, &loss_sum, &correct_sum, st);
    if (!rc) rc = source_check_labels(&source, st);
    source_close(&source);
    batcher_free(&batcher);
    free(indices);
    if (rc) return rc;
    out->samples = seen;
    out->loss = seen ? loss_sum / seen : 0.0;
    out->accuracy = seen ? correct_sum / seen : 0.0;
    return 0;
}

// A checkpoint's place within an epoch counts the steps of the data it was written with; on
// fewer samples this run's epoch may end before that place.
static int check_start_in_epoch(const TrainRun *run, Status *st) {
    int done = run->config->start.step_in_epoch;
    int steps = batcher_steps_per_epoch(&run->batcher);
    if (done < steps) return 0;
    status_fail(st, STATUS_BAD_INPUT, "the checkpoint is %d steps into epoch %d, but an epoch of "
                "this run has %d step%s (%d training samples, batch %d)", done,
                run->config->start.epochs_done + 1, steps, steps == 1 ? "" : "s",
                run->batcher.dataset->count, run->batch);
    status_hint(st, "resume with the same data options as the run that wrote the checkpoint "
                    "(--data, --train-limit, --val-split)");
    return STATUS_BAD_INPUT;
}

// A stop asked for during the evaluation ends the run at the epoch's end, as a stop during
// the epoch's steps does; every process agrees on it, as after a step.
static int evaluate_epoch(TrainRun *run, const Dataset *test, EpochReport *report,
                          Status *st) {
    Replica *first = &run->replicas[0];
    int stop = 0;
    TRY(evaluate_stoppable(first->graph, run->config, first->device, test, run->batch,
                           run->hooks, &stop, NULL, &report->test, st));
    TRY(agree_on_stop(run, &stop, st));
    if (!stop) return 0;
    int steps = batcher_steps_per_epoch(&run->batcher);
    return stop_training(report->epoch, steps, steps, report, st);
}

// The evaluation of the epoch the resumed checkpoint ends, which the run that wrote it did
// not finish: reported like an epoch's, without train figures.
static int evaluate_resumed_epoch(TrainRun *run, const Dataset *test, Graph *first,
                                  Device *device, int *interrupted, Status *st) {
    const RunConfig *config = run->config;
    long global_step = first->optimizer_steps;
    EpochReport report = {.epoch = config->start.epochs_done, .epochs = config->train.epochs,
                          .evaluation_only = 1, .has_test = 1, .global_step = global_step,
                          .steps = batcher_steps_per_epoch(&run->batcher)};
    report.first_step = report.steps + 1;  // no step trained
    report.lr = lr_at(&run->schedule, config->optimizer.lr, global_step - 1, run->total_steps);
    report.memory_in_use = first_device_stats(run)->in_use;
    report.memory_peak = first_device_stats(run)->peak_in_use;
    TRY(make_current(device, st));
    int rc = evaluate_epoch(run, test, &report, st);
    if (interrupted) *interrupted = report.interrupted;
    const TrainHooks *hooks = run->hooks;
    if (!rc && hooks && hooks->on_epoch) rc = hooks->on_epoch(hooks->user, &report, first, device,
                                                              st);
    return rc;
}

int train_replicas(Graph *const *graphs, Device *const *devices, int count,
                   const RunConfig *config, const Dataset *train, const Dataset *test,
                   const TrainHooks *hooks, int *interrupted, Status *st) {
    TrainRun run;
    int rc = open_run(&run, graphs, devices, count, config, train, hooks, st);
    Graph *first = graphs[0];
    long global_step = first->optimizer_steps;
    int first_epoch = config->start.epochs_done + 1;
    if (!rc && config->start.evaluate_first && test)
        rc = evaluate_resumed_epoch(&run, test, first, devices[0], interrupted, st);
    if (!rc && first_epoch <= config->train.epochs) rc = check_start_in_epoch(&run, st);
    for (int epoch = first_epoch; !rc && epoch <= config->train.epochs; epoch++) {
        EpochReport report = {.epoch = epoch, .epochs = config->train.epochs};
        int done = epoch == first_epoch ? config->start.step_in_epoch : 0;
        rc = train_epoch(&run, epoch, done, &global_step, &report, st);
        for (int r = 0; r < count; r++) graphs[r]->optimizer_steps = global_step;
        if (!rc && test) {
            report.has_test = 1;
            if (!(rc = make_current(devices[0], st))) rc = evaluate_epoch(&run, test, &report, st);
        }
        if (interrupted) *interrupted = report.interrupted;
        if (!rc && hooks && hooks->on_epoch) rc = hooks->on_epoch(hooks->user, &report, first,
                                                                  devices[0], st);
    }
    close_run(&run);
    return rc;
}

int train_model(Graph *g, const RunConfig *config, Device *d, const Dataset *train,
                const Dataset *test, const TrainHooks *hooks, int *interrupted, Status *st) {
    return train_replicas(&g, &d, 1, config, train, test, hooks, interrupted, st);
}

int evaluate_model(Graph *g, const RunConfig *config, Device *d, const Dataset *ds, int batch,
                   EvalResult *out, Status *st) {
    int stopped = 0;
    return evaluate_stoppable(g, config, d, ds, batch, NULL, &stopped, NULL, out, st);
}

int evaluate_model_stoppable(Graph *g, const RunConfig *config, Device *d, const Dataset *ds,
                             int batch, const TrainHooks *hooks, int *stopped,
                             Confusion *confusion, EvalResult *out, Status *st) {
    *stopped = 0;
    return evaluate_stoppable(g, config, d, ds, batch, hooks, stopped, confusion, out, st);
}

