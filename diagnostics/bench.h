// `trainer bench`: what the device and its libraries really deliver, beside the card's
// theoretical peak. Four benchmarks, each returning a report struct, written as tables to a
// TextOut (bench_text.c) or as one JSON object (bench_json.c):
//   gemm    GEMM TFLOP/s per precision (fp32, TF32, bf16, fp16) and size (bench_gemm.c)
//   memory  copy bandwidth: on the device, host to device and back, pinned and pageable
//           (bench_memory.c)
//   conv    the convolution ops on common shapes, with the algorithm the backend chose
//           (bench_conv.c)
//   train   a model's training steps on synthetic data: samples/s, and with per_layer the
//           forward and backward time of every layer (bench_train.c)
//
// How every figure is measured (bench.c): the device's own clock (the backend's timer ops:
// CUDA events on a GPU), after untimed warm-up runs, as the median of `repeats` timed
// repeats. Inputs rotate through several buffers whose total exceeds the device's last
// cache (the GPU's L2), so a repeat does not read what the previous one left in cache and
// flatter the figure. Nothing measured is ever reported as 0: what cannot be measured here
// (a precision the CPU backend lacks, a copy the CPU has no device for) is a row that says
// why, and a peak this trainer does not know is 0 in the struct and "unknown" when printed.
// Nothing here prints.
#ifndef TRAINER_BENCH_H
#define TRAINER_BENCH_H

#include <stddef.h>

#include "base/status.h"
#include "base/text_out.h"
#include "core/device.h"
#include "core/graph.h"
#include "kernels/device_facts.h"

enum {
    BENCH_MAX_REPEATS = 100,
    BENCH_MAX_SIZES = 16,
    BENCH_REASON_MAX = 160,
};

// What every benchmark is run with.
typedef struct BenchOptions {
    int repeats;   // timed repeats; each figure is their median (1..BENCH_MAX_REPEATS)
    int warmup;    // untimed runs (train: steps) before the first timed repeat
    int no_tf32;   // --no-tf32: fp32 convolutions and training steps stay off TF32
    // Optional: a short line on what is being measured now ("gemm bf16 8192"), for a
    // progress display; called before each measurement.
    void (*on_progress)(void *user, const char *what);
    void *user;
} BenchOptions;

// The device a benchmark ran on and its theoretical peaks.
typedef struct BenchDevice {
    int is_gpu;
    char name[320];        // "cuda:0 NVIDIA H100 80GB HBM3", "cpu"
    char detail[256];      // "compute 9.0, 132 SMs, SM clock 1980 MHz, ..." / "2 cores, ..."
    CudaBenchDevice gpu;   // is_gpu only
    // Dense TFLOP/s per precision at the maximum SM clock the device reports; 0: unknown
    // (the CPU, an architecture not in bench_peak.c's table, a precision the card lacks).
    double peak_tflops[BENCH_PRECISION_COUNT];
    double peak_memory_gbs;  // device memory, GB/s (10^9 bytes); 0: unknown
    char peak_unknown[BENCH_REASON_MAX];  // why the compute peaks are unknown, "" when known
    // The largest cache inputs must outgrow to be read from memory: the GPU's L2; on the
    // CPU its last-level cache as sysconf reports it (32 MiB when it does not).
    size_t cache_bytes;
} BenchDevice;

// Fills *out for the device `d` (its facts and peaks).
int bench_device_describe(const Device *d, BenchDevice *out, Status *st);

// The theoretical dense peak of `p` on a GPU of these facts, in TFLOP/s; 0 when unknown,
// with *why (may be NULL) saying why. Pure: bench_peak.c's table of FLOPs per SM per clock.
double bench_peak_tflops(const CudaBenchDevice *gpu, BenchPrecision p, const char **why);
// DRAM bandwidth from the memory clock and bus width, in GB/s; 0 when either is unknown.
double bench_peak_memory_gbs(const CudaBenchDevice *gpu);

const char *bench_precision_name(BenchPrecision p);  // "fp32", "tf32", "bf16", "fp16"
// Parses a precision name; -1 when it is none.
int bench_precision_parse(const char *name);

// Why a GPU of dev's compute capability cannot compute in `p` (TF32 and bf16 need 8.0,
// fp16 7.0: base/precision.c's precision_min_compute), written into buf; NULL when it can,
// and on the CPU, whose benchmarks each say what they lack themselves.
const char *bench_gpu_lacks(const BenchDevice *dev, BenchPrecision p, char *buf, size_t size);

// The median of count values (count >= 1); `values` is reordered.
double bench_median(double *values, int count);

// ---- gemm -----------------------------------------------------------------------------

typedef struct BenchGemmSize {
    int m, n, k;
} BenchGemmSize;

typedef struct BenchGemmRow {
    BenchPrecision precision;
    BenchGemmSize size;
    int available;                       // 0: not measured; `unavailable` says why
    char unavailable[BENCH_REASON_MAX];
    double median_ms;                    // one GEMM, the median of the repeats
    double tflops;                       // 2 m n k / median_ms
    double peak_tflops;                  // 0: unknown
    int per_repeat;                      // GEMMs per timed repeat
    int input_sets;                      // A, B, C sets rotated through
    size_t input_bytes;                  // all of them together
} BenchGemmRow;

typedef struct BenchGemmReport {
    BenchGemmRow rows[BENCH_PRECISION_COUNT * BENCH_MAX_SIZES];
    int row_count;
} BenchGemmReport;

// Every precision in `precisions` (mask of 1 << BenchPrecision) at every size.
int bench_gemm(Device *d, const BenchDevice *dev, const BenchOptions *o,
               const BenchGemmSize *sizes, int size_count, unsigned precisions,
               BenchGemmReport *out, Status *st);

// ---- memory ---------------------------------------------------------------------------

typedef enum BenchCopyKind {
    BENCH_COPY_DEVICE_TO_DEVICE,
    BENCH_COPY_HOST_TO_DEVICE_PINNED,
    BENCH_COPY_HOST_TO_DEVICE_PAGEABLE,
    BENCH_COPY_DEVICE_TO_HOST_PINNED,
    BENCH_COPY_DEVICE_TO_HOST_PAGEABLE,
    BENCH_COPY_COUNT
} BenchCopyKind;

const char *bench_copy_name(BenchCopyKind kind);  // "device-to-device", ...

typedef struct BenchCopyRow {
    BenchCopyKind kind;
    size_t bytes;                        // copied per copy
    int available;
    char unavailable[BENCH_REASON_MAX];
    double median_ms;                    // one copy
    // bytes moved per second, 10^9 bytes: a device-to-device copy counts its bytes twice
    // (read and written, as CUDA's bandwidthTest does), so it compares with the DRAM peak.
    double gbs;
    double peak_gbs;                     // 0: unknown
    char peak_unknown[BENCH_REASON_MAX]; // why, when peak_gbs is 0
} BenchCopyRow;

typedef struct BenchMemoryReport {
    BenchCopyRow rows[BENCH_COPY_COUNT * BENCH_MAX_SIZES];
    int row_count;
} BenchMemoryReport;

int bench_memory(Device *d, const BenchDevice *dev, const BenchOptions *o, const size_t *sizes,
                 int size_count, BenchMemoryReport *out, Status *st);

// ---- conv -----------------------------------------------------------------------------

typedef enum BenchConvOp { BENCH_CONV_FORWARD, BENCH_CONV_BACKWARD_DATA,
                           BENCH_CONV_BACKWARD_FILTER, BENCH_CONV_OP_COUNT } BenchConvOp;
const char *bench_conv_op_name(BenchConvOp op);  // "forward", "backward-data", ...

// The shapes conv measures, batch left 0 (the caller's --batch goes in).
typedef struct BenchConvShape {
    const char *name;      // "lenet conv2", "resnet 3x3 64"
    Conv2dGeometry geometry;
} BenchConvShape;
extern const BenchConvShape bench_conv_shapes[];
extern const int bench_conv_shape_count;

// The data a conv row's tensors (x, w, y and their gradients) are stored in; bias, dw
// and dbias are f32 in each (backend.h's Conv2dGeometry.dtype).
typedef enum BenchConvData { BENCH_CONV_F32, BENCH_CONV_BF16, BENCH_CONV_F16,
                             BENCH_CONV_DATA_COUNT } BenchConvData;

typedef struct BenchConvRow {
    const char *shape;                   // a bench_conv_shapes name
    Conv2dGeometry geometry;             // with the batch, and the storage dtype
    BenchConvOp op;
    // f32 data: BENCH_TF32 when cuDNN may use TF32, else BENCH_FP32; bf16 and f16 data:
    // BENCH_BF16 and BENCH_FP16 (f32 sums, as the GEMMs of bench_gemm).
    BenchPrecision precision;
    int available;                       // 0: not measured; `unavailable` says why
    char unavailable[BENCH_REASON_MAX];
    double median_ms;
    double tflops;                       // 2 N K C R S P Q / median_ms, for each op
    double peak_tflops;                  // the precision's; 0: unknown
    char algorithm[160];                 // what the backend ran: cuDNN's algorithm, ...
    size_t workspace_bytes;
    int input_sets;
} BenchConvRow;

enum { BENCH_CONV_MAX_SHAPES = 8 };

// Rows grouped by shape, then op, then data (f32, bf16, f16).
typedef struct BenchConvReport {
    int batch;
    BenchConvRow rows[BENCH_CONV_MAX_SHAPES * BENCH_CONV_OP_COUNT * BENCH_CONV_DATA_COUNT];
    int row_count;
} BenchConvReport;

// Every shape of bench_conv_shapes, each op, in f32 data and in bf16 and f16 data; a
// storage the device cannot run is a row that says why.
int bench_conv(Device *d, const BenchDevice *dev, const BenchOptions *o, int batch,
               BenchConvReport *out, Status *st);

// ---- train ----------------------------------------------------------------------------

typedef struct BenchLayerTime {
    char name[64];
    const char *kind;
    // Medians over the measured steps, ms; 0 when the median is 0, i.e. below the timer's
    // resolution (a view that launches nothing): printed as such, never as 0.
    double forward_ms, backward_ms;
    double forward_flops;                // per sample, as `trainer check` counts them
    // An act= layer whose activation the layer before computes (fused): that layer's name,
    // whose times hold it; its own times are the timer marks' alone. "" when not fused.
    char fused_into[64];
} BenchLayerTime;

typedef struct BenchTrainReport {
    char model[512];
    int batch, steps, classes;
    const char *optimizer;               // "adam", "sgd", ...
    double samples_per_second;           // the median of the repeats
    double repeat_samples_per_second[BENCH_MAX_REPEATS];
    double step_ms;                      // the median step
    double forward_flops_per_sample;     // the model's, as `trainer check` counts them
    double tflops;                       // 3 x forward FLOPs per sample x samples/s
    BenchPrecision precision;            // what the device computes in (--precision, or the model's)
    double peak_tflops;                  // that precision's; 0: unknown
    // fp16 (core/loss_scale.h), as in training: loss_scale is the scale after the last
    // step, 0 when the run does not scale; skipped_steps of steps_run (every step taken:
    // warm-up, timed and per-layer) found non-finite gradients and skipped the update.
    double loss_scale;
    long skipped_steps, steps_run;
    // per_layer: one entry per layer after the input, in forward order, and the update
    // (under fp16 with the gradients' check and unscale before it).
    BenchLayerTime *layers;
    int layer_count;
    double optimizer_ms;
    int per_layer_steps;
    // config->cuda_graph: how the timed steps ran ("replayed from one CUDA Graph", or why
    // plain launches were timed instead); "" with graphs off. Per-layer steps run plainly.
    char cuda_graph[320];
} BenchTrainReport;

// Trains g (opened by run_open for RUN_BENCH, which initialised its parameters and the
// optimizer's state; config its run settings) on synthetic data of its input shape with
// random labels: o->warmup steps, then o->repeats repeats of `steps` steps of `batch`
// samples. With per_layer, `steps` more steps with every layer timed.
// With config->cuda_graph, the timed steps are replayed from a graph captured at the
// first of them (after at least one plain step). config->precision is the run's
// (--precision applied): fp16 runs with training's dynamic loss scaling, so without graphs.
int bench_train(Device *d, const BenchDevice *dev, const BenchOptions *o, Graph *g,
                const RunConfig *config, int batch, int steps, int per_layer,
                BenchTrainReport *out, Status *st);
void bench_train_report_free(BenchTrainReport *r);

// ---- one `trainer bench` run (bench_run.c) ----------------------------------------------

// What a run was asked to measure: tools/cmd_bench.c reads it from the arguments.
typedef struct BenchRequest {
    const char *benchmark;    // "gemm", "memory", "conv", "train", "all"
    BenchOptions options;
    BenchGemmSize sizes[BENCH_MAX_SIZES];
    int size_count;           // 0: the device's default
    unsigned precisions;      // gemm: mask of 1 << BenchPrecision
    size_t bytes[BENCH_MAX_SIZES];
    int byte_count;           // 0: the device's default
    // The run's (run_options_resolve): --batch, else train's model file's; conv's 0 until
    // bench_request_defaults gives the device's.
    int batch;
    int steps;                // train: steps per timed repeat
    int per_layer;            // train: also every layer's time
} BenchRequest;

// The reports of the benchmarks a request names; NULL (has_train 0) for the others.
typedef struct BenchReports {
    BenchGemmReport *gemm;
    BenchMemoryReport *memory;
    BenchConvReport *conv;
    BenchTrainReport train;
    int has_train;
} BenchReports;

// --sizes (N or MxNxK, 1 to 65536 each), --precisions (some of fp32,tf32,bf16,fp16; all
// when not given) and --bytes (4 bytes to 64 GiB, K/M/G binary) as typed, NULL when not
// given, into r: at most BENCH_MAX_SIZES items each. STATUS_BAD_INPUT naming the option and
// the item, with a hint of the form it takes (diagnostics/bench_request.c).
int bench_request_read_lists(const char *sizes, const char *precisions, const char *bytes,
                             BenchRequest *r, Status *st);
// The sizes, bytes and conv batch not given, for this device: what a GPU finishes in
// seconds takes the CPU minutes.
void bench_request_defaults(BenchRequest *r, const BenchDevice *dev);
// Runs the request's benchmarks in order (gemm, memory, conv; or train of g, built from its
// model file with config its run settings) into *out, which bench_reports_free frees, also
// after a failure.
int bench_run(Device *d, const BenchDevice *dev, const BenchRequest *r, Graph *g,
              const RunConfig *config, BenchReports *out, Status *st);
void bench_reports_free(BenchReports *r);
// Fails when a memory benchmark (r not NULL) had every copy refused: exit 0 says "measured".
int bench_memory_measured(const BenchMemoryReport *r, Status *st);

// What one `trainer bench` run measured, for its text and JSON; NULL for the benchmarks it
// did not run.
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
    // train: the layers that run their act= activation (graph_fuse_activations).
    int fused_layers;
} BenchRun;

// The reports as tables, each under a header naming the device, its peaks and how the
// figures were measured (bench_text.c).
void bench_text(const TextOut *out, const BenchRun *run);
// The reports as one JSON object, for scripts (bench_json.c). A figure that was not
// measured is absent (its row says why under "reason"), and a peak trainer does not know
// is null: never 0.
struct cJSON *bench_json(const BenchRun *run);

// ---- shared by the benchmarks (bench.c) ---------------------------------------------------

// How many input sets of set_bytes each to rotate through so that together they exceed
// twice the device's cache: at least 1, at most `max`.
int bench_input_sets(const BenchDevice *dev, size_t set_bytes, int max);

// A timer pair around a repeat: started, then stopped and read in ms.
typedef struct BenchTimer {
    const Backend *backend;
    void *start, *stop;
} BenchTimer;
int bench_timer_open(const Backend *b, BenchTimer *t, Status *st);
int bench_timer_start(BenchTimer *t, Status *st);
int bench_timer_stop(BenchTimer *t, double *ms, Status *st);
void bench_timer_close(BenchTimer *t);

// A profiler range (NVTX on a GPU; nothing on the CPU) around the timed part of a
// measurement, "bench gemm bf16 4096x4096x4096", so that Nsight can be pointed at the
// repeats and not the warm-up (docs/benchmarks.md).
void bench_range_push(const Backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void bench_range_pop(const Backend *b);

// Calls o->on_progress with the formatted line, if set.
void bench_progress(const BenchOptions *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
