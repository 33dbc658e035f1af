// The CUDA backend against the CPU reference, the supports query (kernels/backend.h);
// parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// `supports`: storage answers as the CPU's (both store f32, bf16 and f16 in either layout),
// GEMM and convolution answers as backend_supports_on gives for this GPU's compute
// capability (the CPU standing in answers as the CPU).
static void test_supports(int compute) {
    REQUIRE(supports);
    int wrong = 0;
    const Layout layouts[3] = {LAYOUT_NCHW, LAYOUT_NHWC, (Layout)7};
    for (int family = OP_FAMILY_STORAGE; family <= OP_FAMILY_MATMUL; family++)
        for (int dtype = 0; dtype < DTYPE_COUNT; dtype++)
            for (int l = 0; l < 3; l++) {
                OpFamily f = (OpFamily)family;
                int got = gpu->supports(gpu, f, (DType)dtype, layouts[l]);
                int want = f == OP_FAMILY_STORAGE
                               ? cpu->supports(cpu, f, (DType)dtype, layouts[l])
                               : backend_supports_on(gpu->kind == BACKEND_CUDA ? compute : 0, f,
                                                     (DType)dtype, layouts[l]);
                if (got == want) continue;
                fprintf(stderr, "FAIL supports [family %d, %s, layout %d]: gpu %d, want %d\n",
                        family, dtype_name((DType)dtype), (int)layouts[l], got, want);
                wrong++;
            }
    record("supports", wrong, wrong > 0);
}

static void run(const ParityPass *pass) {
    if (section("supports")) test_supports(pass->compute);
}

PARITY_MAIN("test_cuda_parity_supports", BACKEND_QUERY_OPS, 0, run)
