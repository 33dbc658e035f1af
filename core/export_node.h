// What a layer computes at inference, in words an exchange format understands: the op and
// its settings. Each layer kind describes itself (LayerKind.export_node, in its own file);
// core/export_onnx.c and core/export_pytorch.c turn the one description into an ONNX node
// and a PyTorch module, so neither exporter knows a kind's private settings. The op's
// weights are the layer's params, in their order (dense: weight [out, in], bias; conv2d:
// weight [out, in / groups, kh, kw], bias; batchnorm: weight, bias, running_mean,
// running_var).
#ifndef TRAINER_EXPORT_NODE_H
#define TRAINER_EXPORT_NODE_H

#include "base/shape.h"
#include "kernels/backend.h"  // ActivationKind

typedef enum ExportOp {
    EXPORT_IDENTITY,        // dropout at inference
    EXPORT_GEMM,            // y = x W^T + b
    EXPORT_CONV,            // convolution: kernel, stride, dilation, pads, groups
    EXPORT_MAXPOOL,         // max over windows: kernel, stride, pads (padding never wins)
    EXPORT_AVGPOOL,         // mean over windows, padding counted as zeros in the divisor
    EXPORT_GLOBAL_AVGPOOL,  // mean over H and W: [N, C, H, W] -> [N, C]
    EXPORT_BATCHNORM,       // (x - running_mean) / sqrt(running_var + epsilon) * w + b
    EXPORT_FLATTEN,         // [N, ...] -> [N, rest]
    EXPORT_RESHAPE,         // [N, ...] -> [N] + shape
    EXPORT_ADD,             // the sum of the inputs
    EXPORT_ACTIVATION       // activation (slope for leaky_relu)
} ExportOp;

typedef struct ExportNode {
    ExportOp op;
    int has_bias;                  // gemm, conv: params[1] is the bias
    int kernel[2], stride[2], dilation[2];
    int pad_before[2], pad_after[2];  // [h, w]: top/left and bottom/right
    int groups;
    float epsilon, momentum;       // batchnorm
    ActivationKind activation;
    float slope;                   // leaky_relu
    Shape shape;                   // reshape: the sample's new shape
} ExportNode;

#endif
