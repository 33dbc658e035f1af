#include "core/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
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
    const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
        value /= 1024.0;
        unit++;
    }
    if (unit == 0) snprintf(buf, size, "%zu bytes", bytes);
    else snprintf(buf, size, "%.1f %s", value, units[unit]);
    return buf;
}

static AllocBlock *new_block(void *ptr, size_t size, int in_use, AllocBlock *next) {
    AllocBlock *block = malloc(sizeof *block);
    if (!block) return NULL;
    *block = (AllocBlock){.ptr = ptr, .size = size, .in_use = in_use, .next = next};
    return block;
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
    if (arena_size == 0)
        return status_fail(st, STATUS_BAD_INPUT, "memory limit %zu bytes is below one block (%d bytes)",
                           limit, ALLOC_GRANULE);
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
        return status_fail(st, STATUS_OUT_OF_MEMORY, "out of host memory for allocator bookkeeping");
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

static int fail_out_of_memory(Allocator *a, size_t request, const char *why, Status *st) {
    char req[32], used[32], held[32], lim[32];
    a->stats.out_of_memory++;
    alloc_format_bytes(request, req, sizeof req);
    alloc_format_bytes(a->stats.in_use, used, sizeof used);
    alloc_format_bytes(a->stats.reserved, held, sizeof held);
    if (a->limit) alloc_format_bytes(a->limit, lim, sizeof lim);
    else snprintf(lim, sizeof lim, "none");
    status_fail(st, STATUS_OUT_OF_MEMORY,
                "out of memory on %s: requested %s with %s in use, %s reserved, limit %s (%s)",
                a->backend->name, req, used, held, lim, why);
    status_hint(st, "lower --batch, or raise --memory-limit if the device has room");
    return STATUS_OUT_OF_MEMORY;
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

int alloc_parse_limit(const char *text, size_t device_total, size_t *out, Status *st) {
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (end == text || errno || !isfinite(value) || value <= 0) {
        status_fail(st, STATUS_BAD_INPUT, "memory limit '%s' is not a positive size", text);
        status_hint(st, "write bytes (1048576), a size (512M, 2G, 1.5GiB) or a fraction of the "
                        "device's memory (0.5)");
        return STATUS_BAD_INPUT;
    }
    while (*end == ' ') end++;
    double multiplier = 1.0;
    const char *suffix = end;
    if (*suffix == '\0') {
        if (value < 1.0) {
            if (device_total == 0) {
                status_fail(st, STATUS_BAD_INPUT,
                            "memory limit '%s' is a fraction, but the device's memory size is "
                            "unknown", text);
                status_hint(st, "give a size instead, e.g. 512M or 2G");
                return STATUS_BAD_INPUT;
            }
            *out = (size_t)(value * (double)device_total);
            return 0;
        }
        if (value != floor(value)) {
            status_fail(st, STATUS_BAD_INPUT, "memory limit '%s': bytes must be whole", text);
            status_hint(st, "add a unit (did you mean %sG?) or give a fraction below 1", text);
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
