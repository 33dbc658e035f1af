// trainer bench's theoretical peaks (diagnostics/bench_peak.c) reproduce NVIDIA's datasheet
// figures from the device facts the CUDA runtime reports, say "unknown" (0, with a reason)
// for what the table lacks, and the helpers the benchmarks share behave: the median, the
// precision names, how many input sets outgrow a cache, what compute capability a
// precision needs.
#include "check.h"
#include "diagnostics/bench.h"

static CudaBenchDevice card(const char *name, int major, int minor, int sms, int clock_mhz) {
    CudaBenchDevice d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.compute_major = major;
    d.compute_minor = minor;
    d.multiprocessors = sms;
    d.clock_khz = clock_mhz * 1000;
    return d;
}

// At the clock NVIDIA quotes each card's figures at, the table gives the datasheet's
// numbers (TFLOP/s, 0.1% or the datasheet's last digit).
static void peaks_match_datasheets(void) {
    CudaBenchDevice h100 = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
    CHECK_NEAR(bench_peak_tflops(&h100, BENCH_FP32, NULL), 66.9, 0.1);
    h100.clock_khz = 1830000;  // NVIDIA's tensor figures are at 1830 MHz
    CHECK_NEAR(bench_peak_tflops(&h100, BENCH_TF32, NULL), 494.7, 0.1);
    CHECK_NEAR(bench_peak_tflops(&h100, BENCH_BF16, NULL), 989.4, 0.1);
    CHECK_NEAR(bench_peak_tflops(&h100, BENCH_FP16, NULL), 989.4, 0.1);

    CudaBenchDevice a100 = card("NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410);
    CHECK_NEAR(bench_peak_tflops(&a100, BENCH_FP32, NULL), 19.5, 0.05);
    CHECK_NEAR(bench_peak_tflops(&a100, BENCH_TF32, NULL), 156.0, 0.2);
    CHECK_NEAR(bench_peak_tflops(&a100, BENCH_BF16, NULL), 312.0, 0.3);

    CudaBenchDevice l40s = card("NVIDIA L40S", 8, 9, 142, 2520);
    CHECK_NEAR(bench_peak_tflops(&l40s, BENCH_FP32, NULL), 91.6, 0.1);
    CHECK_NEAR(bench_peak_tflops(&l40s, BENCH_TF32, NULL), 183.2, 0.2);
    CHECK_NEAR(bench_peak_tflops(&l40s, BENCH_BF16, NULL), 366.4, 0.4);

    CudaBenchDevice a40 = card("NVIDIA A40", 8, 6, 84, 1740);
    CHECK_NEAR(bench_peak_tflops(&a40, BENCH_FP32, NULL), 37.4, 0.05);
    CHECK_NEAR(bench_peak_tflops(&a40, BENCH_FP16, NULL), 149.7, 0.1);

    CudaBenchDevice t4 = card("Tesla T4", 7, 5, 40, 1590);
    CHECK_NEAR(bench_peak_tflops(&t4, BENCH_FP32, NULL), 8.1, 0.05);
    CHECK_NEAR(bench_peak_tflops(&t4, BENCH_FP16, NULL), 65.1, 0.1);
}

// GeForce cards accumulate in fp32 on tensor cores at half rate; plain fp32 is full rate.
static void geforce_tensor_rates_are_halved(void) {
    CudaBenchDevice rtx3090 = card("NVIDIA GeForce RTX 3090", 8, 6, 82, 1695);
    CHECK_NEAR(bench_peak_tflops(&rtx3090, BENCH_FP32, NULL), 35.6, 0.05);
    CHECK_NEAR(bench_peak_tflops(&rtx3090, BENCH_TF32, NULL), 35.6, 0.05);
    CHECK_NEAR(bench_peak_tflops(&rtx3090, BENCH_FP16, NULL), 71.2, 0.1);
    CudaBenchDevice rtx4090 = card("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520);
    CHECK_NEAR(bench_peak_tflops(&rtx4090, BENCH_BF16, NULL), 165.2, 0.1);
}

static void unknown_peaks_are_zero_with_a_reason(void) {
    const char *why = NULL;
    CudaBenchDevice blackwell = card("NVIDIA B200", 10, 0, 148, 1965);
    CHECK(bench_peak_tflops(&blackwell, BENCH_FP32, &why) == 0.0);
    CHECK_CONTAINS(why, "not in trainer's table");
    CudaBenchDevice t4 = card("Tesla T4", 7, 5, 40, 1590);
    CHECK(bench_peak_tflops(&t4, BENCH_TF32, &why) == 0.0);
    CHECK_CONTAINS(why, "no tensor ops");
    CHECK(bench_peak_tflops(&t4, BENCH_BF16, NULL) == 0.0);
    CudaBenchDevice no_clock = card("NVIDIA H100", 9, 0, 132, 0);
    CHECK(bench_peak_tflops(&no_clock, BENCH_BF16, &why) == 0.0);
    CHECK_CONTAINS(why, "no SM count or clock");
}

static void memory_peak_from_clock_and_bus(void) {
    CudaBenchDevice h100 = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
    h100.memory_clock_khz = 2619000;
    h100.memory_bus_bits = 5120;
    CHECK_NEAR(bench_peak_memory_gbs(&h100), 3352.3, 0.1);  // NVIDIA: 3.35 TB/s
    CudaBenchDevice a100 = card("NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410);
    a100.memory_clock_khz = 1215000;
    a100.memory_bus_bits = 5120;
    CHECK_NEAR(bench_peak_memory_gbs(&a100), 1555.2, 0.1);  // NVIDIA: 1555 GB/s
    a100.memory_bus_bits = 0;
    CHECK(bench_peak_memory_gbs(&a100) == 0.0);
}

static void helpers(void) {
    double odd[] = {5, 1, 3};
    CHECK_NEAR(bench_median(odd, 3), 3.0, 0.0);
    double even[] = {4, 1, 3, 2};
    CHECK_NEAR(bench_median(even, 4), 2.5, 0.0);
    for (int p = 0; p < BENCH_PRECISION_COUNT; p++)
        CHECK_INT_EQ(bench_precision_parse(bench_precision_name((BenchPrecision)p)), p);
    CHECK_INT_EQ(bench_precision_parse("fp64"), -1);
    BenchDevice dev;
    memset(&dev, 0, sizeof dev);
    dev.cache_bytes = (size_t)50 << 20;
    CHECK_INT_EQ(bench_input_sets(&dev, (size_t)12 << 20, 16), 9);   // 108 MiB >= 100 MiB
    CHECK_INT_EQ(bench_input_sets(&dev, (size_t)768 << 20, 16), 1);  // one set outgrows it
    CHECK_INT_EQ(bench_input_sets(&dev, 1024, 16), 16);              // capped
}

// What a card lacks, as gemm and conv both report it: TF32 and bf16 need 8.0, fp16 7.0,
// fp32 nothing; the CPU is left to each benchmark (NULL here).
static void gpu_lacks_follows_the_precision_floors(void) {
    BenchDevice dev;
    memset(&dev, 0, sizeof dev);
    char why[BENCH_REASON_MAX];
    CHECK(bench_gpu_lacks(&dev, BENCH_BF16, why, sizeof why) == NULL);  // the CPU
    dev.is_gpu = 1;
    dev.gpu = card("Tesla T4", 7, 5, 40, 1590);
    CHECK(bench_gpu_lacks(&dev, BENCH_FP32, why, sizeof why) == NULL);
    CHECK(bench_gpu_lacks(&dev, BENCH_FP16, why, sizeof why) == NULL);
    CHECK_CONTAINS(bench_gpu_lacks(&dev, BENCH_BF16, why, sizeof why),
                   "needs compute capability 8.0 or newer (this card: 7.5)");
    CHECK_CONTAINS(bench_gpu_lacks(&dev, BENCH_TF32, why, sizeof why), "8.0 or newer");
    dev.gpu = card("Tesla P100", 6, 0, 56, 1480);
    CHECK_CONTAINS(bench_gpu_lacks(&dev, BENCH_FP16, why, sizeof why),
                   "needs compute capability 7.0 or newer (this card: 6.0)");
    dev.gpu = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
    for (int p = 0; p < BENCH_PRECISION_COUNT; p++)
        CHECK(bench_gpu_lacks(&dev, (BenchPrecision)p, why, sizeof why) == NULL);
}

int main(void) {
    peaks_match_datasheets();
    geforce_tensor_rates_are_halved();
    unknown_peaks_are_zero_with_a_reason();
    memory_peak_from_clock_and_bus();
    helpers();
    gpu_lacks_follows_the_precision_floors();
    return test_exit_code("test_bench_peak");
}
