// `trainer lab [SCENARIO]`: make a failure happen on purpose and show, one above the
// other, the error as the CUDA API (or a framework) words it and trainer's diagnosis of it.
// diagnostics/lab runs the scenarios and returns what happened; here it is printed.
//
// Each scenario runs for real as far as the machine allows: on a machine without a GPU
// the CUDA-only ones (illegal-address, no-kernel-image, duplicate-gpu) say why they cannot
// run and exit 3, and bad-launch and oom run their trainer half only. Exit codes of one
// scenario: 0 the failure was shown and diagnosed, 3 it needs a GPU this machine lacks, 1
// the failure did not come as expected. `lab all` runs every scenario in its own process (a
// scenario that breaks the CUDA context must not take the others with it) and exits 0 when
// each one either ran or could not run here, 1 when any went wrong.
#define _POSIX_C_SOURCE 200809L  // fork, execv
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/suggest.h"
#include "diagnostics/doctor.h"
#include "diagnostics/lab.h"
#include "tools/cli.h"

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

typedef enum LabNeeds { NEEDS_NOTHING, NEEDS_GPU_FOR_RAW, NEEDS_GPU } LabNeeds;

typedef struct Scenario {
    const char *name;
    const char *summary;
    LabNeeds needs;
    LabCode (*run)(void);  // runs the scenario and prints it
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

static LabCode show_invalid_device(void) {
    LabResult r;
    lab_invalid_device(&r);
    if (!r.raw_ran)
        print_cannot_run("the raw cudaSetDevice call", r.cannot_run);
    else
        print_raw(r.raw.raw);
    printf("%s", r.raw_note);
    print_framework(r.framework);
    if (!r.diagnosed)
        printf("lab: --device cuda:%d opened; expected it to be refused\n", r.ordinal);
    else
        print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- oom --------------------------------------------------------------------------------

static void print_train_notice(void *user, const char *line) {
    printf("trainer: notice: %s\n", line);
}

static LabCode show_oom(void) {
    LabResult r;
    lab_oom_raw(&r);
    if (!r.raw_ran) {
        print_cannot_run("the raw cudaMalloc of more than the card's memory", r.cannot_run);
    } else {
        print_raw(r.raw.raw);
        if (!r.raw.triggered)
            printf("lab: the oversized cudaMalloc succeeded; expected out of memory\n");
        else
            print_diagnosis(&r.raw.diagnosis);
    }
    print_framework(r.framework);
    printf("trainer, training a small CNN (in memory) on the CPU with --memory-limit %s:\n",
           lab_oom_limit);
    printf("%s", lab_oom_model);
    flush_stdout();
    lab_oom_train(&r, print_train_notice, NULL);
    if (!r.diagnosed)
        printf("lab: training fitted in %s; expected out of memory\n", lab_oom_limit);
    else
        print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- bad-launch -------------------------------------------------------------------------

static LabCode show_bad_launch(void) {
    LabResult r;
    lab_bad_launch(&r);
    if (!r.raw_ran)
        print_cannot_run("the raw launch of 2048 threads per block", r.cannot_run);
    else
        print_raw(r.raw.raw);
    printf("%s", r.raw_note);
    print_framework(r.framework);
    printf("trainer checks every launch configuration on the host first:\n");
    if (!r.diagnosed)
        printf("lab: launch_check accepted a block of 2048 threads; expected a refusal\n");
    else
        print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- bad-label --------------------------------------------------------------------------

static LabCode show_bad_label(void) {
    LabResult r;
    lab_bad_label(&r);
    print_framework(r.framework);
    printf("trainer, checking a dataset of %d samples (labels", LAB_BAD_LABEL_COUNT);
    for (int i = 0; i < LAB_BAD_LABEL_COUNT; i++) printf(" %d", lab_bad_labels[i]);
    printf(") against a 10-class model before the first step:\n");
    if (!r.diagnosed) {
        printf("lab: the dataset passed the check; expected label 12 to be refused\n");
        return r.code;
    }
    print_diagnosis(&r.diagnosis);
    if (r.bad_index >= 0)
        printf("  first offending sample: index %d has label %d; the model has %d classes "
               "(labels 0 to %d)\n", r.bad_index, r.bad_label, r.classes, r.classes - 1);
    return r.code;
}

// ---- dtype-mismatch ---------------------------------------------------------------------

static LabCode show_dtype_mismatch(void) {
    LabResult r;
    lab_dtype_mismatch(&r);
    print_framework(r.framework);
    printf("trainer, building this model (lab-dtype-mismatch.model, in memory):\n%s",
           lab_dtype_model);
    if (!r.diagnosed)
        printf("lab: the model built; expected a dtype mismatch\n");
    else
        print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- illegal-address --------------------------------------------------------------------

static LabCode show_illegal_address(void) {
    LabResult r;
    // The scenario forks: what is buffered here must come out once, and before the child's.
    flush_stdout();
    fflush(stderr);
    lab_illegal_address(&r);
    if (r.went_wrong[0]) {
        printf("lab: %s\n", r.went_wrong);
        return r.code;
    }
    if (!r.raw_ran)
        print_cannot_run("the out-of-bounds kernel", r.cannot_run);
    else
        print_raw(r.raw.raw);
    printf("%s", r.raw_note);
    print_framework(r.framework);
    if (r.diagnosed) print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- no-kernel-image --------------------------------------------------------------------

static LabCode show_no_kernel_image(void) {
    LabResult r;
    lab_no_kernel_image(&r);
    if (!r.raw_ran)
        print_cannot_run("a kernel built for another GPU", r.cannot_run);
    else
        print_raw(r.raw.raw);
    printf("%s", r.raw_note);
    print_framework(r.framework);
    if (r.diagnosed) print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- duplicate-gpu ----------------------------------------------------------------------

static LabCode show_duplicate_gpu(void) {
    LabResult r;
    lab_duplicate_gpu(&r);
    if (!r.raw_ran)
        print_cannot_run("two NCCL ranks on one GPU", r.cannot_run);
    else
        print_block("raw error (NCCL):", r.raw.raw);
    printf("%s", r.raw_note);
    print_framework(r.framework);
    if (r.diagnosed) print_diagnosis(&r.diagnosis);
    return r.code;
}

// ---- version-report ---------------------------------------------------------------------

// The two cuDNN versions and what TensorFlow's start-up check makes of them.
static void print_cudnn_check(const LabVersions *v) {
    const DoctorLibraryInfo *cudnn = &v->report.libraries[DOCTOR_CUDNN];
    char built[32], loaded[32];
    doctor_version_format(&cudnn->built, 1, built, sizeof built);
    doctor_version_format(&cudnn->loaded, 1, loaded, sizeof loaded);
    printf("\n%s", v->cudnn_sources);
    printf("TensorFlow compares these two at start-up; with this machine's numbers its message "
           "would read:\n  Loaded runtime CuDNN library: %s but source was compiled with: %s.\n",
           loaded, built);
    if (v->cudnn_new_enough) {
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
}

// The driver against the runtime: none loaded, too old, or new enough.
static void print_driver_check(const LabVersions *v) {
    const DoctorReport *r = &v->report;
    char driver[32], runtime[32];
    doctor_version_format(&r->libraries[DOCTOR_CUDART].loaded, 0, runtime, sizeof runtime);
    if (r->driver_cuda.major == 0) {
        printf("\nThe driver: none is loaded (cudaDriverGetVersion reports 0). The CUDA runtime "
               "%s is only a library; without the driver (libcuda.so.1 and the kernel module) "
               "every call that needs a GPU fails (here: %s), frameworks say \"Found no NVIDIA "
               "driver on your system\", and trainer trains on the CPU (--device auto).\n",
               runtime, r->device_count_error[0] ? r->device_count_error : "no device");
        return;
    }
    doctor_version_format(&r->driver_cuda, 0, driver, sizeof driver);
    printf("\nThe driver supports CUDA up to %s and the runtime is %s: %s\n", driver, runtime,
           v->driver_too_old ? "the driver is too old (cudaErrorInsufficientDriver: \"CUDA "
                               "driver version is insufficient for CUDA runtime version\"); "
                               "update it"
                             : "the driver is new enough.");
}

static LabCode show_version_report(void) {
    LabVersions *v = calloc(1, sizeof *v);
    Status st;
    status_clear(&st);
    if (!v || lab_versions(v, &st)) {
        free(v);
        printf("lab: cannot collect the versions: %s\n", st.message);
        return LAB_WENT_WRONG;
    }
    if (!v->report.built_with_cuda) {
        printf("this trainer was built without CUDA: it loads no CUDA library, so there are no "
               "versions to compare and no version mismatch can happen; it trains on the CPU.\n"
               "A CUDA build compares, at run time, the versions in the headers it was "
               "compiled with against the libraries it loads (`trainer doctor` shows both).\n");
        free(v);
        return LAB_SHOWN;
    }
    DoctorVersionTable table;
    doctor_version_table(&v->report, &table);
    for (int i = 0; i < table.count; i++) printf("%s\n", table.lines[i]);
    print_cudnn_check(v);
    print_driver_check(v);
    free(v);
    return LAB_SHOWN;
}

// ---- the list and `lab all` -------------------------------------------------------------

static const Scenario scenarios[] = {
    {"invalid-device", "a GPU ordinal this machine does not have", NEEDS_NOTHING,
     show_invalid_device},
    {"oom", "more memory than there is: a raw cudaMalloc, and training under --memory-limit",
     NEEDS_NOTHING, show_oom},
    {"bad-launch", "2048 threads per block: invalid configuration argument", NEEDS_GPU_FOR_RAW,
     show_bad_launch},
    {"bad-label", "label 12 for a 10-class model: the device-side assert", NEEDS_NOTHING,
     show_bad_label},
    {"dtype-mismatch", "an f16 input feeding a layer that computes in f32", NEEDS_NOTHING,
     show_dtype_mismatch},
    {"illegal-address", "a kernel writing far out of bounds poisons the CUDA context",
     NEEDS_GPU, show_illegal_address},
    {"no-kernel-image", "a kernel built only for another GPU architecture", NEEDS_GPU,
     show_no_kernel_image},
    {"duplicate-gpu", "two NCCL ranks on one GPU (mpirun -np 2 on a one-GPU machine)",
     NEEDS_GPU, show_duplicate_gpu},
    {"version-report", "the CUDA/cuDNN versions built with against those loaded",
     NEEDS_NOTHING, show_version_report},
};
enum { SCENARIO_COUNT = sizeof scenarios / sizeof scenarios[0] };

static void print_list(void) {
    char why[512];
    int gpu = lab_gpu_available(why, sizeof why);
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
    flush_stdout();
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        char *argv[] = {"trainer", "lab", (char *)name, NULL};
        char self[4096];
        execv(trainer_executable(self, sizeof self), argv);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
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
        flush_stdout();
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
