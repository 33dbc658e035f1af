// Shared by cuda_graph.cu and the ops that take a per-step value (cuda_optimizer.cu,
// cuda_elementwise.cu): how a captured training step reads the values that change from
// step to step (StepValues in kernels/backend.h) from device memory.
//
// Why a block in device memory rather than updating the graph's kernel nodes
// (cudaGraphExecKernelNodeSetParams) before each replay: the block needs no knowledge of
// which nodes of the graph carry which value nor of their argument layout (a multi-tensor
// update's 2.6 KB table, a dropout launch's seed plus its pass's offset), it is one launch
// per replay whatever the model (a node update is one driver call per node), and an op
// that is not captured runs exactly as before: its kernel takes the values as arguments,
// as the CPU's ops do. The factors written to the block are computed on the host by the
// same functions, from the same floats, as a plain launch's arguments, so a replay
// computes the same bits as plain launches.
#ifndef TRAINER_CUDA_GRAPH_H
#define TRAINER_CUDA_GRAPH_H

#include "kernels/cuda/cuda_internal.h"

// SGD's settings as the kernels take them.
typedef struct SgdFactors {
    float lr, momentum, weight_decay;
    int use_momentum, nesterov;
} SgdFactors;

// Adam's, with the bias corrections folded in (cuda_optimizer.cu says how).
typedef struct AdamFactors {
    float beta1, one_minus_beta1;
    float beta2, one_minus_beta2;
    float eps;
    float weight_decay;     // L2 form: added to the gradient
    float lr_weight_decay;  // decoupled form: lr * weight_decay, the CPU's (lr * wd) * param
    float step_size;        // lr / (1 - beta1^t)
    float sqrt_correction2; // sqrt(1 - beta2^t)
    int decoupled;
} AdamFactors;

// cuda_step_factors.cu: the factors of a launch, on the host, as the CPU computes them.
SgdFactors cuda_sgd_factors(const SgdHyper *h);
AdamFactors cuda_adam_factors(const AdamHyper *h);

// What a replay's kernels read: written by graph_launch before each replay.
typedef struct CudaStepBlock {
    AdamFactors adam;
    SgdFactors sgd;
    uint64_t seed;
} CudaStepBlock;

// For an op about to launch: NULL when the stream is not being captured (the kernel uses
// its arguments); while it is, where in the block its kernel reads the factors. Fails when
// the update's lr or step is not the captured step's (the value would be frozen), or a
// second update of the step has other settings than the first.
int cuda_capture_adam(CudaContext *ctx, const AdamHyper *h, const AdamFactors **replayed,
                      Status *st);
int cuda_capture_sgd(CudaContext *ctx, const SgdHyper *h, const SgdFactors **replayed,
                     Status *st);
// A dropout seed: not captured, *argument = seed and *replayed = NULL; captured,
// *argument = seed - the step's seed (a pass's fixed offset) and *replayed points at the
// block's seed, so the kernel draws with *replayed + *argument, wrapping as the host's
// uint64_t does.
void cuda_capture_seed(CudaContext *ctx, uint64_t seed, const uint64_t **replayed,
                       uint64_t *argument);

void cuda_register_graph_ops(Backend *table);
void cuda_graph_state_free(CudaContext *ctx);

#endif
