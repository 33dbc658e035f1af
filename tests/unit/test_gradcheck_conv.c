// conv2d, maxpool, avgpool and global_avgpool backward against central finite differences
// of the mean loss, as tests/unit/test_gradcheck.c does for the dense layers (same
// harness, same step and tolerance; see there for why eps = 1e-2 and 1e-3 + 1% pass).
//
// Two checks per case:
// - parameters: every element of every parameter is nudged by +-eps and the whole graph
//   re-run. A conv2d after another layer is thereby also checked through its input
//   gradient, which is what the earlier layer's parameter gradients flow through.
// - the input gradient of the layer under test (`name=t`), directly: each element of its
//   input activation is nudged and only the layers from t on are re-run; the result must
//   match what t's backward wrote into its input's gradient.
//
// Max pooling has a kink wherever two window values tie. For its cases t's input is
// overwritten with distinct values at least 0.05 apart (a shuffled ramp), so a nudge of
// 1e-2 never changes which value wins; parameters before the pool are not nudged there,
// since a weight change moves many values at once and could swap a winner.
#include "gradcheck_net.h"

#define GRAD_EPS 1e-2f
#define DISTINCT_SPACING 0.05f

static const NetSetup net_setup = {.model_name = "gradcheck_conv.model", .seed_mul = 7919,
                                   .seed_add = 1, .ctx_seed = 12345};

// net_check_elements re-running only from layer `first`, then once more unperturbed, so
// that the layers from `first` on hold their unperturbed activations again for the next
// check that starts later in the graph.
static void check_elements(Net *n, const char *label, const char *what, float *value,
                           const float *analytic, size_t count, int first) {
    net_check_elements(n, GRAD_EPS, label, what, value, analytic, count, first);
    net_loss_from(n, first);
}

typedef struct GradCase {
    const char *label;
    const char *text;   // the layer under test is name=t
    int distinct;       // max pooling: give t distinct inputs, skip parameters before t
    int allocated;      // rows allocated (>= the batch of 3: a short last batch)
} GradCase;

// t's input: a shuffled ramp, every value at least DISTINCT_SPACING from every other.
static void make_distinct(Net *n, float *values, size_t count) {
    for (size_t i = 0; i < count; i++) values[i] = ((float)i - 0.5f * (float)count) * DISTINCT_SPACING;
    for (size_t i = count - 1; i > 0; i--) {
        size_t j = rng_below(&n->rng, (uint32_t)(i + 1));
        float t = values[i];
        values[i] = values[j];
        values[j] = t;
    }
}

static void run_grad_case(const GradCase *c, uint64_t seed) {
    Net n;
    int allocated = c->allocated ? c->allocated : 3;
    if (net_open_case(&n, &net_setup, c->label, c->text, allocated, 3, seed)) return;
    int target = net_layer_index(&n, "t");
    if (target < 1 || net_draw_batch(&n) || isnan(net_loss_from(&n, 1))) {
        fprintf(stderr, "%s: no layer t, or the first forward failed\n", c->label);
        test_failures++;
        net_close(&n);
        return;
    }
    Layer *t = n.g.layers[target];
    Layer *source = t->inputs[0];
    size_t count = (size_t)n.batch * shape_numel(&source->out_shape);
    if (c->distinct) {
        make_distinct(&n, tensor_f32(&source->output), count);
        net_loss_from(&n, target);
    }
    if (net_backward(&n)) {
        net_close(&n);
        return;
    }

    // Parameters, each re-running the graph from its own layer on.
    int first = c->distinct ? target : 1;
    for (int i = first; i < n.g.count; i++) {
        Layer *l = n.g.layers[i];
        for (int p = 0; p < l->param_count; p++) {
            Param *param = &l->params[p];
            size_t elements = tensor_numel(&param->value);
            float *analytic = malloc(elements * sizeof *analytic);
            memcpy(analytic, tensor_f32(&param->grad), elements * sizeof *analytic);
            check_elements(&n, c->label, param->name, tensor_f32(&param->value), analytic,
                           elements, c->distinct ? target : i);
            free(analytic);
        }
    }

    // t's input gradient, directly.
    if (!source->needs_grad) {
        fprintf(stderr, "%s: t's input '%s' has no gradient to check\n", c->label, source->name);
        test_failures++;
    } else {
        float *analytic = malloc(count * sizeof *analytic);
        memcpy(analytic, tensor_f32(&source->grad), count * sizeof *analytic);
        char what[96];
        snprintf(what, sizeof what, "d loss / d %s (input of t)", source->name);
        check_elements(&n, c->label, what, tensor_f32(&source->output), analytic, count, target);
        free(analytic);
    }
    net_close(&n);
}

#define HEAD "flatten\ndense units=3\nloss softmax_cross_entropy\n"

static const GradCase grad_cases[] = {
    {"conv2d_basic", "input shape=2x5x5\nconv2d filters=3 kernel=3 act=tanh name=stem\n"
                     "conv2d filters=3 kernel=3 name=t\n" HEAD, 0, 0},
    {"conv2d_no_bias_mse", "input shape=2x5x5\nconv2d filters=2 kernel=3 bias=false name=stem\n"
                           "conv2d filters=3 kernel=2 bias=false name=t\nflatten\ndense units=3\nloss mse\n", 0, 0},
    {"conv2d_stride2_pad1", "input shape=2x7x7\nconv2d filters=3 kernel=3 pad=1 act=tanh name=stem\n"
                            "conv2d filters=4 kernel=3 stride=2 pad=1 name=t\n" HEAD, 0, 0},
    {"conv2d_stride3", "input shape=1x8x8\nconv2d filters=2 kernel=3 pad=same name=stem\n"
                       "conv2d filters=3 kernel=2 stride=3 name=t\n" HEAD, 0, 0},
    {"conv2d_dilation2", "input shape=2x7x7\nconv2d filters=2 kernel=3 pad=1 act=tanh name=stem\n"
                         "conv2d filters=3 kernel=3 dilation=2 pad=2 name=t\n" HEAD, 0, 0},
    {"conv2d_groups2", "input shape=2x6x6\nconv2d filters=4 kernel=3 pad=1 act=tanh name=stem\n"
                       "conv2d filters=6 kernel=3 groups=2 name=t\n" HEAD, 0, 0},
    {"conv2d_depthwise_stride2", "input shape=2x7x7\nconv2d filters=3 kernel=1 act=tanh name=stem\n"
                                 "conv2d filters=3 kernel=3 groups=3 stride=2 pad=1 name=t\n" HEAD, 0, 0},
    {"conv2d_same_even_kernel", "input shape=1x6x5\nconv2d filters=2 kernel=3 pad=same act=tanh name=stem\n"
                                "conv2d filters=2 kernel=4 pad=same name=t\n" HEAD, 0, 0},
    {"conv2d_non_square", "input shape=2x6x7\nconv2d filters=2 kernel=1 name=stem\n"
                          "conv2d filters=3 kernel=2x3 stride=1x2 pad=1x0 dilation=2x1 name=t\n" HEAD, 0, 0},
    {"conv2d_1x1_sigmoid", "input shape=3x4x4\nconv2d filters=3 kernel=3 pad=same name=stem\n"
                           "conv2d filters=2 kernel=1 act=sigmoid name=t\n" HEAD, 0, 0},
    // Workspace and activations for 5 rows, a batch of 3: the loss scale is 1/3.
    {"conv2d_short_batch", "input shape=2x5x5\nconv2d filters=2 kernel=3 act=tanh name=stem\n"
                           "conv2d filters=3 kernel=2 name=t\n" HEAD, 0, 5},
    {"maxpool_2", "input shape=2x6x6\nconv2d filters=2 kernel=3 pad=1 name=stem\nmaxpool size=2 name=t\n" HEAD, 1, 0},
    {"maxpool_odd_input", "input shape=1x7x5\nconv2d filters=2 kernel=1 name=stem\nmaxpool size=2 name=t\n" HEAD, 1, 0},
    // Overlapping windows: one input can win two windows, and its gradient is their sum.
    {"maxpool_3_stride2_pad1", "input shape=1x7x7\nconv2d filters=2 kernel=1 name=stem\n"
                               "maxpool size=3 stride=2 pad=1 name=t\n" HEAD, 1, 0},
    {"maxpool_non_square", "input shape=1x6x9\nconv2d filters=2 kernel=1 name=stem\n"
                           "maxpool size=2x3 stride=1x2 name=t\n" HEAD, 1, 0},
    {"avgpool_2", "input shape=2x6x6\nconv2d filters=2 kernel=3 pad=1 act=tanh name=stem\n"
                  "avgpool size=2 name=t\n" HEAD, 0, 0},
    // Padding counts as zeros: border windows divide by 9 too.
    {"avgpool_3_stride2_pad1", "input shape=1x7x7\nconv2d filters=2 kernel=3 pad=same name=stem\n"
                               "avgpool size=3 stride=2 pad=1 name=t\n" HEAD, 0, 0},
    {"avgpool_non_square", "input shape=1x5x8\nconv2d filters=2 kernel=1 act=tanh name=stem\n"
                           "avgpool size=3x2 stride=1x2 name=t\n" HEAD, 0, 0},
    {"global_avgpool", "input shape=2x5x4\nconv2d filters=4 kernel=3 pad=same act=tanh name=stem\n"
                       "global_avgpool name=t\ndense units=3\nloss softmax_cross_entropy\n", 0, 0},
    // A small LeNet: the input gradients of conv2d, maxpool and avgpool chained.
    {"lenet_small", "input shape=1x8x8\nconv2d filters=2 kernel=3 pad=same act=tanh name=stem\n"
                    "maxpool size=2 name=t\nconv2d filters=3 kernel=3 pad=same act=tanh\n"
                    "avgpool size=2\n" HEAD, 1, 0},
};

static void conv_and_pool_layers_match_finite_differences(void) {
    for (size_t i = 0; i < sizeof grad_cases / sizeof grad_cases[0]; i++)
        run_grad_case(&grad_cases[i], 300 + i);
}

// With accumulate_param_grads a second backward adds the same conv gradients again
// (micro-batches); without it, backward overwrites them.
static void conv2d_backward_accumulates_only_when_asked(void) {
    Net n;
    const char *text = "input shape=2x5x5\nconv2d filters=3 kernel=3 pad=1 act=tanh\n" HEAD;
    if (net_open(&n, &net_setup, text, 3, 3, 7) || net_draw_batch(&n) ||
        isnan(net_loss_from(&n, 1)) || net_backward(&n)) {
        net_close(&n);
        return;
    }
    for (int p = 0; p < 2; p++) {
        Param *param = &n.g.layers[1]->params[p];
        size_t count = tensor_numel(&param->grad);
        float *first = malloc(count * sizeof *first);
        memcpy(first, tensor_f32(&param->grad), count * sizeof *first);
        Status st;
        status_clear(&st);
        LayerContext ctx = net_context(&n);
        CHECK_INT_EQ(graph_backward(&n.g, &ctx, &st), 0);
        for (size_t k = 0; k < count; k++) CHECK_NEAR(tensor_f32(&param->grad)[k], first[k], 0.0);
        ctx.accumulate_param_grads = 1;
        CHECK_INT_EQ(graph_backward(&n.g, &ctx, &st), 0);
        for (size_t k = 0; k < count; k++)
            CHECK_NEAR(tensor_f32(&param->grad)[k], 2.0 * first[k], 1e-6 + 1e-6 * fabs(first[k]));
        ctx.accumulate_param_grads = 0;
        CHECK_INT_EQ(graph_backward(&n.g, &ctx, &st), 0);
        free(first);
    }
    net_close(&n);
}

int main(void) {
    conv_and_pool_layers_match_finite_differences();
    conv2d_backward_accumulates_only_when_asked();
    return test_exit_code("test_gradcheck_conv");
}
