// A label outside the model's classes that reaches the training loop (the host check at
// load, graph_check_dataset, skipped here on purpose) is caught on the way into the batch,
// on the device (gather_samples) or on the host (staged batches), and stops training with
// the sample, its label and the class count: never a crash or an out-of-bounds read in a
// loss kernel (PyTorch's "device-side assert triggered").
#include "train_harness.h"

// Returns 1 when the batches were staged through the host.
static int expect_bad_label_error(size_t memory_limit) {
    // 3000 samples (108 KiB): large beside the model (~30 KiB with Adam's state), so a
    // limit can leave room for the model but not for the dataset.
    Dataset small = synthetic_dataset(), ds = small;
    ds.count = 3000;
    ds.images = malloc((size_t)ds.count * SIDE * SIDE);
    ds.labels = malloc((size_t)ds.count);
    for (int i = 0; i < ds.count; i++) {
        memcpy(ds.images + (size_t)i * SIDE * SIDE, small.images + (size_t)(i % SAMPLES) * SIDE * SIDE,
               SIDE * SIDE);
        ds.labels[i] = small.labels[i % SAMPLES];
    }
    dataset_free(&small);
    ds.labels[97] = 5;   // the model has 3 classes
    ds.labels[120] = 4;
    Status st;
    status_clear(&st);
    Run run;
    int rc = train_run_on("cpu", &run, 1, memory_limit, &ds, &st);
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "sample 97 of synthetic has label 5");
    CHECK_CONTAINS(st.message, "3 classes (labels 0 to 2)");
    CHECK_CONTAINS(st.hint, "units=6");
    int staged = strstr(run.notices_text, "staged through the host") != NULL;
    if (rc != STATUS_BAD_INPUT)
        fprintf(stderr, "(limit %zu, %s)\n", memory_limit, staged ? "staged" : "on the device");
    free_run(&run);
    dataset_free(&ds);
    return staged;
}

int main(void) {
    CHECK(!expect_bad_label_error(0));  // the dataset on the device: gather_samples checks
    // Tighter limits until the dataset no longer fits beside the model and batches are
    // staged through the host, where the loop checks them.
    int staged = 0;
    for (size_t kb = 256; kb >= 32 && !staged; kb -= 16) staged = expect_bad_label_error(kb * 1024);
    CHECK(staged);
    return test_exit_code("test_bad_labels");
}
