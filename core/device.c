#include "core/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_device.h"

enum { MAX_LISTED_DEVICES = 16 };

// Parses "cuda" / "cuda:N"; returns the ordinal or -1 when the text is not of that form.
static int cuda_ordinal(const char *spec) {
    if (strcmp(spec, "cuda") == 0) return 0;
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

// Explains why an explicit CUDA request cannot be served, listing what is visible.
static int cuda_unavailable(const char *spec, int ordinal, Status *st) {
    CudaDeviceInfo devices[MAX_LISTED_DEVICES];
    int count = 0;
    Status list_status;
    status_clear(&list_status);
    if (cuda_list_devices(devices, MAX_LISTED_DEVICES, &count, &list_status)) {
        status_fail(st, STATUS_NO_DEVICE, "--device %s: %s", spec, list_status.message);
        status_hint(st, "%s", list_status.hint);
        return STATUS_NO_DEVICE;
    }
    if (count == 0) {
        status_fail(st, STATUS_NO_DEVICE, "--device %s: no CUDA device is visible", spec);
        status_hint(st, "check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --device cpu");
        return STATUS_NO_DEVICE;
    }
    char visible[1024] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof visible; i++)
        used += (size_t)snprintf(visible + used, sizeof visible - used, "%scuda:%d %s (sm_%d%d)",
                                 i ? ", " : "", i, devices[i].name, devices[i].compute_major,
                                 devices[i].compute_minor);
    if (ordinal >= count) {
        status_fail(st, STATUS_NO_DEVICE, "--device %s: ordinal %d is out of range; %d device%s "
                    "visible: %s", spec, ordinal, count, count == 1 ? " is" : "s are", visible);
        status_hint(st, "use an ordinal below %d (CUDA_VISIBLE_DEVICES renumbers from 0)", count);
        return STATUS_NO_DEVICE;
    }
    status_fail(st, STATUS_NO_DEVICE, "--device %s: the CUDA training backend is not in this "
                "version yet (visible: %s)", spec, visible);
    status_hint(st, "train with --device cpu for now");
    return STATUS_NO_DEVICE;
}

int device_open(const DeviceOptions *options, Device *d, char *notice, size_t notice_size,
                Status *st) {
    memset(d, 0, sizeof *d);
    notice[0] = '\0';
    const char *spec = options->spec ? options->spec : "auto";
    if (strcmp(spec, "cpu") == 0) return open_cpu(options, d, st);
    if (strcmp(spec, "auto") == 0) {
        CudaDeviceInfo devices[MAX_LISTED_DEVICES];
        int count = 0;
        Status probe;
        status_clear(&probe);
        if (cuda_list_devices(devices, MAX_LISTED_DEVICES, &count, &probe) || count == 0)
            snprintf(notice, notice_size, "using the CPU; no usable GPU: %s",
                     probe.message[0] ? probe.message : "no device visible");
        else
            snprintf(notice, notice_size, "found %s, but the CUDA training backend is not in "
                     "this version yet; using the CPU", devices[0].name);
        return open_cpu(options, d, st);
    }
    int ordinal = cuda_ordinal(spec);
    if (ordinal >= 0) return cuda_unavailable(spec, ordinal, st);
    status_fail(st, STATUS_BAD_INPUT, "unknown device '%s'", spec);
    status_hint(st, "devices: cpu, auto, cuda, cuda:N");
    return STATUS_BAD_INPUT;
}

void device_close(Device *d) { alloc_destroy(&d->alloc); }
