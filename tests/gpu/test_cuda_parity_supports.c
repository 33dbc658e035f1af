// The CUDA backend's supports query (kernels/backend.h) against the answers written down
// for its card's compute capability in tests/supports_expected.h (the table
// tests/unit/test_backend_supports.c holds backend_supports_on to), so that a backend
// wired to another compute capability, another function or another rule fails here.
// parity_harness.c says how the passes run.
//
// The CPU standing in (cpu_stands_in.h) is checked against the table's CPU column: the
// CPU backend's own answers, not the CPU against itself.

#include "parity_harness.h"
#include "supports_expected.h"

#include <stdio.h>

// The table's column for the backend under test: the CPU's, or its card's; -1 (a failure,
// said) when the card's compute capability is unknown or older than the table.
static int expected_column(int compute) {
    if (gpu->kind != BACKEND_CUDA) return 0;
    int column = compute ? supports_column(compute) : -1;
    if (column < 0)
        fprintf(stderr, "FAIL supports: no column of supports_expected.h for compute capability "
                "%d.%d (0: unknown)\n", compute / 10, compute % 10);
    else if (supports_columns[column] != compute)
        printf("supports: sm_%d is not in the table; checked against sm_%d's answers\n",
               compute, supports_columns[column]);
    return column;
}

// Every row of the table in NCHW and NHWC; an unknown layout refused for every row.
static void test_supports(int compute) {
    REQUIRE(supports);
    int column = expected_column(compute);
    if (column < 0) {
        record("supports", 1, 1);
        return;
    }
    const Layout layouts[3] = {LAYOUT_NCHW, LAYOUT_NHWC, (Layout)7};
    int wrong = 0;
    for (int r = 0; r < SUPPORTS_ROWS; r++)
        for (int l = 0; l < 3; l++) {
            const SupportsRow *row = &supports_expected[r];
            int got = gpu->supports(gpu, row->family, row->dtype, layouts[l]);
            int want = l < 2 ? row->answer[column] : 0;
            if (got == want) continue;
            fprintf(stderr, "FAIL supports [family %d, %s, layout %d] on %s: %d, want %d\n",
                    (int)row->family, dtype_name(row->dtype), (int)layouts[l], gpu->name, got,
                    want);
            wrong++;
        }
    record("supports", wrong, wrong > 0);
}

static void run(const ParityPass *pass) {
    if (section("supports")) test_supports(pass->compute);
}

PARITY_MAIN("test_cuda_parity_supports", BACKEND_QUERY_OPS, 0, run)
