// `trainer lab`'s scenarios told: each runs (diagnostics/lab.c, lab_train.c) and its two
// halves are written one above the other, the error as the CUDA API (or a framework)
// words it and trainer's diagnosis of it, to the caller's TextOut. The table of scenarios
// says which need a GPU.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "diagnostics/doctor.h"
#include "diagnostics/lab.h"

// ---- how every scenario shows its halves ------------------------------------------------

static void block(const TextOut *out, const char *title, const char *text) {
    text_printf(out, "%s\n", title);
    for (const char *line = text; *line;) {
        size_t length = strcspn(line, "\n");
        text_printf(out, "  %.*s\n", (int)length, line);
        line += length;
        if (*line) line++;
    }
}

static void cannot_run(const TextOut *out, const char *what, const char *why) {
    text_printf(out, "cannot run %s here: %s\n", what, why);
}

static void framework(const TextOut *out, const LabResult *r) {
    block(out, "what a framework shows (PyTorch):", r->framework);
}

// The raw half (or why it could not run here), what its outcome means, and a framework's
// words for the same failure.
static void raw_half(const TextOut *out, const LabResult *r, const char *what,
                     const char *title) {
    if (!r->raw_ran) cannot_run(out, what, r->cannot_run);
    else block(out, title, r->raw.raw);
    text_put(out, r->raw_note);
    framework(out, r);
}

#define RAW_CUDA "raw error (CUDA runtime API):"

// Trainer's own words for the failure, exactly as `trainer train` would print them.
static void diagnosis(const TextOut *out, const Status *st) {
    char text[2400];
    status_format(st, text, sizeof text);
    text_printf(out, "trainer's diagnosis (exit code %d in trainer terms):\n%s",
                status_exit_code(st), text);
    if (st->error_name[0]) text_printf(out, "  more: trainer explain %s\n", st->error_name);
}

// The diagnosis, or `refused_not` when trainer accepted what it should have refused.
static LabCode verdict(const TextOut *out, const LabResult *r, const char *refused_not) {
    if (!r->diagnosed) text_put(out, refused_not);
    else diagnosis(out, &r->diagnosis);
    return r->code;
}

// ---- the scenarios ----------------------------------------------------------------------

static LabCode show_invalid_device(const TextOut *out) {
    LabResult r;
    lab_invalid_device(&r);
    raw_half(out, &r, "the raw cudaSetDevice call", RAW_CUDA);
    char refused_not[96];
    snprintf(refused_not, sizeof refused_not,
             "lab: --device cuda:%d opened; expected it to be refused\n", r.ordinal);
    return verdict(out, &r, refused_not);
}

static void train_notice(void *user, const char *line) {
    text_printf(user, "trainer: notice: %s\n", line);
}

static LabCode show_oom(const TextOut *out) {
    LabResult r;
    lab_oom_raw(&r);
    if (!r.raw_ran) {
        cannot_run(out, "the raw cudaMalloc of more than the card's memory", r.cannot_run);
    } else {
        block(out, RAW_CUDA, r.raw.raw);
        if (!r.raw.triggered)
            text_put(out, "lab: the oversized cudaMalloc succeeded; expected out of memory\n");
        else
            diagnosis(out, &r.raw.diagnosis);
    }
    framework(out, &r);
    text_printf(out, "trainer, training a small CNN (in memory) on the CPU with --memory-limit "
                     "%s:\n%s", lab_oom_limit, lab_oom_model);
    text_flush(out);
    lab_oom_train(&r, train_notice, (void *)out);
    if (!r.diagnosed)
        text_printf(out, "lab: training fitted in %s; expected out of memory\n", lab_oom_limit);
    else
        diagnosis(out, &r.diagnosis);
    return r.code;
}

static LabCode show_bad_launch(const TextOut *out) {
    LabResult r;
    lab_bad_launch(&r);
    raw_half(out, &r, "the raw launch of 2048 threads per block", RAW_CUDA);
    text_put(out, "trainer checks every launch configuration on the host first:\n");
    return verdict(out, &r, "lab: launch_check accepted a block of 2048 threads; expected a "
                            "refusal\n");
}

static LabCode show_bad_label(const TextOut *out) {
    LabResult r;
    lab_bad_label(&r);
    framework(out, &r);
    text_printf(out, "trainer, checking a dataset of %d samples (labels", LAB_BAD_LABEL_COUNT);
    for (int i = 0; i < LAB_BAD_LABEL_COUNT; i++) text_printf(out, " %d", lab_bad_labels[i]);
    text_put(out, ") against a 10-class model before the first step:\n");
    verdict(out, &r, "lab: the dataset passed the check; expected label 12 to be refused\n");
    if (r.diagnosed && r.bad_index >= 0)
        text_printf(out, "  first offending sample: index %d has label %d; the model has %d "
                         "classes (labels 0 to %d)\n",
                    r.bad_index, r.bad_label, r.classes, r.classes - 1);
    return r.code;
}

static LabCode show_dtype_mismatch(const TextOut *out) {
    LabResult r;
    lab_dtype_mismatch(&r);
    framework(out, &r);
    text_printf(out, "trainer, building this model (lab-dtype-mismatch.model, in memory):\n%s",
                lab_dtype_model);
    return verdict(out, &r, "lab: the model built; expected a dtype mismatch\n");
}

static LabCode show_illegal_address(const TextOut *out) {
    LabResult r;
    // The scenario forks: what is buffered here must come out once, and before the child's.
    text_flush(out);
    lab_illegal_address(&r);
    if (r.went_wrong[0]) {
        text_printf(out, "lab: %s\n", r.went_wrong);
        return r.code;
    }
    raw_half(out, &r, "the out-of-bounds kernel", RAW_CUDA);
    return verdict(out, &r, "");
}

static LabCode show_no_kernel_image(const TextOut *out) {
    LabResult r;
    lab_no_kernel_image(&r);
    raw_half(out, &r, "a kernel built for another GPU", RAW_CUDA);
    return verdict(out, &r, "");
}

static LabCode show_duplicate_gpu(const TextOut *out) {
    LabResult r;
    lab_duplicate_gpu(&r);
    raw_half(out, &r, "two NCCL ranks on one GPU", "raw error (NCCL):");
    return verdict(out, &r, "");
}

// ---- version-report ---------------------------------------------------------------------

// The two cuDNN versions and what TensorFlow's start-up check makes of them.
static void cudnn_check(const TextOut *out, const LabVersions *v) {
    const DoctorLibraryInfo *cudnn = &v->report.libraries[DOCTOR_CUDNN];
    char built[32], loaded[32];
    doctor_version_format(&cudnn->built, 1, built, sizeof built);
    doctor_version_format(&cudnn->loaded, 1, loaded, sizeof loaded);
    text_printf(out, "\n%s", v->cudnn_sources);
    text_printf(out, "TensorFlow compares these two at start-up; with this machine's numbers "
                     "its message would read:\n  Loaded runtime CuDNN library: %s but source "
                     "was compiled with: %s.\n", loaded, built);
    if (v->cudnn_new_enough) {
        text_printf(out, "Here the major versions match and the loaded minor is not older, so "
                         "TensorFlow would start and trainer runs. Had an older libcudnn.so.%d "
                         "(say %d.0.0) come first on the library path, the message would be an "
                         "error:\n  Loaded runtime CuDNN library: %d.0.0 but source was "
                         "compiled with: %s. CuDNN library needs to have matching major "
                         "version and equal or higher minor version.\n",
                    cudnn->built.major, cudnn->built.major, cudnn->built.major, built);
    } else {
        text_printf(out, "Here that is an error: the library needs the same major version and "
                         "an equal or higher minor version. The loaded one comes from %s; put "
                         "cuDNN %s or newer first on the library path, or rebuild against the "
                         "one you have.\n",
                    cudnn->path[0] ? cudnn->path : "an unknown folder", built);
    }
}

// The driver against the runtime: none loaded, too old, or new enough.
static void driver_check(const TextOut *out, const LabVersions *v) {
    const DoctorReport *r = &v->report;
    char driver[32], runtime[32];
    doctor_version_format(&r->libraries[DOCTOR_CUDART].loaded, 0, runtime, sizeof runtime);
    if (r->driver_cuda.major == 0) {
        text_printf(out, "\nThe driver: none is loaded (cudaDriverGetVersion reports 0). The "
                         "CUDA runtime %s is only a library; without the driver (libcuda.so.1 "
                         "and the kernel module) every call that needs a GPU fails (here: %s), "
                         "frameworks say \"Found no NVIDIA driver on your system\", and "
                         "trainer trains on the CPU (--device auto).\n",
                    runtime, r->device_count_error[0] ? r->device_count_error : "no device");
        return;
    }
    doctor_version_format(&r->driver_cuda, 0, driver, sizeof driver);
    text_printf(out, "\nThe driver supports CUDA up to %s and the runtime is %s: %s\n", driver,
                runtime,
                v->driver_too_old ? "the driver is too old (cudaErrorInsufficientDriver: "
                                    "\"CUDA driver version is insufficient for CUDA runtime "
                                    "version\"); update it"
                                  : "the driver is new enough.");
}

static LabCode show_version_report(const TextOut *out) {
    LabVersions *v = calloc(1, sizeof *v);
    Status st;
    status_clear(&st);
    if (!v || lab_versions(v, &st)) {
        free(v);
        text_printf(out, "lab: cannot collect the versions: %s\n", st.message);
        return LAB_WENT_WRONG;
    }
    if (!v->report.built_with_cuda) {
        text_put(out, "this trainer was built without CUDA: it loads no CUDA library, so there "
                      "are no versions to compare and no version mismatch can happen; it "
                      "trains on the CPU.\nA CUDA build compares, at run time, the versions in "
                      "the headers it was compiled with against the libraries it loads "
                      "(`trainer doctor` shows both).\n");
        free(v);
        return LAB_SHOWN;
    }
    DoctorVersionTable table;
    doctor_version_table(&v->report, &table);
    for (int i = 0; i < table.count; i++) text_printf(out, "%s\n", table.lines[i]);
    cudnn_check(out, v);
    driver_check(out, v);
    free(v);
    return LAB_SHOWN;
}

// ---- the list ---------------------------------------------------------------------------

const LabScenario lab_scenarios[] = {
    {"invalid-device", "a GPU ordinal this machine does not have", LAB_RUNS_ANYWHERE,
     show_invalid_device},
    {"oom", "more memory than there is: a raw cudaMalloc, and training under --memory-limit",
     LAB_RUNS_ANYWHERE, show_oom},
    {"bad-launch", "2048 threads per block: invalid configuration argument",
     LAB_RAW_NEEDS_GPU, show_bad_launch},
    {"bad-label", "label 12 for a 10-class model: the device-side assert", LAB_RUNS_ANYWHERE,
     show_bad_label},
    {"dtype-mismatch", "an f16 input feeding a layer that computes in f32", LAB_RUNS_ANYWHERE,
     show_dtype_mismatch},
    {"illegal-address", "a kernel writing far out of bounds poisons the CUDA context",
     LAB_ONLY_ON_GPU, show_illegal_address},
    {"no-kernel-image", "a kernel built only for another GPU architecture", LAB_ONLY_ON_GPU,
     show_no_kernel_image},
    {"duplicate-gpu", "two NCCL ranks on one GPU (mpirun -np 2 on a one-GPU machine)",
     LAB_ONLY_ON_GPU, show_duplicate_gpu},
    {"version-report", "the CUDA/cuDNN versions built with against those loaded",
     LAB_RUNS_ANYWHERE, show_version_report},
};
enum { SCENARIO_COUNT = sizeof lab_scenarios / sizeof lab_scenarios[0] };
_Static_assert((int)SCENARIO_COUNT <= (int)LAB_SCENARIO_ROOM, "raise LAB_SCENARIO_ROOM in lab.h");

int lab_scenario_count(void) { return SCENARIO_COUNT; }

const char *lab_scenario_where(const LabScenario *s, int gpu) {
    return gpu || s->needs == LAB_RUNS_ANYWHERE ? "runs here"
           : s->needs == LAB_RAW_NEEDS_GPU       ? "runs here (the raw part needs a GPU)"
                                                 : "needs a GPU";
}

// `all` (every scenario, each in its own process: tools/cmd_lab.c) is a name too, so a
// near miss of it is suggested.
const LabScenario *lab_scenario_find(const char *name, Status *st) {
    const char *names[SCENARIO_COUNT + 2];
    for (int i = 0; i < SCENARIO_COUNT; i++) {
        if (strcmp(name, lab_scenarios[i].name) == 0) return &lab_scenarios[i];
        names[i] = lab_scenarios[i].name;
    }
    names[SCENARIO_COUNT] = "all";
    names[SCENARIO_COUNT + 1] = NULL;
    const char *near = suggest(name, names);
    if (near)
        status_fail(st, STATUS_BAD_INPUT, "unknown lab scenario '%s'; did you mean '%s'?", name,
                    near);
    else
        status_fail(st, STATUS_BAD_INPUT, "unknown lab scenario '%s'", name);
    status_hint(st, "`trainer lab` lists the scenarios");
    return NULL;
}
