// The pinned host buffers batches are staged through (Backend.pinned_alloc, pinned_free,
// pinned_fence, pinned_wait), CUDA against the CPU, and host-staged training on cuda:0:
// - a copy out of a pinned buffer queued behind a long kernel is finished once
//   pinned_wait returns: overwriting the buffer then leaves the device's copy as it was
//   (on CUDA the copy is asynchronous, so without the fence the overwrite would race it);
//   on both backends the device ends up with the first contents; a buffer never fenced
//   waits for nothing;
// - training with the training set staged through pinned buffers ends with the
//   parameters of training with the set on the device (the host converts bytes to floats
//   exactly as gather_samples does; only the algorithms cuDNN picks could differ, and
//   under TF32 two algorithms round differently: the tolerance is 1e-4 (an H200 gave
//   1.07e-5 staged and 1.91e-5 staged and split; a wrong batch is off by far more), and
//   the difference is printed); staged and split after running out of memory, the same
//   within summation order, with one out-of-memory.
//
// Skipped (77) when cuda:0 does not open (no driver, no GPU, built without CUDA).
#include "kernels/cuda/cuda_backend.h"
#include "unit/staged_runs.h"

// Parameters after a staged run against a resident one (see above).
#define STAGED_TOLERANCE 1e-4

// 64 MiB: a copy long enough (some 3 ms at 25 GB/s) that an early overwrite would land.
#define COPY_BYTES ((size_t)64 << 20)
// Floats the kernel in front of the copy writes, keeping a GPU's stream busy for a while
// (1 GiB: some 0.4 ms on an H100); the CPU's copies are synchronous anyway.
static size_t busy_floats(const Backend *b) {
    return b == cpu_backend() ? (size_t)1 << 20 : (size_t)256 << 20;
}

static int fenced_copy_keeps_what_was_copied(const Backend *b) {
    Status st;
    status_clear(&st);
    void *pinned = NULL, *device = NULL;
    float *busy = NULL;
    unsigned char *back = malloc(COPY_BYTES);
    int rc = back ? 0 : status_fail(&st, STATUS_RUNTIME_ERROR, "out of host memory");
    if (!rc) rc = b->pinned_alloc(b, COPY_BYTES, &pinned, &st);
    if (!rc) rc = b->pinned_wait(b, pinned, &st);  // never fenced: nothing to wait for
    if (!rc) rc = b->raw_alloc(b, COPY_BYTES, &device, &st);
    if (!rc) rc = b->raw_alloc(b, busy_floats(b) * sizeof(float), (void **)&busy, &st);
    if (!rc) {
        memset(pinned, 0x5A, COPY_BYTES);
        rc = b->fill(b, busy, 1.0f, busy_floats(b), &st);
    }
    if (!rc) rc = b->copy_to_device(b, device, pinned, COPY_BYTES, &st);
    if (!rc) rc = b->pinned_fence(b, pinned, &st);
    if (!rc) rc = b->pinned_wait(b, pinned, &st);
    if (!rc) {
        memset(pinned, 0xA5, COPY_BYTES);
        rc = b->copy_to_host(b, back, device, COPY_BYTES, &st);
    }
    size_t wrong = 0;
    for (size_t i = 0; !rc && i < COPY_BYTES; i++) wrong += back[i] != 0x5A;
    if (rc) report_status(b->name, &st);
    else if (wrong) fprintf(stderr, "%s: %zu of %zu bytes copied after the overwrite\n", b->name,
                            wrong, COPY_BYTES);
    printf("%s: fenced copy of %zu MiB: %s\n", b->name, COPY_BYTES >> 20,
           rc ? "failed" : wrong ? "overwritten" : "intact");
    if (busy) b->raw_free(b, busy);
    if (device) b->raw_free(b, device);
    if (pinned) b->pinned_free(b, pinned);
    free(back);
    return rc || wrong ? 1 : 0;
}

static void staged_training_on_the_gpu(void) {
    Dataset ds = repeated_dataset(6000);
    Status st;
    status_clear(&st);
    Run resident, staged, split;
    memset(&staged, 0, sizeof staged);
    memset(&split, 0, sizeof split);
    int rc = train_run_on("cuda:0", &resident, 1, 0, &ds, &st);
    size_t limit = resident.device.alloc.stats.peak_in_use - dataset_device_bytes(&ds, 40);
    if (!rc) rc = train_run_on("cuda:0", &staged, 1, limit, &ds, &st);
    if (!rc) rc = train_run_on("cuda:0", &split, 1, limit * 85 / 100, &ds, &st);
    if (rc) report_status("training on cuda:0", &st);
    CHECK_INT_EQ(rc, 0);
    if (!rc) {
        printf("staged (limit %zu): %s", limit, staged.notices_text);
        printf("staged and split (limit %zu): %s", limit * 85 / 100, split.notices_text);
        CHECK(was_staged(&staged));
        CHECK_INT_EQ(staged.notices, 1);
        double d = parameter_difference(&resident, 0, &staged, 0);
        printf("staged vs on the device: largest relative difference %.3g%s\n", d,
               parameters_identical(&resident, 0, &staged, 0) ? " (bit for bit)" : "");
        CHECK(d <= STAGED_TOLERANCE);
        CHECK(was_staged(&split));
        CHECK_CONTAINS(split.last_notice, "micro-batches of");
        CHECK_INT_EQ(split.device.alloc.stats.out_of_memory, 1);
        d = parameter_difference(&resident, 0, &split, 0);
        printf("staged and split vs whole on the device: %.3g\n", d);
        CHECK(d <= STAGED_TOLERANCE);
    }
    free_run(&resident);
    free_run(&staged);
    free_run(&split);
    dataset_free(&ds);
}

int main(void) {
    Status st;
    status_clear(&st);
    const Backend *gpu = NULL;
    CudaBackendOptions options = {.ordinal = 0, .allow_tf32 = 0};
    int rc = cuda_backend_open(&options, &gpu, &st);
    if (rc == STATUS_NO_DEVICE) {
        printf("skipped: no usable CUDA backend: %s\n", st.message);
        return 77;
    }
    if (rc) {
        report_status("cuda_backend_open", &st);
        return 1;
    }
    int cpu_wrong = fenced_copy_keeps_what_was_copied(cpu_backend());
    int gpu_wrong = fenced_copy_keeps_what_was_copied(gpu);
    CHECK_INT_EQ(cpu_wrong, 0);
    CHECK_INT_EQ(gpu_wrong, cpu_wrong);
    cuda_backend_close(gpu);
    staged_training_on_the_gpu();
    return test_exit_code("test_cuda_pinned_staging");
}
