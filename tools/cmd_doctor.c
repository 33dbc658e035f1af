// `trainer doctor`: is this machine ready to train on a GPU, and if not, what to do.
//
// kernels/cuda/cuda_doctor collects the facts (driver, the libraries built against and
// loaded, where they were loaded from, the devices and the kernel image each gets); here
// they become a verdict: a smoke test per device (a GEMM and a convolution through the
// CUDA backend, checked against the CPU backend), a list of problems with numbered fixes,
// and the exit code: 0 all well, 3 no usable device, 1 something broken.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_doctor.h"
#include "tools/cli.h"

static const OptionSpec doctor_options[] = {
    {"--json", NULL, "print one JSON object with the same facts, the verdict and the fixes"},
    {NULL, NULL, NULL},
};

const Command doctor_command = {
    .name = "doctor",
    .usage = "[--json]",
    .summary = "check the driver, libraries and GPUs, and say what to fix",
    .options = doctor_options,
    .run = run_doctor,
};

// How bad a problem is: BROKEN makes the exit code 1 (something to repair), NO_DEVICE
// explains an exit code 3 (nothing to train on), WARNING leaves the exit code alone.
typedef enum Severity { SEVERITY_BROKEN, SEVERITY_NO_DEVICE, SEVERITY_WARNING } Severity;

static const char *const severity_names[] = {"broken", "no-device", "warning"};

typedef struct Problem {
    Severity severity;
    char what[640];
    char fix[640];
} Problem;

// A GEMM and a convolution on one device, against the CPU backend on the same inputs.
typedef struct SmokeTest {
    int ran;             // 0: the device was not usable enough to try
    int passed;
    double gemm_error;   // max |gpu - cpu| / max(1, max |cpu|)
    double conv_error;
    char error[640];     // why it failed or did not run
} SmokeTest;

// What kind of code for the device's architecture this binary holds.
typedef enum ImageKind { IMAGE_UNKNOWN, IMAGE_SASS, IMAGE_PTX, IMAGE_NONE } ImageKind;
static const char *const image_kind_names[] = {"unknown", "sass", "ptx", "none"};

enum { MAX_PROBLEMS = 48 };

typedef struct Diagnosis {
    DoctorReport report;
    SmokeTest smoke[CUDA_DOCTOR_MAX_DEVICES];
    ImageKind image[CUDA_DOCTOR_MAX_DEVICES];
    char image_text[CUDA_DOCTOR_MAX_DEVICES][160];
    int usable[CUDA_DOCTOR_MAX_DEVICES];
    int usable_count;
    Problem problems[MAX_PROBLEMS];
    int problem_count;
    char notes[4][640];
    int note_count;
    int exit_code;
    char verdict[256];
} Diagnosis;

static void add_problem(Diagnosis *d, Severity severity, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_problem(Diagnosis *d, Severity severity, const char *fix, const char *fmt, ...) {
    if (d->problem_count == MAX_PROBLEMS) return;
    Problem *p = &d->problems[d->problem_count++];
    p->severity = severity;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->what, sizeof p->what, fmt, ap);
    va_end(ap);
    snprintf(p->fix, sizeof p->fix, "%s", fix);
}

static int version_known(const DoctorVersion *v) { return v->major || v->minor || v->patch; }

static int version_compare(const DoctorVersion *a, const DoctorVersion *b) {
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
    return 0;
}

// ---- the architectures compiled in ------------------------------------------------------

// Whether the architecture list from CMake ("75-real 80-real 90a-real 120") holds code
// for compute capability major.minor: SASS runs on its own major version at the same or
// a higher minor (an arch-specific "90a" only on exactly 9.0); PTX is JIT-compiled by the
// driver for any newer GPU.
static ImageKind image_from_architectures(const char *list, int major, int minor, int *arch) {
    int device = major * 10 + minor, best_sass = 0, best_ptx = 0, parsed_any = 0;
    *arch = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *word = strtok(copy, " ;"); word; word = strtok(NULL, " ;")) {
        char *end;
        long value = strtol(word, &end, 10);
        if (end == word || value <= 0 || value > 10000) return IMAGE_UNKNOWN;  // "native", "all"
        parsed_any = 1;
        int specific = *end == 'a' || *end == 'f';
        if (specific) end++;
        int sass = strcmp(end, "-virtual") != 0, ptx = strcmp(end, "-real") != 0;
        int entry_major = (int)value / 10, entry_minor = (int)value % 10;
        int runs = specific ? value == device : entry_major == major && entry_minor <= minor;
        if (sass && runs && value > best_sass) best_sass = (int)value;
        if (ptx && !specific && value <= device && value > best_ptx) best_ptx = (int)value;
    }
    if (!parsed_any) return IMAGE_UNKNOWN;
    *arch = best_sass ? best_sass : best_ptx;
    return best_sass ? IMAGE_SASS : best_ptx ? IMAGE_PTX : IMAGE_NONE;
}

// ---- the smoke test -------------------------------------------------------------------

static int upload(const Backend *b, const float *host, size_t n, float **out, Status *st) {
    TRY(b->raw_alloc(b, n * sizeof *host, (void **)out, st));
    if (host) return b->copy_to_device(b, *out, host, n * sizeof *host, st);
    return b->fill(b, *out, 0.0f, n, st);
}

static double max_relative_error(const float *got, const float *want, size_t n) {
    double worst = 0.0, scale = 1.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - (double)want[i]);
        if (!(e <= worst)) worst = e;  // a NaN wins
    }
    return worst / scale;
}

enum { SMOKE_M = 37, SMOKE_N = 29, SMOKE_K = 53 };

// C = A B on backend b, the result copied back into c_host.
static int smoke_gemm(const Backend *b, const float *a_host, const float *b_host, float *c_host,
                      Status *st) {
    float *a = NULL, *bm = NULL, *c = NULL;
    int rc = upload(b, a_host, SMOKE_M * SMOKE_K, &a, st);
    if (!rc) rc = upload(b, b_host, SMOKE_K * SMOKE_N, &bm, st);
    if (!rc) rc = upload(b, NULL, SMOKE_M * SMOKE_N, &c, st);
    if (!rc)
        rc = b->gemm(b, 0, 0, SMOKE_M, SMOKE_N, SMOKE_K, 1.0f, a, SMOKE_K, bm, SMOKE_N, 0.0f, c,
                     SMOKE_N, st);
    if (!rc) rc = b->copy_to_host(b, c_host, c, SMOKE_M * SMOKE_N * sizeof *c_host, st);
    b->raw_free(b, a);
    b->raw_free(b, bm);
    b->raw_free(b, c);
    return rc;
}

static const Conv2dGeometry smoke_conv = {
    .batch = 2, .in_channels = 3, .in_h = 10, .in_w = 10, .out_channels = 4, .out_h = 10,
    .out_w = 10, .kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1,
    .pad_left = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1,
};
enum {
    SMOKE_X = 2 * 3 * 10 * 10,
    SMOKE_W = 4 * 3 * 3 * 3,
    SMOKE_BIAS = 4,
    SMOKE_Y = 2 * 4 * 10 * 10,
};

static int smoke_conv2d(const Backend *b, const float *x_host, const float *w_host,
                        const float *bias_host, float *y_host, Status *st) {
    float *x = NULL, *w = NULL, *bias = NULL, *y = NULL;
    void *workspace = NULL;
    size_t workspace_bytes = 0;
    int rc = upload(b, x_host, SMOKE_X, &x, st);
    if (!rc) rc = upload(b, w_host, SMOKE_W, &w, st);
    if (!rc) rc = upload(b, bias_host, SMOKE_BIAS, &bias, st);
    if (!rc) rc = upload(b, NULL, SMOKE_Y, &y, st);
    if (!rc) rc = b->conv2d_workspace_size(b, &smoke_conv, &workspace_bytes, st);
    if (!rc && workspace_bytes) rc = b->raw_alloc(b, workspace_bytes, &workspace, st);
    if (!rc)
        rc = b->conv2d_forward(b, &smoke_conv, x, w, bias, y, workspace, workspace_bytes, st);
    if (!rc) rc = b->copy_to_host(b, y_host, y, SMOKE_Y * sizeof *y_host, st);
    b->raw_free(b, x);
    b->raw_free(b, w);
    b->raw_free(b, bias);
    b->raw_free(b, y);
    b->raw_free(b, workspace);
    return rc;
}

// Full fp32 (no TF32) on both sides, so the two agree to rounding: 1e-4 of the largest
// value is a hundred times the error of a 53-term fp32 dot product.
static const double SMOKE_TOLERANCE = 1e-4;

static void run_smoke_test(int ordinal, SmokeTest *t) {
    memset(t, 0, sizeof *t);
    Status st;
    status_clear(&st);
    CudaBackendOptions options = {.ordinal = ordinal, .allow_tf32 = 0};
    const Backend *gpu = NULL;
    if (cuda_backend_open(&options, &gpu, &st)) {
        snprintf(t->error, sizeof t->error, "cannot open the CUDA backend: %.600s", st.message);
        return;
    }
    t->ran = 1;
    const Backend *cpu = cpu_backend();
    if (!gpu->gemm || !gpu->conv2d_forward || !gpu->conv2d_workspace_size) {
        snprintf(t->error, sizeof t->error, "the CUDA backend of this build lacks gemm or "
                 "conv2d_forward");
        cuda_backend_close(gpu);
        return;
    }
    float a[SMOKE_M * SMOKE_K], bm[SMOKE_K * SMOKE_N], want[SMOKE_M * SMOKE_N],
        got[SMOKE_M * SMOKE_N];
    float x[SMOKE_X], w[SMOKE_W], bias[SMOKE_BIAS], y_want[SMOKE_Y], y_got[SMOKE_Y];
    Rng rng;
    rng_seed(&rng, 20240501u + (uint64_t)ordinal);
    for (size_t i = 0; i < SMOKE_M * SMOKE_K; i++) a[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_K * SMOKE_N; i++) bm[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_X; i++) x[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_W; i++) w[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    for (size_t i = 0; i < SMOKE_BIAS; i++) bias[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    const char *step = "GEMM on the CPU";
    int rc = smoke_gemm(cpu, a, bm, want, &st);
    if (!rc) {
        step = "GEMM on the GPU";
        rc = smoke_gemm(gpu, a, bm, got, &st);
    }
    if (!rc) {
        step = "conv2d on the CPU";
        rc = smoke_conv2d(cpu, x, w, bias, y_want, &st);
    }
    if (!rc) {
        step = "conv2d on the GPU";
        rc = smoke_conv2d(gpu, x, w, bias, y_got, &st);
    }
    cuda_backend_close(gpu);
    if (rc) {
        snprintf(t->error, sizeof t->error, "%s failed: %.600s", step, st.message);
        return;
    }
    t->gemm_error = max_relative_error(got, want, SMOKE_M * SMOKE_N);
    t->conv_error = max_relative_error(y_got, y_want, SMOKE_Y);
    t->passed = t->gemm_error <= SMOKE_TOLERANCE && t->conv_error <= SMOKE_TOLERANCE;
    if (!t->passed)
        snprintf(t->error, sizeof t->error, "the GPU's results differ from the CPU's: GEMM "
                 "error %.3g, conv2d error %.3g (tolerance %.0e)", t->gemm_error, t->conv_error,
                 SMOKE_TOLERANCE);
}

// ---- the verdict ----------------------------------------------------------------------

// A library whose loaded version is not the one trainer was built with.
static void check_library(Diagnosis *d, const DoctorLibraryInfo *lib) {
    char built[32], loaded[32], fix[640];
    int cudart = strcmp(lib->key, "cudart") == 0;
    doctor_version_format(&lib->built, !cudart, built, sizeof built);
    doctor_version_format(&lib->loaded, !cudart, loaded, sizeof loaded);
    const char *from = lib->path[0] ? lib->path : "an unknown file";
    if (!version_known(&lib->loaded)) {
        add_problem(d, SEVERITY_WARNING, "check that the library loads: `ldd $(which trainer)`",
                    "%s: built with %s, but the loaded library did not report its version",
                    lib->name, built);
        return;
    }
    if (lib->loaded.major != lib->built.major) {
        snprintf(fix, sizeof fix, "make the loader find %s %d first (check LD_LIBRARY_PATH and "
                 "`ldconfig -p | grep %s`), or rebuild trainer against %s %d", lib->name,
                 lib->built.major, lib->key, lib->name, lib->loaded.major);
        add_problem(d, SEVERITY_BROKEN, fix, "%s: built with %s, but %s from %s was loaded: a "
                    "different major version, whose interface differs", lib->name, built,
                    loaded, from);
    } else if (version_compare(&lib->loaded, &lib->built) < 0) {
        snprintf(fix, sizeof fix, "install %s %s or newer, or put it first on the library path "
                 "(LD_LIBRARY_PATH)", lib->name, built);
        add_problem(d, SEVERITY_WARNING, fix, "%s: built with %s, but the older %s from %s was "
                    "loaded; what trainer uses from %s may be missing%s", lib->name, built,
                    loaded, from, built,
                    strcmp(lib->key, "cudnn") == 0 ? " (TensorFlow refuses this: the loaded "
                                                     "minor version must be equal or higher)"
                                                   : "");
    }
}

static void check_driver(Diagnosis *d) {
    const DoctorReport *r = &d->report;
    const DoctorVersion *runtime = &r->libraries[DOCTOR_CUDART].loaded;
    char driver_text[32], runtime_text[32], fix[640];
    doctor_version_format(&r->driver_cuda, 0, driver_text, sizeof driver_text);
    doctor_version_format(runtime, 0, runtime_text, sizeof runtime_text);
    if (!version_known(&r->driver_cuda)) {
        if (r->kernel_module[0])
            snprintf(fix, sizeof fix, "the kernel module %s is loaded but libcuda.so.1 is not "
                     "found: install the matching user-space driver (libnvidia-compute / "
                     "cuda-drivers) or add its folder to LD_LIBRARY_PATH. Until then training "
                     "runs on the CPU", r->kernel_module);
        else
            snprintf(fix, sizeof fix, "on a machine with an NVIDIA GPU, install the NVIDIA "
                     "driver (580 or newer for CUDA 13) and check that nvidia-smi lists the GPU. "
                     "Until then training runs on the CPU (--device auto picks it; --device cpu "
                     "says so)");
        add_problem(d, SEVERITY_NO_DEVICE, fix, "no NVIDIA driver is loaded: "
                    "cudaDriverGetVersion reports 0%s", r->kernel_module[0] ? ""
                    : " and /proc/driver/nvidia/version does not exist");
        return;
    }
    if (!version_known(runtime)) return;
    if (runtime->major > r->driver_cuda.major) {
        snprintf(fix, sizeof fix, "update the NVIDIA driver to one that supports CUDA %d (CUDA "
                 "13 needs 580 or newer, CUDA 12 needs 525 or newer), or build trainer with a "
                 "CUDA %d toolkit", runtime->major, r->driver_cuda.major);
        add_problem(d, SEVERITY_BROKEN, fix, "the CUDA runtime is %s, but the driver supports "
                    "CUDA %s at most: the runtime cannot use it (cudaErrorInsufficientDriver)",
                    runtime_text, driver_text);
    } else if (version_compare(runtime, &r->driver_cuda) > 0) {
        snprintf(fix, sizeof fix, "update the NVIDIA driver to one that supports CUDA %s",
                 runtime_text);
        add_problem(d, SEVERITY_WARNING, fix, "the CUDA runtime %s is newer than the CUDA %s "
                    "the driver supports: it runs under minor-version compatibility, but PTX "
                    "from this toolkit cannot be JIT-compiled by the driver", runtime_text,
                    driver_text);
    }
}

static void check_devices(Diagnosis *d) {
    const DoctorReport *r = &d->report;
    if (r->device_count_error[0] && version_known(&r->driver_cuda)) {
        char fix[640];
        if (r->cuda_visible_devices_set)
            snprintf(fix, sizeof fix, "CUDA_VISIBLE_DEVICES=\"%s\" may hide every GPU: unset it "
                     "or list valid ordinals; check nvidia-smi", r->cuda_visible_devices);
        else
            snprintf(fix, sizeof fix, "check that nvidia-smi lists a GPU; a driver update or "
                     "a reboot after one is often what is missing");
        add_problem(d, SEVERITY_NO_DEVICE, fix, "cudaGetDeviceCount -> %s",
                    r->device_count_error);
    } else if (!r->device_count_error[0] && r->device_count == 0) {
        add_problem(d, SEVERITY_NO_DEVICE,
                    r->cuda_visible_devices_set ? "unset CUDA_VISIBLE_DEVICES or list valid "
                                                  "ordinals in it"
                                                : "check nvidia-smi",
                    "the driver sees no CUDA device%s", r->cuda_visible_devices_set
                        ? " (CUDA_VISIBLE_DEVICES is set)" : "");
    }
    for (int i = 0; i < r->devices_listed; i++) {
        const DoctorDevice *dev = &r->devices[i];
        char fix[640];
        int arch = 0;
        d->image[i] = image_from_architectures(r->architectures, dev->compute_major,
                                               dev->compute_minor, &arch);
        if (d->image[i] == IMAGE_SASS)
            snprintf(d->image_text[i], sizeof d->image_text[i], "SASS for sm_%d", arch);
        else if (d->image[i] == IMAGE_PTX)
            snprintf(d->image_text[i], sizeof d->image_text[i], "PTX for compute_%d, "
                     "JIT-compiled by the driver at the first start", arch);
        else if (d->image[i] == IMAGE_NONE)
            snprintf(d->image_text[i], sizeof d->image_text[i], "none for sm_%d%d",
                     dev->compute_major, dev->compute_minor);
        else
            snprintf(d->image_text[i], sizeof d->image_text[i], "not known from the list");
        // The runtime has the last word: it found an image the list does not explain.
        if ((d->image[i] == IMAGE_NONE || d->image[i] == IMAGE_UNKNOWN) && dev->binary_version) {
            d->image[i] = IMAGE_UNKNOWN;
            snprintf(d->image_text[i], sizeof d->image_text[i], "loaded for sm_%d (the list "
                     "does not say whether as SASS or from PTX)", dev->binary_version);
        }
        if (dev->error[0]) {
            int no_image = strstr(dev->error, "NoKernelImage") != NULL ||
                           strstr(dev->error, "InvalidDeviceFunction") != NULL;
            if (no_image) {
                d->image[i] = IMAGE_NONE;
                snprintf(fix, sizeof fix, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d%d (or add "
                         "%d%d-real to the list)", dev->compute_major, dev->compute_minor,
                         dev->compute_major, dev->compute_minor);
                add_problem(d, SEVERITY_BROKEN, fix, "cuda:%d (%s, sm_%d%d): this binary has no "
                            "kernel image for it (%s)", i, dev->name, dev->compute_major,
                            dev->compute_minor, dev->error);
            } else {
                add_problem(d, SEVERITY_BROKEN, "check nvidia-smi for the device's state and "
                            "for processes holding it; a reset or reboot may be needed",
                            "cuda:%d%s%s: %s", i, dev->name[0] ? " " : "", dev->name,
                            dev->error);
            }
            continue;
        }
        if (dev->compute_major * 10 + dev->compute_minor < 75) {
            add_problem(d, SEVERITY_NO_DEVICE, "use a GPU of the Turing generation or later, or "
                        "--device cpu", "cuda:%d (%s) has compute capability %d.%d; CUDA 13 and "
                        "trainer need 7.5 or newer", i, dev->name, dev->compute_major,
                        dev->compute_minor);
            continue;
        }
        run_smoke_test(i, &d->smoke[i]);
        if (!d->smoke[i].passed) {
            add_problem(d, SEVERITY_BROKEN, "run the gpu tests (ctest -L gpu) to find the op, and "
                        "report it with this output", "cuda:%d (%s): smoke test failed: %s", i,
                        dev->name, d->smoke[i].error);
            continue;
        }
        if (dev->total_memory && dev->free_memory < dev->total_memory / 10) {
            char free_text[32], total_text[32];
            add_problem(d, SEVERITY_WARNING, "see what holds it with nvidia-smi; or train with "
                        "a smaller --batch or --memory-limit",
                        "cuda:%d (%s): only %s of %s is free: other processes hold the rest", i,
                        dev->name, alloc_format_bytes(dev->free_memory, free_text, sizeof free_text),
                        alloc_format_bytes(dev->total_memory, total_text, sizeof total_text));
        }
        d->usable[i] = 1;
        d->usable_count++;
    }
}

// Libraries loaded from several folders: not wrong in itself, but the usual sign of a
// second copy earlier on the search path.
static void check_library_folders(Diagnosis *d) {
    char folders[DOCTOR_LIBRARY_COUNT][512];
    int count = 0;
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        const char *path = d->report.libraries[i].path;
        const char *slash = strrchr(path, '/');
        if (!slash) continue;
        char folder[512];
        snprintf(folder, sizeof folder, "%.*s", (int)(slash - path), path);
        int seen = 0;
        for (int k = 0; k < count; k++) seen |= strcmp(folders[k], folder) == 0;
        if (!seen) snprintf(folders[count++], sizeof folders[0], "%s", folder);
    }
    if (count < 2) return;
    char list[640] = "";
    for (int k = 0; k < count; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                 folders[k]);
    snprintf(d->notes[d->note_count++], sizeof d->notes[0], "the CUDA libraries load from %d "
             "folders (%s): fine while the versions match, but a copy in one folder can shadow "
             "the toolkit's after an upgrade", count, list);
}

static void diagnose(Diagnosis *d) {
    const DoctorReport *r = &d->report;
    if (!r->built_with_cuda) {
        char fix[640];
        snprintf(fix, sizeof fix, "install the CUDA toolkit, cuDNN and NCCL and rebuild "
                 "(cmake -DTRAINER_CUDA=ON)%s. Until then training runs on the CPU",
                 r->kernel_module[0] ? ": this machine has an NVIDIA driver, so a CUDA build "
                                       "could use its GPUs" : "");
        add_problem(d, SEVERITY_NO_DEVICE, fix, "this trainer was built without CUDA support");
    } else {
        check_driver(d);
        for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) check_library(d, &r->libraries[i]);
        check_library_folders(d);
        check_devices(d);
    }
    int broken = 0, warnings = 0;
    for (int i = 0; i < d->problem_count; i++) {
        broken += d->problems[i].severity == SEVERITY_BROKEN;
        warnings += d->problems[i].severity == SEVERITY_WARNING;
    }
    if (broken) {
        d->exit_code = 1;
        snprintf(d->verdict, sizeof d->verdict, "something is broken (%d problem%s): %s", broken,
                 broken == 1 ? "" : "s",
                 d->usable_count ? "some GPUs work, see the fixes"
                                 : "no GPU can be used until it is fixed; training runs on the CPU");
    } else if (d->usable_count == 0) {
        d->exit_code = 3;
        snprintf(d->verdict, sizeof d->verdict, "no usable GPU: training will run on the CPU");
    } else {
        d->exit_code = 0;
        snprintf(d->verdict, sizeof d->verdict, "all well: %d usable GPU%s%s", d->usable_count,
                 d->usable_count == 1 ? "" : "s",
                 warnings ? ", with warnings below" : "; --device auto trains on cuda:0");
    }
}

// ---- text output ----------------------------------------------------------------------

// The library table, shared with `trainer lab version-report`.
void doctor_print_versions(const DoctorReport *r, FILE *out) {
    char driver[32];
    fprintf(out, "driver\n");
    fprintf(out, "  NVIDIA kernel module   %s\n", r->kernel_module[0] ? r->kernel_module
                                                   : "none (no /proc/driver/nvidia/version)");
    fprintf(out, "  libcuda                %s\n",
            r->driver_library[0] ? r->driver_library
            : r->built_with_cuda ? "not loaded"
                                 : "not loaded (built without CUDA, so never looked for)");
    fprintf(out, "  newest CUDA supported  %s\n",
            version_known(&r->driver_cuda)
                ? doctor_version_format(&r->driver_cuda, 0, driver, sizeof driver)
            : r->built_with_cuda ? "none: no driver is loaded (cudaDriverGetVersion reports 0)"
                                 : "not asked (built without CUDA)");
    fprintf(out, "libraries       built with  loaded      loaded from\n");
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        const DoctorLibraryInfo *lib = &r->libraries[i];
        int with_patch = i != DOCTOR_CUDART;
        char built[32], loaded[32];
        fprintf(out, "  %-13s %-11s %-11s %s\n", lib->name,
                r->built_with_cuda ? doctor_version_format(&lib->built, with_patch, built,
                                                           sizeof built) : "-",
                r->built_with_cuda ? doctor_version_format(&lib->loaded, with_patch, loaded,
                                                           sizeof loaded) : "-",
                lib->path[0] ? lib->path : "-");
    }
}

static void print_text(const Diagnosis *d) {
    const DoctorReport *r = &d->report;
    printf("trainer %s doctor\n", TRAINER_VERSION);
    printf("build\n  CUDA backend           %s\n", r->built_with_cuda ? "built in" : "not built in");
    if (r->built_with_cuda)
        printf("  architectures          %s\n", r->architectures[0] ? r->architectures : "unknown");
    doctor_print_versions(r, stdout);
    printf("environment\n");
    printf("  CUDA_VISIBLE_DEVICES   %s%s%s\n", r->cuda_visible_devices_set ? "\"" : "",
           r->cuda_visible_devices_set ? r->cuda_visible_devices : "(not set)",
           r->cuda_visible_devices_set ? "\"" : "");
    printf("  LD_LIBRARY_PATH        %s\n",
           r->ld_library_path_set ? r->ld_library_path : "(not set)");
    printf("devices\n");
    if (r->device_count_error[0]) printf("  none: %s\n", r->device_count_error);
    else if (r->device_count == 0) printf("  none visible\n");
    for (int i = 0; i < r->devices_listed; i++) {
        const DoctorDevice *dev = &r->devices[i];
        char total[32], free_text[32];
        printf("  cuda:%d %s, compute %d.%d, %d SMs, %s (%s free)\n", i,
               dev->name[0] ? dev->name : "(unknown)", dev->compute_major, dev->compute_minor,
               dev->multiprocessors, alloc_format_bytes(dev->total_memory, total, sizeof total),
               alloc_format_bytes(dev->free_memory, free_text, sizeof free_text));
        printf("    clocks: SM %d MHz, memory %d MHz, %d-bit bus; PCI %s\n", dev->clock_khz / 1000,
               dev->memory_clock_khz / 1000, dev->memory_bus_bits,
               dev->pci_bus_id[0] ? dev->pci_bus_id : "unknown");
        printf("    kernel image: %s", d->image_text[i]);
        if (dev->binary_version)
            printf(" (runtime: binary %d, PTX %d)", dev->binary_version, dev->ptx_version);
        printf("\n");
        if (dev->error[0]) printf("    error: %s\n", dev->error);
        const SmokeTest *t = &d->smoke[i];
        if (t->ran && t->passed)
            printf("    smoke test: passed (GEMM %dx%dx%d error %.1e, conv2d 3->4 3x3 error "
                   "%.1e, against the CPU)\n", SMOKE_M, SMOKE_N, SMOKE_K, t->gemm_error,
                   t->conv_error);
        else if (t->error[0])
            printf("    smoke test: FAILED: %s\n", t->error);
    }
    for (int i = 0; i < d->note_count; i++) printf("note: %s\n", d->notes[i]);
    printf("\nverdict: %s\n", d->verdict);
    int number = 0;
    for (int i = 0; i < d->problem_count; i++) {
        const Problem *p = &d->problems[i];
        if (number == 0) printf("fixes:\n");
        printf("  %d. %s%s\n     fix: %s\n", ++number,
               p->severity == SEVERITY_WARNING ? "(warning) " : "", p->what, p->fix);
    }
}

// ---- JSON output ----------------------------------------------------------------------

// Length of the valid UTF-8 sequence at s, or 0 when s does not start one.
static int utf8_length(const unsigned char *s) {
    int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] >= 0xf8) return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

static void json_string(FILE *out, const char *text) {
    if (!text) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        if (*s == '"' || *s == '\\') {
            fprintf(out, "\\%c", *s++);
        } else if (*s == '\n') {
            fputs("\\n", out);
            s++;
        } else if (*s < 0x20 || *s == 0x7f) {
            fprintf(out, "\\u%04x", *s++);
        } else if (*s < 0x80) {
            fputc(*s++, out);
        } else {
            int n = utf8_length(s);
            if (n == 0) {
                fputs("\\ufffd", out);  // not UTF-8 (a Latin-1 path): keep the JSON valid
                s++;
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
            }
        }
    }
    fputc('"', out);
}

static void json_key(FILE *out, int *first, const char *key) {
    fputs(*first ? "" : ", ", out);
    *first = 0;
    json_string(out, key);
    fputs(": ", out);
}

static void json_version(FILE *out, const DoctorVersion *v, int with_patch) {
    char text[32];
    if (!version_known(v)) fputs("null", out);
    else json_string(out, doctor_version_format(v, with_patch, text, sizeof text));
}

static void json_number(FILE *out, double value) {
    if (isfinite(value)) fprintf(out, "%.6g", value);
    else fputs("null", out);
}

static void print_json(const Diagnosis *d) {
    const DoctorReport *r = &d->report;
    FILE *out = stdout;
    int first = 1;
    fputs("{", out);
    json_key(out, &first, "trainer_version");
    json_string(out, TRAINER_VERSION);
    json_key(out, &first, "built_with_cuda");
    fputs(r->built_with_cuda ? "true" : "false", out);
    json_key(out, &first, "architectures");
    fputs("[", out);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", r->architectures);
    int count = 0;
    for (char *word = strtok(copy, " ;"); word; word = strtok(NULL, " ;")) {
        fputs(count++ ? ", " : "", out);
        json_string(out, word);
    }
    fputs("]", out);
    json_key(out, &first, "driver");
    int inner = 1;
    fputs("{", out);
    json_key(out, &inner, "loaded");
    fputs(version_known(&r->driver_cuda) ? "true" : "false", out);
    json_key(out, &inner, "cuda_version");
    json_version(out, &r->driver_cuda, 0);
    json_key(out, &inner, "kernel_module");
    json_string(out, r->kernel_module[0] ? r->kernel_module : NULL);
    json_key(out, &inner, "library");
    json_string(out, r->driver_library[0] ? r->driver_library : NULL);
    fputs("}", out);
    json_key(out, &first, "libraries");
    inner = 1;
    fputs("{", out);
    for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) {
        const DoctorLibraryInfo *lib = &r->libraries[i];
        int with_patch = i != DOCTOR_CUDART, fields = 1;
        json_key(out, &inner, lib->key);
        fputs("{", out);
        json_key(out, &fields, "name");
        json_string(out, lib->name);
        json_key(out, &fields, "built");
        json_version(out, r->built_with_cuda ? &lib->built : &(DoctorVersion){0, 0, 0},
                     with_patch);
        json_key(out, &fields, "loaded");
        json_version(out, &lib->loaded, with_patch);
        json_key(out, &fields, "path");
        json_string(out, lib->path[0] ? lib->path : NULL);
        fputs("}", out);
    }
    fputs("}", out);
    json_key(out, &first, "environment");
    inner = 1;
    fputs("{", out);
    json_key(out, &inner, "CUDA_VISIBLE_DEVICES");
    json_string(out, r->cuda_visible_devices_set ? r->cuda_visible_devices : NULL);
    json_key(out, &inner, "LD_LIBRARY_PATH");
    json_string(out, r->ld_library_path_set ? r->ld_library_path : NULL);
    fputs("}", out);
    json_key(out, &first, "device_count");
    fprintf(out, "%d", r->device_count);
    json_key(out, &first, "device_error");
    json_string(out, r->device_count_error[0] ? r->device_count_error : NULL);
    json_key(out, &first, "devices");
    fputs("[", out);
    for (int i = 0; i < r->devices_listed; i++) {
        const DoctorDevice *dev = &r->devices[i];
        const SmokeTest *t = &d->smoke[i];
        int fields = 1;
        char capability[16];
        snprintf(capability, sizeof capability, "%d.%d", dev->compute_major, dev->compute_minor);
        fputs(i ? ", {" : "{", out);
        json_key(out, &fields, "ordinal");
        fprintf(out, "%d", i);
        json_key(out, &fields, "name");
        json_string(out, dev->name);
        json_key(out, &fields, "pci_bus_id");
        json_string(out, dev->pci_bus_id[0] ? dev->pci_bus_id : NULL);
        json_key(out, &fields, "compute_capability");
        json_string(out, capability);
        json_key(out, &fields, "multiprocessors");
        fprintf(out, "%d", dev->multiprocessors);
        json_key(out, &fields, "memory_total_bytes");
        fprintf(out, "%zu", dev->total_memory);
        json_key(out, &fields, "memory_free_bytes");
        fprintf(out, "%zu", dev->free_memory);
        json_key(out, &fields, "clock_mhz");
        fprintf(out, "%d", dev->clock_khz / 1000);
        json_key(out, &fields, "memory_clock_mhz");
        fprintf(out, "%d", dev->memory_clock_khz / 1000);
        json_key(out, &fields, "memory_bus_bits");
        fprintf(out, "%d", dev->memory_bus_bits);
        json_key(out, &fields, "kernel_image");
        json_string(out, image_kind_names[d->image[i]]);
        json_key(out, &fields, "kernel_image_detail");
        json_string(out, d->image_text[i]);
        json_key(out, &fields, "binary_version");
        fprintf(out, "%d", dev->binary_version);
        json_key(out, &fields, "ptx_version");
        fprintf(out, "%d", dev->ptx_version);
        json_key(out, &fields, "error");
        json_string(out, dev->error[0] ? dev->error : NULL);
        json_key(out, &fields, "usable");
        fputs(d->usable[i] ? "true" : "false", out);
        json_key(out, &fields, "smoke_test");
        int smoke = 1;
        fputs("{", out);
        json_key(out, &smoke, "ran");
        fputs(t->ran ? "true" : "false", out);
        json_key(out, &smoke, "passed");
        fputs(t->passed ? "true" : "false", out);
        json_key(out, &smoke, "gemm_error");
        if (t->ran && !t->error[0]) json_number(out, t->gemm_error);
        else fputs("null", out);
        json_key(out, &smoke, "conv2d_error");
        if (t->ran && !t->error[0]) json_number(out, t->conv_error);
        else fputs("null", out);
        json_key(out, &smoke, "error");
        json_string(out, t->error[0] ? t->error : NULL);
        fputs("}}", out);
    }
    fputs("]", out);
    json_key(out, &first, "usable_devices");
    fprintf(out, "%d", d->usable_count);
    json_key(out, &first, "notes");
    fputs("[", out);
    for (int i = 0; i < d->note_count; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, d->notes[i]);
    }
    fputs("]", out);
    json_key(out, &first, "problems");
    fputs("[", out);
    for (int i = 0; i < d->problem_count; i++) {
        int fields = 1;
        fputs(i ? ", {" : "{", out);
        json_key(out, &fields, "severity");
        json_string(out, severity_names[d->problems[i].severity]);
        json_key(out, &fields, "what");
        json_string(out, d->problems[i].what);
        json_key(out, &fields, "fix");
        json_string(out, d->problems[i].fix);
        fputs("}", out);
    }
    fputs("]", out);
    json_key(out, &first, "verdict");
    json_string(out, d->verdict);
    json_key(out, &first, "exit_code");
    fprintf(out, "%d", d->exit_code);
    fputs("}\n", out);
}

int run_doctor(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    if (args->positional_count) {
        status_fail(&st, STATUS_BAD_INPUT, "trainer doctor takes no arguments, got '%s'",
                    args->positionals[0]);
        status_hint(&st, "usage: trainer doctor [--json]");
        return report_failure(&st);
    }
    Diagnosis *d = calloc(1, sizeof *d);
    if (!d) {
        status_fail(&st, STATUS_RUNTIME_ERROR, "out of host memory");
        return report_failure(&st);
    }
    if (cuda_doctor_collect(&d->report, &st)) {
        free(d);
        return report_failure(&st);
    }
    diagnose(d);
    if (args_get(cmd, args, "--json")) print_json(d);
    else print_text(d);
    fflush(stdout);
    int exit_code = d->exit_code;
    free(d);
    return exit_code;
}
