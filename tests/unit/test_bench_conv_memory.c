// `trainer bench conv` on a device that cannot hold some shapes: those shapes' rows say
// "out of memory for ..." and are not measured, and the shapes that fit are measured all
// the same, as `bench gemm` treats a size too large (before, one shape too large ended the
// whole benchmark). On the CPU under an allocator limit: LeNet's first convolution at batch
// 2 fits in 4 MiB, ResNet's 56x56x64 stage does not.
#include "check.h"
#include "core/device.h"
#include "diagnostics/bench.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
    Status st;
    status_clear(&st);
    Device d;
    char notice[256];
    DeviceOptions options = {.spec = "cpu", .memory_limit = "4M", .mode = ALLOC_GROW};
    if (device_open(&options, &d, notice, sizeof notice, &st)) {
        fprintf(stderr, "device_open: %s\n", st.message);
        return 1;
    }
    BenchDevice dev;
    CHECK_INT_EQ(bench_device_describe(&d, &dev, &st), 0);
    BenchOptions o = {.repeats = 1, .warmup = 0};
    BenchConvReport *report = calloc(1, sizeof *report);
    int rc = report ? bench_conv(&d, &dev, &o, 2, report, &st) : 1;
    if (rc) fprintf(stderr, "bench_conv: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    int measured = 0, refused = 0, lenet_measured = 0, resnet_refused = 0;
    for (int i = 0; report && !rc && i < report->row_count; i++) {
        const BenchConvRow *row = &report->rows[i];
        if (row->available) {
            measured++;
            CHECK(row->median_ms > 0.0);
            lenet_measured += strstr(row->shape, "lenet conv1") != NULL;
        } else if (strstr(row->unavailable, "out of memory for")) {
            refused++;
            CHECK(row->median_ms == 0.0);
            resnet_refused += strstr(row->shape, "56x56") != NULL;
        }
    }
    printf("%d rows measured, %d out of memory (limit 4 MiB, batch 2)\n", measured, refused);
    CHECK(lenet_measured == BENCH_CONV_OP_COUNT * BENCH_CONV_DATA_COUNT);
    CHECK(resnet_refused > 0);
    CHECK(d.alloc.stats.peak_in_use <= d.alloc.limit);
    free(report);
    device_close(&d);
    return test_exit_code("test_bench_conv_memory");
}
