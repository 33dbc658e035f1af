// What a backend's `supports` query (kernels/backend.h) must answer, written out by hand
// per compute capability: a table, not a formula, so that a rule changed in
// backend_supports_on (or in precision_min_compute, whose floors it reads) fails
// tests/unit/test_backend_supports.c on every build, and so that
// tests/gpu/test_cuda_parity_supports.c checks the CUDA backend on a card against its
// compute capability's column rather than against the function under test.
#ifndef TRAINER_TESTS_SUPPORTS_EXPECTED_H
#define TRAINER_TESTS_SUPPORTS_EXPECTED_H

#include "kernels/backend.h"

// The columns: the CPU (0), then the GPUs' compute capabilities, times ten: Pascal (P100),
// Volta (V100), Turing (T4), Ampere (A100, then the RTX 30 series' 8.6), Hopper (H100/H200).
enum { SUPPORTS_COLUMNS = 7 };
static const int supports_columns[SUPPORTS_COLUMNS] = {0, 60, 70, 75, 80, 86, 90};

// One row per op family and dtype. Layout changes no answer of the table: every op takes
// NCHW and NHWC on both backends (the CPU's by transposing around its NCHW code), so a row
// holds for either; any other Layout value is refused everywhere (the tests check that
// apart).
typedef struct SupportsRow {
    OpFamily family;
    DType dtype;
    int answer[SUPPORTS_COLUMNS];
} SupportsRow;

static const SupportsRow supports_expected[] = {
    //                               CPU 6.0 7.0 7.5 8.0 8.6 9.0
    // Storage: every backend keeps activations in f32, bf16 or f16, widening to f32 to
    // compute and rounding once on the store, so no GPU needs its 16-bit arithmetic for it
    // (Pascal stores bf16 as plain 16-bit words just as well).
    {OP_FAMILY_STORAGE, DTYPE_F32,  {1,  1,  1,  1,  1,  1,  1}},
    {OP_FAMILY_STORAGE, DTYPE_F16,  {1,  1,  1,  1,  1,  1,  1}},
    {OP_FAMILY_STORAGE, DTYPE_BF16, {1,  1,  1,  1,  1,  1,  1}},
    // i32 labels and u8 pixels do exist, but reach their ops (the losses, gather_samples)
    // as typed pointers, never through a DType argument: no op stores activations so.
    {OP_FAMILY_STORAGE, DTYPE_I32,  {0,  0,  0,  0,  0,  0,  0}},
    {OP_FAMILY_STORAGE, DTYPE_U8,   {0,  0,  0,  0,  0,  0,  0}},
    // GEMMs and convolutions in f32: plain FMA on every GPU and the CPU. (TF32 is a
    // precision, not a dtype: f32 operands that Ampere's tensor cores may round; it is not
    // asked here.)
    {OP_FAMILY_MATMUL,  DTYPE_F32,  {1,  1,  1,  1,  1,  1,  1}},
    // fp16 operands need tensor cores, which Volta (7.0) introduced. Pascal's 6.0 has fast
    // fp16 arithmetic but no tensor cores, so no; nor the CPU, which computes in f32 only.
    {OP_FAMILY_MATMUL,  DTYPE_F16,  {0,  0,  1,  1,  1,  1,  1}},
    // bf16 operands need Ampere's (8.0) tensor cores: Turing's (7.5) take fp16 but not
    // bf16, so a T4 is the card that says yes to f16 and no to bf16.
    {OP_FAMILY_MATMUL,  DTYPE_BF16, {0,  0,  0,  0,  1,  1,  1}},
    // Integer tensor cores exist from Turing, but trainer has no integer GEMM or
    // convolution, and i32 and u8 are no storage type to begin with.
    {OP_FAMILY_MATMUL,  DTYPE_I32,  {0,  0,  0,  0,  0,  0,  0}},
    {OP_FAMILY_MATMUL,  DTYPE_U8,   {0,  0,  0,  0,  0,  0,  0}},
};
enum { SUPPORTS_ROWS = (int)(sizeof supports_expected / sizeof supports_expected[0]) };

// The column for compute capability `compute` (0: the CPU): its own, or for a GPU the table
// does not list, the newest listed one below it (8.9 reads 8.6's, 10.0 and 12.0 read 9.0's:
// no answer here changes between them, as the floors are Volta's and Ampere's); -1 for a GPU
// older than Pascal.
static inline int supports_column(int compute) {
    if (compute == 0) return 0;
    int column = -1;
    for (int i = 1; i < SUPPORTS_COLUMNS; i++)
        if (supports_columns[i] <= compute) column = i;
    return column;
}

// The row for `family` and `dtype`; NULL when the table lacks it.
static inline const SupportsRow *supports_row(OpFamily family, DType dtype) {
    for (int i = 0; i < SUPPORTS_ROWS; i++)
        if (supports_expected[i].family == family && supports_expected[i].dtype == dtype)
            return &supports_expected[i];
    return NULL;
}

#endif
