// NHWC images between convolutions (graph_set_layouts) change how the bytes lie, not what
// a step computes: on the CPU every conv and pool op runs its NCHW code between
// transposes, batchnorm visits each channel's values in the same order, the to_nhwc after
// a several-channel input and flatten before the dense layer copy values without touching
// them, so a model trained a few steps with NHWC must end with the bits it ends with in
// NCHW. Also pinned: which layers the pass lays out NHWC (the trunk from the input to its
// flatten or global_avgpool; a reshape reader or a model without a convolution keeps
// NCHW), where the conversions sit (one per several-channel input, after its bf16 cast,
// none when no layer stays NHWC), that calling it again, or graph_set_storage after it,
// takes them out, and that flatten then owns a reordered copy instead of a view.
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

// Three input channels: a to_nhwc converts them for the convolution.
static const char *const rgb_text =
    "input shape=3x8x8\n"
    "conv2d filters=4 kernel=3 pad=same act=relu\n"
    "flatten\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

// Two convolutions read the input: they share one conversion.
static const char *const rgb_branches_text =
    "input shape=3x8x8 name=image\n"
    "conv2d filters=4 kernel=3 pad=same name=left\n"
    "conv2d filters=4 kernel=1 from=image name=right\n"
    "add from=left,right act=relu\n"
    "global_avgpool\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

// One branch's reshape keeps its convolution NCHW: that convolution reads the input as it
// is, the other one the conversion.
static const char *const rgb_mixed_text =
    "input shape=3x6x6 name=image\n"
    "conv2d filters=2 kernel=3 pad=same name=trunk\n"
    "flatten name=trunk_flat\n"
    "conv2d filters=2 kernel=3 pad=same from=image name=side\n"
    "reshape shape=72 name=side_flat\n"
    "add from=trunk_flat,side_flat\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

// The convolution after three channels cannot stay NHWC (reshape reads NCHW): no
// conversion is left.
static const char *const rgb_reshape_text =
    "input shape=3x6x6\n"
    "conv2d filters=2 kernel=3 pad=same act=relu\n"
    "reshape shape=72\n"
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

// Opens the net with its activations stored as `storage`, layouts chosen for `nhwc` and
// the activations reallocated.
static int open_net(Net *n, const char *label, const char *text, DType storage, int nhwc) {
    if (net_open_case(n, &net_setup, label, text, BATCH, BATCH, 23)) return -1;
    Status st;
    status_clear(&st);
    if (graph_set_storage(&n->g, storage, &st) || graph_set_layouts(&n->g, nhwc, &st) ||
        graph_allocate(&n->g, n->b, &n->alloc, BATCH, NULL, &st)) {
        report_status(label, &st);
        test_failures++;
        net_close(n);
        return -1;
    }
    return 0;
}

static int count_kind(const Graph *g, const char *kind) {
    int count = 0;
    for (int i = 0; i < g->count; i++) count += strcmp(g->layers[i]->kind->name, kind) == 0;
    return count;
}

// What a step computes with NHWC is what it computes with NCHW, and `expect_nhwc` layers,
// `expect_conversions` of them to_nhwc, went NHWC.
static void training_matches_nchw(const char *label, const char *text, DType storage,
                                  int expect_nhwc, int expect_conversions) {
    Net nhwc, nchw;
    if (open_net(&nhwc, label, text, storage, 1)) return;
    if (open_net(&nchw, label, text, storage, 0)) {
        net_close(&nhwc);
        return;
    }
    if (graph_nhwc_layers(&nhwc.g) != expect_nhwc || graph_nhwc_layers(&nchw.g) != 0) {
        fprintf(stderr, "%s: %d layers NHWC (expected %d), %d with NHWC off\n", label,
                graph_nhwc_layers(&nhwc.g), expect_nhwc, graph_nhwc_layers(&nchw.g));
        test_failures++;
    }
    int conversions = count_kind(&nhwc.g, "to_nhwc");
    if (conversions != expect_conversions || count_kind(&nchw.g, "to_nhwc") != 0 ||
        nhwc.g.count != nchw.g.count + conversions) {
        fprintf(stderr, "%s: %d to_nhwc (expected %d) and %d layers in NHWC, %d to_nhwc and "
                "%d layers in NCHW\n", label, conversions, expect_conversions, nhwc.g.count,
                count_kind(&nchw.g, "to_nhwc"), nchw.g.count);
        test_failures++;
    }
    net_train_alike(&nhwc, &nchw, STEPS, label, "in NHWC", "in NCHW");
    net_close(&nhwc);
    net_close(&nchw);
}

static void training_matches_nchw_bit_for_bit(const char *label, const char *text,
                                              int expect_nhwc) {
    training_matches_nchw(label, text, DTYPE_F32, expect_nhwc, 0);
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
    if (open_net(&n, "flatten", lenet_text, DTYPE_F32, 1)) return;
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
    CHECK_INT_EQ(graph_set_layouts(&n.g, 0, &st), 0);
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

static const Layer *find_named(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    return NULL;
}

// The conversion sits after what it converts: the input in f32, the input's cast under
// bf16 (half the bytes); every NHWC convolution reads it, an NCHW one the input itself.
static void conversion_reads_the_model_input(void) {
    Net n;
    if (open_net(&n, "rgb bf16", rgb_text, DTYPE_BF16, 1)) return;
    const Layer *conversion = find(&n.g, "to_nhwc");
    CHECK(conversion != NULL);
    if (conversion) {
        char name[LAYER_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s:bf16:nhwc", n.g.input->name);
        CHECK(strcmp(conversion->name, name) == 0);
        CHECK(strcmp(conversion->inputs[0]->kind->name, "cast") == 0);
        CHECK(conversion->inputs[0]->inputs[0] == n.g.input);
        CHECK(conversion->out_dtype == DTYPE_BF16);
        CHECK(conversion->layout == LAYOUT_NHWC);
        CHECK(!conversion->input_needs_grad[0]);
        CHECK(find(&n.g, "conv2d")->inputs[0] == conversion);
    }
    net_close(&n);
    if (open_net(&n, "rgb mixed", rgb_mixed_text, DTYPE_F32, 1)) return;
    conversion = find(&n.g, "to_nhwc");
    const Layer *trunk = find_named(&n.g, "trunk"), *side = find_named(&n.g, "side");
    CHECK(conversion && trunk && side);
    if (conversion && trunk && side) {
        CHECK(trunk->inputs[0] == conversion && trunk->layout == LAYOUT_NHWC);
        CHECK(side->inputs[0] == n.g.input && side->layout == LAYOUT_NCHW);
    }
    net_close(&n);
}

// graph_set_layouts again, with either value, first takes out the conversion it put in;
// graph_set_storage takes it out too (its cast may go) and lays the graph out NCHW.
static void conversions_come_out_again(void) {
    Net n;
    if (open_net(&n, "rgb again", rgb_text, DTYPE_F32, 0)) return;
    int nchw_count = n.g.count;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(graph_set_layouts(&n.g, 1, &st), 0);
    CHECK_INT_EQ(graph_set_layouts(&n.g, 1, &st), 0);
    CHECK_INT_EQ(count_kind(&n.g, "to_nhwc"), 1);
    CHECK_INT_EQ(n.g.count, nchw_count + 1);
    CHECK_INT_EQ(graph_set_layouts(&n.g, 0, &st), 0);
    CHECK_INT_EQ(count_kind(&n.g, "to_nhwc"), 0);
    CHECK_INT_EQ(n.g.count, nchw_count);
    CHECK_INT_EQ(graph_nhwc_layers(&n.g), 0);
    CHECK_INT_EQ(graph_set_layouts(&n.g, 1, &st), 0);
    CHECK_INT_EQ(graph_set_storage(&n.g, DTYPE_BF16, &st), 0);
    CHECK_INT_EQ(count_kind(&n.g, "to_nhwc"), 0);
    CHECK_INT_EQ(graph_nhwc_layers(&n.g), 0);
    CHECK_INT_EQ(count_kind(&n.g, "cast"), 2);  // the input's, the logits'
    CHECK_INT_EQ(n.g.count, nchw_count + 2);
    net_close(&n);
}

// The memory plan counts the conversion's output as it counts a cast's: one batch of the
// input's images.
static void conversion_is_planned(void) {
    Net n;
    if (open_net(&n, "rgb plan", rgb_text, DTYPE_F32, 1)) return;
    Status st;
    status_clear(&st);
    MemoryPlanOptions options = {.batch = BATCH};
    MemoryPlan plan;
    if (memory_plan(&n.g, n.b, &options, &plan, &st)) {
        report_status("memory_plan", &st);
        test_failures++;
        net_close(&n);
        return;
    }
    int rows = 0;
    for (int i = 0; i < plan.layer_count; i++) {
        if (strcmp(plan.layers[i].kind, "to_nhwc") != 0) continue;
        rows++;
        CHECK_INT_EQ((long)plan.layers[i].activations,
                     (long)layer_batch_tensor_bytes(BATCH, &n.g.input->out_shape,
                                                    sizeof(float)));
        CHECK_INT_EQ((long)plan.layers[i].activation_gradients, 0);
    }
    CHECK_INT_EQ(rows, 1);
    memory_plan_free(&plan);
    net_close(&n);
}

// Backward converts the gradient back into NCHW, written or added to as
// input_grad_accumulate says. No model wants the data's gradient, so the flags are set
// here by hand.
static void conversion_backward_converts_the_gradient_back(void) {
    Net n;
    if (open_net(&n, "rgb backward", rgb_text, DTYPE_F32, 1)) return;
    int at = net_layer_index(&n, "input1:nhwc");
    CHECK(at >= 0);
    if (at < 0) {
        net_close(&n);
        return;
    }
    Layer *conversion = n.g.layers[at];
    conversion->needs_grad = 1;
    conversion->inputs[0]->needs_grad = 1;
    conversion->input_needs_grad[0] = 1;
    Status st;
    status_clear(&st);
    if (graph_allocate(&n.g, n.b, &n.alloc, BATCH, NULL, &st)) {
        report_status("allocate gradients", &st);
        test_failures++;
        net_close(&n);
        return;
    }
    int channels = conversion->out_shape.dims[0];
    int pixels = conversion->out_shape.dims[1] * conversion->out_shape.dims[2];
    float *dy = tensor_f32(&conversion->grad), *dx = tensor_f32(&conversion->inputs[0]->grad);
    for (int i = 0; i < BATCH * channels * pixels; i++) dy[i] = (float)i;
    LayerContext ctx = net_context(&n);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        for (int i = 0; i < BATCH * channels * pixels; i++) dx[i] = 0.5f;
        conversion->input_grad_accumulate[0] = accumulate;
        CHECK_INT_EQ(conversion->kind->backward(conversion, &ctx, &st), 0);
        int wrong = 0;
        for (int s = 0; s < BATCH; s++)
            for (int c = 0; c < channels; c++)
                for (int p = 0; p < pixels; p++) {
                    float want = dy[(s * pixels + p) * channels + c] + (accumulate ? 0.5f : 0.0f);
                    wrong += dx[(s * channels + c) * pixels + p] != want;
                }
        if (wrong) {
            fprintf(stderr, "to_nhwc backward (accumulate %d): %d of %d values wrong\n",
                    accumulate, wrong, BATCH * channels * pixels);
            test_failures++;
        }
    }
    net_close(&n);
}

int main(void) {
    // conv2d, its act, maxpool, conv2d, its act, avgpool
    training_matches_nchw_bit_for_bit("lenet", lenet_text, 6);
    // stem conv, bn, relu, pool1, 2 x (conv, bn), gelu, add and its relu
    training_matches_nchw_bit_for_bit("resnet", resnet_text, 11);
    // to_nhwc, conv2d, its act
    training_matches_nchw("rgb", rgb_text, DTYPE_F32, 3, 1);
    training_matches_nchw("rgb bf16", rgb_text, DTYPE_BF16, 3, 1);
    // to_nhwc, left, right, add, its act
    training_matches_nchw("rgb branches", rgb_branches_text, DTYPE_F32, 5, 1);
    // to_nhwc, trunk
    training_matches_nchw("rgb mixed", rgb_mixed_text, DTYPE_F32, 2, 1);
    training_matches_nchw("rgb reshape", rgb_reshape_text, DTYPE_F32, 0, 0);
    training_matches_nchw_bit_for_bit("reshape", reshape_text, 0);
    training_matches_nchw_bit_for_bit("mlp", mlp_text, 0);
    flatten_owns_a_copy_only_after_nhwc();
    conversion_reads_the_model_input();
    conversions_come_out_again();
    conversion_is_planned();
    conversion_backward_converts_the_gradient_back();
    return test_exit_code("test_layouts");
}
