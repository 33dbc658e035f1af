// `trainer bench memory`: copy bandwidth through the backend's copy ops, the paths a
// training run's bytes take: on the device, host to device (the staged batches) and back
// (what the host reads), from pinned (page-locked) and pageable host memory.
//
// On the CPU the "device" is host memory: device-to-device is a memmove there, and the
// copies across a bus have no device to go to.
#include "diagnostics/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double COPY_REPEAT_MS = 20.0;
enum { COPY_MAX_PER_REPEAT = 1000, COPY_MAX_SETS = 8 };

static const char *const copy_names[BENCH_COPY_COUNT] = {
    "device-to-device", "host-to-device pinned", "host-to-device pageable",
    "device-to-host pinned", "device-to-host pageable"};

const char *bench_copy_name(BenchCopyKind kind) {
    return kind >= 0 && kind < BENCH_COPY_COUNT ? copy_names[kind] : "?";
}

static int to_device(BenchCopyKind k) {
    return k == BENCH_COPY_HOST_TO_DEVICE_PINNED || k == BENCH_COPY_HOST_TO_DEVICE_PAGEABLE;
}

static int pinned(BenchCopyKind k) {
    return k == BENCH_COPY_HOST_TO_DEVICE_PINNED || k == BENCH_COPY_DEVICE_TO_HOST_PINNED;
}

// Each set is a source and a destination: device memory, or host memory as the kind says.
typedef struct CopyBuffers {
    Device *device;
    BenchCopyKind kind;
    void *device_side[COPY_MAX_SETS], *other_side[COPY_MAX_SETS];
    int sets;
} CopyBuffers;

static void buffers_free(CopyBuffers *c) {
    const Backend *b = c->device->backend;
    for (int i = 0; i < COPY_MAX_SETS; i++) {
        if (c->device_side[i]) alloc_put(&c->device->alloc, c->device_side[i]);
        if (!c->other_side[i]) continue;
        if (c->kind == BENCH_COPY_DEVICE_TO_DEVICE) alloc_put(&c->device->alloc, c->other_side[i]);
        else if (pinned(c->kind)) b->pinned_free(b, c->other_side[i]);
        else free(c->other_side[i]);
    }
    alloc_release_cache(&c->device->alloc);
    memset(c->device_side, 0, sizeof c->device_side);
    memset(c->other_side, 0, sizeof c->other_side);
}

static int buffers_alloc(Device *d, BenchCopyKind kind, size_t bytes, int sets, CopyBuffers *c,
                         Status *st) {
    const Backend *b = d->backend;
    memset(c, 0, sizeof *c);
    c->device = d;
    c->kind = kind;
    c->sets = sets;
    for (int i = 0; i < sets; i++) {
        TRY(alloc_get(&d->alloc, bytes, &c->device_side[i], st));
        // Written once, so that no copy reads memory the system has not yet backed.
        TRY(b->fill(b, c->device_side[i], 1.0f, bytes / sizeof(float), st));
        if (kind == BENCH_COPY_DEVICE_TO_DEVICE) {
            TRY(alloc_get(&d->alloc, bytes, &c->other_side[i], st));
        } else if (pinned(kind)) {
            TRY(b->pinned_alloc(b, bytes, &c->other_side[i], st));
        } else {
            c->other_side[i] = malloc(bytes);
            // STATUS_OUT_OF_MEMORY, not status_out_of_host_memory's runtime failure:
            // measure_row reports the row as not fitting, and the message is not shown.
            if (!c->other_side[i])
                return status_fail(st, STATUS_OUT_OF_MEMORY, "out of host memory for a "
                                   "%zu-byte copy buffer", bytes);
        }
        if (kind != BENCH_COPY_DEVICE_TO_DEVICE) memset(c->other_side[i], 0x3c, bytes);
    }
    return b->synchronize(b, st);
}

static int copy_once(const CopyBuffers *c, size_t bytes, int set, Status *st) {
    const Backend *b = c->device->backend;
    void *dev = c->device_side[set], *other = c->other_side[set];
    if (c->kind == BENCH_COPY_DEVICE_TO_DEVICE) return b->copy_on_device(b, other, dev, bytes, st);
    if (to_device(c->kind)) return b->copy_to_device(b, dev, other, bytes, st);
    return b->copy_to_host(b, other, dev, bytes, st);
}

static int measure(const BenchOptions *o, BenchCopyRow *row, const CopyBuffers *c, Status *st) {
    BenchTimer timer;
    TRY(bench_timer_open(c->device->backend, &timer, st));
    int rc = 0, next = 0;
    for (int i = 0; !rc && i < o->warmup; i++, next++)
        rc = copy_once(c, row->bytes, next % c->sets, st);
    double one_ms = 0.0;
    if (!rc) rc = bench_timer_start(&timer, st);
    if (!rc) rc = copy_once(c, row->bytes, next++ % c->sets, st);
    if (!rc) rc = bench_timer_stop(&timer, &one_ms, st);
    double per = one_ms > 0.0 ? ceil(COPY_REPEAT_MS / one_ms) : COPY_MAX_PER_REPEAT;
    int per_repeat = per < 1.0 ? 1 : per > COPY_MAX_PER_REPEAT ? COPY_MAX_PER_REPEAT : (int)per;
    double ms[BENCH_MAX_REPEATS];
    bench_range_push(c->device->backend, "bench memory %s %zu", bench_copy_name(row->kind),
                     row->bytes);
    for (int r = 0; !rc && r < o->repeats; r++) {
        rc = bench_timer_start(&timer, st);
        for (int i = 0; !rc && i < per_repeat; i++, next++)
            rc = copy_once(c, row->bytes, next % c->sets, st);
        if (!rc) rc = bench_timer_stop(&timer, &ms[r], st);
        if (!rc) ms[r] /= per_repeat;
    }
    bench_range_pop(c->device->backend);
    bench_timer_close(&timer);
    if (rc) return rc;
    row->median_ms = bench_median(ms, o->repeats);
    if (row->median_ms <= 0.0)
        return status_fail(st, STATUS_RUNTIME_ERROR, "%s copy of %zu bytes: the timer "
                           "measured %g ms", bench_copy_name(row->kind), row->bytes,
                           row->median_ms);
    double moved = (row->kind == BENCH_COPY_DEVICE_TO_DEVICE ? 2.0 : 1.0) * (double)row->bytes;
    row->gbs = moved / (row->median_ms * 1e-3) / 1e9;
    row->available = 1;
    return 0;
}

static void set_peak(const BenchDevice *dev, BenchCopyRow *row) {
    if (!dev->is_gpu) {
        snprintf(row->peak_unknown, sizeof row->peak_unknown,
                 "trainer knows no CPU's memory bandwidth");
    } else if (row->kind == BENCH_COPY_DEVICE_TO_DEVICE) {
        row->peak_gbs = dev->peak_memory_gbs;
        if (row->peak_gbs == 0.0)
            snprintf(row->peak_unknown, sizeof row->peak_unknown,
                     "the device reports no memory clock or bus width");
    } else {
        snprintf(row->peak_unknown, sizeof row->peak_unknown,
                 "the PCIe link's generation and width are not queried");
    }
}

static int measure_row(Device *d, const BenchDevice *dev, const BenchOptions *o,
                       BenchCopyRow *row, Status *st) {
    set_peak(dev, row);
    if (!dev->is_gpu && row->kind != BENCH_COPY_DEVICE_TO_DEVICE) {
        snprintf(row->unavailable, sizeof row->unavailable,
                 "no device: the CPU backend's memory is host memory");
        return 0;
    }
    bench_progress(o, "memory %s %zu MiB", bench_copy_name(row->kind), row->bytes >> 20);
    int sets = bench_input_sets(dev, 2 * row->bytes, COPY_MAX_SETS);
    CopyBuffers c;
    int rc = buffers_alloc(d, row->kind, row->bytes, sets, &c, st);
    if (!rc) rc = measure(o, row, &c, st);
    buffers_free(&c);
    if (rc == STATUS_OUT_OF_MEMORY) {
        char size[32];  // a size below 1 MiB read "0 MiB" in whole MiB
        snprintf(row->unavailable, sizeof row->unavailable,
                 "out of memory for %d buffer pair%s of %s", sets, sets == 1 ? "" : "s",
                 alloc_format_bytes(row->bytes, size, sizeof size));
        status_clear(st);
        return 0;
    }
    return rc;
}

int bench_memory(Device *d, const BenchDevice *dev, const BenchOptions *o, const size_t *sizes,
                 int size_count, BenchMemoryReport *out, Status *st) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < size_count && i < BENCH_MAX_SIZES; i++)
        for (int k = 0; k < BENCH_COPY_COUNT; k++) {
            BenchCopyRow *row = &out->rows[out->row_count++];
            row->kind = (BenchCopyKind)k;
            row->bytes = sizes[i];
            TRY(measure_row(d, dev, o, row, st));
        }
    return 0;
}
