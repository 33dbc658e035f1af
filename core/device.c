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
    d->backend = cpu_backend();
    snprintf(d->name, sizeof d->name, "cpu");
    cpu_backend_set_threads(options->threads);
    cpu_backend_flush_denormals();
    size_t limit = 0;
    if (options->memory_limit)
        TRY(alloc_parse_limit(options->memory_limit, d->backend->total_memory(d->backend), &limit,
                              st));
    return alloc_init(&d->alloc, d->backend, options->mode, limit, st);
}

// The visible devices as "cuda:0 NAME (sm_XY), ...", for messages.
static int describe_visible(char *text, size_t size, Status *st) {
    CudaDeviceInfo devices[MAX_LISTED_DEVICES];
    int count = 0;
    TRY(cuda_list_devices(devices, MAX_LISTED_DEVICES, &count, st));
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%scuda:%d %s (sm_%d%d)", i ? ", " : "",
                                 i, devices[i].name, devices[i].compute_major,
                                 devices[i].compute_minor);
    if (count == 0) {
        status_fail(st, STATUS_NO_DEVICE, "no CUDA device is visible");
        status_hint(st, "check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --device cpu");
        return STATUS_NO_DEVICE;
    }
    return 0;
}

// Opens cuda:ordinal with every op the trainer needs, or says why not.
static int open_cuda(const DeviceOptions *options, int ordinal, Device *d, Status *st) {
    char visible[1024];
    Status probe;
    status_clear(&probe);
    if (describe_visible(visible, sizeof visible, &probe)) {
        status_fail(st, STATUS_NO_DEVICE, "--device %s: %s", options->spec, probe.message);
        status_hint(st, "%s", probe.hint);
        memcpy(st->error_name, probe.error_name, sizeof st->error_name);
        return STATUS_NO_DEVICE;
    }
    CudaBackendOptions cuda = {.ordinal = ordinal, .allow_tf32 = !options->no_tf32};
    const Backend *backend = NULL;
    if (cuda_backend_open(&cuda, &backend, st)) {
        char message[sizeof st->message];
        snprintf(message, sizeof message, "--device %s: %.600s (visible: %.300s)", options->spec,
                 st->message, visible);
        snprintf(st->message, sizeof st->message, "%s", message);
        return st->code;
    }
    char missing[1024];
    if (backend_missing_ops(backend, missing, sizeof missing)) {
        cuda_backend_close(backend);
        status_fail(st, STATUS_NO_DEVICE, "--device %s: the CUDA backend of this build lacks "
                    "ops: %s", options->spec, missing);
        status_hint(st, "train with --device cpu until they are implemented");
        return STATUS_NO_DEVICE;
    }
    d->backend = backend;
    d->owns_backend = 1;
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
