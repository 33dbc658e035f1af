// The CUDA backend against the CPU reference, the norms (sum_squares, scale)
// (kernels/backend.h); parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Both sum in double, in different orders: about n * 2^-53 apart relative to the sum, far
// below 1e-9 for every size here. A NaN or infinity in x must give a non-finite sum on both.
static const double SUM_SQUARES_RTOL = 1e-9;

static void sum_squares_case(size_t n, float planted) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "n=%zu planted %g", n, planted);
    float *x = uniform(n, -3.0f, 3.0f);
    if (planted != 0.0f) x[n / 2] = planted;
    float *d_x = dev_floats(x, n);
    double *d_sum = dev_alloc(sizeof(double));
    if (GPU_CALL(sum_squares, d_x, n, d_sum)) return;
    double got, want;
    download(&got, d_sum, sizeof got);
    CPU_CALL(sum_squares, x, n, &want);
    double err = isfinite(want) ? fabs(got - want) / (fabs(want) + 1e-300)
                                : (isfinite(got) ? INFINITY : 0.0);
    if (!(err <= SUM_SQUARES_RTOL))
        fprintf(stderr, "FAIL sum_squares [%s]: gpu %.17g vs cpu %.17g\n", shape, got, want);
    record("sum_squares", err, !(err <= SUM_SQUARES_RTOL));
}

// x * factor is one rounded product on both: equal bit for bit.
static void scale_case(size_t n, float factor) {
    Status st;
    status_clear(&st);
    snprintf(shape, sizeof shape, "n=%zu factor %g", n, factor);
    float *x = uniform(n, -3.0f, 3.0f);
    float *d_x = dev_floats(x, n);
    if (GPU_CALL(scale, d_x, factor, n)) return;
    CPU_CALL(scale, x, factor, n);
    compare_exact("scale", "x", fetch(d_x, n), x, n, 0, 0);
}

static void test_norms(void) {
    // sum_squares splits past 16384 values (cuda_norm.cu): 65537 is five blocks, the last
    // of one value; the last size is a 4096 x 4096 gradient's, and then some.
    static const size_t sizes[] = {1, 1000, 16384, 65537, ((size_t)1 << 20) + 3,
                                   ((size_t)1 << 24) + 7};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (HAVE(sum_squares)) {
            sum_squares_case(sizes[s], 0.0f);
            end_case();
            sum_squares_case(sizes[s], NAN);
            end_case();
            sum_squares_case(sizes[s], INFINITY);
            end_case();
        }
        if (HAVE(scale)) {
            scale_case(sizes[s], 0.37f);
            end_case();
        }
    }
}

static void run(const ParityPass *pass) {
    (void)pass;
    if (section("norms")) test_norms();
}

PARITY_MAIN("test_cuda_parity_norms", BACKEND_NORM_OPS, 0, run)
