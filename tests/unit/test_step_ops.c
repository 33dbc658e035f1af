// The backend ops one training step of an MLP calls, counted on the CPU. The layers call the
// same ops on every backend, so these are the kernels a GPU step launches: at mlp's batch
// 128 a step replayed from a CUDA Graph is about 16 small operations in 70 us, and each one
// added back costs a few percent (docs/benchmarks.md, "mlp at batch 128"). Pinned:
// - a dense layer's bias goes through gemm_bias_activation (the GEMM's epilogue on a GPU),
//   with or without an activation to fuse, never add_bias_rows;
// - the loss and accuracy sums are one sum_rows;
// - in training, softmax_cross_entropy_forward writes the logits' gradient and the
//   backward op is not called; in evaluation it writes none.
#include "gradcheck_net.h"

static const NetSetup net_setup = {.model_name = "step_ops.model", .seed_mul = 13,
                                   .seed_add = 1, .ctx_seed = 7};

// mlp.model's shape, smaller: two fused relu layers and a last layer with a bias only.
static const char *const mlp_text =
    "input shape=20\n"
    "dense units=16 act=relu\n"
    "dense units=12 act=relu\n"
    "dense units=5\n"
    "loss softmax_cross_entropy\n";

enum { BATCH = 8 };

static struct {
    int gemm, gemm_bias_activation, add_bias_rows, sum_rows, activation_forward,
        activation_bias_backward, softmax_forward, softmax_backward,
        softmax_forward_with_gradient;
} calls;

static const Backend *cpu;

static int count_gemm(const Backend *b, const GemmArgs *g, const GemmTensors *t, Status *st) {
    calls.gemm++;
    return cpu->gemm(b, g, t, st);
}

static int count_gemm_bias_activation(const Backend *b, const GemmArgs *g,
                                      const GemmBiasActivationTensors *t,
                                      const FusedActivation *act, Status *st) {
    calls.gemm_bias_activation++;
    return cpu->gemm_bias_activation(b, g, t, act, st);
}

static int count_add_bias_rows(const Backend *b, const AddBiasRowsArgs *args, Status *st) {
    calls.add_bias_rows++;
    return cpu->add_bias_rows(b, args, st);
}

static int count_sum_rows(const Backend *b, const SumRowsArgs *args, Status *st) {
    calls.sum_rows++;
    return cpu->sum_rows(b, args, st);
}

static int count_softmax_forward(const Backend *b, const SoftmaxCrossEntropyForwardArgs *args,
                                 Status *st) {
    calls.softmax_forward++;
    calls.softmax_forward_with_gradient += args->dlogits != NULL;
    return cpu->softmax_cross_entropy_forward(b, args, st);
}

static int count_softmax_backward(const Backend *b, const SoftmaxCrossEntropyBackwardArgs *args,
                                  Status *st) {
    calls.softmax_backward++;
    return cpu->softmax_cross_entropy_backward(b, args, st);
}

static int count_activation_forward(const Backend *b, const ActivationForwardArgs *args,
                                    Status *st) {
    calls.activation_forward++;
    return cpu->activation_forward(b, args, st);
}

static int count_activation_bias_backward(const Backend *b, const FusedActivation *act,
                                          const ActivationBiasBackwardTensors *t, Status *st) {
    calls.activation_bias_backward++;
    return cpu->activation_bias_backward(b, act, t, st);
}

// The CPU's table with the ops above counted on their way through.
static Backend counting_backend(void) {
    cpu = cpu_backend();
    Backend b = *cpu;
    b.gemm = count_gemm;
    b.gemm_bias_activation = count_gemm_bias_activation;
    b.add_bias_rows = count_add_bias_rows;
    b.sum_rows = count_sum_rows;
    b.activation_forward = count_activation_forward;
    b.activation_bias_backward = count_activation_bias_backward;
    b.softmax_cross_entropy_forward = count_softmax_forward;
    b.softmax_cross_entropy_backward = count_softmax_backward;
    return b;
}

static void one_training_step_calls_what_a_replay_launches(void) {
    Net n;
    if (net_open_case(&n, &net_setup, "mlp step", mlp_text, BATCH, BATCH, 3)) return;
    Backend counting = counting_backend();
    if (net_draw_batch(&n)) {
        net_close(&n);
        return;
    }
    n.b = &counting;
    memset(&calls, 0, sizeof calls);
    Status st;
    status_clear(&st);
    LayerContext ctx = net_context(&n);
    int rc = graph_forward(&n.g, &ctx, &st);
    if (!rc) rc = graph_backward(&n.g, &ctx, &st);
    if (!rc) rc = graph_add_loss_sums(&n.g, n.b, BATCH, 0, &st);
    if (rc) {
        report_status("the step", &st);
        test_failures++;
    }
    // Forward: each dense layer one gemm_bias_activation (relu fused into two of them, the
    // last one's bias alone); backward: a weight gradient for each, an input gradient for
    // the two whose input needs one.
    CHECK_INT_EQ(calls.gemm_bias_activation, 3);
    CHECK_INT_EQ(calls.gemm, 5);
    CHECK_INT_EQ(calls.add_bias_rows, 0);
    CHECK_INT_EQ(calls.activation_forward, 0);
    CHECK_INT_EQ(calls.activation_bias_backward, 2);
    // The last layer's bias gradient, and the loss and accuracy sums together.
    CHECK_INT_EQ(calls.sum_rows, 2);
    CHECK_INT_EQ(calls.softmax_forward, 1);
    CHECK_INT_EQ(calls.softmax_forward_with_gradient, 1);
    CHECK_INT_EQ(calls.softmax_backward, 0);

    // Evaluation: the loss writes no gradient (the graph may hold none to write).
    memset(&calls, 0, sizeof calls);
    n.training = 0;
    ctx = net_context(&n);
    if (graph_forward(&n.g, &ctx, &st)) {
        report_status("evaluation", &st);
        test_failures++;
    }
    CHECK_INT_EQ(calls.softmax_forward, 1);
    CHECK_INT_EQ(calls.softmax_forward_with_gradient, 0);
    net_close(&n);
}

int main(void) {
    one_training_step_calls_what_a_replay_launches();
    return test_exit_code("test_step_ops");
}
