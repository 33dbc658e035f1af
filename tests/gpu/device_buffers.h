// Device buffers of one GPU parity case (tests/gpu/test_cuda_*16*.c): host data copied
// up, results copied back, and every buffer freed together when the case ends, so that a
// case that stops early on a failure frees what it allocated too. After the first failed
// allocation or copy the set is `broken`: later uploads return NULL and downloads do
// nothing, so that a dead device is reported once, not once per buffer.
//
// Every function is `static inline`, so a test that uses only part of it still compiles
// cleanly with -Wall -Wextra -Werror.
#ifndef TRAINER_TESTS_GPU_DEVICE_BUFFERS_H
#define TRAINER_TESTS_GPU_DEVICE_BUFFERS_H

#include "check.h"
#include "kernels/backend.h"

#include <stdlib.h>
#include <string.h>

enum { DEVICE_BUFFERS_MAX = 64 };

typedef struct DeviceBuffers {
    const Backend *gpu;
    // Says what failed, in the test's own words and context; counts the failure.
    void (*report)(const char *what, const Status *st);
    void *held[DEVICE_BUFFERS_MAX];
    int count;
    int broken;
} DeviceBuffers;

static inline void device_failed(DeviceBuffers *d, const char *what, const Status *st) {
    d->report(what, st);
    d->broken = 1;
}

// A device buffer of `bytes` holding host's bytes (left as allocated when host is NULL);
// NULL when the set is broken or full, or this allocation or copy failed.
static inline void *device_upload(DeviceBuffers *d, const void *host, size_t bytes) {
    if (d->broken || d->count == DEVICE_BUFFERS_MAX) return NULL;
    Status st;
    status_clear(&st);
    void *p = NULL;
    if (d->gpu->raw_alloc(d->gpu, bytes ? bytes : 1, &p, &st)) {
        device_failed(d, "raw_alloc", &st);
        return NULL;
    }
    d->held[d->count++] = p;
    if (host && bytes && d->gpu->copy_to_device(d->gpu, p, host, bytes, &st)) {
        device_failed(d, "copy_to_device", &st);
        return NULL;
    }
    return p;
}

// A device buffer of `bytes` 0xFF bytes: a NaN in bf16, f16 and f32, so that an element an
// op should write and skips shows.
static inline void *device_poisoned(DeviceBuffers *d, size_t bytes) {
    void *host = malloc(bytes ? bytes : 1);
    if (!host) return NULL;
    memset(host, 0xFF, bytes);
    void *p = device_upload(d, host, bytes);
    free(host);
    return p;
}

// Copies `bytes` of device buffer p (any of this set's) into host after the device has
// finished, so that an asynchronous fault shows here rather than in a later case.
// Returns 0, or -1 when the set is (or now becomes) broken.
static inline int device_download(DeviceBuffers *d, void *host, const void *p, size_t bytes) {
    if (d->broken || !p) return -1;
    Status st;
    status_clear(&st);
    int rc = d->gpu->synchronize(d->gpu, &st);
    if (!rc && bytes) rc = d->gpu->copy_to_host(d->gpu, host, p, bytes, &st);
    if (rc) {
        device_failed(d, "copy_to_host", &st);
        return -1;
    }
    return 0;
}

// Frees every buffer of the set; the set stays usable (and broken, if it was).
static inline void device_free_all(DeviceBuffers *d) {
    for (int i = 0; i < d->count; i++) d->gpu->raw_free(d->gpu, d->held[i]);
    d->count = 0;
}

#endif
