// The layer interface. Each layer kind lives in its own file under core/layers/ and is a
// small table of functions: read its attributes, infer its output shape, run forward and
// backward. The graph owns the layers and wires them; a kind only sees its own layer.
#ifndef TRAINER_LAYER_H
#define TRAINER_LAYER_H

#include <stdint.h>

#include "core/alloc.h"
#include "core/export_node.h"
#include "base/status.h"
#include "core/tensor.h"
#include "kernels/backend.h"
#include "models/model_file.h"

#define LAYER_MAX_INPUTS 4
#define LAYER_MAX_PARAMS 4
#define LAYER_NAME_MAX 64
// LayerKind.input_count for kinds that sum or join 2 to LAYER_MAX_INPUTS inputs (`add`).
#define LAYER_INPUTS_VARIADIC (-1)

// A trainable tensor with its gradient and the optimizer's state for it, or a buffer:
// state that is saved in weights files with the parameters but is not trained
// (batchnorm's running statistics, PyTorch's register_buffer). A buffer has no gradient
// and no optimizer state, and is not counted as a parameter.
typedef struct Param {
    char name[LAYER_NAME_MAX + 16];  // "dense1.weight": the name in weights files
    Shape shape;
    float init_bound;                // initialised uniform in [-bound, bound]
    int init_is_constant;            // 1: initialised to init_constant instead
    float init_constant;
    int buffer;                      // 1: not trainable (no grad, skipped by the optimizer)
    Tensor value;
    Tensor grad;
    Tensor state[2];                 // momentum / Adam moments, owned by the optimizer
} Param;

// What a layer's forward/backward may use besides its own tensors.
struct Layer;  // below; the backward hook names it

typedef struct LayerContext {
    const Backend *backend;
    Allocator *alloc;
    int batch;                  // samples in this step (<= the allocated batch)
    int training;               // 0: evaluation behaviour (dropout off)
    uint64_t seed;              // differs every step, for dropout masks
    // Where this pass's first sample sits in the step's batch (a micro-batch's or a
    // replica's start), so that dropout draws the mask the whole batch would have drawn
    // for these samples: splitting a step then leaves its result unchanged.
    int sample_offset;
    const int32_t *labels;      // device memory, batch entries; for losses
    int accumulate_param_grads; // 1: add to parameter gradients (micro-batches)
    // Samples the loss is averaged over: the whole step's batch when this pass sees only a
    // slice of it (a micro-batch, or one replica's share), so that the slices' gradients
    // add up to the full batch's. 0: this pass's own `batch`.
    int loss_batch;
    // fp16's dynamic loss scaling (core/loss_scale.h): the loss's gradient is multiplied
    // by it, so every gradient backward computes is that much larger; 0: 1 (no scaling).
    float loss_scaling;
    // --sync-check: wait for the device after every layer, so that an error a kernel
    // raises asynchronously is reported at the layer that launched it (what
    // CUDA_LAUNCH_BLOCKING=1 does for PyTorch, but naming the layer). Slow; for debugging.
    int sync_check;
    // Called after each layer's backward pass when not NULL: the layer's parameter
    // gradients are then final for this pass, so a run over several processes can start
    // summing them while backward goes on through the layers below (core/grad_buckets.h).
    int (*after_layer_backward)(void *user, struct Layer *layer, Status *st);
    void *after_layer_user;
    // --sync-batchnorm under mpirun (core/train.c sets it; NULL otherwise): adds `count`
    // doubles of device memory in place over every rank, so that a batchnorm normalises
    // with the statistics of the whole step's batch. Every rank calls it equally often, in
    // the same layer order, including a rank with no samples in the step (batch 0).
    int (*sum_over_ranks)(void *user, double *values, size_t count, Status *st);
    void *sum_over_ranks_user;
} LayerContext;

typedef struct Layer Layer;
typedef struct LayerKind LayerKind;

// What a layer kind multiplies with (LayerKind.matmul).
typedef enum LayerMatmul {
    LAYER_MATMUL_NONE,
    LAYER_MATMUL_GEMM,
    LAYER_MATMUL_CONVOLUTION
} LayerMatmul;

// What a loss layer's last forward left on the device, two values per sample, so that the
// graph can sum and read them without knowing how the kind keeps its state.
typedef struct LossRows {
    Tensor row_stats;  // [batch, 2]: each sample's loss, then 1 where argmax == label
    int input_grad_written;  // the last forward also wrote the input's gradient
} LossRows;

// How a kind treats NHWC images (graph_set_layouts, Layer.layout).
typedef enum LayoutUse {
    LAYOUT_USE_NCHW,         // reads and writes NCHW only (input, dense, reshape, losses)
    LAYOUT_USE_EITHER,       // images in and out in Layer.layout (conv2d, pooling, batchnorm,
                             // and the elementwise act, dropout, add, cast)
    LAYOUT_USE_READS_EITHER, // reads images in its input's layout, writes a vector in NCHW
                             // order (flatten, global_avgpool)
    LAYOUT_USE_TO_NHWC       // reads NCHW images, writes them NHWC (to_nhwc, which
                             // graph_set_layouts puts after a several-channel model input)
} LayoutUse;

struct Layer {
    const LayerKind *kind;
    char name[LAYER_NAME_MAX];
    const char *path;               // model file, for errors
    int line, column;               // statement place, for errors
    Layer *inputs[LAYER_MAX_INPUTS];
    int input_count;
    // Per input: does the producer want a gradient at all, and has a later consumer
    // (in backward order) already written it, so that this layer must add to it.
    int input_needs_grad[LAYER_MAX_INPUTS];
    int input_grad_accumulate[LAYER_MAX_INPUTS];
    Shape out_shape;
    DType out_dtype;
    // How the output images (and their gradient) are laid out: NCHW, or NHWC where
    // graph_set_layouts chose it; out_shape stays [channels, h, w] either way.
    Layout layout;
    Tensor output;                  // [batch] + out_shape
    Tensor grad;                    // d loss / d output; unallocated when nobody needs it
    int needs_grad;
    Param params[LAYER_MAX_PARAMS];
    int param_count;
    void *config;                   // kind-specific settings, freed by the graph
    void *state;                    // kind-specific runtime data (kind's release frees it)
    Layer *statement_output;        // for `act=`: the activation layer that follows
    // The act= layer whose activation this layer applies itself: forward through a fused op
    // writing that layer's output (this layer keeps no output of its own), backward from
    // that layer's output and gradient; the activation layer's own forward and backward
    // then do nothing. NULL: each runs on its own. Set by graph_fuse_activations.
    Layer *fused_activation;
    // The most scratch workspace its ops may take (graph_limit_workspace); 0
    // workspace_limited: what the backend asks for. Kinds with workspace honour it.
    int workspace_limited;
    size_t workspace_limit;
};

struct LayerKind {
    const char *name;
    const char *summary;             // one line for `trainer check` and docs
    const char *const *keys;         // kind-specific keys (NULL-terminated)
    int takes_act;                   // accepts `act=`
    int input_count;                 // 0 for input, 1 for most layers, LAYER_INPUTS_VARIADIC
    int is_loss;
    int output_is_view;              // output shares the input's memory (no allocation)
    // Forward statistics span the whole pass (batchnorm): splitting a step into
    // micro-batches changes what it computes, so the split is announced.
    int normalises_over_batch;
    // Whether forward and backward are GEMMs (dense) or convolutions (conv2d): the ops whose
    // inputs --precision rounds, so where a precision the device lacks is refused.
    LayerMatmul matmul;
    // Forward can apply its act= activation in the same op (dense, conv2d), so
    // graph_fuse_activations may fuse the two.
    int fuses_act;
    // Forward and backward work on input, output and their gradients stored in bf16 or f16
    // as well as f32 (Layer.out_dtype says which): under --precision bf16|fp16,
    // graph_set_storage gives such a layer 16-bit activations; every other kind keeps f32,
    // with a cast between them.
    int stores_16bit;
    LayoutUse layout_use;
    // Read the statement's attributes into l->config (keys are already checked).
    int (*configure)(Layer *l, const ModelStatement *s, Status *st);
    // From the inputs' shapes, set out_shape, out_dtype and the params' shapes. Like
    // configure, only for the kinds a model file names: a conversion that graph_set_storage
    // or graph_set_layouts inserts once shapes are known (cast, to_nhwc) has neither, as the
    // pass that inserts it sets its shape, dtype and layout.
    int (*infer)(Layer *l, Status *st);
    // Optional: allocate per-batch state beyond output/grad (e.g. a dropout mask).
    int (*allocate)(Layer *l, const LayerContext *ctx, int batch, Status *st);
    // Required with `allocate`: what it takes for `batch` samples, as the allocator charges
    // it (alloc_charged_bytes), split into per-layer state (masks, argmax, loss rows,
    // statistics) and scratch workspace. The memory plan sums these, so each kind states
    // its own needs beside the code that allocates them.
    int (*planned_bytes)(const Layer *l, const Backend *b, int batch, size_t *state,
                         size_t *workspace, Status *st);
    int (*forward)(Layer *l, const LayerContext *ctx, Status *st);
    // Writes parameter gradients and, where input_needs_grad, the inputs' gradients.
    int (*backward)(Layer *l, const LayerContext *ctx, Status *st);
    // Optional: free l->state (the graph frees config, output, grad and params).
    void (*release)(Layer *l);
    // Optional: the variant the statement chose ("relu" for act), for `trainer check`.
    const char *(*variant)(const Layer *l);
    // Optional: floating-point operations per sample in forward, for `trainer check`.
    double (*flops)(const Layer *l);
    // Required of losses: the per-sample rows the last forward wrote.
    const LossRows *(*loss_rows)(const Layer *l);
    // Optional: what the layer computes at inference, for `trainer export`
    // (core/export_node.h); a kind without it cannot be exported.
    void (*export_node)(const Layer *l, ExportNode *node);
};

// Registry (core/layers/registry.c).
const LayerKind *layer_kind_find(const char *name);
const LayerKind *loss_kind_find(const char *choice);
// The statement words that name layer kinds, by index; NULL past the last.
const char *layer_kind_word(int index);
// The statement words of the kinds between the input and the loss that keep f32
// activations under --precision bf16|fp16 (no stores_16bit; views pass theirs through), as
// "batchnorm, add"; "" when every one stores 16 bits. For messages that say what shrinks.
const char *layer_kinds_keeping_f32(char *buf, size_t size);
// NULL-terminated loss names, for suggestions.
extern const char *const loss_kind_names[];

// The activation an activation layer applies, when its derivative follows from its output
// alone (relu, leaky_relu, sigmoid, tanh; not gelu, which needs its input): 1 and *out
// filled, else 0. Only then can the layer before it drop the input (core/layers/activation.c).
int activation_layer_fusable(const Layer *act, FusedActivation *out);
// For a layer with a fused activation, in its backward: d loss / d its output (the
// pre-activation) into owner->grad, from the activation's output and gradient.
int activation_fused_backward(Layer *owner, const LayerContext *ctx, Status *st);
// Whether l's output images lie differently in NCHW and NHWC: not one channel, nor one
// pixel (where the two are the same bytes), nor a vector.
static inline int layer_layout_matters(const Layer *l) {
    const Shape *s = &l->out_shape;
    return s->rank == 3 && s->dims[0] > 1 && s->dims[1] * s->dims[2] > 1;
}
// Whether l (flatten) turns NHWC images into a vector in NCHW order: then its output is a
// copy, not a view, so that a dense layer's weights mean what they mean without NHWC.
static inline int layer_reorders_input(const Layer *l) {
    return l->kind->output_is_view && l->kind->layout_use == LAYOUT_USE_READS_EITHER &&
           l->input_count == 1 &&
           l->inputs[0]->layout == LAYOUT_NHWC && layer_layout_matters(l->inputs[0]);
}
// Whether l's output is a tensor of its own: not a view of its input, nor written by a
// fused op into its act= layer's output.
static inline int layer_owns_output(const Layer *l) {
    return (!l->kind->output_is_view || layer_reorders_input(l)) && !l->fused_activation;
}

// Shared by kinds: a STATUS_BAD_INPUT error at the layer's statement.
int layer_fail(const Layer *l, Status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
// Reads the required `shape=` of a statement (input, reshape); `missing_hint` says how to
// write it. *column is the value's column, for later errors about the shape.
int layer_read_shape(const Layer *l, const ModelStatement *s, const char *missing_hint, Shape *out,
                     int *column, Status *st);
// What a tensor of `batch` samples of `sample` with `element_size` bytes per value costs.
size_t layer_batch_tensor_bytes(int batch, const Shape *sample, size_t element_size);
// planned_bytes of kinds whose allocate only checks the backend (avgpool).
int layer_plans_nothing(const Layer *l, const Backend *b, int batch, size_t *state,
                        size_t *workspace, Status *st);

// A batch of `images`' output-shaped images ([channels, h, w], stored as its out_dtype) from
// layout `from` into the other (layout_convert: dst = (accumulate ? dst : 0) + src): the
// reordering copies of flatten after NHWC images and of to_nhwc, forward and backward.
int layer_images_convert(const Layer *images, const LayerContext *ctx, Layout from,
                         const void *src, void *dst, int accumulate, Status *st);
// forward/backward of kinds whose output is a view of their input (flatten, reshape).
int layer_view_forward(Layer *l, const LayerContext *ctx, Status *st);
int layer_view_backward(Layer *l, const LayerContext *ctx, Status *st);
// The scalar gradient scale of a mean-over-batch loss, times the loss scaling.
static inline float loss_scale(const LayerContext *ctx) {
    float scaling = ctx->loss_scaling > 0.0f ? ctx->loss_scaling : 1.0f;
    return scaling / (float)(ctx->loss_batch > 0 ? ctx->loss_batch : ctx->batch);
}

#endif
