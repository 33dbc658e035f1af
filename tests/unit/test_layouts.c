// NHWC images between convolutions (graph_set_layouts) change how the bytes lie, not what
// a step computes: on the CPU every conv and pool op runs its NCHW code between
// transposes, batchnorm visits each channel's values in the same order, and flatten copies
// the images back into NCHW order for the dense layer, so a model trained a few steps with
// NHWC must end with the bits it ends with in NCHW. Also pinned: which layers the pass
// lays out NHWC (the trunk from a one-channel input to its flatten or global_avgpool; a
// several-channel input, a reshape reader or a model without a convolution keeps NCHW),
// and that flatten then owns a reordered copy instead of a view.
#include "gradcheck_net.h"

#include "core/memory_plan.h"

static const NetSetup net_setup = {.model_name = "layouts.model", .seed_mul = 41,
                                   .seed_add = 9, .ctx_seed = 77};

static const char *const lenet_text =
    "input shape=1x12x12\n"
    "conv2d filters=4 kernel=5 pad=same act=relu\n"
    "maxpool size=2\n"
    "conv2d filters=6 kernel=3 pad=same act=tanh\n"
    "avgpool size=2\n"
    "flatten\n"
    "dense units=16 act=relu\n"
    "dropout rate=0.5\n"
    "dense units=5\n"
    "loss softmax_cross_entropy\n";

// batchnorm over NHWC images, a residual add, overlapping max-pool windows, an unfused
// activation and global_avgpool ending the trunk.
static const char *const resnet_text =
    "input shape=1x10x10\n"
    "conv2d filters=6 kernel=3 pad=same bias=false name=stem_conv\n"
    "batchnorm act=relu name=stem\n"
    "maxpool size=3 stride=2 pad=1 name=pool1\n"
    "conv2d filters=6 kernel=3 pad=same bias=false name=b1_conv1\n"
    "batchnorm name=b1_bn1\n"
    "act gelu name=b1_gelu\n"
    "conv2d filters=6 kernel=3 pad=same bias=false stride=1 name=b1_conv2\n"
    "batchnorm name=b1_bn2\n"
    "add from=pool1,b1_bn2 act=relu name=b1\n"
    "global_avgpool\n"
    "dense units=4\n"
    "loss softmax_cross_entropy\n";

// Three input channels: nothing moves them into NHWC, so the model stays NCHW.
static const char *const rgb_text =
    "input shape=3x8x8\n"
    "conv2d filters=4 kernel=3 pad=same act=relu\n"
    "flatten\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

// reshape reads NCHW only: the convolution before it stays NCHW.
static const char *const reshape_text =
    "input shape=1x6x6\n"
    "conv2d filters=2 kernel=3 pad=same act=relu\n"
    "reshape shape=72\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

static const char *const mlp_text =
    "input shape=1x4x4\n"
    "flatten\n"
    "dense units=8 act=relu\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

enum { BATCH = 6, STEPS = 3 };

// Opens the net with layouts chosen for `nhwc` and its activations reallocated.
static int open_net(Net *n, const char *label, const char *text, int nhwc) {
    if (net_open_case(n, &net_setup, label, text, BATCH, BATCH, 23)) return -1;
    graph_set_layouts(&n->g, nhwc);
    Status st;
    status_clear(&st);
    if (graph_allocate(&n->g, n->b, &n->alloc, BATCH, NULL, &st)) {
        report_status("reallocate", &st);
        test_failures++;
        net_close(n);
        return -1;
    }
    return 0;
}

static void training_matches_nchw_bit_for_bit(const char *label, const char *text,
                                              int expect_nhwc) {
    Net nhwc, nchw;
    if (open_net(&nhwc, label, text, 1)) return;
    if (open_net(&nchw, label, text, 0)) {
        net_close(&nhwc);
        return;
    }
    if (graph_nhwc_layers(&nhwc.g) != expect_nhwc || graph_nhwc_layers(&nchw.g) != 0) {
        fprintf(stderr, "%s: %d layers NHWC (expected %d), %d with NHWC off\n", label,
                graph_nhwc_layers(&nhwc.g), expect_nhwc, graph_nhwc_layers(&nchw.g));
        test_failures++;
    }
    net_train_alike(&nhwc, &nchw, STEPS, label, "in NHWC", "in NCHW");
    net_close(&nhwc);
    net_close(&nchw);
}

static const Layer *find(const Graph *g, const char *kind) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->kind->name, kind) == 0) return g->layers[i];
    return NULL;
}

// After NHWC images flatten copies (its output is allocated and planned); in NCHW it is a
// view again.
static void flatten_owns_a_copy_only_after_nhwc(void) {
    Net n;
    if (open_net(&n, "flatten", lenet_text, 1)) return;
    const Layer *flatten = find(&n.g, "flatten");
    Status st;
    status_clear(&st);
    MemoryPlanOptions options = {.batch = BATCH};
    MemoryPlan with_copy, with_view;
    if (!flatten || memory_plan(&n.g, n.b, &options, &with_copy, &st)) {
        report_status("memory_plan", &st);
        test_failures++;
        net_close(&n);
        return;
    }
    CHECK(layer_reorders_input(flatten));
    CHECK(layer_owns_output(flatten));
    CHECK(flatten->output.data != NULL);
    CHECK(flatten->output.data != flatten->inputs[0]->output.data);
    graph_set_layouts(&n.g, 0);
    CHECK(!layer_reorders_input(flatten));
    CHECK(!layer_owns_output(flatten));
    if (memory_plan(&n.g, n.b, &options, &with_view, &st)) {
        report_status("memory_plan", &st);
        test_failures++;
    } else {
        // 6 channels x 3 x 3 after the average pool, per sample
        Shape copy = shape_make1(54);
        CHECK_INT_EQ((long)(with_copy.activations - with_view.activations),
                     (long)layer_batch_tensor_bytes(BATCH, &copy, sizeof(float)));
        memory_plan_free(&with_view);
    }
    memory_plan_free(&with_copy);
    net_close(&n);
}

int main(void) {
    // conv2d, its act, maxpool, conv2d, its act, avgpool
    training_matches_nchw_bit_for_bit("lenet", lenet_text, 6);
    // stem conv, bn, relu, pool1, 2 x (conv, bn), gelu, add and its relu
    training_matches_nchw_bit_for_bit("resnet", resnet_text, 11);
    training_matches_nchw_bit_for_bit("rgb", rgb_text, 0);
    training_matches_nchw_bit_for_bit("reshape", reshape_text, 0);
    training_matches_nchw_bit_for_bit("mlp", mlp_text, 0);
    flatten_owns_a_copy_only_after_nhwc();
    return test_exit_code("test_layouts");
}
