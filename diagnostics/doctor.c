// The verdict of `trainer doctor`: each check turns facts of the report into problems,
// each with a fix; then the usable devices and the problems' severities make the verdict
// and the exit code.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/escape.h"
#include "core/alloc.h"
#include "diagnostics/doctor.h"
#include "kernels/cuda/cuda_doctor.h"

static const char *const severity_names[] = {"broken", "no-device", "warning"};

const char *doctor_severity_name(Severity severity) { return severity_names[severity]; }

static void add_problem(Diagnosis *d, Severity severity, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_problem(Diagnosis *d, Severity severity, const char *fix, const char *fmt, ...) {
    if (d->problem_count == DOCTOR_MAX_PROBLEMS) return;
    Problem *p = &d->problems[d->problem_count++];
    p->severity = severity;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->what, sizeof p->what, fmt, ap);
    va_end(ap);
    snprintf(p->fix, sizeof p->fix, "%s", fix);
}

static int version_compare(const DoctorVersion *a, const DoctorVersion *b) {
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
    return 0;
}


// A library whose loaded version is not the one trainer was built with.
static void check_library(Diagnosis *d, const DoctorLibraryInfo *lib) {
    char built[32], loaded[32], fix[640];
    int cudart = strcmp(lib->key, "cudart") == 0;
    doctor_version_format(&lib->built, !cudart, built, sizeof built);
    doctor_version_format(&lib->loaded, !cudart, loaded, sizeof loaded);
    const char *from = lib->path[0] ? lib->path : "an unknown file";
    if (!doctor_version_known(&lib->loaded)) {
        add_problem(d, SEVERITY_WARNING, "check that the library loads: `ldd` on trainer_cuda.so "
                    "(beside the trainer binary) names what is missing",
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
    if (!doctor_version_known(&r->driver_cuda)) {
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
    if (!doctor_version_known(runtime)) return;
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

// The kind of kernel image device i gets, in d->image[i] and in words in d->image_text[i].
static void describe_image(Diagnosis *d, int i) {
    const DoctorDevice *dev = &d->report.devices[i];
    int arch = 0;
    d->image[i] = doctor_image_from_architectures(d->report.architectures, dev->compute_major,
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
}

// No device at all: why the driver lists none.
static void check_device_count(Diagnosis *d) {
    const DoctorReport *r = &d->report;
    if (r->device_count_error[0] && doctor_version_known(&r->driver_cuda)) {
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
}

// One device: its kernel image, its errors, its capability, its smoke test, its free
// memory; usable when nothing of these is wrong.
static void check_device(Diagnosis *d, int i) {
    const DoctorDevice *dev = &d->report.devices[i];
    char fix[640];
    describe_image(d, i);
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
        return;
    }
    if (dev->compute_major * 10 + dev->compute_minor < 75) {
        add_problem(d, SEVERITY_NO_DEVICE, "use a GPU of the Turing generation or later, or "
                    "--device cpu", "cuda:%d (%s) has compute capability %d.%d; CUDA 13 and "
                    "trainer need 7.5 or newer", i, dev->name, dev->compute_major,
                    dev->compute_minor);
        return;
    }
    doctor_smoke_test(i, &d->smoke[i]);
    if (!d->smoke[i].passed) {
        add_problem(d, SEVERITY_BROKEN, "run the gpu tests (ctest -L gpu) to find the op, and "
                    "report it with this output", "cuda:%d (%s): smoke test failed: %s", i,
                    dev->name, d->smoke[i].error);
        return;
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

static void check_devices(Diagnosis *d) {
    check_device_count(d);
    for (int i = 0; i < d->report.devices_listed; i++) check_device(d, i);
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
    // Of a note's 600 bytes: the sentence's other words fit beside it. A folder that does
    // not fit is counted, not cut (a cut path reads as another folder).
    char list[400] = "";
    int left_out = 0;
    for (int k = 0; k < count; k++) name_list_append(list, sizeof list, folders[k], &left_out);
    name_list_end(list, sizeof list, left_out);
    snprintf(d->notes[d->note_count++], sizeof d->notes[0], "the CUDA libraries load from %d "
             "folders (%s): fine while the versions match, but a copy in one folder can shadow "
             "the toolkit's after an upgrade", count, list);
}

static void check_all(Diagnosis *d) {
    const DoctorReport *r = &d->report;
    if (!r->built_with_cuda) {
        char fix[640];
        snprintf(fix, sizeof fix, "install the CUDA toolkit, cuDNN and NCCL and rebuild "
                 "(cmake -DTRAINER_CUDA=ON)%s. Until then training runs on the CPU",
                 r->kernel_module[0] ? ": this machine has an NVIDIA driver, so a CUDA build "
                                       "could use its GPUs" : "");
        add_problem(d, SEVERITY_NO_DEVICE, fix, "this trainer was built without CUDA support");
    } else if (r->backend_error[0]) {
        add_problem(d, SEVERITY_BROKEN, r->backend_hint, "%s", r->backend_error);
    } else {
        check_driver(d);
        for (int i = 0; i < DOCTOR_LIBRARY_COUNT; i++) check_library(d, &r->libraries[i]);
        check_library_folders(d);
        check_devices(d);
    }
}

static void decide_verdict(Diagnosis *d) {
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

int doctor_diagnose(Diagnosis *d, Status *st) {
    TRY(cuda_doctor_collect(&d->report, st));
    check_all(d);
    decide_verdict(d);
    return 0;
}
