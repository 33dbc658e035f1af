// Fusing act= activations into their dense/conv2d layer (graph_fuse_activations) changes
// how a step runs, not what it computes: on the CPU the fused ops are the unfused ones
// composed, and the activation's backward reads its output where it read its input, so a
// model trained a few steps with fusion on must end with the same bits as with it off.
// Also pinned: which layers fuse (not gelu, whose derivative needs its input; not a layer
// whose output another layer reads), that the pre-activation is neither allocated nor
// counted, and that `train fuse=false` turns it off.
#include "gradcheck_net.h"

#include "core/memory_plan.h"

static const NetSetup net_setup = {.model_name = "fusion.model", .seed_mul = 31,
                                   .seed_add = 5, .ctx_seed = 99};

// Every act= the fused ops take, a gelu that must stay unfused, and dropout after a fused
// layer (its mask must not move).
static const char *const mlp_text =
    "input shape=20\n"
    "dense units=16 act=relu\n"
    "dense units=12 act=tanh\n"
    "dropout rate=0.25\n"
    "dense units=10 act=leaky_relu\n"
    "dense units=9 act=gelu\n"
    "dense units=8 bias=false act=sigmoid\n"
    "dense units=5\n"
    "loss softmax_cross_entropy\n";

static const char *const lenet_text =
    "input shape=1x12x12\n"
    "conv2d filters=4 kernel=5 pad=same act=relu\n"
    "maxpool size=2\n"
    "conv2d filters=6 kernel=3 pad=same act=tanh\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense units=16 act=relu\n"
    "dropout rate=0.5\n"
    "dense units=5\n"
    "loss softmax_cross_entropy\n";

enum { BATCH = 8, STEPS = 4 };

static int count_fused(const Graph *g) {
    int fused = 0;
    for (int i = 0; i < g->count; i++) fused += g->layers[i]->fused_activation != NULL;
    return fused;
}

// Opens the net and, for the unfused run, turns fusion off and reallocates.
static int open_net(Net *n, const char *label, const char *text, int fuse) {
    if (net_open_case(n, &net_setup, label, text, BATCH, BATCH, 17)) return -1;
    if (fuse) return 0;
    graph_fuse_activations(&n->g, 0);
    Status st;
    status_clear(&st);
    if (graph_allocate(&n->g, n->b, &n->alloc, BATCH, NULL, &st)) {
        report_status("reallocate unfused", &st);
        test_failures++;
        net_close(n);
        return -1;
    }
    return 0;
}

static void training_matches_unfused_bit_for_bit(const char *label, const char *text,
                                                 int expect_fused) {
    Net fused, unfused;
    if (open_net(&fused, label, text, 1)) return;
    if (open_net(&unfused, label, text, 0)) {
        net_close(&fused);
        return;
    }
    if (count_fused(&fused.g) != expect_fused || count_fused(&unfused.g) != 0) {
        fprintf(stderr, "%s: %d layers fused (expected %d), %d with fusion off\n", label,
                count_fused(&fused.g), expect_fused, count_fused(&unfused.g));
        test_failures++;
    }
    net_train_alike(&fused, &unfused, STEPS, label, "with fusion on", "off");
    net_close(&fused);
    net_close(&unfused);
}

// gelu stays unfused (its backward needs x); a fused layer keeps no output and plans none.
static void fused_layers_keep_no_pre_activation(void) {
    Net n;
    if (net_open_case(&n, &net_setup, "memory", mlp_text, BATCH, BATCH, 3)) return;
    Status st;
    status_clear(&st);
    MemoryPlanOptions options = {.batch = BATCH};
    MemoryPlan fused_plan, unfused_plan;
    int rc = memory_plan(&n.g, n.b, &options, &fused_plan, &st);
    for (int i = 0; i < n.g.count; i++) {
        const Layer *l = n.g.layers[i];
        if (strcmp(l->kind->name, "dense") != 0) continue;
        int is_gelu = l->statement_output && strcmp(l->statement_output->kind->variant(
                                                 l->statement_output), "gelu") == 0;
        int expect = l->statement_output && !is_gelu;
        if ((l->fused_activation != NULL) != expect || (expect && l->output.data) ||
            (expect && layer_activation_bytes(l, 1) != shape_numel(&l->out_shape) * sizeof(float))) {
            fprintf(stderr, "memory: layer %s: fused %d (expected %d), output %p, %zu bytes\n",
                    l->name, l->fused_activation != NULL, expect, l->output.data,
                    layer_activation_bytes(l, 1));
            test_failures++;
        }
    }
    graph_fuse_activations(&n.g, 0);
    if (!rc) rc = memory_plan(&n.g, n.b, &options, &unfused_plan, &st);
    if (rc) {
        report_status("memory_plan", &st);
        test_failures++;
    } else {
        // The four fused pre-activations: 16 + 12 + 10 + 8 floats per sample.
        size_t saved = 0;
        int units[] = {16, 12, 10, 8};
        for (int k = 0; k < 4; k++) {
            Shape s = shape_make1(units[k]);
            saved += layer_batch_tensor_bytes(BATCH, &s, sizeof(float));
        }
        CHECK_INT_EQ((long)(unfused_plan.activations - fused_plan.activations), (long)saved);
        memory_plan_free(&fused_plan);
        memory_plan_free(&unfused_plan);
    }
    net_close(&n);
}

// `train fuse=false` in the model file leaves every layer unfused; graph_fuse_activations
// can still turn it on.
static void train_fuse_false_turns_fusion_off(void) {
    ModelFile f;
    Graph g;
    RunConfig config;
    Status st;
    status_clear(&st);
    const char *text = "input shape=4\ndense units=3 act=relu\ndense units=2\n"
                       "loss softmax_cross_entropy\ntrain batch=2 fuse=false\n";
    if (model_file_parse_text("fuse.model", text, &f, &st) || graph_build(&f, &g, &config, &st)) {
        report_status("build", &st);
        test_failures++;
        return;
    }
    CHECK_INT_EQ(config.train.no_fusion, 1);
    CHECK_INT_EQ(count_fused(&g), 0);
    CHECK_INT_EQ(graph_fuse_activations(&g, 1), 1);
    graph_free(&g);
    model_file_free(&f);
}

int main(void) {
    training_matches_unfused_bit_for_bit("mlp", mlp_text, 4);
    training_matches_unfused_bit_for_bit("lenet", lenet_text, 3);
    fused_layers_keep_no_pre_activation();
    train_fuse_false_turns_fusion_off();
    return test_exit_code("test_fusion");
}
