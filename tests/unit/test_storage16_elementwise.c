// 16-bit storage for the `act` (standalone), `dropout` and `add` kinds, on the CPU, whose
// ops are the reference the CUDA ones are tested against (tests/gpu/
// test_cuda_parity16_elementwise.c). Op by op: a 16-bit op gives exactly the f32 op on
// the widened operands, rounded once (an accumulated dx and an add's sum of several inputs
// included, which adding into a 16-bit tensor one by one would round more often). Graph
// level: a model of dense layers with standalone activations of every kind, dropout and
// adds between them stores 16 bits throughout, with no cast but into the first dense layer
// and out to the loss, and its loss and parameter gradients match f32 storage within what
// rounding each stored value can move them.
#include "storage16_net.h"
#include "stored16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const DType halves[] = {DTYPE_BF16, DTYPE_F16};

// ---- ops ----------------------------------------------------------------------------------

enum { N = 301 };  // odd, so no loop gets a round count

// n values uniform in [lo, hi), stored as dtype, and the same values (exactly) as f32.
static void fill_stored(Rng *rng, DType dtype, float lo, float hi, uint16_t *half, float *wide) {
    for (int i = 0; i < N; i++) {
        half[i] = stored16_from_f32(lo + (hi - lo) * rng_uniform(rng), dtype);
        wide[i] = stored16_to_f32(half[i], dtype);
    }
}

// Every stored value is the f32 result rounded once: bit for bit.
static int check_rounded_once(const char *what, DType dtype, const uint16_t *got,
                              const float *want_f32) {
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint16_t want = stored16_from_f32(want_f32[i], dtype);
        if (got[i] != want) {
            if (!bad)
                fprintf(stderr, "  CHECK failed: %s %s [%d]: 0x%04x, want 0x%04x (%g)\n", what,
                        dtype_name(dtype), i, got[i], want, (double)want_f32[i]);
            bad++;
        }
    }
    test_failures += bad != 0;
    return bad;
}

static void activation_ops_round_once(DType dtype) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 21);
    uint16_t x[N], y[N], dy[N], dx[N];
    float wx[N], wy[N], wdy[N], wdx[N];
    fill_stored(&rng, dtype, -3.0f, 3.0f, x, wx);
    fill_stored(&rng, dtype, -1.0f, 1.0f, dy, wdy);
    for (int kind = 0; kind < ACTIVATION_COUNT; kind++) {
        ActivationKind k = (ActivationKind)kind;
        char what[64];
        snprintf(what, sizeof what, "activation_forward kind %d", kind);
        CHECK_INT_EQ(b->activation_forward(b, &(ActivationForwardArgs){.kind = k, .slope = 0.1f,
                                           .dtype = dtype, .x = x, .y = y, .n = N}, &st), 0);
        CHECK_INT_EQ(b->activation_forward(b, &(ActivationForwardArgs){.kind = k, .slope = 0.1f,
                                           .dtype = DTYPE_F32, .x = wx, .y = wy, .n = N}, &st), 0);
        check_rounded_once(what, dtype, y, wy);
        // backward from the stored y, as the layer runs it
        for (int i = 0; i < N; i++) wy[i] = stored16_to_f32(y[i], dtype);
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            fill_stored(&rng, dtype, -1.0f, 1.0f, dx, wdx);  // the old dx when accumulating
            snprintf(what, sizeof what, "activation_backward kind %d accumulate %d", kind,
                     accumulate);
            CHECK_INT_EQ(b->activation_backward(b, &(ActivationBackwardArgs){.kind = k,
                                                .slope = 0.1f, .dtype = dtype, .x = x, .y = y,
                                                .dy = dy, .dx = dx, .n = N, .accumulate = accumulate
                                                }, &st), 0);
            CHECK_INT_EQ(b->activation_backward(b, &(ActivationBackwardArgs){.kind = k,
                                                .slope = 0.1f, .dtype = DTYPE_F32, .x = wx,
                                                .y = wy, .dy = wdy, .dx = wdx, .n = N,
                                                .accumulate = accumulate}, &st), 0);
            check_rounded_once(what, dtype, dx, wdx);
        }
    }
}

static void dropout_ops_round_once(DType dtype) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 22);
    uint16_t x[N], y[N], dy[N], dx[N];
    float wx[N], wy[N], wdy[N], wdx[N], mask[N], wmask[N];
    fill_stored(&rng, dtype, -3.0f, 3.0f, x, wx);
    fill_stored(&rng, dtype, -1.0f, 1.0f, dy, wdy);
    // rate 0.3: keep_scale 1/0.7 is not a power of two, so y = x * mask does round
    CHECK_INT_EQ(b->dropout_forward(b, &(DropoutForwardArgs){.dtype = dtype, .x = x, .y = y,
                                    .mask = mask, .n = N, .rate = 0.3f, .seed = 1234}, &st), 0);
    CHECK_INT_EQ(b->dropout_forward(b, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = wx, .y = wy,
                                    .mask = wmask, .n = N, .rate = 0.3f, .seed = 1234}, &st), 0);
    CHECK(memcmp(mask, wmask, sizeof mask) == 0);  // the mask is the f32 one whatever x is
    check_rounded_once("dropout_forward", dtype, y, wy);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        fill_stored(&rng, dtype, -1.0f, 1.0f, dx, wdx);  // the old dx when accumulating
        CHECK_INT_EQ(b->dropout_backward(b, &(DropoutBackwardArgs){.dtype = dtype, .dy = dy,
                                         .mask = mask, .dx = dx, .n = N, .accumulate = accumulate},
                                         &st), 0);
        CHECK_INT_EQ(b->dropout_backward(b, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = wdy,
                                         .mask = mask, .dx = wdx, .n = N, .accumulate = accumulate
                                         }, &st), 0);
        check_rounded_once(accumulate ? "dropout_backward accumulate" : "dropout_backward",
                           dtype, dx, wdx);
    }
}

// y = (accumulate ? y : 0) + x[0] + ... for 1 to 4 sources: the f32 sum in the sources'
// order, rounded once. Adding three sources into a 16-bit y one at a time rounds twice and
// differs somewhere among N values: the op must not be doing that.
static void accumulate_sums_then_rounds_once(DType dtype) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 23);
    uint16_t x[BACKEND_ACCUMULATE_MAX][N], y[N], start[N];
    float wx[BACKEND_ACCUMULATE_MAX][N], wy[N], wstart[N];
    const void *sources[BACKEND_ACCUMULATE_MAX], *wsources[BACKEND_ACCUMULATE_MAX];
    for (int k = 0; k < BACKEND_ACCUMULATE_MAX; k++) {
        fill_stored(&rng, dtype, -2.0f, 2.0f, x[k], wx[k]);
        sources[k] = x[k];
        wsources[k] = wx[k];
    }
    fill_stored(&rng, dtype, -2.0f, 2.0f, start, wstart);
    for (int count = 1; count <= BACKEND_ACCUMULATE_MAX; count++)
        for (int accumulate = 0; accumulate < 2; accumulate++) {
            memcpy(y, start, sizeof y);
            memcpy(wy, wstart, sizeof wy);
            CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = dtype, .y = y, .x = sources,
                                       .count = count, .n = N, .accumulate = accumulate}, &st), 0);
            CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = DTYPE_F32, .y = wy,
                                       .x = wsources, .count = count, .n = N,
                                       .accumulate = accumulate}, &st), 0);
            char what[64];
            snprintf(what, sizeof what, "accumulate %d sources, accumulate %d", count,
                     accumulate);
            check_rounded_once(what, dtype, y, wy);
        }
    // three sources, the way `add` summed them before: copy, then add into y twice
    uint16_t twice[N];
    memcpy(twice, x[0], sizeof twice);
    for (int k = 1; k < 3; k++)
        CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = dtype, .y = twice,
                                   .x = &sources[k], .count = 1, .n = N, .accumulate = 1}, &st), 0);
    CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = dtype, .y = y, .x = sources,
                               .count = 3, .n = N, .accumulate = 0}, &st), 0);
    CHECK(memcmp(twice, y, sizeof y) != 0);
    // out of range counts and dtypes are refused
    CHECK(b->accumulate(b, &(AccumulateArgs){.dtype = dtype, .y = y, .x = sources, .count = 0,
                        .n = N, .accumulate = 0}, &st) != 0);
    CHECK(b->accumulate(b, &(AccumulateArgs){.dtype = dtype, .y = y, .x = sources,
                        .count = BACKEND_ACCUMULATE_MAX + 1, .n = N, .accumulate = 0}, &st) != 0);
    CHECK(b->activation_forward(b, &(ActivationForwardArgs){.kind = ACTIVATION_RELU, .slope = 0.0f,
                                .dtype = (DType)99, .x = x[0], .y = y, .n = N}, &st) != 0);
}

// ---- a model ------------------------------------------------------------------------------

// Every activation kind as a layer of its own (dense layers here take no act=, so nothing
// fuses), a 3-input and a 4-input add, dropout. Fan-outs make each kind add into a
// gradient another reader wrote first: d1 feeds r1 and l1 (r1's backward adds), t2 feeds
// sum3 and d5 (the add adds), g4 feeds dropout and res (dropout adds).
static const StorageNetSpec spec = {
    .model_name = "elementwise.model",
    .text = "input shape=20\n"
            "dense units=32 name=d1\n"
            "relu name=r1\n"
            "dense units=32 name=d2\n"
            "tanh name=t2\n"
            "dense units=32 name=d3\n"
            "sigmoid name=s3\n"
            "add from=r1,t2,s3 name=sum3\n"
            "gelu name=g4\n"
            "dropout rate=0.25 name=drop\n"
            "dense units=32 from=t2 name=d5\n"
            "leaky_relu slope=0.1 name=l5\n"
            "leaky_relu slope=0.2 from=d1 name=l1\n"
            "add from=drop,l5,g4,l1 act=relu name=res\n"
            "dense units=6 name=out\n"
            "loss softmax_cross_entropy\n",
    .batch = 16, .classes = 6, .input_low = -1.0f, .param_seed = 7, .ctx_seed = 42};

static void no_casts_between_dense_layers(DType storage) {
    StorageNet n;
    if (storage_net_open(&n, &spec, storage)) return;
    int casts = check_casts_follow_their_input(&n.g);
    for (int i = 0; i < n.g.count; i++) {
        const Layer *l = n.g.layers[i];
        if (is_cast(l)) continue;
        int f32_end = l == n.g.input || l == n.g.loss;
        CHECK_INT_EQ(l->out_dtype, f32_end ? DTYPE_F32 : storage);
        if (l->fused_activation) {
            fprintf(stderr, "  CHECK failed: %s fuses its activation\n", l->name);
            test_failures++;
        }
    }
    // the input's floats into d1, out's logits into the loss; nothing in between
    CHECK_INT_EQ(casts, 2);
    char into_d1[LAYER_NAME_MAX + 16];
    snprintf(into_d1, sizeof into_d1, "%s:%s", n.g.input->name, dtype_name(storage));
    CHECK(layer_named(&n.g, into_d1) != NULL);
    CHECK(layer_named(&n.g, "out:f32") != NULL);
    const char *elementwise[] = {"r1", "t2", "s3", "sum3", "g4", "drop", "l5", "l1", "res",
                                 "res.act"};
    for (size_t i = 0; i < sizeof elementwise / sizeof *elementwise; i++) {
        const Layer *l = layer_named(&n.g, elementwise[i]);
        CHECK(l != NULL);
        if (l) CHECK_INT_EQ(l->out_dtype, storage);
    }
    // the fan-outs this model was made for: each kind adds into a gradient
    const Layer *r1 = layer_named(&n.g, "r1"), *sum3 = layer_named(&n.g, "sum3");
    const Layer *drop = layer_named(&n.g, "drop");
    CHECK(r1 && r1->input_grad_accumulate[0]);
    CHECK(sum3 && sum3->input_grad_accumulate[1] && !sum3->input_grad_accumulate[0]);
    CHECK(drop && drop->input_grad_accumulate[0]);
    check_reads_own_dtype(&n.g);
    storage_net_free(&n);
}

// bound: the relative difference rounding to the storage type may make (measured: see
// main) in the loss, and in each layer's weight and bias gradients taken together.
static void gradients_match_f32(DType storage, double bound) {
    StoragePair p;
    double wide_eval = 0.0, half_eval = 0.0;
    // evaluation: dropout copies its 16-bit input (its identity), no mask applied
    if (!storage_pair_matches_f32(&p, &spec, storage, 3, "", bound) &&
        !storage_pair_evaluate(&p, &wide_eval, &half_eval)) {
        check_losses_match("evaluation,", storage, half_eval, wide_eval, spec.batch, bound);
        CHECK(wide_eval != p.wide_loss);  // dropout did drop while training
    }
    storage_pair_free(&p);
}

int main(void) {
    for (int h = 0; h < 2; h++) {
        activation_ops_round_once(halves[h]);
        dropout_ops_round_once(halves[h]);
        accumulate_sums_then_rounds_once(halves[h]);
        no_casts_between_dense_layers(halves[h]);
    }
    // About twice the largest layer's difference measured (bf16 2.2e-2, f16 2.1e-2, both
    // at d1, which every other layer's rounding reaches); the losses differ far less.
    // A relu makes the difference jump: an output of d1 within rounding of zero that lands
    // on the other side of r1's relu. f16's was 6.0e-4 while dense layers added their bias
    // in f32; rounded to f16 first (gemm_bias_activation's contract, kernels/backend.h),
    // one such output crosses. Parameter seed 8 crosses with the f32 bias too (2.1e-2);
    // seeds 9 and 11 stay at 5.3e-4 with the rounded bias.
    gradients_match_f32(DTYPE_BF16, 0.05);
    gradients_match_f32(DTYPE_F16, 0.04);
    return test_exit_code("test_storage16_elementwise");
}
