// The lab scenarios that ask the CUDA API for their failure (kernels/cuda/cuda_lab) and
// set trainer's diagnosis beside it; those that need only the trainer are in lab_train.c.
#define _POSIX_C_SOURCE 200809L  // fork, pipe
#include "diagnostics/lab.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/device.h"
#include "kernels/cuda/cuda_doctor.h"
#include "kernels/cuda/cuda_lab.h"
#include "kernels/launch_check.h"

// Clears r for a scenario to fill.
static void start(LabResult *r, const char *framework) {
    memset(r, 0, sizeof *r);
    status_clear(&r->diagnosis);
    r->framework = framework;
}

// Records how the raw call went: `rc` and `st` are what the cuda_lab_* function returned.
static void record_raw(LabResult *r, int rc, const Status *st) {
    r->raw_ran = rc == 0;
    if (rc) snprintf(r->cannot_run, sizeof r->cannot_run, "%s", st->message);
}

// What the raw half's outcome means, in r->raw_note: `off_gpu` when no GPU could be asked,
// `not_triggered` when the call succeeded where it should have failed, `other` when it
// failed otherwise than the scenario provokes. NULL: nothing needs saying.
typedef struct RawNotes {
    const char *off_gpu, *not_triggered, *other;
} RawNotes;

static void note_raw(LabResult *r, const RawNotes *notes) {
    const char *note = !r->raw_ran             ? notes->off_gpu
                       : !r->raw.triggered     ? notes->not_triggered
                       : !r->raw_as_expected   ? notes->other
                                               : NULL;
    if (note) snprintf(r->raw_note, sizeof r->raw_note, "%s", note);
}

// The code and note of a scenario whose only diagnosis is of the raw failure (the GPU-only
// ones).
static void judge_raw_only(LabResult *r, const RawNotes *notes) {
    r->raw_as_expected = r->raw_ran && r->raw.triggered;
    r->diagnosed = r->raw_as_expected;
    if (r->diagnosed) r->diagnosis = r->raw.diagnosis;
    r->code = !r->raw_ran             ? LAB_NEEDS_GPU
              : r->raw_as_expected    ? LAB_SHOWN
                                      : LAB_WENT_WRONG;
    note_raw(r, notes);
}

int lab_gpu_available(char *why, size_t size) { return cuda_lab_gpu_available(why, size); }

// ---- invalid-device ---------------------------------------------------------------------

static void note_invalid_device(LabResult *r) {
    char succeeded[96];
    snprintf(succeeded, sizeof succeeded, "lab: cudaSetDevice(%d) succeeded; expected it to fail\n",
             r->ordinal);
    note_raw(r, &(RawNotes){
                    .not_triggered = succeeded,
                    .other = "  (with no usable driver the runtime fails before it looks at "
                             "the ordinal; on a GPU machine the answer is "
                             "cudaErrorInvalidDevice (101): invalid device ordinal)\n"});
}

void lab_invalid_device(LabResult *r) {
    start(r, "RuntimeError: CUDA error: invalid device ordinal\n"
             "(the driver API's name for it: CUDA_ERROR_INVALID_DEVICE)");
    r->ordinal = 7;
    Status st;
    status_clear(&st);
    record_raw(r, cuda_lab_invalid_device(&r->ordinal, &r->raw, &st), &st);
    // Without a usable driver the runtime fails before it looks at the ordinal: the call
    // still failed, only not with the error the scenario is about.
    r->raw_as_expected = r->raw_ran && r->raw.triggered &&
                         strcmp(r->raw.diagnosis.error_name, "cudaErrorInvalidDevice") == 0;
    char spec[32];
    snprintf(spec, sizeof spec, "cuda:%d", r->ordinal);
    DeviceOptions options = {.spec = spec, .mode = ALLOC_GROW};
    Device device;
    char notice[512];
    if (device_open(&options, &device, notice, sizeof notice, &r->diagnosis) == 0) {
        device_close(&device);
        note_invalid_device(r);
        r->code = LAB_WENT_WRONG;
        return;
    }
    r->diagnosed = 1;
    note_invalid_device(r);
    int raw_failed = !r->raw_ran || r->raw.triggered;
    r->code = raw_failed && r->diagnosis.code == STATUS_NO_DEVICE ? LAB_SHOWN : LAB_WENT_WRONG;
}

// ---- oom: the raw half (the training half is in lab_train.c) ----------------------------

void lab_oom_raw(LabResult *r) {
    start(r, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 "
             "has a total capacity of 79.19 GiB of which 4.81 MiB is free. ...\n"
             "(the size of the one request that failed, not what the model needs)");
    Status st;
    status_clear(&st);
    record_raw(r, cuda_lab_oom(&r->raw, &st), &st);
    r->raw_as_expected = r->raw_ran && r->raw.triggered;
    r->code = LAB_WENT_WRONG;  // until lab_oom_train has seen training fail
}

// ---- bad-launch -------------------------------------------------------------------------

#define BAD_LAUNCH_EXPECTED \
    "; expected cudaErrorInvalidConfiguration (9), or cudaErrorInvalidValue (1) from CUDA 13 on\n"

static void note_bad_launch(LabResult *r) {
    note_raw(r, &(RawNotes){
                    .off_gpu = "  (on a GPU it fails with cudaErrorInvalidConfiguration (9): "
                               "invalid configuration argument, or from CUDA 13 on with "
                               "cudaErrorInvalidValue (1): invalid argument; the check below "
                               "uses the limits every GPU since 7.5 shares)\n",
                    .not_triggered = "lab: a launch of 2048 threads per block succeeded"
                                     BAD_LAUNCH_EXPECTED,
                    .other = "lab: a launch of 2048 threads per block failed with another error"
                             BAD_LAUNCH_EXPECTED});
    if (r->raw_invalid_value)
        snprintf(r->raw_note, sizeof r->raw_note,
                 "  (CUDA 13 and later say \"invalid argument\" for a block past the "
                 "device's limits; CUDA 12 and earlier, and PyTorch's message, say "
                 "\"invalid configuration argument\")\n");
}

void lab_bad_launch(LabResult *r) {
    start(r, "RuntimeError: CUDA error: invalid configuration argument\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so "
             "the stacktrace below might be incorrect.");
    LaunchConfig config = {.kernel = "lab_empty_kernel", .grid = {1, 1, 1},
                           .block = {2048, 1, 1}, .shared_bytes = 0, .elements = 2048,
                           .index_bits = 32};
    LaunchLimits limits;
    Status st;
    status_clear(&st);
    record_raw(r, cuda_lab_bad_launch(&config, &limits, &r->raw, &st), &st);
    if (r->raw_ran) {
        r->raw_as_expected =
            r->raw.triggered && launch_error_is_bad_configuration(r->raw.api_error);
        r->raw_invalid_value =
            r->raw_as_expected && r->raw.api_error == LAUNCH_ERROR_INVALID_VALUE;
    } else {
        // No device to ask for its limits: check against those every GPU since 7.5 shares.
        launch_limits_typical(&limits);
    }
    r->diagnosed = launch_check(&limits, &config, &r->diagnosis) != 0;
    r->code = r->diagnosed && (!r->raw_ran || r->raw_as_expected) ? LAB_SHOWN : LAB_WENT_WRONG;
    note_bad_launch(r);
}

// ---- illegal-address --------------------------------------------------------------------

// What the child process sends back: the raw call's return code and its two halves.
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

// Runs the faulting kernel in a child process, forked before this process touches CUDA,
// so this one stays clean to report. Nonzero, with `why`, when no report came back. The
// child ends in _exit, the one exit in diagnostics/: it must not return into its
// caller's code, nor flush stdio buffers it shares with the parent a second time.
static int run_in_child_process(ChildReport *report, char *why, size_t size) {
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, size, "cannot create a pipe for the child process");
        return -1;
    }
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        snprintf(why, size, "cannot fork a child process");
        return -1;
    }
    if (child == 0) {
        close(fds[0]);
        ChildReport mine;
        memset(&mine, 0, sizeof mine);
        mine.rc = cuda_lab_illegal_address(&mine.outcome, &mine.st);
        _exit(write_all(fds[1], &mine, sizeof mine) ? 1 : 0);
    }
    close(fds[1]);
    size_t got = read_all(fds[0], report, sizeof *report);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (got == sizeof *report) return 0;
    if (WIFSIGNALED(status))
        snprintf(why, size, "the child process was killed by signal %d before it could report",
                 WTERMSIG(status));
    else
        snprintf(why, size, "the child process exited (%d) without a report",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}

void lab_illegal_address(LabResult *r) {
    start(r, "RuntimeError: CUDA error: an illegal memory access was encountered\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so "
             "the stacktrace below might be incorrect.\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
    ChildReport report;
    if (run_in_child_process(&report, r->went_wrong, sizeof r->went_wrong)) {
        r->code = LAB_WENT_WRONG;
        return;
    }
    r->raw = report.outcome;
    record_raw(r, report.rc, &report.st);
    judge_raw_only(r, &(RawNotes){
        .not_triggered = "lab: the out-of-bounds write went unnoticed; expected "
                         "cudaErrorIllegalAddress\n",
        .off_gpu = "  (on a GPU: cudaDeviceSynchronize -> cudaErrorIllegalAddress (700): an "
                   "illegal memory access was encountered, and every later CUDA call in the "
                   "process fails the same way)\n"});
}

// ---- no-kernel-image --------------------------------------------------------------------

void lab_no_kernel_image(LabResult *r) {
    start(r, "RuntimeError: CUDA error: no kernel image is available for execution on the "
             "device\n"
             "(and at import: \"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not "
             "compatible with the current PyTorch installation. The current PyTorch install "
             "supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\")");
    Status st;
    status_clear(&st);
    record_raw(r, cuda_lab_no_kernel_image(&r->raw, &st), &st);
    judge_raw_only(r, &(RawNotes){
        .off_gpu = "  (on a GPU: a kernel with SASS for sm_75 only, launched on a compute 9.0 "
                   "card, fails with cudaErrorNoKernelImageForDevice (209))\n",
        .not_triggered = "lab: the kernel ran; expected cudaErrorNoKernelImageForDevice\n"});
}

// ---- duplicate-gpu ----------------------------------------------------------------------

// trainer's diagnosis of the raw refusal: what `mpirun -np 2 trainer train --collective
// nccl` says when both ranks are on this card (core/collective.c).
static void diagnose_duplicate_gpu(LabResult *r, const char *bus) {
    SharedGpu shared = {.found = 1, .first = 0, .second = 1, .ranks = 2};
    if (gethostname(shared.host, sizeof shared.host - 1) != 0)
        snprintf(shared.host, sizeof shared.host, "this host");
    snprintf(shared.bus, sizeof shared.bus, "%s", bus);
    snprintf(shared.first_device, sizeof shared.first_device, "cuda:0");
    snprintf(shared.second_device, sizeof shared.second_device, "cuda:0");
    r->diagnosis = r->raw.diagnosis;
    collective_explain_shared_gpu(&shared, &r->diagnosis);
    r->diagnosed = 1;
}

void lab_duplicate_gpu(LabResult *r) {
    start(r, "torch.distributed.DistBackendError: NCCL error in: .../ProcessGroupNCCL.cpp:..., "
             "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.x\n"
             "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
             "Last error:\nDuplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000\n"
             "(every rank fails alike, and nothing says which launcher setting put them there)");
    char bus[64] = "";
    Status st;
    status_clear(&st);
    record_raw(r, cuda_lab_duplicate_gpu(bus, sizeof bus, &r->raw, &st), &st);
    // 5: ncclInvalidUsage (nccl.h is for kernels/cuda only).
    r->raw_as_expected = r->raw_ran && r->raw.triggered && r->raw.api_error == 5;
    if (r->raw_as_expected) diagnose_duplicate_gpu(r, bus);
    r->code = !r->raw_ran ? LAB_NEEDS_GPU : r->raw_as_expected ? LAB_SHOWN : LAB_WENT_WRONG;
    note_raw(r, &(RawNotes){
                    .off_gpu = "  (on a GPU: ncclCommInitAll of two ranks on cuda:0 fails with "
                               "ncclInvalidUsage (5), \"Duplicate GPU detected : rank 1 and "
                               "rank 0 both on CUDA device ...\")\n",
                    .not_triggered = "lab: this NCCL accepted two ranks on one GPU; expected "
                                     "ncclInvalidUsage\n",
                    .other = "lab: NCCL failed otherwise than with ncclInvalidUsage (5)\n"});
}

// ---- version-report ---------------------------------------------------------------------

int lab_versions(LabVersions *v, Status *st) {
    memset(v, 0, sizeof *v);
    TRY(cuda_doctor_collect(&v->report, st));
    if (!v->report.built_with_cuda) return 0;
    const DoctorLibraryInfo *cudnn = &v->report.libraries[DOCTOR_CUDNN];
    v->cudnn_new_enough = cudnn->loaded.major == cudnn->built.major &&
                          cudnn->loaded.minor >= cudnn->built.minor;
    char built[32], loaded[32];
    doctor_version_format(&cudnn->built, 1, built, sizeof built);
    doctor_version_format(&cudnn->loaded, 1, loaded, sizeof loaded);
    snprintf(v->cudnn_sources, sizeof v->cudnn_sources,
             "built with: the version in the headers at compile time (cudnn_version.h: %s); "
             "loaded: what the library found at run time says it is (cudnnGetVersion(): %s).\n",
             built, loaded);
    v->driver_too_old =
        v->report.libraries[DOCTOR_CUDART].loaded.major > v->report.driver_cuda.major;
    return 0;
}
