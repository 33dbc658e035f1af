#include "base/dtype.h"

#include <math.h>
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

static uint32_t float_bits(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float bits_float(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

uint16_t f32_to_bf16(float value) {
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);  // quiet NaN
    // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even.
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

float bf16_to_f32(uint16_t bits) { return bits_float((uint32_t)bits << 16); }

uint16_t f32_to_f16(float value) {
    uint32_t bits = float_bits(value);
    uint32_t sign = (bits >> 16) & 0x8000u;
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  // NaN
    if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); // rounds past 65504: inf
    if (magnitude < 0x38800000u) {
        // Subnormal half (or zero): its mantissa is the value in units of 2^-24. The
        // scaling is exact; nearbyintf rounds to nearest even in the default mode, and a
        // result of 1024 lands exactly on the smallest normal half.
        float scaled = bits_float(magnitude) * 16777216.0f;
        return (uint16_t)(sign | (uint32_t)nearbyintf(scaled));
    }
    uint32_t rebiased = magnitude - 0x38000000u;  // exponent 127 -> 15
    rebiased += 0x0fffu + ((rebiased >> 13) & 1u);
    return (uint16_t)(sign | (rebiased >> 13));
}

float f16_to_f32(uint16_t bits) {
    uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
    uint32_t exponent = (bits >> 10) & 0x1fu;
    uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0) {
        float value = (float)mantissa * (1.0f / 16777216.0f);  // mantissa * 2^-24
        return sign ? -value : value;
    }
    if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
