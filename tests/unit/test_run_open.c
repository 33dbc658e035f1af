// run_open on the CPU: --replicas builds one graph per replica sharing the one device; a
// precision the CPU lacks is refused at the layer (STATUS_NO_DEVICE), except for check on a
// CPU it chose itself, which keeps the refusal and the storage asked for; --replicas on
// another device than the CPU and --without on the CPU are refused; eval refuses a weights
// file that is not there; bench train's parameters and optimizer state are made here;
// notices reach the caller's callback, not stdout.
#include "check.h"
#include "core/run.h"

static const char *const mlp_text =
    "input shape=4 dtype=f32\n"
    "dense name=dense1 units=8 act=relu\n"
    "dense name=dense2 units=3\n"
    "loss softmax_cross_entropy\n";

static int notices;
static char last_notice[512];
static void remember(void *user, const char *line) {
    (void)user;
    notices++;
    snprintf(last_notice, sizeof last_notice, "%s", line);
}

typedef struct Opened {
    ModelFile file;
    RunConfig config;
    Run run;
    Status st;
} Opened;

// Builds the model and opens it for `purpose` with `request` on the CPU.
static int open_with(Opened *o, RunPurpose purpose, RunRequest request, int keep_refusal,
                     Status *refusal, const char *weights) {
    status_clear(&o->st);
    memset(&o->run, 0, sizeof o->run);
    Graph first;
    int rc = model_file_parse_text("net.model", mlp_text, &o->file, &o->st);
    if (!rc) rc = graph_build(&o->file, &first, &o->config, &o->st);
    if (rc) {
        fprintf(stderr, "build failed: %s\n", o->st.message);
        test_failures++;
        return rc;
    }
    RunOptions options;
    RunNotice notice = {remember, NULL};
    if (!request.device) request.device = "cpu";
    request.purpose = purpose;
    rc = run_options_resolve(&o->config, &request, &notice, &options, &o->st);
    if (rc) {
        graph_free(&first);
        return rc;
    }
    RunSetup setup = {.purpose = purpose, .file = &o->file, .options = &options,
                      .config = &o->config, .weights = weights, .notice = notice,
                      .fallback = notice, .keep_refusal = keep_refusal, .refusal = refusal};
    return run_open(&o->run, &setup, &first, &o->st);
}

static void close_opened(Opened *o) {
    run_close(&o->run);
    model_file_free(&o->file);
}

static void replicas_share_the_cpu(void) {
    Opened o;
    CHECK_INT_EQ(open_with(&o, RUN_TRAIN, (RunRequest){.replicas = 3, .batch = "12"}, 0, NULL,
                           NULL), 0);
    CHECK_INT_EQ(o.run.count, 3);
    CHECK_INT_EQ(o.run.devices_open, 1);
    CHECK_INT_EQ(o.run.graphs_built, 3);
    CHECK(o.run.device_list[2] == &o.run.devices[0]);
    CHECK(o.run.graph_list[2] == &o.run.graphs[2]);
    CHECK_INT_EQ(o.config.train.batch, 12);  // the resolver's batch, recorded once
    CHECK_INT_EQ(o.run.precision, PRECISION_FP32);
    CHECK_INT_EQ(run_init_params(&o.run, 1, &o.st), 0);
    close_opened(&o);
}

static void bf16_is_refused_on_the_cpu_unless_check_keeps_it(void) {
    PrecisionConfig bf16 = {.precision = PRECISION_BF16, .source = "--precision"};
    Opened o;
    CHECK_INT_EQ(open_with(&o, RUN_EVAL, (RunRequest){.precision = &bf16}, 0, NULL, "none"),
                 STATUS_NO_DEVICE);
    CHECK_CONTAINS(o.st.message, "layer 'dense1' (dense) would compute in bf16");
    close_opened(&o);
    Status refusal;
    status_clear(&refusal);  // a refusal not kept fails the check below, not reads garbage
    CHECK_INT_EQ(open_with(&o, RUN_CHECK, (RunRequest){.precision = &bf16}, 1, &refusal, NULL),
                 0);
    CHECK_INT_EQ(o.run.precision, PRECISION_BF16);
    CHECK_CONTAINS(refusal.message, "the CPU backend computes in fp32 only");
    close_opened(&o);
}

static void device_facts_are_checked_after_opening(void) {
    Opened o;
    CHECK_INT_EQ(open_with(&o, RUN_TRAIN, (RunRequest){.disabled_levers = 1}, 0, NULL, NULL),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(o.st.message, "--without: levers are the CUDA backend's; the device is cpu");
    close_opened(&o);
}

static void eval_needs_its_weights_file(void) {
    Opened o;
    CHECK(open_with(&o, RUN_EVAL, (RunRequest){0}, 0, NULL, "/nonexistent/w.safetensors") != 0);
    CHECK_INT_EQ(o.run.devices_open, 1);  // opened before the weights, for run_close
    close_opened(&o);
}

// bench train trains at --batch, from parameters and optimizer state run_open made; check
// plans at --batch and keeps the model file's train batch= (32) to report.
static void bench_starts_from_the_run_and_check_keeps_the_model_batch(void) {
    Opened o;
    CHECK_INT_EQ(open_with(&o, RUN_BENCH, (RunRequest){.batch = "16"}, 0, NULL, NULL), 0);
    CHECK_INT_EQ(o.run.batch, 16);
    CHECK_INT_EQ(o.config.train.batch, 16);
    const Param *weights = &o.run.graphs[0].layers[1]->params[0];
    CHECK(weights->value.data != NULL);
    CHECK(weights->state[0].data != NULL);  // adam's m
    close_opened(&o);
    CHECK_INT_EQ(open_with(&o, RUN_CHECK, (RunRequest){.batch = "256"}, 0, NULL, NULL), 0);
    CHECK_INT_EQ(o.run.batch, 256);
    CHECK_INT_EQ(o.config.train.batch, 32);
    close_opened(&o);
}

static void tf32_on_the_cpu_is_a_notice(void) {
    PrecisionConfig tf32 = {.precision = PRECISION_TF32, .source = "--precision"};
    notices = 0;
    Opened o;
    CHECK_INT_EQ(open_with(&o, RUN_CHECK, (RunRequest){.precision = &tf32, .device = "cpu"}, 0,
                           NULL, NULL), 0);
    CHECK_INT_EQ(notices, 1);
    CHECK_CONTAINS(last_notice, "--precision tf32 on the CPU computes in fp32");
    close_opened(&o);
}

int main(void) {
    replicas_share_the_cpu();
    bf16_is_refused_on_the_cpu_unless_check_keeps_it();
    device_facts_are_checked_after_opening();
    eval_needs_its_weights_file();
    tf32_on_the_cpu_is_a_notice();
    bench_starts_from_the_run_and_check_keeps_the_model_batch();
    return test_exit_code("test_run_open");
}
