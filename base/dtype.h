// Element types. Every op in the CPU backend computes in f32; f16 and bf16 exist as
// storage types so that model files and checkpoints can name them before the CUDA
// backend computes in them.
#ifndef TRAINER_DTYPE_H
#define TRAINER_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum DType { DTYPE_F32, DTYPE_F16, DTYPE_BF16, DTYPE_I32, DTYPE_U8, DTYPE_COUNT } DType;

size_t dtype_size(DType dtype);
const char *dtype_name(DType dtype);
// Returns 0 and sets *out when `text` names a dtype ("f32", "f16", "bf16", "i32", "u8").
int dtype_parse(const char *text, DType *out);
// NULL-terminated list of the names, for suggestions and messages.
extern const char *const dtype_names[];

// Storage conversions, round-to-nearest-even, so f16/bf16 tensors and files can be read
// and written by the CPU even though it computes in f32. NaN stays NaN; f16 overflow
// becomes infinity, as in IEEE 754.
uint16_t f32_to_f16(float value);
float f16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);
float bf16_to_f32(uint16_t bits);

#ifdef __cplusplus
}
#endif

#endif
