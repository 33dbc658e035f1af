// fp16's dynamic loss scaling (core/loss_scale.h), on the CPU: the state machine (halve and
// skip on overflow, double after 2000 clean steps), the check and the exact division over
// a graph's gradients, and training through train_replicas: at 2^16 the scaled run ends
// with the fp32 run's parameters bit for bit (a power of two scales exactly), and a scale
// so large that the loss's gradient is infinite is halved, step by step, until training
// goes on, each skipped step said in a notice.
#include "core/loss_scale.h"
#include "train_harness.h"

#include <float.h>

static void overflow_halves_and_clean_steps_double(void) {
    LossScaler s;
    loss_scaler_init(&s, 0.0);
    CHECK(s.scale == 65536.0);
    CHECK_INT_EQ(loss_scaler_update(&s, 1), LOSS_SCALE_HALVED);
    CHECK(s.scale == 32768.0);
    CHECK_INT_EQ(s.skipped_steps, 1);
    for (int i = 1; i < LOSS_SCALE_GROWTH_INTERVAL; i++)
        CHECK_INT_EQ(loss_scaler_update(&s, 0), LOSS_SCALE_KEPT);
    CHECK_INT_EQ(loss_scaler_update(&s, 0), LOSS_SCALE_DOUBLED);  // the 2000th clean step
    CHECK(s.scale == 65536.0);
    CHECK_INT_EQ(s.clean_steps, 0);
    // An overflow starts the count again.
    for (int i = 0; i < 1500; i++) loss_scaler_update(&s, 0);
    CHECK_INT_EQ(loss_scaler_update(&s, 1), LOSS_SCALE_HALVED);
    for (int i = 1; i < LOSS_SCALE_GROWTH_INTERVAL; i++)
        CHECK_INT_EQ(loss_scaler_update(&s, 0), LOSS_SCALE_KEPT);
    CHECK_INT_EQ(loss_scaler_update(&s, 0), LOSS_SCALE_DOUBLED);
    CHECK_INT_EQ(s.skipped_steps, 2);
    // Halving stops below the minimum: the gradients are not finite whatever the scale.
    loss_scaler_init(&s, LOSS_SCALE_MINIMUM);
    CHECK_INT_EQ(loss_scaler_update(&s, 1), LOSS_SCALE_HALVED);
    CHECK_INT_EQ(loss_scaler_update(&s, 1), LOSS_SCALE_TOO_SMALL);
}

// One dense layer's weight and bias gradients on the CPU, set by hand.
typedef struct Grads {
    Allocator alloc;
    Layer layer;
    Layer *layers[1];
    Graph g;
} Grads;

static void make_grads(Grads *t, float w0, float w1, float bias, Status *st) {
    memset(t, 0, sizeof *t);
    CHECK_INT_EQ(alloc_init(&t->alloc, cpu_backend(), ALLOC_GROW, 0, st), 0);
    const float values[2][2] = {{w0, w1}, {bias, 0.0f}};
    for (int k = 0; k < 2; k++) {
        Param *p = &t->layer.params[k];
        Shape shape = {.rank = 1, .dims = {2 - k}};
        tensor_set_shape(&p->grad, DTYPE_F32, 0, &shape);
        CHECK_INT_EQ(tensor_alloc(&p->grad, &t->alloc, st), 0);
        memcpy(p->grad.data, values[k], (size_t)(2 - k) * sizeof(float));
    }
    t->layer.param_count = 2;
    t->layers[0] = &t->layer;
    t->g.layers = t->layers;
    t->g.count = 1;
}

static void free_grads(Grads *t) {
    for (int k = 0; k < 2; k++) tensor_free(&t->layer.params[k].grad);
    alloc_destroy(&t->alloc);
}

static float grad_at(Grads *t, int k, int i) { return tensor_f32(&t->layer.params[k].grad)[i]; }

static void the_check_finds_an_overflow_and_unscaling_is_exact(void) {
    Status st;
    status_clear(&st);
    Grads t;
    make_grads(&t, 3.0f * 65536.0f, -0.25f * 65536.0f, 65536.0f, &st);
    int finite = 0;
    CHECK_INT_EQ(loss_scale_gradients_finite(&t.g, cpu_backend(), &t.alloc, &finite, &st), 0);
    CHECK_INT_EQ(finite, 1);
    CHECK_INT_EQ(loss_scale_unscale_gradients(&t.g, cpu_backend(), 65536.0, &st), 0);
    CHECK(grad_at(&t, 0, 0) == 3.0f && grad_at(&t, 0, 1) == -0.25f && grad_at(&t, 1, 0) == 1.0f);
    free_grads(&t);

    // Forcing an overflow: one infinite value in the bias gradient, one NaN in the weight's.
    make_grads(&t, 1.0f, 2.0f, INFINITY, &st);
    CHECK_INT_EQ(loss_scale_gradients_finite(&t.g, cpu_backend(), &t.alloc, &finite, &st), 0);
    CHECK_INT_EQ(finite, 0);
    free_grads(&t);
    make_grads(&t, NAN, 2.0f, 1.0f, &st);
    CHECK_INT_EQ(loss_scale_gradients_finite(&t.g, cpu_backend(), &t.alloc, &finite, &st), 0);
    CHECK_INT_EQ(finite, 0);
    free_grads(&t);

    // 1 / 2^127 is a subnormal float, which the CPU's flush-to-zero reads as 0: unscaling
    // must still be exact.
    make_grads(&t, 0x1.8p127f, -0x1p127f, 0x1p100f, &st);
    CHECK_INT_EQ(loss_scale_unscale_gradients(&t.g, cpu_backend(), 0x1p127, &st), 0);
    CHECK(grad_at(&t, 0, 0) == 1.5f && grad_at(&t, 0, 1) == -1.0f);
    CHECK(grad_at(&t, 1, 0) == 0x1p-27f);
    free_grads(&t);
}

// The harness's model on the CPU for `epochs`, in `precision` (fp16: loss scaling from
// `initial`), notices recorded in run.
static int train_in(Run *run, Precision precision, double initial, int epochs,
                    const Dataset *ds, Status *st) {
    memset(run, 0, sizeof *run);
    TRY(model_file_parse_text("scaled.model", model_text, &run->file, st));
    DeviceOptions options = {.spec = "cpu", .mode = ALLOC_GROW};
    char notice[256];
    TRY(device_open(&options, &run->device, notice, sizeof notice, st));
    TRY(graph_build(&run->file, &run->graphs[0], &run->config, st));
    run->built = 1;
    run->config.train.epochs = epochs;
    run->config.precision.precision = precision;
    run->config.precision.initial_loss_scale = initial;
    TRY(graph_init_params(&run->graphs[0], run->device.backend, &run->device.alloc,
                          (uint64_t)run->config.train.seed, st));
    Graph *graphs[1] = {&run->graphs[0]};
    Device *devices[1] = {&run->device};
    TrainHooks recording = {.user = run, .on_notice = record_notice};
    return train_replicas(graphs, devices, 1, &run->config, ds, NULL, &recording, NULL, st);
}

static int all_parameters_finite(const Run *run) {
    const Graph *g = &run->graphs[0];
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            float *v = parameter_on_host(run, 0, i, k);
            size_t n = tensor_numel(&g->layers[i]->params[k].value);
            for (size_t j = 0; v && j < n; j++)
                if (!isfinite(v[j])) {
                    free(v);
                    return 0;
                }
            free(v);
        }
    return 1;
}

static int count_lines_with(const char *text, const char *needle) {
    int count = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) count++;
    return count;
}

static void training_with_loss_scaling(void) {
    Dataset ds = synthetic_dataset();
    Status st;
    status_clear(&st);
    Run fp32, fp16;
    if (train_in(&fp32, PRECISION_FP32, 0.0, 2, &ds, &st) ||
        train_in(&fp16, PRECISION_FP16, 0.0, 2, &ds, &st)) {
        report_status("training", &st);
        test_failures++;
    } else {
        // The CPU computes in fp32 either way; 2^16 scales and unscales exactly.
        CHECK(parameter_difference(&fp32, 0, &fp16, 0) == 0.0);
        CHECK_INT_EQ(fp16.notices, 0);
    }
    free_run(&fp32);
    free_run(&fp16);

    // float(2^140) is infinite, so is the loss's gradient: 13 halvings at least (to 2^127)
    // before a step can be taken; 10 epochs are 40 steps.
    Run huge;
    status_clear(&st);
    if (train_in(&huge, PRECISION_FP16, 0x1p140, 10, &ds, &st)) {
        report_status("training from a scale of 2^140", &st);
        test_failures++;
    } else {
        // Every notice is a skipped step (run.notices counts them all; the text keeps the
        // first few kilobytes).
        CHECK(huge.notices >= 13 && huge.notices < 40);
        CHECK_INT_EQ(count_lines_with(huge.notices_text, "fp16 loss scaling: "),
                     count_lines_with(huge.notices_text, "\n"));
        CHECK_CONTAINS(huge.notices_text, "fp16 loss scaling: non-finite gradients at step 1 of "
                                          "the run with the loss scaled by 1.3938e+42: step "
                                          "skipped, scale now 6.96898e+41 (1 skipped so far)");
        CHECK(all_parameters_finite(&huge));
    }
    free_run(&huge);
    free(ds.images);
    free(ds.labels);
}

int main(void) {
    overflow_halves_and_clean_steps_double();
    the_check_finds_an_overflow_and_unscaling_is_exact();
    training_with_loss_scaling();
    return test_exit_code("test_loss_scale");
}
