// --cuda-graph: training steps replayed from CUDA Graphs give the parameters plain launches
// give, bit for bit, from the same seed. Each case trains three times on cuda:0 (FP32): twice
// with plain launches and once with graphs, and compares every parameter and buffer
// (expect_same_parameters says how when the two plain runs differ):
// - an MLP with Adam, a cosine schedule with warmup (the rate changes every step) and
//   dropout (a new mask every step): what a replay must not freeze;
// - a LeNet-like CNN (conv2d, maxpool, dropout) with SGD + momentum and a step schedule;
// - the MLP with AdamW and --clip-norm: the graph ends after backward, clipping and the
//   update run plainly;
// - the MLP under a memory limit that holds half the batch: every step is two
//   micro-batches, captured together;
// - the MLP at batch 272: more indices than the 256 that travel in a replay's values
//   launch, so its full steps' are copied before it (kernels/cuda/cuda_graph.cu), and its
//   short step's 28 go in the launch.
// 300 samples at batch 64 make four full steps and a short one of 44 per epoch, so each
// run captures two shapes (the full step in epoch 1, the short one in epoch 2) and replays
// both in epoch 3.
//
// Why bit for bit: a replay runs the kernels plain launches run, with the same arguments
// (the factors a replay reads from the step block are computed on the host by the
// functions that compute a plain launch's arguments), in the same order on the one stream.
// Should cuBLAS choose another GEMM kernel inside a capture, the first difference printed
// below says where.
//
// Skipped (77) when no CUDA backend opens. Synthetic data, a few seconds.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_or_skip.h"
#include "base/rng.h"
#include "check.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/memory_plan.h"
#include "core/train.h"
#include "kernels/cuda/cuda_backend.h"
#include "models/model_file.h"

enum { SAMPLES = 300, SIDE = 8, CLASSES = 4 };

static const char *const mlp_text =
    "input shape=64\n"
    "dense units=48 act=relu\n"
    "dropout rate=0.3\n"
    "dense units=24 act=tanh\n"
    "dense units=4\n"
    "loss softmax_cross_entropy\n"
    "optimizer adam lr=0.01\n"
    "schedule cosine warmup=3 min_lr=0.001\n"
    "train batch=64 epochs=3 seed=5\n";

static const char *const lenet_text =
    "input shape=1x8x8\n"
    "conv2d filters=6 kernel=3 pad=same act=relu\n"
    "maxpool size=2\n"
    "conv2d filters=8 kernel=3 pad=same act=relu\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense units=32 act=relu\n"
    "dropout rate=0.5\n"
    "dense units=4\n"
    "loss softmax_cross_entropy\n"
    "optimizer sgd lr=0.05 momentum=0.9\n"
    "schedule step every=1 gamma=0.5\n"
    "train batch=64 epochs=3 seed=9\n";

static const char *const large_batch_text =
    "input shape=64\n"
    "dense units=48 act=relu\n"
    "dropout rate=0.3\n"
    "dense units=4\n"
    "loss softmax_cross_entropy\n"
    "optimizer adam lr=0.01\n"
    "train batch=272 epochs=3 seed=7\n";

static const char *const clipped_text =
    "input shape=64\n"
    "dense units=48 act=relu\n"
    "dropout rate=0.3\n"
    "dense units=4\n"
    "loss softmax_cross_entropy\n"
    "optimizer adamw lr=0.01 weight_decay=0.01 clip_norm=0.5\n"
    "train batch=64 epochs=3 seed=3\n";

typedef struct Trained {
    ModelFile file;
    Graph graph;
    RunConfig config;
    Device device;
    int built, opened;
    char notices[4096];
} Trained;

static void report_status(const char *what, const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s: %s", what, text);
}

static void record_notice(void *user, const char *line) {
    Trained *t = user;
    size_t used = strlen(t->notices);
    snprintf(t->notices + used, sizeof t->notices - used, "%s\n", line);
}

static Dataset synthetic_dataset(void) {
    Dataset ds = {.count = SAMPLES, .channels = 1, .height = SIDE, .width = SIDE,
                  .label_max = CLASSES - 1};
    snprintf(ds.source, sizeof ds.source, "synthetic");
    ds.images = malloc((size_t)SAMPLES * SIDE * SIDE);
    ds.labels = malloc(SAMPLES);
    Rng rng;
    rng_seed(&rng, 21);
    for (int i = 0; i < SAMPLES; i++) {
        int label = (int)rng_below(&rng, CLASSES);
        ds.labels[i] = (uint8_t)label;
        for (int p = 0; p < SIDE * SIDE; p++)
            ds.images[i * SIDE * SIDE + p] =
                (uint8_t)((p % CLASSES == label ? 160 : 60) + (int)rng_below(&rng, 80));
    }
    return ds;
}

static void free_trained(Trained *t) {
    if (t->built) graph_free(&t->graph);
    if (t->opened) device_close(&t->device);
    model_file_free(&t->file);
}

static int train(const char *text, CudaGraphMode mode, size_t limit, const Dataset *ds,
                 Trained *t, Status *st) {
    memset(t, 0, sizeof *t);
    TRY(model_file_parse_text("graph_step.model", text, &t->file, st));
    TRY(graph_build(&t->file, &t->graph, &t->config, st));
    t->built = 1;
    t->config.cuda_graph = mode;
    DeviceOptions options = {.spec = "cuda:0", .mode = ALLOC_GROW, .no_tf32 = 1};
    char notice[256];
    TRY(device_open(&options, &t->device, notice, sizeof notice, st));
    t->opened = 1;
    t->device.alloc.limit = limit;
    TRY(graph_check_dataset(&t->graph, ds, "synthetic", st));
    TRY(graph_init_params(&t->graph, t->device.backend, &t->device.alloc,
                          (uint64_t)t->config.train.seed, st));
    TrainHooks hooks = {.user = t, .on_notice = record_notice};
    return train_model(&t->graph, &t->config, &t->device, ds, NULL, &hooks, NULL, st);
}

// How two runs' parameters and buffers differ: *bitwise_equal, the largest relative
// difference (against max(|a|, 1e-3)), and the first differing value, named, in `first`.
// -1 when they cannot be read.
static int compare_parameters(const Trained *x, const Trained *y, int *bitwise_equal,
                              double *worst, char *first, size_t first_size) {
    const Graph *g = &x->graph;
    *bitwise_equal = 1;
    *worst = 0.0;
    first[0] = '\0';
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            const Param *p = &g->layers[i]->params[k];
            const Param *q = &y->graph.layers[i]->params[k];
            size_t n = tensor_numel(&p->value);
            float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
            Status st;
            status_clear(&st);
            const Backend *xb = x->device.backend, *yb = y->device.backend;
            if (!a || !b || xb->copy_to_host(xb, a, p->value.data, n * sizeof *a, &st) ||
                yb->copy_to_host(yb, b, q->value.data, n * sizeof *b, &st)) {
                report_status("reading parameters", &st);
                free(a);
                free(b);
                return -1;
            }
            for (size_t j = 0; j < n; j++) {
                if (memcmp(&a[j], &b[j], sizeof *a) == 0) continue;
                if (*bitwise_equal)
                    snprintf(first, first_size, "%s[%zu] %.9g vs %.9g", p->name, j, a[j], b[j]);
                *bitwise_equal = 0;
                double scale = fabs(a[j]) > 1e-3 ? fabs(a[j]) : 1e-3;
                double d = fabs((double)a[j] - (double)b[j]) / scale;
                if (!(d <= *worst)) *worst = d;  // NaN counts as the worst
            }
            free(a);
            free(b);
        }
    return 0;
}

// Replays against plain launches. Bit for bit when the device's plain launches are
// themselves reproducible (two plain runs equal); where they are not (cuDNN may choose a
// backward-filter algorithm that sums with atomics, whose order varies from run to run),
// no replay can be held to bits, and the replayed run must lie as close to the first plain
// run as the second plain run does, within a factor of 4: a frozen step value or a wrong
// index moves parameters by orders of magnitude more.
static void expect_same_parameters(const char *name, const Trained *plain,
                                   const Trained *again, const Trained *graphed) {
    int plain_equal, graph_equal;
    double plain_worst, graph_worst;
    char plain_first[256], graph_first[256];
    if (compare_parameters(plain, again, &plain_equal, &plain_worst, plain_first,
                           sizeof plain_first) ||
        compare_parameters(plain, graphed, &graph_equal, &graph_worst, graph_first,
                           sizeof graph_first)) {
        test_failures++;
        return;
    }
    if (plain_equal) {
        if (!graph_equal) {
            fprintf(stderr, "%s: graph replays differ from plain launches, which repeat bit "
                    "for bit: first %s, largest relative difference %.3g\n", name,
                    graph_first, graph_worst);
            test_failures++;
        }
        return;
    }
    printf("  %s: two plain runs differ (first %s, largest relative %.3g): the device's "
           "plain launches are not bit-reproducible here, so replays are held to 4x that\n",
           name, plain_first, plain_worst);
    if (!(graph_worst <= 4.0 * plain_worst)) {
        fprintf(stderr, "%s: graph replays differ from plain launches by %.3g (first %s), "
                "more than 4x the %.3g between two plain runs\n", name, graph_worst,
                graph_first, plain_worst);
        test_failures++;
    }
}

static void graphs_match_plain(const char *name, const char *text, size_t limit,
                               const char *expect_notice, const Dataset *ds) {
    Trained plain, again, graphed;
    memset(&plain, 0, sizeof plain);
    memset(&again, 0, sizeof again);
    memset(&graphed, 0, sizeof graphed);
    Status st;
    status_clear(&st);
    int rc = train(text, CUDA_GRAPH_OFF, limit, ds, &plain, &st);
    if (!rc) rc = train(text, CUDA_GRAPH_OFF, limit, ds, &again, &st);
    if (!rc) rc = train(text, CUDA_GRAPH_ON, limit, ds, &graphed, &st);
    if (rc) {
        report_status(name, &st);
        test_failures++;
    } else {
        printf("  %s: notices with graphs:\n%s", name, graphed.notices);
        CHECK_CONTAINS(graphed.notices, "CUDA Graph: the training step is captured");
        CHECK(strstr(graphed.notices, "failed") == NULL);
        if (expect_notice) CHECK_CONTAINS(graphed.notices, expect_notice);
        expect_same_parameters(name, &plain, &again, &graphed);
    }
    free_trained(&plain);
    free_trained(&again);
    free_trained(&graphed);
}

// A limit between the plan for half the batch and the plan for all of it: every step then
// runs as two micro-batches. 0 when the plan cannot be made.
static size_t half_batch_limit(const char *text, const Dataset *ds) {
    ModelFile file;
    Graph g;
    RunConfig config;
    Status st;
    status_clear(&st);
    memset(&g, 0, sizeof g);
    size_t limit = 0;
    if (model_file_parse_text("graph_step.model", text, &file, &st)) {
        report_status("planning the micro-batch case", &st);
        return 0;
    }
    // The CPU backend plans what the CUDA one allocates for these layers (no convolution).
    const Backend *b = cpu_backend();
    MemoryPlanOptions o = {.optimizer = &config.optimizer, .train_samples = ds->count,
                           .sample_bytes = (size_t)SIDE * SIDE};
    MemoryPlan whole, half;
    int rc = graph_build(&file, &g, &config, &st), built = rc == 0;
    if (!rc) {
        o.batch = config.train.batch;
        rc = memory_plan(&g, b, &o, &whole, &st);
    }
    if (!rc) {
        o.batch = config.train.batch / 2;
        rc = memory_plan(&g, b, &o, &half, &st);
        if (!rc) {
            limit = half.total + (whole.total - half.total) / 4;
            memory_plan_free(&half);
        }
        memory_plan_free(&whole);
    }
    if (rc) report_status("planning the micro-batch case", &st);
    if (built) graph_free(&g);
    model_file_free(&file);
    return limit;
}

int main(void) {
    int probe = cuda_probe_or_skip();
    if (probe) return probe;

    Dataset ds = synthetic_dataset();
    graphs_match_plain("mlp adam cosine dropout", mlp_text, 0, NULL, &ds);
    graphs_match_plain("lenet sgd step dropout", lenet_text, 0, NULL, &ds);
    graphs_match_plain("mlp adamw clip-norm", clipped_text, 0, NULL, &ds);
    graphs_match_plain("mlp at batch 272", large_batch_text, 0, NULL, &ds);
    size_t limit = half_batch_limit(mlp_text, &ds);
    if (limit) graphs_match_plain("mlp in micro-batches", mlp_text, limit, "micro-batches", &ds);
    else test_failures++;
    dataset_free(&ds);
    return test_exit_code("test_cuda_graph_step");
}
