// 16-bit activation storage through max, average and global average pooling (maxpool,
// avgpool and global_avgpool store bf16 and f16 under --precision bf16|fp16), on the CPU,
// whose pooling ops are the reference for the CUDA kernels (tests/gpu's
// test_cuda_parity16_pool). Two levels:
// - each op alone: given 16-bit x (or dy, and an old dx to accumulate into), the 16-bit
//   result is the f32 op's result on the widened values rounded once, bit for bit, so
//   sums (averages, overlapping windows' gradients, the old dx) stay f32 until the store;
// - a model whose pooling layers sit between dense layers, stores 16 bits without a cast
//   between them, and gives the loss and parameter gradients of f32 storage within what
//   rounding each stored value to 8 (bf16) or 11 (f16) significant bits can move them.
#include "storage16_net.h"
#include "pool_shape.h"
#include "stored16.h"
#include "kernels/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---- the ops alone ----------------------------------------------------------------------

// Disjoint windows, overlapping ones with padding, a clipped border, a whole-image window.
static const PoolShape shapes[] = {
    {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, "disjoint"},
    {2, 2, 7, 9, 3, 3, 2, 2, 1, 1, "overlapping, stride 2, padding"},
    {1, 3, 5, 5, 3, 3, 1, 1, 1, 1, "overlapping, stride 1, padding"},
    {3, 2, 7, 5, 4, 2, 3, 1, 2, 1, "a clipped border"},
    {4, 5, 6, 6, 6, 6, 1, 1, 0, 0, "a whole-image window"},
};

// n values in [-1, 1), stored in 16 bits (bits) and as those stored values widened (wide).
static void stored_values(Rng *rng, size_t n, DType dtype, uint16_t *bits, float *wide) {
    for (size_t i = 0; i < n; i++) {
        bits[i] = stored16_from_f32(2.0f * rng_uniform(rng) - 1.0f, dtype);
        wide[i] = stored16_to_f32(bits[i], dtype);
    }
}

// got (16-bit) must equal the f32 reference rounded once; NaN matches NaN.
static void check_rounded_once(const char *op, const PoolShape *s, const uint16_t *got,
                               const float *want, size_t n, DType dtype) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t expected = stored16_from_f32(want[i], dtype);
        float stored = stored16_to_f32(got[i], dtype);
        if (got[i] == expected || (isnan(want[i]) && isnan(stored))) continue;
        if (bad++ < 3)
            fprintf(stderr, "  CHECK failed: %s %s %dx%dx%dx%d window %dx%d stride %dx%d pad "
                    "%dx%d: element %zu is %.9g, the f32 result %.9g rounds to %.9g\n", op,
                    dtype_name(dtype), s->n, s->c, s->h, s->w, s->kh, s->kw, s->sh, s->sw,
                    s->ph, s->pw, i, stored, want[i], stored16_to_f32(expected, dtype));
    }
    if (bad) test_failures++;
}

static void *alloc_or_die(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) {
        fprintf(stderr, "test_storage16_pool: out of host memory\n");
        exit(1);
    }
    return p;
}

// Every pooling op on one shape: the 16-bit op against the f32 op on the same stored
// values, forward and backward, with and without an old dx to accumulate into.
static void ops_round_once(const PoolShape *s, DType dtype, Rng *rng) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Pool2dGeometry g = pool_geometry_of(s);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    uint16_t *x16 = alloc_or_die(nx * 2), *y16 = alloc_or_die(ny * 2);
    uint16_t *dy16 = alloc_or_die(ny * 2), *dx16 = alloc_or_die(nx * 2);
    float *x = alloc_or_die(nx * 4), *y = alloc_or_die(ny * 4), *dy = alloc_or_die(ny * 4);
    float *dx = alloc_or_die(nx * 4), *dx0 = alloc_or_die(nx * 4);
    uint16_t *dx0_16 = alloc_or_die(nx * 2);
    int32_t *arg16 = alloc_or_die(ny * 4), *arg = alloc_or_die(ny * 4);
    stored_values(rng, nx, dtype, x16, x);
    x16[nx / 2] = stored16_from_f32(NAN, dtype);  // a NaN wins its window in 16 bits too
    x[nx / 2] = NAN;
    stored_values(rng, ny, dtype, dy16, dy);
    stored_values(rng, nx, dtype, dx0_16, dx0);

    CHECK_INT_EQ(b->maxpool_forward(b, &g, &(MaxpoolForwardTensors){.dtype = dtype, .x = x16,
                                    .y = y16, .argmax = arg16}, &st), 0);
    CHECK_INT_EQ(b->maxpool_forward(b, &g, &(MaxpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                    .y = y, .argmax = arg}, &st), 0);
    check_rounded_once("maxpool_forward", s, y16, y, ny, dtype);
    CHECK(memcmp(arg16, arg, ny * sizeof *arg) == 0);
    for (int accumulate = 0; accumulate <= 1; accumulate++) {
        memcpy(dx16, dx0_16, nx * 2);
        memcpy(dx, dx0, nx * 4);
        CHECK_INT_EQ(b->maxpool_backward(b, &g, &(MaxpoolBackwardTensors){.dtype = dtype,
                                         .dy = dy16, .argmax = arg, .dx = dx16,
                                         .accumulate = accumulate}, &st), 0);
        CHECK_INT_EQ(b->maxpool_backward(b, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_F32,
                                         .dy = dy, .argmax = arg, .dx = dx, .accumulate = accumulate
                                         }, &st), 0);
        check_rounded_once("maxpool_backward", s, dx16, dx, nx, dtype);
    }

    x16[nx / 2] = stored16_from_f32(0.25f, dtype);
    x[nx / 2] = 0.25f;
    CHECK_INT_EQ(b->avgpool_forward(b, &g, &(AvgpoolForwardTensors){.dtype = dtype, .x = x16,
                                    .y = y16}, &st), 0);
    CHECK_INT_EQ(b->avgpool_forward(b, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_F32, .x = x,
                                    .y = y}, &st), 0);
    check_rounded_once("avgpool_forward", s, y16, y, ny, dtype);
    for (int accumulate = 0; accumulate <= 1; accumulate++) {
        memcpy(dx16, dx0_16, nx * 2);
        memcpy(dx, dx0, nx * 4);
        CHECK_INT_EQ(b->avgpool_backward(b, &g, &(AvgpoolBackwardTensors){.dtype = dtype,
                                         .dy = dy16, .dx = dx16, .accumulate = accumulate}, &st),
                                             0);
        CHECK_INT_EQ(b->avgpool_backward(b, &g, &(AvgpoolBackwardTensors){.dtype = DTYPE_F32,
                                         .dy = dy, .dx = dx, .accumulate = accumulate}, &st), 0);
        check_rounded_once("avgpool_backward", s, dx16, dx, nx, dtype);
    }
    free(x16), free(y16), free(dy16), free(dx16), free(dx0_16);
    free(x), free(y), free(dy), free(dx), free(dx0), free(arg16), free(arg);
}

// Storage other than f32, bf16 and f16 is a bug in the caller: a status, not a guess.
static void other_storage_is_refused(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Pool2dGeometry g = pool_geometry_of(&shapes[0]);
    size_t nx = pool_inputs_of(&g), ny = pool_outputs_of(&g);
    int32_t *x = alloc_or_die(nx * 4), *y = alloc_or_die(ny * 4), *arg = alloc_or_die(ny * 4);
    CHECK_INT_EQ(b->avgpool_forward(b, &g, &(AvgpoolForwardTensors){.dtype = DTYPE_I32, .x = x,
                                    .y = y}, &st), STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "avgpool_forward");
    status_clear(&st);
    CHECK_INT_EQ(b->maxpool_backward(b, &g, &(MaxpoolBackwardTensors){.dtype = DTYPE_I32, .dy = y,
                                     .argmax = arg, .dx = x, .accumulate = 0}, &st),
                                         STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "maxpool_backward");
    free(x), free(y), free(arg);
}

// ---- a model ------------------------------------------------------------------------------

// Pooling between dense layers, every window kind: mp's overlapping, padded windows and
// ap's, mp2's disjoint ones, and a global average over an image (gap1) and over a pooled
// one (gap2). img and mp are each read twice, so mp and ap accumulate their input
// gradient into a 16-bit one that gap1 and gap2 wrote first.
static const StorageNetSpec spec = {
    .model_name = "pool16.model",
    .text = "input shape=48\n"
            "dense units=72 act=tanh name=d1\n"
            "reshape shape=2x6x6 name=img\n"
            "maxpool size=3 stride=2 pad=1 name=mp\n"
            "avgpool size=2 stride=1 pad=1 name=ap\n"
            "maxpool size=2 name=mp2\n"
            "flatten name=f1\n"
            "dense units=6 name=d2\n"
            "global_avgpool from=img name=gap1\n"
            "global_avgpool from=mp name=gap2\n"
            "add from=gap1,gap2 name=both\n"
            "dense units=6 name=d3\n"
            "add from=d2,d3\n"
            "dense units=5 name=d4\n"
            "loss softmax_cross_entropy\n",
    .batch = 16, .classes = 5, .input_low = -1.0f, .param_seed = 7, .ctx_seed = 5};

static const char *const pool_layers[] = {"mp", "ap", "mp2", "gap1", "gap2"};
enum { POOL_LAYERS = sizeof pool_layers / sizeof pool_layers[0] };

// The pooling layers store 16 bits and read the dense layer's 16-bit output (through the
// reshape view) and each other's with no cast between; every other layer still reads the
// dtype it stores; mp and ap accumulate into a 16-bit input gradient; and DTYPE_F32
// removes every cast again. Where the adds' casts sit is for their own kind to say.
static void pools_read_16_bits_without_casts(DType storage) {
    StorageNet n;
    if (storage_net_open(&n, &spec, storage)) return;
    for (int p = 0; p < POOL_LAYERS; p++) {
        const Layer *l = layer_named(&n.g, pool_layers[p]);
        CHECK(l != NULL);
        if (!l) continue;
        CHECK(l->out_dtype == storage);
        CHECK(!is_cast(l->inputs[0]));
        CHECK(l->inputs[0]->out_dtype == storage);
    }
    const Layer *mp = layer_named(&n.g, "mp"), *ap = layer_named(&n.g, "ap");
    CHECK(mp && mp->input_grad_accumulate[0] && mp->input_needs_grad[0]);
    CHECK(ap && ap->input_grad_accumulate[0] && ap->input_needs_grad[0]);
    int casts = check_casts_follow_their_input(&n.g);
    check_reads_own_dtype(&n.g);
    check_f32_storage_removes_casts(&n.g, casts);
    storage_net_free(&n);
}

int main(void) {
    static const DType types[] = {DTYPE_BF16, DTYPE_F16};
    Rng rng;
    rng_seed(&rng, 31);
    for (int t = 0; t < 2; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            ops_round_once(&shapes[s], types[t], &rng);
    other_storage_is_refused();
    pools_read_16_bits_without_casts(DTYPE_BF16);
    pools_read_16_bits_without_casts(DTYPE_F16);
    // bound: the relative difference rounding may give, as in test_storage16.c: measured
    // 5.6e-3 (bf16) and 6.4e-4 (f16) at the worst layer, held to about three times that, so
    // that another kind turning 16-bit (the adds) does not break a correct pooling path.
    check_storage_matches_f32(&spec, DTYPE_BF16, 4, 2e-2);
    check_storage_matches_f32(&spec, DTYPE_F16, 4, 2e-3);
    return test_exit_code("test_storage16_pool");
}
