// The CUDA backend's timer ops (Backend.timer_*: CUDA events on the device's stream), which
// trainer bench's figures rest on: a copy queued between two marks is measured by the
// device at a positive time no longer than the host waited for it, and at a bandwidth below
// the card's theoretical peak; marks with nothing queued between them measure next to
// nothing; and timer_elapsed waits for the second mark, so it is never read early.
// Skipped (77) when cuda:0 does not open (no driver, no GPU, built without CUDA).
#include "check.h"
#include "base/clock.h"
#include "core/train.h"
#include "diagnostics/bench.h"
#include "kernels/cuda/cuda_backend.h"

#define COPY_BYTES ((size_t)256 << 20)

int main(void) {
    Status st;
    status_clear(&st);
    CudaBackendOptions options = {.ordinal = 0, .allow_tf32 = 1};
    const Backend *b = NULL;
    if (cuda_backend_open(&options, &b, &st)) {
        printf("skipped: cuda:0 does not open: %s\n", st.message);
        return st.code == STATUS_NO_DEVICE ? 77 : 1;
    }
    void *start = NULL, *stop = NULL, *src = NULL, *dst = NULL;
    CHECK_INT_EQ(b->timer_create(b, &start, &st), 0);
    CHECK_INT_EQ(b->timer_create(b, &stop, &st), 0);
    CHECK_INT_EQ(b->raw_alloc(b, COPY_BYTES, &src, &st), 0);
    CHECK_INT_EQ(b->raw_alloc(b, COPY_BYTES, &dst, &st), 0);
    CHECK_INT_EQ(b->fill(b, src, 1.0f, COPY_BYTES / sizeof(float), &st), 0);
    CHECK_INT_EQ(b->synchronize(b, &st), 0);

    double ms = -1.0;
    CHECK_INT_EQ(b->timer_record(b, start, &st), 0);
    CHECK_INT_EQ(b->timer_record(b, stop, &st), 0);
    CHECK_INT_EQ(b->timer_elapsed(b, start, stop, &ms, &st), 0);
    printf("empty interval: %.4f ms\n", ms);
    CHECK(ms >= 0.0 && ms < 0.5);

    double host_start = monotonic_seconds();
    CHECK_INT_EQ(b->timer_record(b, start, &st), 0);
    for (int i = 0; i < 10; i++)
        CHECK_INT_EQ(b->copy_on_device(b, dst, src, COPY_BYTES, &st), 0);
    CHECK_INT_EQ(b->timer_record(b, stop, &st), 0);
    CHECK_INT_EQ(b->timer_elapsed(b, start, stop, &ms, &st), 0);
    double host_ms = (monotonic_seconds() - host_start) * 1e3;
    double gbs = 10.0 * 2.0 * (double)COPY_BYTES / (ms * 1e-3) / 1e9;
    printf("10 copies of %zu MiB: device %.3f ms, host waited %.3f ms: %.0f GB/s\n",
           COPY_BYTES >> 20, ms, host_ms, gbs);
    CHECK(ms > 0.0);
    CHECK(ms <= host_ms + 0.01);

    Device device = {.backend = b};
    snprintf(device.name, sizeof device.name, "%s", b->name);
    BenchDevice dev;
    CHECK_INT_EQ(bench_device_describe(&device, &dev, &st), 0);
    printf("peak memory bandwidth: %.0f GB/s (%s)\n", dev.peak_memory_gbs, dev.detail);
    if (dev.peak_memory_gbs > 0.0) CHECK(gbs < dev.peak_memory_gbs);

    if (st.code) fprintf(stderr, "last status: %s\n", st.message);
    b->raw_free(b, src);
    b->raw_free(b, dst);
    b->timer_destroy(b, start);
    b->timer_destroy(b, stop);
    cuda_backend_close(b);
    return test_exit_code("test_cuda_timer");
}
