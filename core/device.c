#include "core/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_device.h"

enum { MAX_LISTED_DEVICES = 16 };

// Parses "cuda" / "cuda:N"; returns the ordinal or -1 when the text is not of that form.
static int cuda_ordinal(const char *spec, int default_ordinal) {
    if (strcmp(spec, "cuda") == 0) return default_ordinal;
    if (strncmp(spec, "cuda:", 5) != 0 || !spec[5]) return -1;
    char *end;
    long n = strtol(spec + 5, &end, 10);
    return (*end || n < 0 || n > 1024) ? -1 : (int)n;
}

static int open_cpu(const DeviceOptions *options, Device *d, Status *st) {
    // Each op family registers its own slots when the table is first used; one it forgot is
    // refused here, as on CUDA, rather than called through NULL mid-run.
    char missing[1024];
    if (backend_missing_ops(cpu_backend(), missing, sizeof missing)) {
        status_fail(st, STATUS_RUNTIME_ERROR, "--device cpu: the CPU backend of this build "
                    "lacks ops: %s", missing);
        status_hint(st, "a build error: each kernels/cpu/cpu_FAMILY.c registers its family's "
                    "ops in cpu_register_FAMILY_ops; rebuild, and report it if it persists");
        return STATUS_RUNTIME_ERROR;
    }
    d->backend = cpu_backend();
    snprintf(d->name, sizeof d->name, "cpu");
    d->precision = PRECISION_FP32;
    cpu_backend_set_threads(options->threads);
    cpu_backend_flush_denormals();
    size_t limit = 0;
    if (options->memory_limit)
        TRY(alloc_parse_limit(options->memory_limit, d->backend->total_memory(d->backend), &limit,
                              st));
    return alloc_init(&d->alloc, d->backend, options->mode, limit, st);
}

// The visible devices as "cuda:0 NAME (sm_XY), ...", for messages (the first
// MAX_LISTED_DEVICES); the name and compute capability of `ordinal` into d (left empty when
// there is no such device), which precision_check needs.
static int describe_visible(int ordinal, Device *d, char *text, size_t size, Status *st) {
    int max = ordinal + 1 > MAX_LISTED_DEVICES ? ordinal + 1 : MAX_LISTED_DEVICES;
    CudaDeviceInfo *devices = calloc((size_t)max, sizeof *devices);
    if (!devices)
        return status_out_of_host_memory(st, (size_t)max * sizeof *devices, "listing CUDA devices");
    int count = 0;
    int rc = cuda_list_devices(devices, max, &count, st);
    if (!rc && ordinal < count) {
        snprintf(d->gpu, sizeof d->gpu, "%s", devices[ordinal].name);
        d->compute = devices[ordinal].compute_major * 10 + devices[ordinal].compute_minor;
    }
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; !rc && i < count && i < MAX_LISTED_DEVICES && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%scuda:%d %s (sm_%d%d)", i ? ", " : "",
                                 i, devices[i].name, devices[i].compute_major,
                                 devices[i].compute_minor);
    free(devices);
    if (!rc && count == 0) {
        status_fail(st, STATUS_NO_DEVICE, "no CUDA device is visible");
        status_hint(st, "check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --device cpu");
        return STATUS_NO_DEVICE;
    }
    return rc;
}

// How a CUDA device's errors name it: "--device cuda:1", or "--gpus 0,1: cuda:1".
static const char *device_named(const DeviceOptions *options, char *text, size_t size) {
    if (options->named_by) snprintf(text, size, "%s: %s", options->named_by, options->spec);
    else snprintf(text, size, "--device %s", options->spec);
    return text;
}

// Opens cuda:ordinal with every op the trainer needs, or says why not.
static int open_cuda(const DeviceOptions *options, int ordinal, Device *d, Status *st) {
    char visible[1024], named[512];
    device_named(options, named, sizeof named);
    Status probe;
    status_clear(&probe);
    if (describe_visible(ordinal, d, visible, sizeof visible, &probe)) {
        status_fail(st, STATUS_NO_DEVICE, "%s: %s", named, probe.message);
        status_hint(st, "%s", probe.hint);
        memcpy(st->error_name, probe.error_name, sizeof st->error_name);
        return STATUS_NO_DEVICE;
    }
    Precision asked = options->precision;
    if (asked == PRECISION_DEFAULT && options->no_tf32) asked = PRECISION_FP32;
    // On a GPU without the precision asked for, fp32: precision_check refuses the run
    // before any kernel, naming the layer; the device itself stays usable (trainer check).
    if (d->compute && !backend_precision_supported_on(d->compute, asked)) asked = PRECISION_FP32;
    CudaBackendOptions cuda = {.ordinal = ordinal, .precision = asked, .allow_tf32 = 1,
                               .disabled_levers = options->disabled_levers,
                               .nhwc = options->nhwc};
    const Backend *backend = NULL;
    if (cuda_backend_open(&cuda, &backend, st)) {
        char message[sizeof st->message];
        snprintf(message, sizeof message, "%.100s: %.600s (visible: %.300s)", named,
                 st->message, visible);
        snprintf(st->message, sizeof st->message, "%s", message);
        return st->code;
    }
    char missing[1024];
    if (backend_missing_ops(backend, missing, sizeof missing)) {
        cuda_backend_close(backend);
        status_fail(st, STATUS_NO_DEVICE, "%s: the CUDA backend of this build lacks ops: %s",
                    named, missing);
        status_hint(st, "train with --device cpu until they are implemented");
        return STATUS_NO_DEVICE;
    }
    d->backend = backend;
    d->owns_backend = 1;
    d->precision = cuda_backend_precision(backend);
    d->disabled_levers = options->disabled_levers;
    snprintf(d->name, sizeof d->name, "%s", backend->name);
    size_t limit = 0;
    if (options->memory_limit)
        TRY(alloc_parse_limit(options->memory_limit, backend->total_memory(backend), &limit, st));
    return alloc_init(&d->alloc, backend, options->mode, limit, st);
}

int device_open(const DeviceOptions *options, Device *d, char *notice, size_t notice_size,
                Status *st) {
    memset(d, 0, sizeof *d);
    notice[0] = '\0';
    const char *spec = options->spec ? options->spec : "auto";
    if (strcmp(spec, "cpu") == 0) return open_cpu(options, d, st);
    if (strcmp(spec, "auto") == 0) {
        DeviceOptions cuda_options = *options;
        char spec_text[32];
        snprintf(spec_text, sizeof spec_text, "cuda:%d", options->default_ordinal);
        cuda_options.spec = spec_text;
        Status probe;
        status_clear(&probe);
        if (open_cuda(&cuda_options, options->default_ordinal, d, &probe) == 0) return 0;
        if (probe.code != STATUS_NO_DEVICE) {
            *st = probe;
            return st->code;
        }
        memset(d, 0, sizeof *d);
        // The message starts "--device cuda:0: "; the user asked for auto, so drop it.
        const char *why = strstr(probe.message, ": ") ? strstr(probe.message, ": ") + 2 : probe.message;
        snprintf(notice, notice_size, "using the CPU; no usable GPU: %s", why);
        return open_cpu(options, d, st);
    }
    int ordinal = cuda_ordinal(spec, options->default_ordinal);
    if (ordinal >= 0) return open_cuda(options, ordinal, d, st);
    return device_refuse_unknown(spec, st);
}

int device_refuse_unknown(const char *spec, Status *st) {
    status_fail(st, STATUS_BAD_INPUT, "unknown device '%s'", spec);
    status_hint(st, "devices: cpu, auto, cuda, cuda:N");
    return STATUS_BAD_INPUT;
}

void device_close(Device *d) {
    alloc_destroy(&d->alloc);
    if (d->owns_backend) cuda_backend_close(d->backend);
    d->backend = NULL;
    d->owns_backend = 0;
}
