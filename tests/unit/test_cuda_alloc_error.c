// A failed cudaMalloc must not be blamed on the next kernel (issue 11, found on an H100):
// the runtime keeps an allocation's failure as its "last error", and the launch check
// after the next kernel read it back, so `fill` failed with "out of memory" although it
// ran fine, and out-of-memory recovery failed at its first launch on a card that really
// filled up. This fakes the runtime calls (kernels/cuda/cuda_backend.h) the way a full
// card answers them: cudaMalloc fails with cudaErrorMemoryAllocation (2) and leaves it as
// the last error until cudaGetLastError reads it. No GPU needed; runs wherever the CUDA
// backend is built (skipped, 77, in a build without it).
#include <stdio.h>

#include "check.h"

#ifndef TRAINER_HAVE_CUDA
int main(void) {
    printf("SKIP: built without the CUDA backend\n");
    return 77;
}
#else
#include "kernels/cuda/cuda_backend.h"

enum { CUDA_SUCCESS_CODE = 0, CUDA_OUT_OF_MEMORY_CODE = 2 };

static int last_error = CUDA_SUCCESS_CODE;
static int mallocs = 0;

static int fake_set_device(int ordinal) { return CUDA_SUCCESS_CODE; }
static int fake_get_last_error(void) {
    int e = last_error;
    last_error = CUDA_SUCCESS_CODE;
    return e;
}
// As a card with no room left: every request fails, and the failure stays behind.
static int fake_full_card_malloc(void **ptr, size_t bytes) {
    mallocs++;
    *ptr = NULL;
    last_error = CUDA_OUT_OF_MEMORY_CODE;
    return CUDA_OUT_OF_MEMORY_CODE;
}

static void failed_allocation_is_out_of_memory_and_leaves_no_error(void) {
    CudaRuntimeCalls full_card = {fake_set_device, fake_full_card_malloc, fake_get_last_error};
    cuda_runtime_calls_replace(&full_card);
    Status st;
    status_clear(&st);
    void *p = (void *)&st;
    int rc = cuda_device_alloc(0, (size_t)1 << 30, &p, &st);
    CHECK_INT_EQ(rc, STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(mallocs, 1);
    CHECK(p == NULL);
    CHECK_CONTAINS(st.message, "cudaErrorMemoryAllocation");
    CHECK_INT_EQ(last_error, CUDA_SUCCESS_CODE);

    // The next kernel launched fine: its check must say so.
    status_clear(&st);
    rc = cuda_check_launch("fill_kernel", __FILE__, __LINE__, &st);
    if (rc) fprintf(stderr, "the launch check after a failed allocation said: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    cuda_runtime_calls_replace(NULL);
}

// And a launch that did fail is still reported, as that launch's failure.
static void a_real_launch_failure_is_still_reported(void) {
    CudaRuntimeCalls calls = {fake_set_device, fake_full_card_malloc, fake_get_last_error};
    cuda_runtime_calls_replace(&calls);
    last_error = 1;  // cudaErrorInvalidValue, as CUDA 13 answers a 2048-thread block
    Status st;
    status_clear(&st);
    int rc = cuda_check_launch("fill_kernel", __FILE__, __LINE__, &st);
    CHECK(rc != 0);
    CHECK_CONTAINS(st.message, "launch of fill_kernel failed: cudaErrorInvalidValue (1)");
    // At a launch it means a configuration the device cannot run, and is explained so.
    CHECK_CONTAINS(st.error_name, "cudaErrorInvalidConfiguration");
    CHECK_CONTAINS(st.hint, "threads per block");
    CHECK_INT_EQ(last_error, CUDA_SUCCESS_CODE);
    cuda_runtime_calls_replace(NULL);
}

int main(void) {
    failed_allocation_is_out_of_memory_and_leaves_no_error();
    a_real_launch_failure_is_still_reported();
    return test_exit_code("test_cuda_alloc_error");
}
#endif
