// The memory plan: what a built graph will hold on a device at a batch size, computed
// before anything is allocated.
//
// The graph is static, so every tensor the training step allocates is known from the
// model: parameters and their gradients (graph_init_params), the optimizer's state
// (optimizer_prepare), each layer's output and output gradient plus what the layer kind's
// `allocate` adds (graph_allocate: dropout masks, maxpool argmax, loss rows, batchnorm's
// saved statistics, conv2d's workspace as the backend sizes it), the labels and loss sums,
// and the dataset copies the training loop uploads when they fit (data/batch_source.c). Each
// tensor is rounded as the allocator rounds it (ALLOC_GRANULE), so on a fresh allocator
// `total` is the stats.peak_in_use that allocating and running a step reaches: exact, not
// an estimate: each layer kind states what its `allocate` takes (LayerKind.planned_bytes).
//
// What the allocator never sees is not in `total`: the CUDA context and the handles and
// internal workspaces of cuBLAS and cuDNN (hundreds of MiB on a GPU, none on the CPU).
// Budget for them with a margin (MEMORY_PLAN_DEVICE_MARGIN) when planning against a
// device's total memory rather than against an allocator limit.
#ifndef TRAINER_MEMORY_PLAN_H
#define TRAINER_MEMORY_PLAN_H

#include <stddef.h>

#include "core/graph.h"

// The fraction of a device's total memory a plan should leave unplanned when the budget is
// the device itself (`trainer check` without --memory-limit): the CUDA context, library
// handles and workspaces, other processes. A --memory-limit needs none: the allocator
// enforces it on exactly the bytes the plan counts.
#define MEMORY_PLAN_DEVICE_MARGIN 0.10

// The largest batch memory_plan_largest_batch considers (the CLI's --batch maximum).
#define MEMORY_PLAN_MAX_BATCH (1 << 20)

typedef struct MemoryPlanOptions {
    int batch;
    // `trainer train`: the optimizer whose state is planned (with the training set);
    // NULL: `trainer eval`/`predict` (no optimizer state).
    const OptimizerConfig *optimizer;
    // Datasets the loop copies to the device when they fit (see dataset_fits in
    // data/batch_source.c): sample counts (0: none) and bytes per sample (C*H*W, u8).
    long train_samples;   // training only
    long test_samples;    // evaluated after each epoch (training) or by `trainer eval`
    size_t sample_bytes;
    // The allocator's limit (0: none) and mode. With a limit, a dataset is uploaded only
    // when it takes at most half of what the limit leaves, as the training loop decides;
    // in reserve mode the arena takes the whole limit, so it never is.
    size_t limit;
    AllocMode mode;
    // What GEMMs and convolutions compute in (PRECISION_DEFAULT: as fp32), for the report.
    // The bytes follow the dtypes graph_set_storage gave the layers (call it first with
    // precision_activation_dtype of this precision).
    Precision precision;
} MemoryPlanOptions;

// One layer's share: its parameters with gradients and optimizer state, its output and
// output gradient, and what its kind allocates besides.
typedef struct MemoryPlanLayer {
    char name[LAYER_NAME_MAX];
    const char *kind;           // the LayerKind's name
    size_t parameters;          // values and buffers (batchnorm's running statistics)
    size_t gradients;           // of the trainable parameters
    size_t optimizer_state;
    size_t activations;         // the output (0 for a view: flatten, reshape)
    size_t activation_gradients;
    size_t layer_state;         // dropout mask, maxpool argmax, loss rows, batchnorm stats
    size_t workspace;           // conv2d's lowering / cuDNN workspace
    size_t bytes;               // all of the above
} MemoryPlanLayer;

typedef struct MemoryPlan {
    int batch;
    int training;
    const char *device;         // the backend's name
    Precision precision;        // options->precision
    DType activation_dtype;     // the graph's 16-bit-capable layers' activations (f32, bf16,
                                // f16; graph_set_storage); every other layer's, parameters,
                                // their gradients and optimizer state are f32 (master weights)
    // Categories; each sums the rounded sizes of its tensors.
    size_t parameters;
    size_t gradients;
    size_t optimizer_state;
    int optimizer_slots;        // state tensors per trainable parameter (sgd 0 or 1, adam 2)
    size_t activations;
    size_t activation_gradients;
    size_t layer_state;
    size_t workspace;
    size_t labels;              // labels [batch] int32 and the two loss sums
    size_t dataset;             // dataset copies on the device, with their index tensors
    int train_set_on_device;    // the loop would upload the training set
    int test_set_on_device;     //   and the test set
    size_t total;               // the allocator's peak in use
    MemoryPlanLayer *layers;    // one per graph layer, in graph order (memory_plan_free)
    int layer_count;
    // Kinds with an `allocate` this planner does not know, comma-separated ("" when
    // none): their extra allocations are missing from the plan.
    char unplanned[128];
} MemoryPlan;

// Plans `g` on backend `b` (whose conv2d_workspace_size sizes the workspaces). Allocates
// nothing on the device; on failure (a backend that cannot size a workspace, no host
// memory) *plan holds nothing to free.
int memory_plan(const Graph *g, const Backend *b, const MemoryPlanOptions *options,
                MemoryPlan *plan, Status *st);
void memory_plan_free(MemoryPlan *plan);

// The largest batch (up to MEMORY_PLAN_MAX_BATCH) whose plan for training with `optimizer`
// or evaluation (NULL) fits in `budget_bytes`: plan(batch).total <= budget_bytes <
// plan(batch + 1).total; 0 when not even batch 1 fits. The plan is of the graph alone
// (parameters, optimizer state, activations, workspaces, labels), as a loop whose datasets
// stay on the host needs. No margin is applied: pass what the allocator may hold, i.e. the
// --memory-limit, or the device's total memory less MEMORY_PLAN_DEVICE_MARGIN of it.
// Memory grows with the batch (activations linearly, workspaces stepwise), so the answer
// is found by doubling, then bisection.
int memory_plan_largest_batch(const Graph *g, const Backend *b, size_t budget_bytes,
                              const OptimizerConfig *optimizer, int *batch, Status *st);
// The same with the datasets and limit of `options` (its batch is ignored). With
// options->limit equal to the budget, a dataset is counted only where the loop would
// upload it, so the answer is the largest batch the loop runs without splitting it.
int memory_plan_largest_batch_with(const Graph *g, const Backend *b,
                                   const MemoryPlanOptions *options, size_t budget_bytes,
                                   int *batch, Status *st);

#endif
