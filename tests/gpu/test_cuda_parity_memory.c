// The CUDA backend against the CPU reference, memory ops: allocation, copies, fill, synchronize
// (kernels/backend.h); parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_total_memory(void) {
    REQUIRE(total_memory);
    snprintf(shape, sizeof shape, "-");
    size_t total = gpu->total_memory(gpu);
    printf("  total_memory: %zu MiB\n", total >> 20);
    if (total == 0) fprintf(stderr, "FAIL total_memory: reported 0 bytes\n");
    record("total_memory", 0.0, total == 0);
}

static void test_raw_alloc(void) {
    REQUIRE(raw_alloc);
    REQUIRE(raw_free);
    static const size_t sizes[] = {0, 1, 3, 4096, ((size_t)1 << 20) + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !device_broken; i++) {
        snprintf(shape, sizeof shape, "%zu bytes", sizes[i]);
        Status st;
        status_clear(&st);
        void *p = NULL;
        int rc = gpu->raw_alloc(gpu, sizes[i], &p, &st);
        int bad = rc != 0 || p == NULL || (uintptr_t)p % 16 != 0;
        if (bad)
            fprintf(stderr, "FAIL raw_alloc [%s]: rc %d, pointer %p (want 0 and a 16-byte aligned "
                    "pointer, what vectorized kernels load through): %s\n", shape, rc, p, st.message);
        record("raw_alloc", 0.0, bad);
        if (!rc && p) gpu->raw_free(gpu, p);
    }
    // More than the device has: a status the allocator can act on, and nothing sticky.
    size_t total = gpu->total_memory ? gpu->total_memory(gpu) : 0;
    size_t huge = total ? total * 4 : (size_t)1 << 50;
    snprintf(shape, sizeof shape, "%zu bytes, 4x the device", huge);
    Status st;
    status_clear(&st);
    void *p = NULL;
    int rc = gpu->raw_alloc(gpu, huge, &p, &st);
    int bad = rc != STATUS_OUT_OF_MEMORY || p != NULL || st.message[0] == '\0';
    if (bad)
        fprintf(stderr, "FAIL raw_alloc [%s]: rc %d (%s), pointer %p; want STATUS_OUT_OF_MEMORY, "
                "NULL and a message\n", shape, rc, status_code_name((StatusCode)rc), p);
    else
        printf("  raw_alloc of %zu GiB: out of memory, as it should be: %s\n", huge >> 30, st.message);
    record("raw_alloc", 0.0, bad);
    if (!rc && p) gpu->raw_free(gpu, p);
    snprintf(shape, sizeof shape, "1 MiB after an out-of-memory");
    status_clear(&st);
    p = NULL;
    rc = gpu->raw_alloc(gpu, (size_t)1 << 20, &p, &st);
    if (rc) fprintf(stderr, "FAIL raw_alloc [%s]: %s\n", shape, st.message);
    record("raw_alloc", 0.0, rc != 0);
    if (!rc && p) gpu->raw_free(gpu, p);
}

static void test_synchronize(void) {
    REQUIRE(synchronize);
    snprintf(shape, sizeof shape, "idle stream");
    Status st;
    status_clear(&st);
    int rc = gpu->synchronize(gpu, &st);
    if (rc) fprintf(stderr, "FAIL synchronize [%s]: %s\n", shape, st.message);
    record("synchronize", 0.0, rc != 0);
}

// Byte for byte; the first differing byte is printed.
static void compare_bytes(const char *op, const char *what, const unsigned char *got,
                          const unsigned char *want, size_t n) {
    if (device_broken) return;
    size_t i = 0;
    while (i < n && got[i] == want[i]) i++;
    if (i < n)
        fprintf(stderr, "FAIL %s %s [%s]: byte %zu of %zu is 0x%02x, want 0x%02x\n", op, what,
                shape, i, n, got[i], want[i]);
    record(op, i < n ? INFINITY : 0.0, i < n);
}

// Bytes at odd offsets and odd lengths, host -> device -> device -> host; the bytes around
// each destination must keep what they held.
static void copy_case(size_t bytes, size_t offset) {
    snprintf(shape, sizeof shape, "%zu bytes at offset %zu", bytes, offset);
    Status st;
    status_clear(&st);
    size_t span = bytes + offset + 8;
    unsigned char *src = host_alloc(bytes), *want = host_alloc(span), *got = host_alloc(span);
    for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)rng_below(&rng, 256);
    memset(want, POISON_BYTE, span);
    memcpy(want + offset, src, bytes);
    unsigned char *a = dev_poisoned(span), *b = dev_poisoned(span);
    if (!GPU_CALL(copy_to_device, a + offset, src, bytes)) {
        memset(got, 0, span);
        download(got, a, span);
        compare_bytes("copy_to_device", "bytes", got, want, span);
    }
    if (!GPU_CALL(copy_on_device, b + offset, a + offset, bytes)) {
        memset(got, 0, span);
        download(got, b, span);
        compare_bytes("copy_on_device", "bytes", got, want, span);
    }
    // Into the middle of a host buffer: the host bytes around it stay.
    memset(got, 0x5A, span);
    memset(want, 0x5A, span);
    memcpy(want + offset, src, bytes);
    if (!GPU_CALL(copy_to_host, got + offset, b + offset, bytes))
        compare_bytes("copy_to_host", "bytes", got, want, span);
}

// Zero-byte copies and a copy onto itself change nothing.
static void copy_no_op_case(void) {
    snprintf(shape, sizeof shape, "0 bytes, and dst == src");
    Status st;
    status_clear(&st);
    enum { BYTES = 64 };
    unsigned char src[BYTES], got[BYTES], want[BYTES];
    for (int i = 0; i < BYTES; i++) src[i] = (unsigned char)(i * 7 + 1);
    unsigned char *a = dev_copy(src, BYTES), *b = dev_poisoned(BYTES);
    if (device_broken) return;
    memset(want, POISON_BYTE, BYTES);
    if (!GPU_CALL(copy_on_device, b, a, 0)) {
        download(got, b, BYTES);
        compare_bytes("copy_on_device", "0 bytes", got, want, BYTES);
    }
    if (!GPU_CALL(copy_to_device, b, src, 0)) {
        download(got, b, BYTES);
        compare_bytes("copy_to_device", "0 bytes", got, want, BYTES);
    }
    if (!GPU_CALL(copy_on_device, a, a, BYTES)) {
        download(got, a, BYTES);
        compare_bytes("copy_on_device", "onto itself", got, src, BYTES);
    }
    memset(got, 0x5A, BYTES);
    memset(want, 0x5A, BYTES);
    if (!GPU_CALL(copy_to_host, got, a, 0)) compare_bytes("copy_to_host", "0 bytes", got, want, BYTES);
}

static void test_copies(void) {
    REQUIRE(copy_to_device);
    REQUIRE(copy_to_host);
    REQUIRE(copy_on_device);
    static const size_t sizes[] = {1, 3, 4, 1001, ((size_t)1 << 20) + 5};
    static const size_t offsets[] = {0, 1, 5, 256};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            copy_case(sizes[s], offsets[o]);
            end_case();
        }
    copy_no_op_case();
    end_case();
}

// fill of n floats starting `offset` floats into a poisoned buffer: the CPU's result,
// bit for bit, and nothing outside [offset, offset + n).
static void fill_case(size_t n, size_t offset, float value) {
    snprintf(shape, sizeof shape, "n=%zu at offset %zu, value %g", n, offset, value);
    Status st;
    status_clear(&st);
    size_t span = n + offset + 7;
    float *d = dev_poison_floats(span);
    float *want = poisoned(span);
    if (GPU_CALL(fill, d + offset, value, n)) return;
    CPU_CALL(fill, want + offset, value, n);
    compare_exact("fill", "values", fetch(d, span), want, span, 0, 0);
}

static void test_fill(void) {
    REQUIRE(fill);
    static const size_t sizes[] = {0, 1, 7, 1000, 65537, BIG_N};
    static const float values[] = {0.0f, -0.0f, 3.25f, -1e30f};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            fill_case(sizes[s], s % 2 ? 3 : 0, values[v]);
            end_case();
        }
}

// Optional ops (NULL on the CPU, so in BACKEND_OTHER_OPS): profiler ranges
// must at least nest without failing the stream.
static void test_ranges(void) {
    if (!gpu->range_push || !gpu->range_pop) {
        printf("  range_push/range_pop: not provided (optional)\n");
        return;
    }
    snprintf(shape, sizeof shape, "nested ranges");
    gpu->range_push(gpu, "test_cuda_parity");
    gpu->range_push(gpu, "inner");
    gpu->range_pop(gpu);
    gpu->range_pop(gpu);
    Status st;
    status_clear(&st);
    int rc = gpu->synchronize ? gpu->synchronize(gpu, &st) : 0;
    if (rc) fprintf(stderr, "FAIL range_push/range_pop [%s]: %s\n", shape, st.message);
    record("range_push/range_pop", 0.0, rc != 0);
}

static void run(const ParityPass *pass) {
    (void)pass;
    if (section("memory, copies, fill, synchronize")) {
        test_total_memory();
        test_raw_alloc();
        test_synchronize();
        test_copies();
        test_fill();
        test_ranges();
    }
}

PARITY_MAIN("test_cuda_parity_memory", BACKEND_MEMORY_OPS, 0, run)
