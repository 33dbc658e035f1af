// `dense units=N [bias=true] [act=...]`: y = x W^T + b, with W stored [units, inputs]
// like PyTorch's nn.Linear, so weights carry over between the two unchanged.
#include <math.h>
#include <stdlib.h>

#include "core/layer.h"

typedef struct DenseConfig {
    int units;
    int bias;
} DenseConfig;

static const char *const dense_keys[] = {"units", "bias", NULL};

static int dense_configure(Layer *l, const ModelStatement *s, Status *st) {
    DenseConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a dense layer's settings");
    l->config = config;
    if (!model_attr_find(s, "units")) {
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, l->column,
                       "dense needs units=, the number of outputs");
        status_hint(st, "write e.g. `dense units=128`");
        return STATUS_BAD_INPUT;
    }
    long units;
    TRY(model_attr_int(l->path, s, "units", 0, 1, 1 << 24, &units, st));
    config->units = (int)units;
    return model_attr_bool(l->path, s, "bias", 1, &config->bias, st);
}

static int dense_infer(Layer *l, Status *st) {
    const DenseConfig *config = l->config;
    const Layer *in = l->inputs[0];
    if (in->out_shape.rank != 1) {
        char shape[64];
        layer_fail(l, st, "dense needs a flat input (N), but '%s' gives %s", in->name,
                   shape_format(&in->out_shape, shape, sizeof shape));
        status_hint(st, "add `flatten` before this dense layer");
        return STATUS_BAD_INPUT;
    }
    int inputs = in->out_shape.dims[0];
    l->out_shape = shape_make1(config->units);
    l->out_dtype = DTYPE_F32;
    // PyTorch's default (kaiming_uniform with a=sqrt(5)) reduces to 1/sqrt(fan_in) for
    // both weight and bias; matching it makes our curves comparable to PyTorch's.
    float bound = 1.0f / sqrtf((float)inputs);
    l->params[0] = (Param){.name = "weight", .shape = {.rank = 2, .dims = {config->units, inputs}}, .init_bound = bound};
    l->param_count = 1;
    if (config->bias) {
        l->params[1] = (Param){.name = "bias", .shape = shape_make1(config->units), .init_bound = bound};
        l->param_count = 2;
    }
    return 0;
}

// Under 16-bit storage (graph_set_storage) x, y and their gradients are bf16 or f16 and the
// weights stay f32 (the master copy the optimizer updates): each forward rounds them into
// a 16-bit copy that both GEMMs read, as PyTorch's autocast casts a Linear's weight per call.
typedef struct DenseState {
    Tensor weight16;
} DenseState;

static int dense_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    DenseState *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    tensor_free(&state->weight16);
    if (l->out_dtype == DTYPE_F32) return 0;
    tensor_set_shape(&state->weight16, l->out_dtype, 0, &l->params[0].shape);
    return tensor_alloc(&state->weight16, ctx->alloc, st);
}

static int dense_planned_bytes(const Layer *l, const Backend *b, int batch, size_t *state,
                               size_t *workspace, Status *st) {
    *state = l->out_dtype == DTYPE_F32
                 ? 0
                 : layer_batch_tensor_bytes(1, &l->params[0].shape, dtype_size(l->out_dtype));
    *workspace = 0;
    return 0;
}

static void dense_release(Layer *l) {
    DenseState *state = l->state;
    if (state) tensor_free(&state->weight16);
    free(state);
    l->state = NULL;
}

// The weights the GEMMs read: the f32 parameter, or its 16-bit copy.
static const void *gemm_weights(const Layer *l) {
    const DenseState *state = l->state;
    return l->out_dtype == DTYPE_F32 ? l->params[0].value.data : state->weight16.data;
}

static int dense_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const DenseConfig *config = l->config;
    int inputs = l->inputs[0]->out_shape.dims[0];
    DType storage = l->out_dtype;
    GemmArgs xwt = {.transpose_b = 1, .m = ctx->batch, .n = config->units, .k = inputs,
                    .lda = inputs, .ldb = inputs, .ldc = config->units, .alpha = 1.0f, .beta = 0.0f,
                    .a_dtype = storage, .b_dtype = storage, .c_dtype = storage};
    const float *bias = config->bias ? tensor_f32(&l->params[1].value) : NULL;
    if (storage != DTYPE_F32)
        TRY(b->convert(b, &(ConvertArgs){.src = l->params[0].value.data, .src_dtype = DTYPE_F32,
                       .dst = ((DenseState *)l->state)->weight16.data, .dst_dtype = storage,
                       .n = shape_numel(&l->params[0].shape), .accumulate = 0}, st));
    FusedActivation act = {0};
    int fused = l->fused_activation && activation_layer_fusable(l->fused_activation, &act);
    // A bias, or 16-bit storage, goes through the fused op too, with act.apply 0 when there
    // is no activation to fuse: on the GPU the bias is then added in the GEMM's epilogue,
    // not by one more kernel (a classifier's last layer; at mlp's batch 128 each kernel of
    // the step is a few of its 70 us), and a 16-bit C gets the bias rounded to its type
    // (add_bias_rows is f32 only). On the CPU, in f32, the op is gemm then add_bias_rows:
    // the same bits as before.
    if (fused || bias || storage != DTYPE_F32)
        return b->gemm_bias_activation(b, &xwt, &(GemmBiasActivationTensors){
                                       .a = l->inputs[0]->output.data, .bm = gemm_weights(l),
                                       .bias = bias,
                                       .c = fused ? l->fused_activation->output.data
                                                  : l->output.data}, &act, st);
    return b->gemm(b, &xwt, &(GemmTensors){.a = tensor_f32(&l->inputs[0]->output),
                   .bm = tensor_f32(&l->params[0].value), .c = tensor_f32(&l->output)}, st);
}

static int dense_backward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const DenseConfig *config = l->config;
    int inputs = l->inputs[0]->out_shape.dims[0];
    DType storage = l->out_dtype;
    const void *dy = l->grad.data;
    float param_beta = ctx->accumulate_param_grads ? 1.0f : 0.0f;
    // dW[units, inputs] = dy^T x, in f32 whatever dy and x are stored in
    GemmArgs dyt_x = {.transpose_a = 1, .m = config->units, .n = inputs, .k = ctx->batch,
                      .lda = config->units, .ldb = inputs, .ldc = inputs, .alpha = 1.0f,
                      .beta = param_beta, .a_dtype = storage, .b_dtype = storage,
                      .c_dtype = DTYPE_F32};
    float *dbias = config->bias ? tensor_f32(&l->params[1].grad) : NULL;
    FusedActivation act;
    // Fused: dy is the pre-activation's gradient, made here with the bias gradient in one
    // pass over the activation's output and gradient.
    if (l->fused_activation && activation_layer_fusable(l->fused_activation, &act))
        TRY(b->activation_bias_backward(b, &act, &(ActivationBiasBackwardTensors){.dtype = storage,
                                        .y = l->fused_activation->output.data,
                                        .dy = l->fused_activation->grad.data, .dx = l->grad.data,
                                        .dbias = dbias, .rows = ctx->batch, .cols = config->units,
                                        .beta = param_beta}, st));
    else if (dbias)
        TRY(b->sum_rows(b, &(SumRowsArgs){.out = dbias, .x = dy, .x_dtype = storage,
                        .rows = ctx->batch, .cols = config->units, .beta = param_beta}, st));
    TRY(b->gemm(b, &dyt_x, &(GemmTensors){.a = dy, .bm = l->inputs[0]->output.data,
                .c = l->params[0].grad.data}, st));
    if (!l->input_needs_grad[0]) return 0;
    // dx[batch, inputs] = dy W
    GemmArgs dy_w = {.m = ctx->batch, .n = inputs, .k = config->units, .lda = config->units,
                     .ldb = inputs, .ldc = inputs, .alpha = 1.0f,
                     .beta = l->input_grad_accumulate[0] ? 1.0f : 0.0f, .a_dtype = storage,
                     .b_dtype = storage, .c_dtype = storage};
    return b->gemm(b, &dy_w, &(GemmTensors){.a = dy, .bm = gemm_weights(l),
                   .c = l->inputs[0]->grad.data}, st);
}

static double dense_flops(const Layer *l) {
    const DenseConfig *config = l->config;
    return 2.0 * config->units * l->inputs[0]->out_shape.dims[0];
}

// Gemm with W^T (ONNX transB=1), nn.Linear in PyTorch: the weight is [units, inputs].
static void dense_export(const Layer *l, ExportNode *node) {
    node->op = EXPORT_GEMM;
    node->has_bias = ((const DenseConfig *)l->config)->bias;
}

const LayerKind layer_dense = {
    .name = "dense",
    .summary = "fully connected: units=N, bias=true|false, act=",
    .keys = dense_keys,
    .takes_act = 1,
    .input_count = 1,
    .matmul = LAYER_MATMUL_GEMM,
    .fuses_act = 1,
    .stores_16bit = 1,
    .configure = dense_configure,
    .infer = dense_infer,
    .allocate = dense_allocate,
    .planned_bytes = dense_planned_bytes,
    .forward = dense_forward,
    .backward = dense_backward,
    .release = dense_release,
    .flops = dense_flops,
    .export_node = dense_export,
};
