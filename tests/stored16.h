// One value stored in 16 bits (bf16 or f16, the two --precision activation storages) and
// widened back: what the 16-bit storage tests on both sides (tests/unit/test_storage16*.c,
// tests/gpu/test_cuda_*16*.c) build their inputs and expected bits from.
#ifndef TRAINER_TESTS_STORED16_H
#define TRAINER_TESTS_STORED16_H

#include "base/dtype.h"

#include <stddef.h>
#include <stdint.h>

// v rounded to nearest even in `dtype` (DTYPE_BF16, otherwise f16).
static inline uint16_t stored16_from_f32(float v, DType dtype) {
    return dtype == DTYPE_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
}

// The stored value, exactly, as f32.
static inline float stored16_to_f32(uint16_t bits, DType dtype) {
    return dtype == DTYPE_BF16 ? bf16_to_f32(bits) : f16_to_f32(bits);
}

// n values rounded into `to` / widened into `to`: the arrays' forms of the two above, for
// tests that must not build their expected bits with the CPU ops' own cpu_narrow/cpu_widen.
static inline void stored16_narrow(const float *from, uint16_t *to, size_t n, DType dtype) {
    for (size_t i = 0; i < n; i++) to[i] = stored16_from_f32(from[i], dtype);
}
static inline void stored16_widen(const uint16_t *from, float *to, size_t n, DType dtype) {
    for (size_t i = 0; i < n; i++) to[i] = stored16_to_f32(from[i], dtype);
}

#endif
