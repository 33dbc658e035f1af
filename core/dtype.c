#include "core/dtype.h"

#include <string.h>

const char *const dtype_names[] = {"f32", "f16", "bf16", "i32", "u8", NULL};

size_t dtype_size(DType dtype) {
    switch (dtype) {
    case DTYPE_F32: return 4;
    case DTYPE_F16: return 2;
    case DTYPE_BF16: return 2;
    case DTYPE_I32: return 4;
    case DTYPE_U8: return 1;
    case DTYPE_COUNT: break;
    }
    return 0;
}

const char *dtype_name(DType dtype) {
    return (dtype >= 0 && dtype < DTYPE_COUNT) ? dtype_names[dtype] : "?";
}

int dtype_parse(const char *text, DType *out) {
    for (int i = 0; i < DTYPE_COUNT; i++) {
        if (strcmp(text, dtype_names[i]) == 0) {
            *out = (DType)i;
            return 0;
        }
    }
    return -1;
}
