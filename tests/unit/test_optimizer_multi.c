// The multi-tensor optimizer ops (sgd_update_multi, adam_update_multi) and their use by
// core/optimizer.c, on the CPU:
// - the CPU ops give, bit for bit, what the per-tensor ops give each tensor (the CUDA
//   versions are held to the same in tests/gpu/test_cuda_parity_optimizers.c);
// - optimizer_step gives the same bits through the multi-tensor op as through the
//   per-tensor fallback of a backend without it, over more tensors than one group
//   (OPTIMIZER_UPDATE_GROUP) and a last group part full;
// - a failure names the parameters of the failed call, and the layer's place.
#include "check.h"
#include "base/rng.h"
#include "core/graph.h"
#include "core/optimizer.h"
#include "kernels/cpu/cpu_ops.h"

#include <stdlib.h>
#include <string.h>

enum { TENSORS = 7, STEPS = 3 };

static Rng rng;

static void fill(float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&rng);
}

static float *copy_floats(const float *x, size_t n) {
    float *y = malloc((n ? n : 1) * sizeof *y);
    if (n) memcpy(y, x, n * sizeof *y);
    return y;
}

static void check_same_bits(const char *what, const char *array, int tensor, const float *got,
                            const float *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&got[i], &want[i], sizeof got[i]) == 0) continue;
        fprintf(stderr, "%s: %s of tensor %d, element %zu: multi %.9g vs per-tensor %.9g "
                "(must be bit for bit equal)\n", what, array, tensor, i, got[i], want[i]);
        test_failures++;
        return;
    }
}

// Tensors of several sizes (empty, 1, a bias, larger than one thread's share on the CPU),
// `states` state arrays each (0: SGD without momentum, whose velocity is NULL), updated
// STEPS times by the multi-tensor op (set a) and tensor by tensor (set b).
static void multi_matches_per_tensor(const char *what, int adam, SgdHyper sh, AdamHyper ah) {
    static const size_t sizes[TENSORS] = {0, 1, 10, 257, 4099, 3, 20000};
    const Backend *b = cpu_backend();
    Status st;
    status_clear(&st);
    int states = adam ? 2 : sh.momentum != 0.0f ? 1 : 0;
    float *a_p[TENSORS], *b_p[TENSORS], *a_s[TENSORS][2] = {{NULL}}, *b_s[TENSORS][2] = {{NULL}};
    float *grad[TENSORS];
    for (int t = 0; t < TENSORS; t++) {
        size_t n = sizes[t];
        a_p[t] = malloc((n ? n : 1) * sizeof(float));
        fill(a_p[t], n, -1.0f, 1.0f);
        b_p[t] = copy_floats(a_p[t], n);
        for (int k = 0; k < states; k++) {
            a_s[t][k] = calloc(n ? n : 1, sizeof(float));
            if (!adam) fill(a_s[t][k], n, -0.1f, 0.1f);  // SGD mid-training
            b_s[t][k] = copy_floats(a_s[t][k], n);
        }
        grad[t] = malloc((n ? n : 1) * sizeof(float));
    }
    for (int step = 1; step <= STEPS; step++) {
        ah.step = step;
        OptimizerTensor tensors[TENSORS];
        for (int t = 0; t < TENSORS; t++) {
            fill(grad[t], sizes[t], -1.0f, 1.0f);
            if (sizes[t] > 2) grad[t][2] = 0.0f;
            tensors[t] = (OptimizerTensor){.param = a_p[t], .grad = grad[t],
                                           .state = {a_s[t][0], a_s[t][1]}, .n = sizes[t]};
        }
        int rc = adam ? b->adam_update_multi(b, tensors, TENSORS, &ah, &st)
                      : b->sgd_update_multi(b, tensors, TENSORS, &sh, &st);
        CHECK_INT_EQ(rc, 0);
        for (int t = 0; t < TENSORS; t++) {
            rc = adam ? b->adam_update(b, &(AdamUpdateTensors){.param = b_p[t], .grad = grad[t],
                                       .m = b_s[t][0], .v = b_s[t][1], .n = sizes[t]}, &ah, &st)
                      : b->sgd_update(b, &(SgdUpdateTensors){.param = b_p[t], .grad = grad[t],
                                      .velocity = b_s[t][0], .n = sizes[t]}, &sh, &st);
            CHECK_INT_EQ(rc, 0);
            check_same_bits(what, "param", t, a_p[t], b_p[t], sizes[t]);
            for (int k = 0; k < states; k++)
                check_same_bits(what, k ? "v" : adam ? "m" : "velocity", t, a_s[t][k],
                                b_s[t][k], sizes[t]);
        }
    }
    for (int t = 0; t < TENSORS; t++) {
        free(a_p[t]);
        free(b_p[t]);
        free(grad[t]);
        for (int k = 0; k < 2; k++) {
            free(a_s[t][k]);
            free(b_s[t][k]);
        }
    }
}

// ---- through core/optimizer.c ----------------------------------------------------------------

// Hidden dense layers (a weight and a bias each) and the output's: more trained tensors than
// one group of OPTIMIZER_UPDATE_GROUP, and a last group part full, whatever the group size
// (with 64: 40 layers, 82 tensors, groups of 64 and 18).
enum { LAYERS = OPTIMIZER_UPDATE_GROUP / 2 + 8, TRAINED = 2 * LAYERS + 2 };
enum { GROUPS = (TRAINED + OPTIMIZER_UPDATE_GROUP - 1) / OPTIMIZER_UPDATE_GROUP };

typedef struct Net {
    ModelFile file;
    Graph g;
    RunConfig config;
    Allocator alloc;
} Net;

static void report(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
    test_failures++;
}

static int net_open(Net *n, const OptimizerConfig *o) {
    memset(n, 0, sizeof *n);
    char text[32 * (LAYERS + 4)] = "input shape=5\n";  // lines of at most 32 bytes
    size_t used = strlen(text);
    for (int i = 0; i < LAYERS; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "dense units=%d act=tanh\n",
                                 3 + i % 4);
    snprintf(text + used, sizeof text - used, "dense units=2\nloss softmax_cross_entropy\n");
    Status st;
    status_clear(&st);
    const Backend *b = cpu_backend();
    int rc = model_file_parse_text("multi.model", text, &n->file, &st);
    if (!rc) rc = graph_build(&n->file, &n->g, &n->config, &st);
    if (!rc) rc = alloc_init(&n->alloc, b, ALLOC_GROW, 0, &st);
    if (!rc) rc = graph_init_params(&n->g, b, &n->alloc, 42, &st);
    if (!rc) rc = graph_allocate(&n->g, b, &n->alloc, 4, NULL, &st);
    if (!rc) rc = optimizer_prepare(&n->g, o, b, &n->alloc, &st);
    if (rc) report("net_open", &st);
    return rc;
}

static void net_close(Net *n) {
    graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

// The same pseudo-gradients into both nets, drawn from `seed`.
static void set_gradients(Net *a, Net *b, uint64_t seed) {
    Rng draw;
    rng_seed(&draw, seed);
    for (int i = 0; i < a->g.count; i++)
        for (int k = 0; k < a->g.layers[i]->param_count; k++) {
            Param *pa = &a->g.layers[i]->params[k], *pb = &b->g.layers[i]->params[k];
            if (pa->buffer) continue;
            size_t n = tensor_numel(&pa->grad);
            float *ga = tensor_f32(&pa->grad), *gb = tensor_f32(&pb->grad);
            for (size_t j = 0; j < n; j++) ga[j] = gb[j] = 2.0f * rng_uniform(&draw) - 1.0f;
        }
}

static void nets_agree(const char *what, const Net *a, const Net *b, int slots) {
    for (int i = 0; i < a->g.count; i++)
        for (int k = 0; k < a->g.layers[i]->param_count; k++) {
            const Param *pa = &a->g.layers[i]->params[k], *pb = &b->g.layers[i]->params[k];
            size_t n = tensor_numel(&pa->value);
            check_same_bits(what, pa->name, i, tensor_f32(&pa->value), tensor_f32(&pb->value), n);
            for (int s = 0; s < slots && !pa->buffer; s++)
                check_same_bits(what, "optimizer state", i, tensor_f32(&pa->state[s]),
                                tensor_f32(&pb->state[s]), n);
        }
}

// The CPU table's multi-tensor ops, counted: were net a below not to step through them,
// both nets would take the per-tensor path and agree whatever those ops compute.
static int multi_calls;

static int counted_sgd_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                             const SgdHyper *h, Status *st) {
    multi_calls++;
    return cpu_backend()->sgd_update_multi(b, tensors, count, h, st);
}

static int counted_adam_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                              const AdamHyper *h, Status *st) {
    multi_calls++;
    return cpu_backend()->adam_update_multi(b, tensors, count, h, st);
}

static int trained_tensors(const Graph *g) {
    int count = 0;
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++)
            count += !g->layers[i]->params[k].buffer;
    return count;
}

// Net a steps through the CPU table's multi-tensor ops (counted), net b through a copy
// without them (core/optimizer.c falls back to one call per tensor).
static void step_multi_matches_fallback(const char *what, OptimizerConfig o) {
    Net a, b;
    int rc = net_open(&a, &o);
    if (!rc) rc = net_open(&b, &o);
    if (!rc) {
        Backend counted = *cpu_backend(), fallback = *cpu_backend();
        counted.sgd_update_multi = counted_sgd_multi;
        counted.adam_update_multi = counted_adam_multi;
        fallback.sgd_update_multi = NULL;
        fallback.adam_update_multi = NULL;
        Status st;
        status_clear(&st);
        CHECK_INT_EQ(trained_tensors(&a.g), TRAINED);
        multi_calls = 0;
        for (int step = 1; step <= STEPS; step++) {
            set_gradients(&a, &b, 100 + (uint64_t)step);
            CHECK_INT_EQ(optimizer_step(&a.g, &o, &counted, step, &st), 0);
            CHECK_INT_EQ(optimizer_step(&b.g, &o, &fallback, step, &st), 0);
        }
        CHECK_INT_EQ(multi_calls, GROUPS * STEPS);
        nets_agree(what, &a, &b, optimizer_state_slots(&o));
    }
    net_close(&a);
    net_close(&b);
}

static int failing_adam_multi(const Backend *b, const OptimizerTensor *tensors, int count,
                              const AdamHyper *h, Status *st) {
    return status_fail(st, STATUS_RUNTIME_ERROR, "planted failure of %d tensors", count);
}

static int failing_adam(const Backend *b, const AdamUpdateTensors *t, const AdamHyper *h,
                        Status *st) {
    return status_fail(st, STATUS_RUNTIME_ERROR, "planted failure");
}

// A failed multi-tensor call names its first and last parameter (the first group: a full
// one); a failed per-tensor call names its one parameter.
static void failures_name_the_parameters(void) {
    OptimizerConfig o = {.kind = OPTIMIZER_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999,
                         .eps = 1e-8};
    Net n;
    if (!net_open(&n, &o)) {
        Backend broken = *cpu_backend();
        broken.adam_update_multi = failing_adam_multi;
        Status st;
        status_clear(&st);
        CHECK(optimizer_step(&n.g, &o, &broken, 1, &st) != 0);
        char text[2048];
        status_format(&st, text, sizeof text);
        CHECK(strstr(text, "update of parameters 'dense1.weight' to ") != NULL);
        char planted[64];
        snprintf(planted, sizeof planted, "planted failure of %d tensors", OPTIMIZER_UPDATE_GROUP);
        CHECK(strstr(text, planted) != NULL);
        broken.adam_update_multi = NULL;
        broken.adam_update = failing_adam;
        status_clear(&st);
        CHECK(optimizer_step(&n.g, &o, &broken, 1, &st) != 0);
        status_format(&st, text, sizeof text);
        CHECK(strstr(text, "update of parameter 'dense1.weight': planted failure") != NULL);
        if (test_failures) fprintf(stderr, "status was: %s", text);
    }
    net_close(&n);
}

int main(void) {
    rng_seed(&rng, 4242);
    // The cases call the CPU table's multi-tensor slots, which cpu_optimizer.c registers.
    const Backend *b = cpu_backend();
    if (!b->sgd_update_multi || !b->adam_update_multi) {
        fprintf(stderr, "test_optimizer_multi: the CPU table has no %s\n",
                b->sgd_update_multi ? "adam_update_multi" : "sgd_update_multi");
        return 1;
    }
    multi_matches_per_tensor("sgd", 0, (SgdHyper){.lr = 0.1f}, (AdamHyper){0});
    multi_matches_per_tensor("sgd_momentum", 0, (SgdHyper){.lr = 0.05f, .momentum = 0.9f},
                             (AdamHyper){0});
    multi_matches_per_tensor("sgd_nesterov_weight_decay", 0,
                             (SgdHyper){.lr = 0.05f, .momentum = 0.9f, .weight_decay = 0.01f,
                                        .nesterov = 1},
                             (AdamHyper){0});
    multi_matches_per_tensor("adam", 1, (SgdHyper){0},
                             (AdamHyper){.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
                                         .eps = 1e-8f, .weight_decay = 0.01f});
    multi_matches_per_tensor("adamw", 1, (SgdHyper){0},
                             (AdamHyper){.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f,
                                         .eps = 1e-8f, .weight_decay = 0.01f,
                                         .decoupled_weight_decay = 1});
    step_multi_matches_fallback("step adam", (OptimizerConfig){.kind = OPTIMIZER_ADAM,
                                                               .lr = 0.01, .beta1 = 0.9,
                                                               .beta2 = 0.999, .eps = 1e-8});
    step_multi_matches_fallback("step adamw",
                                (OptimizerConfig){.kind = OPTIMIZER_ADAMW, .lr = 0.01,
                                                  .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                                                  .weight_decay = 0.05});
    step_multi_matches_fallback("step sgd", (OptimizerConfig){.kind = OPTIMIZER_SGD, .lr = 0.1});
    step_multi_matches_fallback("step sgd nesterov",
                                (OptimizerConfig){.kind = OPTIMIZER_SGD, .lr = 0.05,
                                                  .momentum = 0.9, .nesterov = 1,
                                                  .weight_decay = 0.01});
    failures_name_the_parameters();
    return test_exit_code("test_optimizer_multi");
}
