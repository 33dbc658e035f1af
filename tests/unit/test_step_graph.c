// The host side of --cuda-graph (core/step_graph.h, core/train.c), without a GPU: which
// step is run plainly, captured or replayed, and when graphs are dropped; which runs fall
// back to plain launches and why; `on` refused on the CPU; the CPU path unchanged by the
// option; a capture that fails falls back to plain launches with a notice and trains what
// plain launches train; and the arithmetic a replay relies on to move a dropout seed to
// another step. tests/gpu/test_cuda_graph_step.c checks replays against plain launches on
// a GPU.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "check.h"
#include "core/device.h"
#include "core/step_graph.h"
#include "core/train.h"
#include "kernels/cpu/cpu_ops.h"

// ---- planning, with a backend that counts the graphs it destroys ----

static int destroyed;
static void count_destroy(const Backend *b, void *graph) { destroyed++; }

static void plan_expect(StepGraphs *s, StepShape shape, StepGraphAction want, void *want_graph,
                        int line) {
    void *graph = (void *)1;
    StepGraphAction got = step_graphs_plan(s, &shape, &graph);
    if (got != want || graph != want_graph) {
        fprintf(stderr, "line %d: planned %d (graph %p), want %d (graph %p)\n", line, got,
                graph, want, want_graph);
        test_failures++;
    }
}
#define PLAN(s, shape, want, graph) plan_expect(s, shape, want, graph, __LINE__)

static void each_shape_warms_up_once_then_is_captured_then_replayed(void) {
    Backend fake = {.name = "fake", .graph_destroy = count_destroy};
    StepGraphs s;
    step_graphs_init(&s, &fake);
    destroyed = 0;
    StepShape full = {.samples = 64, .micro_batch = 64}, last = {.samples = 44, .micro_batch = 64};
    static int graph_a, graph_b, graph_c;
    // Epoch 1: the full shape plain, captured, replayed; the short last step plain.
    PLAN(&s, full, STEP_RUN_PLAIN, NULL);
    PLAN(&s, full, STEP_CAPTURE, NULL);
    step_graphs_keep(&s, &full, &graph_a);
    PLAN(&s, full, STEP_REPLAY, &graph_a);
    PLAN(&s, last, STEP_RUN_PLAIN, NULL);
    // Epoch 2: the full shape replayed, the short one captured; epoch 3 replays both.
    PLAN(&s, full, STEP_REPLAY, &graph_a);
    PLAN(&s, last, STEP_CAPTURE, NULL);
    step_graphs_keep(&s, &last, &graph_b);
    PLAN(&s, full, STEP_REPLAY, &graph_a);
    PLAN(&s, last, STEP_REPLAY, &graph_b);
    CHECK_INT_EQ(destroyed, 0);
    CHECK_INT_EQ(s.captures, 2);
    CHECK_INT_EQ(s.replays, 4);
    // An augmented run's new epoch: the same shape under a new key is captured at once,
    // in place of the graph used least recently (the full one, replayed before `last`).
    StepShape augmented = full;
    augmented.augment_key = 77;
    PLAN(&s, augmented, STEP_CAPTURE, NULL);
    step_graphs_keep(&s, &augmented, &graph_c);
    CHECK_INT_EQ(destroyed, 1);
    PLAN(&s, last, STEP_REPLAY, &graph_b);
    PLAN(&s, augmented, STEP_REPLAY, &graph_c);
    // Smaller micro-batches after out of memory: the activations were reallocated.
    step_graphs_forget(&s);
    CHECK_INT_EQ(destroyed, 3);
    StepShape split = {.samples = 64, .micro_batch = 32};
    PLAN(&s, split, STEP_RUN_PLAIN, NULL);
    PLAN(&s, split, STEP_CAPTURE, NULL);
    // A failed capture: plain from then on.
    step_graphs_disable(&s);
    PLAN(&s, split, STEP_RUN_PLAIN, NULL);
    PLAN(&s, split, STEP_RUN_PLAIN, NULL);
    step_graphs_close(&s);
}

static void runs_that_need_the_host_inside_a_step_are_refused(void) {
    StepGraphRun ok = {.has_graph_ops = 1, .replicas = 1, .processes = 1};
    CHECK(step_graphs_refusal(&ok) == NULL);
    StepGraphRun r = ok;
    r.has_graph_ops = 0;
    CHECK_CONTAINS(step_graphs_refusal(&r), "no CUDA Graphs");
    r = ok;
    r.replicas = 2;
    CHECK_CONTAINS(step_graphs_refusal(&r), "--gpus");
    r = ok;
    r.processes = 4;
    CHECK_CONTAINS(step_graphs_refusal(&r), "mpirun");
    r = ok;
    r.sync_check = 1;
    CHECK_CONTAINS(step_graphs_refusal(&r), "--sync-check");
    r = ok;
    r.loss_scaling = 1;
    CHECK_CONTAINS(step_graphs_refusal(&r), "fp16");
    r = ok;
    r.staged = 1;
    CHECK_CONTAINS(step_graphs_refusal(&r), "staged");
}

static void mode_words_and_the_cpu_refusal(void) {
    CudaGraphMode mode = CUDA_GRAPH_ON;
    CHECK_INT_EQ(cuda_graph_mode_parse("off", &mode), 0);
    CHECK_INT_EQ(mode, CUDA_GRAPH_OFF);
    CHECK_INT_EQ(cuda_graph_mode_parse("auto", &mode), 0);
    CHECK_INT_EQ(mode, CUDA_GRAPH_AUTO);
    CHECK_INT_EQ(cuda_graph_mode_parse("on", &mode), 0);
    CHECK_INT_EQ(mode, CUDA_GRAPH_ON);
    CHECK_INT_EQ(cuda_graph_mode_parse("yes", &mode), 1);
    Status read;
    status_clear(&read);
    mode = CUDA_GRAPH_AUTO;
    CHECK_INT_EQ(cuda_graph_mode_read(NULL, &mode, &read), 0);  // not given: left as it is
    CHECK_INT_EQ(mode, CUDA_GRAPH_AUTO);
    CHECK_INT_EQ(cuda_graph_mode_read("yes", &mode, &read), STATUS_BAD_INPUT);
    CHECK_CONTAINS(read.message, "--cuda-graph yes: expected off, auto or on");
    CHECK(strcmp(cuda_graph_mode_name(CUDA_GRAPH_AUTO), "auto") == 0);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(step_graphs_check_device(CUDA_GRAPH_OFF, cpu_backend(), &st), 0);
    CHECK_INT_EQ(step_graphs_check_device(CUDA_GRAPH_AUTO, cpu_backend(), &st), 0);
    CHECK_INT_EQ(step_graphs_check_device(CUDA_GRAPH_ON, cpu_backend(), &st), STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "--cuda-graph on: cpu has no CUDA Graphs");
    CHECK_CONTAINS(st.hint, "--device cuda");
}

// ---- training on the CPU ----

enum { SAMPLES = 100, SIDE = 4 };

static const char *const model_text =
    "input shape=16\n"
    "dense units=12 act=relu\n"
    "dropout rate=0.25\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n"
    "optimizer adam lr=0.02\n"
    "schedule cosine warmup=2\n"
    "train batch=32 epochs=2 seed=4\n";

static Dataset small_dataset(void) {
    Dataset ds = {.count = SAMPLES, .channels = 1, .height = SIDE, .width = SIDE, .label_max = 2};
    snprintf(ds.source, sizeof ds.source, "synthetic");
    ds.images = malloc((size_t)SAMPLES * SIDE * SIDE);
    ds.labels = malloc(SAMPLES);
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < SAMPLES; i++) {
        ds.labels[i] = (uint8_t)rng_below(&rng, 3);
        for (int p = 0; p < SIDE * SIDE; p++)
            ds.images[i * SIDE * SIDE + p] = (uint8_t)(p * 13 + ds.labels[i] * 50 +
                                                       (int)rng_below(&rng, 40));
    }
    return ds;
}

typedef struct CpuRun {
    ModelFile file;
    Graph g;
    RunConfig config;
    Device d;
    char notices[2048];
    int rc;
    Status st;
} CpuRun;

static void on_notice(void *user, const char *line) {
    CpuRun *r = user;
    size_t used = strlen(r->notices);
    snprintf(r->notices + used, sizeof r->notices - used, "%s\n", line);
}

// `fake`: NULL, or a table to train through in place of the CPU's.
static void cpu_train(CudaGraphMode mode, const Backend *fake, const Dataset *ds, CpuRun *r) {
    memset(r, 0, sizeof *r);
    status_clear(&r->st);
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    char notice[256];
    r->rc = model_file_parse_text("graph.model", model_text, &r->file, &r->st);
    if (!r->rc) r->rc = graph_build(&r->file, &r->g, &r->config, &r->st);
    if (!r->rc) r->rc = device_open(&options, &r->d, notice, sizeof notice, &r->st);
    if (r->rc) return;
    if (fake) r->d.backend = fake;
    r->config.cuda_graph = mode;
    r->rc = graph_init_params(&r->g, r->d.backend, &r->d.alloc, 4, &r->st);
    TrainHooks hooks = {.user = r, .on_notice = on_notice};
    if (!r->rc) r->rc = train_model(&r->g, &r->config, &r->d, ds, NULL, &hooks, NULL, &r->st);
}

static void cpu_run_free(CpuRun *r) {
    graph_free(&r->g);
    if (r->d.backend) device_close(&r->d);
    model_file_free(&r->file);
}

// Parameters live in host memory on the CPU: compared in place.
static int same_parameters(const CpuRun *a, const CpuRun *b) {
    for (int i = 0; i < a->g.count; i++)
        for (int k = 0; k < a->g.layers[i]->param_count; k++) {
            const Tensor *u = &a->g.layers[i]->params[k].value;
            const Tensor *v = &b->g.layers[i]->params[k].value;
            if (u->bytes != v->bytes || memcmp(u->data, v->data, u->bytes) != 0) return 0;
        }
    return 1;
}

static void the_cpu_trains_the_same_whatever_the_option(const Dataset *ds) {
    CpuRun off, autom, on;
    cpu_train(CUDA_GRAPH_OFF, NULL, ds, &off);
    cpu_train(CUDA_GRAPH_AUTO, NULL, ds, &autom);
    CHECK_INT_EQ(off.rc, 0);
    CHECK_INT_EQ(autom.rc, 0);
    CHECK(off.rc == 0 && autom.rc == 0 && same_parameters(&off, &autom));
    CHECK_INT_EQ(strlen(autom.notices), 0);  // auto on the CPU: nothing to say
    cpu_train(CUDA_GRAPH_ON, NULL, ds, &on);
    CHECK_INT_EQ(on.rc, STATUS_NO_DEVICE);
    CHECK_CONTAINS(on.st.message, "no CUDA Graphs");
    cpu_run_free(&off);
    cpu_run_free(&autom);
    cpu_run_free(&on);
}

// A backend whose captures always fail to start, as a CUDA error at cudaStreamBeginCapture
// would: the step must run as plain launches, the run must say so once, and nothing may
// have run twice.
static int begin_attempts;
static int failing_begin(const Backend *b, const StepValues *values, Status *st) {
    begin_attempts++;
    return status_fail(st, STATUS_RUNTIME_ERROR, "cudaStreamBeginCapture failed (planted)");
}
static int never_end(const Backend *b, void **graph, Status *st) {
    *graph = NULL;
    return status_fail(st, STATUS_RUNTIME_ERROR, "no capture to end");
}
static int never_launch(const Backend *b, void *graph, const StepValues *v, Status *st) {
    return status_fail(st, STATUS_RUNTIME_ERROR, "no graph to launch");
}

static void a_failed_capture_falls_back_to_plain_launches(const Dataset *ds) {
    Backend fake = *cpu_backend();
    fake.capture_begin = failing_begin;
    fake.capture_end = never_end;
    fake.graph_launch = never_launch;
    fake.graph_destroy = count_destroy;
    begin_attempts = 0;
    CpuRun plain, fallback;
    cpu_train(CUDA_GRAPH_OFF, NULL, ds, &plain);
    cpu_train(CUDA_GRAPH_ON, &fake, ds, &fallback);
    CHECK_INT_EQ(fallback.rc, 0);
    if (fallback.rc) {
        char text[2048];
        status_format(&fallback.st, text, sizeof text);
        fprintf(stderr, "%s", text);
    }
    CHECK_INT_EQ(begin_attempts, 1);  // at the full shape's second step, then never again
    CHECK_CONTAINS(fallback.notices, "CUDA Graph: capturing the training step failed, so "
                                     "training goes on with plain launches: "
                                     "cudaStreamBeginCapture failed (planted)");
    CHECK(plain.rc == 0 && fallback.rc == 0 && same_parameters(&plain, &fallback));
    cpu_run_free(&plain);
    cpu_run_free(&fallback);
}

// cuda_capture_seed records a dropout launch's seed as an offset from the step's seed and
// a replay adds its own step's seed (uint64_t arithmetic, wrapping): the mask a replay
// draws for step t must be the mask a plain launch draws at step t, for every pass offset.
static void a_seed_moved_to_another_step_draws_that_steps_mask(void) {
    enum { N = 257 };
    const Backend *b = cpu_backend();
    float x[N], plain_y[N], plain_mask[N], replay_y[N], replay_mask[N];
    for (int i = 0; i < N; i++) x[i] = 1.0f + (float)i;
    uint64_t captured_step = 0xFFFFFFFFFFFFFF00ull, replayed_step = 0x1234ull;  // wraps
    uint64_t pass_offsets[] = {0, 31 * DROPOUT_HASH_STEP, 0x8000000000000000ull};
    Status st;
    status_clear(&st);
    for (size_t k = 0; k < sizeof pass_offsets / sizeof pass_offsets[0]; k++) {
        uint64_t captured_seed = captured_step + pass_offsets[k];
        uint64_t argument = captured_seed - captured_step;  // what the kernel keeps
        CHECK_INT_EQ(b->dropout_forward(b, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x,
                                        .y = plain_y, .mask = plain_mask, .n = N, .rate = 0.4f,
                                        .seed = replayed_step + pass_offsets[k]}, &st), 0);
        CHECK_INT_EQ(b->dropout_forward(b, &(DropoutForwardArgs){.dtype = DTYPE_F32, .x = x,
                                        .y = replay_y, .mask = replay_mask, .n = N, .rate = 0.4f,
                                        .seed = replayed_step + argument}, &st), 0);
        CHECK(memcmp(plain_mask, replay_mask, sizeof plain_mask) == 0);
        CHECK(memcmp(plain_y, replay_y, sizeof plain_y) == 0);
    }
}

int main(void) {
    each_shape_warms_up_once_then_is_captured_then_replayed();
    runs_that_need_the_host_inside_a_step_are_refused();
    mode_words_and_the_cpu_refusal();
    Dataset ds = small_dataset();
    the_cpu_trains_the_same_whatever_the_option(&ds);
    a_failed_capture_falls_back_to_plain_launches(&ds);
    dataset_free(&ds);
    a_seed_moved_to_another_step_draws_that_steps_mask();
    return test_exit_code("test_step_graph");
}
