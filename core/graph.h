// The graph: layers built from a model file, validated, then run on one device.
//
// graph_build checks everything that can be checked without data or a device (kinds,
// keys, values, wiring, shapes, dtypes, the loss) so a model that passes `trainer check`
// does not fail at step 10 000. graph_check_dataset adds what needs the data.
#ifndef TRAINER_GRAPH_H
#define TRAINER_GRAPH_H

#include "core/layer.h"
#include "core/run_config.h"
#include "base/rng.h"
#include "data/dataset.h"
#include "models/model_file.h"

typedef struct Graph {
    char path[512];
    Layer **layers;        // execution order: input first, loss last
    int count;
    Layer *input;
    Layer *loss;
    int allocated_batch;   // batch the activations are allocated for; 0 before
    Tensor labels;         // [batch] int32 on the device
    long optimizer_steps;  // updates applied so far: Adam's bias correction continues from it
    // [4] on the device: running sums of loss and correct predictions for the epoch, then
    // for the step in progress when it runs as several micro-batches (a step redone after
    // an out-of-memory must not count its first attempt).
    Tensor loss_sums;
    // What graph_set_storage last stored the 16-bit-capable layers' activations in (f32
    // until it is called).
    DType activation_dtype;
    // The model file's text the graph was built from (owned; NULL when it had none): what a
    // checkpoint records, whatever the file on disk says by then.
    char *model_text;
} Graph;

// The allocation that ran out of memory: its layer, and the bytes it asked for (0 when a
// kind's own state failed), for the one-line report when training continues in
// micro-batches.
typedef struct AllocationFailure {
    char layer[LAYER_NAME_MAX];
    size_t bytes;
} AllocationFailure;

// Builds the graph and reads the `optimizer` and `train` statements into *config (NULL
// when only the graph is wanted: the statements are checked all the same).
int graph_build(const ModelFile *file, Graph *g, RunConfig *config, Status *st);
void graph_free(Graph *g);

// Lets each dense or conv2d layer whose act= activation can be differentiated from its
// output alone (relu, leaky_relu, sigmoid, tanh), and whose output nothing else reads, apply
// that activation in its own forward op (gemm_bias_activation,
// conv2d_forward_bias_activation), writing the activation layer's output: one pass over
// the output instead of three on a GPU, and no pre-activation tensor (the activation's
// backward works from its output). enabled 0 undoes it. graph_build applies it unless the
// train statement says fuse=false; call it again (before graph_allocate) to override.
// Returns how many layers were fused. The result is bit for bit the same on the CPU.
int graph_fuse_activations(Graph *g, int enabled);

// Stores the activations (and their gradients) of the layers that can keep them in 16
// bits (LayerKind.stores_16bit: every kind but the input and the losses) as `dtype`, bf16
// or f16 (precision_activation_dtype of the precision the run computes in), and every
// other layer's in f32, with a `cast` layer (core/layers/cast.c) between a producer and a
// reader that store differently; a view (flatten, reshape) keeps its input's dtype.
// DTYPE_F32 removes the casts again. Call it after the last graph_fuse_activations (a
// fused activation's output is its owner's dtype) and before graph_allocate and
// memory_plan. Layers keep their order, a cast right after what it converts. It also takes
// out graph_set_layouts' conversions and lays every layer out NCHW again: call
// graph_set_layouts after it. Returns 0 or STATUS_RUNTIME_ERROR (out of host memory).
int graph_set_storage(Graph *g, DType dtype, Status *st);

// Lays out the images between a network's convolutions NHWC when `nhwc` is set (the
// backend's nhwc_activations): tensor-core convolutions read NHWC, so cuDNN transposes
// NCHW activations before and after each one. Every layer of LAYOUT_USE_EITHER whose
// inputs and readers can take NHWC (Layer.layout); the trunk ends at a flatten, which then
// copies the images into NCHW order (layer_reorders_input), or a global_avgpool. A model
// input of several channels (or its cast under bf16/fp16) gets a `to_nhwc` layer
// (core/layers/to_nhwc.c) between it and the layers that go NHWC, one shared by all of
// them, and only when some do. Parameters and checkpoints do not change; results are bit
// for bit NCHW's on the CPU. nhwc 0, or a graph without a conv2d, leaves every layer NCHW
// and no conversion. It may be called again with either value: it first takes out the
// conversions it put in. Call it after graph_set_storage (casts take their input's layout)
// and before graph_allocate and memory_plan; graph_nhwc_layers says how many layers are
// NHWC. Returns 0 or STATUS_RUNTIME_ERROR (out of host memory).
int graph_set_layouts(Graph *g, int nhwc, Status *st);
// How many layers graph_set_layouts last laid out NHWC (its conversions included).
int graph_nhwc_layers(const Graph *g);

// Sample shape and label range of a dataset against the model. `what` names the data
// in messages ("fashion-mnist train").
int graph_check_dataset(const Graph *g, const Dataset *ds, const char *what, Status *st);

int graph_classes(const Graph *g);
// Trainable parameters (not buffers such as running statistics): of one layer, of the graph.
long layer_parameter_count(const Layer *l);
long graph_parameter_count(const Graph *g);
// Bytes of activations (and their gradients when training) per sample.
size_t layer_activation_bytes(const Layer *l, int training);

// tensor_alloc that, on out-of-memory, names the tensor (`what` of layer l) and gives a
// hint for per-batch tensors (activations) or fixed ones (parameters).
int graph_alloc_tensor(Tensor *t, Allocator *a, const Layer *l, const char *what, int per_batch,
                       Status *st);

// Allocate parameters (with their gradients) and initialise them from the seed.
int graph_init_params(Graph *g, const Backend *b, Allocator *a, uint64_t seed, Status *st);
// Caps the scratch workspace of every layer's ops at `bytes` from the next graph_allocate
// on (memory_plan counts the cap); a backend runs what fits (cuDNN: its best-ranked
// algorithm within the cap, else our direct kernels), never taking less than the least it
// runs in (conv2d_least_workspace). For a memory limit that holds the parameters and one
// sample's activations, but not beside them the workspace cuDNN's fastest algorithms ask for.
// SIZE_MAX lifts the cap.
void graph_limit_workspace(Graph *g, size_t bytes);
// Whether graph_limit_workspace has capped it.
int graph_workspace_limited(const Graph *g);

// Allocate activations, gradients and per-layer state for up to `batch` samples. When
// that runs out of memory, *failure (may be NULL) says where.
int graph_allocate(Graph *g, const Backend *b, Allocator *a, int batch,
                   AllocationFailure *failure, Status *st);
// Give back what graph_allocate took (activations, gradients, per-layer state); the
// parameters, their gradients and the optimizer state stay.
void graph_release_activations(Graph *g);

// Run every layer forward, or every layer backward from the loss.
int graph_forward(Graph *g, const LayerContext *ctx, Status *st);
int graph_backward(Graph *g, const LayerContext *ctx, Status *st);
// Layer `index` (1 .. count - 1) alone, forward or backward, as the two above run each
// (inside its profiler range, a failure naming the layer): for a caller that times the
// layers one by one (`trainer bench train --per-layer`). Backward goes from count - 1 down.
int graph_run_layer(Graph *g, int index, const LayerContext *ctx, int backward, Status *st);

// Copy `count` samples (host f32) and labels (host int32) into the input and label tensors.
int graph_load_batch(Graph *g, const Backend *b, const float *images, const int32_t *labels,
                     int count, Status *st);
// Running sums on the device, so a step needs no host sync to report its loss: zero them,
// add the last forward's `count` rows, and read them (a sync) only when the host needs them.
int graph_reset_loss_sums(Graph *g, const Backend *b, Status *st);
// into_step: add to the step's sums instead of the epoch's; graph_commit_step_loss_sums
// then moves them to the epoch's, and graph_discard_step_loss_sums drops them.
int graph_add_loss_sums(Graph *g, const Backend *b, int count, int into_step, Status *st);
int graph_commit_step_loss_sums(Graph *g, const Backend *b, Status *st);
int graph_discard_step_loss_sums(Graph *g, const Backend *b, Status *st);
int graph_read_loss_sums(const Graph *g, const Backend *b, double *loss_sum, double *correct,
                         Status *st);
// Sum of the loss and of correct predictions over the last forward's `count` rows.
int graph_read_loss(const Graph *g, const Backend *b, int count, double *loss_sum,
                    double *correct, Status *st);

#endif
