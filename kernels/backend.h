// The op table: everything a layer, optimizer or the allocator asks of a device.
//
// The CPU backend (kernels/cpu) is the reference; the CUDA backend implements the same
// table and is tested against it op by op. Pointers passed to ops are device memory of
// that backend. All math is f32, row-major. Every op returns a status code so that a
// backend whose launches can fail reports it instead of crashing. Activations may be
// stored in bf16 or f16 (--precision bf16|fp16): the ops that take such tensors say so
// with a DType beside a `void *`; they still compute in f32 and round once on the store.
//
// No op takes more than five parameters, counted as C counts them (`b` and `st` included):
// an op that needs more takes the rest in one struct, named for the op (ConvertArgs,
// Conv2dForwardTensors, ...), after any shape or hyper-parameter struct it already takes. A
// call reads as `b->op(b, &(OpArgs){.x = x, .y = y, .n = n}, st)`, so every argument is
// named at the call site and a field added later is zero where nobody sets it.
#ifndef TRAINER_BACKEND_H
#define TRAINER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/precision.h"
#include "base/status.h"
#include "kernels/sample_transform.h"

#ifdef __cplusplus
extern "C" {  // the CUDA backend's .cu files fill this table too
#endif

typedef enum ActivationKind {
    ACTIVATION_RELU,
    ACTIVATION_LEAKY_RELU,
    ACTIVATION_SIGMOID,
    ACTIVATION_TANH,
    ACTIVATION_GELU,
    ACTIVATION_COUNT
} ActivationKind;

// The activation a fused op applies to its result before writing it (the *_bias_activation
// ops): `apply` 0 writes the biased result as it is; otherwise activation_forward's kind
// and slope.
typedef struct FusedActivation {
    int apply;
    ActivationKind kind;
    float slope;
} FusedActivation;

typedef struct SgdHyper {
    float lr, momentum, weight_decay;
    int nesterov;
} SgdHyper;

typedef struct AdamHyper {
    float lr, beta1, beta2, eps, weight_decay;
    int decoupled_weight_decay;  // 1: AdamW, 0: Adam with L2 added to the gradient
    int step;                    // 1-based, for bias correction
} AdamHyper;

// One parameter tensor of a multi-tensor optimizer update: n values of param and grad and
// the optimizer's state for them. SGD: state[0] is the velocity (NULL without momentum);
// Adam: state[0] and state[1] are the moments m and v. The pointers are device memory.
typedef struct OptimizerTensor {
    float *param;
    const float *grad;
    float *state[2];
    size_t n;
} OptimizerTensor;

// How a batch of images is laid out in memory: NCHW (each channel a plane of H x W values,
// PyTorch's default) or NHWC (a pixel's channels side by side, PyTorch's channels_last):
// what tensor-core convolutions read, so cuDNN transposes NCHW activations around them.
// Either way a sample's values are contiguous and samples follow each other, so a slice of
// the batch is a pointer offset in both. Zero is NCHW, so zeroed geometries keep it.
typedef enum Layout { LAYOUT_NCHW, LAYOUT_NHWC } Layout;

// A 2-D convolution over NCHW activations as PyTorch's nn.Conv2d computes it (a
// cross-correlation), weights [out_channels, in_channels / groups, kernel_h, kernel_w].
// Padding is zeros: pad_top/pad_left place the first window, and the bottom/right padding
// is whatever out_h/out_w imply (so pad=same can put an odd extra row at the bottom).
// dtype is how x, y, their gradients and the weights the ops read are stored (zero:
// DTYPE_F32, so a zeroed geometry is the all-f32 convolution); bias, dw and dbias are f32
// whatever it is. layout is that of x, y and their gradients (NHWC: [batch, h, w,
// channels]); the weights are [out, in / groups, kh, kw] in either, as the parameters are.
typedef struct Conv2dGeometry {
    int batch;
    int in_channels, in_h, in_w;
    int out_channels, out_h, out_w;
    int kernel_h, kernel_w;
    int stride_h, stride_w;
    int pad_top, pad_left;
    int dilation_h, dilation_w;
    int groups;
    DType dtype;
    Layout layout;
} Conv2dGeometry;

// A pooling window over NCHW activations, channel by channel. Padding never wins a max
// and counts as zeros in an average, which divides by kernel_h * kernel_w everywhere
// (PyTorch's default, count_include_pad=True). layout is that of x, y and their gradients.
typedef struct Pool2dGeometry {
    int batch, channels;
    int in_h, in_w, out_h, out_w;
    int kernel_h, kernel_w;
    int stride_h, stride_w;
    int pad_top, pad_left;
    Layout layout;
} Pool2dGeometry;

// Which implementation fills a table, for the few places that must treat a GPU differently
// (NCCL collectives, the CUDA error name an OOM carries); the name is for people.
typedef enum BackendKind { BACKEND_CPU, BACKEND_CUDA } BackendKind;

// C[m x n] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T, row-major; lda, ldb and
// ldc are the row strides of A, B and C as stored (before op).
// a_dtype, b_dtype and c_dtype are how A, B and C are stored (zero: DTYPE_F32, so a
// zeroed GemmArgs is the all-f32 GEMM): A and B share one of f32, bf16 and f16, and C is
// f32 or A's type (a weight gradient from 16-bit activations is f32). Products are summed
// in f32 and C is rounded once, after alpha, beta (C read in its own type) and, in
// gemm_bias_activation, the bias and activation.
typedef struct GemmArgs {
    int transpose_a, transpose_b;
    int m, n, k;
    int lda, ldb, ldc;
    float alpha, beta;
    DType a_dtype, b_dtype, c_dtype;
} GemmArgs;

// One batch normalisation over [n, channels, spatial] values. Each op reads the fields its
// comment in the table names: momentum only batchnorm_forward_training, eps the two
// forward ops, the flags only batchnorm_backward. dtype is how x, y, dy and dx are stored
// (f32, bf16 or f16; zero: DTYPE_F32, so a zeroed BatchnormArgs is all f32); every op
// reads it. The statistics, sums, gamma, beta and their gradients are f32 (sums double)
// whatever it says.
typedef struct BatchnormArgs {
    int n, channels, spatial;
    float momentum, eps;
    int batch_statistics, accumulate_dx, accumulate_params;
    DType dtype;
} BatchnormArgs;

// What gather_samples copies: count samples of sample_size bytes, made floats as
// `transform` says (kernels/sample_transform.h: scale, shift and augmentation), with
// labels that must lie below classes.
typedef struct GatherArgs {
    int count;
    size_t sample_size;        // transform.channels * height * width
    int classes;
    SampleTransform transform;
} GatherArgs;

// What changes from one training step to the next yet reaches kernels as launch
// arguments: the update's learning rate (the schedule's, as the float the optimizer ops
// take) and step (Adam's bias correction), and the step's dropout seed
// (LayerContext.seed). A step captured as a CUDA Graph would replay the values it was
// captured with; graph_launch hands the backend each replay's own (see below).
// `indices`: the replay's sample indices, `index_count` int32 values that graph_launch
// puts at `indices_to` (device memory: the batch source's, which the recorded gathers
// read) before the replay: on CUDA up to 256 in the same launch as the values, where a
// copy and a launch would each cost a small step a few microseconds, more by a copy
// first. index_count 0: none, the caller copied them.
typedef struct StepValues {
    float lr;
    int step;
    uint64_t seed;
    const int32_t *indices;
    int32_t *indices_to;
    int index_count;
} StepValues;

// The argument structs of the ops below that would otherwise take more than five
// parameters (see the rule at the top of this file). Each field is what the op's comment in
// the table names it; the fields follow the order the op's arguments had, so a positional
// initializer in C++ (kernels/cuda) reads like the old call. *Tensors structs go beside a
// shape struct the caller keeps (GemmArgs, Conv2dGeometry, BatchnormArgs, Pool2dGeometry,
// GatherArgs) or hyper-parameters (SgdHyper, AdamHyper, FusedActivation); *Args structs
// hold all of an op's arguments.
typedef struct GatherSamplesTensors {
    const uint8_t *images;
    const uint8_t *labels;
    const int32_t *indices;
    float *out_images;
    int32_t *out_labels;
    int32_t *first_bad_sample;
} GatherSamplesTensors;

typedef struct GemmTensors {
    const void *a;
    const void *bm;
    void *c;
} GemmTensors;

typedef struct GemmBiasActivationTensors {
    const void *a;
    const void *bm;
    const float *bias;
    void *c;
} GemmBiasActivationTensors;

typedef struct AddBiasRowsArgs {
    float *y;
    const float *bias;
    int rows;
    int cols;
} AddBiasRowsArgs;

typedef struct SumRowsArgs {
    float *out;
    const void *x;
    DType x_dtype;
    int rows;
    int cols;
    float beta;
} SumRowsArgs;

typedef struct ConvertArgs {
    const void *src;
    DType src_dtype;
    void *dst;
    DType dst_dtype;
    size_t n;
    int accumulate;
} ConvertArgs;

typedef struct AccumulateArgs {
    DType dtype;
    void *y;
    const void *const *x;
    int count;
    size_t n;
    int accumulate;
} AccumulateArgs;

typedef struct ActivationForwardArgs {
    ActivationKind kind;
    float slope;
    DType dtype;
    const void *x;
    void *y;
    size_t n;
} ActivationForwardArgs;

typedef struct ActivationBackwardArgs {
    ActivationKind kind;
    float slope;
    DType dtype;
    const void *x;
    const void *y;
    const void *dy;
    void *dx;
    size_t n;
    int accumulate;
} ActivationBackwardArgs;

typedef struct ActivationBiasBackwardTensors {
    DType dtype;
    const void *y;
    const void *dy;
    void *dx;
    float *dbias;
    int rows;
    int cols;
    float beta;
} ActivationBiasBackwardTensors;

typedef struct DropoutForwardArgs {
    DType dtype;
    const void *x;
    void *y;
    float *mask;
    size_t n;
    float rate;
    uint64_t seed;
} DropoutForwardArgs;

typedef struct DropoutBackwardArgs {
    DType dtype;
    const void *dy;
    const float *mask;
    void *dx;
    size_t n;
    int accumulate;
} DropoutBackwardArgs;

typedef struct SoftmaxCrossEntropyForwardArgs {
    const float *logits;
    const int32_t *labels;
    int rows;
    int classes;
    float *probs;
    float *row_stats;
    float *dlogits;
    float scale;
} SoftmaxCrossEntropyForwardArgs;

typedef struct SoftmaxCrossEntropyBackwardArgs {
    const float *probs;
    const int32_t *labels;
    int rows;
    int classes;
    float scale;
    float *dlogits;
    int accumulate;
} SoftmaxCrossEntropyBackwardArgs;

typedef struct MseForwardArgs {
    const float *predictions;
    const int32_t *labels;
    int rows;
    int classes;
    float *row_stats;
} MseForwardArgs;

typedef struct MseBackwardArgs {
    const float *predictions;
    const int32_t *labels;
    int rows;
    int classes;
    float scale;
    float *dpredictions;
    int accumulate;
} MseBackwardArgs;

// batchnorm_forward_training's tensors: it updates running_mean and running_var.
typedef struct BatchnormForwardTensors {
    const void *x;
    void *y;
    const float *gamma;
    const float *beta;
    float *running_mean;
    float *running_var;
    float *save_mean;
    float *save_invstd;
} BatchnormForwardTensors;

// batchnorm_forward_inference's: the same, but it only reads the running statistics.
typedef struct BatchnormInferenceTensors {
    const void *x;
    void *y;
    const float *gamma;
    const float *beta;
    const float *running_mean;
    const float *running_var;
    float *save_mean;
    float *save_invstd;
} BatchnormInferenceTensors;

typedef struct BatchnormBackwardTensors {
    const void *x;
    const void *dy;
    const float *gamma;
    const float *save_mean;
    const float *save_invstd;
    void *dx;
    float *dgamma;
    float *dbeta;
} BatchnormBackwardTensors;

typedef struct BatchnormForwardWithSumsTensors {
    const void *x;
    void *y;
    const float *gamma;
    const float *beta;
    const double *sums;
    float *running_mean;
    float *running_var;
    float *save_mean;
    float *save_invstd;
} BatchnormForwardWithSumsTensors;

typedef struct BatchnormBackwardChannelSumsTensors {
    const void *x;
    const void *dy;
    const float *save_mean;
    const float *save_invstd;
    double *sums;
    float *dgamma;
    float *dbeta;
} BatchnormBackwardChannelSumsTensors;

typedef struct BatchnormBackwardDataWithSumsTensors {
    const void *x;
    const void *dy;
    const float *gamma;
    const float *save_mean;
    const float *save_invstd;
    const double *sums;
    void *dx;
} BatchnormBackwardDataWithSumsTensors;

typedef struct Conv2dForwardTensors {
    const void *x;
    const void *w;
    const float *bias;
    void *y;
    void *workspace;
    size_t workspace_bytes;
} Conv2dForwardTensors;

typedef struct Conv2dBackwardDataTensors {
    const void *dy;
    const void *w;
    void *dx;
    void *workspace;
    size_t workspace_bytes;
    int accumulate;
} Conv2dBackwardDataTensors;

typedef struct Conv2dBackwardFilterTensors {
    const void *x;
    const void *dy;
    float *dw;
    float *dbias;
    void *workspace;
    size_t workspace_bytes;
    int accumulate;
} Conv2dBackwardFilterTensors;

typedef struct MaxpoolForwardTensors {
    DType dtype;
    const void *x;
    void *y;
    int32_t *argmax;
} MaxpoolForwardTensors;

typedef struct MaxpoolBackwardTensors {
    DType dtype;
    const void *dy;
    const int32_t *argmax;
    void *dx;
    int accumulate;
} MaxpoolBackwardTensors;

typedef struct AvgpoolForwardTensors {
    DType dtype;
    const void *x;
    void *y;
} AvgpoolForwardTensors;

typedef struct AvgpoolBackwardTensors {
    DType dtype;
    const void *dy;
    void *dx;
    int accumulate;
} AvgpoolBackwardTensors;

typedef struct LayoutConvertArgs {
    DType dtype;
    int n;
    int channels;
    int pixels;
    Layout from;
    const void *src;
    void *dst;
    int accumulate;
} LayoutConvertArgs;

typedef struct SgdUpdateTensors {
    float *param;
    const float *grad;
    float *velocity;
    size_t n;
} SgdUpdateTensors;

typedef struct AdamUpdateTensors {
    float *param;
    const float *grad;
    float *m;
    float *v;
    size_t n;
} AdamUpdateTensors;

// What a `supports` query asks about (see the slot in the table).
typedef enum OpFamily {
    // The ops that read and write tensors as stored (every op that takes a DType: the
    // elementwise, pooling, batchnorm and conversion ops, and the operands of GEMMs and
    // convolutions): can tensors be stored as `dtype`, laid out as `layout`?
    OP_FAMILY_STORAGE,
    // What GEMMs and convolutions compute in: can their inputs be rounded to `dtype`
    // (f32: full fp32; bf16 and f16: tensor cores) and summed in f32? The GPU's answer
    // depends on its compute capability (precision_min_compute); the CPU computes in f32.
    OP_FAMILY_MATMUL,
    OP_FAMILY_COUNT  // not a family: how many there are (tests walk them all)
} OpFamily;

typedef struct Backend Backend;
struct Backend {
    const char *name;   // "cpu", "cuda:0"
    BackendKind kind;
    void *impl;         // backend-private state
    // 1: graph_set_layouts lays the images between a network's convolutions out NHWC (a
    // CUDA backend opened with --layout nhwc); 0, the default: every activation stays NCHW.
    // The ops take either layout on both backends (the CPU's by transposing around its
    // NCHW code, for the parity tests and tests/unit/test_layouts.c).
    int nhwc_activations;
    // The GPU's compute capability times ten (75 for 7.5), as the backend read it when it
    // opened; 0 on the CPU. What `supports` answers from, and refusals name.
    int compute;

    // ---- what the backend can do ----
    // 1 when the backend's ops of `family` work in `dtype` and `layout`, else 0: what the
    // ops' own checks (backend_dtype_check) ask. Both backends answer from
    // backend_supports_on (below), the GPU with its compute capability; core/precision_check.c
    // and the device opener's precision downgrade, which may ask before a device is open,
    // call backend_precision_supported_on, a function of that same answer.
    int (*supports)(const Backend *b, OpFamily family, DType dtype, Layout layout);
#define BACKEND_QUERY_OPS(X) X(supports)

    // ---- memory ----
    // Raw device allocation; the caching policy lives in core/alloc.
    int (*raw_alloc)(const Backend *b, size_t bytes, void **ptr, Status *st);
    void (*raw_free)(const Backend *b, void *ptr);
    size_t (*total_memory)(const Backend *b);
    int (*copy_to_device)(const Backend *b, void *dst, const void *host_src, size_t bytes, Status *st);
    int (*copy_to_host)(const Backend *b, void *host_dst, const void *src, size_t bytes, Status *st);
    // dst and src must not overlap (partially); dst == src is a no-op.
    int (*copy_on_device)(const Backend *b, void *dst, const void *src, size_t bytes, Status *st);
    int (*fill)(const Backend *b, float *x, float value, size_t n, Status *st);
    int (*synchronize)(const Backend *b, Status *st);
    // Optional (NULL on the CPU): make this device the calling thread's current one. One
    // thread drives every replica of --gpus, and a CUDA launch goes to the current device,
    // so the training loop calls this before it works on a replica.
    int (*make_current)(const Backend *b, Status *st);
    // Optional (NULL on the CPU): named ranges for profilers (NVTX on CUDA), so Nsight
    // Systems shows each layer and phase of a step.
    void (*range_push)(const Backend *b, const char *name);
    void (*range_pop)(const Backend *b);
#define BACKEND_MEMORY_OPS(X) X(raw_alloc) X(raw_free) X(total_memory) X(copy_to_device)      \
    X(copy_to_host) X(copy_on_device) X(fill) X(synchronize)

    // ---- CUDA Graphs: a training step captured once, then replayed (optional, NULL on
    // the CPU) ----
    // capture_begin starts recording this device's stream: the ops called until
    // capture_end are recorded, not run, and an op that cannot be recorded (a host sync, a
    // device allocation) fails. capture_end stops recording, always, and makes what was
    // recorded into *graph; after a failed op (or when it fails) it leaves *graph NULL
    // and the stream as before the capture, so the caller can run the same ops plainly.
    // `values` are the step's StepValues as the recorded ops were given them: while
    // recording, the ops that take them (adam/sgd updates: lr and step; dropout_forward:
    // the seed, or the seed plus a fixed offset) read them from a small block in device
    // memory instead of their arguments, and graph_launch writes each replay's values
    // there (one tiny launch, queued before the graph). An op given an lr or step that is
    // not values' fails the capture rather than freeze it.
    int (*capture_begin)(const Backend *b, const StepValues *values, Status *st);
    int (*capture_end)(const Backend *b, void **graph, Status *st);
    int (*graph_launch)(const Backend *b, void *graph, const StepValues *values, Status *st);
    void (*graph_destroy)(const Backend *b, void *graph);

    // ---- device timing (trainer bench) ----
    // A timer is a mark in the device's queue: timer_record places it after the work queued
    // so far, and timer_elapsed waits until both marks are reached and gives the device
    // time between them, in milliseconds. So a benchmark times the device's work, not how
    // long the host took to queue it. CUDA events on CUDA (resolution about half a
    // microsecond); on the CPU, whose ops are done when they return, the monotonic clock
    // read at timer_record. Both backends fill these four (see BACKEND_OTHER_OPS below).
    int (*timer_create)(const Backend *b, void **timer, Status *st);
    int (*timer_record)(const Backend *b, void *timer, Status *st);
    int (*timer_elapsed)(const Backend *b, void *start, void *end, double *ms, Status *st);
    void (*timer_destroy)(const Backend *b, void *timer);

    // ---- pinned host buffers (staging batches through the host) ----
    // Host memory that copy_to_device reads asynchronously: page-locked on CUDA (a copy
    // from pageable memory makes the host wait while the driver stages the bytes through
    // a pinned buffer of its own, so the host cannot prepare the next batch meanwhile);
    // plain memory on the CPU, whose copies are done when they return. Because the copy
    // may still be reading when copy_to_device returns, each buffer carries a fence:
    // pinned_fence after queuing the copies that read it, and pinned_wait (from any
    // thread: a prefetch thread refills the buffer) before writing to it again; a buffer
    // never fenced is ready. Both backends fill these four (see BACKEND_OTHER_OPS below).
    int (*pinned_alloc)(const Backend *b, size_t bytes, void **ptr, Status *st);
    void (*pinned_free)(const Backend *b, void *ptr);
    int (*pinned_fence)(const Backend *b, void *ptr, Status *st);
    int (*pinned_wait)(const Backend *b, void *ptr, Status *st);

    // ---- data ----
    // A batch from a dataset held on the device as bytes: out_images[k] = sample
    // indices[k] of images, transformed by g->transform with indices[k] as its index
    // (g->sample_size values each), and out_labels[k] = labels[indices[k]], for
    // k < g->count. Keeping the bytes on the device and gathering there moves 4 bytes per
    // batch sample index across the bus instead of 4 bytes per pixel.
    // Labels are checked on the way, so that a bad one never reaches a loss kernel (where
    // PyTorch would stop with "device-side assert triggered"): a label >= classes is written
    // as 0 and *first_bad_sample (device memory) becomes the smallest dataset index with
    // such a label, for the host to read at its next sync; untouched when all are valid.
    int (*gather_samples)(const Backend *b, const GatherArgs *g, const GatherSamplesTensors *t,
                          Status *st);
#define BACKEND_DATA_OPS(X) X(gather_samples)

    // ---- linear algebra ----
    // C = alpha * op(A) op(B) + beta * C as GemmArgs describes.
    int (*gemm)(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st);
    // C = act(alpha * op(A) op(B) + beta * C + bias[c] in every row) in one pass over C
    // where the backend can (bias may be NULL): a dense layer and its act= activation.
    // The result is what gemm, add_bias_rows and activation_forward give in turn.
    // The bias is f32; with a bf16 or f16 C it is rounded to C's type before it is added
    // to the f32 sum (cuBLASLt's epilogue takes a bias of its output's type; PyTorch's
    // autocast rounds a Linear's bias too), and C is rounded once after the activation.
    int (*gemm_bias_activation)(const Backend *b, const GemmArgs *g,
                                const GemmBiasActivationTensors *t, const FusedActivation *act,
                                Status *st);
    // y[r][c] += bias[c] for every row.
    int (*add_bias_rows)(const Backend *b, const AddBiasRowsArgs *args, Status *st);
    // out[c] = beta * out[c] + sum_r x[r][c]  (bias gradient), x stored as x_dtype (f32,
    // bf16 or f16), out f32.
    int (*sum_rows)(const Backend *b, const SumRowsArgs *args, Status *st);
    // dst = (accumulate ? dst : 0) + src, n values, each stored in its own dtype (f32, bf16
    // or f16; the two may be equal): the sum in f32, rounded to nearest even once on the
    // store. Where activations change storage (graph_set_storage's casts) and where a dense
    // layer's f32 master weights become the 16-bit copy its GEMMs read.
    int (*convert)(const Backend *b, const ConvertArgs *args, Status *st);
    // y = (accumulate ? y : 0) + x[0] + ... + x[count - 1], n values each, all stored as
    // `dtype` (f32, bf16 or f16), 1 <= count <= BACKEND_ACCUMULATE_MAX: summed in f32 in
    // that order and rounded once on the store, so an `add` of k 16-bit inputs rounds once,
    // not k - 1 times as adding them into y one by one would. Gradient accumulation where
    // an output fans out, and `add`'s sum. `x` is host memory (an array of device pointers).
    int (*accumulate)(const Backend *b, const AccumulateArgs *args, Status *st);
#define BACKEND_LINEAR_ALGEBRA_OPS(X) X(gemm) X(gemm_bias_activation) X(add_bias_rows)        \
    X(sum_rows) X(convert) X(accumulate)

    // ---- elementwise ----
    // gelu is the exact form, x * Phi(x) with the normal CDF via erf (PyTorch's default),
    // not the tanh approximation. x and y are stored as `dtype` (f32, bf16 or f16).
    int (*activation_forward)(const Backend *b, const ActivationForwardArgs *args, Status *st);
    // dx = (accumulate ? dx : 0) + dy * f'(x); x and y are the forward input and output.
    // x, y, dy and dx are stored as `dtype`; dx is rounded once, after the accumulation.
    int (*activation_backward)(const Backend *b, const ActivationBackwardArgs *args, Status *st);
    // A dense layer's fused activation and bias gradients in one pass over a rows x cols
    // matrix: dx = dy * f'(y) with f' from the activation's output y (act is relu,
    // leaky_relu, sigmoid or tanh, whose derivatives follow from it; y stands in for x),
    // and dbias[c] = beta * dbias[c] + sum_r dx[r][c] (dbias may be NULL). The same as
    // activation_backward (x = y, no accumulation), then sum_rows. y, dy and dx are stored
    // as `dtype` (f32, bf16 or f16); dbias is f32 and sums the unrounded f32 dx.
    int (*activation_bias_backward)(const Backend *b, const FusedActivation *act,
                                    const ActivationBiasBackwardTensors *t, Status *st);
    // Inverted dropout: y = x * mask, mask = keep ? 1/(1-rate) : 0, drawn from a
    // counter-based hash of (seed, index) so a step is reproducible on any backend.
    // x and y are stored as `dtype` (f32, bf16 or f16); the mask is f32 whatever it is.
    int (*dropout_forward)(const Backend *b, const DropoutForwardArgs *args, Status *st);
    // dx = (accumulate ? dx : 0) + dy * mask; dy and dx stored as `dtype`, the mask f32.
    int (*dropout_backward)(const Backend *b, const DropoutBackwardArgs *args, Status *st);
#define BACKEND_ELEMENTWISE_OPS(X) X(activation_forward) X(activation_backward)               \
    X(activation_bias_backward) X(dropout_forward) X(dropout_backward)

    // ---- losses (per-row values stay on the device until the caller reads them) ----
    // probs = softmax(logits); row_stats is [rows][2]: row_stats[2r] = -log probs[r][label],
    // row_stats[2r + 1] = 1 when argmax == label, else 0. Side by side, so that one column
    // sum (sum_rows over 2 columns) makes a step's loss and accuracy sums, one kernel
    // where a small step has about twenty. With dlogits non-NULL the same pass also writes
    // what softmax_cross_entropy_backward would with this scale and accumulate 0, bit for
    // bit: the gradient made while probs are at hand, one kernel less. dlogits must not
    // overlap logits or probs. Labels are already validated to lie in [0, classes).
    int (*softmax_cross_entropy_forward)(const Backend *b,
                                         const SoftmaxCrossEntropyForwardArgs *args, Status *st);
    // dlogits = (probs - onehot(label)) * scale.
    int (*softmax_cross_entropy_backward)(const Backend *b,
                                          const SoftmaxCrossEntropyBackwardArgs *args, Status *st);
    // Targets are one-hot labels: row_stats[2r] = sum_c (y - t)^2, row_stats[2r + 1] as
    // above.
    int (*mse_forward)(const Backend *b, const MseForwardArgs *args, Status *st);
    // dy = 2 (y - t) * scale.
    int (*mse_backward)(const Backend *b, const MseBackwardArgs *args, Status *st);
#define BACKEND_LOSS_OPS(X) X(softmax_cross_entropy_forward)                                  \
    X(softmax_cross_entropy_backward) X(mse_forward) X(mse_backward)

    // ---- batch normalisation (PyTorch's BatchNorm1d/2d semantics) ----
    // x, y, dy and dx are [n, channels, spatial]: spatial = H*W after a convolution, 1 after
    // dense (each feature is a channel), stored as a->dtype. Statistics are per channel over
    // n * spatial values, summed in double from the widened values; y and dx are rounded
    // once on the store (dx after adding what it holds, when accumulate_dx).
    // Training: normalise with the batch mean and biased variance, save the mean and
    // 1/sqrt(var + eps) per channel for backward, and update
    // running = (1 - momentum) * running + momentum * batch statistic, with the unbiased
    // variance. With one value per channel (n * spatial == 1) the unbiased variance is
    // undefined; the running statistics are then left unchanged.
    int (*batchnorm_forward_training)(const Backend *b, const BatchnormArgs *a,
                                      const BatchnormForwardTensors *t, Status *st);
    // Evaluation: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta. Unless
    // NULL, save_mean and save_invstd receive running_mean and 1/sqrt(running_var + eps), so
    // batchnorm_backward can differentiate through the fixed statistics.
    int (*batchnorm_forward_inference)(const Backend *b, const BatchnormArgs *a,
                                       const BatchnormInferenceTensors *t, Status *st);
    // dgamma = sum dy * xhat and dbeta = sum dy per channel (added to when
    // accumulate_params); dx = (accumulate_dx ? dx : 0) + the input gradient, or skipped when
    // dx is NULL. batch_statistics: 1 when save_mean/save_invstd came from this batch
    // (training; the gradient also flows through them), 0 when they were fixed
    // (evaluation: dx = dy * gamma * invstd).
    int (*batchnorm_backward)(const Backend *b, const BatchnormArgs *a,
                              const BatchnormBackwardTensors *t, Status *st);
    // The same training forward and backward cut where statistics cross processes
    // (--sync-batchnorm, PyTorch's SyncBatchNorm): each rank sums its share, the sums are
    // added over the ranks in between, then each rank finishes its share from the totals,
    // so N ranks with batch B/N each compute what one process computes with batch B.
    // `sums` is device memory, 2 * channels + 1 doubles: two per-channel sums, then the
    // count of values they ran over. n may be 0 (a rank with no samples in the step joins
    // with zero sums). Forward: sums = [sum x | sum x^2 | n * spatial].
    int (*batchnorm_channel_sums)(const Backend *b, const BatchnormArgs *a, const void *x,
                                  double *sums, Status *st);
    // batchnorm_forward_training with the statistics of the summed `sums`: mean = sum x / m,
    // biased variance sum x^2 / m - mean^2 (to normalise), unbiased for running_var; the
    // running statistics move (or not, m == 1) by m, the total count, even when n is 0.
    int (*batchnorm_forward_with_sums)(const Backend *b, const BatchnormArgs *a,
                                       const BatchnormForwardWithSumsTensors *t, Status *st);
    // Backward's local sums = [sum dy | sum dy * xhat | n * spatial], and from them this
    // share's dbeta and dgamma (added to when accumulate_params): the parameter gradients
    // are summed over ranks with the others, so they stay each rank's own here.
    int (*batchnorm_backward_channel_sums)(const Backend *b, const BatchnormArgs *a,
                                           const BatchnormBackwardChannelSumsTensors *t,
                                               Status *st);
    // dx = (accumulate_dx ? dx : 0) + batchnorm_backward's batch-statistics dx, with the
    // means of dy and dy * xhat taken from the summed `sums` (over their count m).
    int (*batchnorm_backward_data_with_sums)(const Backend *b, const BatchnormArgs *a,
                                             const BatchnormBackwardDataWithSumsTensors *t,
                                             Status *st);
#define BACKEND_BATCHNORM_OPS(X) X(batchnorm_forward_training)                                \
    X(batchnorm_forward_inference) X(batchnorm_backward) X(batchnorm_channel_sums)            \
    X(batchnorm_forward_with_sums) X(batchnorm_backward_channel_sums)                         \
    X(batchnorm_backward_data_with_sums)

    // ---- convolution and pooling (NCHW) ----
    // Scratch bytes the conv2d ops want for g->batch samples. The caller allocates it
    // (through its allocator, so memory limits apply) and passes it to every conv2d op;
    // given less, but at least one sample's worth, an op works in smaller pieces.
    // x, w, y, dx and dy are stored as g->dtype (f32, bf16 or f16): the sums are f32 and
    // each stored value is rounded once, as for the GEMMs.
    int (*conv2d_workspace_size)(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                 Status *st);
    // The least workspace the conv ops below run in, given less than
    // conv2d_workspace_size asks for: slower, never wrong (CUDA: none, cuDNN's algorithms
    // that need none or direct kernels; CPU: one sample's lowering).
    int (*conv2d_least_workspace)(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                  Status *st);
    // y = conv(x, w) + bias; bias may be NULL.
    int (*conv2d_forward)(const Backend *b, const Conv2dGeometry *g, const Conv2dForwardTensors *t,
                          Status *st);
    // y = act(conv(x, w) + bias), the bias broadcast per output channel (it may be NULL):
    // what conv2d_forward then activation_forward give, with the same workspace contract.
    int (*conv2d_forward_bias_activation)(const Backend *b, const Conv2dGeometry *g,
                                          const Conv2dForwardTensors *t,
                                          const FusedActivation *act, Status *st);
    // dx = (accumulate ? dx : 0) + d loss / d x, from dy and the weights.
    int (*conv2d_backward_data)(const Backend *b, const Conv2dGeometry *g,
                                const Conv2dBackwardDataTensors *t, Status *st);
    // dw = (accumulate ? dw : 0) + d loss / d w over the batch; dbias likewise gets the
    // sum of dy over N, H, W (dbias may be NULL). dw and dbias are f32.
    int (*conv2d_backward_filter)(const Backend *b, const Conv2dGeometry *g,
                                  const Conv2dBackwardFilterTensors *t, Status *st);
    // y = the max of each window; argmax[i] = the index (h * in_w + w), within its
    // (sample, channel) input plane, of the element that won output i, so backward needs
    // no search; argmax is laid out as y is. Windows
    // are scanned row-major; the first maximum wins a tie and a NaN wins its window (as in
    // PyTorch); padding never wins. The pooling ops' x, y, dy and dx are all stored as
    // `dtype` (f32, bf16 or f16): a max is one of its inputs, so it needs no rounding;
    // averages and gradient sums are computed in f32 and rounded once per stored value.
    int (*maxpool_forward)(const Backend *b, const Pool2dGeometry *g,
                           const MaxpoolForwardTensors *t, Status *st);
    // dx = (accumulate ? dx : 0) + each dy routed to its window's argmax.
    int (*maxpool_backward)(const Backend *b, const Pool2dGeometry *g,
                            const MaxpoolBackwardTensors *t, Status *st);
    int (*avgpool_forward)(const Backend *b, const Pool2dGeometry *g,
                           const AvgpoolForwardTensors *t, Status *st);
    // dx = (accumulate ? dx : 0) + each dy spread evenly over its window.
    int (*avgpool_backward)(const Backend *b, const Pool2dGeometry *g,
                            const AvgpoolBackwardTensors *t, Status *st);
    // dst = (accumulate ? dst : 0) + src in the other layout: src holds n images of
    // `channels` x `pixels` (H * W) values laid out as `from` says, dst the same images in
    // the other layout (NCHW <-> NHWC); both stored as dtype, a sum rounded once. Where
    // NHWC activations meet layers that read NCHW order (flatten before a dense layer).
    int (*layout_convert)(const Backend *b, const LayoutConvertArgs *args, Status *st);
#define BACKEND_CONV_POOL_OPS(X) X(conv2d_workspace_size) X(conv2d_least_workspace)           \
    X(conv2d_forward) X(conv2d_forward_bias_activation) X(conv2d_backward_data)               \
    X(conv2d_backward_filter) X(maxpool_forward) X(maxpool_backward) X(avgpool_forward)       \
    X(avgpool_backward) X(layout_convert)

    // ---- norms (gradient clipping, finding where values went non-finite) ----
    // *sum = the sum of x[i]^2 over n values, accumulated in double (a finite float
    // tensor's sum then stays finite, so a NaN or infinite sum means a NaN or infinite
    // element); `sum` is device memory, one double, for the caller to read at its sync.
    int (*sum_squares)(const Backend *b, const float *x, size_t n, double *sum, Status *st);
    // x[i] *= factor.
    int (*scale)(const Backend *b, float *x, float factor, size_t n, Status *st);
#define BACKEND_NORM_OPS(X) X(sum_squares) X(scale)

    // ---- optimizers (fused: one pass over the parameter) ----
    int (*sgd_update)(const Backend *b, const SgdUpdateTensors *t, const SgdHyper *h, Status *st);
    int (*adam_update)(const Backend *b, const AdamUpdateTensors *t, const AdamHyper *h,
                       Status *st);
    // The same update of `count` tensors (the array is host memory), bit for bit what
    // sgd_update / adam_update give each. On the GPU, one launch for many tensors: a
    // small tensor's update is a few microseconds of launch for next to no work.
    int (*sgd_update_multi)(const Backend *b, const OptimizerTensor *tensors, int count,
                            const SgdHyper *h, Status *st);
    int (*adam_update_multi)(const Backend *b, const OptimizerTensor *tensors, int count,
                             const AdamHyper *h, Status *st);
#define BACKEND_OPTIMIZER_OPS(X) X(sgd_update) X(adam_update) X(sgd_update_multi)             \
    X(adam_update_multi)

};

// The ops every backend must fill, listed once, family by family beside their slots above
// (so a new op's slot and its entry are one edit): kernels/backend.c's completeness check
// and each family's parity test (tests/gpu/test_cuda_parity_FAMILY.c, whose harness checks
// that every op of its family's list was exercised) expand these lists, so an op added here
// is reported missing by a backend that does not register it and fails its family's parity
// test until it has a case there.
#define BACKEND_OPS(X) \
    BACKEND_QUERY_OPS(X) \
    BACKEND_MEMORY_OPS(X) \
    BACKEND_DATA_OPS(X) \
    BACKEND_LINEAR_ALGEBRA_OPS(X) \
    BACKEND_ELEMENTWISE_OPS(X) \
    BACKEND_LOSS_OPS(X) \
    BACKEND_BATCHNORM_OPS(X) \
    BACKEND_CONV_POOL_OPS(X) \
    BACKEND_NORM_OPS(X) \
    BACKEND_OPTIMIZER_OPS(X)

// The rest of the table, kept out of BACKEND_OPS so that the completeness check stays
// meaningful: make_current, range_push/pop and the CUDA Graph ops (capture_begin to
// graph_destroy, tested by tests/gpu/test_cuda_graph_step.c) are NULL on the CPU by
// design, the pinned_* ops (filled by both backends) are checked CPU against CUDA by
// tests/gpu/test_cuda_pinned_staging.c rather than the parity test, and the timer_* ops
// (filled by both, used only by `trainer bench`) by tests/unit/test_backend_timer.c and
// tests/gpu/test_cuda_timer.c. kernels/backend.c asserts that the two lists together name
// every slot of the table.
#define BACKEND_OTHER_OPS(X)                                                                   \
    X(make_current) X(range_push) X(range_pop) X(capture_begin) X(capture_end)               \
    X(graph_launch) X(graph_destroy) X(timer_create) X(timer_record)                          \
    X(timer_elapsed) X(timer_destroy) X(pinned_alloc) X(pinned_free) X(pinned_fence)          \
    X(pinned_wait)

// The most sources one accumulate call sums (an `add` of LAYER_MAX_INPUTS inputs: 4).
#define BACKEND_ACCUMULATE_MAX 4

// How many ops of BACKEND_OPS are NULL; their names, comma-separated, into `names`.
int backend_missing_ops(const Backend *b, char *names, size_t size);

// What a backend on a device of compute capability `compute` (times ten; 0: the CPU)
// supports, as `supports` answers it: storage in f32, bf16 or f16, NCHW or NHWC, on
// either; GEMMs and convolutions in f32 anywhere, in bf16 or f16 on a GPU of at least
// precision_min_compute (base/precision.h). A pure function, so that a device that is not
// open (core/precision_check.c's PrecisionTarget) gets the same answer.
int backend_supports_on(int compute, OpFamily family, DType dtype, Layout layout);
// Whether GEMMs and convolutions can compute in `p` there: bf16 and fp16 as
// backend_supports_on answers for OP_FAMILY_MATMUL; the default, fp32 and tf32 always (tf32
// runs as fp32 where there is none: precision_on_gpu).
int backend_precision_supported_on(int compute, Precision p);
// 0 when `b` stores tensors as `dtype` (b->supports, OP_FAMILY_STORAGE); otherwise
// STATUS_RUNTIME_ERROR naming `op` and the dtype. Every op that takes a DType checks with it.
int backend_dtype_check(const Backend *b, DType dtype, const char *op, Status *st);
// 0 when `b`'s GEMMs compute on operands stored as `dtype` (b->supports,
// OP_FAMILY_MATMUL); otherwise STATUS_NO_DEVICE naming `op`, the device's compute capability
// (b->compute) and the one the dtype needs, as the device opener refuses the precision. The CUDA GEMMs (A and B)
// and convolutions check with it, so op and query agree. The CPU's do not: they widen 16-bit operands
// exactly and compute in f32, which is its "f32 only" answer.
int backend_matmul_check(const Backend *b, DType dtype, const char *op, Status *st);
// The same for accumulate's dtype, and its 1 to BACKEND_ACCUMULATE_MAX sources.
int backend_accumulate_check(const Backend *b, DType dtype, int count, Status *st);
// "NCHW" or "NHWC" (for messages and test output); "?" for any other value.
const char *layout_name(Layout layout);
// 0 when `layout` is NCHW or NHWC; otherwise STATUS_RUNTIME_ERROR naming `op` (a geometry
// built wrong upstream, refused rather than read as NCHW).
int backend_layout_check(Layout layout, const char *op, Status *st);
// layout_convert's arguments on every backend: a storage dtype, a known layout, no
// negative count.
int backend_layout_convert_check(const Backend *b, DType dtype, int n, int channels,
                                 int pixels, Layout from, Status *st);

// The CPU backend; `threads` <= 0 lets OpenBLAS choose.
const Backend *cpu_backend(void);
void cpu_backend_set_threads(int threads);
// The kernel set OpenBLAS chose ("SkylakeX", "Prescott", ...).
const char *cpu_blas_core_name(void);
// The OpenBLAS kernel set (for OPENBLAS_CORETYPE) this CPU should use when the library
// fell back to its generic one; NULL when the library's own choice is fine.
const char *cpu_blas_better_core(void);
// Treat denormal floats as zero on this thread (and the threads it starts later).
void cpu_backend_flush_denormals(void);
// What the host can still give this process, in bytes, from /proc/meminfo's MemAvailable
// (plus free swap) and, inside a memory cgroup (a container), the room under each level's
// limit; SIZE_MAX when none of it can be read.
size_t cpu_host_available_memory(void);
// The same from the files' texts (tests): `meminfo` as /proc/meminfo reads, each of the
// `levels` cgroup levels as {memory.max or memory.limit_in_bytes, memory.current or
// memory.usage_in_bytes, memory.stat}, NULL where a file is missing.
size_t cpu_available_memory_from(const char *meminfo, const char *const (*levels)[3],
                                 int level_count);

// The hash both backends use for dropout: uniform in [0, 1) from (seed, index). Index i
// and seed s draw what index i + k draws with seed s - k * DROPOUT_HASH_STEP (mod 2^64).
#define DROPOUT_HASH_STEP 0x9E3779B97F4A7C15ull
static inline float dropout_uniform(uint64_t seed, uint64_t index) {
    uint64_t z = seed + DROPOUT_HASH_STEP * (index + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#ifdef __cplusplus
}
#endif

#endif
