#include "core/memory_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t charged(size_t bytes) { return alloc_charged_bytes(bytes); }

static size_t batch_tensor(int batch, const Shape *sample, size_t element_size) {
    return layer_batch_tensor_bytes(batch, sample, element_size);
}

static int optimizer_slots(const OptimizerConfig *o) {
    if (o->kind == OPTIMIZER_SGD) return o->momentum != 0.0 ? 1 : 0;
    return 2;  // adam, adamw: first and second moments
}

// ---- per layer ------------------------------------------------------------------------------

static void note_unplanned(MemoryPlan *plan, const char *what) {
    if (strstr(plan->unplanned, what)) return;
    size_t used = strlen(plan->unplanned);
    snprintf(plan->unplanned + used, sizeof plan->unplanned - used, "%s%s", used ? ", " : "",
             what);
}

// What the kind's `allocate` takes for `batch` samples, as the kind itself states it.
static int plan_kind_allocate(const Layer *l, const Backend *b, int batch, MemoryPlan *plan,
                              MemoryPlanLayer *row, Status *st) {
    const LayerKind *kind = l->kind;
    if (!kind->allocate) return 0;
    if (!kind->planned_bytes) {
        note_unplanned(plan, kind->name);
        return 0;
    }
    size_t state = 0, workspace = 0;
    TRY(kind->planned_bytes(l, b, batch, &state, &workspace, st));
    row->layer_state += state;
    row->workspace += workspace;
    return 0;
}

static int plan_layer(const Layer *l, const Backend *b, const MemoryPlanOptions *o, int batch,
                      int slots, MemoryPlan *plan, MemoryPlanLayer *row, Status *st) {
    size_t activation_size = dtype_size(l->out_dtype);
    snprintf(row->name, sizeof row->name, "%s", l->name);
    row->kind = l->kind->name;
    for (int k = 0; k < l->param_count; k++) {
        const Param *p = &l->params[k];
        size_t bytes = batch_tensor(1, &p->shape, sizeof(float));
        row->parameters += bytes;
        if (p->buffer) continue;  // running statistics: no gradient, no optimizer state
        row->gradients += bytes;   // graph_init_params allocates them for eval too
        if (o->optimizer) row->optimizer_state += (size_t)slots * bytes;
    }
    // graph_allocate: every output in its layer's dtype (graph_set_storage: 16 bits for
    // dense layers and their fused activations under bf16/fp16, f32 for the rest and the
    // casts' f32 side) unless it is a view or fused away (a dense or conv2d writing its act=
    // layer's output); a gradient wherever a later layer sends one back (also when only
    // evaluating: the graph allocates it regardless).
    if (layer_owns_output(l))
        row->activations = batch_tensor(batch, &l->out_shape, activation_size);
    if (l->needs_grad)
        row->activation_gradients = batch_tensor(batch, &l->out_shape, activation_size);
    TRY(plan_kind_allocate(l, b, batch, plan, row, st));
    row->bytes = row->parameters + row->gradients + row->optimizer_state + row->activations +
                 row->activation_gradients + row->layer_state + row->workspace;
    return 0;
}

// ---- the datasets ---------------------------------------------------------------------------

// dataset_fits in data/batch_source.c: with a limit, the copy may take half of what is left.
static int dataset_fits(const MemoryPlanOptions *o, size_t reserved, size_t bytes) {
    if (o->mode == ALLOC_RESERVE) return 0;  // the arena is the whole limit: nothing is left
    if (!o->limit) return 1;
    return o->limit > reserved && bytes <= (o->limit - reserved) / 2;
}

// upload_dataset: images [count] x sample bytes, labels [count] bytes, indices [batch] i32,
// and the [1] i32 where gather_samples reports the first sample with a bad label. Returns
// the bytes charged, 0 when the set stays on the host.
static size_t plan_dataset(const MemoryPlanOptions *o, long count, int batch, size_t reserved) {
    if (count <= 0 || o->sample_bytes == 0) return 0;
    size_t images = (size_t)count * o->sample_bytes, labels = (size_t)count;
    if (!dataset_fits(o, reserved, images + labels)) return 0;
    int indices = batch < count ? batch : (int)count;
    return charged(images) + charged(labels) + charged((size_t)indices * sizeof(int32_t)) +
           charged(sizeof(int32_t));
}

// ---- the plan -------------------------------------------------------------------------------

int memory_plan(const Graph *g, const Backend *b, const MemoryPlanOptions *options,
                MemoryPlan *plan, Status *st) {
    memset(plan, 0, sizeof *plan);
    MemoryPlanOptions o = *options;
    if (o.batch < 1) o.batch = 1;
    // The loops clamp the batch to the data: train_model to the training set,
    // evaluate_model (trainer eval) to the test set.
    long samples = o.optimizer ? o.train_samples : o.test_samples;
    if (samples > 0 && o.batch > samples) o.batch = (int)samples;
    plan->batch = o.batch;
    plan->training = o.optimizer != NULL;
    plan->device = b->name;
    plan->precision = o.precision == PRECISION_DEFAULT ? PRECISION_FP32 : o.precision;
    plan->activation_dtype = g->activation_dtype;
    plan->optimizer_slots = o.optimizer ? optimizer_slots(o.optimizer) : 0;
    size_t rows = (size_t)(g->count > 0 ? g->count : 1);
    plan->layers = calloc(rows, sizeof *plan->layers);
    if (!plan->layers)
        return status_out_of_host_memory(st, rows * sizeof *plan->layers, "for the memory plan");
    plan->layer_count = g->count;
    for (int i = 0; i < g->count; i++) {
        MemoryPlanLayer *row = &plan->layers[i];
        int rc = plan_layer(g->layers[i], b, &o, o.batch, plan->optimizer_slots, plan, row, st);
        if (rc) {
            memory_plan_free(plan);
            return rc;
        }
        plan->parameters += row->parameters;
        plan->gradients += row->gradients;
        plan->optimizer_state += row->optimizer_state;
        plan->activations += row->activations;
        plan->activation_gradients += row->activation_gradients;
        plan->layer_state += row->layer_state;
        plan->workspace += row->workspace;
    }
    Shape scalar = {.rank = 0};
    plan->labels = batch_tensor(o.batch, &scalar, sizeof(int32_t)) +  // labels [batch] i32
                   batch_tensor(4, &scalar, sizeof(float));           // loss sums [4] f32
    // The training loop uploads the training set after the parameters and optimizer state
    // and before the activations (so that when memory is short, the batch shrinks, not the
    // data); each evaluation then uploads the test set beside everything else and frees it
    // afterwards, so the peak holds both. dataset_fits decides from what is reserved then.
    size_t before_data = plan->parameters + plan->gradients + plan->optimizer_state;
    size_t graph_total = before_data + plan->activations + plan->activation_gradients +
                         plan->layer_state + plan->workspace + plan->labels;
    size_t train_set = o.optimizer ? plan_dataset(&o, o.train_samples, o.batch, before_data) : 0;
    size_t test_set = plan_dataset(&o, o.test_samples, o.batch, graph_total + train_set);
    plan->train_set_on_device = train_set > 0;
    plan->test_set_on_device = test_set > 0;
    plan->dataset = train_set + test_set;
    plan->total = graph_total + plan->dataset;
    return 0;
}

void memory_plan_free(MemoryPlan *plan) {
    free(plan->layers);
    plan->layers = NULL;
    plan->layer_count = 0;
}

static int plan_total(const Graph *g, const Backend *b, const MemoryPlanOptions *options,
                      int batch, size_t *total, Status *st) {
    MemoryPlanOptions o = *options;
    o.batch = batch;
    MemoryPlan plan;
    TRY(memory_plan(g, b, &o, &plan, st));
    *total = plan.total;
    memory_plan_free(&plan);
    return 0;
}

int memory_plan_largest_batch_with(const Graph *g, const Backend *b,
                                   const MemoryPlanOptions *options, size_t budget_bytes,
                                   int *batch, Status *st) {
    *batch = 0;
    size_t total;
    TRY(plan_total(g, b, options, 1, &total, st));
    if (total > budget_bytes) return 0;
    // Double while it fits, then bisect between the last fit and the first miss.
    int fits = 1, misses = 0;
    while (!misses) {
        int next = fits >= MEMORY_PLAN_MAX_BATCH / 2 ? MEMORY_PLAN_MAX_BATCH : 2 * fits;
        TRY(plan_total(g, b, options, next, &total, st));
        if (total > budget_bytes) {
            misses = next;
        } else {
            fits = next;
            if (next == MEMORY_PLAN_MAX_BATCH) misses = next + 1;
        }
    }
    while (misses - fits > 1) {
        int mid = fits + (misses - fits) / 2;
        TRY(plan_total(g, b, options, mid, &total, st));
        if (total > budget_bytes) misses = mid;
        else fits = mid;
    }
    *batch = fits;
    return 0;
}

int memory_plan_largest_batch(const Graph *g, const Backend *b, size_t budget_bytes,
                              const OptimizerConfig *optimizer, int *batch, Status *st) {
    MemoryPlanOptions options = {.optimizer = optimizer};
    return memory_plan_largest_batch_with(g, b, &options, budget_bytes, batch, st);
}
