// `trainer lab [SCENARIO]`: make a failure happen on purpose and show, one above the
// other, the error as the CUDA API (or a framework) words it and trainer's diagnosis of it.
//
// Each scenario runs for real as far as the machine allows: on a machine without a GPU
// the CUDA-only ones (illegal-address, no-kernel-image) say why they cannot run and exit
// 3, and bad-launch and oom run their trainer half only. Exit codes of one scenario: 0 the
// failure was shown and diagnosed, 3 it needs a GPU this machine lacks, 1 the failure did
// not come as expected. `lab all` runs every scenario in its own process (a scenario that
// breaks the CUDA context must not take the others with it) and exits 0 when each one
// either ran or could not run here, 1 when any went wrong.
#define _POSIX_C_SOURCE 200809L  // fork, pipe
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/train.h"
#include "kernels/cuda/cuda_doctor.h"
#include "kernels/cuda/cuda_lab.h"
#include "kernels/launch_check.h"
#include "tools/cli.h"
#include "base/suggest.h"

// tools/cmd_doctor.c: the driver and library table `trainer doctor` prints.

static const OptionSpec lab_options[] = {
    {NULL, NULL, NULL},
};

const Command lab_command = {
    .name = "lab",
    .usage = "[SCENARIO | all]",
    .summary = "trigger a CUDA failure on purpose and show trainer's diagnosis",
    .options = lab_options,
    .run = run_lab,
};

// Exit codes of one scenario.
enum { LAB_SHOWN = 0, LAB_WENT_WRONG = 1, LAB_NEEDS_GPU = 3 };

typedef enum LabNeeds { NEEDS_NOTHING, NEEDS_GPU_FOR_RAW, NEEDS_GPU } LabNeeds;

typedef struct Scenario {
    const char *name;
    const char *summary;
    LabNeeds needs;
    int (*run)(void);
} Scenario;

// ---- how every scenario shows its halves ------------------------------------------------

static void print_block(const char *title, const char *text) {
    printf("%s\n", title);
    for (const char *line = text; *line;) {
        size_t length = strcspn(line, "\n");
        printf("  %.*s\n", (int)length, line);
        line += length;
        if (*line) line++;
    }
}

static void print_raw(const char *text) { print_block("raw error (CUDA runtime API):", text); }

static void print_framework(const char *text) {
    print_block("what a framework shows (PyTorch):", text);
}

static void print_cannot_run(const char *what, const char *why) {
    printf("cannot run %s here: %s\n", what, why);
}

// Trainer's own words for the failure, exactly as `trainer train` would print them.
static void print_diagnosis(const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    printf("trainer's diagnosis (exit code %d in trainer terms):\n%s", status_exit_code(st), text);
    if (st->error_name[0]) printf("  more: trainer explain %s\n", st->error_name);
}

// ---- invalid-device ---------------------------------------------------------------------

static int lab_invalid_device(void) {
    int ordinal = 7, shown = 1;
    LabOutcome raw;
    Status st;
    status_clear(&st);
    if (cuda_lab_invalid_device(&ordinal, &raw, &st) == 0) {
        print_raw(raw.raw);
        if (!raw.triggered) {
            printf("lab: cudaSetDevice(%d) succeeded; expected it to fail\n", ordinal);
            shown = 0;
        } else if (strcmp(raw.diagnosis.error_name, "cudaErrorInvalidDevice") != 0) {
            printf("  (with no usable driver the runtime fails before it looks at the ordinal; "
                   "on a GPU machine the answer is cudaErrorInvalidDevice (101): invalid device "
                   "ordinal)\n");
        }
    } else {
        print_cannot_run("the raw cudaSetDevice call", st.message);
    }
    print_framework("RuntimeError: CUDA error: invalid device ordinal\n"
                    "(the driver API's name for it: CUDA_ERROR_INVALID_DEVICE)");
    char spec[32];
    snprintf(spec, sizeof spec, "cuda:%d", ordinal);
    DeviceOptions options = {.spec = spec, .mode = ALLOC_GROW};
    Device device;
    char notice[512];
    status_clear(&st);
    if (device_open(&options, &device, notice, sizeof notice, &st) == 0) {
        device_close(&device);
        printf("lab: --device %s opened; expected it to be refused\n", spec);
        return LAB_WENT_WRONG;
    }
    print_diagnosis(&st);
    return shown && st.code == STATUS_NO_DEVICE ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- oom --------------------------------------------------------------------------------

// A convolution whose output (64 channels of 28x28: 196 KiB a sample, twice with its
// gradient) cannot fit a 256 KiB limit even for one sample, while the parameters (5 KiB)
// and the data do: the first step runs out of memory, tries a pass of one sample (what
// the memory plan falls back to when nothing fits), and only then gives up.
static const char oom_model[] = "input shape=1x28x28 dtype=f32\n"
                                "conv2d filters=64 kernel=3 pad=same act=relu\n"
                                "global_avgpool\n"
                                "dense units=10\n"
                                "loss softmax_cross_entropy\n"
                                "optimizer sgd lr=0.1\n"
                                "train batch=32 epochs=1 seed=1\n";
static const char oom_limit[] = "256K";

static void print_train_notice(void *user, const char *line) {
    printf("trainer: notice: %s\n", line);
}

// A dataset made up in memory: `count` samples of channels x height x width bytes with
// the labels given (or i % 10).
static int make_dataset(Dataset *ds, const char *name, int count, int channels, int height,
                        int width, const uint8_t *labels, Status *st) {
    memset(ds, 0, sizeof *ds);
    size_t sample = (size_t)channels * height * width;
    ds->images = malloc((size_t)count * sample);
    ds->labels = malloc((size_t)count);
    if (!ds->images || !ds->labels) {
        dataset_free(ds);
        return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    }
    snprintf(ds->source, sizeof ds->source, "%s", name);
    ds->count = count;
    ds->channels = channels;
    ds->height = height;
    ds->width = width;
    Rng rng;
    rng_seed(&rng, 7);
    for (size_t i = 0; i < (size_t)count * sample; i++) ds->images[i] = (uint8_t)rng_below(&rng, 256);
    for (int i = 0; i < count; i++) {
        ds->labels[i] = labels ? labels[i] : (uint8_t)(i % 10);
        if (ds->labels[i] > ds->label_max) ds->label_max = ds->labels[i];
    }
    return 0;
}

static int train_until_out_of_memory(Status *st) {
    ModelFile file;
    TRY(model_file_parse_text("lab-oom.model", oom_model, &file, st));
    Graph g;
    RunConfig config;
    int rc = graph_build(&file, &g, &config, st);
    if (rc) {
        model_file_free(&file);
        return rc;
    }
    Dataset ds;
    Device device;
    int device_open_ok = 0;
    rc = make_dataset(&ds, "the lab's random images", 64, 1, 28, 28, NULL, st);
    if (!rc) {
        DeviceOptions options = {.spec = "cpu", .memory_limit = oom_limit, .mode = ALLOC_GROW};
        char notice[512];
        rc = device_open(&options, &device, notice, sizeof notice, st);
        device_open_ok = rc == 0;
    }
    if (!rc) rc = graph_check_dataset(&g, &ds, "the lab's random images", st);
    if (!rc) rc = graph_init_params(&g, device.backend, &device.alloc, 1, st);
    if (!rc) {
        TrainHooks hooks = {.on_notice = print_train_notice};
        rc = train_model(&g, &config, &device, &ds, NULL, &hooks, NULL, st);
    }
    dataset_free(&ds);
    graph_free(&g);
    if (device_open_ok) device_close(&device);
    model_file_free(&file);
    return rc;
}

static int lab_oom(void) {
    LabOutcome raw;
    Status st;
    status_clear(&st);
    int shown = 1;
    if (cuda_lab_oom(&raw, &st) == 0) {
        print_raw(raw.raw);
        if (!raw.triggered) {
            printf("lab: the oversized cudaMalloc succeeded; expected out of memory\n");
            shown = 0;
        } else {
            print_diagnosis(&raw.diagnosis);
        }
    } else {
        print_cannot_run("the raw cudaMalloc of more than the card's memory", st.message);
    }
    print_framework("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
                    "GPU 0 has a total capacity of 79.19 GiB of which 4.81 MiB is free. ...\n"
                    "(the size of the one request that failed, not what the model needs)");
    printf("trainer, training a small CNN (in memory) on the CPU with --memory-limit %s:\n",
           oom_limit);
    printf("%s", oom_model);
    fflush(stdout);
    status_clear(&st);
    if (train_until_out_of_memory(&st) == 0) {
        printf("lab: training fitted in %s; expected out of memory\n", oom_limit);
        return LAB_WENT_WRONG;
    }
    print_diagnosis(&st);
    return shown && st.code == STATUS_OUT_OF_MEMORY ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- bad-launch -------------------------------------------------------------------------

static int lab_bad_launch(void) {
    LaunchConfig config = {.kernel = "lab_empty_kernel", .grid = {1, 1, 1},
                           .block = {2048, 1, 1}, .shared_bytes = 0, .elements = 2048,
                           .index_bits = 32};
    LaunchLimits limits;
    LabOutcome raw;
    Status st;
    status_clear(&st);
    int shown = 1;
    if (cuda_lab_bad_launch(&config, &limits, &raw, &st) == 0) {
        print_raw(raw.raw);
        if (!raw.triggered || !launch_error_is_bad_configuration(raw.api_error)) {
            printf("lab: a launch of 2048 threads per block %s; expected "
                   "cudaErrorInvalidConfiguration (9), or cudaErrorInvalidValue (1) from CUDA "
                   "13 on\n", raw.triggered ? "failed with another error" : "succeeded");
            shown = 0;
        } else if (raw.api_error == LAUNCH_ERROR_INVALID_VALUE) {
            printf("  (CUDA 13 and later say \"invalid argument\" for a block past the "
                   "device's limits; CUDA 12 and earlier, and PyTorch's message, say "
                   "\"invalid configuration argument\")\n");
        }
    } else {
        print_cannot_run("the raw launch of 2048 threads per block", st.message);
        printf("  (on a GPU it fails with cudaErrorInvalidConfiguration (9): invalid "
               "configuration argument, or from CUDA 13 on with cudaErrorInvalidValue (1): "
               "invalid argument; the check below uses the limits every GPU since 7.5 "
               "shares)\n");
        launch_limits_typical(&limits);
    }
    print_framework("RuntimeError: CUDA error: invalid configuration argument\n"
                    "CUDA kernel errors might be asynchronously reported at some other API "
                    "call, so the stacktrace below might be incorrect.");
    printf("trainer checks every launch configuration on the host first:\n");
    status_clear(&st);
    if (launch_check(&limits, &config, &st) == 0) {
        printf("lab: launch_check accepted a block of 2048 threads; expected a refusal\n");
        return LAB_WENT_WRONG;
    }
    print_diagnosis(&st);
    return shown ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- bad-label --------------------------------------------------------------------------

static const char label_model[] = "input shape=16 dtype=f32\n"
                                  "dense units=10\n"
                                  "loss softmax_cross_entropy\n";

static int lab_bad_label(void) {
    static const uint8_t labels[8] = {3, 1, 4, 1, 5, 9, 12, 6};
    print_framework("/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_"
                    "cuda_kernel_2d: block: [0,0,0], thread: [6,0,0] Assertion `t >= 0 && t < "
                    "n_classes` failed.\n"
                    "RuntimeError: CUDA error: device-side assert triggered\n"
                    "(on the CPU: IndexError: Target 12 is out of bounds.)");
    printf("trainer, checking a dataset of 8 samples (labels 3 1 4 1 5 9 12 6) against a "
           "10-class model before the first step:\n");
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    Dataset ds;
    if (model_file_parse_text("lab-bad-label.model", label_model, &file, &st)) {
        print_diagnosis(&st);
        return LAB_WENT_WRONG;
    }
    int rc = graph_build(&file, &g, NULL, &st);
    if (rc) {
        model_file_free(&file);
        print_diagnosis(&st);
        return LAB_WENT_WRONG;
    }
    rc = make_dataset(&ds, "the lab dataset", 8, 1, 4, 4, labels, &st);
    int checked = rc == 0 ? graph_check_dataset(&g, &ds, "the lab dataset", &st) : rc;
    int classes = graph_classes(&g);
    if (rc == 0) dataset_free(&ds);
    graph_free(&g);
    model_file_free(&file);
    if (checked == 0) {
        printf("lab: the dataset passed the check; expected label 12 to be refused\n");
        return LAB_WENT_WRONG;
    }
    print_diagnosis(&st);
    for (int i = 0; i < 8; i++) {
        if (labels[i] < classes) continue;
        printf("  first offending sample: index %d has label %d; the model has %d classes "
               "(labels 0 to %d)\n", i, labels[i], classes, classes - 1);
        break;
    }
    return st.code == STATUS_BAD_INPUT ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- dtype-mismatch ---------------------------------------------------------------------

static const char dtype_model[] = "input shape=784 dtype=f16\n"
                                  "dense units=10\n"
                                  "loss softmax_cross_entropy\n";

static int lab_dtype_mismatch(void) {
    print_framework("RuntimeError: Expected object of scalar type Float but got scalar type Half "
                    "for argument #2 'mat2' in call to _th_mm\n"
                    "(PyTorch 2.x: RuntimeError: mat1 and mat2 must have the same dtype, but got "
                    "Half and Float)");
    printf("trainer, building this model (lab-dtype-mismatch.model, in memory):\n%s", dtype_model);
    Status st;
    status_clear(&st);
    ModelFile file;
    if (model_file_parse_text("lab-dtype-mismatch.model", dtype_model, &file, &st)) {
        print_diagnosis(&st);
        return LAB_WENT_WRONG;
    }
    Graph g;
    int rc = graph_build(&file, &g, NULL, &st);
    if (rc == 0) graph_free(&g);
    model_file_free(&file);
    if (rc == 0) {
        printf("lab: the model built; expected a dtype mismatch\n");
        return LAB_WENT_WRONG;
    }
    print_diagnosis(&st);
    return st.code == STATUS_BAD_INPUT && strstr(st.message, "dtype") ? LAB_SHOWN
                                                                     : LAB_WENT_WRONG;
}

// ---- illegal-address --------------------------------------------------------------------

// What the child process sends back: the scenario's return code and its two halves.
typedef struct ChildReport {
    int rc;
    LabOutcome outcome;
    Status st;
} ChildReport;

static int write_all(int fd, const void *data, size_t size) {
    const char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n <= 0) return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static size_t read_all(int fd, void *data, size_t size) {
    char *p = data;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, p + got, size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    return got;
}

// The faulting kernel poisons its process's CUDA context for good, so it runs in a child
// forked before this process touches CUDA; the parent stays clean to report.
static int lab_illegal_address(void) {
    int fds[2];
    if (pipe(fds) != 0) {
        printf("lab: cannot create a pipe for the child process\n");
        return LAB_WENT_WRONG;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        printf("lab: cannot fork a child process\n");
        return LAB_WENT_WRONG;
    }
    if (child == 0) {
        close(fds[0]);
        ChildReport *report = calloc(1, sizeof *report);
        if (!report) _exit(1);
        status_clear(&report->st);
        report->rc = cuda_lab_illegal_address(&report->outcome, &report->st);
        int failed = write_all(fds[1], report, sizeof *report);
        _exit(failed ? 1 : 0);
    }
    close(fds[1]);
    ChildReport *report = calloc(1, sizeof *report);
    size_t got = report ? read_all(fds[0], report, sizeof *report) : 0;
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!report || got != sizeof *report) {
        if (WIFSIGNALED(status))
            printf("lab: the child process was killed by signal %d before it could report\n",
                   WTERMSIG(status));
        else
            printf("lab: the child process exited (%d) without a report\n",
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        free(report);
        return LAB_WENT_WRONG;
    }
    int result = LAB_SHOWN;
    if (report->rc) {
        print_cannot_run("the out-of-bounds kernel", report->st.message);
        printf("  (on a GPU: cudaDeviceSynchronize -> cudaErrorIllegalAddress (700): an illegal "
               "memory access was encountered, and every later CUDA call in the process fails "
               "the same way)\n");
        result = LAB_NEEDS_GPU;
    } else if (!report->outcome.triggered) {
        print_raw(report->outcome.raw);
        printf("lab: the out-of-bounds write went unnoticed; expected cudaErrorIllegalAddress\n");
        result = LAB_WENT_WRONG;
    } else {
        print_raw(report->outcome.raw);
    }
    print_framework("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                    "CUDA kernel errors might be asynchronously reported at some other API "
                    "call, so the stacktrace below might be incorrect.\n"
                    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
    if (result == LAB_SHOWN) print_diagnosis(&report->outcome.diagnosis);
    free(report);
    return result;
}

// ---- no-kernel-image --------------------------------------------------------------------

static int lab_no_kernel_image(void) {
    LabOutcome raw;
    Status st;
    status_clear(&st);
    int result = LAB_SHOWN;
    if (cuda_lab_no_kernel_image(&raw, &st) != 0) {
        print_cannot_run("a kernel built for another GPU", st.message);
        printf("  (on a GPU: a kernel with SASS for sm_75 only, launched on a compute 9.0 "
               "card, fails with cudaErrorNoKernelImageForDevice (209))\n");
        result = LAB_NEEDS_GPU;
    } else {
        print_raw(raw.raw);
        if (!raw.triggered) {
            printf("lab: the kernel ran; expected cudaErrorNoKernelImageForDevice\n");
            result = LAB_WENT_WRONG;
        }
    }
    print_framework("RuntimeError: CUDA error: no kernel image is available for execution on "
                    "the device\n"
                    "(and at import: \"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not "
                    "compatible with the current PyTorch installation. The current PyTorch "
                    "install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
                    "sm_90.\")");
    if (result == LAB_SHOWN) print_diagnosis(&raw.diagnosis);
    return result;
}

// ---- version-report ---------------------------------------------------------------------

static int lab_version_report(void) {
    DoctorReport *r = calloc(1, sizeof *r);
    Status st;
    status_clear(&st);
    if (!r || cuda_doctor_collect(r, &st)) {
        free(r);
        printf("lab: cannot collect the versions: %s\n", st.message);
        return LAB_WENT_WRONG;
    }
    if (!r->built_with_cuda) {
        printf("this trainer was built without CUDA: it loads no CUDA library, so there are no "
               "versions to compare and no version mismatch can happen; it trains on the CPU.\n"
               "A CUDA build compares, at run time, the versions in the headers it was "
               "compiled with against the libraries it loads (`trainer doctor` shows both).\n");
        free(r);
        return LAB_SHOWN;
    }
    doctor_print_versions(r, stdout);
    const DoctorLibraryInfo *cudnn = &r->libraries[DOCTOR_CUDNN];
    char built[32], loaded[32];
    doctor_version_format(&cudnn->built, 1, built, sizeof built);
    doctor_version_format(&cudnn->loaded, 1, loaded, sizeof loaded);
    printf("\nbuilt with: the version in the headers at compile time (cudnn_version.h: %s); "
           "loaded: what the library found at run time says it is (cudnnGetVersion(): %s).\n",
           built, loaded);
    printf("TensorFlow compares these two at start-up; with this machine's numbers its message "
           "would read:\n  Loaded runtime CuDNN library: %s but source was compiled with: %s.\n",
           loaded, built);
    int same_major = cudnn->loaded.major == cudnn->built.major;
    int new_enough = same_major && cudnn->loaded.minor >= cudnn->built.minor;
    if (new_enough) {
        printf("Here the major versions match and the loaded minor is not older, so TensorFlow "
               "would start and trainer runs. Had an older libcudnn.so.%d (say %d.0.0) come "
               "first on the library path, the message would be an error:\n  Loaded runtime "
               "CuDNN library: %d.0.0 but source was compiled with: %s. CuDNN library needs to "
               "have matching major version and equal or higher minor version.\n",
               cudnn->built.major, cudnn->built.major, cudnn->built.major, built);
    } else {
        printf("Here that is an error: the library needs the same major version and an equal "
               "or higher minor version. The loaded one comes from %s; put cuDNN %s or newer "
               "first on the library path, or rebuild against the one you have.\n",
               cudnn->path[0] ? cudnn->path : "an unknown folder", built);
    }
    char driver[32], runtime[32];
    doctor_version_format(&r->libraries[DOCTOR_CUDART].loaded, 0, runtime, sizeof runtime);
    if (r->driver_cuda.major == 0) {
        printf("\nThe driver: none is loaded (cudaDriverGetVersion reports 0). The CUDA runtime "
               "%s is only a library; without the driver (libcuda.so.1 and the kernel module) "
               "every call that needs a GPU fails (here: %s), frameworks say \"Found no NVIDIA "
               "driver on your system\", and trainer trains on the CPU (--device auto).\n",
               runtime, r->device_count_error[0] ? r->device_count_error : "no device");
    } else {
        doctor_version_format(&r->driver_cuda, 0, driver, sizeof driver);
        int too_old = r->libraries[DOCTOR_CUDART].loaded.major > r->driver_cuda.major;
        printf("\nThe driver supports CUDA up to %s and the runtime is %s: %s\n", driver, runtime,
               too_old ? "the driver is too old (cudaErrorInsufficientDriver: \"CUDA driver "
                         "version is insufficient for CUDA runtime version\"); update it"
                       : "the driver is new enough.");
    }
    free(r);
    return LAB_SHOWN;
}

// ---- the list and `lab all` -------------------------------------------------------------

static const Scenario scenarios[] = {
    {"invalid-device", "a GPU ordinal this machine does not have", NEEDS_NOTHING,
     lab_invalid_device},
    {"oom", "more memory than there is: a raw cudaMalloc, and training under --memory-limit",
     NEEDS_NOTHING, lab_oom},
    {"bad-launch", "2048 threads per block: invalid configuration argument", NEEDS_GPU_FOR_RAW,
     lab_bad_launch},
    {"bad-label", "label 12 for a 10-class model: the device-side assert", NEEDS_NOTHING,
     lab_bad_label},
    {"dtype-mismatch", "an f16 input feeding a layer that computes in f32", NEEDS_NOTHING,
     lab_dtype_mismatch},
    {"illegal-address", "a kernel writing far out of bounds poisons the CUDA context",
     NEEDS_GPU, lab_illegal_address},
    {"no-kernel-image", "a kernel built only for another GPU architecture", NEEDS_GPU,
     lab_no_kernel_image},
    {"version-report", "the CUDA/cuDNN versions built with against those loaded",
     NEEDS_NOTHING, lab_version_report},
};
enum { SCENARIO_COUNT = sizeof scenarios / sizeof scenarios[0] };

static void print_list(void) {
    char why[512];
    int gpu = cuda_lab_gpu_available(why, sizeof why);
    printf("usage: trainer lab SCENARIO | all\n\nscenarios (each triggers the failure, then shows "
           "trainer's diagnosis):\n");
    for (int i = 0; i < SCENARIO_COUNT; i++) {
        const Scenario *s = &scenarios[i];
        const char *where = gpu || s->needs == NEEDS_NOTHING ? "runs here"
                            : s->needs == NEEDS_GPU_FOR_RAW ? "runs here (the raw part needs a GPU)"
                                                            : "needs a GPU";
        printf("  %-16s %s [%s]\n", s->name, s->summary, where);
    }
    printf("  %-16s every scenario above, each in its own process\n", "all");
    if (!gpu) printf("\nno GPU here: %s\n", why);
}

// Runs `trainer lab NAME` as a new process, so each scenario starts with fresh CUDA state.
static int run_in_own_process(const char *name) {
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        char *argv[] = {"trainer", "lab", (char *)name, NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int run_all(void) {
    int codes[SCENARIO_COUNT], went_wrong = 0;
    for (int i = 0; i < SCENARIO_COUNT; i++) {
        if (i) printf("\n");
        codes[i] = run_in_own_process(scenarios[i].name);
        went_wrong += codes[i] != LAB_SHOWN && codes[i] != LAB_NEEDS_GPU;
    }
    printf("\n== summary\n");
    for (int i = 0; i < SCENARIO_COUNT; i++)
        printf("  %-16s %s\n", scenarios[i].name,
               codes[i] == LAB_SHOWN       ? "shown"
               : codes[i] == LAB_NEEDS_GPU ? "skipped: needs a GPU"
                                           : "WENT WRONG");
    return went_wrong ? LAB_WENT_WRONG : LAB_SHOWN;
}

int run_lab(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (args->positional_count > 1) {
        status_fail(&st, STATUS_BAD_INPUT, "trainer lab takes one scenario, got %d arguments",
                    args->positional_count);
        status_hint(&st, "usage: trainer lab [SCENARIO | all]; `trainer lab` lists them");
        return report_failure(&st);
    }
    if (args->positional_count == 0) {
        print_list();
        return 0;
    }
    const char *name = args->positionals[0];
    if (strcmp(name, "all") == 0) return run_all();
    const char *names[SCENARIO_COUNT + 2];
    for (int i = 0; i < SCENARIO_COUNT; i++) {
        names[i] = scenarios[i].name;
        if (strcmp(name, scenarios[i].name) != 0) continue;
        printf("== lab %s: %s\n", scenarios[i].name, scenarios[i].summary);
        int code = scenarios[i].run();
        fflush(stdout);
        return code;
    }
    names[SCENARIO_COUNT] = "all";
    names[SCENARIO_COUNT + 1] = NULL;
    const char *near = suggest(name, names);
    if (near) status_fail(&st, STATUS_BAD_INPUT, "unknown lab scenario '%s'; did you mean '%s'?",
                          name, near);
    else status_fail(&st, STATUS_BAD_INPUT, "unknown lab scenario '%s'", name);
    status_hint(&st, "`trainer lab` lists the scenarios");
    return report_failure(&st);
}
