// Data parallelism and micro-batching change how a step is cut up, never what it computes:
// for a model without dropout or batchnorm, training with 2 or 3 replicas, or with the
// batch split into micro-batches after running out of memory, must end with the same
// parameters as one device running whole batches (relative error <= 1e-5).
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/collective.h"
#include "core/train.h"
#include "models/model_file.h"

enum { SIDE = 6, SAMPLES = 150, MAX_REPLICAS = 3 };

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

static void report_status(const char *what, const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s: %s", what, text);
}

static Dataset synthetic_dataset(void) {
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
    int built;
    Device device;
    int notices;
    char last_notice[512];
} Run;

static void record_notice(void *user, const char *line) {
    Run *run = user;
    run->notices++;
    snprintf(run->last_notice, sizeof run->last_notice, "%s", line);
}

// Trains `replicas` replicas sharing one CPU device under `memory_limit` bytes (0: none).
static int train_run(Run *run, int replicas, size_t memory_limit, const Dataset *ds, Status *st) {
    memset(run, 0, sizeof *run);
    TRY(model_file_parse_text("replicas.model", model_text, &run->file, st));
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    char notice[256];
    TRY(device_open(&options, &run->device, notice, sizeof notice, st));
    run->device.alloc.limit = memory_limit;
    Graph *graphs[MAX_REPLICAS];
    Device *devices[MAX_REPLICAS];
    for (int r = 0; r < replicas; r++) {
        TRY(graph_build(&run->file, &run->graphs[r], st));
        run->built++;
        graphs[r] = &run->graphs[r];
        devices[r] = &run->device;
        // Replicas other than 0 start from another seed: the broadcast must fix that.
        TRY(graph_init_params(graphs[r], run->device.backend, &run->device.alloc,
                              (uint64_t)(run->graphs[r].train.seed + r), st));
    }
    TrainHooks hooks = {.user = run, .on_notice = record_notice};
    return train_replicas(graphs, devices, replicas, ds, NULL, &hooks, NULL, st);
}

static void free_run(Run *run) {
    for (int r = 0; r < run->built; r++) graph_free(&run->graphs[r]);
    if (run->device.backend) device_close(&run->device);
    model_file_free(&run->file);
}

// Largest relative difference between two graphs' parameters (same model).
static double parameter_difference(const Graph *a, const Graph *b) {
    double worst = 0.0;
    for (int i = 0; i < a->count; i++)
        for (int k = 0; k < a->layers[i]->param_count; k++) {
            const Tensor *x = &a->layers[i]->params[k].value, *y = &b->layers[i]->params[k].value;
            const float *u = tensor_f32((Tensor *)x), *v = tensor_f32((Tensor *)y);
            for (size_t j = 0; j < tensor_numel(x); j++) {
                double scale = fabs(u[j]) > 1e-3 ? fabs(u[j]) : 1e-3;
                double d = fabs((double)u[j] - (double)v[j]) / scale;
                if (d > worst) worst = d;
            }
        }
    return worst;
}

static void replicas_learn_what_one_device_learns(const Dataset *ds, const Run *reference) {
    for (int replicas = 2; replicas <= MAX_REPLICAS; replicas++) {
        Status st;
        status_clear(&st);
        Run run;
        int rc = train_run(&run, replicas, 0, ds, &st);
        if (rc) report_status("train with replicas", &st);
        CHECK_INT_EQ(rc, 0);
        if (!rc) {
            for (int r = 0; r < replicas; r++) {
                double d = parameter_difference(&reference->graphs[0], &run.graphs[r]);
                if (!(d <= 1e-5)) {
                    fprintf(stderr, "%d replicas: replica %d differs from one device by %.3g\n",
                            replicas, r, d);
                    test_failures++;
                }
            }
            CHECK_INT_EQ(run.graphs[0].optimizer_steps, reference->graphs[0].optimizer_steps);
        }
        free_run(&run);
    }
}

// With a limit under the whole batch's needs, training must split, say so once, and land
// on the same parameters.
static void out_of_memory_splits_the_batch(const Dataset *ds, const Run *reference) {
    size_t peak = reference->device.alloc.stats.peak_in_use;
    int split_seen = 0;
    for (int percent = 95; percent >= 40 && !split_seen; percent -= 5) {
        Status st;
        status_clear(&st);
        Run run;
        size_t limit = peak * (size_t)percent / 100;
        int rc = train_run(&run, 1, limit, ds, &st);
        if (rc) {
            // Below what the parameters need the error must be the clear out-of-memory one.
            CHECK_INT_EQ(rc, STATUS_OUT_OF_MEMORY);
            CHECK(st.hint[0] != '\0');
        } else if (run.notices) {
            split_seen = 1;
            CHECK_INT_EQ(run.notices, 1);
            CHECK_CONTAINS(run.last_notice, "out of memory at batch 40 on cpu");
            CHECK_CONTAINS(run.last_notice, "micro-batches of 20");
            CHECK_CONTAINS(run.last_notice, "reserved");
            double d = parameter_difference(&reference->graphs[0], &run.graphs[0]);
            if (!(d <= 1e-5)) {
                fprintf(stderr, "micro-batched run (limit %zu) differs by %.3g\n", limit, d);
                test_failures++;
            }
            CHECK(run.device.alloc.stats.peak_in_use <= limit);
        }
        free_run(&run);
    }
    if (!split_seen) {
        fprintf(stderr, "no memory limit between 40%% and 95%% of the peak made training split\n");
        test_failures++;
    }
}

// Fewer samples than replicas in a step: the idle replica adds a zero gradient.
static void a_step_smaller_than_the_replica_count_works(void) {
    Dataset ds = synthetic_dataset();
    ds.count = 41;  // batch 40: the second step has one sample for three replicas
    Status st;
    status_clear(&st);
    Run single, triple;
    int rc = train_run(&single, 1, 0, &ds, &st);
    if (!rc) rc = train_run(&triple, 3, 0, &ds, &st);
    else memset(&triple, 0, sizeof triple);
    if (rc) report_status("short last step", &st);
    CHECK_INT_EQ(rc, 0);
    if (!rc) CHECK(parameter_difference(&single.graphs[0], &triple.graphs[2]) <= 1e-5);
    free_run(&single);
    free_run(&triple);
    ds.count = SAMPLES;
    dataset_free(&ds);
}

static void host_collective_sums_and_broadcasts(void) {
    Status st;
    status_clear(&st);
    Device d;
    char notice[256];
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    CHECK_INT_EQ(device_open(&options, &d, notice, sizeof notice, &st), 0);
    Device *devices[3] = {&d, &d, &d};
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {100, 200, 300, 400};
    float *buffers[3] = {a, b, c};
    Collective coll;
    CHECK_INT_EQ(collective_open(devices, 3, &coll, &st), 0);
    CHECK(strcmp(coll.name, "host") == 0);
    CHECK_INT_EQ(coll.all_reduce_sum(&coll, buffers, 4, &st), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(a[i], 111.0 * (i + 1), 0);
        CHECK_NEAR(c[i], 111.0 * (i + 1), 0);
    }
    b[0] = -1;
    CHECK_INT_EQ(coll.broadcast(&coll, buffers, 4, 1, &st), 0);
    CHECK_NEAR(a[0], -1, 0);
    CHECK_NEAR(c[0], -1, 0);
    collective_close(&coll);
    device_close(&d);
}

int main(void) {
    host_collective_sums_and_broadcasts();
    Dataset ds = synthetic_dataset();
    Status st;
    status_clear(&st);
    Run reference;
    int rc = train_run(&reference, 1, 0, &ds, &st);
    if (rc) {
        report_status("reference run", &st);
        test_failures++;
    } else {
        CHECK_INT_EQ(reference.notices, 0);
        replicas_learn_what_one_device_learns(&ds, &reference);
        out_of_memory_splits_the_batch(&ds, &reference);
    }
    free_run(&reference);
    dataset_free(&ds);
    a_step_smaller_than_the_replica_count_works();
    return test_exit_code("test_replicas");
}
