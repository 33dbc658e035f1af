// 16-bit activation storage for convolutions (conv2d stores bf16/f16 under --precision
// bf16|fp16), run on the CPU, whose conv2d ops are the reference the CUDA ones are held to
// (tests/gpu/test_cuda_parity16_conv.c). Op by op, a 16-bit op is the f32 op on its widened
// operands with each stored value rounded once; a LeNet-like model (a conv with a fused
// relu, one with a standalone gelu, a grouped one, strides, padding, dilation, no bias, a
// dense layer after flatten) gives, from the same weights and batch, the loss and parameter
// gradients of f32 storage within what rounding each stored value can move them; the casts
// sit only where storage changes; and a 16-bit run learns.
#include "storage16_net.h"
#include "kernels/cpu/cpu_ops.h"
#include "stored16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const StorageNetSpec spec = {
    .model_name = "conv16.model",
    .text = "input shape=3x12x12\n"
            "conv2d filters=6 kernel=3 pad=same act=relu name=c1\n"
            "conv2d filters=8 kernel=3 stride=2 pad=1 act=gelu name=c2\n"
            "conv2d filters=8 kernel=3 pad=1 groups=4 act=relu name=c3\n"
            "conv2d filters=4 kernel=2 dilation=2 bias=false name=c4\n"
            "maxpool size=2\n"
            "flatten\n"
            "dense units=5 name=d1\n"
            "loss softmax_cross_entropy\n",
    .batch = 12, .classes = 5, .input_low = -1.0f, .param_seed = 7, .ctx_seed = 5};

// ---- op level: widen, the f32 op, round once ---------------------------------------------

static void fill_uniform(float *x, size_t n, Rng *rng) {
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_uniform(rng) - 1.0f;
}

// The 16-bit op's stored bits against the f32 op run on the same (rounded) operands and
// rounded once: equal, bit for bit, since both are the one f32 computation.
static void check_same_bits(const char *what, DType dtype, const uint16_t *got,
                            const float *wide, size_t n) {
    uint16_t *want = malloc(n * sizeof *want);
    stored16_narrow(wide, want, n, dtype);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 3)
            fprintf(stderr, "  %s %s [%zu]: 0x%04x, want 0x%04x\n", what, dtype_name(dtype), i,
                    got[i], want[i]);
    if (bad) {
        fprintf(stderr, "  CHECK failed: %s %s: %zu of %zu values differ\n", what,
                dtype_name(dtype), bad, n);
        test_failures++;
    }
    free(want);
}

static void ops_round_once(DType dtype) {
    const Backend *b = cpu_backend();
    Conv2dGeometry g = {.batch = 3, .in_channels = 4, .in_h = 7, .in_w = 6, .out_channels = 6,
                        .out_h = 4, .out_w = 3, .kernel_h = 3, .kernel_w = 2, .stride_h = 2,
                        .stride_w = 2, .pad_top = 1, .pad_left = 0, .dilation_h = 1,
                        .dilation_w = 1, .groups = 2};
    size_t nx = (size_t)g.batch * g.in_channels * g.in_h * g.in_w;
    size_t ny = (size_t)g.batch * g.out_channels * g.out_h * g.out_w;
    size_t nw = (size_t)g.out_channels * (g.in_channels / g.groups) * g.kernel_h * g.kernel_w;
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
    float *dx = malloc(nx * sizeof *dx), *y = malloc(ny * sizeof *y), bias[6];
    float *dw = malloc(nw * sizeof *dw), *dw16 = malloc(nw * sizeof *dw16), db[6], db16[6];
    uint16_t *x16 = malloc(nx * 2), *w16 = malloc(nw * 2), *dy16 = malloc(ny * 2);
    uint16_t *y16 = malloc(ny * 2), *dx16 = malloc(nx * 2);
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 17);
    fill_uniform(x, nx, &rng);
    fill_uniform(w, nw, &rng);
    fill_uniform(dy, ny, &rng);
    fill_uniform(bias, 6, &rng);
    // The operands rounded to the storage, and back: the f32 op then sees the same values.
    stored16_narrow(x, x16, nx, dtype);
    stored16_narrow(w, w16, nw, dtype);
    stored16_narrow(dy, dy16, ny, dtype);
    float *wx = malloc(nx * sizeof *wx), *ww = malloc(nw * sizeof *ww);
    float *wdy = malloc(ny * sizeof *wdy);
    stored16_widen(x16, wx, nx, dtype);
    stored16_widen(w16, ww, nw, dtype);
    stored16_widen(dy16, wdy, ny, dtype);
    size_t bytes = 0;
    CHECK_INT_EQ(b->conv2d_workspace_size(b, &g, &bytes, &st), 0);
    void *ws = malloc(bytes);
    Conv2dGeometry g32 = g, g16 = g;
    g16.dtype = dtype;
    FusedActivation tanh_act = {.apply = 1, .kind = ACTIVATION_TANH};

    CHECK_INT_EQ(b->conv2d_forward(b, &g16, &(Conv2dForwardTensors){.x = x16, .w = w16,
                                   .bias = bias, .y = y16, .workspace = ws, .workspace_bytes = bytes
                                   }, &st), 0);
    CHECK_INT_EQ(b->conv2d_forward(b, &g32, &(Conv2dForwardTensors){.x = wx, .w = ww, .bias = bias,
                                   .y = y, .workspace = ws, .workspace_bytes = bytes}, &st), 0);
    check_same_bits("conv2d_forward", dtype, y16, y, ny);
    CHECK_INT_EQ(b->conv2d_forward_bias_activation(b, &g16, &(Conv2dForwardTensors){.x = x16,
                                                   .w = w16, .bias = bias, .y = y16,
                                                   .workspace = ws, .workspace_bytes = bytes},
                                                   &tanh_act, &st), 0);
    CHECK_INT_EQ(b->conv2d_forward_bias_activation(b, &g32, &(Conv2dForwardTensors){.x = wx,
                                                   .w = ww, .bias = bias, .y = y, .workspace = ws,
                                                   .workspace_bytes = bytes}, &tanh_act, &st), 0);
    check_same_bits("conv2d_forward_bias_activation tanh", dtype, y16, y, ny);

    // backward data: overwritten, then added to a 16-bit dx (read widened, rounded once)
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g16, &(Conv2dBackwardDataTensors){.dy = dy16,
                                         .w = w16, .dx = dx16, .workspace = ws,
                                         .workspace_bytes = bytes, .accumulate = 0}, &st), 0);
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g32, &(Conv2dBackwardDataTensors){.dy = wdy, .w = ww,
                                         .dx = dx, .workspace = ws, .workspace_bytes = bytes,
                                         .accumulate = 0}, &st), 0);
    check_same_bits("conv2d_backward_data", dtype, dx16, dx, nx);
    float *wdx = malloc(nx * sizeof *wdx);
    stored16_widen(dx16, wdx, nx, dtype);
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g16, &(Conv2dBackwardDataTensors){.dy = dy16,
                                         .w = w16, .dx = dx16, .workspace = ws,
                                         .workspace_bytes = bytes, .accumulate = 1}, &st), 0);
    CHECK_INT_EQ(b->conv2d_backward_data(b, &g32, &(Conv2dBackwardDataTensors){.dy = wdy, .w = ww,
                                         .dx = wdx, .workspace = ws, .workspace_bytes = bytes,
                                         .accumulate = 1}, &st), 0);
    check_same_bits("conv2d_backward_data accumulate", dtype, dx16, wdx, nx);

    // backward filter: dw and dbias f32 in both, equal exactly, with beta 0 and 1
    for (int acc = 0; acc < 2; acc++) {
        if (!acc)
            for (size_t i = 0; i < nw; i++) dw[i] = dw16[i] = NAN;  // never read
        CHECK_INT_EQ(b->conv2d_backward_filter(b, &g16, &(Conv2dBackwardFilterTensors){.x = x16,
                                               .dy = dy16, .dw = dw16, .dbias = db16,
                                               .workspace = ws, .workspace_bytes = bytes,
                                               .accumulate = acc}, &st), 0);
        CHECK_INT_EQ(b->conv2d_backward_filter(b, &g32, &(Conv2dBackwardFilterTensors){.x = wx,
                                               .dy = wdy, .dw = dw, .dbias = db, .workspace = ws,
                                               .workspace_bytes = bytes, .accumulate = acc}, &st),
                                                   0);
        CHECK(memcmp(dw, dw16, nw * sizeof *dw) == 0);
        CHECK(memcmp(db, db16, sizeof db) == 0);
    }
    // A storage type convolutions cannot take is refused, naming the op.
    Conv2dGeometry gi = g;
    gi.dtype = DTYPE_I32;
    CHECK_INT_EQ(b->conv2d_forward(b, &gi, &(Conv2dForwardTensors){.x = x16, .w = w16,
                                   .bias = bias, .y = y16, .workspace = ws, .workspace_bytes = bytes
                                   }, &st),
                 STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "conv2d_forward");
    free(ws);
    free(x), free(w), free(dy), free(dx), free(y), free(dw), free(dw16);
    free(x16), free(w16), free(dy16), free(y16), free(dx16);
    free(wx), free(ww), free(wdy), free(wdx);
}

// ---- model level ---------------------------------------------------------------------------

// Every conv stores 16 bits (a fused activation's output too), and so do c2's gelu (which
// cannot fuse: an act layer of its own), the pooling and the dense layer: the casts are
// the input into c1 and d1's logits into the loss. Grouped c3 reads c2.act, c4 reads c3's
// fused relu directly: two 16-bit convolutions in a row need none.
static void casts_sit_where_storage_changes(DType storage) {
    StorageNet n;
    if (storage_net_open(&n, &spec, storage)) return;
    const char *conv[] = {"c1", "c1.act", "c2", "c3", "c3.act", "c4"};
    for (int i = 0; i < 6; i++) {
        const Layer *l = layer_named(&n.g, conv[i]);
        CHECK(l && l->out_dtype == storage);
    }
    CHECK_INT_EQ(check_casts_follow_their_input(&n.g), 2);
    char name[64];
    snprintf(name, sizeof name, "input1:%s", dtype_name(storage));
    CHECK(layer_named(&n.g, name) != NULL);
    CHECK(layer_named(&n.g, "d1:f32") != NULL);
    const Layer *c4 = layer_named(&n.g, "c4");
    CHECK(c4 && c4->inputs[0] == layer_named(&n.g, "c3.act"));
    check_reads_own_dtype(&n.g);
    storage_net_free(&n);
}

// Thirty Adam steps on one batch in 16-bit storage fit it, as they do in f32 (1.58 to
// 3e-4 in all three): the rounded gradients still point downhill.
static void sixteen_bit_training_learns(DType storage) {
    OptimizerConfig adam = {.kind = OPTIMIZER_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999,
                            .eps = 1e-8};
    check_training_learns(&spec, storage, &adam, 30, 11, 0.01);
}

int main(void) {
    ops_round_once(DTYPE_BF16);
    ops_round_once(DTYPE_F16);
    casts_sit_where_storage_changes(DTYPE_BF16);
    casts_sit_where_storage_changes(DTYPE_F16);
    // bound: the relative loss and per-layer gradient difference that rounding may give. Each
    // stored activation, gradient and weight copy is off by at most half a unit in its last
    // place (bf16 2^-9, f16 2^-12), the layers stack them, and a relu input rounded across
    // zero switches its unit's gradient on or off; the bounds are about twice the largest
    // difference measured (bf16 6.7e-2 at c3, f16 5.7e-3 at c1), in the ratio of the two
    // types' units (8).
    check_storage_matches_f32(&spec, DTYPE_BF16, 3, 0.12);
    check_storage_matches_f32(&spec, DTYPE_F16, 3, 0.015);
    sixteen_bit_training_learns(DTYPE_BF16);
    sixteen_bit_training_learns(DTYPE_F16);
    return test_exit_code("test_storage16_conv");
}
