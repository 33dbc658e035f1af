// `trainer bench --json`: the reports of diagnostics/bench.h as one JSON object, for
// scripts. A figure that was not measured is absent (its row says why under "reason"),
// and a peak trainer does not know is null: never 0.
#ifndef TRAINER_BENCH_JSON_H
#define TRAINER_BENCH_JSON_H

#include "diagnostics/bench.h"

// What one `trainer bench` run measured; NULL for the benchmarks it did not run.
typedef struct BenchRun {
    const char *benchmark;          // "gemm", "memory", "conv", "train", "all"
    const BenchDevice *device;
    const BenchOptions *options;
    const BenchGemmReport *gemm;
    const BenchMemoryReport *memory;
    const BenchConvReport *conv;
    const BenchTrainReport *train;
    // train: the CUDA levers --without turned off (base/lever.h), as "levers_off" (a list,
    // empty when all are on) so that a saved result says what it measured.
    unsigned disabled_levers;
    // train: the layers laid out NHWC (--layout nhwc, graph_set_layouts), as "layout" and,
    // when there are any, "nhwc_layers".
    int nhwc_layers;
} BenchRun;

struct cJSON *bench_json(const BenchRun *run);

#endif
