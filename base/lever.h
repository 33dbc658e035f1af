// The CUDA backend's performance levers that `--without` turns off one at a time, so that
// each can be measured alone, before and after (issue 15; bench/levers_gpu.sh). Each
// lever's off path is the implementation it replaced, kept runnable for that comparison
// and checked against the CPU by the parity tests (tests/gpu/test_cuda_parity_FAMILY.c).
// Fusing act= activations (--no-fuse) and CUDA Graph replay (--cuda-graph) have switches
// of their own.
#ifndef TRAINER_LEVER_H
#define TRAINER_LEVER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {  // the CUDA backend reads it too
#endif

typedef enum Lever {
    LEVER_BIAS_GRADIENT,    // conv2d bias gradient, our two-pass reduction (off: cuDNN's)
    LEVER_BATCHNORM_SPLIT,  // batchnorm over all SMs: many blocks per long channel, or
                            // channels-last rows (off: one block per channel)
    LEVER_MAXPOOL_SCATTER,  // max-pool backward per output where windows do not overlap
    LEVER_MULTI_TENSOR,     // one optimizer launch for many tensors (off: one per tensor)
    LEVER_GEMM_EPILOGUE,    // cuBLASLt's bias/ReLU epilogue (off: GEMM, then bias, then act)
    LEVER_CONV_FUSED,       // cudnnConvolutionBiasActivationForward (off: three passes)
    LEVER_COUNT
} Lever;

// A set of levers: bit `1u << lever` for each. Zero, the default, turns none off.
#define LEVER_BIT(lever) (1u << (unsigned)(lever))
#define LEVER_ALL ((1u << LEVER_COUNT) - 1u)

// "bias-gradient", "batchnorm-split", "maxpool-scatter", "multi-tensor", "gemm-epilogue",
// "conv-fused": lever_names[l] names Lever l; NULL-terminated.
extern const char *const lever_names[];

// Returns 0 and sets *out when `name` is one of lever_names.
int lever_parse(const char *name, Lever *out);

// The set's names in the enum's order, comma-separated ("bias-gradient,conv-fused"), or
// "" for none, truncated to fit `size`. Returns out.
const char *lever_set_format(unsigned set, char *out, size_t size);

// Whether lever `l` is in `disabled`: ops call it as `if (lever_off(ctx->disabled, L))`.
static inline int lever_off(unsigned disabled, Lever l) { return (disabled & LEVER_BIT(l)) != 0; }

#ifdef __cplusplus
}
#endif

#endif
