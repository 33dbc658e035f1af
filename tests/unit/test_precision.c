// --precision: the names, what a GPU of a given compute capability computes in, `train
// precision=` in the model file, and the check before the first kernel: bf16 and fp16 are
// refused on the CPU and on GPUs below their compute capability (described here, as this
// test needs no GPU) at the first layer that would compute in them, tf32 becomes fp32
// where there is none, and the memory plan claims no savings the storage does not make.
#include "check.h"
#include "core/memory_plan.h"
#include "core/precision_check.h"

#include <stdlib.h>

static const char *const lenet_text =
    "input   shape=1x28x28 dtype=f32\n"
    "conv2d  filters=4 kernel=5 pad=same act=relu\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense   units=16 act=relu\n"
    "dense   units=10\n"
    "loss    softmax_cross_entropy\n";

static const PrecisionTarget cpu = {.device = "cpu"};
static const PrecisionTarget turing = {.device = "cuda:0", .gpu = "Tesla T4", .compute = 75};
static const PrecisionTarget hopper = {.device = "cuda:1", .gpu = "NVIDIA H100 80GB HBM3",
                                       .compute = 90};

static int build(const char *text, ModelFile *f, Graph *g, RunConfig *config) {
    Status st;
    status_clear(&st);
    int rc = model_file_parse_text("net.model", text, f, &st);
    if (!rc) rc = graph_build(f, g, config, &st);
    if (rc) {
        char message[2048];
        status_format(&st, message, sizeof message);
        fprintf(stderr, "build failed: %s", message);
        test_failures++;
    }
    return rc;
}

static PrecisionConfig asked(Precision p) {
    PrecisionConfig c = {.precision = p};
    snprintf(c.source, sizeof c.source, "--precision");
    return c;
}

static void names_parse_and_gpu_floors(void) {
    Precision p = PRECISION_DEFAULT;
    for (int i = PRECISION_FP32; i < PRECISION_COUNT; i++) {
        CHECK_INT_EQ(precision_parse(precision_name((Precision)i), &p), 0);
        CHECK_INT_EQ(p, i);
    }
    CHECK(precision_parse("bf61", &p) != 0);
    CHECK(precision_parse("default", &p) != 0);
    // Default: TF32 from Ampere on, as PyTorch's allow_tf32; fp32 before it.
    CHECK_INT_EQ(precision_on_gpu(PRECISION_DEFAULT, 90), PRECISION_TF32);
    CHECK_INT_EQ(precision_on_gpu(PRECISION_DEFAULT, 75), PRECISION_FP32);
    CHECK_INT_EQ(precision_on_gpu(PRECISION_TF32, 75), PRECISION_FP32);
    CHECK_INT_EQ(precision_on_gpu(PRECISION_BF16, 80), PRECISION_BF16);
    CHECK_INT_EQ(precision_on_gpu(PRECISION_BF16, 75), PRECISION_DEFAULT);  // refused
    CHECK_INT_EQ(precision_on_gpu(PRECISION_FP16, 75), PRECISION_FP16);
    CHECK_INT_EQ(precision_on_gpu(PRECISION_FP16, 61), PRECISION_DEFAULT);
    // The backends' `supports` reads the same floors: the CPU computes in f32 only.
    CHECK(backend_precision_supported_on(80, PRECISION_BF16));
    CHECK(!backend_precision_supported_on(75, PRECISION_BF16));
    CHECK(backend_precision_supported_on(70, PRECISION_FP16));
    CHECK(!backend_precision_supported_on(61, PRECISION_FP16));
    CHECK(!backend_precision_supported_on(0, PRECISION_BF16));
    CHECK(backend_precision_supported_on(0, PRECISION_TF32));
    const Backend *host = cpu_backend();
    CHECK(!host->supports(host, OP_FAMILY_MATMUL, DTYPE_BF16, LAYOUT_NCHW));
    CHECK(host->supports(host, OP_FAMILY_MATMUL, DTYPE_F32, LAYOUT_NHWC));
    CHECK(host->supports(host, OP_FAMILY_STORAGE, DTYPE_F16, LAYOUT_NHWC));
    CHECK(!host->supports(host, OP_FAMILY_STORAGE, DTYPE_I32, LAYOUT_NCHW));
    CHECK(!host->supports(host, OP_FAMILY_STORAGE, DTYPE_F32, (Layout)7));
    CHECK_INT_EQ(precision_for_convolutions(PRECISION_BF16), PRECISION_TF32);
    CHECK_INT_EQ(precision_for_convolutions(PRECISION_FP16), PRECISION_FP16);
    CHECK_INT_EQ(precision_activation_dtype(PRECISION_DEFAULT), DTYPE_F32);
    CHECK_INT_EQ(precision_activation_dtype(PRECISION_FP32), DTYPE_F32);
    CHECK_INT_EQ(precision_activation_dtype(PRECISION_TF32), DTYPE_F32);
    CHECK_INT_EQ(precision_activation_dtype(PRECISION_BF16), DTYPE_BF16);
    CHECK_INT_EQ(precision_activation_dtype(PRECISION_FP16), DTYPE_F16);
}

static void model_file_train_precision_is_read(void) {
    ModelFile f;
    Graph g;
    RunConfig config;
    char text[1024];
    snprintf(text, sizeof text, "%strain batch=8 precision=fp16\n", lenet_text);
    if (build(text, &f, &g, &config)) return;
    CHECK_INT_EQ(config.precision.precision, PRECISION_FP16);
    CHECK_INT_EQ(config.precision.line, 8);
    CHECK_INT_EQ(config.precision.column, 25);
    graph_free(&g);
    model_file_free(&f);
    if (build(lenet_text, &f, &g, &config)) return;
    CHECK_INT_EQ(config.precision.precision, PRECISION_DEFAULT);
    graph_free(&g);
    model_file_free(&f);

    Status st;
    status_clear(&st);
    snprintf(text, sizeof text, "%strain precision=bf61\n", lenet_text);
    CHECK_INT_EQ(model_file_parse_text("net.model", text, &f, &st), 0);
    CHECK_INT_EQ(graph_build(&f, &g, &config, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "precision=bf61 is not a valid choice; did you mean 'bf16'?");
    CHECK_INT_EQ(st.line, 8);
    CHECK_INT_EQ(st.column, 17);
    model_file_free(&f);
}

// Runs the check; returns its code and leaves the message, hint and notice.
static int check(const Graph *g, Precision p, const PrecisionTarget *t, Precision *effective,
                 Status *st, char *notice, size_t notice_size) {
    status_clear(st);
    PrecisionConfig c = asked(p);
    return precision_check(g, &c, t, effective, notice, notice_size, st);
}

static void cpu_refuses_bf16_and_fp16_at_the_first_layer(const Graph *g) {
    Status st;
    char notice[512];
    Precision effective;
    CHECK_INT_EQ(check(g, PRECISION_BF16, &cpu, &effective, &st, notice, sizeof notice),
                 STATUS_NO_DEVICE);
    // A convolution storing bf16 activations computes in bf16: the first layer in bf16.
    CHECK_CONTAINS(st.message, "--precision bf16: layer 'conv2d1' (conv2d) would compute in "
                               "bf16, but the CPU backend computes in fp32 only");
    CHECK_INT_EQ(st.line, 2);
    CHECK_INT_EQ(st.column, 1);
    CHECK_CONTAINS(st.file, "net.model");
    CHECK_CONTAINS(st.hint, "--precision fp32");
    CHECK_CONTAINS(st.hint, "--device cuda");
    CHECK_INT_EQ(check(g, PRECISION_FP16, &cpu, &effective, &st, notice, sizeof notice),
                 STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "layer 'conv2d1' (conv2d) would compute in fp16");
    CHECK_INT_EQ(st.line, 2);
}

static void cpu_runs_tf32_as_fp32_and_says_so_when_asked(const Graph *g) {
    Status st;
    char notice[512];
    Precision effective = PRECISION_BF16;
    CHECK_INT_EQ(check(g, PRECISION_TF32, &cpu, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_FP32);
    CHECK_CONTAINS(notice, "--precision tf32 on the CPU computes in fp32");
    CHECK_INT_EQ(check(g, PRECISION_DEFAULT, &cpu, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_FP32);
    CHECK_INT_EQ(notice[0], '\0');  // the default says nothing
    CHECK_INT_EQ(check(g, PRECISION_FP32, &cpu, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(notice[0], '\0');
}

static void old_gpu_refuses_bf16_naming_the_gpu_and_layer(const Graph *g) {
    Status st;
    char notice[512];
    Precision effective;
    CHECK_INT_EQ(check(g, PRECISION_BF16, &turing, &effective, &st, notice, sizeof notice),
                 STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "--precision bf16: layer 'conv2d1' (conv2d) would compute in "
                               "bf16, but cuda:0 (Tesla T4) has compute capability 7.5; bf16 "
                               "needs 8.0 or newer");
    CHECK_INT_EQ(st.line, 2);
    CHECK_CONTAINS(st.hint, "--precision fp16");
    CHECK_INT_EQ(check(g, PRECISION_FP16, &turing, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_FP16);
    CHECK_INT_EQ(check(g, PRECISION_TF32, &turing, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_FP32);
    CHECK_CONTAINS(notice, "cuda:0 (Tesla T4) has compute capability 7.5 and no TF32");
    CHECK_INT_EQ(check(g, PRECISION_DEFAULT, &turing, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_FP32);
    CHECK_INT_EQ(notice[0], '\0');
}

static void new_gpu_runs_every_precision(const Graph *g) {
    Status st;
    char notice[512];
    Precision effective;
    for (int p = PRECISION_FP32; p < PRECISION_COUNT; p++) {
        CHECK_INT_EQ(check(g, (Precision)p, &hopper, &effective, &st, notice, sizeof notice), 0);
        CHECK_INT_EQ(effective, p);
        CHECK_INT_EQ(notice[0], '\0');
    }
    CHECK_INT_EQ(check(g, PRECISION_DEFAULT, &hopper, &effective, &st, notice, sizeof notice), 0);
    CHECK_INT_EQ(effective, PRECISION_TF32);
}

// The model file's precision= is named as the model file's, at the layer's place.
static void refusal_names_the_model_files_statement(void) {
    ModelFile f;
    Graph g;
    RunConfig config;
    char text[1024];
    snprintf(text, sizeof text, "%strain batch=8 precision=bf16\n", lenet_text);
    if (build(text, &f, &g, &config)) return;
    Status st;
    status_clear(&st);
    Precision effective;
    char notice[256];
    CHECK_INT_EQ(precision_check(&g, &config.precision, &cpu, &effective, notice, sizeof notice,
                                 &st), STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "train precision=bf16 (line 8): layer 'conv2d1'");
    graph_free(&g);
    model_file_free(&f);
}

// The plan follows the storage graph_set_storage gave the layers: fp32 and tf32 plan the
// same bytes; under bf16 and fp16 (the same bytes as each other) a dense or conv layer's
// output and gradient take half of f32's (each keeps a 16-bit copy of its weights), and a
// cast layer sits at each change of storage.
static const MemoryPlanLayer *plan_row(const MemoryPlan *plan, const char *name) {
    for (int i = 0; i < plan->layer_count; i++)
        if (strcmp(plan->layers[i].name, name) == 0) return &plan->layers[i];
    fprintf(stderr, "no plan row '%s'\n", name);
    test_failures++;
    return NULL;
}

static void memory_plan_follows_storage(Graph *g) {
    OptimizerConfig adam = {.kind = OPTIMIZER_ADAM, .lr = 0.001};
    size_t fp32_total = 0, half_total = 0, fp32_dense = 0, fp32_conv = 0;
    for (int p = PRECISION_DEFAULT; p < PRECISION_COUNT; p++) {
        MemoryPlanOptions options = {.batch = 32, .optimizer = &adam, .precision = (Precision)p};
        MemoryPlan plan;
        Status st;
        status_clear(&st);
        DType storage = precision_activation_dtype((Precision)p);
        if (graph_set_storage(g, storage, &st) || memory_plan(g, cpu_backend(), &options, &plan, &st)) {
            fprintf(stderr, "memory_plan failed: %s\n", st.message);
            test_failures++;
            return;
        }
        CHECK_INT_EQ(plan.activation_dtype, storage);
        CHECK_INT_EQ(plan.precision, p == PRECISION_DEFAULT ? PRECISION_FP32 : p);
        const MemoryPlanLayer *dense = plan_row(&plan, "dense2");
        const MemoryPlanLayer *conv = plan_row(&plan, "conv2d1");
        int casts = 0;
        for (int i = 0; i < plan.layer_count; i++) casts += strcmp(plan.layers[i].kind, "cast") == 0;
        if (storage == DTYPE_F32) {
            if (p == PRECISION_DEFAULT) {
                fp32_total = plan.total;
                fp32_dense = dense ? dense->activation_gradients : 0;
                fp32_conv = conv ? conv->bytes : 0;
            }
            CHECK_INT_EQ(plan.total, fp32_total);
            CHECK_INT_EQ(casts, 0);
        } else {
            if (!half_total) half_total = plan.total;
            CHECK_INT_EQ(plan.total, half_total);
            CHECK(plan.total != fp32_total);
            // The input into conv2d1 (convolutions, pooling and dense layers all store 16
            // bits), dense2's output into the loss.
            CHECK_INT_EQ(casts, 2);
            char into_conv[32];
            snprintf(into_conv, sizeof into_conv, "input1:%s", dtype_name(storage));
            CHECK(plan_row(&plan, into_conv) != NULL);
            CHECK(plan_row(&plan, "dense2:f32") != NULL);
            if (dense) CHECK_INT_EQ(dense->activation_gradients, alloc_charged_bytes(fp32_dense / 2));
            if (dense) CHECK(dense->layer_state > 0);  // the 16-bit copy of the weights
            if (conv) CHECK(conv->bytes < fp32_conv);
            if (conv) CHECK(conv->layer_state > 0);  // its 16-bit weights
        }
        memory_plan_free(&plan);
    }
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(graph_set_storage(g, DTYPE_F32, &st), 0);
}

int main(void) {
    names_parse_and_gpu_floors();
    model_file_train_precision_is_read();
    refusal_names_the_model_files_statement();
    ModelFile f;
    Graph g;
    RunConfig config;
    if (build(lenet_text, &f, &g, &config) == 0) {
        cpu_refuses_bf16_and_fp16_at_the_first_layer(&g);
        cpu_runs_tf32_as_fp32_and_says_so_when_asked(&g);
        old_gpu_refuses_bf16_naming_the_gpu_and_layer(&g);
        new_gpu_runs_every_precision(&g);
        memory_plan_follows_storage(&g);
        graph_free(&g);
        model_file_free(&f);
    }
    return test_exit_code("test_precision");
}
