// Activations stored in bf16 or f16 (--precision bf16|fp16, core/graph.c's
// graph_set_storage): how a kernel reads and writes them. Every kernel computes in f32;
// a 16-bit value is widened on the load and rounded to nearest even once on the store,
// which is what the CPU reference (kernels/cpu/cpu_convert.c) does, so the two agree to
// the f32 arithmetic's rounding and then round the same way.
#ifndef TRAINER_CUDA_STORAGE_H
#define TRAINER_CUDA_STORAGE_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/cuda_internal.h"

__device__ static inline float storage_load(const float *p, size_t i) { return p[i]; }
__device__ static inline float storage_load(const __nv_bfloat16 *p, size_t i) {
    return __bfloat162float(p[i]);
}
__device__ static inline float storage_load(const __half *p, size_t i) {
    return __half2float(p[i]);
}

__device__ static inline void storage_store(float *p, size_t i, float v) { p[i] = v; }
__device__ static inline void storage_store(__nv_bfloat16 *p, size_t i, float v) {
    p[i] = __float2bfloat16_rn(v);
}
__device__ static inline void storage_store(__half *p, size_t i, float v) {
    p[i] = __float2half_rn(v);
}

// v as the nearest value *p's type can store, in f32 (the pointer only picks the type):
// gemm_bias_activation's bias under a 16-bit C (kernels/backend.h).
__device__ static inline float storage_round(const float *, float v) { return v; }
__device__ static inline float storage_round(const __nv_bfloat16 *, float v) {
    return __bfloat162float(__float2bfloat16_rn(v));
}
__device__ static inline float storage_round(const __half *, float v) {
    return __half2float(__float2half_rn(v));
}

// cuBLAS's and cuBLASLt's name for a storage dtype; CUDA_R_32F for anything else, which
// backend_dtype_check has refused first.
static inline cudaDataType_t cuda_storage_type(DType dtype) {
    switch (dtype) {
    case DTYPE_BF16: return CUDA_R_16BF;
    case DTYPE_F16: return CUDA_R_16F;
    default: return CUDA_R_32F;
    }
}

// Calls CALL with `storage_t` defined as the C type of DTYPE (f32, bf16 or f16), so one
// templated launcher serves the three; the caller has checked DTYPE with
// backend_dtype_check.
#define CUDA_STORAGE_DISPATCH(DTYPE, CALL)                                                   \
    do {                                                                                     \
        switch (DTYPE) {                                                                     \
        case DTYPE_BF16: {                                                                   \
            typedef __nv_bfloat16 storage_t;                                                 \
            CALL;                                                                            \
        } break;                                                                             \
        case DTYPE_F16: {                                                                    \
            typedef __half storage_t;                                                        \
            CALL;                                                                            \
        } break;                                                                             \
        default: {                                                                           \
            typedef float storage_t;                                                         \
            CALL;                                                                            \
        } break;                                                                             \
        }                                                                                    \
    } while (0)

// Bias and activation over a GEMM's stored C in one pass, for the shapes where cuBLASLt
// runs no epilogue on 16-bit C (cuda_elementwise.cu): c[r][col] = act(c + bias[col]),
// bias f32 (rounded to C's type first, as the epilogue would) or NULL, rows of `cols`
// values `ldc` apart.
int cuda_bias_activation_stored(const Backend *b, DType dtype, void *c, int rows, int cols,
                                int ldc, const float *bias, const FusedActivation *act,
                                Status *st);

#endif
