// Data parallelism and micro-batching change how a step is cut up, never what it computes:
// for a model without dropout or batchnorm, training with 2, 3 or 4 replicas, or with the
// batch split into micro-batches after running out of memory, must end with the same
// parameters as one device running whole batches (relative error <= 1e-5).
#include "core/collective.h"
#include "train_harness.h"

static int train_run(Run *run, int replicas, size_t memory_limit, const Dataset *ds, Status *st) {
    return train_run_on("cpu", run, replicas, memory_limit, ds, st);
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
                double d = parameter_difference(reference, 0, &run, r);
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
            double d = parameter_difference(reference, 0, &run, 0);
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
    if (!rc) CHECK(parameter_difference(&single, 0, &triple, 2) <= 1e-5);
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
    CHECK_INT_EQ(collective_open(devices, 3, COLLECTIVE_AUTO, &coll, NULL, 0, &st), 0);
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
