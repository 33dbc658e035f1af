// The caching allocator: one per device, over the backend's raw allocation.
//
// Training allocates the same sizes every step; handing freed blocks back out instead of
// returning them to the device keeps cudaMalloc (slow, and synchronizing) off the hot path.
// The limit is checked here, before the backend is asked, so `--memory-limit` behaves the
// same on the CPU as on a GPU and out-of-memory is testable anywhere.
#ifndef TRAINER_ALLOC_H
#define TRAINER_ALLOC_H

#include <stddef.h>

#include "base/status.h"
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

// What a request of `bytes` costs the allocator: rounded up to whole granules (0 bytes
// costs one). The memory plan counts with it.
size_t alloc_charged_bytes(size_t bytes);

int alloc_init(Allocator *a, const Backend *backend, AllocMode mode, size_t limit, Status *st);
// On failure *ptr is NULL and the status is STATUS_OUT_OF_MEMORY whose message gives the
// bytes requested, what this process holds (in use and cached, so reserved), the largest
// free block, the limit and what it leaves free, and the device's total memory. The
// caller adds which tensor it was for (graph_alloc_tensor names the tensor and layer).
// A failed raw allocation gives the cached blocks back to the device and tries once more.
int alloc_get(Allocator *a, size_t bytes, void **ptr, Status *st);
void alloc_put(Allocator *a, void *ptr);
// Give cached (unused) blocks back to the device; grow mode only.
void alloc_release_cache(Allocator *a);
void alloc_destroy(Allocator *a);

// The largest block a request could get without asking the device: the largest cached
// block in grow mode, the largest free span of the arena in reserve mode; 0 when none.
// Out-of-memory messages quote it: a request larger than it, under a limit that has
// room in total, tells of fragmentation rather than of a model that is too big.
size_t alloc_largest_cached_block(const Allocator *a);

// A snapshot of what an allocator holds, to prove that an aborted step gave back what it
// took: take a mark before the step, and after its failure (once the caller has freed
// what it owns) alloc_held_since(a, mark) is 0 when nothing taken since the mark is still
// in use. Reserved bytes may stay higher than at the mark: freed blocks are cached, not
// leaked (alloc_release_cache hands them back).
typedef struct AllocMark {
    size_t in_use;
    size_t reserved;
    long allocations;
    long out_of_memory;
} AllocMark;

AllocMark alloc_mark(const Allocator *a);
// Bytes in use now beyond those in use at the mark; 0 when all of it was given back.
size_t alloc_held_since(const Allocator *a, AllocMark mark);

// Fault injection, so that every allocation failure path can be tested without filling
// a device. Calls of alloc_get are numbered per process, from 1, across all allocators;
// a call chosen to fail fails with STATUS_OUT_OF_MEMORY as a real failure would (the
// block is not handed out, stats.out_of_memory counts it, the message has the same
// numbers) and says it was injected. Later calls succeed unless chosen too.
//
// The environment variable TRAINER_FAIL_ALLOC chooses the calls, read at the first
// alloc_get: "N" (the Nth call), "N,M" (a list) or "N-M" (a range), e.g. "3,10-12". A
// value that is none of these makes every alloc_get fail with STATUS_BAD_INPUT naming it.
// Allocation is not expected to race (one thread drives a device); the count is atomic
// all the same.
void alloc_fail_at(long n);  // make call n fail (replaces TRAINER_FAIL_ALLOC); n <= 0: none
long alloc_call_count(void); // alloc_get calls made so far in this process

// "512M", "2G", "1.5GiB", "1048576" (bytes) or "0.5" (a fraction of device_total: a number
// with a point or an exponent, up to "1.0", the whole device; a bare "1" is one byte).
int alloc_parse_limit(const char *text, size_t device_total, size_t *out, Status *st);
// "1.5 MiB": human-readable bytes for messages (base/text_out.h's format_bytes).
const char *alloc_format_bytes(size_t bytes, char *buf, size_t size);

#endif
