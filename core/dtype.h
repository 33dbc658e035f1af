// Element types. Every op in the CPU backend computes in f32; f16 and bf16 exist as
// storage types so that model files and checkpoints can name them before the CUDA
// backend computes in them.
#ifndef TRAINER_DTYPE_H
#define TRAINER_DTYPE_H

#include <stddef.h>

typedef enum DType { DTYPE_F32, DTYPE_F16, DTYPE_BF16, DTYPE_I32, DTYPE_U8, DTYPE_COUNT } DType;

size_t dtype_size(DType dtype);
const char *dtype_name(DType dtype);
// Returns 0 and sets *out when `text` names a dtype ("f32", "f16", "bf16", "i32", "u8").
int dtype_parse(const char *text, DType *out);
// NULL-terminated list of the names, for suggestions and messages.
extern const char *const dtype_names[];

#endif
