// The memory plan against the allocator's own count: for the bundled models at several
// batch sizes, plan first, then really allocate on the CPU backend and run a training step
// and an evaluation, and compare stats.peak_in_use with plan.total. The plan mirrors every
// allocation, so the two should agree to the byte; the test demands 10%, the figure
// issue 6 asks for, and prints both either way. Then the training loop itself with
// datasets on the device (whole, partly, not at all under a limit), evaluation alone,
// and memory_plan_largest_batch, checked by allocating at the batch it returns.
#include "check.h"
#include "core/memory_plan.h"
#include "core/optimizer.h"
#include "base/rng.h"
#include "core/train.h"

#include <stdlib.h>

static int load_graph(const char *model, Graph *g, RunConfig *config) {
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", TRAINER_SOURCE_DIR, model);
    ModelFile file;
    Status st;
    status_clear(&st);
    if (model_file_read(path, &file, &st) || graph_build(&file, g, config, &st)) {
        fprintf(stderr, "%s: %s\n", path, st.message);
        test_failures++;
        return 1;
    }
    model_file_free(&file);
    return 0;
}

// Within 10%, and say how close.
static void compare(const char *what, size_t planned, size_t measured) {
    double diff = (double)planned - (double)measured;
    double rel = measured ? diff / (double)measured : (planned ? 1.0 : 0.0);
    fprintf(stderr, "%-40s planned %10zu  measured %10zu  (%+.2f%%)%s\n", what, planned,
            measured, 100.0 * rel,
            planned == measured ? "" : "  not exact: core/memory_plan.c no longer mirrors an "
                                       "allocation");
    if (!(rel <= 0.10 && rel >= -0.10)) {
        fprintf(stderr, "  CHECK failed: %s: plan off by more than 10%%\n", what);
        test_failures++;
    }
}

// Random inputs in [0, 1) and valid labels, loaded into the graph's input and labels.
static int load_random_batch(Graph *g, const Backend *b, int batch, Rng *rng, Status *st) {
    size_t values = (size_t)batch * shape_numel(&g->input->out_shape);
    float *images = malloc(values * sizeof *images);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    if (!images || !labels) {
        free(images);
        free(labels);
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    }
    for (size_t i = 0; i < values; i++) images[i] = rng_uniform(rng);
    for (int i = 0; i < batch; i++) labels[i] = (int32_t)rng_below(rng, (uint32_t)graph_classes(g));
    int rc = graph_load_batch(g, b, images, labels, batch, st);
    free(images);
    free(labels);
    return rc;
}

// What train_model does for one step, then an evaluation forward, as core/train.c fills
// the LayerContext.
static int allocate_and_step(Graph *g, const OptimizerConfig *o, const Backend *b, Allocator *a,
                             int batch, Status *st) {
    TRY(graph_init_params(g, b, a, 1, st));
    TRY(graph_allocate(g, b, a, batch, NULL, st));
    TRY(optimizer_prepare(g, o, b, a, st));
    Rng rng;
    rng_seed(&rng, 7);
    TRY(load_random_batch(g, b, batch, &rng, st));
    LayerContext ctx = {.backend = b, .alloc = a, .batch = batch, .training = 1, .seed = 42,
                        .labels = (const int32_t *)g->labels.data};
    TRY(graph_reset_loss_sums(g, b, st));
    TRY(graph_forward(g, &ctx, st));
    TRY(graph_backward(g, &ctx, st));
    TRY(optimizer_step(g, o, b, 1, st));
    TRY(graph_add_loss_sums(g, b, batch, 0, st));
    ctx.training = 0;
    TRY(graph_forward(g, &ctx, st));
    return graph_add_loss_sums(g, b, batch, 0, st);
}

static void plan_matches_step_of(const char *model, Graph *built, const RunConfig *config,
                                 int batch);

static void plan_matches_a_training_step(const char *model, int batch) {
    Graph g;
    RunConfig config;
    if (load_graph(model, &g, &config)) return;
    plan_matches_step_of(model, &g, &config, batch);
}

// Every kind and every conv2d option at once, with sgd's one momentum tensor and mse: the
// workspace of each conv2d geometry (stride, padding, dilation, groups) is planned.
static const char *const every_kind =
    "input shape=4x20x18\n"
    "conv2d filters=8 kernel=3x5 stride=2 pad=1x2 dilation=2 groups=2 act=gelu name=c1\n"
    "batchnorm momentum=0.2\n"
    "conv2d filters=8 kernel=3 pad=same dilation=2 bias=false name=c2\n"
    "add from=c1,c2 act=relu\n"
    "avgpool size=2 stride=1 pad=1\n"
    "maxpool size=3 stride=2\n"
    "conv2d filters=6 kernel=1 act=tanh\n"
    "global_avgpool\n"
    "reshape shape=2x3x1\n"
    "flatten\n"
    "dense units=12 act=leaky_relu\n"
    "dropout rate=0.25\n"
    "dense units=5 act=sigmoid\n"
    "loss mse\n"
    "optimizer sgd lr=0.1 momentum=0.9\n";

// storage: what graph_set_storage gives the 16-bit-capable layers (bf16/f16 under
// --precision bf16|fp16), so the casts, the 16-bit outputs and the dense layers' weight
// copies are planned too; the CPU ops store 16 bits as the CUDA ones do.
static void plan_matches_every_kind(int batch, DType storage) {
    ModelFile file;
    Graph g;
    RunConfig config;
    Status st;
    status_clear(&st);
    if (model_file_parse_text("every.model", every_kind, &file, &st) ||
        graph_build(&file, &g, &config, &st)) {
        fprintf(stderr, "every.model: %s\n", st.message);
        test_failures++;
        return;
    }
    model_file_free(&file);
    CHECK_INT_EQ(graph_set_storage(&g, storage, &st), 0);
    char what[64];
    snprintf(what, sizeof what, "every kind, %s storage", dtype_name(storage));
    plan_matches_step_of(what, &g, &config, batch);
}

static void plan_matches_step_of(const char *model, Graph *built, const RunConfig *config,
                                 int batch) {
    Graph g = *built;
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    MemoryPlanOptions options = {.batch = batch, .optimizer = &config->optimizer};
    MemoryPlan plan;
    CHECK_INT_EQ(memory_plan(&g, b, &options, &plan, &st), 0);
    CHECK(plan.unplanned[0] == '\0');
    CHECK_INT_EQ(plan.batch, batch);
    CHECK_INT_EQ(plan.layer_count, g.count);
    CHECK_INT_EQ(plan.dataset, 0);
    // The categories add up, per layer and in all.
    size_t layers = 0;
    for (int i = 0; i < plan.layer_count; i++) layers += plan.layers[i].bytes;
    CHECK_INT_EQ(layers + plan.labels, plan.total);
    CHECK_INT_EQ(plan.gradients * (size_t)plan.optimizer_slots, plan.optimizer_state);
    CHECK(plan.total % ALLOC_GRANULE == 0);

    Allocator a;
    CHECK_INT_EQ(alloc_init(&a, b, ALLOC_GROW, 0, &st), 0);
    int rc = allocate_and_step(&g, &config->optimizer, b, &a, batch, &st);
    if (rc) fprintf(stderr, "%s batch %d: %s\n", model, batch, st.message);
    CHECK_INT_EQ(rc, 0);
    char what[96];
    snprintf(what, sizeof what, "%s batch %d", model, batch);
    compare(what, plan.total, a.stats.peak_in_use);
    CHECK_INT_EQ(a.stats.out_of_memory, 0);
    memory_plan_free(&plan);
    graph_free(&g);
    CHECK_INT_EQ(a.stats.in_use, 0);  // the graph gave everything back
    alloc_destroy(&a);
}

// A dataset of `count` random 1x28x28 images with labels 0..9.
static void make_dataset(Dataset *ds, int count, uint64_t seed) {
    memset(ds, 0, sizeof *ds);
    snprintf(ds->source, sizeof ds->source, "random");
    ds->count = count;
    ds->channels = 1;
    ds->height = ds->width = 28;
    ds->images = malloc((size_t)count * 784);
    ds->labels = malloc((size_t)count);
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; ds->images && i < (size_t)count * 784; i++) ds->images[i] = (uint8_t)rng_below(&rng, 256);
    for (int i = 0; ds->labels && i < count; i++) ds->labels[i] = (uint8_t)(i % 10);
    ds->label_max = 9;
}

// train_model for one epoch (the training set uploaded, the test set uploaded beside it
// for the evaluation) under `limit` (0: none).
static void plan_matches_the_training_loop(const char *model, int batch, int train_count,
                                           int test_count, size_t limit, int want_train_set,
                                           int want_test_set) {
    Graph g;
    RunConfig config;
    if (load_graph(model, &g, &config)) return;
    config.train.batch = batch;
    config.train.epochs = 1;
    Dataset train, test;
    make_dataset(&train, train_count, 1);
    make_dataset(&test, test_count, 2);
    Status st;
    status_clear(&st);
    Device d = {.backend = cpu_backend()};
    snprintf(d.name, sizeof d.name, "cpu");
    CHECK_INT_EQ(alloc_init(&d.alloc, d.backend, ALLOC_GROW, limit, &st), 0);
    MemoryPlanOptions options = {.batch = batch, .optimizer = &config.optimizer,
                                 .train_samples = train_count,
                                 .test_samples = test_count, .sample_bytes = 784,
                                 .limit = limit};
    MemoryPlan plan;
    CHECK_INT_EQ(memory_plan(&g, d.backend, &options, &plan, &st), 0);
    CHECK_INT_EQ(plan.train_set_on_device, want_train_set);
    CHECK_INT_EQ(plan.test_set_on_device, want_test_set);
    int rc = graph_init_params(&g, d.backend, &d.alloc, 1, &st);
    if (!rc) rc = train_model(&g, &config, &d, &train, &test, NULL, NULL, &st);
    if (rc) fprintf(stderr, "train_model: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    char what[96];
    snprintf(what, sizeof what, "%s train %d+%d, limit %zu", model, train_count, test_count,
             limit);
    compare(what, plan.total, d.alloc.stats.peak_in_use);
    memory_plan_free(&plan);
    graph_free(&g);
    dataset_free(&train);
    dataset_free(&test);
    alloc_destroy(&d.alloc);
}

// `trainer eval`: parameters (with gradients), activations, the test set; no optimizer.
static void plan_matches_evaluation(const char *model, int batch, int test_count) {
    Graph g;
    RunConfig config;
    if (load_graph(model, &g, &config)) return;
    Dataset test;
    make_dataset(&test, test_count, 3);
    Status st;
    status_clear(&st);
    Device d = {.backend = cpu_backend()};
    CHECK_INT_EQ(alloc_init(&d.alloc, d.backend, ALLOC_GROW, 0, &st), 0);
    MemoryPlanOptions options = {.batch = batch, .optimizer = NULL, .test_samples = test_count,
                                 .sample_bytes = 784};
    MemoryPlan plan;
    CHECK_INT_EQ(memory_plan(&g, d.backend, &options, &plan, &st), 0);
    CHECK_INT_EQ(plan.optimizer_state, 0);
    CHECK_INT_EQ(plan.batch, batch < test_count ? batch : test_count);
    EvalResult result;
    int rc = graph_init_params(&g, d.backend, &d.alloc, 1, &st);
    if (!rc) rc = evaluate_model(&g, &config, &d, &test, batch, &result, &st);
    CHECK_INT_EQ(rc, 0);
    char what[96];
    snprintf(what, sizeof what, "%s eval batch %d of %d", model, batch, test_count);
    compare(what, plan.total, d.alloc.stats.peak_in_use);
    memory_plan_free(&plan);
    graph_free(&g);
    dataset_free(&test);
    alloc_destroy(&d.alloc);
}

static size_t planned_total(const Graph *g, const RunConfig *config, int batch) {
    MemoryPlanOptions options = {.batch = batch, .optimizer = &config->optimizer};
    MemoryPlan plan;
    Status st;
    status_clear(&st);
    if (memory_plan(g, cpu_backend(), &options, &plan, &st)) return 0;
    size_t total = plan.total;
    memory_plan_free(&plan);
    return total;
}

// Allocating a training graph at `batch` under a limit of `budget`: 0 or out of memory.
static int allocate_under(const char *model, int batch, size_t budget) {
    Graph g;
    RunConfig config;
    if (load_graph(model, &g, &config)) return -1;
    Allocator a;
    Status st;
    status_clear(&st);
    const Backend *b = cpu_backend();
    int rc = alloc_init(&a, b, ALLOC_GROW, budget, &st);
    if (!rc) rc = graph_init_params(&g, b, &a, 1, &st);
    if (!rc) rc = graph_allocate(&g, b, &a, batch, NULL, &st);
    if (!rc) rc = optimizer_prepare(&g, &config.optimizer, b, &a, &st);
    graph_free(&g);
    alloc_destroy(&a);
    return rc;
}

static void largest_batch_fits_and_one_more_does_not(const char *model, size_t budget) {
    Graph g;
    RunConfig config;
    if (load_graph(model, &g, &config)) return;
    Status st;
    status_clear(&st);
    int batch = -1;
    CHECK_INT_EQ(memory_plan_largest_batch(&g, cpu_backend(), budget, &config.optimizer, &batch,
                                           &st), 0);
    fprintf(stderr, "%s: largest batch in %zu bytes: %d (plan %zu, at +1 %zu)\n", model, budget,
            batch, planned_total(&g, &config, batch), planned_total(&g, &config, batch + 1));
    CHECK(batch >= 1);
    CHECK(planned_total(&g, &config, batch) <= budget);
    CHECK(planned_total(&g, &config, batch + 1) > budget);
    graph_free(&g);
    // And the allocator agrees: the batch allocates under that limit, one more does not.
    CHECK_INT_EQ(allocate_under(model, batch, budget), 0);
    CHECK_INT_EQ(allocate_under(model, batch + 1, budget), STATUS_OUT_OF_MEMORY);
}

static void largest_batch_is_zero_when_parameters_do_not_fit(void) {
    Graph g;
    RunConfig config;
    if (load_graph("mlp.model", &g, &config)) return;
    Status st;
    status_clear(&st);
    int batch = -1;
    CHECK_INT_EQ(memory_plan_largest_batch(&g, cpu_backend(), 1 << 20, &config.optimizer,
                                           &batch, &st), 0);
    CHECK_INT_EQ(batch, 0);
    // Unbounded: the cap.
    CHECK_INT_EQ(memory_plan_largest_batch(&g, cpu_backend(), (size_t)1 << 50,
                                           &config.optimizer, &batch, &st), 0);
    CHECK_INT_EQ(batch, MEMORY_PLAN_MAX_BATCH);
    graph_free(&g);
}

// A kind that allocates must say how much (LayerKind.planned_bytes), or the plan would
// silently count nothing for it.
static void every_allocating_kind_plans_its_bytes(void) {
    for (int i = 0; layer_kind_word(i); i++) {
        const LayerKind *kind = layer_kind_find(layer_kind_word(i));
        if (kind && kind->allocate && !kind->planned_bytes) {
            fprintf(stderr, "layer kind '%s' allocates but has no planned_bytes\n", kind->name);
            test_failures++;
        }
    }
    for (int i = 0; loss_kind_names[i]; i++) {
        const LayerKind *kind = loss_kind_find(loss_kind_names[i]);
        if (kind && kind->allocate && !kind->planned_bytes) {
            fprintf(stderr, "loss '%s' allocates but has no planned_bytes\n", kind->name);
            test_failures++;
        }
    }
}

int main(void) {
    every_allocating_kind_plans_its_bytes();
    const char *models[] = {"mlp.model", "lenet.model", "cnn-bn.model"};
    const int batches[] = {1, 32, 128};
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 3; i++) plan_matches_a_training_step(models[m], batches[i]);
    plan_matches_a_training_step("resnet-mini.model", 8);
    plan_matches_a_training_step("cifar-resnet.model", 4);
    plan_matches_every_kind(1, DTYPE_F32);
    plan_matches_every_kind(33, DTYPE_F32);
    plan_matches_every_kind(33, DTYPE_BF16);
    plan_matches_every_kind(7, DTYPE_F16);

    // No limit: both sets on the device. A limit with room for the training set only, and
    // one with room for neither: the loop stages batches through the host instead. (The
    // training set is uploaded before the activations when it takes at most half of what
    // the limit leaves, so it must be large next to the activations to stay on the host.)
    plan_matches_the_training_loop("mlp.model", 64, 300, 100, 0, 1, 1);
    plan_matches_the_training_loop("lenet.model", 50, 120, 70, 0, 1, 1);
    {
        Graph g;
        RunConfig config;
        if (!load_graph("mlp.model", &g, &config)) {
            size_t graph = planned_total(&g, &config, 64);
            graph_free(&g);
            size_t train_bytes = 1000 * 785;
            plan_matches_the_training_loop("mlp.model", 64, 1000, 600,
                                           graph + 2 * train_bytes + 1024, 1, 0);
            plan_matches_the_training_loop("mlp.model", 64, 1000, 600, graph + 4096, 0, 0);
        }
    }
    plan_matches_evaluation("cnn-bn.model", 64, 100);
    plan_matches_evaluation("mlp.model", 256, 100);

    largest_batch_fits_and_one_more_does_not("mlp.model", (size_t)16 << 20);
    largest_batch_fits_and_one_more_does_not("lenet.model", (size_t)64 << 20);
    largest_batch_fits_and_one_more_does_not("cnn-bn.model", (size_t)64 << 20);
    largest_batch_is_zero_when_parameters_do_not_fit();
    return test_exit_code("test_memory_plan");
}
