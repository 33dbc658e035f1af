// Deterministic mutation fuzzer for the IDX readers.
//
// Each iteration writes a small valid IDX file (images or labels, raw or gzip), mutates
// it (header bytes overwritten, bits flipped, the file cut short or extended, or the
// compressed stream itself damaged), and reads it back with both readers. Whatever the
// bytes, a reader must return 0 or STATUS_BAD_INPUT with the file named and a message
// and hint, never crash, never leak (ASan/UBSan builds watch that), and on success the
// file must have been exactly as long as its header says.
//
// The generator's seed is fixed, so a failure reproduces; pass a number to try another.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "base/rng.h"
#include "data/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

enum { ITERATIONS = 2000, MAX_FILE = 16 + 4 * 6 * 6 + 64 };

typedef struct Outcome {
    int ok, bad_input;
} Outcome;

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

// A well-formed file: images up to 4 x 6 x 6, or up to 20 labels.
static size_t make_valid(Rng *rng, int images, uint8_t *buf) {
    size_t header, payload;
    if (images) {
        uint32_t count = 1 + rng_below(rng, 4), rows = 1 + rng_below(rng, 6),
                 cols = 1 + rng_below(rng, 6);
        put_be32(buf, 0x803);
        put_be32(buf + 4, count);
        put_be32(buf + 8, rows);
        put_be32(buf + 12, cols);
        header = 16;
        payload = (size_t)count * rows * cols;
    } else {
        uint32_t count = 1 + rng_below(rng, 20);
        put_be32(buf, 0x801);
        put_be32(buf + 4, count);
        header = 8;
        payload = count;
    }
    for (size_t i = 0; i < payload; i++) buf[header + i] = (uint8_t)rng_below(rng, 256);
    return header + payload;
}

// One random change; returns the new length (never above MAX_FILE).
static size_t mutate(Rng *rng, uint8_t *buf, size_t n) {
    switch (rng_below(rng, 6)) {
    case 0:  // overwrite a header byte: wrong magic, type, rank or dimension
        if (n) buf[rng_below(rng, (uint32_t)(n < 16 ? n : 16))] = (uint8_t)rng_below(rng, 256);
        return n;
    case 1:  // flip one bit anywhere
        if (n) buf[rng_below(rng, (uint32_t)n)] ^= (uint8_t)(1u << rng_below(rng, 8));
        return n;
    case 2:  // cut the file short, maybe inside the header
        return n ? rng_below(rng, (uint32_t)n) : 0;
    case 3: {  // append a few bytes
        size_t extra = 1 + rng_below(rng, 8);
        if (n + extra > MAX_FILE) extra = MAX_FILE - n;
        for (size_t i = 0; i < extra; i++) buf[n + i] = (uint8_t)rng_below(rng, 256);
        return n + extra;
    }
    case 4: {  // an extreme dimension: zero, one, the limits, or all ones
        static const uint32_t values[] = {0, 1, 4096, 4097, 10000000, 10000001, 0xFFFFFFFFu};
        size_t slot = 4 + 4 * rng_below(rng, 3);
        if (slot + 4 <= n) put_be32(buf + slot, values[rng_below(rng, 7)]);
        return n;
    }
    default:  // the other file kind's magic
        if (n >= 4) put_be32(buf, buf[3] == 3 ? 0x801 : 0x803);
        return n;
    }
}

static int write_raw(const char *path, const uint8_t *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t wrote = n ? fwrite(buf, 1, n, f) : 0;
    return (fclose(f) == 0 && wrote == n) ? 0 : -1;
}

static int write_gzip(const char *path, const uint8_t *buf, size_t n) {
    gzFile gz = gzopen(path, "wb");
    if (!gz) return -1;
    int wrote = n ? gzwrite(gz, buf, (unsigned)n) : 0;
    return (gzclose(gz) == Z_OK && wrote == (int)n) ? 0 : -1;
}

// Damages the compressed file on disk: a flipped byte or a cut in the deflate stream or
// its trailer, the kinds of damage a bad download does.
static int damage_file(Rng *rng, const char *path) {
    uint8_t bytes[4 * MAX_FILE];
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    if (n < 2) return 0;
    if (rng_below(rng, 2)) bytes[rng_below(rng, (uint32_t)n)] ^= (uint8_t)(1 + rng_below(rng, 255));
    else n = 1 + rng_below(rng, (uint32_t)n - 1);
    return write_raw(path, bytes, n);
}

static void check_failure(const Status *st, const char *path, int rc) {
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st->code, STATUS_BAD_INPUT);
    CHECK_CONTAINS(st->file, path);
    CHECK(st->message[0] != '\0');
    CHECK(st->hint[0] != '\0');
}

// Reads the file as images and as labels; `raw_len` is the file's length when it was
// written uncompressed and undamaged afterwards (0 otherwise), to check that success
// means the header and the length agreed.
static void read_both_ways(const char *path, size_t raw_len, Outcome *out) {
    Status st;
    status_clear(&st);
    uint8_t *pixels = NULL;
    int count = 0, rows = 0, cols = 0;
    int rc = idx_read_images(path, &pixels, &count, &rows, &cols, &st);
    if (rc == 0) {
        out->ok++;
        CHECK(pixels != NULL && count > 0 && rows > 0 && cols > 0);
        size_t size = (size_t)count * rows * cols;
        if (raw_len) CHECK_INT_EQ(16 + size, raw_len);
        unsigned sum = 0;  // touch every byte, so ASan sees a short buffer
        for (size_t i = 0; i < size; i++) sum += pixels[i];
        (void)sum;
    } else {
        out->bad_input++;
        check_failure(&st, path, rc);
        CHECK(pixels == NULL);
    }
    free(pixels);

    status_clear(&st);
    uint8_t *labels = NULL;
    rc = idx_read_labels(path, &labels, &count, &st);
    if (rc == 0) {
        out->ok++;
        CHECK(labels != NULL && count > 0);
        if (raw_len) CHECK_INT_EQ(8 + (size_t)count, raw_len);
        unsigned sum = 0;
        for (int i = 0; i < count; i++) sum += labels[i];
        (void)sum;
    } else {
        out->bad_input++;
        check_failure(&st, path, rc);
        CHECK(labels == NULL);
    }
    free(labels);
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 20240601u;
    char dir[] = "/tmp/trainer-fuzz-idx-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/sample", dir);

    Rng rng;
    rng_seed(&rng, seed);
    Outcome outcome = {0, 0};
    for (int it = 0; it < ITERATIONS && !test_failures; it++) {
        uint8_t buf[MAX_FILE];
        size_t n = make_valid(&rng, (int)rng_below(&rng, 2), buf);
        // One iteration in eight stays valid, so the success path is fuzzed too.
        int mutations = rng_below(&rng, 8) == 0 ? 0 : 1 + (int)rng_below(&rng, 3);
        for (int m = 0; m < mutations; m++) n = mutate(&rng, buf, n);

        int gzip = rng_below(&rng, 3) == 0;
        int damaged = gzip && rng_below(&rng, 2);
        int rc = gzip ? write_gzip(path, buf, n) : write_raw(path, buf, n);
        if (rc == 0 && damaged) rc = damage_file(&rng, path);
        CHECK_INT_EQ(rc, 0);
        read_both_ways(path, gzip ? 0 : n, &outcome);
        if (test_failures) fprintf(stderr, "fuzz_idx: failed at iteration %d (seed %llu)\n", it,
                                   (unsigned long long)seed);
    }
    unlink(path);
    rmdir(dir);

    fprintf(stderr, "fuzz_idx: %d iterations, %d reads ok, %d rejected\n", ITERATIONS,
            outcome.ok, outcome.bad_input);
    // Both paths must have been exercised, or the fuzzer is not testing much.
    CHECK(outcome.ok > 50);
    CHECK(outcome.bad_input > 1000);
    return test_exit_code("fuzz_idx");
}
