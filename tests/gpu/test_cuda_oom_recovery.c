// Out-of-memory recovery on the GPU (issue 6): with a memory limit under what the
// configured batch needs on cuda:0, training splits the batch into micro-batches, says so
// once, and ends with the parameters of an unlimited run on the same GPU (relative error
// <= 1e-5, FP32 without TF32; cuDNN's algorithm choice is cached per shape, so the halved
// batch may take other algorithms: that and summation order are the only differences).
// Several replicas need several GPUs; their logic is tested on the CPU
// (tests/unit/test_replicas.c).
//
// Skipped (77) when cuda:0 does not open (no driver, no GPU, built without CUDA).
#include "train_harness.h"

int main(void) {
    Dataset ds = synthetic_dataset();
    Status st;
    status_clear(&st);
    Run reference;
    int rc = train_run_on("cuda:0", &reference, 1, 0, &ds, &st);
    if (rc == STATUS_NO_DEVICE) {
        printf("SKIP: no usable GPU: %s\n", st.message);
        free_run(&reference);
        dataset_free(&ds);
        return 77;
    }
    if (rc) {
        report_status("unlimited run on cuda:0", &st);
        test_failures++;
    }
    size_t peak = reference.device.alloc.stats.peak_in_use;
    int split_seen = 0;
    for (int percent = 95; !rc && percent >= 40 && !split_seen; percent -= 5) {
        Run run;
        size_t limit = peak * (size_t)percent / 100;
        status_clear(&st);
        int run_rc = train_run_on("cuda:0", &run, 1, limit, &ds, &st);
        if (run_rc) {
            CHECK_INT_EQ(run_rc, STATUS_OUT_OF_MEMORY);
        } else if (run.notices) {
            split_seen = 1;
            printf("limit %zu of peak %zu: %s\n", limit, peak, run.last_notice);
            CHECK_INT_EQ(run.notices, 1);
            CHECK_CONTAINS(run.last_notice, "on cuda:0");
            CHECK_CONTAINS(run.last_notice, "micro-batches of 20");
            double d = parameter_difference(&reference, 0, &run, 0);
            printf("largest relative parameter difference: %.3g\n", d);
            if (!(d <= 1e-5)) {
                fprintf(stderr, "micro-batched GPU run differs from the unlimited one by %.3g\n", d);
                test_failures++;
            }
            CHECK(run.device.alloc.stats.peak_in_use <= limit);
        }
        free_run(&run);
    }
    if (!rc && !split_seen) {
        fprintf(stderr, "no limit between 40%% and 95%% of the peak (%zu) made training split\n",
                peak);
        test_failures++;
    }
    free_run(&reference);
    dataset_free(&ds);
    return test_exit_code("test_cuda_oom_recovery");
}
