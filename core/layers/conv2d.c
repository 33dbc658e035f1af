// `conv2d filters=N kernel=K|HxW [stride=1] [pad=0|P|HxW|same] [dilation=1] [groups=1]
// [bias=true] [act=...]`: PyTorch's nn.Conv2d on CxHxW images, weights stored
// [filters, in_channels / groups, kh, kw] as PyTorch stores them.
//
// pad=same keeps H and W (stride 1 only, as in PyTorch). When the kernel's span is even
// the padding cannot be split evenly; the extra row and column go at the bottom and right,
// as TensorFlow does.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layers/window_common.h"

enum { CONV_SIZE_MAX = 4096, CONV_COUNT_MAX = 1 << 20 };

typedef struct Conv2dConfig {
    int filters, groups, bias, pad_same;
    int kernel[2], stride[2], dilation[2], pad[2];
    int kernel_column, groups_column;
    char pad_text[40];
    char variant[64];
    Conv2dGeometry geometry;  // set by infer; batch is filled in per call
} Conv2dConfig;

// Under 16-bit storage (graph_set_storage) x, y and their gradients are bf16 or f16 and the
// weights stay f32 (the master copy the optimizer updates): each forward rounds them into
// `weight16`, which forward and backward-data read, as dense does and as PyTorch's autocast
// casts a Conv2d's weight per call. The bias, the weight gradient and the bias gradient stay
// f32 (the ops' contract).
typedef struct Conv2dState {
    Allocator *alloc;
    void *workspace;          // scratch for the backend's lowering (im2col on the CPU)
    size_t workspace_bytes;
    Tensor weight16;
} Conv2dState;

static const char *const conv2d_keys[] = {"filters", "kernel", "stride", "pad",
                                          "dilation", "groups", "bias", NULL};

static int require_key(const Layer *l, const ModelStatement *s, const char *key,
                       const char *what, const char *example, Status *st) {
    if (model_attr_find(s, key)) return 0;
    layer_fail(l, st, "conv2d needs %s=, %s", key, what);
    status_hint(st, "write e.g. `%s`", example);
    return STATUS_BAD_INPUT;
}

static int conv2d_configure(Layer *l, const ModelStatement *s, Status *st) {
    Conv2dConfig *config = calloc(1, sizeof *config);
    if (!config)
        return status_out_of_host_memory(st, sizeof *config, "for a conv2d layer's settings");
    l->config = config;
    const char *example = "conv2d filters=32 kernel=3 pad=same act=relu";
    TRY(require_key(l, s, "filters", "the number of output channels", example, st));
    TRY(require_key(l, s, "kernel", "the window size (kernel=3 or kernel=3x5)", example, st));
    long filters, groups;
    TRY(model_attr_int(l->path, s, "filters", 0, 1, CONV_COUNT_MAX, &filters, st));
    TRY(model_attr_int(l->path, s, "groups", 1, 1, CONV_COUNT_MAX, &groups, st));
    config->filters = (int)filters;
    config->groups = (int)groups;
    TRY(window_attr_pair(l->path, s, "kernel", 1, 1, CONV_SIZE_MAX, config->kernel, st));
    TRY(window_attr_pair(l->path, s, "stride", 1, 1, CONV_SIZE_MAX, config->stride, st));
    TRY(window_attr_pair(l->path, s, "dilation", 1, 1, CONV_SIZE_MAX, config->dilation, st));
    TRY(model_attr_bool(l->path, s, "bias", 1, &config->bias, st));
    const ModelAttr *pad = model_attr_find(s, "pad");
    config->pad_same = pad && strcmp(pad->value, "same") == 0;
    if (!config->pad_same)
        TRY(window_attr_pair(l->path, s, "pad", 0, 0, CONV_SIZE_MAX, config->pad, st));
    if (config->pad_same && (config->stride[0] != 1 || config->stride[1] != 1)) {
        char stride[32];
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, pad->value_column,
                       "pad=same needs stride=1, but stride=%s",
                       window_pair_text(config->stride, stride, sizeof stride));
        status_hint(st, "with a stride the output cannot keep the input's size (PyTorch refuses "
                    "it too); write the padding as a number, e.g. pad=%d for kernel=%d",
                    config->dilation[0] * (config->kernel[0] - 1) / 2, config->kernel[0]);
        return STATUS_BAD_INPUT;
    }
    config->kernel_column = window_key_column(s, "kernel", l->column);
    config->groups_column = window_key_column(s, "groups", l->column);
    char text[32];
    if (config->pad_same) snprintf(config->pad_text, sizeof config->pad_text, "pad=same");
    else snprintf(config->pad_text, sizeof config->pad_text, "pad=%s",
                  window_pair_text(config->pad, text, sizeof text));

    // "conv2d 5x5 same", "conv2d 3x3/2 p1 d2 g4": the choices that matter, for `trainer check`.
    char *v = config->variant;
    size_t size = sizeof config->variant, used = 0;
    used += (size_t)snprintf(v + used, size - used, "conv2d %dx%d", config->kernel[0], config->kernel[1]);
    if (config->stride[0] != 1 || config->stride[1] != 1)
        used += (size_t)snprintf(v + used, size - used, "/%s", window_pair_text(config->stride, text, sizeof text));
    if (config->pad_same) used += (size_t)snprintf(v + used, size - used, " same");
    else if (config->pad[0] || config->pad[1])
        used += (size_t)snprintf(v + used, size - used, " p%s", window_pair_text(config->pad, text, sizeof text));
    if (config->dilation[0] != 1 || config->dilation[1] != 1)
        used += (size_t)snprintf(v + used, size - used, " d%s", window_pair_text(config->dilation, text, sizeof text));
    if (config->groups != 1) snprintf(v + used, size - used, " g%d", config->groups);
    return 0;
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

// groups must split both the input channels and the filters into equal parts.
static int check_groups(const Layer *l, int channels, Status *st) {
    const Conv2dConfig *config = l->config;
    if (channels % config->groups == 0 && config->filters % config->groups == 0) return 0;
    char shape[64], divisors[128] = "";
    int common = gcd(channels, config->filters);
    for (int d = 1, n = 0; d <= common && n < 8; d++)
        if (common % d == 0)
            n++, snprintf(divisors + strlen(divisors), sizeof divisors - strlen(divisors),
                          "%s%d", n > 1 ? ", " : "", d);
    char what[64];
    if (channels % config->groups != 0) snprintf(what, sizeof what, "the %d input channels", channels);
    else snprintf(what, sizeof what, "filters=%d", config->filters);
    status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, config->groups_column,
                   "groups=%d does not divide %s (input %s from '%s', filters=%d)",
                   config->groups, what, shape_format(&l->inputs[0]->out_shape, shape, sizeof shape),
                   l->inputs[0]->name, config->filters);
    status_hint(st, "groups must divide both the %d input channels and the %d filters; "
                "choose one of %s", channels, config->filters, divisors);
    return STATUS_BAD_INPUT;
}

static int conv2d_infer(Layer *l, Status *st) {
    Conv2dConfig *config = l->config;
    TRY(window_require_image(l, st));
    const Shape *in = &l->inputs[0]->out_shape;
    int channels = in->dims[0];
    TRY(check_groups(l, channels, st));
    WindowSpec w = {.key = "kernel", .pad_text = config->pad_text, .column = config->kernel_column,
                    .hint = "use a smaller kernel=, or pad the input (pad=same keeps its size)"};
    for (int d = 0; d < 2; d++) {
        w.size[d] = config->kernel[d];
        w.dilation[d] = config->dilation[d];
        w.stride[d] = config->stride[d];
        int span = config->dilation[d] * (config->kernel[d] - 1) + 1;
        w.pad_before[d] = config->pad_same ? (span - 1) / 2 : config->pad[d];
        w.pad_after[d] = config->pad_same ? span - 1 - w.pad_before[d] : config->pad[d];
    }
    int out[2];
    TRY(window_output_size(l, &w, out, st));
    config->geometry = (Conv2dGeometry){
        .in_channels = channels, .in_h = in->dims[1], .in_w = in->dims[2],
        .out_channels = config->filters, .out_h = out[0], .out_w = out[1],
        .kernel_h = config->kernel[0], .kernel_w = config->kernel[1],
        .stride_h = config->stride[0], .stride_w = config->stride[1],
        .pad_top = w.pad_before[0], .pad_left = w.pad_before[1],
        .dilation_h = config->dilation[0], .dilation_w = config->dilation[1],
        .groups = config->groups};
    l->out_shape = shape_make3(config->filters, out[0], out[1]);
    l->out_dtype = DTYPE_F32;  // graph_set_storage may make it 16-bit
    int fan_in = channels / config->groups * config->kernel[0] * config->kernel[1];
    // PyTorch's default init (kaiming_uniform with a=sqrt(5)) is uniform +-1/sqrt(fan_in)
    // for both weight and bias, as for dense.
    float bound = 1.0f / sqrtf((float)fan_in);
    l->params[0] = (Param){.name = "weight", .init_bound = bound,
                           .shape = {.rank = 4, .dims = {config->filters, channels / config->groups,
                                                         config->kernel[0], config->kernel[1]}}};
    l->param_count = 1;
    if (config->bias) {
        l->params[1] = (Param){.name = "bias", .shape = shape_make1(config->filters), .init_bound = bound};
        l->param_count = 2;
    }
    return 0;
}

// The workspace the layer's ops get: what the backend asks for, capped by
// graph_limit_workspace, but never below the least its ops run in.
// The workspace for `batch` samples of the layer's geometry, stored and laid out as the
// layer's output: the CUDA workspace holds 16-bit scratch besides cuDNN's and, for NHWC,
// the filters reordered as cuDNN reads them.
static int workspace_bytes(const Layer *l, const Backend *b, int batch, size_t *bytes,
                           Status *st) {
    const Conv2dConfig *config = l->config;
    Conv2dGeometry g = config->geometry;
    g.batch = batch;
    g.dtype = l->out_dtype;
    g.layout = l->layout;
    TRY(b->conv2d_workspace_size(b, &g, bytes, st));
    if (!l->workspace_limited || *bytes <= l->workspace_limit) return 0;
    size_t least = 0;
    TRY(b->conv2d_least_workspace(b, &g, &least, st));
    *bytes = l->workspace_limit > least ? l->workspace_limit : least;
    return 0;
}

static int conv2d_allocate(Layer *l, const LayerContext *ctx, int batch, Status *st) {
    const Backend *b = ctx->backend;
    if (!b->conv2d_workspace_size || !b->conv2d_forward || !b->conv2d_backward_data ||
        !b->conv2d_backward_filter)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no conv2d yet", b->name);
    Conv2dState *state = l->state;
    if (!state) {
        state = calloc(1, sizeof *state);
        if (!state)
            return status_out_of_host_memory(st, sizeof *state, "for layer %s's state", l->name);
        l->state = state;
    }
    if (state->workspace) alloc_put(state->alloc, state->workspace);
    state->workspace = NULL;
    state->workspace_bytes = 0;
    size_t bytes = 0;
    TRY(workspace_bytes(l, b, batch, &bytes, st));
    state->alloc = ctx->alloc;
    if (bytes) TRY(alloc_get(ctx->alloc, bytes, &state->workspace, st));
    state->workspace_bytes = bytes;
    tensor_free(&state->weight16);
    if (l->out_dtype == DTYPE_F32) return 0;
    tensor_set_shape(&state->weight16, l->out_dtype, 0, &l->params[0].shape);
    return tensor_alloc(&state->weight16, ctx->alloc, st);
}

static int conv2d_planned_bytes(const Layer *l, const Backend *b, int batch, size_t *state,
                                size_t *workspace, Status *st) {
    if (!b->conv2d_workspace_size)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no conv2d yet", b->name);
    size_t bytes = 0;
    TRY(workspace_bytes(l, b, batch, &bytes, st));
    *state = l->out_dtype == DTYPE_F32
                 ? 0
                 : layer_batch_tensor_bytes(1, &l->params[0].shape, dtype_size(l->out_dtype));
    *workspace = bytes ? alloc_charged_bytes(bytes) : 0;  // asked for only when needed
    return 0;
}

static void conv2d_release(Layer *l) {
    Conv2dState *state = l->state;
    if (state && state->workspace) alloc_put(state->alloc, state->workspace);
    if (state) tensor_free(&state->weight16);
    free(state);
    l->state = NULL;
}

// The geometry of this call: the shape infer found, the step's batch, the storage dtype,
// the layout graph_set_layouts chose.
static Conv2dGeometry call_geometry(const Layer *l, const LayerContext *ctx) {
    Conv2dGeometry g = ((const Conv2dConfig *)l->config)->geometry;
    g.batch = ctx->batch;
    g.dtype = l->out_dtype;
    g.layout = l->layout;
    return g;
}

// The weights the convolutions read: the f32 parameter, or its 16-bit copy.
static const void *conv_weights(const Layer *l) {
    const Conv2dState *state = l->state;
    return l->out_dtype == DTYPE_F32 ? l->params[0].value.data : state->weight16.data;
}

static int conv2d_forward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const Conv2dConfig *config = l->config;
    const Conv2dState *state = l->state;
    Conv2dGeometry g = call_geometry(l, ctx);
    const float *bias = config->bias ? tensor_f32(&l->params[1].value) : NULL;
    if (g.dtype != DTYPE_F32)
        TRY(b->convert(b, &(ConvertArgs){.src = l->params[0].value.data, .src_dtype = DTYPE_F32,
                       .dst = state->weight16.data, .dst_dtype = g.dtype,
                       .n = shape_numel(&l->params[0].shape), .accumulate = 0}, st));
    FusedActivation act;
    if (l->fused_activation && activation_layer_fusable(l->fused_activation, &act))
        return b->conv2d_forward_bias_activation(b, &g, &(Conv2dForwardTensors){
                                                 .x = l->inputs[0]->output.data,
                                                 .w = conv_weights(l), .bias = bias,
                                                 .y = l->fused_activation->output.data,
                                                 .workspace = state->workspace,
                                                 .workspace_bytes = state->workspace_bytes}, &act,
                                                 st);
    return b->conv2d_forward(b, &g, &(Conv2dForwardTensors){.x = l->inputs[0]->output.data,
                             .w = conv_weights(l), .bias = bias, .y = l->output.data,
                             .workspace = state->workspace,
                             .workspace_bytes = state->workspace_bytes}, st);
}

static int conv2d_backward(Layer *l, const LayerContext *ctx, Status *st) {
    const Backend *b = ctx->backend;
    const Conv2dConfig *config = l->config;
    const Conv2dState *state = l->state;
    Conv2dGeometry g = call_geometry(l, ctx);
    const void *dy = l->grad.data;
    float *dbias = config->bias ? tensor_f32(&l->params[1].grad) : NULL;
    if (l->fused_activation) TRY(activation_fused_backward(l, ctx, st));
    TRY(b->conv2d_backward_filter(b, &g, &(Conv2dBackwardFilterTensors){
                                  .x = l->inputs[0]->output.data, .dy = dy,
                                  .dw = tensor_f32(&l->params[0].grad), .dbias = dbias,
                                  .workspace = state->workspace,
                                  .workspace_bytes = state->workspace_bytes,
                                  .accumulate = ctx->accumulate_param_grads}, st));
    if (!l->input_needs_grad[0]) return 0;
    return b->conv2d_backward_data(b, &g, &(Conv2dBackwardDataTensors){.dy = dy,
                                   .w = conv_weights(l), .dx = l->inputs[0]->grad.data,
                                   .workspace = state->workspace,
                                   .workspace_bytes = state->workspace_bytes,
                                   .accumulate = l->input_grad_accumulate[0]}, st);
}

static const char *conv2d_variant(const Layer *l) {
    return ((const Conv2dConfig *)l->config)->variant;
}

// 2 * multiply-adds: each output value is a dot product of C/groups * kh * kw terms.
static double conv2d_flops(const Layer *l) {
    const Conv2dGeometry *g = &((const Conv2dConfig *)l->config)->geometry;
    return 2.0 * g->out_channels * g->out_h * g->out_w * (g->in_channels / g->groups) *
           g->kernel_h * g->kernel_w;
}

// pad=same with an even span pads bottom/right one more than top/left (infer's geometry).
static void conv2d_export(const Layer *l, ExportNode *node) {
    const Conv2dConfig *config = l->config;
    const Conv2dGeometry *g = &config->geometry;
    int top_left[2] = {g->pad_top, g->pad_left};
    node->op = EXPORT_CONV;
    node->has_bias = config->bias;
    node->groups = config->groups;
    for (int d = 0; d < 2; d++) {
        int span = config->dilation[d] * (config->kernel[d] - 1) + 1;
        node->kernel[d] = config->kernel[d];
        node->stride[d] = config->stride[d];
        node->dilation[d] = config->dilation[d];
        node->pad_before[d] = top_left[d];
        node->pad_after[d] = config->pad_same ? span - 1 - top_left[d] : config->pad[d];
    }
}

const LayerKind layer_conv2d = {
    .name = "conv2d",
    .summary = "2-D convolution: filters=N kernel=K|HxW stride= pad=N|same dilation= groups= "
               "bias= act=",
    .keys = conv2d_keys,
    .takes_act = 1,
    .input_count = 1,
    .matmul = LAYER_MATMUL_CONVOLUTION,
    .fuses_act = 1,
    .stores_16bit = 1,
    .layout_use = LAYOUT_USE_EITHER,
    .configure = conv2d_configure,
    .infer = conv2d_infer,
    .allocate = conv2d_allocate,
    .planned_bytes = conv2d_planned_bytes,
    .forward = conv2d_forward,
    .backward = conv2d_backward,
    .release = conv2d_release,
    .variant = conv2d_variant,
    .flops = conv2d_flops,
    .export_node = conv2d_export,
};
