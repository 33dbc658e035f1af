// Training end to end on the GPU (device "cuda:0", opened as the CLI opens it: with TF32
// as by default, and FP32 only as with --no-tf32) against the same training on the CPU:
// models/mlp.model and models/lenet.model (and in NHWC alone cnn-bn.model, and a small
// CNN on a three-channel copy of the images, which a to_nhwc layer converts), one epoch on
// the first 10 000 Fashion-MNIST training images, same seed, so the same initial weights,
// batch order and dropout masks; evaluated on the 10 000 test images. Then the memory
// limit on the GPU: a dataset that does not fit is staged through the host and trains as
// well, a batch that does not fit is split into micro-batches and learns the same, and out
// of memory that cannot be split away (the limit's, and the device's own) is
// STATUS_OUT_OF_MEMORY, never a crash.
//
// Tolerances, and why
// - Test accuracy within 2 points of the CPU's. The two runs differ only by rounding
//   (summation order, cuDNN's algorithms, TF32), but rounding differences grow over the
//   79 steps, and after one epoch on a subset the model is still moving fast: there,
//   runs that differ only in seed spread by about a point (the MLP on the CPU, seeds 1-6:
//   0.756 to 0.778). After 10 full epochs accuracy
//   has settled, and the GPU should land within 0.5 points of the CPU; that comparison
//   takes minutes per model on the CPU, so it is done by hand and in bench/ (see
//   docs/benchmarks.md), not here.
// - First step's loss, relative: identical weights and batch, so only the rounding of
//   one forward pass differs. Within 0.5% with TF32 (inputs rounded to 11 bits: ~1e-3 of
//   the logits), within 1e-4 in FP32 (summation order alone: ~1e-6). A layer computed
//   wrongly moves it by far more.
// - Mean training loss of the epoch within 5%: a loose guard that training followed the
//   same course (a broken update on the GPU shows here first).
// - GPU test accuracy above 0.70: one epoch on 10 000 images reaches 0.76 (MLP) and
//   0.79 (LeNet) on the CPU; chance is 0.1.
//
// Skipped (77) when no CUDA backend opens (no driver, no GPU, built without CUDA) or
// Fashion-MNIST is not installed. TRAINER_FASHION_MNIST_DIR may name a folder holding its
// four IDX files instead of /usr/share/datasets/fashion-mnist.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_or_skip.h"
#include "check.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/train.h"
#include "kernels/cuda/cuda_backend.h"

#define TRAIN_SAMPLES 10000
#define ACCURACY_TOLERANCE 0.02
#define FIRST_LOSS_RTOL_TF32 5e-3
#define FIRST_LOSS_RTOL_FP32 1e-4
#define TRAIN_LOSS_RTOL 0.05
#define MIN_ACCURACY 0.70
// Holds the MLP's parameters, Adam state and batch-128 activations (~4.7 MiB), but not
// also the 7.8 MB training set, which core/train.c then stages through the host.
#define STAGING_LIMIT "16M"

typedef struct RunResult {
    // The mean loss of the first steps, the first the training loop reports (it reads the
    // loss every LOSS_READ_INTERVAL steps, not after step 1): CPU and GPU take the same
    // few updates from the same start, so a forward pass that differs shows here.
    double first_loss;
    double train_loss;        // mean over the epoch
    double test_accuracy, test_loss;
    double samples_per_second;
    size_t peak_reserved, limit;
    int nhwc_layers;          // layers graph_set_layouts laid out NHWC
    int notices;              // the training loop's notices (staging, splitting after out of memory)
    int split_notices;        // those that say a batch was split into micro-batches
    char split_notice[512];   // the last of them
    char all_notices[2048];   // every notice, one a line, for the failure message
} RunResult;

static void report_status(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
}

static int on_step(void *user, const StepReport *r) {
    RunResult *result = user;
    if (r->epoch == 1 && result->first_loss == 0.0) result->first_loss = r->loss;
    return 0;
}

static int on_epoch(void *user, const EpochReport *r, Graph *g, Device *d, Status *st) {
    RunResult *result = user;
    result->train_loss = r->train_loss;
    result->samples_per_second = r->samples_per_second;
    if (r->has_test) {
        result->test_accuracy = r->test.accuracy;
        result->test_loss = r->test.loss;
    }
    return 0;
}

static void on_notice(void *user, const char *line) {
    RunResult *result = user;
    result->notices++;
    size_t used = strlen(result->all_notices);
    snprintf(result->all_notices + used, sizeof result->all_notices - used, "  notice: %s\n",
             line);
    if (strstr(line, "micro-batches of")) {
        result->split_notices++;
        snprintf(result->split_notice, sizeof result->split_notice, "%s", line);
    }
}

static void model_path(const char *model, char *path, size_t size) {
    snprintf(path, size, "%s/models/%s.model", TRAINER_SOURCE_DIR, model);
}

// No bundled Fashion-MNIST model reads several channels, and only such an input gets a
// to_nhwc layer (graph_set_layouts): this one trains on colour_copy's images. On the CPU
// its epoch reaches 0.764 test accuracy (MIN_ACCURACY is 0.70).
#define COLOUR_MODEL "colour"
static const char *const colour_model_text =
    "input shape=3x28x28 dtype=f32\n"
    "conv2d filters=16 kernel=3 pad=same act=relu\n"
    "maxpool size=2\n"
    "conv2d filters=32 kernel=3 pad=same act=relu\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense units=64 act=relu\n"
    "dense units=10\n"
    "loss softmax_cross_entropy\n"
    "optimizer adam lr=0.002\n"
    "train batch=128 epochs=1 seed=1\n";
// to_nhwc, then each convolution, its act and its maxpool.
#define COLOUR_NHWC_LAYERS 7

static int model_read(const char *model, ModelFile *file, Status *st) {
    if (!strcmp(model, COLOUR_MODEL))
        return model_file_parse_text("colour (test_cuda_train.c)", colour_model_text, file, st);
    char path[1024];
    model_path(model, path, sizeof path);
    return model_file_read(path, file, st);
}

// The images in three channels that differ (x, 255 - x, x^2 / 255), so that a conversion
// that mixed or swapped channels would change what the network computes.
static int colour_copy(const Dataset *gray, Dataset *colour) {
    memset(colour, 0, sizeof *colour);
    size_t pixels = (size_t)gray->height * gray->width;
    colour->images = malloc((size_t)gray->count * 3 * pixels);
    colour->labels = malloc((size_t)gray->count);
    if (!colour->images || !colour->labels) {
        dataset_free(colour);
        return -1;
    }
    snprintf(colour->source, sizeof colour->source, "%.480s in three channels", gray->source);
    colour->count = gray->count;
    colour->channels = 3;
    colour->height = gray->height;
    colour->width = gray->width;
    colour->label_max = gray->label_max;
    memcpy(colour->labels, gray->labels, (size_t)gray->count);
    for (int i = 0; i < gray->count; i++) {
        const uint8_t *x = gray->images + (size_t)i * pixels;
        uint8_t *y = colour->images + (size_t)i * 3 * pixels;
        for (size_t p = 0; p < pixels; p++) {
            y[p] = x[p];
            y[pixels + p] = (uint8_t)(255 - x[p]);
            y[2 * pixels + p] = (uint8_t)(x[p] * x[p] / 255);
        }
    }
    return 0;
}

// How a run differs from the default: FP32 only (--no-tf32), or the images between
// convolutions laid out NHWC (--layout nhwc).
enum { RUN_NO_TF32 = 1, RUN_NHWC = 2 };

// One epoch of `model` on device `spec` (memory_limit may be NULL), laid out as the device
// is asked to (graph_set_layouts, as the CLI does). Returns the status code of the first
// failure, with *st describing it.
static int train_once(const char *model, const char *spec, const char *memory_limit,
                      unsigned run_flags, const Dataset *train, const Dataset *test,
                      RunResult *out, Status *st) {
    memset(out, 0, sizeof *out);
    ModelFile file;
    Graph g;
    RunConfig config;
    memset(&g, 0, sizeof g);
    int rc = model_read(model, &file, st);
    if (rc) return rc;
    rc = graph_build(&file, &g, &config, st);
    if (rc) {
        model_file_free(&file);
        return rc;
    }
    config.train.epochs = 1;
    Device d;
    char notice[512];
    DeviceOptions options = {.spec = spec, .memory_limit = memory_limit, .mode = ALLOC_GROW,
                             .no_tf32 = (run_flags & RUN_NO_TF32) != 0,
                             .nhwc = (run_flags & RUN_NHWC) != 0};
    rc = device_open(&options, &d, notice, sizeof notice, st);
    if (!rc) {
        if (notice[0]) printf("  notice: %s\n", notice);
        rc = graph_set_layouts(&g, d.backend->nhwc_activations, st);
        out->nhwc_layers = graph_nhwc_layers(&g);
        if (!rc) rc = graph_check_dataset(&g, train, "fashion-mnist train", st);
        if (!rc) rc = graph_check_dataset(&g, test, "fashion-mnist test", st);
        if (!rc) rc = graph_init_params(&g, d.backend, &d.alloc, (uint64_t)config.train.seed, st);
        TrainHooks hooks = {.user = out, .on_step = on_step, .on_epoch = on_epoch,
                            .on_notice = on_notice};
        if (!rc) rc = train_model(&g, &config, &d, train, test, &hooks, NULL, st);
        out->peak_reserved = d.alloc.stats.peak_reserved;
        out->limit = d.alloc.limit;
        graph_free(&g);
        device_close(&d);
    } else {
        graph_free(&g);
    }
    model_file_free(&file);
    return rc;
}

static void print_run(const char *model, const char *where, const RunResult *r) {
    printf("  %-6s %-22s first loss %.5f  train loss %.4f  test acc %.4f (loss %.4f)  "
           "%.0f samples/s  peak %.1f MiB  %d NHWC layers\n", model, where, r->first_loss,
           r->train_loss, r->test_accuracy, r->test_loss, r->samples_per_second,
           (double)r->peak_reserved / (1 << 20), r->nhwc_layers);
    fflush(stdout);
}

// cnn-bn's trunk in NHWC: two of conv2d, batchnorm, its act and maxpool (`trainer check`).
#define CNN_BN_NHWC_LAYERS 8

static double relative(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-12); }

// One GPU run against the CPU's.
static void compare_runs(const char *model, const char *where, const RunResult *gpu,
                         const RunResult *cpu, double first_loss_rtol) {
    if (!(relative(gpu->first_loss, cpu->first_loss) <= first_loss_rtol)) {
        fprintf(stderr, "%s on %s: first-step loss %.7f vs cpu %.7f (relative difference %.2g > "
                "%g): the forward pass differs\n", model, where, gpu->first_loss, cpu->first_loss,
                relative(gpu->first_loss, cpu->first_loss), first_loss_rtol);
        test_failures++;
    }
    if (!(relative(gpu->train_loss, cpu->train_loss) <= TRAIN_LOSS_RTOL)) {
        fprintf(stderr, "%s on %s: epoch training loss %.4f vs cpu %.4f (relative difference "
                "%.2g > %g)\n", model, where, gpu->train_loss, cpu->train_loss,
                relative(gpu->train_loss, cpu->train_loss), TRAIN_LOSS_RTOL);
        test_failures++;
    }
    if (!(fabs(gpu->test_accuracy - cpu->test_accuracy) <= ACCURACY_TOLERANCE)) {
        fprintf(stderr, "%s on %s: test accuracy %.4f vs cpu %.4f: more than %.0f points apart\n",
                model, where, gpu->test_accuracy, cpu->test_accuracy, 100 * ACCURACY_TOLERANCE);
        test_failures++;
    }
    if (!(gpu->test_accuracy > MIN_ACCURACY)) {
        fprintf(stderr, "%s on %s: test accuracy %.4f, want above %.2f after one epoch\n", model,
                where, gpu->test_accuracy, MIN_ACCURACY);
        test_failures++;
    }
}

// GPU (TF32 allowed, then FP32 only, then TF32 with NHWC images between the convolutions)
// against CPU, same model, data and seed: for lenet the third run checks --layout nhwc
// end to end. nhwc_only runs the third alone (gpu_out is then left alone).
static void gpu_training_matches_cpu(const char *model, const Dataset *train, const Dataset *test,
                                     int expect_nhwc, int nhwc_only, RunResult *gpu_out) {
    Status st;
    RunResult cpu, gpu;
    status_clear(&st);
    if (train_once(model, "cpu", NULL, 0, train, test, &cpu, &st)) {
        report_status("training on the CPU", &st);
        test_failures++;
        return;
    }
    print_run(model, "cpu", &cpu);
    static const unsigned runs[] = {0, RUN_NO_TF32, RUN_NHWC};
    static const char *const names[] = {"cuda:0", "cuda:0 --no-tf32", "cuda:0 --layout nhwc"};
    for (int k = nhwc_only ? 2 : 0; k < 3; k++) {
        status_clear(&st);
        if (train_once(model, "cuda:0", NULL, runs[k], train, test, &gpu, &st)) {
            fprintf(stderr, "%s: ", model);
            report_status(names[k], &st);
            test_failures++;
            continue;
        }
        print_run(model, names[k], &gpu);
        compare_runs(model, names[k], &gpu, &cpu,
                     runs[k] & RUN_NO_TF32 ? FIRST_LOSS_RTOL_FP32 : FIRST_LOSS_RTOL_TF32);
        int want = runs[k] & RUN_NHWC ? expect_nhwc : 0;
        if (gpu.nhwc_layers != want) {
            fprintf(stderr, "%s on %s: %d layers NHWC, expected %d\n", model, names[k],
                    gpu.nhwc_layers, want);
            test_failures++;
        }
        if (k == 0) *gpu_out = gpu;
    }
}

// Under a memory limit too small to hold the dataset as well, batches are staged through
// the host: training must work the same, and the limit must hold on the GPU.
static void staged_dataset_trains_like_resident(const Dataset *train, const Dataset *test,
                                                const RunResult *resident) {
    Status st;
    status_clear(&st);
    RunResult staged;
    if (train_once("mlp", "cuda:0", STAGING_LIMIT, 0, train, test, &staged, &st)) {
        report_status("training mlp on cuda:0 with --memory-limit " STAGING_LIMIT, &st);
        test_failures++;
        return;
    }
    print_run("mlp", "cuda:0 limit " STAGING_LIMIT, &staged);
    printf("%s", staged.all_notices);
    CHECK_CONTAINS(staged.all_notices, "staged through the host");
    if (!(staged.peak_reserved <= staged.limit && staged.limit > 0)) {
        fprintf(stderr, "mlp on cuda:0 with --memory-limit %s: peak reserved %zu bytes, limit "
                "%zu\n", STAGING_LIMIT, staged.peak_reserved, staged.limit);
        test_failures++;
    }
    if (!(fabs(staged.test_accuracy - resident->test_accuracy) <= ACCURACY_TOLERANCE)) {
        fprintf(stderr, "mlp on cuda:0: test accuracy %.4f with the dataset staged through the "
                "host vs %.4f with it on the device\n", staged.test_accuracy,
                resident->test_accuracy);
        test_failures++;
    }
}

static void expect_out_of_memory(const char *what, int rc, const Status *st) {
    if (rc != STATUS_OUT_OF_MEMORY) {
        fprintf(stderr, "%s: got %s (%d), want STATUS_OUT_OF_MEMORY: %s\n", what,
                status_code_name((StatusCode)rc), rc, st->message);
        test_failures++;
        return;
    }
    printf("  %s: out of memory, as it should be: %s\n", what, st->message);
    CHECK_CONTAINS(st->message, "out of memory");
}

// --memory-limit 1M cannot hold the MLP's parameters and gradients (1.9 MB): a status,
// and the device stays usable.
static void memory_limit_is_out_of_memory_not_a_crash(const Dataset *train, const Dataset *test) {
    Status st;
    status_clear(&st);
    RunResult r;
    int rc = train_once("mlp", "cuda:0", "1M", 0, train, test, &r, &st);
    expect_out_of_memory("mlp on cuda:0 with --memory-limit 1M", rc, &st);
    if (r.limit && r.peak_reserved > r.limit) {
        fprintf(stderr, "mlp under 1M: peak reserved %zu bytes is over the limit\n",
                r.peak_reserved);
        test_failures++;
    }
}

// 24M holds LeNet's parameters, gradients and Adam state (13.7 MB) but not its batch-128
// activations (~50 MB), nor beside them the 7.5 MiB training set (staged through the host,
// its own notice): training splits each batch into micro-batches (said once), keeps
// under the limit, and learns what the unlimited GPU run learns (same data order and
// dropout masks; only summation order and cuDNN's algorithms for the smaller batch
// differ, hence the accuracy tolerance, not equality). Where cuDNN's fastest algorithms
// want more workspace than one sample leaves room for (17.5 MiB on an H200), the same one
// notice says the convolutions went on in their least workspace (graph_limit_workspace).
static void lenet_under_a_limit_splits_and_learns(const Dataset *train, const Dataset *test,
                                                  const RunResult *unlimited) {
    Status st;
    status_clear(&st);
    RunResult r;
    int rc = train_once("lenet", "cuda:0", "24M", 0, train, test, &r, &st);
    if (rc) {
        report_status("lenet on cuda:0 with --memory-limit 24M", &st);
        test_failures++;
        return;
    }
    print_run("lenet", "cuda:0 limit 24M", &r);
    printf("%s", r.all_notices);
    CHECK_INT_EQ(r.split_notices, 1);
    CHECK_CONTAINS(r.split_notice, "on cuda:0");
    CHECK(r.peak_reserved <= r.limit);
    if (unlimited->test_accuracy > 0 &&
        !(fabs(r.test_accuracy - unlimited->test_accuracy) <= ACCURACY_TOLERANCE)) {
        fprintf(stderr, "lenet on cuda:0: test accuracy %.4f under --memory-limit 24M vs %.4f "
                "unlimited\n", r.test_accuracy, unlimited->test_accuracy);
        test_failures++;
    }
}

// With no limit, a request for four times the GPU's memory reaches cudaMalloc, whose
// failure must come back as STATUS_OUT_OF_MEMORY; an ordinary allocation then works.
static void device_out_of_memory_is_a_status(void) {
    Status st;
    status_clear(&st);
    Device d;
    char notice[512];
    DeviceOptions options = {.spec = "cuda:0", .mode = ALLOC_GROW};
    if (device_open(&options, &d, notice, sizeof notice, &st)) {
        report_status("device_open cuda:0", &st);
        test_failures++;
        return;
    }
    size_t total = d.backend->total_memory(d.backend);
    void *p = NULL;
    int rc = alloc_get(&d.alloc, total ? total * 4 : (size_t)1 << 50, &p, &st);
    expect_out_of_memory("an allocation of 4x the GPU's memory", rc, &st);
    CHECK(p == NULL);
    CHECK(d.alloc.stats.out_of_memory >= 1);
    status_clear(&st);
    rc = alloc_get(&d.alloc, (size_t)64 << 20, &p, &st);
    if (rc) report_status("a 64 MiB allocation after the out-of-memory", &st);
    CHECK_INT_EQ(rc, 0);
    if (!rc) {
        rc = d.backend->fill(d.backend, p, 1.0f, ((size_t)64 << 20) / sizeof(float), &st);
        if (!rc) rc = d.backend->synchronize(d.backend, &st);
        if (rc) report_status("using the GPU after the out-of-memory", &st);
        CHECK_INT_EQ(rc, 0);
        alloc_put(&d.alloc, p);
    }
    device_close(&d);
}

int main(void) {
    // A GPU first: the cheap question.
    int probe = cuda_probe_or_skip();
    if (probe) return probe;

    const char *dir = getenv("TRAINER_FASHION_MNIST_DIR");
    char spec[1024];
    if (dir && dir[0]) snprintf(spec, sizeof spec, "idx:%s", dir);
    else snprintf(spec, sizeof spec, "fashion-mnist");
    Dataset train = {0}, test = {0};
    Status st;
    status_clear(&st);
    if (dataset_load(spec, "train", &train, &st) || dataset_load(spec, "test", &test, &st)) {
        char text[2048];
        status_format(&st, text, sizeof text);
        printf("skipped: Fashion-MNIST is not available (%s): %s", spec, text);
        dataset_free(&train);
        dataset_free(&test);
        return 77;
    }
    dataset_truncate(&train, TRAIN_SAMPLES);
    printf("data %s: %d train, %d test samples\n", spec, train.count, test.count);

    RunResult mlp_gpu = {0}, lenet_gpu = {0};
    gpu_training_matches_cpu("mlp", &train, &test, 0, 0, &mlp_gpu);
    // lenet: conv2d1 and its relu, maxpool1, conv2d2 and its relu, maxpool2
    gpu_training_matches_cpu("lenet", &train, &test, 6, 0, &lenet_gpu);
    // cnn-bn in NHWC: its batchnorms on channels-last rows (cuda_batchnorm_rows.cu) in a
    // whole training run, the NCHW kernels having their own runs in tests/gpu/bench.sh and
    // precision_train.sh.
    gpu_training_matches_cpu("cnn-bn", &train, &test, CNN_BN_NHWC_LAYERS, 1, NULL);
    // A three-channel input in NHWC: to_nhwc's layout_convert (forward only: the input
    // needs no gradient) and the convolutions after it, against the CPU.
    Dataset colour_train = {0}, colour_test = {0};
    if (colour_copy(&train, &colour_train) || colour_copy(&test, &colour_test)) {
        fprintf(stderr, "out of host memory for the three-channel images\n");
        test_failures++;
    } else {
        gpu_training_matches_cpu(COLOUR_MODEL, &colour_train, &colour_test, COLOUR_NHWC_LAYERS,
                                 1, NULL);
    }
    dataset_free(&colour_train);
    dataset_free(&colour_test);
    if (mlp_gpu.test_accuracy > 0) staged_dataset_trains_like_resident(&train, &test, &mlp_gpu);
    memory_limit_is_out_of_memory_not_a_crash(&train, &test);
    lenet_under_a_limit_splits_and_learns(&train, &test, &lenet_gpu);
    device_out_of_memory_is_a_status();

    dataset_free(&train);
    dataset_free(&test);
    return test_exit_code("test_cuda_train");
}
