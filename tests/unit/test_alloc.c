// The caching allocator on the CPU backend: statistics in grow mode, the memory limit
// (out of memory as a recoverable status that names the numbers), reserve mode's arena
// with coalescing, and the parsing and printing of sizes.
#include "check.h"
#include "core/alloc.h"

#include <stdint.h>

static void grow_mode_counts_and_caches_blocks(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    CHECK_INT_EQ(a.stats.reserved, 0);
    CHECK_INT_EQ(a.stats.device_allocations, 0);

    void *p = NULL, *q = NULL;
    // 100 bytes round up to one granule.
    CHECK_INT_EQ(alloc_get(&a, 100, &p, &st), 0);
    CHECK(p != NULL);
    CHECK_INT_EQ((uintptr_t)p % 64, 0);
    CHECK_INT_EQ(a.stats.in_use, ALLOC_GRANULE);
    CHECK_INT_EQ(a.stats.reserved, ALLOC_GRANULE);
    CHECK_INT_EQ(a.stats.allocations, 1);
    CHECK_INT_EQ(a.stats.device_allocations, 1);
    CHECK_INT_EQ(a.stats.cache_hits, 0);

    CHECK_INT_EQ(alloc_get(&a, 1000, &q, &st), 0);  // 1024 after rounding
    CHECK_INT_EQ(a.stats.in_use, 256 + 1024);
    CHECK_INT_EQ(a.stats.reserved, 256 + 1024);
    CHECK_INT_EQ(a.stats.peak_in_use, 256 + 1024);
    CHECK_INT_EQ(a.stats.allocations, 2);
    CHECK_INT_EQ(a.stats.device_allocations, 2);
    memset(q, 0xAB, 1000);  // the block really is that large (ASan checks)

    // Freed blocks stay reserved (cached) and the same size comes back from the cache.
    alloc_put(&a, q);
    CHECK_INT_EQ(a.stats.in_use, 256);
    CHECK_INT_EQ(a.stats.reserved, 256 + 1024);
    CHECK_INT_EQ(a.stats.peak_in_use, 256 + 1024);
    void *again = NULL;
    CHECK_INT_EQ(alloc_get(&a, 1000, &again, &st), 0);
    CHECK(again == q);
    CHECK_INT_EQ(a.stats.cache_hits, 1);
    CHECK_INT_EQ(a.stats.allocations, 3);
    CHECK_INT_EQ(a.stats.device_allocations, 2);
    CHECK_INT_EQ(a.stats.in_use, 256 + 1024);

    // A block more than twice the request is not handed out for it.
    alloc_put(&a, again);
    void *small = NULL;
    CHECK_INT_EQ(alloc_get(&a, 256, &small, &st), 0);
    CHECK(small != q);
    CHECK_INT_EQ(a.stats.cache_hits, 1);
    CHECK_INT_EQ(a.stats.device_allocations, 3);

    // Releasing the cache gives back only the unused blocks.
    alloc_release_cache(&a);
    CHECK_INT_EQ(a.stats.reserved, 256 + 256);
    CHECK_INT_EQ(a.stats.in_use, 256 + 256);
    CHECK_INT_EQ(a.stats.peak_reserved, 256 + 1024 + 256);
    CHECK_INT_EQ(a.stats.out_of_memory, 0);

    alloc_put(&a, p);
    alloc_put(&a, small);
    alloc_put(&a, NULL);  // a no-op, like free(NULL)
    CHECK_INT_EQ(a.stats.in_use, 0);
    alloc_destroy(&a);
    CHECK_INT_EQ(a.stats.reserved, 0);
}

static void grow_mode_limit_is_a_recoverable_out_of_memory(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 8192, &st), 0);
    void *first = NULL, *big = (void *)&a;
    CHECK_INT_EQ(alloc_get(&a, 4096, &first, &st), 0);

    // 4 KiB in use + 6 KiB requested > 8 KiB limit.
    CHECK_INT_EQ(alloc_get(&a, 6144, &big, &st), STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(st.code, STATUS_OUT_OF_MEMORY);
    CHECK(big == NULL);
    CHECK_CONTAINS(st.message, "requested 6.0 KiB");
    CHECK_CONTAINS(st.message, "4.0 KiB in use");
    CHECK_CONTAINS(st.message, "limit 8.0 KiB");
    CHECK_CONTAINS(st.message, "cpu");
    CHECK(st.hint[0] != '\0');
    CHECK_INT_EQ(a.stats.out_of_memory, 1);
    CHECK_INT_EQ(a.stats.in_use, 4096);
    CHECK_INT_EQ(a.stats.allocations, 1);

    // After freeing, the request fits again: the cached 4 KiB block is too small to
    // serve it, so the allocator must give it back to make room under the limit.
    alloc_put(&a, first);
    CHECK_INT_EQ(a.stats.reserved, 4096);
    status_clear(&st);
    CHECK_INT_EQ(alloc_get(&a, 6144, &big, &st), 0);
    CHECK(big != NULL);
    CHECK_INT_EQ(a.stats.reserved, 6144);
    CHECK_INT_EQ(a.stats.in_use, 6144);
    CHECK_INT_EQ(a.stats.cache_hits, 0);
    CHECK_INT_EQ(a.stats.device_allocations, 2);
    CHECK_INT_EQ(a.stats.out_of_memory, 1);

    // Exactly at the limit is allowed; one granule over is not.
    void *rest = NULL, *over = NULL;
    CHECK_INT_EQ(alloc_get(&a, 2048, &rest, &st), 0);
    CHECK_INT_EQ(a.stats.reserved, 8192);
    CHECK_INT_EQ(alloc_get(&a, 1, &over, &st), STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(a.stats.out_of_memory, 2);
    CHECK_CONTAINS(st.message, "requested 256 bytes");
    alloc_put(&a, big);
    alloc_put(&a, rest);
    alloc_destroy(&a);
}

static void reserve_mode_carves_one_arena_and_coalesces(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    enum { ARENA = 16384 };
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_RESERVE, ARENA, &st), 0);
    CHECK(a.arena != NULL);
    CHECK_INT_EQ(a.stats.reserved, ARENA);
    CHECK_INT_EQ(a.stats.device_allocations, 1);
    CHECK_INT_EQ(a.stats.in_use, 0);

    char *pa = NULL, *pb = NULL, *pc = NULL;
    CHECK_INT_EQ(alloc_get(&a, 4096, (void **)&pa, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 2048, (void **)&pb, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 4096, (void **)&pc, &st), 0);
    // Carved in address order from the arena, no new device allocations.
    CHECK(pa == (char *)a.arena);
    CHECK(pb == pa + 4096);
    CHECK(pc == pb + 2048);
    CHECK_INT_EQ(a.stats.device_allocations, 1);
    CHECK_INT_EQ(a.stats.in_use, 10240);
    CHECK_INT_EQ(a.stats.reserved, ARENA);
    memset(pa, 1, 4096);
    memset(pb, 2, 2048);
    memset(pc, 3, 4096);

    // 6 KiB left at the end: 8 KiB does not fit.
    void *over = (void *)&a;
    CHECK_INT_EQ(alloc_get(&a, 8192, &over, &st), STATUS_OUT_OF_MEMORY);
    CHECK(over == NULL);
    CHECK_INT_EQ(a.stats.out_of_memory, 1);
    CHECK_CONTAINS(st.message, "requested 8.0 KiB");
    CHECK_CONTAINS(st.message, "10.0 KiB in use");
    CHECK_CONTAINS(st.message, "limit 16.0 KiB");

    // Free B then A: the two spans merge, so A + B (6 KiB) fits where A was.
    alloc_put(&a, pb);
    alloc_put(&a, pa);
    CHECK_INT_EQ(a.stats.in_use, 4096);
    char *merged = NULL;
    status_clear(&st);
    CHECK_INT_EQ(alloc_get(&a, 6144, (void **)&merged, &st), 0);
    CHECK(merged == pa);
    CHECK_INT_EQ(pc[0], 3);  // C untouched
    alloc_put(&a, merged);
    alloc_put(&a, pc);
    CHECK_INT_EQ(a.stats.in_use, 0);

    // Everything freed coalesces back into the whole arena.
    void *whole = NULL;
    CHECK_INT_EQ(alloc_get(&a, ARENA, &whole, &st), 0);
    CHECK(whole == a.arena);
    CHECK_INT_EQ(a.stats.peak_in_use, ARENA);
    alloc_put(&a, whole);
    void *too_big = NULL;
    CHECK_INT_EQ(alloc_get(&a, ARENA + 1, &too_big, &st), STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(a.stats.out_of_memory, 2);
    CHECK_INT_EQ(a.stats.device_allocations, 1);
    alloc_destroy(&a);
}

static void reserve_mode_needs_a_size(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_RESERVE, 0, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "reserve");
    alloc_destroy(&a);
    status_clear(&st);
    // Below one granule: nothing to carve.
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_RESERVE, 100, &st), STATUS_BAD_INPUT);
    alloc_destroy(&a);
}

static void parse_ok(const char *text, size_t total, size_t want) {
    Status st;
    status_clear(&st);
    size_t got = 0;
    int rc = alloc_parse_limit(text, total, &got, &st);
    if (rc || got != want) {
        fprintf(stderr, "alloc_parse_limit(\"%s\", %zu): rc %d, got %zu, want %zu (%s)\n", text,
                total, rc, got, want, st.message);
        test_failures++;
    }
}

static void parse_bad(const char *text, size_t total, const char *message_part) {
    Status st;
    status_clear(&st);
    size_t got = 777;
    int rc = alloc_parse_limit(text, total, &got, &st);
    if (rc != STATUS_BAD_INPUT) {
        fprintf(stderr, "alloc_parse_limit(\"%s\", %zu): rc %d (want %d, BAD_INPUT), got %zu\n",
                text, total, rc, STATUS_BAD_INPUT, got);
        test_failures++;
        return;
    }
    CHECK_CONTAINS(st.message, text);
    if (message_part) CHECK_CONTAINS(st.message, message_part);
}

static void parse_limit_accepts_sizes_and_fractions(void) {
    const size_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;
    parse_ok("512M", 0, 512 * MiB);
    parse_ok("2G", 0, 2 * GiB);
    parse_ok("1.5GiB", 0, 3 * GiB / 2);
    parse_ok("1048576", 0, 1048576);
    parse_ok("64k", 0, 64 * KiB);
    parse_ok("64K", 0, 64 * KiB);
    parse_ok("2gb", 0, 2 * GiB);
    parse_ok("100B", 0, 100);
    parse_ok("0.5", 8 * GiB, 4 * GiB);
    parse_ok("0.25", 1000, 250);
    // Written with a point or an exponent, up to 1 is a fraction: 1.0 is the whole device
    // (it was read as 1 byte); a bare integer stays bytes.
    parse_ok("1.0", 8 * GiB, 8 * GiB);
    parse_ok("1.", 1000, 1000);
    parse_ok("1e0", 1000, 1000);
    parse_ok("5e-1", 1000, 500);
    parse_ok("1", 1000, 1);
    parse_ok("2e3", 0, 2000);  // above 1: bytes, however written
}

static void parse_limit_rejects_nonsense(void) {
    parse_bad("", 8u << 30, NULL);
    parse_bad("abc", 8u << 30, NULL);
    parse_bad("-1", 8u << 30, NULL);
    parse_bad("0x10", 8u << 30, "not a positive size");  // strtod reads hexadecimal: 16
    parse_bad("0", 8u << 30, NULL);
    parse_bad("2X", 8u << 30, "unit");
    parse_bad("12MBx", 8u << 30, "unit");
    parse_bad("1.5", 8u << 30, "whole");  // fractional bytes: neither a fraction nor bytes
    parse_bad("0.5", 0, "fraction");      // a fraction of an unknown total
    parse_bad("1.0", 0, "fraction");
    parse_bad("0.0001", 1000, "less than a byte");  // 0 bytes would be no limit at all
}

static void format_bytes_is_human_readable(void) {
    char buf[32];
    CHECK_CONTAINS(alloc_format_bytes(0, buf, sizeof buf), "0 bytes");
    CHECK(strcmp(alloc_format_bytes(1023, buf, sizeof buf), "1023 bytes") == 0);
    CHECK(strcmp(alloc_format_bytes(1, buf, sizeof buf), "1 byte") == 0);
    CHECK(strcmp(alloc_format_bytes(1024, buf, sizeof buf), "1.0 KiB") == 0);
    CHECK(strcmp(alloc_format_bytes(1536, buf, sizeof buf), "1.5 KiB") == 0);
    CHECK(strcmp(alloc_format_bytes((size_t)512 << 20, buf, sizeof buf), "512.0 MiB") == 0);
    CHECK(strcmp(alloc_format_bytes((size_t)3 << 29, buf, sizeof buf), "1.5 GiB") == 0);
    CHECK(strcmp(alloc_format_bytes((size_t)5 << 40, buf, sizeof buf), "5.0 TiB") == 0);
    // Beyond TiB stays in TiB.
    CHECK(strcmp(alloc_format_bytes((size_t)2048 << 40, buf, sizeof buf), "2048.0 TiB") == 0);
    // Truncates to the buffer, always terminated, and returns it.
    char tiny[4];
    CHECK(alloc_format_bytes(1536, tiny, sizeof tiny) == tiny);
    CHECK(strcmp(tiny, "1.5") == 0);
}

int main(void) {
    grow_mode_counts_and_caches_blocks();
    grow_mode_limit_is_a_recoverable_out_of_memory();
    reserve_mode_carves_one_arena_and_coalesces();
    reserve_mode_needs_a_size();
    parse_limit_accepts_sizes_and_fractions();
    parse_limit_rejects_nonsense();
    format_bytes_is_human_readable();
    return test_exit_code("test_alloc");
}
