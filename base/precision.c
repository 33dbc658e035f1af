#include "base/precision.h"

#include <string.h>

const char *const precision_names[] = {"fp32", "tf32", "bf16", "fp16", NULL};

const char *precision_name(Precision p) {
    if (p == PRECISION_DEFAULT) return "default";
    return p > PRECISION_DEFAULT && p < PRECISION_COUNT ? precision_names[p - PRECISION_FP32]
                                                        : "?";
}

int precision_parse(const char *text, Precision *out) {
    for (int i = 0; precision_names[i]; i++)
        if (strcmp(text, precision_names[i]) == 0) {
            *out = (Precision)(PRECISION_FP32 + i);
            return 0;
        }
    return -1;
}

int precision_min_compute(Precision p) {
    switch (p) {
    case PRECISION_TF32:
    case PRECISION_BF16: return 80;
    case PRECISION_FP16: return 70;
    default: return 0;
    }
}

Precision precision_on_gpu(Precision p, int compute) {
    if (p == PRECISION_DEFAULT) p = PRECISION_TF32;
    if (compute >= precision_min_compute(p)) return p;
    return p == PRECISION_TF32 ? PRECISION_FP32 : PRECISION_DEFAULT;
}

Precision precision_for_convolutions(Precision p) {
    return p == PRECISION_BF16 ? PRECISION_TF32 : p;
}

DType precision_activation_dtype(Precision p) {
    if (p == PRECISION_BF16) return DTYPE_BF16;
    if (p == PRECISION_FP16) return DTYPE_F16;
    return DTYPE_F32;
}
