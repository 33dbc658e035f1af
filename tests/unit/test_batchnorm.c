// batchnorm's statistics against hand computation: the training output and the running
// mean/variance after k steps (PyTorch's update, unbiased variance), evaluation with the
// running statistics, buffers that the optimizer leaves alone and the parameter count
// leaves out, and a weights file that carries the running statistics.
#define _POSIX_C_SOURCE 200809L  // getpid
#include "check.h"
#include "core/graph.h"
#include "core/optimizer.h"
#include "base/rng.h"
#include "core/checkpoint.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>
#include <unistd.h>

typedef struct Net {
    ModelFile file;
    Graph g;
    RunConfig config;
    Allocator alloc;
    const Backend *b;
} Net;

static void report_status(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
    test_failures++;
}

static int net_open(Net *n, const char *text, int batch, uint64_t seed) {
    memset(n, 0, sizeof *n);
    Status st;
    status_clear(&st);
    n->b = cpu_backend();
    int rc = model_file_parse_text("batchnorm.model", text, &n->file, &st);
    if (!rc) rc = graph_build(&n->file, &n->g, &n->config, &st);
    if (rc) {
        report_status("build", &st);
        model_file_free(&n->file);
        return rc;
    }
    rc = alloc_init(&n->alloc, n->b, ALLOC_GROW, 0, &st);
    if (!rc) rc = graph_init_params(&n->g, n->b, &n->alloc, seed, &st);
    if (!rc) rc = graph_allocate(&n->g, n->b, &n->alloc, batch, NULL, &st);
    if (rc) report_status("init", &st);
    return rc;
}

static void net_close(Net *n) {
    graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

// Loads `x` ([batch] samples; labels all 0) and runs forward in the given mode.
static int net_forward(Net *n, const float *x, int batch, int training) {
    Status st;
    status_clear(&st);
    int32_t labels[64] = {0};
    LayerContext ctx = {.backend = n->b, .alloc = &n->alloc, .batch = batch, .training = training,
                        .seed = 1, .labels = (const int32_t *)n->g.labels.data};
    int rc = graph_load_batch(&n->g, n->b, x, labels, batch, &st);
    if (!rc) rc = graph_forward(&n->g, &ctx, &st);
    if (rc) report_status("forward", &st);
    return rc;
}

static Layer *find(const Net *n, const char *name) {
    for (int i = 0; i < n->g.count; i++)
        if (strcmp(n->g.layers[i]->name, name) == 0) return n->g.layers[i];
    fprintf(stderr, "no layer '%s'\n", name);
    test_failures++;
    return NULL;
}

enum { GAMMA, BETA, RUNNING_MEAN, RUNNING_VAR };

static float *param(const Layer *l, int p) { return tensor_f32(&l->params[p].value); }

// Per channel of [batch, channels, spatial] values: mean and biased / unbiased variance.
static void channel_stats(const float *x, int batch, int channels, int spatial, int c,
                          double *mean, double *biased, double *unbiased) {
    double m = (double)batch * spatial, sum = 0.0, squares = 0.0;
    for (int s = 0; s < batch; s++)
        for (int k = 0; k < spatial; k++) sum += x[((size_t)s * channels + c) * spatial + k];
    *mean = sum / m;
    for (int s = 0; s < batch; s++)
        for (int k = 0; k < spatial; k++) {
            double d = x[((size_t)s * channels + c) * spatial + k] - *mean;
            squares += d * d;
        }
    *biased = squares / m;
    *unbiased = squares / (m - 1.0);
}

// k training steps on different batches: the output of each is (x - mean) / sqrt(var + eps)
// with the batch's biased variance, and the running statistics follow
//   running = (1 - momentum) running + momentum * statistic   (unbiased variance),
// starting from mean 0 and variance 1 — computed here in double, independently.
static void running_statistics_follow_hand_computation(const char *text, int batch, int channels,
                                                       int spatial, double momentum, double eps) {
    Net n;
    if (net_open(&n, text, batch, 5)) {
        net_close(&n);
        return;
    }
    Layer *bn = find(&n, "bn");
    if (!bn) {
        net_close(&n);
        return;
    }
    double want_mean[8], want_var[8];
    for (int c = 0; c < channels; c++) {
        want_mean[c] = 0.0;
        want_var[c] = 1.0;
        CHECK_NEAR(param(bn, RUNNING_MEAN)[c], 0.0, 0.0);  // PyTorch's initial values
        CHECK_NEAR(param(bn, RUNNING_VAR)[c], 1.0, 0.0);
        CHECK_NEAR(param(bn, GAMMA)[c], 1.0, 0.0);
        CHECK_NEAR(param(bn, BETA)[c], 0.0, 0.0);
    }
    Rng rng;
    rng_seed(&rng, 9);
    size_t count = (size_t)batch * channels * spatial;
    float *x = malloc(count * sizeof *x);
    for (int step = 1; step <= 4; step++) {
        // Each step has its own offset and scale per channel, so the statistics move.
        for (size_t i = 0; i < count; i++) {
            int c = (int)(i / (size_t)spatial % (size_t)channels);
            x[i] = (float)(step + c) * 0.5f + (1.0f + c) * (2.0f * rng_uniform(&rng) - 1.0f);
        }
        if (net_forward(&n, x, batch, 1)) break;
        const float *y = tensor_f32(&bn->output);
        for (int c = 0; c < channels; c++) {
            double mean, biased, unbiased;
            channel_stats(x, batch, channels, spatial, c, &mean, &biased, &unbiased);
            want_mean[c] = (1.0 - momentum) * want_mean[c] + momentum * mean;
            want_var[c] = (1.0 - momentum) * want_var[c] + momentum * unbiased;
            for (int s = 0; s < batch; s++)
                for (int k = 0; k < spatial; k++) {
                    size_t i = ((size_t)s * channels + c) * spatial + k;
                    CHECK_NEAR(y[i], (x[i] - mean) / sqrt(biased + eps), 1e-5);
                }
        }
        for (int c = 0; c < channels; c++) {
            CHECK_NEAR(param(bn, RUNNING_MEAN)[c], want_mean[c], 1e-5 * (1.0 + fabs(want_mean[c])));
            CHECK_NEAR(param(bn, RUNNING_VAR)[c], want_var[c], 1e-5 * (1.0 + fabs(want_var[c])));
        }
    }
    // Evaluation forwards do not move the running statistics.
    float before[8];
    memcpy(before, param(bn, RUNNING_VAR), (size_t)channels * sizeof *before);
    net_forward(&n, x, batch, 0);
    for (int c = 0; c < channels; c++) CHECK_NEAR(param(bn, RUNNING_VAR)[c], before[c], 0.0);
    free(x);
    net_close(&n);
}

// Evaluation: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta, whatever
// the batch holds (one sample gives the same answer as in a batch of many).
static void evaluation_uses_running_statistics(void) {
    Net n;
    if (net_open(&n, "input shape=2x1x3\nbatchnorm name=bn eps=0.01\nflatten\nloss mse\n", 2, 5)) {
        net_close(&n);
        return;
    }
    Layer *bn = find(&n, "bn");
    if (bn) {
        const float gamma[2] = {2.0f, -0.5f}, beta[2] = {0.25f, 1.0f};
        const float mean[2] = {1.0f, -3.0f}, var[2] = {4.0f, 0.09f};
        memcpy(param(bn, GAMMA), gamma, sizeof gamma);
        memcpy(param(bn, BETA), beta, sizeof beta);
        memcpy(param(bn, RUNNING_MEAN), mean, sizeof mean);
        memcpy(param(bn, RUNNING_VAR), var, sizeof var);
        const float x[12] = {0, 1, 2, -3, -2.5f, 4, 7, -1, 0.5f, 0, 0, 0};
        if (!net_forward(&n, x, 2, 0)) {
            const float *y = tensor_f32(&bn->output);
            for (int i = 0; i < 12; i++) {
                int c = i / 3 % 2;
                double want = (x[i] - mean[c]) / sqrt(var[c] + 0.01) * gamma[c] + beta[c];
                CHECK_NEAR(y[i], want, 1e-5 * (1.0 + fabs(want)));
            }
            // e.g. x = 2 in channel 0: (2 - 1) / sqrt(4.01) * 2 + 0.25 = 1.24875...
            CHECK_NEAR(y[2], 1.0 / sqrt(4.01) * 2.0 + 0.25, 1e-6);
            CHECK_NEAR(param(bn, RUNNING_MEAN)[1], -3.0, 0.0);
        }
        // A batch of one sample: the same values for that sample.
        if (!net_forward(&n, x + 6, 1, 0)) {
            const float *y = tensor_f32(&bn->output);
            for (int i = 0; i < 6; i++) {
                int c = i / 3;
                CHECK_NEAR(y[i], (x[6 + i] - mean[c]) / sqrt(var[c] + 0.01) * gamma[c] + beta[c],
                           1e-5);
            }
        }
    }
    net_close(&n);
}

// The op itself, handed running statistics it may only read: const, and in read-only
// storage, so that a write to them would not compile or would fault. y and the saved
// statistics are the evaluation's.
static void inference_op_reads_const_running_statistics(void) {
    static const float running_mean[2] = {1.0f, -3.0f}, running_var[2] = {4.0f, 0.09f};
    const float gamma[2] = {2.0f, -0.5f}, beta[2] = {0.25f, 1.0f};
    const float x[6] = {0, 1, 2, -3, -2.5f, 4};
    float y[6], save_mean[2], save_invstd[2];
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    BatchnormArgs args = {.n = 1, .channels = 2, .spatial = 3, .eps = 0.01f};
    CHECK_INT_EQ(b->batchnorm_forward_inference(b, &args, &(BatchnormInferenceTensors){
                     .x = x, .y = y, .gamma = gamma, .beta = beta,
                     .running_mean = running_mean, .running_var = running_var,
                     .save_mean = save_mean, .save_invstd = save_invstd}, &st), 0);
    for (int i = 0; i < 6; i++) {
        int c = i / 3;
        double want = (x[i] - running_mean[c]) / sqrt(running_var[c] + 0.01) * gamma[c] + beta[c];
        CHECK_NEAR(y[i], want, 1e-5 * (1.0 + fabs(want)));
    }
    for (int c = 0; c < 2; c++) {
        CHECK_NEAR(save_mean[c], running_mean[c], 0.0);
        CHECK_NEAR(save_invstd[c], 1.0 / sqrt(running_var[c] + 0.01), 1e-6 * save_invstd[c]);
    }
}

// One value per channel in training (a last batch of one sample after dense): the
// normalised value is 0, so y = beta, and the running statistics stay where they were
// (the unbiased variance of one value is undefined).
static void single_value_per_channel_keeps_running_statistics(void) {
    Net n;
    if (net_open(&n, "input shape=3\nbatchnorm name=bn momentum=0.5\nloss mse\n", 4, 5)) {
        net_close(&n);
        return;
    }
    Layer *bn = find(&n, "bn");
    const float x[3] = {5.0f, -2.0f, 0.5f};
    if (bn && !net_forward(&n, x, 1, 1)) {
        for (int c = 0; c < 3; c++) {
            CHECK_NEAR(tensor_f32(&bn->output)[c], 0.0, 1e-6);
            CHECK_NEAR(param(bn, RUNNING_MEAN)[c], 0.0, 0.0);
            CHECK_NEAR(param(bn, RUNNING_VAR)[c], 1.0, 0.0);
            CHECK(isfinite(tensor_f32(&bn->output)[c]));
        }
    }
    net_close(&n);
}

static long built_parameter_count(const char *text) {
    ModelFile f;
    Graph g;
    Status st;
    status_clear(&st);
    long count = -1;
    if (model_file_parse_text("count.model", text, &f, &st)) {
        report_status("parse", &st);
        return -1;
    }
    if (!graph_build(&f, &g, NULL, &st)) {
        count = graph_parameter_count(&g);
        graph_free(&g);
    } else {
        report_status("build", &st);
    }
    model_file_free(&f);
    return count;
}

// As PyTorch's sum(p.numel() for p in model.parameters()): gamma and beta count,
// the running statistics (buffers) do not.
static void parameter_count_leaves_out_buffers(void) {
    const char *mlp = "input shape=784\ndense units=256 act=relu\ndense units=128 act=relu\n"
                      "dense units=10\nloss softmax_cross_entropy\n";
    const char *mlp_bn = "input shape=784\ndense units=256\nbatchnorm act=relu\n"
                         "dense units=128 act=relu\ndense units=10\nloss softmax_cross_entropy\n";
    CHECK_INT_EQ(built_parameter_count(mlp), 235146);
    CHECK_INT_EQ(built_parameter_count(mlp_bn), 235146 + 2 * 256);
}

// Buffers get no gradient and no optimizer state; a training step updates gamma and beta
// from their gradients and leaves the running statistics as forward set them.
static void optimizer_skips_buffers(void) {
    Net n;
    if (net_open(&n, "input shape=4\ndense units=3 bias=false\nbatchnorm name=bn\ndense units=2\n"
                     "loss softmax_cross_entropy\n", 4, 5)) {
        net_close(&n);
        return;
    }
    Status st;
    status_clear(&st);
    Layer *bn = find(&n, "bn");
    CHECK_INT_EQ(optimizer_prepare(&n.g, &n.config.optimizer, n.b, &n.alloc, &st), 0);
    if (bn) {
        CHECK(bn->params[GAMMA].grad.data != NULL && bn->params[GAMMA].state[1].data != NULL);
        for (int p = RUNNING_MEAN; p <= RUNNING_VAR; p++) {
            CHECK_INT_EQ(bn->params[p].buffer, 1);
            CHECK(bn->params[p].grad.data == NULL);
            CHECK(bn->params[p].state[0].data == NULL && bn->params[p].state[1].data == NULL);
        }
        const float x[16] = {1, 2, 3, 4, -1, 0, 2, 1, 0.5f, -2, 1, 3, 2, 2, -1, 0};
        LayerContext ctx = {.backend = n.b, .alloc = &n.alloc, .batch = 4, .training = 1,
                            .labels = (const int32_t *)n.g.labels.data};
        int32_t labels[4] = {0, 1, 1, 0};
        CHECK_INT_EQ(graph_load_batch(&n.g, n.b, x, labels, 4, &st), 0);
        CHECK_INT_EQ(graph_forward(&n.g, &ctx, &st), 0);
        CHECK_INT_EQ(graph_backward(&n.g, &ctx, &st), 0);
        float mean[3], var[3];
        memcpy(mean, param(bn, RUNNING_MEAN), sizeof mean);
        memcpy(var, param(bn, RUNNING_VAR), sizeof var);
        CHECK_INT_EQ(optimizer_step(&n.g, &n.config.optimizer, n.b, 1, &st), 0);
        for (int c = 0; c < 3; c++) {
            CHECK_NEAR(param(bn, RUNNING_MEAN)[c], mean[c], 0.0);
            CHECK_NEAR(param(bn, RUNNING_VAR)[c], var[c], 0.0);
            CHECK(param(bn, RUNNING_VAR)[c] != 1.0f);  // forward did move it
        }
        // Adam's first step moves every parameter with a nonzero gradient by ~lr.
        int moved = 0;
        for (int c = 0; c < 3; c++) moved += param(bn, GAMMA)[c] != 1.0f;
        CHECK(moved > 0);
    }
    net_close(&n);
}

// A weights file holds the running statistics by PyTorch's names; a fresh graph that
// loads it evaluates exactly as the one that saved it.
static void weights_round_trip_carries_running_statistics(void) {
    const char *model = "input shape=8\ndense units=6 bias=false\nreshape shape=3x2\n"
                        "batchnorm name=bn momentum=0.3\nflatten\ndense units=3\n"
                        "loss softmax_cross_entropy\n";
    Net a, b;
    if (net_open(&a, model, 4, 11) || net_open(&b, model, 4, 12)) {
        net_close(&a);
        net_close(&b);
        return;
    }
    Status st;
    status_clear(&st);
    Rng rng;
    rng_seed(&rng, 3);
    float x[32];
    for (int step = 1; step <= 3; step++) {
        for (int i = 0; i < 32; i++) x[i] = 3.0f * rng_uniform(&rng) - 1.0f;
        LayerContext ctx = {.backend = a.b, .alloc = &a.alloc, .batch = 4, .training = 1,
                            .labels = (const int32_t *)a.g.labels.data};
        int32_t labels[4] = {0, 1, 2, 1};
        CHECK_INT_EQ(graph_load_batch(&a.g, a.b, x, labels, 4, &st), 0);
        CHECK_INT_EQ(graph_forward(&a.g, &ctx, &st), 0);
        CHECK_INT_EQ(graph_backward(&a.g, &ctx, &st), 0);
        if (step == 1) CHECK_INT_EQ(optimizer_prepare(&a.g, &a.config.optimizer, a.b, &a.alloc, &st), 0);
        CHECK_INT_EQ(optimizer_step(&a.g, &a.config.optimizer, a.b, step, &st), 0);
    }
    char path[256];
    CheckpointLoaded loaded;
    snprintf(path, sizeof path, "/tmp/test_batchnorm_%ld.safetensors", (long)getpid());
    if (checkpoint_save(&a.g, NULL, a.b, NULL, NULL, path, &st)) report_status("checkpoint_save", &st);
    else if (checkpoint_load_weights(&b.g, b.b, path, &loaded, &st))
        report_status("checkpoint_load_weights", &st);
    remove(path);
    Layer *bn_a = find(&a, "bn"), *bn_b = find(&b, "bn");
    if (bn_a && bn_b) {
        CHECK_CONTAINS(bn_a->params[RUNNING_MEAN].name, "bn.running_mean");
        CHECK_CONTAINS(bn_a->params[RUNNING_VAR].name, "bn.running_var");
        CHECK_CONTAINS(bn_a->params[GAMMA].name, "bn.weight");
        CHECK_CONTAINS(bn_a->params[BETA].name, "bn.bias");
        for (int p = 0; p < 4; p++)
            for (int c = 0; c < 3; c++) CHECK_NEAR(param(bn_b, p)[c], param(bn_a, p)[c], 0.0);
        // Trained values, not the initial ones, made the trip.
        CHECK(param(bn_b, RUNNING_MEAN)[0] != 0.0f && param(bn_b, RUNNING_VAR)[0] != 1.0f);
        // Both evaluate alike on a new batch.
        for (int i = 0; i < 32; i++) x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
        if (!net_forward(&a, x, 4, 0) && !net_forward(&b, x, 4, 0)) {
            const float *ya = tensor_f32(&a.g.layers[a.g.count - 2]->output);
            const float *yb = tensor_f32(&b.g.layers[b.g.count - 2]->output);
            for (int i = 0; i < 12; i++) CHECK_NEAR(yb[i], ya[i], 0.0);
        }
    }
    net_close(&a);
    net_close(&b);
}

int main(void) {
    // Features (N): each of 3 features over a batch of 5.
    running_statistics_follow_hand_computation(
        "input shape=3\nbatchnorm name=bn momentum=0.2\nloss mse\n", 5, 3, 1, 0.2, 1e-5);
    // Channels (CxHxW): 2 channels, each over a batch of 3 and a 2x2 plane.
    running_statistics_follow_hand_computation(
        "input shape=2x2x2\nbatchnorm name=bn\nflatten\nloss mse\n", 3, 2, 4, 0.1, 1e-5);
    running_statistics_follow_hand_computation(
        "input shape=4x1x3\nbatchnorm name=bn momentum=1 eps=0.5\nflatten\nloss mse\n", 2, 4, 3,
        1.0, 0.5);
    evaluation_uses_running_statistics();
    inference_op_reads_const_running_statistics();
    single_value_per_channel_keeps_running_statistics();
    parameter_count_leaves_out_buffers();
    optimizer_skips_buffers();
    weights_round_trip_carries_running_statistics();
    return test_exit_code("test_batchnorm");
}
