// batchnorm, add and reshape against central finite differences, in the manner of
// test_gradcheck.c: build a graph from model text, take the analytic gradients from one
// forward + backward, then nudge every trainable parameter element by +-eps and compare
// with the change of the MEAN loss over the batch.
//
// Input gradients are checked through a dense layer in front of the layer under test:
// that dense's weight gradient is dW = dx^T x, so a wrong dx shows up there. For
// batchnorm the op is also checked directly (test at the end), perturbing x itself.
//
// Tolerance, as in test_gradcheck.c: |analytic - numeric| <= 1e-3 + 1e-2 * max(|a|, |n|).
// The step is smaller than test_gradcheck.c's 1e-2: batchnorm divides by the batch's
// standard deviation, which for a dense layer's outputs over a batch of 6 can be ~0.1, so
// a nudge of a weight in front of it moves the normalised value ~10x as far, and the
// central difference's truncation error (~ step^2) grows by ~100x. With 1e-2 the worst
// element came to 1.4x the tolerance while converging on the analytic value as the step
// shrank; with 3e-3 it is ~0.1x. Rounding grows to ~1e-7 / 3e-3 = 3e-5, still far below
// the 1e-3 floor. A missing mean or variance term is off by tens of percent.
//
// A dense layer right before batchnorm gets bias=false, as in practice: in training mode
// batchnorm subtracts the batch mean, so such a bias has a zero gradient (checked apart).
//
// Parameters marked `buffer` (running statistics) have no gradient and are skipped.
#include "gradcheck_net.h"
#include "kernels/cpu/cpu_ops.h"

#define GRAD_EPS 3e-3f

static const NetSetup net_setup = {.model_name = "gradcheck_bn_add.model", .seed_mul = 6007,
                                   .seed_add = 3, .ctx_seed = 4242};

typedef struct GradCase {
    const char *label;
    const char *text;
    int training;
    int warmup;   // training forwards on other batches first (moves the running statistics)
} GradCase;

enum { GRAD_BATCH = 6 };

static void run_grad_case(const GradCase *c, uint64_t seed) {
    Net n;
    if (net_open_case(&n, &net_setup, c->label, c->text, GRAD_BATCH, GRAD_BATCH, seed)) return;
    for (int w = 0; w < c->warmup; w++) {
        if (net_draw_batch(&n)) break;
        net_loss(&n);  // n.training is still 1 here
    }
    n.training = c->training;
    if (net_draw_batch(&n) || net_forward_backward(&n)) {
        net_close(&n);
        return;
    }
    if (net_check_param_grads(&n, GRAD_EPS, c->label) == 0) {
        fprintf(stderr, "%s: the model has no parameters to check\n", c->label);
        test_failures++;
    }
    net_close(&n);
}

static const GradCase grad_cases[] = {
    // batchnorm after dense: each of the 4 features is a channel over the batch. The
    // first dense's weight gradient carries batchnorm's input gradient, including the
    // terms through the batch mean and variance.
    {"batchnorm_features_training",
     "input shape=5\ndense units=4 bias=false\nbatchnorm\ndense units=3\nloss softmax_cross_entropy\n", 1, 0},
    {"batchnorm_features_act_tanh",
     "input shape=5\ndense units=4 bias=false\nbatchnorm momentum=0.3 eps=1e-3 act=tanh\ndense units=3\n"
     "loss mse\n", 1, 0},
    // batchnorm straight into the loss: gamma and beta are the last parameters.
    {"batchnorm_into_loss", "input shape=5\ndense units=3 bias=false\nbatchnorm\nloss softmax_cross_entropy\n",
     1, 0},
    // CxHxW: 2 channels over the batch and a 2x3 plane each (reshape makes the image).
    {"batchnorm_channels_training",
     "input shape=6\ndense units=12\nreshape shape=2x2x3\nbatchnorm\nflatten\ndense units=3\n"
     "loss softmax_cross_entropy\n", 1, 0},
    // CxL (rank 2), as BatchNorm1d on [batch, C, L].
    {"batchnorm_rank2_training",
     "input shape=6\ndense units=8\nreshape shape=2x4\nbatchnorm act=sigmoid\nreshape shape=8\n"
     "dense units=3\nloss mse\n", 1, 0},
    // Evaluation: the running statistics (moved by 3 training forwards) are constants, so
    // the input gradient is dy * gamma / sqrt(running_var + eps).
    {"batchnorm_features_eval",
     "input shape=5\ndense units=4\nbatchnorm momentum=0.5\ndense units=3\nloss softmax_cross_entropy\n",
     0, 3},
    {"batchnorm_channels_eval",
     "input shape=6\ndense units=12\nreshape shape=2x2x3\nbatchnorm momentum=0.5\nflatten\n"
     "dense units=3\nloss mse\n", 0, 3},
    // add of 2 and 3 branches that all read the same hidden layer h (fan-out to 3-4
    // consumers: the branches and, for 3, the add itself).
    {"add_two",
     "input shape=5\ndense units=4 name=h act=tanh\ndense units=4 name=a from=h\n"
     "dense units=4 name=b from=h act=sigmoid\nadd from=a,b\ndense units=3\n"
     "loss softmax_cross_entropy\n", 1, 0},
    {"add_three_act",
     "input shape=5\ndense units=4 name=h\ndense units=4 name=a from=h act=tanh\n"
     "dense units=4 name=b from=h\nadd from=a,b,h act=tanh\ndense units=3\nloss mse\n", 1, 0},
    // The residual shape: h feeds the next dense and the add, so its gradient is the sum
    // of both consumers' (one writes, the other accumulates).
    {"residual_fanout",
     "input shape=6\ndense units=6 name=h\ndense units=6 name=f\nadd from=h,f\n"
     "dense units=3 name=out\nloss softmax_cross_entropy\n", 1, 0},
    // A conv-free residual block as in resnet-mini: dense-bn-tanh-dense-bn + identity.
    {"residual_block_bn",
     "input shape=6\ndense units=6 name=stem act=tanh\ndense units=6 name=c1 bias=false\n"
     "batchnorm name=bn1 act=tanh\ndense units=6 name=c2 bias=false\nbatchnorm name=bn2\n"
     "add from=stem,bn2 act=tanh\ndense units=3\nloss softmax_cross_entropy\n", 1, 0},
    // One input named twice: its gradient is twice the add's.
    {"add_same_input_twice",
     "input shape=5\ndense units=4 name=h\nadd from=h,h\ndense units=3\nloss mse\n", 1, 0},
    // reshape as a view in the middle; then reshapes on both sides of a fan-out: r feeds
    // bn and the first add (bn adds to r's gradient), h feeds r and the second add (the
    // reshape adds to h's gradient).
    {"reshape_roundtrip",
     "input shape=6\ndense units=12\nreshape shape=3x2x2\nreshape shape=12\ndense units=3\n"
     "loss softmax_cross_entropy\n", 1, 0},
    {"reshape_fanout",
     "input shape=6\ndense units=6 name=h\nreshape shape=2x3 name=r\nbatchnorm name=bn\n"
     "add from=r,bn\nreshape shape=6 name=back\nadd from=back,h\ndense units=3\nloss mse\n", 1, 0},
};

static void layers_match_finite_differences(void) {
    for (size_t i = 0; i < sizeof grad_cases / sizeof grad_cases[0]; i++)
        run_grad_case(&grad_cases[i], 300 + i);
}

// The gradient plan of the residual graph: h has two consumers; in backward order the add
// (later in the file) writes h's gradient and dense f adds to it.
static void residual_plan_accumulates_into_shared_input(void) {
    Net n;
    if (net_open(&n, &net_setup,
                 "input shape=6\ndense units=6 name=h\ndense units=6 name=f\nadd from=h,f\n"
                 "dense units=3\nloss mse\n", 2, 2, 1)) {
        net_close(&n);
        return;
    }
    const Layer *f = net_layer(&n, "f"), *add = net_layer(&n, "add1");
    if (f && add) {
        CHECK_INT_EQ(add->input_count, 2);
        CHECK_INT_EQ(add->input_needs_grad[0], 1);
        CHECK_INT_EQ(add->input_grad_accumulate[0], 0);  // h: written by the add
        CHECK_INT_EQ(add->input_grad_accumulate[1], 0);  // f: only consumer
        CHECK_INT_EQ(f->input_grad_accumulate[0], 1);    // h: f adds to it
    }
    net_close(&n);
}

// In training mode batchnorm's input gradient sums to zero over each channel (the batch
// mean absorbs any shift), so a bias right before it gets a zero gradient; in evaluation
// mode it does not.
static void bias_before_batchnorm_has_zero_gradient_in_training(void) {
    for (int training = 1; training >= 0; training--) {
        Net n;
        if (net_open(&n, &net_setup,
                     "input shape=5\ndense units=4 name=d\nbatchnorm\ndense units=3\n"
                     "loss softmax_cross_entropy\n", GRAD_BATCH, GRAD_BATCH, 77)) {
            net_close(&n);
            return;
        }
        n.training = training;
        const Layer *d = net_layer(&n, "d");
        if (d && !net_draw_batch(&n) && !net_forward_backward(&n)) {
            const float *g = tensor_f32(&d->params[1].grad);
            double largest = 0.0;
            for (int k = 0; k < 4; k++) largest = fmax(largest, fabs(g[k]));
            if (training) CHECK(largest < 1e-6);
            else CHECK(largest > 1e-3);
        }
        net_close(&n);
    }
}

// ---- the batchnorm op itself, perturbing x ---------------------------------------------

// L = sum_i w_i y_i with fixed random w, so dL/dy = w. Checks dx (every element), dgamma and
// dbeta of cpu_batchnorm_backward against central differences of L computed in double.
static void batchnorm_op_matches_finite_differences(int n, int channels, int spatial,
                                                    int training, uint64_t seed) {
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, seed);
    size_t count = (size_t)n * channels * spatial;
    float *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y);
    float *w = malloc(count * sizeof *w), *dx = malloc(count * sizeof *dx);
    float gamma[8], beta[8], rmean[8], rvar[8], smean[8], sinv[8], dgamma[8], dbeta[8];
    for (size_t i = 0; i < count; i++) {
        x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
        w[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    }
    for (int c = 0; c < channels; c++) {
        gamma[c] = 0.5f + rng_uniform(&rng);
        beta[c] = rng_uniform(&rng) - 0.5f;
        rmean[c] = 0.4f * rng_uniform(&rng) - 0.2f;
        rvar[c] = 0.5f + rng_uniform(&rng);
    }
    // The loss as a function of (x, gamma, beta); running statistics are restored after
    // every training forward so each evaluation sees the same state.
    float rmean_saved[8], rvar_saved[8];
    memcpy(rmean_saved, rmean, sizeof rmean);
    memcpy(rvar_saved, rvar, sizeof rvar);
    BatchnormArgs forward = {.n = n, .channels = channels, .spatial = spatial, .momentum = 0.1f,
                             .eps = 1e-5f};
    const BatchnormForwardTensors tensors = {.x = x, .y = y, .gamma = gamma, .beta = beta,
                                             .running_mean = rmean, .running_var = rvar,
                                             .save_mean = smean, .save_invstd = sinv};
    const BatchnormInferenceTensors fixed = {.x = x, .y = y, .gamma = gamma, .beta = beta,
                                             .running_mean = rmean, .running_var = rvar,
                                             .save_mean = smean, .save_invstd = sinv};
#define BN_LOSS(out)                                                                         \
    do {                                                                                     \
        if (training)                                                                        \
            b->batchnorm_forward_training(b, &forward, &tensors, &st);                       \
        else                                                                                 \
            b->batchnorm_forward_inference(b, &forward, &fixed, &st);                        \
        memcpy(rmean, rmean_saved, sizeof rmean);                                            \
        memcpy(rvar, rvar_saved, sizeof rvar);                                               \
        double sum_ = 0.0;                                                                   \
        for (size_t i_ = 0; i_ < count; i_++) sum_ += (double)w[i_] * y[i_];                 \
        (out) = sum_;                                                                        \
    } while (0)
    double base;
    BN_LOSS(base);
    (void)base;
    BatchnormArgs backward = {.n = n, .channels = channels, .spatial = spatial,
                              .batch_statistics = training};
    CHECK_INT_EQ(b->batchnorm_backward(b, &backward, &(BatchnormBackwardTensors){.x = x, .dy = w,
                                        .gamma = gamma, .save_mean = smean, .save_invstd = sinv,
                                        .dx = dx, .dgamma = dgamma, .dbeta = dbeta}, &st), 0);
    char label[96];
    snprintf(label, sizeof label, "batchnorm op n=%d c=%d spatial=%d %s", n, channels, spatial,
             training ? "training" : "eval");
    int mismatches = 0;
    const float eps = 1e-2f;
    struct { const char *name; float *values; const float *grads; size_t count; } groups[] = {
        {"x", x, dx, count}, {"gamma", gamma, dgamma, (size_t)channels},
        {"beta", beta, dbeta, (size_t)channels}};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        double largest = 0.0;
        for (size_t k = 0; k < groups[g].count; k++) {
            float saved = groups[g].values[k];
            double plus, minus;
            groups[g].values[k] = saved + eps;
            BN_LOSS(plus);
            groups[g].values[k] = saved - eps;
            BN_LOSS(minus);
            groups[g].values[k] = saved;
            double numeric = (plus - minus) / ((double)(saved + eps) - (double)(saved - eps));
            double a = groups[g].grads[k];
            largest = fmax(largest, fabs(numeric));
            double tol = GRAD_ATOL + GRAD_RTOL * fmax(fabs(a), fabs(numeric));
            if (!(fabs(a - numeric) <= tol)) {
                if (mismatches++ < 5)
                    fprintf(stderr, "%s: d%s[%zu]: analytic %.7g vs numeric %.7g\n", label,
                            groups[g].name, k, a, numeric);
                test_failures++;
            }
        }
        if (!(largest > 1e-3)) {
            fprintf(stderr, "%s: d%s is ~0 everywhere\n", label, groups[g].name);
            test_failures++;
        }
    }
#undef BN_LOSS
    // The same backward with both accumulate flags adds onto what is there.
    float *dx_acc = malloc(count * sizeof *dx_acc), dgamma_acc[8], dbeta_acc[8];
    for (size_t i = 0; i < count; i++) dx_acc[i] = 0.25f * (float)(i % 7);
    for (int c = 0; c < channels; c++) dgamma_acc[c] = dbeta_acc[c] = 1.5f;
    BatchnormArgs accumulating = backward;
    accumulating.accumulate_dx = accumulating.accumulate_params = 1;
    CHECK_INT_EQ(b->batchnorm_backward(b, &accumulating, &(BatchnormBackwardTensors){.x = x,
                                        .dy = w, .gamma = gamma, .save_mean = smean,
                                        .save_invstd = sinv, .dx = dx_acc, .dgamma = dgamma_acc,
                                        .dbeta = dbeta_acc}, &st), 0);
    for (size_t i = 0; i < count; i++) CHECK_NEAR(dx_acc[i], 0.25f * (float)(i % 7) + dx[i], 1e-5);
    for (int c = 0; c < channels; c++) {
        CHECK_NEAR(dgamma_acc[c], 1.5 + dgamma[c], 1e-5);
        CHECK_NEAR(dbeta_acc[c], 1.5 + dbeta[c], 1e-5);
    }
    // dx may be NULL (batchnorm right after the input): parameters only.
    CHECK_INT_EQ(b->batchnorm_backward(b, &backward, &(BatchnormBackwardTensors){.x = x, .dy = w,
                                        .gamma = gamma, .save_mean = smean, .save_invstd = sinv,
                                        .dx = NULL, .dgamma = dgamma_acc, .dbeta = dbeta_acc}, &st),
                                            0);
    for (int c = 0; c < channels; c++) CHECK_NEAR(dgamma_acc[c], dgamma[c], 1e-6);
    free(dx_acc);
    free(x);
    free(y);
    free(w);
    free(dx);
}

static void batchnorm_op_cases(void) {
    batchnorm_op_matches_finite_differences(5, 3, 1, 1, 11);  // features
    batchnorm_op_matches_finite_differences(3, 2, 6, 1, 12);  // channels over batch x 2x3
    batchnorm_op_matches_finite_differences(2, 4, 4, 1, 13);
    batchnorm_op_matches_finite_differences(5, 3, 1, 0, 14);  // evaluation
    batchnorm_op_matches_finite_differences(3, 2, 6, 0, 15);
}

int main(void) {
    layers_match_finite_differences();
    residual_plan_accumulates_into_shared_input();
    bias_before_batchnorm_has_zero_gradient_in_training();
    batchnorm_op_cases();
    return test_exit_code("test_gradcheck_bn_add");
}
