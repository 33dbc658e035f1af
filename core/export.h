// `trainer export`: a built graph with its loaded weights written as an ONNX model or as the
// text of a PyTorch nn.Module. Both read the same description of each layer
// (core/export_node.h, given by the layer's own kind), in graph order. What the exported
// model outputs is what `trainer predict` prints: the softmax of the scores the loss reads.
#ifndef TRAINER_EXPORT_H
#define TRAINER_EXPORT_H

#include <stdio.h>

#include "core/graph.h"

// One layer between the input and the loss, described for export.
typedef struct ExportStep {
    const Layer *layer;
    ExportNode node;
} ExportStep;

// The graph's layers between its input and its loss, in execution order. A layer whose kind
// cannot be exported is refused (STATUS_BAD_INPUT at its statement, naming it and its kind).
// *steps is to be freed.
int export_describe(const Graph *g, ExportStep **steps, int *count, Status *st);
// The value a layer's output is called in the exported model: "input" for the model's
// input, else the layer's name.
const char *export_value_name(const Graph *g, const Layer *l);

// ONNX opset 13, IR version 8: input "input" [N] + the input shape (f32, NCHW),
// output "probabilities" [N, classes]; initializers named as in the weights file, their
// values read from the device `b` holds them on.
int export_onnx(const Graph *g, const Backend *b, const char *path, Status *st);
// A Python file defining `Model(nn.Module)`, whose state_dict keys are the weights file's
// tensor names, and `load(path)`.
int export_pytorch(const Graph *g, const char *model_path, const char *path, Status *st);

#endif
