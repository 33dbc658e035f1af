// `batchnorm momentum=0.1 eps=1e-5 [act=...]`: PyTorch's BatchNorm1d/2d. The first
// dimension of the sample is the channel: after dense (N) each feature is normalised over
// the batch, after a convolution (CxHxW) each channel over the batch, H and W.
//
// Training normalises with the batch's statistics and moves the running statistics
// towards them; evaluation (ctx->training == 0) normalises with the running statistics.
// With --sync-batchnorm under mpirun (LayerContext.sum_over_ranks), training sums each
// channel's statistics over every rank's share, as PyTorch's SyncBatchNorm: forward sums
// x and x^2 here, adds them over the ranks, normalises with the totals; backward likewise
// sums dy and dy * xhat for dx. dgamma and dbeta stay this rank's own: the gradient sum
// over the ranks adds them up once, as for every parameter.
//
// gamma and beta are trained; the running statistics are buffers: saved in weights files
// under PyTorch's names (weight, bias, running_mean, running_var) so a checkpoint maps
// onto nn.BatchNorm2d's state_dict, but never touched by the optimizer.
//
// Under --precision bf16|fp16 the activations (x, y and their gradients) are stored in 16
// bits like a dense layer's, so a dense -> batchnorm -> dense chain needs no casts; the
// statistics, the running statistics, gamma, beta and their gradients stay f32, and the
// ops sum in double from the widened values (BatchnormArgs.dtype).
#include <stdio.h>
#include <stdlib.h>

#include "core/layer.h"

typedef struct BatchnormConfig {
    float momentum;
    float eps;
} BatchnormConfig;

// What backward needs from the last forward: the per-channel mean and 1/sqrt(var + eps)
// it normalised with, and whether those were this batch's statistics or the running ones.
typedef struct BatchnormState {
    Tensor save_mean;
    Tensor save_invstd;
    int batch_statistics;
    // --sync-batchnorm: 2 * channels + 1 doubles (kernels/backend.h's layout), on first use.
    void *sums;
    Allocator *alloc;
} BatchnormState;

enum { BN_GAMMA, BN_BETA, BN_RUNNING_MEAN, BN_RUNNING_VAR, BN_PARAM_COUNT };

static const char *const batchnorm_keys[] = {"momentum", "eps", NULL};

static int batchnorm_configure(Layer *l, const ModelStatement *s, Status *st) {
    BatchnormConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a batchnorm layer's settings");
    l->config = config;
    double momentum, eps;
    TRY(model_attr_float(l->path, s, "momentum", 0.1, 0.0, 1.0, &momentum, st));
    TRY(model_attr_float_interval(l->path, s, "eps", 1e-5, 0.0, 1.0, MODEL_EXCLUDE_MIN, &eps, st));
    config->momentum = (float)momentum;
    config->eps = (float)eps;
    return 0;
}

// Channels are the sample's first dimension; everything after it is "spatial".
static int batchnorm_channels(const Layer *l) { return l->out_shape.dims[0]; }

static int batchnorm_spatial(const Layer *l) {
    return (int)(shape_numel(&l->out_shape) / (size_t)l->out_shape.dims[0]);
}

// The ops' [n, channels, spatial] view of a batch. NHWC images (graph_set_layouts) have a
// pixel's channels side by side: [batch * h * w, channels, 1], as after a dense layer.
// Each channel's values are then visited in the same order as in NCHW.
static void batchnorm_view(const Layer *l, int batch, BatchnormArgs *args) {
    int nhwc = l->layout == LAYOUT_NHWC;
    args->n = nhwc ? batch * batchnorm_spatial(l) : batch;
    args->channels = batchnorm_channels(l);
    args->spatial = nhwc ? 1 : batchnorm_spatial(l);
}

static int batchnorm_infer(Layer *l, Status *st) {
    l->out_shape = l->inputs[0]->out_shape;
    l->out_dtype = DTYPE_F32;
    Shape per_channel = shape_make1(batchnorm_channels(l));
    static const char *const names[BN_PARAM_COUNT] = {"weight", "bias", "running_mean",
                                                      "running_var"};
    static const float initial[BN_PARAM_COUNT] = {1.0f, 0.0f, 0.0f, 1.0f};
    for (int p = 0; p < BN_PARAM_COUNT; p++) {
        l->params[p] = (Param){.shape = per_channel, .init_is_constant = 1,
                               .init_constant = initial[p], .buffer = p >= BN_RUNNING_MEAN};
        snprintf(l->params[p].name, sizeof l->params[p].name, "%s", names[p]);
    }
    l->param_count = BN_PARAM_COUNT;
    return 0;
}

static int batchnorm_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    BatchnormState *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    Shape per_channel = shape_make1(batchnorm_channels(l));
    tensor_free(&state->save_mean);
    tensor_free(&state->save_invstd);
    tensor_set_shape(&state->save_mean, DTYPE_F32, 0, &per_channel);
    tensor_set_shape(&state->save_invstd, DTYPE_F32, 0, &per_channel);
    TRY(tensor_alloc(&state->save_mean, ctx->alloc, st));
    return tensor_alloc(&state->save_invstd, ctx->alloc, st);
}

static int batchnorm_planned_bytes(const Layer *l, const Backend *b, int batch, size_t *state,
                                   size_t *workspace, Status *st) {
    Shape per_channel = shape_make1(batchnorm_channels(l));  // save_mean, save_invstd
    *state = 2 * layer_batch_tensor_bytes(1, &per_channel, sizeof(float));
    *workspace = 0;
    return 0;
}

static void batchnorm_release(Layer *l) {
    BatchnormState *state = l->state;
    if (state) {
        tensor_free(&state->save_mean);
        tensor_free(&state->save_invstd);
        if (state->sums) alloc_put(state->alloc, state->sums);
    }
    free(state);
    l->state = NULL;
}

static float *param_f32(const Layer *l, int p) { return tensor_f32(&l->params[p].value); }

// The sums buffer, taken from the allocator the first time a step syncs: a few hundred
// bytes per layer, left out of the memory plan, which plans a process of its own.
static int sums_buffer(Layer *l, const LayerContext *ctx, double **sums, Status *st) {
    BatchnormState *state = l->state;
    if (!state->sums) {
        size_t bytes = (2 * (size_t)batchnorm_channels(l) + 1) * sizeof(double);
        TRY(alloc_get(ctx->alloc, bytes, &state->sums, st));
        state->alloc = ctx->alloc;
    }
    *sums = state->sums;
    return 0;
}

static int forward_over_ranks(Layer *l, const LayerContext *ctx, const BatchnormArgs *args,
                              Status *st) {
    const Backend *b = ctx->backend;
    BatchnormState *state = l->state;
    const void *x = l->inputs[0]->output.data;
    double *sums;
    TRY(sums_buffer(l, ctx, &sums, st));
    TRY(b->batchnorm_channel_sums(b, args, x, sums, st));
    TRY(ctx->sum_over_ranks(ctx->sum_over_ranks_user, sums, 2 * (size_t)args->channels + 1, st));
    return b->batchnorm_forward_with_sums(b, args, &(BatchnormForwardWithSumsTensors){.x = x,
                                          .y = l->output.data, .gamma = param_f32(l, BN_GAMMA),
                                          .beta = param_f32(l, BN_BETA), .sums = sums,
                                          .running_mean = param_f32(l, BN_RUNNING_MEAN),
                                          .running_var = param_f32(l, BN_RUNNING_VAR),
                                          .save_mean = tensor_f32(&state->save_mean),
                                          .save_invstd = tensor_f32(&state->save_invstd)}, st);
}

static int backward_over_ranks(Layer *l, const LayerContext *ctx, const BatchnormArgs *args,
                               void *dx, Status *st) {
    const Backend *b = ctx->backend;
    const BatchnormState *state = l->state;
    const void *x = l->inputs[0]->output.data, *dy = l->grad.data;
    double *sums;
    TRY(sums_buffer(l, ctx, &sums, st));
    TRY(b->batchnorm_backward_channel_sums(b, args, &(BatchnormBackwardChannelSumsTensors){.x = x,
                                           .dy = dy, .save_mean = tensor_f32(&state->save_mean),
                                           .save_invstd = tensor_f32(&state->save_invstd),
                                           .sums = sums,
                                           .dgamma = tensor_f32(&l->params[BN_GAMMA].grad),
                                           .dbeta = tensor_f32(&l->params[BN_BETA].grad)}, st));
    // Every rank sums, even one whose input needs no gradient, or the others would wait.
    TRY(ctx->sum_over_ranks(ctx->sum_over_ranks_user, sums, 2 * (size_t)args->channels + 1, st));
    if (!dx) return 0;
    return b->batchnorm_backward_data_with_sums(b, args, &(BatchnormBackwardDataWithSumsTensors){
                                                .x = x, .dy = dy, .gamma = param_f32(l, BN_GAMMA),
                                                .save_mean = tensor_f32(&state->save_mean),
                                                .save_invstd = tensor_f32(&state->save_invstd),
                                                .sums = sums, .dx = dx}, st);
}

static int batchnorm_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const BatchnormConfig *config = l->config;
    BatchnormState *state = l->state;
    const void *x = l->inputs[0]->output.data;
    void *y = l->output.data;
    state->batch_statistics = ctx->training != 0;
    BatchnormArgs args = {.momentum = config->momentum, .eps = config->eps,
                          .dtype = l->out_dtype};
    batchnorm_view(l, ctx->batch, &args);
    if (ctx->training && ctx->sum_over_ranks) return forward_over_ranks(l, ctx, &args, st);
    const float *gamma = param_f32(l, BN_GAMMA), *beta = param_f32(l, BN_BETA);
    float *running_mean = param_f32(l, BN_RUNNING_MEAN);
    float *running_var = param_f32(l, BN_RUNNING_VAR);
    float *save_mean = tensor_f32(&state->save_mean);
    float *save_invstd = tensor_f32(&state->save_invstd);
    if (ctx->training)
        return b->batchnorm_forward_training(b, &args, &(BatchnormForwardTensors){
            .x = x, .y = y, .gamma = gamma, .beta = beta, .running_mean = running_mean,
            .running_var = running_var, .save_mean = save_mean, .save_invstd = save_invstd}, st);
    return b->batchnorm_forward_inference(b, &args, &(BatchnormInferenceTensors){
        .x = x, .y = y, .gamma = gamma, .beta = beta, .running_mean = running_mean,
        .running_var = running_var, .save_mean = save_mean, .save_invstd = save_invstd}, st);
}

static int batchnorm_backward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const BatchnormState *state = l->state;
    // The input's gradient is stored as the input is, which graph_set_storage made ours.
    void *dx = l->input_needs_grad[0] ? l->inputs[0]->grad.data : NULL;
    BatchnormArgs args = {.batch_statistics = state->batch_statistics,
                          .accumulate_dx = l->input_grad_accumulate[0],
                          .accumulate_params = ctx->accumulate_param_grads,
                          .dtype = l->out_dtype};
    batchnorm_view(l, ctx->batch, &args);
    if (state->batch_statistics && ctx->sum_over_ranks)
        return backward_over_ranks(l, ctx, &args, dx, st);
    return b->batchnorm_backward(b, &args, &(BatchnormBackwardTensors){
                                 .x = l->inputs[0]->output.data, .dy = l->grad.data,
                                 .gamma = param_f32(l, BN_GAMMA),
                                 .save_mean = tensor_f32(&state->save_mean),
                                 .save_invstd = tensor_f32(&state->save_invstd), .dx = dx,
                                 .dgamma = tensor_f32(&l->params[BN_GAMMA].grad),
                                 .dbeta = tensor_f32(&l->params[BN_BETA].grad)}, st);
}

// Evaluation cost: one multiply-add per value (scale and shift folded per channel).
static double batchnorm_flops(const Layer *l) { return 2.0 * (double)shape_numel(&l->out_shape); }

static void batchnorm_export(const Layer *l, ExportNode *node) {
    const BatchnormConfig *config = l->config;
    node->op = EXPORT_BATCHNORM;
    node->epsilon = config->eps;
    node->momentum = config->momentum;
}

const LayerKind layer_batchnorm = {
    .name = "batchnorm",
    .summary = "normalise each channel (feature) over the batch: momentum=0.1, eps=1e-5, act=",
    .keys = batchnorm_keys,
    .takes_act = 1,
    .input_count = 1,
    .normalises_over_batch = 1,
    .stores_16bit = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .configure = batchnorm_configure,
    .infer = batchnorm_infer,
    .allocate = batchnorm_allocate,
    .planned_bytes = batchnorm_planned_bytes,
    .forward = batchnorm_forward,
    .backward = batchnorm_backward,
    .release = batchnorm_release,
    .flops = batchnorm_flops,
    .export_node = batchnorm_export,
};
