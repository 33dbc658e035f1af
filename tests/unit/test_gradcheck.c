// Every layer's backward against central finite differences of the loss, plus the
// accumulate flag of the backward ops and the loss values of a hand-computed example.
//
// A graph is built from model text, run forward and backward once for the analytic
// gradients, then each parameter element is nudged by +-eps and the total loss
// re-evaluated. The loss that backward differentiates is the MEAN over the batch, so the
// finite difference is taken of graph_read_loss's sum divided by the batch.
//
// Tolerance. Everything runs in f32. The loss is ~1 and carries ~1e-7 relative rounding,
// so with eps = 1e-2 the difference quotient has rounding error ~1e-7 / 1e-2 = 1e-5; the
// central difference's truncation error is eps^2 * f''' / 6, ~1e-5..1e-4 for these small
// smooth nets. An element passes when |analytic - numeric| <= 1e-3 + 1e-2 * max(|a|, |n|):
// the relative part (1%) catches a wrong factor or sign anywhere, the absolute floor keeps
// gradients that are ~0 (where a relative error means nothing) from failing on noise.
// A missing 1/batch, a transposed GEMM or a wrong derivative is off by far more.
#include "gradcheck_net.h"
#include "kernels/cpu/cpu_ops.h"

#define GRAD_EPS 1e-2f

static const NetSetup net_setup = {.model_name = "gradcheck.model", .seed_mul = 7919,
                                   .seed_add = 1, .ctx_seed = 12345};

// Smallest |pre-activation| over the inputs of every activation layer: relu and
// leaky_relu have a kink at 0, and a finite difference that straddles it is meaningless.
static double min_preactivation_margin(const Net *n) {
    double margin = INFINITY;
    for (int i = 0; i < n->g.count; i++) {
        const Layer *l = n->g.layers[i];
        if (strcmp(l->kind->name, "act") != 0) continue;
        const float *z = tensor_f32(&l->inputs[0]->output);
        size_t count = (size_t)n->batch * shape_numel(&l->out_shape);
        for (size_t k = 0; k < count; k++)
            if (fabs(z[k]) < margin) margin = fabs(z[k]);
    }
    return margin;
}

typedef struct GradCase {
    const char *label;
    const char *text;
    int kinked;      // relu / leaky_relu inside: keep pre-activations away from 0
    int allocated;   // rows allocated (>= batch: a short last batch)
} GradCase;

static long elements_compared = 0;

static void run_grad_case(const GradCase *c, uint64_t seed) {
    Net n;
    int allocated = c->allocated ? c->allocated : 3;
    if (net_open_case(&n, &net_setup, c->label, c->text, allocated, 3, seed)) return;
    // A fused layer keeps no pre-activation, so the margin is measured with fusion off;
    // the check then runs fused, as training does, on the same batch.
    if (c->kinked && net_set_fusion(&n, 0, allocated)) {
        net_close(&n);
        return;
    }
    int ok = 0;
    for (int attempt = 0; attempt < 200 && !ok; attempt++) {
        if (net_draw_batch(&n)) break;
        if (!c->kinked) {
            ok = 1;
            break;
        }
        if (isnan(net_loss(&n))) break;
        // A perturbation moves a pre-activation by at most eps * max|input| = eps here
        // (inputs lie in [-1, 1) and only the layer before the activation feeds it).
        ok = min_preactivation_margin(&n) > 2.0 * GRAD_EPS;
    }
    if (!ok) {
        fprintf(stderr, "%s: could not draw a batch away from the kink\n", c->label);
        test_failures++;
        net_close(&n);
        return;
    }
    if ((c->kinked && net_set_fusion(&n, 1, allocated)) || net_forward_backward(&n)) {
        net_close(&n);
        return;
    }
    long compared = net_check_param_grads(&n, GRAD_EPS, c->label);
    elements_compared += compared;
    if (compared == 0) {
        fprintf(stderr, "%s: the model has no parameters to check\n", c->label);
        test_failures++;
    }
    net_close(&n);
}

// Model text pieces: a 5-feature input, a 3-class head, the two losses.
#define IN5 "input shape=5\n"
#define HEAD3 "dense units=3\n"
#define XENT "loss softmax_cross_entropy\n"
#define MSE "loss mse\n"

static const GradCase grad_cases[] = {
    {"dense_mse", IN5 "dense units=4\n" MSE, 0, 0},
    {"dense_no_bias_mse", IN5 "dense units=4 bias=false\n" MSE, 0, 0},
    {"dense_xent", IN5 "dense units=4\n" XENT, 0, 0},
    // Two dense layers: the first one's gradient flows through the second's input gradient.
    {"dense_dense_xent", IN5 "dense units=6\n" HEAD3 XENT, 0, 0},
    {"dense_no_bias_dense_mse",
     IN5 "dense units=6 bias=false\ndense units=3 bias=false\n" MSE, 0, 0},
    // Each activation as its own layer between two dense layers.
    {"relu_layer", IN5 "dense units=6\nrelu\n" HEAD3 XENT, 1, 0},
    {"leaky_relu_layer", IN5 "dense units=6\nleaky_relu slope=0.1\n" HEAD3 XENT, 1, 0},
    {"sigmoid_layer", IN5 "dense units=6\nsigmoid\n" HEAD3 XENT, 0, 0},
    {"tanh_layer", IN5 "dense units=6\ntanh\n" HEAD3 MSE, 0, 0},
    {"gelu_layer", IN5 "dense units=6\ngelu\n" HEAD3 XENT, 0, 0},
    {"act_statement_gelu", IN5 "dense units=6\nact gelu\n" HEAD3 MSE, 0, 0},
    // The same through `act=` on the dense layer.
    {"act_key_relu", IN5 "dense units=6 act=relu\n" HEAD3 XENT, 1, 0},
    {"act_key_leaky_relu", IN5 "dense units=6 act=leaky_relu\n" HEAD3 MSE, 1, 0},
    {"act_key_sigmoid", IN5 "dense units=6 act=sigmoid\n" HEAD3 MSE, 0, 0},
    {"act_key_tanh", IN5 "dense units=6 act=tanh\n" HEAD3 XENT, 0, 0},
    {"act_key_gelu", IN5 "dense units=6 act=gelu\n" HEAD3 MSE, 0, 0},
    // Two smooth activations deep: input gradients pass through two dense layers.
    {"tanh_sigmoid_deep",
     "input shape=4\ndense units=5 act=tanh\ndense units=5 act=sigmoid\n" HEAD3 XENT, 0, 0},
    // The mask depends only on ctx.seed, fixed across the perturbed forwards.
    {"dropout_training", IN5 "dense units=8\ndropout rate=0.3\n" HEAD3 XENT, 0, 0},
    {"dropout_after_tanh", IN5 "dense units=8 act=tanh\ndropout rate=0.5\n" HEAD3 MSE, 0, 0},
    // flatten of an image input, then the usual head.
    {"flatten_dense", "input shape=1x2x3\nflatten\ndense units=4\n" HEAD3 XENT, 0, 0},
    // Activations allocated for 5 rows, a short batch of 3: the loss scale is 1/3.
    {"short_batch", IN5 "dense units=6 act=tanh\n" HEAD3 XENT, 0, 5},
};

static void all_layers_match_finite_differences(void) {
    size_t cases = sizeof grad_cases / sizeof grad_cases[0];
    for (size_t i = 0; i < cases; i++) run_grad_case(&grad_cases[i], 100 + i);
    fprintf(stderr, "finite differences: %zu models, %ld parameter elements compared\n", cases,
            elements_compared);
}

// Backward twice on the same batch gives the same parameter gradients: nothing is
// accumulated across steps unless the context asks for it.
static void backward_overwrites_param_grads(void) {
    Net n;
    if (net_open(&n, &net_setup, "input shape=5\ndense units=6 act=tanh\ndense units=3\nloss mse\n",
                 3, 3, 7) ||
        net_draw_batch(&n) || net_forward_backward(&n)) {
        net_close(&n);
        return;
    }
    Param *w = &n.g.layers[1]->params[0];
    size_t count = tensor_numel(&w->grad);
    float *first = malloc(count * sizeof *first);
    memcpy(first, tensor_f32(&w->grad), count * sizeof *first);
    net_forward_backward(&n);
    for (size_t k = 0; k < count; k++) CHECK_NEAR(tensor_f32(&w->grad)[k], first[k], 0.0);
    // With accumulate_param_grads the second backward adds the same gradient again.
    Status st;
    status_clear(&st);
    LayerContext ctx = net_context(&n);
    ctx.accumulate_param_grads = 1;
    CHECK_INT_EQ(graph_forward(&n.g, &ctx, &st), 0);
    CHECK_INT_EQ(graph_backward(&n.g, &ctx, &st), 0);
    for (size_t k = 0; k < count; k++)
        CHECK_NEAR(tensor_f32(&w->grad)[k], 2.0 * first[k], 1e-6 + 1e-6 * fabs(first[k]));
    free(first);
    net_close(&n);
}

// ---- the accumulate flag of the backward ops -------------------------------------------

enum { ACC_N = 37, ACC_ROWS = 3, ACC_CLASSES = 4 };

static void fill_uniform(Rng *rng, float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(rng);
}

// dx_acc started as `previous`; it must now be previous + fresh.
static void check_accumulated(const char *what, const float *previous, const float *fresh,
                              const float *dx_acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double want = (double)previous[i] + fresh[i];
        if (!(fabs(dx_acc[i] - want) <= 1e-6 * (1.0 + fabs(want)))) {
            fprintf(stderr, "%s: accumulate: dx[%zu] = %.9g, want previous %.9g + new %.9g "
                    "= %.9g\n", what, i, dx_acc[i], previous[i], fresh[i], want);
            test_failures++;
        }
    }
    // And the fresh gradient must not be ~0 everywhere, or the check is vacuous.
    double largest = 0.0;
    for (size_t i = 0; i < n; i++) largest = fmax(largest, fabs(fresh[i]));
    if (!(largest > 1e-3)) {
        fprintf(stderr, "%s: the new gradient is ~0 everywhere\n", what);
        test_failures++;
    }
}

static void backward_ops_accumulate_into_dx(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 99);
    float x[ACC_N], y[ACC_N], dy[ACC_N], previous[ACC_N], fresh[ACC_N], dx[ACC_N], mask[ACC_N];
    fill_uniform(&rng, x, ACC_N, -2.0f, 2.0f);
    fill_uniform(&rng, dy, ACC_N, -1.0f, 1.0f);
    fill_uniform(&rng, previous, ACC_N, -1.0f, 1.0f);
    static const char *const names[] = {"relu", "leaky_relu", "sigmoid", "tanh", "gelu"};
    for (int kind = 0; kind < ACTIVATION_COUNT; kind++) {
        CHECK_INT_EQ(b->activation_forward(b, &(ActivationForwardArgs){
                                            .kind = (ActivationKind)kind, .slope = 0.1f,
                                            .dtype = DTYPE_F32, .x = x, .y = y, .n = ACC_N}, &st),
                                                0);
        CHECK_INT_EQ(b->activation_backward(b, &(ActivationBackwardArgs){
                                             .kind = (ActivationKind)kind, .slope = 0.1f,
                                             .dtype = DTYPE_F32, .x = x, .y = y, .dy = dy,
                                             .dx = fresh, .n = ACC_N, .accumulate = 0}, &st), 0);
        memcpy(dx, previous, sizeof dx);
        CHECK_INT_EQ(b->activation_backward(b, &(ActivationBackwardArgs){
                                            .kind = (ActivationKind)kind, .slope = 0.1f,
                                            .dtype = DTYPE_F32, .x = x, .y = y, .dy = dy, .dx = dx,
                                            .n = ACC_N, .accumulate = 1}, &st), 0);
        check_accumulated(names[kind], previous, fresh, dx, ACC_N);
    }

    CHECK_INT_EQ(b->dropout_forward(b, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x, .y = y,
                                     .mask = mask, .n = ACC_N, .rate = 0.4f, .seed = 77}, &st), 0);
    CHECK_INT_EQ(b->dropout_backward(b, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = dy,
                                      .mask = mask, .dx = fresh, .n = ACC_N, .accumulate = 0}, &st),
                                          0);
    memcpy(dx, previous, sizeof dx);
    CHECK_INT_EQ(b->dropout_backward(b, &(DropoutBackwardArgs){.dtype = DTYPE_F32, .dy = dy,
                                      .mask = mask, .dx = dx, .n = ACC_N, .accumulate = 1}, &st),
                                          0);
    check_accumulated("dropout", previous, fresh, dx, ACC_N);

    enum { N = ACC_ROWS * ACC_CLASSES };
    float logits[N], probs[N], row_stats[2 * ACC_ROWS];
    float prev_l[N], fresh_l[N], dl[N];
    int32_t labels[ACC_ROWS] = {2, 0, 3};
    fill_uniform(&rng, logits, N, -2.0f, 2.0f);
    fill_uniform(&rng, prev_l, N, -1.0f, 1.0f);
    CHECK_INT_EQ(b->softmax_cross_entropy_forward(b, &(SoftmaxCrossEntropyForwardArgs){
                                                   .logits = logits, .labels = labels,
                                                   .rows = ACC_ROWS, .classes = ACC_CLASSES,
                                                   .probs = probs, .row_stats = row_stats,
                                                   .dlogits = NULL, .scale = 0.0f}, &st), 0);
    CHECK_INT_EQ(b->softmax_cross_entropy_backward(b, &(SoftmaxCrossEntropyBackwardArgs){
                                                    .probs = probs, .labels = labels,
                                                    .rows = ACC_ROWS, .classes = ACC_CLASSES,
                                                    .scale = 1.0f / 3, .dlogits = fresh_l,
                                                    .accumulate = 0}, &st), 0);
    memcpy(dl, prev_l, sizeof dl);
    CHECK_INT_EQ(b->softmax_cross_entropy_backward(b, &(SoftmaxCrossEntropyBackwardArgs){
                                                    .probs = probs, .labels = labels,
                                                    .rows = ACC_ROWS, .classes = ACC_CLASSES,
                                                    .scale = 1.0f / 3, .dlogits = dl,
                                                    .accumulate = 1}, &st), 0);
    check_accumulated("softmax_cross_entropy", prev_l, fresh_l, dl, N);

    CHECK_INT_EQ(b->mse_backward(b, &(MseBackwardArgs){.predictions = logits, .labels = labels,
                                  .rows = ACC_ROWS, .classes = ACC_CLASSES, .scale = 1.0f / 3,
                                  .dpredictions = fresh_l, .accumulate = 0}, &st), 0);
    memcpy(dl, prev_l, sizeof dl);
    CHECK_INT_EQ(b->mse_backward(b, &(MseBackwardArgs){.predictions = logits, .labels = labels,
                                  .rows = ACC_ROWS, .classes = ACC_CLASSES, .scale = 1.0f / 3,
                                  .dpredictions = dl, .accumulate = 1}, &st), 0);
    check_accumulated("mse", prev_l, fresh_l, dl, N);

    // The fan-out sum used by flatten's accumulate path.
    memcpy(dx, previous, sizeof dx);
    const void *sources[1] = {dy};
    CHECK_INT_EQ(b->accumulate(b, &(AccumulateArgs){.dtype = DTYPE_F32, .y = dx, .x = sources,
                                .count = 1, .n = ACC_N, .accumulate = 1}, &st), 0);
    check_accumulated("accumulate", previous, dy, dx, ACC_N);
}

// ---- loss values against hand computation ------------------------------------------------

// Two rows, three classes, with logits chosen so the softmax is exact fractions:
//   row 0: logits (0, ln 2, ln 5), label 2 -> probs (1/8, 2/8, 5/8), loss -ln(5/8) = ln 1.6,
//          argmax 2 = label: correct.
//   row 1: logits (ln 3, 0, 0), label 1 -> probs (3/5, 1/5, 1/5), loss -ln(1/5) = ln 5,
//          argmax 0 != label: wrong.
// Gradient (probs - onehot) / batch with batch 2:
//   row 0: (1/16, 2/16, -3/16); row 1: (3/10, -4/10, 1/10).
static void softmax_cross_entropy_matches_hand_computation(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float logits[6] = {0.0f, logf(2.0f), logf(5.0f), logf(3.0f), 0.0f, 0.0f};
    int32_t labels[2] = {2, 1};
    float probs[6], row_stats[4], grad[6];
    CHECK_INT_EQ(b->softmax_cross_entropy_forward(b, &(SoftmaxCrossEntropyForwardArgs){
                                                  .logits = logits, .labels = labels, .rows = 2,
                                                  .classes = 3, .probs = probs,
                                                  .row_stats = row_stats, .dlogits = NULL,
                                                  .scale = 0.0f}, &st),
                 0);
    const double want_probs[6] = {1.0 / 8, 2.0 / 8, 5.0 / 8, 3.0 / 5, 1.0 / 5, 1.0 / 5};
    for (int i = 0; i < 6; i++) CHECK_NEAR(probs[i], want_probs[i], 1e-6);
    // Each row's loss, then whether it was right, side by side.
    CHECK_NEAR(row_stats[0], log(1.6), 1e-6);
    CHECK_NEAR(row_stats[1], 1.0, 0.0);
    CHECK_NEAR(row_stats[2], log(5.0), 1e-6);
    CHECK_NEAR(row_stats[3], 0.0, 0.0);
    CHECK_INT_EQ(b->softmax_cross_entropy_backward(b, &(SoftmaxCrossEntropyBackwardArgs){
                                                   .probs = probs, .labels = labels, .rows = 2,
                                                   .classes = 3, .scale = 0.5f, .dlogits = grad,
                                                   .accumulate = 0}, &st), 0);
    const double want_grad[6] = {1.0 / 16, 2.0 / 16, -3.0 / 16, 0.3, -0.4, 0.1};
    for (int i = 0; i < 6; i++) CHECK_NEAR(grad[i], want_grad[i], 1e-6);
    // The forward pass that also writes the gradient (training's): the backward's bits.
    float fused_probs[6], fused_stats[4], fused_grad[6];
    CHECK_INT_EQ(b->softmax_cross_entropy_forward(b, &(SoftmaxCrossEntropyForwardArgs){
                                                  .logits = logits, .labels = labels, .rows = 2,
                                                  .classes = 3, .probs = fused_probs,
                                                  .row_stats = fused_stats, .dlogits = fused_grad,
                                                  .scale = 0.5f}, &st),
                 0);
    CHECK(memcmp(fused_probs, probs, sizeof probs) == 0);
    CHECK(memcmp(fused_stats, row_stats, sizeof row_stats) == 0);
    CHECK(memcmp(fused_grad, grad, sizeof grad) == 0);

    // Through a graph whose loss reads the input directly: graph_read_loss is the sum.
    ModelFile f;
    Graph g;
    Allocator a;
    CHECK_INT_EQ(model_file_parse_text("hand.model", "input shape=3\nloss softmax_cross_entropy\n",
                                       &f, &st), 0);
    CHECK_INT_EQ(graph_build(&f, &g, NULL, &st), 0);
    CHECK_INT_EQ(alloc_init(&a, b, ALLOC_GROW, 0, &st), 0);
    CHECK_INT_EQ(graph_allocate(&g, b, &a, 2, NULL, &st), 0);
    CHECK_INT_EQ(graph_load_batch(&g, b, logits, labels, 2, &st), 0);
    LayerContext ctx = {.backend = b, .alloc = &a, .batch = 2, .training = 1,
                        .labels = (const int32_t *)g.labels.data};
    double sum = 0.0, correct = 0.0;
    CHECK_INT_EQ(graph_forward(&g, &ctx, &st), 0);
    CHECK_INT_EQ(graph_read_loss(&g, b, 2, &sum, &correct, &st), 0);
    CHECK_NEAR(sum, log(1.6) + log(5.0), 1e-6);
    CHECK_NEAR(correct, 1.0, 0.0);
    graph_free(&g);
    alloc_destroy(&a);
    model_file_free(&f);
}

// Predictions against one-hot targets, each row's loss = sum over classes of (y - t)^2:
//   row 0: y (0.2, 0.7, 0.1), label 1 -> 0.2^2 + 0.3^2 + 0.1^2 = 0.14, argmax 1: correct.
//   row 1: y (0.5, -0.5, 1.0), label 0 -> 0.5^2 + 0.5^2 + 1.0^2 = 1.5, argmax 2: wrong.
// Gradient 2 (y - t) / batch with batch 2: row 0 (0.2, -0.3, 0.1); row 1 (-0.5, -0.5, 1.0).
static void mse_matches_hand_computation(void) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    float y[6] = {0.2f, 0.7f, 0.1f, 0.5f, -0.5f, 1.0f};
    int32_t labels[2] = {1, 0};
    float row_stats[4], grad[6];
    CHECK_INT_EQ(b->mse_forward(b, &(MseForwardArgs){.predictions = y, .labels = labels, .rows = 2,
                                .classes = 3, .row_stats = row_stats}, &st), 0);
    CHECK_NEAR(row_stats[0], 0.14, 1e-6);
    CHECK_NEAR(row_stats[1], 1.0, 0.0);
    CHECK_NEAR(row_stats[2], 1.5, 1e-6);
    CHECK_NEAR(row_stats[3], 0.0, 0.0);
    CHECK_INT_EQ(b->mse_backward(b, &(MseBackwardArgs){.predictions = y, .labels = labels,
                                 .rows = 2, .classes = 3, .scale = 0.5f, .dpredictions = grad,
                                 .accumulate = 0}, &st), 0);
    const double want_grad[6] = {0.2, -0.3, 0.1, -0.5, -0.5, 1.0};
    for (int i = 0; i < 6; i++) CHECK_NEAR(grad[i], want_grad[i], 1e-6);

    ModelFile f;
    Graph g;
    Allocator a;
    CHECK_INT_EQ(model_file_parse_text("hand.model", "input shape=3\nloss mse\n", &f, &st), 0);
    CHECK_INT_EQ(graph_build(&f, &g, NULL, &st), 0);
    CHECK_INT_EQ(alloc_init(&a, b, ALLOC_GROW, 0, &st), 0);
    CHECK_INT_EQ(graph_allocate(&g, b, &a, 2, NULL, &st), 0);
    CHECK_INT_EQ(graph_load_batch(&g, b, y, labels, 2, &st), 0);
    LayerContext ctx = {.backend = b, .alloc = &a, .batch = 2, .training = 1,
                        .labels = (const int32_t *)g.labels.data};
    double sum = 0.0, correct = 0.0;
    CHECK_INT_EQ(graph_forward(&g, &ctx, &st), 0);
    CHECK_INT_EQ(graph_read_loss(&g, b, 2, &sum, &correct, &st), 0);
    CHECK_NEAR(sum, 1.64, 1e-6);
    CHECK_NEAR(correct, 1.0, 0.0);
    graph_free(&g);
    alloc_destroy(&a);
    model_file_free(&f);
}

int main(void) {
    all_layers_match_finite_differences();
    backward_overwrites_param_grads();
    backward_ops_accumulate_into_dx();
    softmax_cross_entropy_matches_hand_computation();
    mse_matches_hand_computation();
    return test_exit_code("test_gradcheck");
}
