// The theoretical peaks `trainer bench` prints beside what it measures: dense FLOP/s per
// precision from the SM count, the SM clock and a table of FLOPs per SM per clock by
// architecture, and DRAM bandwidth from the memory clock and bus width.
#include <stdio.h>
#include <string.h>

#include "diagnostics/bench.h"

// FLOPs per SM per clock (an FMA is 2), dense (no 2:4 sparsity), tensor ops accumulating
// in fp32. Each row is NVIDIA's datasheet peak of one card divided by its SM count and the
// clock the datasheet quotes it at:
//   sm_75  Tesla T4, 40 SMs at 1590 MHz: fp32 8.1, fp16 65 TFLOP/s             -> 128, 1024
//   sm_80  A100, 108 SMs at 1410 MHz: fp32 19.5, TF32 156, bf16/fp16 312       -> 128, 1024, 2048
//   sm_86  A40, 84 SMs at 1740 MHz: fp32 37.4, TF32 74.8, bf16/fp16 149.7      -> 256, 512, 1024
//   sm_89  L40S, 142 SMs at 2520 MHz: fp32 91.6, TF32 183, bf16/fp16 362       -> 256, 512, 1024
//   sm_90  H100 SXM, 132 SMs: fp32 66.9 at 1980 MHz; TF32 494.7, bf16/fp16 989.4 at
//          1830 MHz (the clock NVIDIA quotes tensor peaks at)                  -> 256, 2048, 4096
// GeForce cards (sm_75, sm_86, sm_89) run tensor ops that accumulate in fp32 at half the
// rate of the data-centre and workstation parts of the same architecture: RTX 2080 Ti
// fp16 53.8 (68 SMs, 1545 MHz), RTX 3090 TF32 35.6 and fp16 71 (82 SMs, 1695 MHz),
// RTX 4090 TF32 82.6 and fp16 165.2 (128 SMs, 2520 MHz): 512 and 256 per SM per clock.
// sm_75 has no TF32 or bf16 tensor ops.
//
// The peak multiplies by the maximum SM clock the device reports (cudaDevAttrClockRate):
// on an H100 SXM that is 1980 MHz, so the tensor peaks come out 8% above NVIDIA's figures
// at 1830 MHz (bf16 1070 against 989 TFLOP/s). An upper bound, as a peak should be; a
// card held below its maximum clock by power or heat measures further below it.
typedef struct PeakRates {
    int major, minor;
    double per_sm_clock[BENCH_PRECISION_COUNT];  // fp32, tf32, bf16, fp16; 0: not on this card
} PeakRates;

static const PeakRates peak_table[] = {
    {7, 5, {128, 0, 0, 1024}},
    {8, 0, {128, 1024, 2048, 2048}},
    {8, 6, {256, 512, 1024, 1024}},
    {8, 9, {256, 512, 1024, 1024}},
    {9, 0, {256, 2048, 4096, 4096}},
};

static int is_geforce(const CudaBenchDevice *gpu) { return strstr(gpu->name, "GeForce") != NULL; }

double bench_peak_tflops(const CudaBenchDevice *gpu, BenchPrecision p, const char **why) {
    const char *unused;
    if (!why) why = &unused;
    *why = "";
    if (gpu->multiprocessors <= 0 || gpu->clock_khz <= 0) {
        *why = "the device reports no SM count or clock";
        return 0.0;
    }
    const PeakRates *rates = NULL;
    for (size_t i = 0; i < sizeof peak_table / sizeof peak_table[0]; i++)
        if (peak_table[i].major == gpu->compute_major && peak_table[i].minor == gpu->compute_minor)
            rates = &peak_table[i];
    if (!rates) {
        *why = "this compute capability is not in trainer's table of peak rates "
               "(diagnostics/bench_peak.c)";
        return 0.0;
    }
    double per_clock = rates->per_sm_clock[p];
    if (per_clock == 0.0) {
        *why = "no tensor ops for this precision on this architecture";
        return 0.0;
    }
    if (p != BENCH_FP32 && is_geforce(gpu)) per_clock /= 2.0;
    return per_clock * gpu->multiprocessors * (gpu->clock_khz * 1e3) / 1e12;
}

// Double data rate: two transfers per memory clock on each bit of the bus, the formula of
// CUDA's deviceQuery and bandwidthTest samples (H100 SXM: 2 x 2619 MHz x 5120 bits / 8 =
// 3352 GB/s; NVIDIA quotes 3.35 TB/s).
double bench_peak_memory_gbs(const CudaBenchDevice *gpu) {
    if (gpu->memory_clock_khz <= 0 || gpu->memory_bus_bits <= 0) return 0.0;
    return 2.0 * (gpu->memory_clock_khz * 1e3) * (gpu->memory_bus_bits / 8.0) / 1e9;
}
