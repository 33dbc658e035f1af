// The run's options decided once, without a device: the batch (the model file's, --batch
// over it, split over mpirun's ranks or refused), the replicas and their devices (--gpus,
// --replicas), the levers and layout that need CUDA, and the precision on made-up devices
// (a CPU, a Turing and a Hopper GPU), each refusal with its exit-code kind and words; and
// the device options' and --precision's words as typed.
#include "base/lever.h"
#include "check.h"
#include "core/run_options.h"

static const RunDeviceFacts cpu = {.target = {.device = "cpu"}, .is_cpu = 1};
static const RunDeviceFacts turing = {
    .target = {.device = "cuda:0", .gpu = "Tesla T4", .compute = 75}, .is_cuda = 1};
static const RunDeviceFacts hopper = {
    .target = {.device = "cuda:1", .gpu = "NVIDIA H100 80GB HBM3", .compute = 90},
    .is_cuda = 1};

static char said[512];
static int said_count;
static void remember(void *user, const char *line) {
    (void)user;
    snprintf(said, sizeof said, "%s", line);
    said_count++;
}
static const RunNotice notice = {remember, NULL};

static RunConfig model_config(int batch) {
    RunConfig config;
    memset(&config, 0, sizeof config);
    config.train.batch = batch;
    return config;
}

static int resolve(const RunConfig *config, const RunRequest *request, RunOptions *out,
                   Status *st) {
    status_clear(st);
    said[0] = '\0';
    said_count = 0;
    return run_options_resolve(config, request, &notice, out, st);
}

static void batch_is_the_model_files_unless_given(void) {
    RunConfig config = model_config(128);
    RunOptions o;
    Status st;
    CHECK_INT_EQ(resolve(&config, &(RunRequest){0}, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 128);
    CHECK_INT_EQ(o.replicas, 1);
    CHECK_INT_EQ(o.device_count, 1);
    CHECK(strcmp(o.devices[0], "auto") == 0);
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.batch = "50", .device = "cpu"}, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 50);
    CHECK(strcmp(o.devices[0], "cpu") == 0);
    // auto: the model file's stands until batch_auto chooses.
    RunRequest automatic = {.batch = "auto", .purpose = RUN_TRAIN};
    CHECK_INT_EQ(resolve(&config, &automatic, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 128);
    CHECK_INT_EQ(o.batch_auto, 1);
}

// Refused as tools/ words any bad number, with the command's help in the hint: the exact
// words the e2e tests and users see.
static void check_batch_refused(const RunConfig *config, RunRequest request,
                                const char *message, const char *hint) {
    RunOptions o;
    Status st;
    CHECK_INT_EQ(resolve(config, &request, &o, &st), STATUS_BAD_INPUT);
    const char *got[2] = {st.message, st.hint}, *want[2] = {message, hint};
    for (int i = 0; i < 2; i++) {
        if (strcmp(got[i], want[i]) == 0) continue;
        fprintf(stderr, "--batch %s: got \"%s\", want \"%s\"\n", request.batch, got[i],
                want[i]);
        test_failures++;
    }
}

// eval, check and bench take --batch over the model file's (bench conv: over none, the
// device's chosen later), each within its range; only train takes auto.
static void each_purpose_decides_its_batch(void) {
    RunConfig config = model_config(128), none = model_config(0);
    RunOptions o;
    Status st;
    const RunPurpose purposes[] = {RUN_EVAL, RUN_CHECK, RUN_BENCH};
    const char *commands[] = {"eval", "check", "bench"};
    for (int i = 0; i < 3; i++) {
        RunRequest request = {.purpose = purposes[i], .command = commands[i]};
        CHECK_INT_EQ(resolve(&config, &request, &o, &st), 0);
        CHECK_INT_EQ(o.batch, 128);
        request.batch = "1048576";
        CHECK_INT_EQ(resolve(&config, &request, &o, &st), 0);
        CHECK_INT_EQ(o.batch, 1 << 20);
        CHECK_INT_EQ(o.batch_auto, 0);
    }
    RunRequest conv = {.purpose = RUN_DEVICE_ONLY, .command = "bench"};
    CHECK_INT_EQ(resolve(&none, &conv, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 0);
    conv.batch = "1";
    CHECK_INT_EQ(resolve(&none, &conv, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 1);
    check_batch_refused(&config, (RunRequest){.batch = "0", .purpose = RUN_EVAL,
                                              .command = "eval"},
                        "--batch 0: expected a whole number from 1 to 1048576",
                        "see `trainer eval --help`");
    check_batch_refused(&config, (RunRequest){.batch = "-5", .purpose = RUN_CHECK,
                                              .command = "check"},
                        "--batch -5: expected a whole number from 1 to 1048576",
                        "see `trainer check --help`");
    check_batch_refused(&config, (RunRequest){.batch = "1048577", .purpose = RUN_BENCH,
                                              .command = "bench"},
                        "--batch 1048577: expected a whole number from 1 to 1048576",
                        "see `trainer bench --help`");
    check_batch_refused(&none, (RunRequest){.batch = "8x", .purpose = RUN_DEVICE_ONLY,
                                            .command = "bench"},
                        "--batch 8x: expected a whole number from 1 to 1048576",
                        "see `trainer bench --help`");
    check_batch_refused(&config, (RunRequest){.batch = "auto", .purpose = RUN_EVAL,
                                              .command = "eval"},
                        "--batch auto: expected a whole number from 1 to 1048576",
                        "see `trainer eval --help`");
    check_batch_refused(&config, (RunRequest){.batch = " 4", .purpose = RUN_CHECK,
                                              .command = "check"},
                        "--batch  4: expected a whole number from 1 to 1048576",
                        "see `trainer check --help`");
}

// train also takes auto, and a near miss of it is named.
static void train_batch_takes_auto(void) {
    RunConfig config = model_config(64);
    check_batch_refused(&config, (RunRequest){.batch = "0", .purpose = RUN_TRAIN,
                                              .command = "train"},
                        "--batch 0: expected a whole number from 1 to 1048576, or auto",
                        "see `trainer train --help`");
    check_batch_refused(&config, (RunRequest){.batch = "atuo", .purpose = RUN_TRAIN,
                                              .command = "train"},
                        "--batch atuo: expected a whole number from 1 to 1048576, or auto",
                        "did you mean '--batch auto'?");
}

static void ranks_share_the_batch_or_refuse_it(void) {
    RunConfig config = model_config(100);
    RunOptions o;
    Status st;
    RunRequest even = {.world_size = 4, .world_rank = 0};
    CHECK_INT_EQ(resolve(&config, &even, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 100);
    RunRequest odd = {.world_size = 3, .world_rank = 0};
    CHECK_INT_EQ(resolve(&config, &odd, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "the batch of 100 samples does not split evenly over the 3 "
                               "processes");
    CHECK_CONTAINS(st.hint, "give --batch 99 (or 102)");
    odd.drop_remainder = 1;
    CHECK_INT_EQ(resolve(&config, &odd, &o, &st), 0);
    CHECK_INT_EQ(o.batch, 99);
    CHECK_INT_EQ(said_count, 1);
    CHECK_CONTAINS(said, "--drop-remainder: batch 100 over 3 processes; training with batch 99 "
                         "(33 per process)");
    odd.world_rank = 1;  // the other ranks say nothing
    CHECK_INT_EQ(resolve(&config, &odd, &o, &st), 0);
    CHECK_INT_EQ(said_count, 0);
    RunRequest automatic = {.world_size = 3, .batch = "auto", .purpose = RUN_TRAIN};
    CHECK_INT_EQ(resolve(&config, &automatic, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--batch auto is not available with mpirun yet");
}

static void replicas_come_from_gpus_or_replicas(void) {
    RunConfig config = model_config(64);
    RunOptions o;
    Status st;
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.gpus = "0,1,1"}, &o, &st), 0);
    CHECK_INT_EQ(o.replicas, 3);
    CHECK_INT_EQ(o.device_count, 3);
    CHECK(strcmp(o.devices[2], "cuda:1") == 0);
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.replicas = 4, .device = "cpu"}, &o, &st), 0);
    CHECK_INT_EQ(o.replicas, 4);
    CHECK_INT_EQ(o.device_count, 1);
    CHECK_INT_EQ(run_options_share(10, 4, 0), 3);
    CHECK_INT_EQ(run_options_share(10, 4, 1), 3);
    CHECK_INT_EQ(run_options_share(10, 4, 2), 2);
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.gpus = "0,x"}, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--gpus 0,x: expected GPU ordinals separated by commas");
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.gpus = "0", .replicas = 2}, &o, &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--gpus and --replicas both choose the replicas");
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.gpus = "0", .device = "cpu"}, &o, &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--gpus 0 with --device cpu: --gpus chooses CUDA devices");
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.gpus = ""}, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--gpus needs at least one GPU ordinal");
}

static void cuda_only_options_need_cuda(void) {
    RunConfig config = model_config(64);
    RunOptions o;
    Status st;
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.device = "cpu", .nhwc = 1}, &o, &st), 0);
    CHECK_INT_EQ(run_options_check_spec(&o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--layout nhwc: NHWC images are for a GPU's convolutions; the "
                               "device is cpu");
    // auto may fall back to the CPU: told once it has opened.
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.disabled_levers = 1}, &o, &st), 0);
    CHECK_INT_EQ(run_options_check_spec(&o, &st), 0);
    CHECK_INT_EQ(run_options_check_device(&o, &cpu, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--without: levers are the CUDA backend's; the device is cpu");
    CHECK_INT_EQ(run_options_check_device(&o, &hopper, &st), 0);
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.replicas = 2, .device = "cuda"}, &o, &st), 0);
    CHECK_INT_EQ(run_options_check_device(&o, &turing, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--replicas runs replicas on the CPU, but the device is cuda:0");
    CHECK_INT_EQ(run_options_check_device(&o, &cpu, &st), 0);
}

static void precision_is_decided_on_the_described_device(const Graph *g) {
    RunConfig config = model_config(64);
    PrecisionConfig bf16 = {.precision = PRECISION_BF16, .source = "--precision"};
    PrecisionConfig tf32 = {.precision = PRECISION_TF32, .source = "--precision"};
    RunOptions o;
    Status st;
    Precision computed = PRECISION_DEFAULT;
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.precision = &bf16}, &o, &st), 0);
    CHECK_INT_EQ(run_options_precision(&o, g, &cpu, &notice, &computed, &st), STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "--precision bf16: layer 'dense1' (dense) would compute in bf16, "
                               "but the CPU backend computes in fp32 only");
    CHECK_INT_EQ(run_options_precision(&o, g, &turing, &notice, &computed, &st),
                 STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "cuda:0 (Tesla T4) has compute capability 7.5; bf16 needs 8.0");
    status_clear(&st);
    CHECK_INT_EQ(run_options_precision(&o, g, &hopper, &notice, &computed, &st), 0);
    CHECK_INT_EQ(computed, PRECISION_BF16);
    CHECK_INT_EQ(resolve(&config, &(RunRequest){.precision = &tf32}, &o, &st), 0);
    CHECK_INT_EQ(run_options_precision(&o, g, &cpu, &notice, &computed, &st), 0);
    CHECK_INT_EQ(computed, PRECISION_FP32);
    CHECK_CONTAINS(said, "--precision tf32 on the CPU computes in fp32");
    CHECK_INT_EQ(resolve(&config, &(RunRequest){0}, &o, &st), 0);
    CHECK_INT_EQ(run_options_precision(&o, g, &hopper, &notice, &computed, &st), 0);
    CHECK_INT_EQ(computed, PRECISION_TF32);
    CHECK_INT_EQ(said_count, 0);
}

// A --device longer than any device's name is refused whole, never cut to another name
// (cuda:00000000001 cut to 15 bytes would open GPU 0).
static void long_device_refused_whole(void) {
    RunConfig config = model_config(64);
    RunOptions o;
    Status st;
    RunRequest request = {.device = "definitely-not-a-device"};
    CHECK_INT_EQ(resolve(&config, &request, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "unknown device 'definitely-not-a-device'");
    request.device = "cuda:00000000001";
    CHECK_INT_EQ(resolve(&config, &request, &o, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "'cuda:00000000001'");
    request.device = "cuda:1";
    CHECK_INT_EQ(resolve(&config, &request, &o, &st), 0);
    CHECK(strcmp(o.devices[0], "cuda:1") == 0);
}

// The device options' words, as typed: each refused with the words it takes.
static void device_option_words(void) {
    Status st;
    status_clear(&st);
    AllocMode mode = ALLOC_RESERVE;
    CHECK_INT_EQ(run_options_read_memory_mode(NULL, NULL, &mode, &st), 0);
    CHECK_INT_EQ(mode, ALLOC_GROW);
    CHECK_INT_EQ(run_options_read_memory_mode("reserve", "2G", &mode, &st), 0);
    CHECK_INT_EQ(mode, ALLOC_RESERVE);
    CHECK_INT_EQ(run_options_read_memory_mode("reserve", NULL, &mode, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--memory-mode reserve needs --memory-limit");
    CHECK_INT_EQ(run_options_read_memory_mode("wild", NULL, &mode, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--memory-mode wild: expected grow or reserve");
    unsigned levers = 1;
    CHECK_INT_EQ(run_options_read_levers(NULL, &levers, &st), 0);
    CHECK_INT_EQ(levers, 0);
    CHECK_INT_EQ(run_options_read_levers("conv-fused,,bias-gradient", &levers, &st), 0);
    CHECK_INT_EQ(levers, LEVER_BIT(LEVER_CONV_FUSED) | LEVER_BIT(LEVER_BIAS_GRADIENT));
    CHECK_INT_EQ(run_options_read_levers("conv-fused,bias-gradiant", &levers, &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "unknown lever 'bias-gradiant'; did you mean 'bias-gradient'?");
    CHECK_INT_EQ(run_options_read_levers(",", &levers, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--without: no lever named");
    // 600 characters: the lever at the end was once cut off and left on without a word.
    char long_list[601];
    memset(long_list, ',', sizeof long_list - 1);
    memcpy(long_list, "conv-fused", 10);
    memcpy(long_list + sizeof long_list - 1 - 13, "bias-gradient", 13);
    long_list[sizeof long_list - 1] = '\0';
    CHECK_INT_EQ(run_options_read_levers(long_list, &levers, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--without: the value is 600 characters long; at most 511 are "
                               "read");
    CHECK_CONTAINS(st.hint, "name each lever once, comma-separated: ");
    int nhwc = 1;
    CHECK_INT_EQ(run_options_read_layout(NULL, &nhwc, &st), 0);
    CHECK_INT_EQ(nhwc, 0);
    CHECK_INT_EQ(run_options_read_layout("nhwc", &nhwc, &st), 0);
    CHECK_INT_EQ(nhwc, 1);
    CHECK_INT_EQ(run_options_read_layout("sideways", &nhwc, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--layout sideways: expected nchw or nhwc");
}

// --precision over the model file's, --no-tf32 as fp32, the two contradicting refused.
static void precision_option_words(void) {
    Status st;
    status_clear(&st);
    PrecisionConfig p = {.precision = PRECISION_BF16, .line = 7, .initial_loss_scale = 8};
    CHECK_INT_EQ(run_options_read_precision(NULL, 0, &p, &st), 0);
    CHECK_INT_EQ(p.precision, PRECISION_BF16);  // the model file's stands
    CHECK_INT_EQ(p.line, 7);
    CHECK_INT_EQ(run_options_read_precision("fp16", 0, &p, &st), 0);
    CHECK_INT_EQ(p.precision, PRECISION_FP16);
    CHECK_INT_EQ(p.line, 0);
    CHECK(p.initial_loss_scale == 8);
    CHECK(strcmp(p.source, "--precision") == 0);
    CHECK_INT_EQ(run_options_read_precision(NULL, 1, &p, &st), 0);
    CHECK_INT_EQ(p.precision, PRECISION_FP32);
    CHECK(strcmp(p.source, "--no-tf32") == 0);
    CHECK_INT_EQ(run_options_read_precision("bf17", 0, &p, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--precision bf17: unknown precision; did you mean 'bf16'?");
    CHECK_INT_EQ(run_options_read_precision("bf16", 1, &p, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "contradicts --precision bf16");
}

int main(void) {
    batch_is_the_model_files_unless_given();
    each_purpose_decides_its_batch();
    train_batch_takes_auto();
    ranks_share_the_batch_or_refuse_it();
    replicas_come_from_gpus_or_replicas();
    cuda_only_options_need_cuda();
    long_device_refused_whole();
    device_option_words();
    precision_option_words();
    ModelFile f;
    Graph g;
    RunConfig config;
    Status st;
    status_clear(&st);
    const char *text = "input shape=4 dtype=f32\ndense name=dense1 units=3\n"
                       "loss softmax_cross_entropy\n";
    CHECK_INT_EQ(model_file_parse_text("net.model", text, &f, &st), 0);
    if (graph_build(&f, &g, &config, &st) == 0) {
        precision_is_decided_on_the_described_device(&g);
        graph_free(&g);
    } else {
        fprintf(stderr, "build failed: %s\n", st.message);
        test_failures++;
    }
    model_file_free(&f);
    return test_exit_code("test_run_options");
}
