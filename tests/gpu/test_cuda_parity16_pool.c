// Pooling on activations stored in bf16 and f16: each CUDA op (kernels/cuda/cuda_pool.cu)
// against the CPU op (kernels/cpu/cpu_pool.c) in the same storage, on the same stored
// inputs. test_cuda_parity_conv_pool checks the f32 storage of the same ops; tests/unit's
// test_storage16_pool checks the CPU's 16-bit ops against its f32 ones.
//
// What each comparison allows, and why:
// - maxpool_forward (y and argmax) and maxpool_backward (dx): bit for bit. The max is one
//   of the stored inputs, and each dx is the same f32 sum of dy's (and the old dx) in the
//   same order on both, then rounded to nearest even once. NaN matches any NaN.
// - avgpool_forward and avgpool_backward: within one unit in the last place of the
//   storage type (2^-7 of the value for bf16, 2^-10 for f16). Both run the same f32
//   operations in the same order and should agree bit for bit; an f32 result that differs
//   in its last bit could still round the other way, and no more. A wrong window,
//   padding, scale or accumulation is off by far more.
// Max-pool backward runs both of its kernels: the per-output one (windows that do not
// overlap) with every lever on, and the gather with the maxpool-scatter lever off
// (`--without maxpool-scatter`, base/lever.h), which every overlapping shape takes anyway.
// accumulate = 0 and 1 for both backwards (an old 16-bit dx summed in f32 with the new
// gradients); output buffers start as NaN bytes so that a skipped element shows.
// Every case runs in both layouts, NCHW and NHWC (the same stored values read as [batch, h,
// w, channels], argmax laid out as y), each case's text naming its layout.
//
// Skipped (77) when no CUDA backend opens; bf16 alone is skipped on a GPU older than
// compute capability 8.0 (the backend refuses to open in it).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/lever.h"
#include "base/precision.h"
#include "base/rng.h"
#include "kernels/backend.h"
#include "cuda_or_skip.h"
#include "device_buffers.h"
#include "pool_shape.h"
#include "stored16.h"

static const PoolShape cases[] = {
    {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, "disjoint 2x2 windows"},
    {2, 3, 7, 7, 2, 2, 2, 2, 0, 0, "disjoint, the last row and column in no window"},
    {2, 3, 9, 10, 2, 2, 3, 3, 0, 0, "gaps between windows (stride > size)"},
    {2, 3, 7, 7, 2, 2, 2, 2, 1, 1, "disjoint, clipped by padding at both ends"},
    {1, 2, 5, 5, 3, 3, 1, 1, 1, 1, "overlapping, padding 1"},
    {3, 2, 9, 11, 3, 3, 2, 2, 1, 1, "overlapping, stride 2, padding"},
    {2, 4, 6, 8, 3, 2, 2, 1, 1, 1, "non-square window and stride"},
    {2, 2, 7, 5, 4, 4, 3, 3, 2, 2, "even window with padding size / 2"},
    {8, 16, 7, 7, 7, 7, 1, 1, 0, 0, "global_avgpool's whole-image window"},
    {3, 5, 1, 1, 1, 1, 1, 1, 0, 0, "1x1 images"},
    {64, 32, 14, 14, 2, 2, 2, 2, 0, 0, "lenet's second pool at batch 64"},
    // More inputs than one launch's 65535 x 256 threads: the grid-stride loops go round.
    // (Random inputs only: ties and NaN are the smaller cases' job, and the CPU reference
    // takes a while over 25.7 million values.)
    {1024, 32, 28, 28, 2, 2, 2, 2, 0, 0, "lenet's first pool at batch 1024"},
};
enum { CASES = sizeof cases / sizeof cases[0] };

enum { INPUT_RANDOM, INPUT_TIES, INPUT_NAN, INPUT_KINDS };
static const char *const input_names[] = {"random", "ties", "with NaN"};

static const Backend *cpu;
static Rng rng;
static char label[512];  // the case being run, for messages

static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test_cuda_parity16_pool: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

// n stored values: uniform in [-1, 1), or -0.5, 0 and 0.5 only (ties), or with a NaN in
// every eleventh place; some -0 among gradients (the CPU's 0 + -0 leaves +0).
static uint16_t *stored_values(size_t n, int kind, DType dtype) {
    uint16_t *v = host_alloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        float x = 2.0f * rng_uniform(&rng) - 1.0f;
        if (kind == INPUT_TIES) x = 0.5f * (float)((int)rng_below(&rng, 3) - 1);
        if (kind == INPUT_NAN && i % 11 == 3) x = NAN;
        if (kind == INPUT_RANDOM && i % 7 == 5) x = -0.0f;
        v[i] = stored16_from_f32(x, dtype);
    }
    return v;
}

static void report(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "FAIL %s [%s]: %s", what, label, text);
    test_failures++;
}

// ---- device buffers, freed at the end of each case -------------------------------------

static DeviceBuffers dev = {.report = report};

// The device buffer's bytes in host memory (NaN bytes where the copy did not happen).
static void *fetch(const void *d, size_t bytes) {
    void *host = host_alloc(bytes ? bytes : 1);
    memset(host, 0xFF, bytes);
    device_download(&dev, host, d, bytes);
    return host;
}

// The op's status, then a synchronize, so that an asynchronous fault is pinned to it.
static int gpu_done(const Backend *gpu, const char *op, int rc, const Status *st) {
    if (rc) report(op, st);
    Status sync;
    status_clear(&sync);
    if (!rc && gpu->synchronize(gpu, &sync)) {
        report(op, &sync);
        dev.broken = 1;
    }
    return rc || dev.broken;
}

static int cpu_done(const char *op, int rc, const Status *st) {
    if (rc) report(op, st);
    return rc;
}

// ---- comparing ------------------------------------------------------------------------------

// 16-bit values: bit for bit (ulps = 0) or within `ulps` units in the last place of the
// reference's own exponent; NaN matches any NaN.
static void compare16(const char *op, const char *what, const uint16_t *got,
                      const uint16_t *want, size_t n, DType dtype, int ulps) {
    double unit = dtype == DTYPE_BF16 ? 0x1p-7 : 0x1p-10;
    double smallest = dtype == DTYPE_BF16 ? 0x1p-133 : 0x1p-24;  // subnormal spacing
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] == want[i]) continue;
        double g = stored16_to_f32(got[i], dtype), w = stored16_to_f32(want[i], dtype);
        if (isnan(g) && isnan(w)) continue;
        int exponent;
        frexp(w, &exponent);
        double ulp = w == 0.0 ? smallest : fmax(ldexp(unit, exponent - 1), smallest);
        if (ulps && isfinite(g) && fabs(g - w) <= ulps * ulp) continue;
        if (bad++ < 3)
            fprintf(stderr, "FAIL %s %s [%s]: element %zu: gpu %.9g (0x%04x) vs cpu %.9g "
                    "(0x%04x)%s\n", op, what, label, i, g, got[i], w, want[i],
                    ulps ? ", more than one unit in the last place" : ", must be equal");
    }
    if (bad) {
        fprintf(stderr, "FAIL %s %s [%s]: %zu of %zu elements differ\n", op, what, label, bad, n);
        test_failures++;
    }
}

static void compare_argmax(const int32_t *got, const int32_t *want, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 3)
            fprintf(stderr, "FAIL maxpool_forward argmax [%s]: element %zu: gpu %d vs cpu %d\n",
                    label, i, got[i], want[i]);
    if (bad) test_failures++;
}

// ---- the ops ---------------------------------------------------------------------------------

static void describe(const PoolShape *k, DType dtype, Layout layout, const char *extra) {
    snprintf(label, sizeof label, "%s %s, %s: n=%d c=%d in=%dx%d window=%dx%d stride=%dx%d "
             "pad=%dx%d%s", dtype_name(dtype), layout_name(layout), k->what, k->n, k->c, k->h,
             k->w, k->kh, k->kw, k->sh, k->sw, k->ph, k->pw, extra);
}

// The case's geometry with its activations (x, y, dx, dy and argmax) in `layout`.
static Pool2dGeometry geometry_in(const PoolShape *k, Layout layout) {
    Pool2dGeometry g = pool_geometry_of(k);
    g.layout = layout;
    return g;
}

static void maxpool_forward_case(const Backend *gpu, const PoolShape *k, DType dtype,
                                 Layout layout, int kind) {
    char extra[48];
    snprintf(extra, sizeof extra, ", %s input", input_names[kind]);
    describe(k, dtype, layout, extra);
    dev.gpu = gpu;
    Pool2dGeometry g = geometry_in(k, layout);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    Status st;
    status_clear(&st);
    uint16_t *x = stored_values(nx, kind, dtype), *y = host_alloc(ny * 2);
    int32_t *arg = host_alloc(ny * sizeof *arg);
    void *d_x = device_upload(&dev, x, nx * 2), *d_y = device_poisoned(&dev, ny * 2);
    int32_t *d_arg = device_poisoned(&dev, ny * sizeof *arg);
    if (!dev.broken &&
        !gpu_done(gpu, "maxpool_forward",
                  gpu->maxpool_forward(gpu, &g, &(MaxpoolForwardTensors){.dtype = dtype, .x = d_x,
                                       .y = d_y, .argmax = d_arg}, &st), &st) &&
        !cpu_done("maxpool_forward", cpu->maxpool_forward(cpu, &g, &(MaxpoolForwardTensors){
                                                          .dtype = dtype, .x = x, .y = y,
                                                          .argmax = arg}, &st), &st)) {
        uint16_t *got = fetch(d_y, ny * 2);
        int32_t *got_arg = fetch(d_arg, ny * sizeof *arg);
        compare16("maxpool_forward", "y", got, y, ny, dtype, 0);
        compare_argmax(got_arg, arg, ny);
        free(got);
        free(got_arg);
    }
    free(x), free(y), free(arg);
    device_free_all(&dev);
}

static void maxpool_backward_case(const Backend *gpu, const PoolShape *k, DType dtype,
                                  Layout layout, int kind, int accumulate, const char *path) {
    char extra[96];
    snprintf(extra, sizeof extra, ", %s input, accumulate=%d, %s", input_names[kind], accumulate,
             path);
    describe(k, dtype, layout, extra);
    dev.gpu = gpu;
    Pool2dGeometry g = geometry_in(k, layout);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    Status st;
    status_clear(&st);
    uint16_t *x = stored_values(nx, kind, dtype), *y = host_alloc(ny * 2);
    int32_t *arg = host_alloc(ny * sizeof *arg);
    uint16_t *dy = stored_values(ny, INPUT_RANDOM, dtype);
    uint16_t *dx = stored_values(nx, INPUT_RANDOM, dtype);  // the old dx when accumulating
    if (!cpu_done("maxpool_forward", cpu->maxpool_forward(cpu, &g, &(MaxpoolForwardTensors){
                                                          .dtype = dtype, .x = x, .y = y,
                                                          .argmax = arg}, &st), &st)) {
        void *d_dy = device_upload(&dev, dy, ny * 2);
        int32_t *d_arg = device_upload(&dev, arg, ny * sizeof *arg);
        void *d_dx = accumulate ? device_upload(&dev, dx, nx * 2) : device_poisoned(&dev, nx * 2);
        if (!dev.broken &&
            !gpu_done(gpu, "maxpool_backward",
                      gpu->maxpool_backward(gpu, &g, &(MaxpoolBackwardTensors){.dtype = dtype,
                                            .dy = d_dy, .argmax = d_arg, .dx = d_dx,
                                            .accumulate = accumulate}, &st),
                      &st) &&
            !cpu_done("maxpool_backward",
                      cpu->maxpool_backward(cpu, &g, &(MaxpoolBackwardTensors){.dtype = dtype,
                                            .dy = dy, .argmax = arg, .dx = dx,
                                            .accumulate = accumulate}, &st), &st)) {
            uint16_t *got = fetch(d_dx, nx * 2);
            compare16("maxpool_backward", "dx", got, dx, nx, dtype, 0);
            free(got);
        }
    }
    free(x), free(y), free(arg), free(dy), free(dx);
    device_free_all(&dev);
}

static void avgpool_forward_case(const Backend *gpu, const PoolShape *k, DType dtype,
                                 Layout layout) {
    describe(k, dtype, layout, "");
    dev.gpu = gpu;
    Pool2dGeometry g = geometry_in(k, layout);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    Status st;
    status_clear(&st);
    uint16_t *x = stored_values(nx, INPUT_RANDOM, dtype), *y = host_alloc(ny * 2);
    void *d_x = device_upload(&dev, x, nx * 2), *d_y = device_poisoned(&dev, ny * 2);
    if (!dev.broken &&
        !gpu_done(gpu, "avgpool_forward", gpu->avgpool_forward(gpu, &g, &(AvgpoolForwardTensors){
                                                               .dtype = dtype, .x = d_x, .y = d_y},
                                                               &st),
                  &st) &&
        !cpu_done("avgpool_forward", cpu->avgpool_forward(cpu, &g, &(AvgpoolForwardTensors){
                                                          .dtype = dtype, .x = x, .y = y}, &st),
                                                              &st)) {
        uint16_t *got = fetch(d_y, ny * 2);
        compare16("avgpool_forward", "y", got, y, ny, dtype, 1);
        free(got);
    }
    free(x), free(y);
    device_free_all(&dev);
}

static void avgpool_backward_case(const Backend *gpu, const PoolShape *k, DType dtype,
                                  Layout layout, int accumulate) {
    describe(k, dtype, layout, accumulate ? ", accumulate=1" : ", accumulate=0");
    dev.gpu = gpu;
    Pool2dGeometry g = geometry_in(k, layout);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    Status st;
    status_clear(&st);
    uint16_t *dy = stored_values(ny, INPUT_RANDOM, dtype);
    uint16_t *dx = stored_values(nx, INPUT_RANDOM, dtype);
    void *d_dy = device_upload(&dev, dy, ny * 2);
    void *d_dx = accumulate ? device_upload(&dev, dx, nx * 2) : device_poisoned(&dev, nx * 2);
    if (!dev.broken &&
        !gpu_done(gpu, "avgpool_backward",
                  gpu->avgpool_backward(gpu, &g, &(AvgpoolBackwardTensors){.dtype = dtype,
                                        .dy = d_dy, .dx = d_dx, .accumulate = accumulate}, &st),
                                            &st) &&
        !cpu_done("avgpool_backward",
                  cpu->avgpool_backward(cpu, &g, &(AvgpoolBackwardTensors){.dtype = dtype,
                                        .dy = dy, .dx = dx, .accumulate = accumulate}, &st), &st)) {
        uint16_t *got = fetch(d_dx, nx * 2);
        compare16("avgpool_backward", "dx", got, dx, nx, dtype, 1);
        free(got);
    }
    free(dy), free(dx);
    device_free_all(&dev);
}

// ---- passes ----------------------------------------------------------------------------------

// Every op and case in one storage type; 77 when the GPU cannot open in it.
static int run_storage(Precision precision) {
    DType dtype = precision_activation_dtype(precision);
    const Backend *gpu = NULL, *gather = NULL;
    if (cuda_open_in_or_skip(precision, 0, precision_name(precision), &gpu)) return 77;
    if (cuda_open_in_or_skip(precision, LEVER_BIT(LEVER_MAXPOOL_SCATTER),
                             precision_name(precision), &gather)) {
        fprintf(stderr, "FAIL: %s opens with every lever on but not without maxpool-scatter\n",
                precision_name(precision));
        test_failures++;
        cuda_backend_close(gpu);
        return 0;
    }
    printf("%s: pooling on %s storage, %d shapes, NCHW and NHWC\n", gpu->name,
           dtype_name(dtype), CASES);
    for (int i = 0; i < CASES && !dev.broken; i++)
        for (int l = 0; l < 2 && !dev.broken; l++) {
            const PoolShape *k = &cases[i];
            Layout layout = l ? LAYOUT_NHWC : LAYOUT_NCHW;
            int kinds = k->n >= 1024 ? 1 : INPUT_KINDS;
            for (int kind = 0; kind < kinds; kind++) {
                maxpool_forward_case(gpu, k, dtype, layout, kind);
                for (int acc = 0; acc <= 1; acc++) {
                    maxpool_backward_case(gpu, k, dtype, layout, kind, acc,
                                          "maxpool-scatter on");
                    maxpool_backward_case(gather, k, dtype, layout, kind, acc,
                                          "maxpool-scatter off");
                }
            }
            avgpool_forward_case(gpu, k, dtype, layout);
            for (int acc = 0; acc <= 1; acc++) avgpool_backward_case(gpu, k, dtype, layout, acc);
        }
    cuda_backend_close(gather);
    cuda_backend_close(gpu);
    return 0;
}

int main(void) {
    cpu = cpu_backend();
    rng_seed(&rng, 20261126);
    int probe = cuda_probe_or_skip();
    if (probe) return probe;
    int bf16 = run_storage(PRECISION_BF16);
    int fp16 = run_storage(PRECISION_FP16);
    if (bf16 == 77 && fp16 == 77) return 77;
    return test_exit_code("test_cuda_parity16_pool");
}
