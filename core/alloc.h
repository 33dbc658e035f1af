// The caching allocator: one per device, over the backend's raw allocation.
//
// Training allocates the same sizes every step; handing freed blocks back out instead of
// returning them to the device keeps cudaMalloc (slow, and synchronizing) off the hot path.
// The limit is checked here, before the backend is asked, so `--memory-limit` behaves the
// same on the CPU as on a GPU and out-of-memory is testable anywhere.
#ifndef TRAINER_ALLOC_H
#define TRAINER_ALLOC_H

#include <stddef.h>

#include "core/status.h"
#include "kernels/backend.h"

typedef enum AllocMode {
    ALLOC_GROW,     // ask the device for blocks on demand, keep freed ones cached
    ALLOC_RESERVE,  // take the whole limit at start, carve blocks out of it
} AllocMode;

typedef struct AllocStats {
    size_t in_use;          // bytes handed out and not yet returned
    size_t reserved;        // bytes held from the device (in use + cached)
    size_t peak_in_use;
    size_t peak_reserved;
    long allocations;       // successful alloc_get calls
    long cache_hits;        // of those, served from the cache
    long device_allocations;// raw allocations made
    long out_of_memory;     // alloc_get calls that failed
} AllocStats;

typedef struct AllocBlock AllocBlock;

typedef struct Allocator {
    const Backend *backend;
    AllocMode mode;
    size_t limit;           // 0: no limit (grow mode only)
    AllocStats stats;
    AllocBlock *blocks;     // every block we hold, in use or cached
    void *arena;            // reserve mode: the one raw allocation
} Allocator;

// Alignment and granularity of every block; also what sizes are rounded up to.
enum { ALLOC_GRANULE = 256 };

int alloc_init(Allocator *a, const Backend *backend, AllocMode mode, size_t limit, Status *st);
// On failure *ptr is NULL and the status is STATUS_OUT_OF_MEMORY with the request, the
// usage and the limit in the message.
int alloc_get(Allocator *a, size_t bytes, void **ptr, Status *st);
void alloc_put(Allocator *a, void *ptr);
// Give cached (unused) blocks back to the device; grow mode only.
void alloc_release_cache(Allocator *a);
void alloc_destroy(Allocator *a);

// "512M", "2G", "1.5GiB", "1048576" (bytes) or "0.5" (a fraction of device_total).
int alloc_parse_limit(const char *text, size_t device_total, size_t *out, Status *st);
// "1.5 MiB": human-readable bytes for messages.
const char *alloc_format_bytes(size_t bytes, char *buf, size_t size);

#endif
