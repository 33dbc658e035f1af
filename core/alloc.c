#define _POSIX_C_SOURCE 200809L  // pthread_once
#include "core/alloc.h"

#include "base/text_out.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// A block is a span of device memory we hold. Grow mode: each block is its own raw
// allocation. Reserve mode: blocks tile the arena in address order, so neighbours can
// be merged when both are free. Models have tens of tensors, so a list is fast enough.
struct AllocBlock {
    void *ptr;
    size_t size;
    int in_use;
    AllocBlock *next;
};

static size_t round_up(size_t bytes) {
    return (bytes + ALLOC_GRANULE - 1) / ALLOC_GRANULE * ALLOC_GRANULE;
}

const char *alloc_format_bytes(size_t bytes, char *buf, size_t size) {
    return format_bytes(bytes, buf, size);
}

static AllocBlock *new_block(void *ptr, size_t size, int in_use, AllocBlock *next) {
    AllocBlock *block = malloc(sizeof *block);
    if (!block) return NULL;
    *block = (AllocBlock){.ptr = ptr, .size = size, .in_use = in_use, .next = next};
    return block;
}

size_t alloc_charged_bytes(size_t bytes) {
    if (bytes == 0) bytes = 1;
    return (bytes + ALLOC_GRANULE - 1) / ALLOC_GRANULE * ALLOC_GRANULE;
}

int alloc_init(Allocator *a, const Backend *backend, AllocMode mode, size_t limit, Status *st) {
    memset(a, 0, sizeof *a);
    a->backend = backend;
    a->mode = mode;
    a->limit = limit;
    if (mode != ALLOC_RESERVE) return 0;
    if (limit == 0)
        return status_fail(st, STATUS_BAD_INPUT, "memory mode 'reserve' needs a size to reserve");
    size_t arena_size = limit / ALLOC_GRANULE * ALLOC_GRANULE;
    if (arena_size == 0) {
        char given[32];
        return status_fail(st, STATUS_BAD_INPUT, "memory limit %s is below one block (%d bytes)",
                           alloc_format_bytes(limit, given, sizeof given), ALLOC_GRANULE);
    }
    if (backend->raw_alloc(backend, arena_size, &a->arena, st)) {
        char want[32];
        status_fail(st, STATUS_OUT_OF_MEMORY, "%s: could not reserve %s up front", backend->name,
                    alloc_format_bytes(arena_size, want, sizeof want));
        status_hint(st, "lower --memory-limit, or use the default 'grow' mode");
        return STATUS_OUT_OF_MEMORY;
    }
    a->blocks = new_block(a->arena, arena_size, 0, NULL);
    if (!a->blocks) {
        backend->raw_free(backend, a->arena);
        a->arena = NULL;
        return status_out_of_host_memory(st, sizeof *a->blocks, "for allocator bookkeeping");
    }
    a->stats.reserved = a->stats.peak_reserved = arena_size;
    a->stats.device_allocations = 1;
    return 0;
}

static void note_in_use(Allocator *a, size_t size) {
    a->stats.in_use += size;
    a->stats.allocations++;
    if (a->stats.in_use > a->stats.peak_in_use) a->stats.peak_in_use = a->stats.in_use;
    if (a->stats.reserved > a->stats.peak_reserved) a->stats.peak_reserved = a->stats.reserved;
}

size_t alloc_largest_cached_block(const Allocator *a) {
    size_t largest = 0;
    for (const AllocBlock *b = a->blocks; b; b = b->next)
        if (!b->in_use && b->size > largest) largest = b->size;
    return largest;
}

AllocMark alloc_mark(const Allocator *a) {
    return (AllocMark){.in_use = a->stats.in_use, .reserved = a->stats.reserved,
                       .allocations = a->stats.allocations,
                       .out_of_memory = a->stats.out_of_memory};
}

size_t alloc_held_since(const Allocator *a, AllocMark mark) {
    return a->stats.in_use > mark.in_use ? a->stats.in_use - mark.in_use : 0;
}

// Everything a person needs to judge an out-of-memory: the request; what this process
// holds, split into in use and cached; the largest block it could have had without the
// device; the limit and what it leaves; the device's size. `why` says which of these bit.
static int fail_out_of_memory(Allocator *a, size_t request, const char *why, Status *st) {
    char req[32], used[32], cached[32], held[32], largest[32], lim[96], free_text[32],
        total[32], device[48] = "";
    a->stats.out_of_memory++;
    alloc_format_bytes(request, req, sizeof req);
    alloc_format_bytes(a->stats.in_use, used, sizeof used);
    alloc_format_bytes(a->stats.reserved - a->stats.in_use, cached, sizeof cached);
    alloc_format_bytes(a->stats.reserved, held, sizeof held);
    alloc_format_bytes(alloc_largest_cached_block(a), largest, sizeof largest);
    if (a->limit) {
        size_t room = a->limit > a->stats.reserved ? a->limit - a->stats.reserved : 0;
        char limit_bytes[32];
        snprintf(lim, sizeof lim, "%s (%s free under it)",
                 alloc_format_bytes(a->limit, limit_bytes, sizeof limit_bytes),
                 alloc_format_bytes(room, free_text, sizeof free_text));
    } else {
        snprintf(lim, sizeof lim, "none");
    }
    size_t device_total = a->backend->total_memory ? a->backend->total_memory(a->backend) : 0;
    if (device_total)
        snprintf(device, sizeof device, ", device total %s",
                 alloc_format_bytes(device_total, total, sizeof total));
    status_fail(st, STATUS_OUT_OF_MEMORY,
                "out of memory on %s: requested %s with %s in use, %s cached, %s reserved by "
                "this process, largest free block %s, limit %s%s (%.300s)",
                a->backend->name, req, used, cached, held, largest, lim, device, why);
    // On a GPU, the catalog's entry for the CUDA error explains it. Host memory has no such
    // entry: the GPU's (nvidia-smi, PYTORCH_CUDA_ALLOC_CONF) would mislead, so the hint
    // alone says what to do. `trainer lab oom` names the framework's entry itself, its CPU
    // limit standing in for a full GPU.
    if (a->backend->kind == BACKEND_CUDA) {
        status_hint(st, "lower --batch, or raise --memory-limit if the device has room");
        if (!strstr(why, "TRAINER_FAIL_ALLOC"))
            snprintf(st->error_name, sizeof st->error_name, "cudaErrorMemoryAllocation");
    } else {
        status_hint(st, "lower --batch, raise --memory-limit if the machine has room, or free "
                        "host memory (other processes)");
    }
    return STATUS_OUT_OF_MEMORY;
}

// ---- fault injection ---------------------------------------------------------------------

enum { FAIL_RANGES_MAX = 32 };

typedef struct FailRange {
    long first, last;
} FailRange;

static atomic_long alloc_calls;
static pthread_once_t fail_once = PTHREAD_ONCE_INIT;
static FailRange fail_ranges[FAIL_RANGES_MAX];
static int fail_range_count;
static int fail_spec_bad;          // TRAINER_FAIL_ALLOC could not be read
static char fail_spec[64];         // its text, for messages

// "N", "N,M", "N-M", "3,10-12": 1 when the whole text is such a list.
static int parse_fail_spec(const char *text) {
    const char *p = text;
    fail_range_count = 0;
    while (*p) {
        char *end;
        errno = 0;
        long first = strtol(p, &end, 10), last;
        if (end == p || errno || first < 1) return 0;
        p = end;
        last = first;
        if (*p == '-') {
            p++;
            last = strtol(p, &end, 10);
            if (end == p || errno || last < first) return 0;
            p = end;
        }
        if (fail_range_count == FAIL_RANGES_MAX) return 0;
        fail_ranges[fail_range_count++] = (FailRange){first, last};
        if (*p == ',') p++;
        else if (*p) return 0;
    }
    return fail_range_count > 0;
}

static void read_fail_env(void) {
    const char *text = getenv("TRAINER_FAIL_ALLOC");
    if (!text || !*text) return;
    snprintf(fail_spec, sizeof fail_spec, "%s", text);
    if (!parse_fail_spec(text)) {
        fail_range_count = 0;
        fail_spec_bad = 1;
    }
}

void alloc_fail_at(long n) {
    pthread_once(&fail_once, read_fail_env);
    fail_spec_bad = 0;
    fail_range_count = 0;
    if (n <= 0) return;
    fail_ranges[fail_range_count++] = (FailRange){n, n};
    snprintf(fail_spec, sizeof fail_spec, "%ld", n);
}

long alloc_call_count(void) { return atomic_load(&alloc_calls); }

// Numbers this call; nonzero (with the status set) when it is one chosen to fail.
static int injected_failure(Allocator *a, size_t request, Status *st) {
    pthread_once(&fail_once, read_fail_env);
    long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    if (fail_spec_bad) {
        status_fail(st, STATUS_BAD_INPUT, "TRAINER_FAIL_ALLOC='%s' is not a list of allocation "
                    "numbers", fail_spec);
        status_hint(st, "write N, N,M or N-M (1-based alloc_get calls), or unset it");
        return STATUS_BAD_INPUT;
    }
    for (int i = 0; i < fail_range_count; i++) {
        if (call < fail_ranges[i].first || call > fail_ranges[i].last) continue;
        char why[160];
        snprintf(why, sizeof why, "injected: TRAINER_FAIL_ALLOC=%s fails allocation %ld",
                 fail_spec, call);
        return fail_out_of_memory(a, request, why, st);
    }
    return 0;
}

// Best fit among cached blocks; a block more than twice the request is left for a bigger
// one, so one small tensor cannot pin a large block.
static AllocBlock *find_cached(Allocator *a, size_t size) {
    AllocBlock *best = NULL;
    for (AllocBlock *b = a->blocks; b; b = b->next)
        if (!b->in_use && b->size >= size && b->size <= 2 * size && (!best || b->size < best->size))
            best = b;
    return best;
}

static int grow_get(Allocator *a, size_t size, void **ptr, Status *st) {
    AllocBlock *cached = find_cached(a, size);
    if (cached) {
        cached->in_use = 1;
        *ptr = cached->ptr;
        a->stats.cache_hits++;
        note_in_use(a, cached->size);
        return 0;
    }
    if (a->limit && a->stats.reserved + size > a->limit) alloc_release_cache(a);
    if (a->limit && a->stats.reserved + size > a->limit)
        return fail_out_of_memory(a, size, "the limit would be exceeded", st);
    void *raw = NULL;
    Status raw_status;
    status_clear(&raw_status);
    if (a->backend->raw_alloc(a->backend, size, &raw, &raw_status)) {
        // The device may be full of our own cached blocks: give them back, try once more.
        alloc_release_cache(a);
        if (a->backend->raw_alloc(a->backend, size, &raw, &raw_status))
            return fail_out_of_memory(a, size, raw_status.message, st);
    }
    AllocBlock *block = new_block(raw, size, 1, a->blocks);
    if (!block) {
        a->backend->raw_free(a->backend, raw);
        return fail_out_of_memory(a, size, "no host memory for bookkeeping", st);
    }
    a->blocks = block;
    a->stats.device_allocations++;
    a->stats.reserved += size;
    note_in_use(a, size);
    *ptr = raw;
    return 0;
}

// First fit in address order, splitting off the tail; simple and, with the few large
// tensors a model has, fragmentation stays low.
static int reserve_get(Allocator *a, size_t size, void **ptr, Status *st) {
    for (AllocBlock *b = a->blocks; b; b = b->next) {
        if (b->in_use || b->size < size) continue;
        if (b->size > size) {
            AllocBlock *tail = new_block((char *)b->ptr + size, b->size - size, 0, b->next);
            if (!tail) return fail_out_of_memory(a, size, "no host memory for bookkeeping", st);
            b->next = tail;
            b->size = size;
        }
        b->in_use = 1;
        *ptr = b->ptr;
        note_in_use(a, size);
        return 0;
    }
    return fail_out_of_memory(a, size, "no free span of the reserved memory is large enough", st);
}

int alloc_get(Allocator *a, size_t bytes, void **ptr, Status *st) {
    *ptr = NULL;
    TRY(injected_failure(a, bytes, st));
    size_t size = round_up(bytes ? bytes : 1);
    if (size < bytes) return fail_out_of_memory(a, bytes, "size overflows", st);
    return a->mode == ALLOC_RESERVE ? reserve_get(a, size, ptr, st) : grow_get(a, size, ptr, st);
}

static void merge_free_neighbours(Allocator *a) {
    for (AllocBlock *b = a->blocks; b && b->next;) {
        AllocBlock *n = b->next;
        if (!b->in_use && !n->in_use && (char *)b->ptr + b->size == (char *)n->ptr) {
            b->size += n->size;
            b->next = n->next;
            free(n);
        } else {
            b = n;
        }
    }
}

void alloc_put(Allocator *a, void *ptr) {
    if (!ptr) return;
    for (AllocBlock *b = a->blocks; b; b = b->next) {
        if (b->ptr == ptr && b->in_use) {
            b->in_use = 0;
            a->stats.in_use -= b->size;
            if (a->mode == ALLOC_RESERVE) merge_free_neighbours(a);
            return;
        }
    }
}

void alloc_release_cache(Allocator *a) {
    if (a->mode == ALLOC_RESERVE) return;
    AllocBlock **link = &a->blocks;
    while (*link) {
        AllocBlock *b = *link;
        if (b->in_use) {
            link = &b->next;
            continue;
        }
        a->backend->raw_free(a->backend, b->ptr);
        a->stats.reserved -= b->size;
        *link = b->next;
        free(b);
    }
}

void alloc_destroy(Allocator *a) {
    for (AllocBlock *b = a->blocks; b;) {
        AllocBlock *next = b->next;
        if (a->mode == ALLOC_GROW) a->backend->raw_free(a->backend, b->ptr);
        free(b);
        b = next;
    }
    if (a->arena) a->backend->raw_free(a->backend, a->arena);
    a->blocks = NULL;
    a->arena = NULL;
    a->stats.in_use = a->stats.reserved = 0;
}

// "0.5", "1.0", "1e-1": a number written with a point or an exponent is a fraction when it
// is at most 1, so that 1.0 is all of the device's memory; "1" is still one byte.
static int written_as_fraction(const char *text, const char *end, double value) {
    if (value > 1.0) return 0;
    for (const char *c = text; c < end; c++)
        if (*c == 'x' || *c == 'X') return 0;  // hexadecimal: 'e' is a digit there
    for (const char *c = text; c < end; c++)
        if (*c == '.' || *c == 'e' || *c == 'E') return 1;
    return 0;
}

int alloc_parse_limit(const char *text, size_t device_total, size_t *out, Status *st) {
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    // Decimal only, as every numeric option: strtod reads "0x10" as 16 (bytes, here).
    int hexadecimal = memchr(text, 'x', (size_t)(end - text)) != NULL ||
                      memchr(text, 'X', (size_t)(end - text)) != NULL;
    if (end == text || errno || !isfinite(value) || value <= 0 || hexadecimal) {
        status_fail(st, STATUS_BAD_INPUT, "memory limit '%s' is not a positive size", text);
        status_hint(st, "write bytes (1048576), a size (512M, 2G, 1.5GiB) or a fraction of the "
                        "device's memory (0.5)");
        return STATUS_BAD_INPUT;
    }
    while (*end == ' ') end++;
    double multiplier = 1.0;
    const char *suffix = end;
    if (*suffix == '\0') {
        if (written_as_fraction(text, end, value)) {
            if (device_total == 0) {
                status_fail(st, STATUS_BAD_INPUT,
                            "memory limit '%s' is a fraction, but the device's memory size is "
                            "unknown", text);
                status_hint(st, "give a size instead, e.g. 512M or 2G");
                return STATUS_BAD_INPUT;
            }
            double bytes = value * (double)device_total;
            // Less than a byte would read as 0, which is no limit at all.
            if (bytes < 1.0) {
                status_fail(st, STATUS_BAD_INPUT, "memory limit '%s' is less than a byte of the "
                            "device's %zu bytes", text, device_total);
                status_hint(st, "give a larger fraction (0.5 is half) or a size, e.g. 512M");
                return STATUS_BAD_INPUT;
            }
            *out = (size_t)bytes;
            return 0;
        }
        if (value != floor(value)) {
            status_fail(st, STATUS_BAD_INPUT, "memory limit '%s': bytes must be whole", text);
            status_hint(st, "add a unit (did you mean %sG?) or give a fraction up to 1.0",
                        text);
            return STATUS_BAD_INPUT;
        }
    } else {
        char unit = (char)toupper((unsigned char)suffix[0]);
        const char *rest = suffix + 1;
        if (unit == 'K') multiplier = 1024.0;
        else if (unit == 'M') multiplier = 1024.0 * 1024.0;
        else if (unit == 'G') multiplier = 1024.0 * 1024.0 * 1024.0;
        else if (unit == 'T') multiplier = 1024.0 * 1024.0 * 1024.0 * 1024.0;
        else if (unit == 'B') rest = suffix;  // "B" alone: bytes
        else rest = NULL;
        int suffix_ok = rest && (strcasecmp(rest, "") == 0 || strcasecmp(rest, "b") == 0 ||
                                 strcasecmp(rest, "ib") == 0);
        if (unit == 'B') suffix_ok = strcasecmp(suffix, "b") == 0;
        if (!suffix_ok) {
            status_fail(st, STATUS_BAD_INPUT, "memory limit '%s' has an unknown unit '%s'", text,
                        suffix);
            status_hint(st, "use K, M, G or T (powers of 1024), e.g. 512M or 2G");
            return STATUS_BAD_INPUT;
        }
    }
    double bytes = value * multiplier;
    if (bytes < 1.0 || bytes > (double)SIZE_MAX / 2) {
        status_fail(st, STATUS_BAD_INPUT, "memory limit '%s' is out of range", text);
        status_hint(st, "give a size between 1 byte and the device's memory, e.g. 2G");
        return STATUS_BAD_INPUT;
    }
    *out = (size_t)bytes;
    return 0;
}
