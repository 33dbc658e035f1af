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

// Replicas sharing the CPU: summed in place on the device (auto: "device") or staged through
// host buffers ("mpi": "host"); both add in replica order and broadcast from any root.
static void collectives_sum_and_broadcast(CollectiveChoice choice, const char *name) {
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
    CHECK_INT_EQ(collective_open(devices, 3, choice, &coll, notice, sizeof notice, &st), 0);
    CHECK(strcmp(coll.name, name) == 0);
    CHECK(notice[0] == 0);
    CHECK_INT_EQ(coll.all_reduce_sum(&coll, buffers, 4, &st), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(a[i], 111.0 * (i + 1), 0);
        CHECK_NEAR(b[i], 111.0 * (i + 1), 0);
        CHECK_NEAR(c[i], 111.0 * (i + 1), 0);
    }
    b[0] = -1;
    CHECK_INT_EQ(coll.broadcast(&coll, buffers, 4, 1, &st), 0);
    CHECK_NEAR(a[0], -1, 0);
    CHECK_NEAR(c[0], -1, 0);
    CHECK_NEAR(c[1], 222, 0);
    collective_close(&coll);
    device_close(&d);
}

// How mpirun's ranks are found to share a GPU (core/collective.c, before NCCL refuses
// them): by host and PCI bus id, whatever each rank's ordinal for the card.
static void ranks_sharing_a_gpu_are_found(void) {
    RankPlace two_cards[3] = {{"node1", "0000:1a:00.0", "cuda:0"},
                              {"node1", "0000:1b:00.0", "cuda:1"},
                              {"node2", "0000:1a:00.0", "cuda:0"}};  // another host's card
    SharedGpu shared;
    int cpu_rank, gpu_rank;
    collective_find_shared_gpu(two_cards, 3, &shared, &cpu_rank, &gpu_rank);
    CHECK_INT_EQ(shared.found, 0);
    CHECK_INT_EQ(cpu_rank, -1);
    CHECK_INT_EQ(gpu_rank, 0);
    // CUDA_VISIBLE_DEVICES=1 on rank 2 calls node1's second card cuda:0 there.
    RankPlace one_card[4] = {{"node1", "", "cpu"},
                             {"node1", "0000:1a:00.0", "cuda:0"},
                             {"node1", "0000:1b:00.0", "cuda:1"},
                             {"node1", "0000:1b:00.0", "cuda:0"}};
    collective_find_shared_gpu(one_card, 4, &shared, &cpu_rank, &gpu_rank);
    CHECK_INT_EQ(shared.found, 1);
    CHECK_INT_EQ(shared.first, 2);
    CHECK_INT_EQ(shared.second, 3);
    CHECK_INT_EQ(cpu_rank, 0);
    CHECK_INT_EQ(gpu_rank, 1);
    char what[512];
    collective_describe_shared_gpu(&shared, what, sizeof what);
    CHECK(strcmp(what, "ranks 2 and 3 of 4 share the GPU at PCI 0000:1b:00.0 on node1 "
                       "(cuda:1 in rank 2, cuda:0 in rank 3)") == 0);
    Status st;
    status_clear(&st);
    status_fail(&st, STATUS_BAD_INPUT, "ncclCommInitRank failed: ncclInvalidUsage (5)");
    collective_explain_shared_gpu(&shared, &st);
    CHECK_INT_EQ(st.code, STATUS_RUNTIME_ERROR);
    CHECK(strncmp(st.message, "--collective nccl: ranks 2 and 3 of 4 share", 43) == 0);
    CHECK(strstr(st.message, "ncclInvalidUsage (5)") != NULL);
    CHECK(strstr(st.hint, "CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK") != NULL);
}

// A CPU device and nccl: refused, before anything is opened.
static void nccl_is_refused_on_the_cpu(void) {
    Status st;
    status_clear(&st);
    CollectiveChoice choice;
    CHECK_INT_EQ(collective_choice_parse("mpi", &choice, &st), 0);
    CHECK_INT_EQ(choice, COLLECTIVE_MPI);
    CHECK_INT_EQ(collective_choice_parse("NCCL", &choice, &st), STATUS_BAD_INPUT);
    Device d;
    char notice[256];
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    CHECK_INT_EQ(device_open(&options, &d, notice, sizeof notice, &st), 0);
    Device *devices[2] = {&d, &d};
    Collective coll;
    status_clear(&st);
    CHECK_INT_EQ(collective_open(devices, 2, COLLECTIVE_NCCL, &coll, notice, sizeof notice, &st),
                 STATUS_BAD_INPUT);
    CHECK(strstr(st.message, "--collective nccl sums over GPUs, but the device is cpu") != NULL);
    device_close(&d);
}

int main(void) {
    collectives_sum_and_broadcast(COLLECTIVE_AUTO, "device");
    collectives_sum_and_broadcast(COLLECTIVE_MPI, "host");
    ranks_sharing_a_gpu_are_found();
    nccl_is_refused_on_the_cpu();
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
