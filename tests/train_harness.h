// Shared by tests that train one small model several ways and compare the parameters:
// a synthetic 3-class dataset, a conv + dense model without dropout or batchnorm (so
// splitting a batch changes only summation order; tests/unit/test_dropout_split.c shows
// dropout draws the same masks split or whole), runs of N replicas on one device
// under a memory limit, and the largest relative parameter difference between runs.
#ifndef TRAINER_TESTS_TRAIN_HARNESS_H
#define TRAINER_TESTS_TRAIN_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/train.h"
#include "models/model_file.h"

enum { SIDE = 6, SAMPLES = 150, MAX_REPLICAS = 4 };

static const char *const model_text =
    "input shape=1x6x6\n"
    "conv2d filters=4 kernel=3 pad=same act=relu\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense units=12 act=tanh\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n"
    "optimizer adam lr=0.01\n"
    "train batch=40 epochs=2 seed=7\n";

static inline void report_status(const char *what, const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s: %s", what, text);
}

static inline Dataset synthetic_dataset(void) {
    Dataset ds = {.count = SAMPLES, .channels = 1, .height = SIDE, .width = SIDE, .label_max = 2};
    snprintf(ds.source, sizeof ds.source, "synthetic");
    ds.images = malloc((size_t)SAMPLES * SIDE * SIDE);
    ds.labels = malloc(SAMPLES);
    Rng rng;
    rng_seed(&rng, 11);
    for (int i = 0; i < SAMPLES; i++) {
        int label = (int)rng_below(&rng, 3);
        ds.labels[i] = (uint8_t)label;
        for (int p = 0; p < SIDE * SIDE; p++)
            ds.images[i * SIDE * SIDE + p] =
                (uint8_t)((p % 3 == label ? 170 : 70) + (int)rng_below(&rng, 60));
    }
    return ds;
}

typedef struct Run {
    ModelFile file;
    Graph graphs[MAX_REPLICAS];
    RunConfig config;         // the model file's, shared by the replicas
    int built;
    Device device;
    int notices;
    char last_notice[512];
    char notices_text[2048];  // every notice, one per line
} Run;

static inline void record_notice(void *user, const char *line) {
    Run *run = user;
    run->notices++;
    snprintf(run->last_notice, sizeof run->last_notice, "%s", line);
    size_t used = strlen(run->notices_text);
    snprintf(run->notices_text + used, sizeof run->notices_text - used, "%s\n", line);
}

// Trains `replicas` replicas sharing one device under `memory_limit` bytes (0: none), with
// `hooks` (NULL: each notice recorded in `run`), on `backend` instead of the device's own
// when not NULL (a test's variant of the CPU backend; it must allocate as the device's).
static inline int train_run_on_backend(const char *device, const Backend *backend, Run *run,
                                       int replicas, size_t memory_limit, const Dataset *ds,
                                       const TrainHooks *hooks, Status *st) {
    memset(run, 0, sizeof *run);
    TRY(model_file_parse_text("replicas.model", model_text, &run->file, st));
    // FP32 throughout (no TF32), so that only summation order separates two GPU runs.
    DeviceOptions options = {.spec = device, .mode = ALLOC_GROW, .no_tf32 = 1};
    char notice[256];
    TRY(device_open(&options, &run->device, notice, sizeof notice, st));
    if (backend) run->device.backend = run->device.alloc.backend = backend;
    run->device.alloc.limit = memory_limit;
    Graph *graphs[MAX_REPLICAS];
    Device *devices[MAX_REPLICAS];
    for (int r = 0; r < replicas; r++) {
        TRY(graph_build(&run->file, &run->graphs[r], &run->config, st));
        run->built++;
        graphs[r] = &run->graphs[r];
        devices[r] = &run->device;
        // Replicas other than 0 start from another seed: the broadcast must fix that.
        TRY(graph_init_params(graphs[r], run->device.backend, &run->device.alloc,
                              (uint64_t)(run->config.train.seed + r), st));
    }
    TrainHooks recording = {.user = run, .on_notice = record_notice};
    return train_replicas(graphs, devices, replicas, &run->config, ds, NULL,
                          hooks ? hooks : &recording, NULL, st);
}

static inline int train_run_hooked(const char *device, Run *run, int replicas,
                                   size_t memory_limit, const Dataset *ds,
                                   const TrainHooks *hooks, Status *st) {
    return train_run_on_backend(device, NULL, run, replicas, memory_limit, ds, hooks, st);
}

static inline int train_run_on(const char *device, Run *run, int replicas, size_t memory_limit,
                               const Dataset *ds, Status *st) {
    return train_run_hooked(device, run, replicas, memory_limit, ds, NULL, st);
}

static inline void free_run(Run *run) {
    for (int r = 0; r < run->built; r++) graph_free(&run->graphs[r]);
    if (run->device.backend) device_close(&run->device);
    model_file_free(&run->file);
}

// A copy in host memory of parameter k of layer i of replica r (device memory may not be
// host-addressable: reading a GPU's parameters through the pointer is a segfault).
static inline float *parameter_on_host(const Run *run, int r, int i, int k) {
    const Tensor *t = &run->graphs[r].layers[i]->params[k].value;
    float *host = malloc(t->bytes ? t->bytes : 1);
    Status st;
    status_clear(&st);
    const Backend *b = run->device.backend;
    if (host && b->copy_to_host(b, host, t->data, t->bytes, &st)) {
        report_status("copying a parameter to the host", &st);
        free(host);
        return NULL;
    }
    return host;
}

// Largest relative difference between the parameters of replica ra of run a and replica
// rb of run b (same model); infinity when they cannot be read.
static inline double parameter_difference(const Run *a, int ra, const Run *b, int rb) {
    double worst = 0.0;
    const Graph *g = &a->graphs[ra];
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            float *u = parameter_on_host(a, ra, i, k), *v = parameter_on_host(b, rb, i, k);
            size_t n = tensor_numel(&g->layers[i]->params[k].value);
            for (size_t j = 0; u && v && j < n; j++) {
                double scale = fabs(u[j]) > 1e-3 ? fabs(u[j]) : 1e-3;
                double d = fabs((double)u[j] - (double)v[j]) / scale;
                if (d > worst) worst = d;
            }
            if (!u || !v) worst = INFINITY;
            free(u);
            free(v);
        }
    return worst;
}

#endif
