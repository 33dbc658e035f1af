// The precision GEMMs and convolutions compute in (`--precision`, `train precision=`).
//
// Every precision keeps parameters (the master weights), their gradients and the optimizer
// state in f32. What changes is what the GPU's tensor cores round a GEMM's or a
// convolution's inputs to before multiplying (products are summed in f32): TF32 keeps 11
// significant bits, bf16 8 (with f32's exponent range), fp16 11 (with a range up to 65504,
// hence loss scaling); and, for bf16 and fp16, how the activations of the layers that can
// are stored (precision_activation_dtype, graph_set_storage): every kind that has
// LayerKind.stores_16bit (all but the input and the losses) in 16 bits.
#ifndef TRAINER_PRECISION_H
#define TRAINER_PRECISION_H

#include "base/dtype.h"

#ifdef __cplusplus
extern "C" {  // the CUDA backend reads it too
#endif

typedef enum Precision {
    // Not chosen: TF32 where the GPU has it (compute capability 8.0+), fp32 elsewhere.
    // Zero, so that option structs left zeroed keep meaning "the default".
    PRECISION_DEFAULT = 0,
    PRECISION_FP32,
    PRECISION_TF32,
    PRECISION_BF16,
    PRECISION_FP16,
    PRECISION_COUNT
} Precision;

// "fp32", "tf32", "bf16", "fp16" ("default" for PRECISION_DEFAULT).
const char *precision_name(Precision p);
// The words --precision and precision= take, NULL-terminated, in the enum's order from
// PRECISION_FP32: precision_names[i] is Precision PRECISION_FP32 + i.
extern const char *const precision_names[];
// Returns 0 and sets *out when `text` is one of precision_names.
int precision_parse(const char *text, Precision *out);

// The compute capability, times ten, a GPU needs to compute in `p` (80 for TF32 and bf16,
// Ampere's tensor cores; 70 for fp16, Volta's); 0 for fp32.
int precision_min_compute(Precision p);
// What a GPU of compute capability `compute` (times ten) computes in when asked for `p`:
// the default and tf32 become fp32 below 8.0 (no TF32 there, as PyTorch's allow_tf32 is
// then ignored); bf16 and fp16 are themselves or, below their floor, PRECISION_DEFAULT
// (no such precision on that GPU: callers refuse it).
Precision precision_on_gpu(Precision p, int compute);

// What convolutions of f32 data compute in when GEMMs compute in `p`: the same, but TF32
// for bf16, since cuDNN's legacy convolution API converts FP32 data down only to FP16, and
// FP16 would give up bf16's range, the reason to choose it. (A conv2d layer under bf16
// stores bf16 activations, and so computes in bf16.)
Precision precision_for_convolutions(Precision p);

// The dtype the activations and gradients of 16-bit-capable layers are stored in when
// computing in `p`: bf16 for bf16, f16 for fp16, f32 otherwise.
DType precision_activation_dtype(Precision p);

#ifdef __cplusplus
}
#endif

#endif
