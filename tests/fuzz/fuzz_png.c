// Deterministic mutation fuzzer for the PNG reader.
//
// A few small valid PNGs are written with libpng (gray 1- and 8-bit, gray+alpha 16-bit,
// palette with tRNS, interlaced RGBA, RGB), then each iteration mutates one of them
// (flipped bits, overwritten bytes, chunk lengths set to extremes, header fields changed,
// chunks duplicated or dropped, the file cut short or extended) and, half the time,
// recomputes every chunk's CRC so the damage reaches the header checks, zlib and the
// row filters instead of stopping at the first CRC. Whatever the bytes, the reader must
// return 0 or STATUS_BAD_INPUT with the file named, a message and a hint, never crash,
// never leak (ASan/UBSan builds watch that), and on success give values in [0, 1].
//
// The generator's seed is fixed, so a failure reproduces; pass a number to try another.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "base/rng.h"
#include "data/image.h"

#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

enum { ITERATIONS = 1500, MAX_FILE = 4096, SEEDS = 6 };

typedef struct Buffer {
    uint8_t bytes[MAX_FILE];
    size_t n;
} Buffer;

typedef struct Seed {
    Buffer file;
    int width, height;
} Seed;

typedef struct Outcome {
    int ok, bad_input, size_mismatch;
} Outcome;

static void append(png_structp png, png_bytep data, size_t length) {
    Buffer *b = png_get_io_ptr(png);
    if (b->n + length > MAX_FILE) png_error(png, "seed image too large");
    memcpy(b->bytes + b->n, data, length);
    b->n += length;
}

static void flush_nothing(png_structp png) {}

// Writes a width x height image of the given type into seed->file; samples are a
// pattern masked to the bit depth.
static int make_seed(Seed *seed, int width, int height, int color_type, int bit_depth,
                     int interlace) {
    seed->file.n = 0;
    seed->width = width;
    seed->height = height;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int spp = color_type == PNG_COLOR_TYPE_RGB ? 3 : color_type == PNG_COLOR_TYPE_RGBA ? 4
            : color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2 : 1;
    size_t row_bytes = ((size_t)width * spp * bit_depth + 7) / 8;
    png_bytep pixels = malloc(row_bytes * height);
    png_bytep *rows = malloc(height * sizeof *rows);
    volatile int rc = -1;  // set after setjmp, read after a longjmp
    if (png && info && pixels && rows && !setjmp(png_jmpbuf(png))) {
        // Any bytes will do: the palette seed is 2-bit, so every index has an entry.
        for (size_t i = 0; i < row_bytes * height; i++) pixels[i] = (png_byte)(i * 29 + 7);
        for (int y = 0; y < height; y++) rows[y] = pixels + y * row_bytes;
        png_set_write_fn(png, &seed->file, append, flush_nothing);
        png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, bit_depth, color_type,
                     interlace, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        if (color_type == PNG_COLOR_TYPE_PALETTE) {
            png_color palette[4] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 128}, {250, 250, 250}};
            png_byte alpha[2] = {0, 200};
            png_set_PLTE(png, info, palette, 4);
            png_set_tRNS(png, info, alpha, 2, NULL);
        }
        png_write_info(png, info);
        png_write_image(png, rows);
        png_write_end(png, NULL);
        rc = 0;
    }
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(pixels);
    return rc;
}

static uint32_t get_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

// Offsets of the chunks (their length fields) that lie wholly inside the file.
static int chunk_offsets(const Buffer *b, size_t *offsets, int max) {
    int count = 0;
    size_t at = 8;
    while (count < max && at + 12 <= b->n) {
        uint32_t length = get_be32(b->bytes + at);
        if (length > b->n || at + 12 + length > b->n) break;
        offsets[count++] = at;
        at += 12 + length;
    }
    return count;
}

static void fix_crcs(Buffer *b) {
    size_t offsets[64];
    int count = chunk_offsets(b, offsets, 64);
    for (int i = 0; i < count; i++) {
        uint8_t *chunk = b->bytes + offsets[i];
        uint32_t length = get_be32(chunk);
        put_be32(chunk + 8 + length, (uint32_t)crc32(0L, chunk + 4, length + 4));
    }
}

// One random change.
static void mutate(Rng *rng, Buffer *b) {
    size_t offsets[64];
    int chunks = chunk_offsets(b, offsets, 64);
    switch (rng_below(rng, 9)) {
    case 0:  // flip one bit anywhere
        if (b->n) b->bytes[rng_below(rng, (uint32_t)b->n)] ^= (uint8_t)(1u << rng_below(rng, 8));
        break;
    case 1:  // overwrite a byte anywhere
        if (b->n) b->bytes[rng_below(rng, (uint32_t)b->n)] = (uint8_t)rng_below(rng, 256);
        break;
    case 2: {  // an IHDR field: width, height, bit depth, colour type, interlace, ...
        static const uint32_t dims[] = {0, 1, 2, 6, 7, 8, 1000000, 1000001, 0x7FFFFFFFu,
                                        0xFFFFFFFFu};
        if (b->n < 33) break;
        uint32_t field = rng_below(rng, 4);
        if (field < 2) put_be32(b->bytes + 16 + 4 * field, dims[rng_below(rng, 10)]);
        else b->bytes[24 + rng_below(rng, 5)] = (uint8_t)rng_below(rng, 20);
        break;
    }
    case 3:  // a chunk length set to an extreme
        if (chunks) {
            static const uint32_t lengths[] = {0, 1, 13, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
            size_t at = offsets[rng_below(rng, (uint32_t)chunks)];
            put_be32(b->bytes + at, lengths[rng_below(rng, 6)]);
        }
        break;
    case 4:  // cut short
        b->n = rng_below(rng, (uint32_t)b->n + 1);
        break;
    case 5: {  // append a few bytes
        size_t extra = 1 + rng_below(rng, 16);
        if (b->n + extra > MAX_FILE) extra = MAX_FILE - b->n;
        for (size_t i = 0; i < extra; i++) b->bytes[b->n + i] = (uint8_t)rng_below(rng, 256);
        b->n += extra;
        break;
    }
    case 6:  // duplicate a chunk right after itself (two IHDRs, two PLTEs, ...)
        if (chunks) {
            size_t at = offsets[rng_below(rng, (uint32_t)chunks)];
            size_t size = 12 + get_be32(b->bytes + at);
            if (b->n + size <= MAX_FILE) {
                memmove(b->bytes + at + size, b->bytes + at, b->n - at);
                b->n += size;
            }
        }
        break;
    case 7:  // drop a chunk (the PLTE, the only IDAT, IEND, ...)
        if (chunks) {
            size_t at = offsets[rng_below(rng, (uint32_t)chunks)];
            size_t size = 12 + get_be32(b->bytes + at);
            memmove(b->bytes + at, b->bytes + at + size, b->n - at - size);
            b->n -= size;
        }
        break;
    default:  // damage the compressed data or the filter bytes inside an IDAT
        for (int i = 0; i < chunks; i++) {
            if (memcmp(b->bytes + offsets[i] + 4, "IDAT", 4) != 0) continue;
            uint32_t length = get_be32(b->bytes + offsets[i]);
            if (length)
                b->bytes[offsets[i] + 8 + rng_below(rng, length)] = (uint8_t)rng_below(rng, 256);
            break;
        }
    }
}

static int write_file(const char *path, const Buffer *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t wrote = b->n ? fwrite(b->bytes, 1, b->n, f) : 0;
    return (fclose(f) == 0 && wrote == b->n) ? 0 : -1;
}

static void check_failure(const Status *st, const char *path, int rc) {
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st->code, STATUS_BAD_INPUT);
    CHECK(strcmp(st->file, path) == 0);
    CHECK(st->message[0] != '\0');
    CHECK(st->hint[0] != '\0');
}

static void read_back(const char *path, const Seed *seed, int channels, Outcome *out) {
    size_t values = (size_t)channels * seed->width * seed->height;
    float *pixels = malloc(values * sizeof *pixels);  // exactly the size: ASan sees overruns
    Status st;
    status_clear(&st);
    int rc = png_read_sample(path, channels, seed->height, seed->width, pixels, &st);
    if (rc == 0) {
        out->ok++;
        int outside = 0;
        for (size_t i = 0; i < values; i++) outside += !(pixels[i] >= 0.0f && pixels[i] <= 1.0f);
        CHECK_INT_EQ(outside, 0);
    } else {
        out->bad_input++;
        if (strstr(st.message, "but the model takes")) out->size_mismatch++;
        check_failure(&st, path, rc);
    }
    free(pixels);

    int width = -1, height = -1;
    status_clear(&st);
    rc = png_read_size(path, &width, &height, &st);
    if (rc == 0) CHECK(width > 0 && height > 0);
    else check_failure(&st, path, rc);
}

int main(int argc, char **argv) {
    uint64_t seed_value = argc > 1 ? strtoull(argv[1], NULL, 10) : 20240611u;
    static Seed seeds[SEEDS];
    int made = 0;
    made += make_seed(&seeds[0], 8, 6, PNG_COLOR_TYPE_GRAY, 8, PNG_INTERLACE_NONE) == 0;
    made += make_seed(&seeds[1], 9, 5, PNG_COLOR_TYPE_GRAY, 1, PNG_INTERLACE_NONE) == 0;
    made += make_seed(&seeds[2], 5, 4, PNG_COLOR_TYPE_GRAY_ALPHA, 16, PNG_INTERLACE_NONE) == 0;
    made += make_seed(&seeds[3], 7, 7, PNG_COLOR_TYPE_PALETTE, 2, PNG_INTERLACE_NONE) == 0;
    made += make_seed(&seeds[4], 10, 9, PNG_COLOR_TYPE_RGBA, 8, PNG_INTERLACE_ADAM7) == 0;
    made += make_seed(&seeds[5], 6, 6, PNG_COLOR_TYPE_RGB, 8, PNG_INTERLACE_NONE) == 0;
    CHECK_INT_EQ(made, SEEDS);
    if (made != SEEDS) return test_exit_code("fuzz_png");

    char dir[] = "/tmp/trainer-fuzz-png-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/sample.png", dir);

    Rng rng;
    rng_seed(&rng, seed_value);
    Outcome outcome = {0, 0, 0};
    for (int it = 0; it < ITERATIONS && !test_failures; it++) {
        const Seed *seed = &seeds[rng_below(&rng, SEEDS)];
        Buffer b = seed->file;
        // One iteration in eight stays valid, so the success path is fuzzed too.
        int mutations = rng_below(&rng, 8) == 0 ? 0 : 1 + (int)rng_below(&rng, 3);
        for (int m = 0; m < mutations; m++) mutate(&rng, &b);
        if (mutations && rng_below(&rng, 2)) fix_crcs(&b);
        CHECK_INT_EQ(write_file(path, &b), 0);
        read_back(path, seed, rng_below(&rng, 2) ? 3 : 1, &outcome);
        if (test_failures) fprintf(stderr, "fuzz_png: failed at iteration %d (seed %llu)\n", it,
                                   (unsigned long long)seed_value);
    }
    unlink(path);
    rmdir(dir);

    fprintf(stderr, "fuzz_png: %d iterations, %d reads ok, %d rejected (%d for their size)\n",
            ITERATIONS, outcome.ok, outcome.bad_input, outcome.size_mismatch);
    // Both paths must have been exercised, or the fuzzer is not testing much.
    CHECK(outcome.ok > 150);
    CHECK(outcome.bad_input > 600);
    return test_exit_code("fuzz_png");
}
