// The fused dense + activation and conv2d + activation (graph_fuse_activations) against
// central finite differences of the mean loss: the layer under test (name=t) applies its
// act= activation inside its forward op, keeps no pre-activation, and the activation layer
// differentiates from its output alone. Same harness and tolerance as
// tests/unit/test_gradcheck.c (see there for 1e-3 + 1%). Each case also checks that the
// pair really was fused, so the test cannot pass on the unfused path.
//
// A relu's kink: a pre-activation that a nudge moves across 0 makes the central difference
// straddle it (with test_gradcheck.c's step of 1e-2 a conv2d case failed so, with fusion
// off too). As test_gradcheck.c does, batches are drawn until every pre-activation of t
// lies more than 2 eps from 0 (a nudge of one of t's parameters moves each by at most
// eps, inputs lying in [-1, 1)), measured with fusion off, since a fused layer keeps no
// pre-activation; the check then runs fused on that batch. The step is 1e-3, so that a
// conv2d's 225 pre-activations clear the margin in a few draws.
#include "gradcheck_net.h"

#define GRAD_EPS 1e-3f

static const NetSetup net_setup = {.model_name = "gradcheck_fused.model", .seed_mul = 104729,
                                   .seed_add = 3, .ctx_seed = 777};

// act= takes no slope: leaky_relu runs with its default 0.01.
static const char *const fusable[] = {"relu", "leaky_relu", "sigmoid", "tanh"};
enum { FUSABLE = sizeof fusable / sizeof fusable[0] };

// The smallest |pre-activation| of layer t, read with fusion off.
static double pre_activation_margin(const Net *n, const Layer *t) {
    const float *z = tensor_f32(&t->output);
    size_t count = (size_t)n->batch * shape_numel(&t->out_shape);
    double margin = INFINITY;
    for (size_t k = 0; k < count; k++)
        if (fabs(z[k]) < margin) margin = fabs(z[k]);
    return margin;
}

// `text` is a printf format with one %s: the act= value of layer t.
static void fused_case(const char *label, const char *format, const char *act, uint64_t seed) {
    char text[512], full_label[160];
    snprintf(text, sizeof text, format, act);
    snprintf(full_label, sizeof full_label, "%s act=%s", label, act);
    Net n;
    if (net_open_case(&n, &net_setup, full_label, text, 3, 3, seed)) return;
    Layer *t = net_layer(&n, "t");
    if (!t || !t->fused_activation || t->output.data) {
        fprintf(stderr, "%s: layer t was not fused with its activation\n", full_label);
        test_failures++;
        net_close(&n);
        return;
    }
    int kinked = strcmp(act, "relu") == 0 || strcmp(act, "leaky_relu") == 0;
    int ok = net_set_fusion(&n, 0, 3) == 0;
    for (int attempt = 0; ok && attempt < 200; attempt++) {
        if (net_draw_batch(&n) || isnan(net_loss(&n))) {
            ok = 0;
            break;
        }
        if (!kinked || pre_activation_margin(&n, t) > 2.0 * GRAD_EPS) break;
        if (attempt == 199) {
            fprintf(stderr, "%s: could not draw a batch away from the kink\n", full_label);
            test_failures++;
            ok = 0;
        }
    }
    if (!ok || net_set_fusion(&n, 1, 3) || !t->fused_activation || isnan(net_loss(&n)) ||
        net_backward(&n)) {
        net_close(&n);
        return;
    }
    long compared = net_check_param_grads(&n, GRAD_EPS, full_label);
    CHECK(compared > 0);
    net_close(&n);
}

static void fused_dense_and_conv_match_finite_differences(void) {
    for (int a = 0; a < FUSABLE; a++) {
        fused_case("dense", "input shape=6\ndense units=5 act=%s name=t\ndense units=3\n"
                   "loss softmax_cross_entropy\n", fusable[a], 11 + (uint64_t)a);
        fused_case("dense_no_bias", "input shape=7\ndense units=4 bias=false act=%s name=t\n"
                   "dense units=3\nloss softmax_cross_entropy\n", fusable[a], 23 + (uint64_t)a);
        fused_case("conv2d", "input shape=2x5x5\nconv2d filters=3 kernel=3 pad=same act=%s name=t\n"
                   "flatten\ndense units=3\nloss softmax_cross_entropy\n", fusable[a],
                   31 + (uint64_t)a);
        fused_case("conv2d_stride2_then_dense", "input shape=1x6x6\n"
                   "conv2d filters=2 kernel=3 stride=2 act=%s name=t\nflatten\n"
                   "dense units=4 act=tanh\ndense units=3\nloss softmax_cross_entropy\n",
                   fusable[a], 41 + (uint64_t)a);
    }
}

int main(void) {
    fused_dense_and_conv_match_finite_differences();
    return test_exit_code("test_gradcheck_fused");
}
