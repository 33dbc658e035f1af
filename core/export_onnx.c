// The ONNX writer of `trainer export onnx`: a ModelProto encoded by hand (base/protobuf.h),
// opset 13, from the layers' export descriptions. Field numbers are onnx.proto's.
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/protobuf.h"
#include "core/export.h"

enum { ONNX_IR_VERSION = 8, ONNX_OPSET = 13 };
// ModelProto, OperatorSetIdProto, GraphProto.
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER_NAME = 2, MODEL_GRAPH = 7, MODEL_OPSET_IMPORT = 8 };
enum { OPSET_DOMAIN = 1, OPSET_VERSION = 2 };
enum { GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11,
       GRAPH_OUTPUT = 12 };
// NodeProto, AttributeProto (type: FLOAT 1, INT 2, INTS 7).
enum { NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP_TYPE = 4, NODE_ATTRIBUTE = 5 };
enum { ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20 };
enum { ATTR_TYPE_FLOAT = 1, ATTR_TYPE_INT = 2, ATTR_TYPE_INTS = 7 };
// TensorProto (data_type FLOAT 1, INT64 7), ValueInfoProto, TypeProto(.Tensor),
// TensorShapeProto(.Dimension).
enum { TENSOR_DIMS = 1, TENSOR_DATA_TYPE = 2, TENSOR_NAME = 8, TENSOR_RAW_DATA = 9 };
enum { ONNX_FLOAT = 1, ONNX_INT64 = 7 };
enum { VALUE_INFO_NAME = 1, VALUE_INFO_TYPE = 2, TYPE_TENSOR = 1, TYPE_TENSOR_ELEM_TYPE = 1,
       TYPE_TENSOR_SHAPE = 2, SHAPE_DIM = 1, DIM_VALUE = 1, DIM_PARAM = 2 };

enum { ATTRIBUTE_BYTES = 256, VALUE_NAME_MAX = LAYER_NAME_MAX + 16 };

// An attribute of a node: its name, then (the caller) its value, then attr_end.
static ProtoWriter attr_begin(uint8_t *bytes, size_t size, const char *name) {
    ProtoWriter a = proto_writer_fixed(bytes, size);
    proto_put_string_field(&a, ATTR_NAME, name);
    return a;
}

// The attribute's type after its value, and the attribute into the node.
static void attr_end(ProtoWriter *node, ProtoWriter *a, int type) {
    proto_put_varint_field(a, ATTR_TYPE, (uint64_t)type);
    proto_put_message_field(node, NODE_ATTRIBUTE, a);
}

static void attr_int(ProtoWriter *node, const char *name, int64_t value) {
    uint8_t bytes[ATTRIBUTE_BYTES];
    ProtoWriter a = attr_begin(bytes, sizeof bytes, name);
    proto_put_int_field(&a, ATTR_I, value);
    attr_end(node, &a, ATTR_TYPE_INT);
}

static void attr_float(ProtoWriter *node, const char *name, float value) {
    uint8_t bytes[ATTRIBUTE_BYTES];
    ProtoWriter a = attr_begin(bytes, sizeof bytes, name);
    proto_put_float_field(&a, ATTR_F, value);
    attr_end(node, &a, ATTR_TYPE_FLOAT);
}

static void attr_ints(ProtoWriter *node, const char *name, const int *values, int count) {
    uint8_t bytes[ATTRIBUTE_BYTES];
    ProtoWriter a = attr_begin(bytes, sizeof bytes, name);
    for (int i = 0; i < count; i++) proto_put_int_field(&a, ATTR_INTS, values[i]);
    attr_end(node, &a, ATTR_TYPE_INTS);
}

// A node's inputs, output, name and op; the caller adds its attributes, then node_end.
static ProtoWriter node_begin(const char *op, const char *name, const char *const *inputs,
                              int input_count, const char *output) {
    ProtoWriter node = proto_writer_growing();
    for (int i = 0; i < input_count; i++) proto_put_string_field(&node, NODE_INPUT, inputs[i]);
    proto_put_string_field(&node, NODE_OUTPUT, output);
    proto_put_string_field(&node, NODE_NAME, output);
    proto_put_string_field(&node, NODE_OP_TYPE, op);
    return node;
}

static void node_end(ProtoWriter *graph, ProtoWriter *node) {
    proto_put_message_field(graph, GRAPH_NODE, node);
    proto_writer_free(node);
}

// A node without attributes.
static void put_node(ProtoWriter *graph, const char *op, const char *const *inputs,
                     int input_count, const char *output) {
    ProtoWriter node = node_begin(op, output, inputs, input_count, output);
    node_end(graph, &node);
}

static void put_initializer(ProtoWriter *graph, const char *name, const int64_t *dims, int rank,
                            int data_type, const void *data, size_t bytes) {
    ProtoWriter t = proto_writer_growing();
    for (int d = 0; d < rank; d++) proto_put_int_field(&t, TENSOR_DIMS, dims[d]);
    proto_put_varint_field(&t, TENSOR_DATA_TYPE, (uint64_t)data_type);
    proto_put_string_field(&t, TENSOR_NAME, name);
    proto_put_bytes_field(&t, TENSOR_RAW_DATA, data, bytes);  // little-endian, as x86 and ARM
    proto_put_message_field(graph, GRAPH_INITIALIZER, &t);
    proto_writer_free(&t);
}

static void put_scalar(ProtoWriter *graph, const char *name, float value) {
    put_initializer(graph, name, NULL, 0, ONNX_FLOAT, &value, sizeof value);
}

// A layer's parameter, read from the device, under its weights-file name.
static int put_param(ProtoWriter *graph, const Backend *b, const Param *p, Status *st) {
    size_t count = shape_numel(&p->shape);
    float *values = malloc(count * sizeof *values + 1);
    if (!values)
        return status_out_of_host_memory(st, count * sizeof *values + 1, "for %s", p->name);
    int rc = b->copy_to_host(b, values, p->value.data, count * sizeof *values, st);
    int64_t dims[SHAPE_MAX_RANK];
    for (int d = 0; d < p->shape.rank; d++) dims[d] = p->shape.dims[d];
    if (!rc) put_initializer(graph, p->name, dims, p->shape.rank, ONNX_FLOAT, values,
                             count * sizeof *values);
    free(values);
    return rc;
}

// ValueInfoProto of a float tensor [N] + sample.
static void put_value_info(ProtoWriter *graph, int field, const char *name, const Shape *sample) {
    ProtoWriter shape = proto_writer_growing(), tensor = proto_writer_growing(),
                type = proto_writer_growing(), info = proto_writer_growing();
    uint8_t bytes[32];
    ProtoWriter dim = proto_writer_fixed(bytes, sizeof bytes);
    proto_put_string_field(&dim, DIM_PARAM, "N");
    proto_put_message_field(&shape, SHAPE_DIM, &dim);
    for (int d = 0; d < sample->rank; d++) {
        dim = proto_writer_fixed(bytes, sizeof bytes);
        proto_put_int_field(&dim, DIM_VALUE, sample->dims[d]);
        proto_put_message_field(&shape, SHAPE_DIM, &dim);
    }
    proto_put_varint_field(&tensor, TYPE_TENSOR_ELEM_TYPE, ONNX_FLOAT);
    proto_put_message_field(&tensor, TYPE_TENSOR_SHAPE, &shape);
    proto_put_message_field(&type, TYPE_TENSOR, &tensor);
    proto_put_string_field(&info, VALUE_INFO_NAME, name);
    proto_put_message_field(&info, VALUE_INFO_TYPE, &type);
    proto_put_message_field(graph, field, &info);
    ProtoWriter *all[] = {&shape, &tensor, &type, &info};
    for (int i = 0; i < 4; i++) proto_writer_free(all[i]);
}

// The window attributes of Conv, MaxPool and AveragePool; pads as ONNX orders them,
// [top, left, bottom, right].
static void put_window(ProtoWriter *node, const ExportNode *n, int with_dilation) {
    int pads[4] = {n->pad_before[0], n->pad_before[1], n->pad_after[0], n->pad_after[1]};
    attr_ints(node, "kernel_shape", n->kernel, 2);
    attr_ints(node, "strides", n->stride, 2);
    attr_ints(node, "pads", pads, 4);
    if (with_dilation) attr_ints(node, "dilations", n->dilation, 2);
}

// x * 0.5 * (1 + erf(x * 1/sqrt(2))): Gelu is an ONNX op only from opset 20; this is the
// erf form trainer computes (kernels/cpu/cpu_elementwise.c), in its order.
static void put_gelu(ProtoWriter *graph, const char *x, const char *out) {
    char scaled[VALUE_NAME_MAX], erf[VALUE_NAME_MAX], plus[VALUE_NAME_MAX], half[VALUE_NAME_MAX];
    snprintf(scaled, sizeof scaled, "%s/scaled", out);
    snprintf(erf, sizeof erf, "%s/erf", out);
    snprintf(plus, sizeof plus, "%s/one_plus", out);
    snprintf(half, sizeof half, "%s/half_x", out);
    put_node(graph, "Mul", (const char *[]){x, "const.inverse_sqrt2"}, 2, scaled);
    put_node(graph, "Erf", (const char *[]){scaled}, 1, erf);
    put_node(graph, "Add", (const char *[]){erf, "const.one"}, 2, plus);
    put_node(graph, "Mul", (const char *[]){x, "const.half"}, 2, half);
    put_node(graph, "Mul", (const char *[]){half, plus}, 2, out);
}

static void put_activation(ProtoWriter *graph, const ExportNode *n, const char *x,
                           const char *out) {
    static const char *const ops[] = {[ACTIVATION_RELU] = "Relu",
                                      [ACTIVATION_LEAKY_RELU] = "LeakyRelu",
                                      [ACTIVATION_SIGMOID] = "Sigmoid",
                                      [ACTIVATION_TANH] = "Tanh"};
    if (n->activation == ACTIVATION_GELU) {
        put_gelu(graph, x, out);
        return;
    }
    ProtoWriter node = node_begin(ops[n->activation], out, &x, 1, out);
    if (n->activation == ACTIVATION_LEAKY_RELU) attr_float(&node, "alpha", n->slope);
    node_end(graph, &node);
}

// Add takes two inputs: more are summed left to right, as the add layer sums them.
static void put_add(ProtoWriter *graph, const Graph *g, const Layer *l) {
    char partial[VALUE_NAME_MAX];
    const char *sum = export_value_name(g, l->inputs[0]);
    for (int i = 1; i < l->input_count; i++) {
        char next[VALUE_NAME_MAX];
        if (i == l->input_count - 1) snprintf(next, sizeof next, "%s", l->name);
        else snprintf(next, sizeof next, "%s/sum%d", l->name, i);
        put_node(graph, "Add", (const char *[]){sum, export_value_name(g, l->inputs[i])}, 2, next);
        snprintf(partial, sizeof partial, "%s", next);
        sum = partial;
    }
}

// [N, C, H, W] -> [N, C, 1, 1] -> [N, C], the vector trainer's layer gives.
static void put_global_avgpool(ProtoWriter *graph, const char *x, const char *out) {
    char pooled[VALUE_NAME_MAX];
    snprintf(pooled, sizeof pooled, "%s/pooled", out);
    put_node(graph, "GlobalAveragePool", &x, 1, pooled);
    ProtoWriter node = node_begin("Flatten", out, (const char *[]){pooled}, 1, out);
    attr_int(&node, "axis", 1);
    node_end(graph, &node);
}

static void put_reshape(ProtoWriter *graph, const ExportNode *n, const char *x, const char *out) {
    char shape_name[VALUE_NAME_MAX];
    snprintf(shape_name, sizeof shape_name, "%s/shape", out);
    int64_t shape[SHAPE_MAX_RANK + 1] = {0}, rank = n->shape.rank + 1;  // 0: keep N
    for (int d = 0; d < n->shape.rank; d++) shape[d + 1] = n->shape.dims[d];
    put_initializer(graph, shape_name, &rank, 1, ONNX_INT64, shape, (size_t)rank * sizeof *shape);
    put_node(graph, "Reshape", (const char *[]){x, shape_name}, 2, out);
}

// Gemm, Conv, BatchNormalization: the input, then the layer's params as initializers.
static int put_weighted(ProtoWriter *graph, const Backend *b, const ExportStep *step,
                        const char *op, const char *x, Status *st) {
    const Layer *l = step->layer;
    const char *inputs[1 + LAYER_MAX_PARAMS] = {x};
    for (int k = 0; k < l->param_count; k++) {
        TRY(put_param(graph, b, &l->params[k], st));
        inputs[1 + k] = l->params[k].name;
    }
    const ExportNode *n = &step->node;
    ProtoWriter node = node_begin(op, l->name, inputs, 1 + l->param_count, l->name);
    if (n->op == EXPORT_GEMM) attr_int(&node, "transB", 1);
    if (n->op == EXPORT_CONV) {
        put_window(&node, n, 1);
        attr_int(&node, "group", n->groups);
    }
    if (n->op == EXPORT_BATCHNORM) {
        attr_float(&node, "epsilon", n->epsilon);
        // ONNX weighs the running value by momentum, trainer (and PyTorch) the new one.
        attr_float(&node, "momentum", 1.0f - n->momentum);
    }
    node_end(graph, &node);
    return 0;
}

static int put_step(ProtoWriter *graph, const Graph *g, const Backend *b, const ExportStep *step,
                    Status *st) {
    const Layer *l = step->layer;
    const ExportNode *n = &step->node;
    const char *x = export_value_name(g, l->inputs[0]);
    switch (n->op) {
    case EXPORT_GEMM: return put_weighted(graph, b, step, "Gemm", x, st);
    case EXPORT_CONV: return put_weighted(graph, b, step, "Conv", x, st);
    case EXPORT_BATCHNORM: return put_weighted(graph, b, step, "BatchNormalization", x, st);
    case EXPORT_IDENTITY: put_node(graph, "Identity", &x, 1, l->name); return 0;
    case EXPORT_ADD: put_add(graph, g, l); return 0;
    case EXPORT_ACTIVATION: put_activation(graph, n, x, l->name); return 0;
    case EXPORT_GLOBAL_AVGPOOL: put_global_avgpool(graph, x, l->name); return 0;
    case EXPORT_RESHAPE: put_reshape(graph, n, x, l->name); return 0;
    case EXPORT_FLATTEN:
    case EXPORT_MAXPOOL:
    case EXPORT_AVGPOOL: break;
    }
    static const char *const ops[] = {[EXPORT_FLATTEN] = "Flatten", [EXPORT_MAXPOOL] = "MaxPool",
                                      [EXPORT_AVGPOOL] = "AveragePool"};
    ProtoWriter node = node_begin(ops[n->op], l->name, &x, 1, l->name);
    if (n->op == EXPORT_FLATTEN) attr_int(&node, "axis", 1);
    else put_window(&node, n, 0);
    // trainer divides by the whole window, padding included.
    if (n->op == EXPORT_AVGPOOL) attr_int(&node, "count_include_pad", 1);
    node_end(graph, &node);
    return 0;
}

// The model's input and output are called "input" and "probabilities"; a layer's output is
// called by its name, so a layer may not take either.
static int check_value_names(const ExportStep *steps, int count, Status *st) {
    for (int i = 0; i < count; i++) {
        const Layer *l = steps[i].layer;
        if (strcmp(l->name, "input") != 0 && strcmp(l->name, "probabilities") != 0) continue;
        status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, l->column,
                       "layer '%s' has the name of the ONNX model's %s", l->name,
                       l->name[0] == 'i' ? "input" : "output");
        status_hint(st, "name the layer otherwise (name=...) and train it again, or use "
                    "`trainer export pytorch`, where the name is free");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

// The GraphProto: every step, then the softmax of the loss's input, as predict prints it.
static int build_graph(ProtoWriter *graph, const Graph *g, const Backend *b, Status *st) {
    ExportStep *steps;
    int count;
    TRY(export_describe(g, &steps, &count, st));
    int rc = check_value_names(steps, count, st);
    proto_put_string_field(graph, GRAPH_NAME, g->path);
    int gelu = 0;
    for (int i = 0; !rc && i < count; i++) {
        rc = put_step(graph, g, b, &steps[i], st);
        gelu |= steps[i].node.op == EXPORT_ACTIVATION && steps[i].node.activation == ACTIVATION_GELU;
    }
    free(steps);
    TRY(rc);
    if (gelu) {
        put_scalar(graph, "const.inverse_sqrt2", 0.70710678f);
        put_scalar(graph, "const.one", 1.0f);
        put_scalar(graph, "const.half", 0.5f);
    }
    const Layer *scores = g->loss->inputs[0];
    const char *x = export_value_name(g, scores);
    ProtoWriter softmax = node_begin("Softmax", "probabilities", &x, 1, "probabilities");
    attr_int(&softmax, "axis", 1);
    node_end(graph, &softmax);
    put_value_info(graph, GRAPH_INPUT, "input", &g->input->out_shape);
    put_value_info(graph, GRAPH_OUTPUT, "probabilities", &scores->out_shape);
    if (graph->failed) return status_out_of_host_memory(st, 0, "writing the ONNX graph");
    return 0;
}

// The ModelProto's own fields, then its graph written straight after them, so that the
// weights are not copied once more into one buffer.
static int write_model(FILE *f, const ProtoWriter *graph) {
    ProtoWriter head = proto_writer_growing();
    uint8_t bytes[32];
    ProtoWriter opset = proto_writer_fixed(bytes, sizeof bytes);
    proto_put_string_field(&opset, OPSET_DOMAIN, "");
    proto_put_int_field(&opset, OPSET_VERSION, ONNX_OPSET);
    proto_put_int_field(&head, MODEL_IR_VERSION, ONNX_IR_VERSION);
    proto_put_string_field(&head, MODEL_PRODUCER_NAME, "trainer");
    proto_put_message_field(&head, MODEL_OPSET_IMPORT, &opset);
    proto_put_key(&head, MODEL_GRAPH, PROTO_LENGTH_DELIMITED);
    proto_put_varint(&head, graph->size);
    int ok = proto_finished(&head) && fwrite(head.out, 1, head.size, f) == head.size &&
             fwrite(graph->out, 1, graph->size, f) == graph->size;
    proto_writer_free(&head);
    return ok;
}

int export_onnx(const Graph *g, const Backend *b, const char *path, Status *st) {
    ProtoWriter graph = proto_writer_growing();
    int rc = build_graph(&graph, g, b, st);
    AtomicFile f;
    if (!rc) rc = atomic_file_open(&f, path, st);
    if (!rc && !write_model(f.file, &graph)) {
        atomic_file_abandon(&f);
        rc = status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write the file");
        status_hint(st, "check the free space and permissions of its folder");
    } else if (!rc) {
        rc = atomic_file_commit(&f, st);
    }
    proto_writer_free(&graph);
    return rc;
}
