// The graph builder on real and small models: parameter counts, default and explicit
// names, from= wiring, act= expansion, the gradient plan, dataset validation, and a short
// training run that must learn a separable problem.
#include "check.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/train.h"

#include <stdlib.h>

static void report_status(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
}

// Builds a graph from text; on failure reports and returns nonzero (graph left empty).
static int build_text(const char *text, ModelFile *f, Graph *g, RunConfig *config) {
    Status st;
    status_clear(&st);
    memset(g, 0, sizeof *g);
    int rc = model_file_parse_text("test.model", text, f, &st);
    if (!rc) rc = graph_build(f, g, config, &st);
    if (rc) {
        report_status("build", &st);
        test_failures++;
    }
    return rc;
}

static Layer *layer_named(const Graph *g, const char *name) {
    for (int i = 0; i < g->count; i++)
        if (strcmp(g->layers[i]->name, name) == 0) return g->layers[i];
    fprintf(stderr, "no layer named '%s'\n", name);
    test_failures++;
    return NULL;
}

static void bundled_mlp_has_expected_layers_and_parameters(void) {
    Status st;
    status_clear(&st);
    ModelFile f;
    Graph g;
    RunConfig config;
    const char *path = TRAINER_SOURCE_DIR "/models/mlp.model";
    if (model_file_read(path, &f, &st) || graph_build(&f, &g, &config, &st)) {
        report_status(path, &st);
        test_failures++;
        model_file_free(&f);
        return;
    }
    // 784*256+256 + 256*128+128 + 128*10+10
    CHECK_INT_EQ(graph_parameter_count(&g), 235146);
    CHECK_INT_EQ(graph_classes(&g), 10);
    static const char *const names[] = {"input1", "dense1", "dense1.act", "dense2",
                                        "dense2.act", "dense3", "loss1"};
    static const char *const kinds[] = {"input", "dense", "act", "dense", "act", "dense",
                                        "softmax_cross_entropy"};
    CHECK_INT_EQ(g.count, 7);
    for (int i = 0; i < g.count && i < 7; i++) {
        if (strcmp(g.layers[i]->name, names[i]) != 0 ||
            strcmp(g.layers[i]->kind->name, kinds[i]) != 0) {
            fprintf(stderr, "mlp layer %d: '%s' (%s), want '%s' (%s)\n", i, g.layers[i]->name,
                    g.layers[i]->kind->name, names[i], kinds[i]);
            test_failures++;
        }
    }
    CHECK(g.input == g.layers[0]);
    CHECK(g.loss == g.layers[g.count - 1]);
    // Each layer takes the previous one's output, the activations included.
    for (int i = 1; i < g.count; i++) {
        CHECK_INT_EQ(g.layers[i]->input_count, 1);
        CHECK(g.layers[i]->inputs[0] == g.layers[i - 1]);
    }
    CHECK(strcmp(g.layers[1]->params[0].name, "dense1.weight") == 0);
    CHECK(strcmp(g.layers[1]->params[1].name, "dense1.bias") == 0);
    CHECK_INT_EQ(g.layers[1]->params[0].shape.dims[0], 256);
    CHECK_INT_EQ(g.layers[1]->params[0].shape.dims[1], 784);
    CHECK_INT_EQ(config.optimizer.kind, OPTIMIZER_ADAM);
    CHECK_NEAR(config.optimizer.lr, 0.001, 1e-12);
    CHECK_INT_EQ(config.train.batch, 128);
    CHECK_INT_EQ(config.train.epochs, 10);
    CHECK_INT_EQ(config.train.seed, 1);
    graph_free(&g);
    model_file_free(&f);
}

static void names_and_from_wire_layers(void) {
    ModelFile f;
    Graph g;
    // Default names count per statement word (`act relu` counts as relu); name= overrides;
    // from= accepts explicit and default names. Every layer's output is read by the next,
    // so no branch is left dangling.
    if (build_text("input shape=4 name=x\n"
                   "dense units=6 name=h\n"
                   "relu\n"
                   "relu\n"
                   "act relu\n"
                   "dense units=5 from=relu3\n"
                   "dense units=3 from=dense1 name=head\n"
                   "dense units=2 from=head\n"
                   "loss mse\n",
                   &f, &g, NULL)) {
        model_file_free(&f);
        return;
    }
    static const char *const names[] = {"x", "h", "relu1", "relu2", "relu3", "dense1", "head",
                                        "dense2", "loss1"};
    CHECK_INT_EQ(g.count, 9);
    for (int i = 0; i < g.count && i < 9; i++) {
        if (strcmp(g.layers[i]->name, names[i]) != 0) {
            fprintf(stderr, "layer %d is named '%s', want '%s'\n", i, g.layers[i]->name, names[i]);
            test_failures++;
        }
        if (i > 0) CHECK(g.layers[i]->inputs[0] == g.layers[i - 1]);
    }
    Layer *head = layer_named(&g, "head");
    if (head) {
        CHECK_INT_EQ(head->params[0].shape.dims[0], 3);
        CHECK_INT_EQ(head->params[0].shape.dims[1], 5);
        CHECK(strcmp(head->params[0].name, "head.weight") == 0);
        CHECK(strcmp(head->params[1].name, "head.bias") == 0);
    }
    CHECK_INT_EQ(graph_classes(&g), 2);
    graph_free(&g);
    model_file_free(&f);
}

// A default name is the first of word1, word2, ... that no layer before it holds, name=
// taking numbers too; the search resumes where the last one stopped (checkpoints store
// tensors under these names, so they must not change with how they are found).
static void default_names_pass_numbers_taken_by_name(void) {
    ModelFile f;
    Graph g;
    if (build_text("input shape=4\n"
                   "dense units=4\n"
                   "dense units=4 name=dense3\n"
                   "dense units=4\n"
                   "dense units=4\n"
                   "dense units=4 name=dense6\n"
                   "dense units=4\n"
                   "dense units=2\n"
                   "loss mse\n",
                   &f, &g, NULL)) {
        model_file_free(&f);
        return;
    }
    static const char *const names[] = {"input1", "dense1", "dense3", "dense2", "dense4",
                                        "dense6", "dense5", "dense7", "loss1"};
    CHECK_INT_EQ(g.count, 9);
    for (int i = 0; i < g.count && i < 9; i++)
        if (strcmp(g.layers[i]->name, names[i]) != 0) {
            fprintf(stderr, "layer %d is named '%s', want '%s'\n", i, g.layers[i]->name, names[i]);
            test_failures++;
        }
    graph_free(&g);
    model_file_free(&f);
}

// `act=` inserts an activation layer NAME.act after its owner; from=NAME then refers to
// the activation's output, since that is what the statement produces.
static void act_key_inserts_activation_layer(void) {
    ModelFile f;
    Graph g;
    if (build_text("input shape=4\n"
                   "dense units=6 act=relu name=h\n"
                   "dense units=5 from=h act=sigmoid\n"
                   "dense units=3\n"
                   "loss softmax_cross_entropy\n",
                   &f, &g, NULL)) {
        model_file_free(&f);
        return;
    }
    CHECK_INT_EQ(g.count, 7);
    Layer *h = layer_named(&g, "h"), *h_act = layer_named(&g, "h.act");
    Layer *d1 = layer_named(&g, "dense1"), *d1_act = layer_named(&g, "dense1.act");
    Layer *d2 = layer_named(&g, "dense2");
    if (h && h_act && d1 && d1_act && d2) {
        CHECK(strcmp(h_act->kind->name, "act") == 0);
        CHECK(h_act->inputs[0] == h);
        CHECK(h->statement_output == h_act);
        CHECK(d1->inputs[0] == h_act);   // from=h means h's statement output: h.act
        CHECK(d1_act->inputs[0] == d1);
        CHECK(d2->inputs[0] == d1_act);  // the next statement reads the activation
        CHECK(g.loss->inputs[0] == d2);
        CHECK_INT_EQ(h_act->out_shape.dims[0], 6);
        CHECK_INT_EQ(h_act->param_count, 0);
        CHECK_INT_EQ(h_act->line, 2);    // errors point at the statement with act=
    }
    graph_free(&g);
    model_file_free(&f);

    // act=none / act=linear add nothing.
    if (!build_text("input shape=4\ndense units=3 act=none\nloss mse\n", &f, &g, NULL)) {
        CHECK_INT_EQ(g.count, 3);
        graph_free(&g);
    }
    model_file_free(&f);
}

static void plan_gradients_skips_the_input_and_its_views(void) {
    ModelFile f;
    Graph g;
    if (build_text("input shape=1x4x4\nflatten\ndense units=5 act=tanh\ndropout rate=0.2\n"
                   "dense units=3\nloss softmax_cross_entropy\n",
                   &f, &g, NULL)) {
        model_file_free(&f);
        return;
    }
    Layer *input = g.layers[0], *flatten = g.layers[1];
    CHECK(flatten->inputs[0] == input);
    // Nobody needs d loss / d input: the first consumer must not compute it.
    CHECK_INT_EQ(flatten->input_needs_grad[0], 0);
    CHECK_INT_EQ(input->needs_grad, 0);
    // Nor d loss / d flatten: no trainable parameter lies before it, so the first dense
    // layer skips its dx GEMM.
    CHECK_INT_EQ(g.layers[2]->input_needs_grad[0], 0);
    CHECK_INT_EQ(flatten->needs_grad, 0);
    // Every later layer passes a gradient back to its producer, written (not added).
    for (int i = 3; i < g.count; i++) {
        const Layer *l = g.layers[i];
        if (!l->input_needs_grad[0] || l->input_grad_accumulate[0]) {
            fprintf(stderr, "layer '%s': input_needs_grad %d, input_grad_accumulate %d; "
                    "want 1, 0\n", l->name, l->input_needs_grad[0], l->input_grad_accumulate[0]);
            test_failures++;
        }
        CHECK_INT_EQ(l->inputs[0]->needs_grad, 1);
    }
    // The loss has no consumer, so nothing needs its gradient.
    CHECK_INT_EQ(g.loss->needs_grad, 0);
    // Activation memory per sample: outputs plus gradients where needed.
    CHECK_INT_EQ(layer_activation_bytes(input, 1), 16 * sizeof(float));
    CHECK_INT_EQ(layer_activation_bytes(flatten, 1), 0);  // a view, and no gradient
    CHECK_INT_EQ(layer_activation_bytes(flatten, 0), 0);
    graph_free(&g);
    model_file_free(&f);
}

static Dataset shape_only_dataset(int channels, int height, int width, int label_max) {
    Dataset ds = {0};
    snprintf(ds.source, sizeof ds.source, "synthetic");
    ds.channels = channels;
    ds.height = height;
    ds.width = width;
    ds.label_max = label_max;
    return ds;
}

static void check_dataset_matches_shapes_and_labels(void) {
    Status st;
    ModelFile f;
    Graph g;
    // A 784-vector model takes 1x28x28 images flattened.
    if (!build_text("input shape=784\ndense units=10\nloss softmax_cross_entropy\n", &f, &g,
                    NULL)) {
        Dataset mnist = shape_only_dataset(1, 28, 28, 9);
        status_clear(&st);
        CHECK_INT_EQ(graph_check_dataset(&g, &mnist, "mnist train", &st), 0);
        Dataset cifar = shape_only_dataset(3, 32, 32, 9);
        CHECK_INT_EQ(graph_check_dataset(&g, &cifar, "cifar train", &st), STATUS_BAD_INPUT);
        graph_free(&g);
    }
    model_file_free(&f);

    if (build_text("input shape=1x28x28\nflatten\ndense units=10 name=scores\n"
                   "loss softmax_cross_entropy\n",
                   &f, &g, NULL)) {
        model_file_free(&f);
        return;
    }
    Dataset fashion = shape_only_dataset(1, 28, 28, 9);
    status_clear(&st);
    CHECK_INT_EQ(graph_check_dataset(&g, &fashion, "fashion-mnist train", &st), 0);

    // Same number of values would not do for an image input: the shape must match.
    Dataset big = shape_only_dataset(1, 32, 32, 9);
    status_clear(&st);
    CHECK_INT_EQ(graph_check_dataset(&g, &big, "padded train", &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "1x28x28");
    CHECK_CONTAINS(st.message, "1x32x32");
    CHECK_CONTAINS(st.message, "padded train");
    CHECK_CONTAINS(st.hint, "shape=1x32x32");
    CHECK_CONTAINS(st.file, "test.model");
    CHECK_INT_EQ(st.line, 1);

    // An image input needs the image shape, not only the same number of values.
    Dataset reshaped = shape_only_dataset(4, 14, 14, 9);
    status_clear(&st);
    CHECK_INT_EQ(graph_check_dataset(&g, &reshaped, "reshaped train", &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "4x14x14");

    // Labels 0..10 need 11 class scores; the model has 10.
    Dataset eleven = shape_only_dataset(1, 28, 28, 10);
    status_clear(&st);
    CHECK_INT_EQ(graph_check_dataset(&g, &eleven, "eleven-class train", &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "scores");
    CHECK_CONTAINS(st.message, "up to 10");
    CHECK_CONTAINS(st.message, "gives 10 class scores");
    CHECK_CONTAINS(st.message, "eleven-class train");
    CHECK_CONTAINS(st.hint, "units=11");
    CHECK_INT_EQ(st.line, 3);
    graph_free(&g);
    model_file_free(&f);
}

// ---- end to end ---------------------------------------------------------------------------

enum { SAMPLES = 200, SIDE = 4 };

// Class 0 is bright on the left half, class 1 on the right; noise on top, so the two
// classes are linearly separable but not identical within a class.
static Dataset separable_dataset(void) {
    Dataset ds = shape_only_dataset(1, SIDE, SIDE, 1);
    ds.count = SAMPLES;
    ds.images = malloc((size_t)SAMPLES * SIDE * SIDE);
    ds.labels = malloc(SAMPLES);
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < SAMPLES; i++) {
        int label = (int)rng_below(&rng, 2);
        ds.labels[i] = (uint8_t)label;
        for (int y = 0; y < SIDE; y++)
            for (int x = 0; x < SIDE; x++) {
                int bright = (x < SIDE / 2) == (label == 0);
                int base = bright ? 180 : 60;
                ds.images[i * SIDE * SIDE + y * SIDE + x] =
                    (uint8_t)(base + (int)rng_below(&rng, 60) - 30);
            }
    }
    return ds;
}

typedef struct EpochLog {
    int epochs_seen;
    double last_train_accuracy;
    double first_train_loss, last_train_loss;
} EpochLog;

static int record_epoch(void *user, const EpochReport *report, Graph *g, Device *d, Status *st) {
    EpochLog *log = user;
    if (log->epochs_seen++ == 0) log->first_train_loss = report->train_loss;
    log->last_train_loss = report->train_loss;
    log->last_train_accuracy = report->train_accuracy;
    return 0;
}

static void training_learns_a_separable_problem(void) {
    Status st;
    status_clear(&st);
    ModelFile f;
    Graph g;
    RunConfig config;
    if (build_text("input shape=1x4x4\nflatten\ndense units=8 act=relu\ndense units=2\n"
                   "loss softmax_cross_entropy\noptimizer adam lr=0.01\n"
                   "train batch=20 epochs=8 seed=3\n",
                   &f, &g, &config)) {
        model_file_free(&f);
        return;
    }
    Dataset ds = separable_dataset();
    Device d;
    char notice[256];
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    if (device_open(&options, &d, notice, sizeof notice, &st)) {
        report_status("device_open", &st);
        test_failures++;
        graph_free(&g);
        model_file_free(&f);
        dataset_free(&ds);
        return;
    }
    CHECK(strcmp(d.name, "cpu") == 0);
    CHECK_INT_EQ(graph_check_dataset(&g, &ds, "synthetic train", &st), 0);
    CHECK_INT_EQ(graph_init_params(&g, d.backend, &d.alloc, (uint64_t)config.train.seed, &st), 0);

    // Without hooks first (they may be NULL), then with one that records each epoch.
    int interrupted = -1;
    int rc = train_model(&g, &config, &d, &ds, NULL, NULL, &interrupted, &st);
    if (rc) report_status("train_model", &st);
    CHECK_INT_EQ(rc, 0);
    CHECK_INT_EQ(interrupted, 0);
    EvalResult eval = {0};
    rc = evaluate_model(&g, &config, &d, &ds, 50, &eval, &st);
    CHECK_INT_EQ(rc, 0);
    CHECK_INT_EQ(eval.samples, SAMPLES);
    if (!(eval.accuracy > 0.9)) {
        fprintf(stderr, "after training: accuracy %.3f (loss %.4f), want > 0.9\n", eval.accuracy,
                eval.loss);
        test_failures++;
    }

    EpochLog log = {0};
    TrainHooks hooks = {.user = &log, .on_epoch = record_epoch};
    config.train.epochs = 2;
    rc = train_model(&g, &config, &d, &ds, &ds, &hooks, NULL, &st);
    if (rc) report_status("train_model with hooks", &st);
    CHECK_INT_EQ(rc, 0);
    CHECK_INT_EQ(log.epochs_seen, 2);
    if (!(log.last_train_accuracy > 0.9)) {
        fprintf(stderr, "epoch report: train accuracy %.3f (loss %.4f), want > 0.9\n",
                log.last_train_accuracy, log.last_train_loss);
        test_failures++;
    }
    CHECK(isfinite(log.last_train_loss));
    CHECK(d.alloc.stats.out_of_memory == 0);

    graph_free(&g);
    CHECK_INT_EQ(d.alloc.stats.in_use, 0);  // every tensor went back to the allocator
    device_close(&d);
    dataset_free(&ds);
    model_file_free(&f);
}

int main(void) {
    bundled_mlp_has_expected_layers_and_parameters();
    names_and_from_wire_layers();
    default_names_pass_numbers_taken_by_name();
    act_key_inserts_activation_layer();
    plan_gradients_skips_the_input_and_its_views();
    check_dataset_matches_shapes_and_labels();
    training_learns_a_separable_problem();
    return test_exit_code("test_graph");
}
