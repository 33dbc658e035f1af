// PNG reader: every colour type, bit depth and interlacing libpng can write decodes to
// the exact 8-bit values it was written with, as 1 (gray) or 3 (RGB) channels in CHW
// order; alpha is composited over black. A wrong size, a missing file, a file that is
// not a PNG, a cut-short PNG, damaged chunks and a palette index past the palette are
// STATUS_BAD_INPUT naming the file, with a message and a hint, never a crash or a leak
// (the ASan build watches). Out of memory names the path escaped.
//
// The PNGs are written here with libpng itself, under a fresh /tmp folder.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/image.h"

#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

static char tmp_root[256];

// ---- writing test images ---------------------------------------------------------------

// An image to write, and what it must decode to: 8-bit RGBA per pixel before the
// composite over black.
typedef struct TestImage {
    const char *name;
    int width, height;
    int bit_depth;          // 1, 2, 4, 8 or 16
    int color_type;         // PNG_COLOR_TYPE_*
    int interlace;          // PNG_INTERLACE_NONE or PNG_INTERLACE_ADAM7
    int is_gray;            // decodes to gray exactly (no luminance conversion)
    unsigned *samples;      // width * height * samples_per_pixel stored values
    int samples_per_pixel;
    png_color palette[16];
    int palette_count;
    png_byte trans_alpha[16];  // palette tRNS
    int trans_count;
    int has_trans_gray;        // gray tRNS: pixels equal to trans_gray are transparent
    unsigned trans_gray;
    uint8_t *rgba;          // expected: width * height * 4
} TestImage;

static int write_png(const char *path, const TestImage *im) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int spp = im->samples_per_pixel;
    size_t row_bytes = ((size_t)im->width * spp * im->bit_depth + 7) / 8;
    png_bytep packed = calloc((size_t)im->height, row_bytes);
    png_bytep *rows = calloc((size_t)im->height, sizeof *rows);
    volatile int rc = -1;  // set after setjmp, read after a longjmp
    if (png && info && packed && rows && !setjmp(png_jmpbuf(png))) {
        // Pack the samples big-endian, most significant bits first, as PNG stores them.
        for (int y = 0; y < im->height; y++) {
            png_bytep row = packed + (size_t)y * row_bytes;
            rows[y] = row;
            for (int i = 0; i < im->width * spp; i++) {
                unsigned v = im->samples[(size_t)y * im->width * spp + i];
                if (im->bit_depth == 16) {
                    row[2 * i] = (png_byte)(v >> 8);
                    row[2 * i + 1] = (png_byte)v;
                } else if (im->bit_depth == 8) {
                    row[i] = (png_byte)v;
                } else {
                    int per_byte = 8 / im->bit_depth;
                    int shift = 8 - im->bit_depth * (i % per_byte + 1);
                    row[i / per_byte] |= (png_byte)(v << shift);
                }
            }
        }
        png_init_io(png, f);
        // Lets palette_index_past_the_palette_is_refused write the indices a faulty
        // encoder would.
        png_set_check_for_invalid_index(png, 0);
        png_set_IHDR(png, info, (png_uint_32)im->width, (png_uint_32)im->height, im->bit_depth,
                     im->color_type, im->interlace, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        if (im->palette_count) png_set_PLTE(png, info, im->palette, im->palette_count);
        if (im->trans_count) png_set_tRNS(png, info, im->trans_alpha, im->trans_count, NULL);
        if (im->has_trans_gray) {
            png_color_16 color = {.gray = (png_uint_16)im->trans_gray};
            png_set_tRNS(png, info, NULL, 0, &color);
        }
        png_write_info(png, info);
        png_write_image(png, rows);  // does the Adam7 passes itself when interlaced
        png_write_end(png, NULL);
        rc = 0;
    }
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(packed);
    fclose(f);
    return rc;
}

static void path_in(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmp_root, name);
}

// A pattern that visits many values, different per pixel and channel.
static unsigned pattern(int x, int y, int c) {
    return (unsigned)(x * 37 + y * 91 + c * 59 + 11) % 256;
}

static void image_alloc(TestImage *im, int width, int height, int spp) {
    im->width = width;
    im->height = height;
    im->samples_per_pixel = spp;
    im->samples = calloc((size_t)width * height * spp, sizeof *im->samples);
    im->rgba = calloc((size_t)width * height, 4);
}

static void image_free(TestImage *im) {
    free(im->samples);
    free(im->rgba);
}

static void set_rgba(TestImage *im, int x, int y, unsigned r, unsigned g, unsigned b, unsigned a) {
    uint8_t *p = im->rgba + ((size_t)y * im->width + x) * 4;
    p[0] = (uint8_t)r;
    p[1] = (uint8_t)g;
    p[2] = (uint8_t)b;
    p[3] = (uint8_t)a;
}

static unsigned *sample_at(TestImage *im, int x, int y) {
    return im->samples + ((size_t)y * im->width + x) * im->samples_per_pixel;
}

// ---- the cases -------------------------------------------------------------------------

enum { W = 7, H = 5 };  // not square, so a width/height swap shows

static void make_gray(TestImage *im, int bit_depth, int trans_gray) {
    image_alloc(im, W, H, 1);
    im->color_type = PNG_COLOR_TYPE_GRAY;
    im->bit_depth = bit_depth;
    im->is_gray = 1;
    unsigned max = (1u << (bit_depth < 8 ? bit_depth : 8)) - 1;
    if (trans_gray) {
        im->has_trans_gray = 1;
        im->trans_gray = pattern(3, 2, 0);
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned v = pattern(x, y, 0) % (max + 1);
            // 16 bits: v * 257 scales back to exactly v; low depths scale up to 0..255.
            *sample_at(im, x, y) = bit_depth == 16 ? v * 257 : v;
            unsigned v8 = v * (255 / max);
            unsigned a = trans_gray && v == im->trans_gray ? 0 : 255;
            set_rgba(im, x, y, v8, v8, v8, a);
        }
}

static void make_gray_alpha(TestImage *im) {
    image_alloc(im, W, H, 2);
    im->color_type = PNG_COLOR_TYPE_GRAY_ALPHA;
    im->bit_depth = 8;
    im->is_gray = 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned v = pattern(x, y, 0), a = x == 0 ? 0 : x == 1 ? 255 : pattern(x, y, 1);
            sample_at(im, x, y)[0] = v;
            sample_at(im, x, y)[1] = a;
            set_rgba(im, x, y, v, v, v, a);
        }
}

static void make_rgb(TestImage *im, int alpha, int bit_depth, int interlace, int width,
                     int height) {
    image_alloc(im, width, height, alpha ? 4 : 3);
    im->color_type = alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB;
    im->bit_depth = bit_depth;
    im->interlace = interlace;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            unsigned v[4] = {pattern(x, y, 0), pattern(x, y, 1), pattern(x, y, 2),
                             alpha ? (x == 0 ? 0 : pattern(x, y, 3)) : 255};
            for (int c = 0; c < im->samples_per_pixel; c++)
                sample_at(im, x, y)[c] = bit_depth == 16 ? v[c] * 257 : v[c];
            set_rgba(im, x, y, v[0], v[1], v[2], v[3]);
        }
}

static void make_palette(TestImage *im, int bit_depth, int with_trns) {
    image_alloc(im, W, H, 1);
    im->color_type = PNG_COLOR_TYPE_PALETTE;
    im->bit_depth = bit_depth;
    im->palette_count = 1 << (bit_depth < 4 ? bit_depth : 4);
    for (int i = 0; i < im->palette_count; i++)
        im->palette[i] = (png_color){(png_byte)pattern(i, 0, 0), (png_byte)pattern(i, 1, 1),
                                     (png_byte)pattern(i, 2, 2)};
    if (with_trns) {
        // Fewer alphas than entries: the rest are opaque.
        im->trans_count = 3;
        im->trans_alpha[0] = 0;
        im->trans_alpha[1] = 128;
        im->trans_alpha[2] = 255;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            unsigned i = (unsigned)(x + 2 * y) % (unsigned)im->palette_count;
            *sample_at(im, x, y) = i;
            unsigned a = (int)i < im->trans_count ? im->trans_alpha[i] : 255;
            set_rgba(im, x, y, im->palette[i].red, im->palette[i].green, im->palette[i].blue, a);
        }
}

// Decodes `path` as 1 and as 3 channels and compares every value with the expected RGBA,
// composited over black.
static void check_decodes(const TestImage *im, const char *path) {
    size_t plane = (size_t)im->width * im->height;
    float *out = malloc(3 * plane * sizeof *out);  // exactly the size: ASan sees overruns
    Status st;
    for (int channels = 1; channels <= 3; channels += 2) {
        status_clear(&st);
        int rc = png_read_sample(path, channels, im->height, im->width, out, &st);
        if (rc) fprintf(stderr, "%s as %d channel(s): %s\n", im->name, channels, st.message);
        CHECK_INT_EQ(rc, 0);
        if (rc) continue;
        int bad = 0;
        for (size_t i = 0; i < plane && bad < 3; i++) {
            const uint8_t *p = im->rgba + i * 4;
            float a = p[3] / 255.0f;
            if (channels == 3) {
                for (int c = 0; c < 3; c++) {
                    float want = p[c] / 255.0f * a, got = out[c * plane + i];
                    if (fabsf(want - got) > 1e-6f) {
                        fprintf(stderr, "%s: pixel %zu channel %d: got %.6f, want %.6f\n",
                                im->name, i, c, got, want);
                        bad++;
                    }
                }
            } else {
                // Gray stays exact; colour becomes luminance, within one 8-bit step.
                float luminance = (0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]) / 255.0f;
                float want = (im->is_gray ? p[0] / 255.0f : luminance) * a;
                float tol = im->is_gray ? 1e-6f : 1.0f / 255.0f;
                if (fabsf(want - out[i]) > tol) {
                    fprintf(stderr, "%s: pixel %zu gray: got %.6f, want %.6f\n", im->name, i,
                            out[i], want);
                    bad++;
                }
            }
        }
        CHECK_INT_EQ(bad, 0);
    }
    free(out);
}

static void write_and_check(TestImage *im, const char *name) {
    char path[512];
    path_in(path, sizeof path, name);
    im->name = name;
    CHECK_INT_EQ(write_png(path, im), 0);
    check_decodes(im, path);
    int width = 0, height = 0;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(png_read_size(path, &width, &height, &st), 0);
    CHECK_INT_EQ(width, im->width);
    CHECK_INT_EQ(height, im->height);
    image_free(im);
}

static void every_format_decodes_exactly(void) {
    struct { const char *name; int kind, bit_depth, option; } cases[] = {
        {"gray8.png", 'g', 8, 0},          {"gray16.png", 'g', 16, 0},
        {"gray1.png", 'g', 1, 0},          {"gray2.png", 'g', 2, 0},
        {"gray4.png", 'g', 4, 0},          {"gray8_trns.png", 'g', 8, 1},
        {"gray_alpha.png", 'a', 8, 0},     {"rgb8.png", 'c', 8, 0},
        {"rgba8.png", 'c', 8, 1},          {"rgb16.png", 'c', 16, 0},
        {"rgba16.png", 'c', 16, 1},        {"palette8_trns.png", 'p', 8, 1},
        {"palette2.png", 'p', 2, 0},       {"palette4_trns.png", 'p', 4, 1},
        {"rgb8_adam7.png", 'i', 8, 0},     {"gray8_adam7.png", 'j', 8, 0},
        {"palette1.png", 'p', 1, 0},       {"palette8_adam7.png", 'q', 8, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TestImage im = {0};
        switch (cases[i].kind) {
        case 'g': make_gray(&im, cases[i].bit_depth, cases[i].option); break;
        case 'a': make_gray_alpha(&im); break;
        case 'c':
            make_rgb(&im, cases[i].option, cases[i].bit_depth, PNG_INTERLACE_NONE, W, H);
            break;
        case 'p': make_palette(&im, cases[i].bit_depth, cases[i].option); break;
        case 'q':
            make_palette(&im, cases[i].bit_depth, cases[i].option);
            im.interlace = PNG_INTERLACE_ADAM7;
            break;
        case 'i':  // big enough that all seven Adam7 passes hold pixels
            make_rgb(&im, 0, 8, PNG_INTERLACE_ADAM7, 19, 13);
            break;
        default:
            make_gray(&im, 8, 0);
            im.interlace = PNG_INTERLACE_ADAM7;
        }
        write_and_check(&im, cases[i].name);
    }
}

// ---- failures --------------------------------------------------------------------------

static void check_bad_input(int rc, const Status *st, const char *path, const char *text) {
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK_INT_EQ(st->code, STATUS_BAD_INPUT);
    CHECK(strcmp(st->file, path) == 0);
    CHECK_CONTAINS(st->message, text);
    CHECK(st->hint[0] != '\0');
}

// Reads `path` as the gray8 image's size; returns the status code.
static int read_7x5(const char *path, Status *st) {
    float out[W * H];
    status_clear(st);
    return png_read_sample(path, 1, H, W, out, st);
}

static void write_gray8(const char *path) {
    TestImage im = {0};
    make_gray(&im, 8, 0);
    CHECK_INT_EQ(write_png(path, &im), 0);
    image_free(&im);
}

static size_t read_file(const char *path, uint8_t *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

static void write_file(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (n) CHECK_INT_EQ(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static uint32_t get_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

// Offset of the first IDAT chunk's length field, or 0.
static size_t find_idat(const uint8_t *png, size_t n) {
    size_t at = 8;
    while (at + 8 <= n) {
        if (memcmp(png + at + 4, "IDAT", 4) == 0) return at;
        at += 12 + get_be32(png + at);
    }
    return 0;
}

static void size_mismatch_names_both_sizes(void) {
    char path[512];
    path_in(path, sizeof path, "size.png");
    write_gray8(path);
    float out[4 * 4 * 3];
    Status st;
    status_clear(&st);
    int rc = png_read_sample(path, 1, 4, 4, out, &st);
    check_bad_input(rc, &st, path, "7x5");
    CHECK_CONTAINS(st.message, "4x4");
    CHECK_CONTAINS(st.hint, "resize the image to 4x4");
    // Height and width are not swapped: 5 rows of 7 is not 7 rows of 5.
    status_clear(&st);
    rc = png_read_sample(path, 3, W, H, out, &st);
    check_bad_input(rc, &st, path, "7x5 pixels");
    CHECK_CONTAINS(st.message, "5x7");
}

static void unsupported_channel_count_is_refused(void) {
    char path[512];
    path_in(path, sizeof path, "channels.png");
    write_gray8(path);
    float out[2 * W * H];
    Status st;
    status_clear(&st);
    check_bad_input(png_read_sample(path, 2, H, W, out, &st), &st, path, "takes 2");
}

static void missing_file_and_folder_are_named(void) {
    char path[512];
    path_in(path, sizeof path, "no-such.png");
    Status st;
    check_bad_input(read_7x5(path, &st), &st, path, "cannot open");
    CHECK_CONTAINS(st.message, "No such file");
    check_bad_input(read_7x5(tmp_root, &st), &st, tmp_root, "is a directory");
    int width, height;
    status_clear(&st);
    check_bad_input(png_read_size(path, &width, &height, &st), &st, path, "cannot open");
}

static void not_a_png_is_named_before_libpng(void) {
    char path[512];
    path_in(path, sizeof path, "text.png");
    Status st;
    const char text[] = "P2\n7 5\n255\nnot a PNG at all\n";
    write_file(path, text, sizeof text - 1);
    check_bad_input(read_7x5(path, &st), &st, path, "not a PNG file");
    const uint8_t jpeg[] = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1};
    write_file(path, jpeg, sizeof jpeg);
    check_bad_input(read_7x5(path, &st), &st, path, "looks like a JPEG");
    write_file(path, "\x89PN", 3);
    check_bad_input(read_7x5(path, &st), &st, path, "only 3 bytes");
    write_file(path, "", 0);
    check_bad_input(read_7x5(path, &st), &st, path, "only 0 bytes");
}

static void truncated_png_reports_libpng_message(void) {
    char path[512];
    path_in(path, sizeof path, "cut.png");
    write_gray8(path);
    uint8_t bytes[4096];
    size_t n = read_file(path, bytes, sizeof bytes);
    CHECK(n > 60 && n < sizeof bytes);
    Status st;
    // Cut in half, cut inside the header, cut just before IEND: each is a damaged file.
    size_t cuts[] = {n / 2, 20, 40, n - 12, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_file(path, bytes, cuts[i]);
        check_bad_input(read_7x5(path, &st), &st, path, "cannot decode PNG");
        CHECK_CONTAINS(st.message, "(libpng)");
        CHECK_CONTAINS(st.hint, "damaged");
    }
    write_file(path, bytes, n / 2);
    read_7x5(path, &st);
    CHECK_CONTAINS(st.message, "unexpected end of file");
}

static void damaged_chunks_report_libpng_message(void) {
    char path[512];
    path_in(path, sizeof path, "damaged.png");
    write_gray8(path);
    uint8_t good[4096], bytes[4096];
    size_t n = read_file(path, good, sizeof good);
    size_t idat = find_idat(good, n);
    CHECK(idat > 0);
    if (!idat) return;
    uint32_t idat_len = get_be32(good + idat);
    Status st;

    // A flipped bit in the IDAT data: zlib trips over it before the chunk's CRC is
    // checked; either way the message names the chunk.
    memcpy(bytes, good, n);
    bytes[idat + 8 + idat_len / 2] ^= 0x10;
    write_file(path, bytes, n);
    check_bad_input(read_7x5(path, &st), &st, path, "IDAT");

    // The IDAT's own CRC damaged.
    memcpy(bytes, good, n);
    bytes[idat + 8 + idat_len + 1] ^= 0x01;
    write_file(path, bytes, n);
    check_bad_input(read_7x5(path, &st), &st, path, "CRC error");

    // A bad CRC on the header chunk.
    memcpy(bytes, good, n);
    bytes[29] ^= 0xFF;
    write_file(path, bytes, n);
    check_bad_input(read_7x5(path, &st), &st, path, "CRC error");

    // A damaged zlib stream with a CRC that matches it: zlib's message comes through.
    memcpy(bytes, good, n);
    bytes[idat + 8] = 0x00;  // the zlib header's CMF byte: an unknown method
    uint32_t crc = (uint32_t)crc32(0L, bytes + idat + 4, idat_len + 4);
    uint8_t *at = bytes + idat + 8 + idat_len;
    at[0] = (uint8_t)(crc >> 24), at[1] = (uint8_t)(crc >> 16), at[2] = (uint8_t)(crc >> 8),
    at[3] = (uint8_t)crc;
    write_file(path, bytes, n);
    check_bad_input(read_7x5(path, &st), &st, path, "cannot decode PNG");

    // A header claiming an absurd width is refused before anything is allocated.
    memcpy(bytes, good, n);
    bytes[16] = 0x7F;
    crc = (uint32_t)crc32(0L, bytes + 12, 17);
    bytes[29] = (uint8_t)(crc >> 24), bytes[30] = (uint8_t)(crc >> 16),
    bytes[31] = (uint8_t)(crc >> 8), bytes[32] = (uint8_t)crc;
    write_file(path, bytes, n);
    check_bad_input(read_7x5(path, &st), &st, path, "cannot decode PNG");
}

// Writes `good` (n bytes) to `path` with a chunk of TYPE and DATA inserted before the
// first IDAT; `claimed`, when not 0, replaces the length field (the CRC still covers DATA).
static void write_with_chunk(const char *path, const uint8_t *good, size_t n, const char *type,
                             const uint8_t *data, uint32_t length, uint32_t claimed) {
    static uint8_t bytes[8192];
    size_t idat = find_idat(good, n);
    CHECK(idat > 0 && n + 12 + length <= sizeof bytes);
    if (!idat || n + 12 + length > sizeof bytes) return;
    uint32_t field = claimed ? claimed : length;
    memcpy(bytes, good, idat);
    uint8_t *at = bytes + idat;
    at[0] = (uint8_t)(field >> 24), at[1] = (uint8_t)(field >> 16), at[2] = (uint8_t)(field >> 8),
    at[3] = (uint8_t)field;
    memcpy(at + 4, type, 4);
    if (length) memcpy(at + 8, data, length);
    uint32_t crc = (uint32_t)crc32(0L, at + 4, 4 + length);
    at += 8 + length;
    at[0] = (uint8_t)(crc >> 24), at[1] = (uint8_t)(crc >> 16), at[2] = (uint8_t)(crc >> 8),
    at[3] = (uint8_t)crc;
    memcpy(at + 4, good + idat, n - idat);
    write_file(path, bytes, n + 12 + length);
}

// Text, ICC profiles, gamma: chunks we do not use are skipped unread, so a damaged one does
// not stop the pixels, and one whose length field lies is not allocated (libpng allocated a
// zTXt's claimed length, 1.9 GB for a 49-byte file; replay_png's ASan cap catches that).
static void ancillary_chunks_are_skipped_unread(void) {
    char path[512];
    path_in(path, sizeof path, "chunks.png");
    write_gray8(path);
    uint8_t good[4096];
    size_t n = read_file(path, good, sizeof good);
    float want[W * H], got[W * H];
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(png_read_sample(path, 1, H, W, want, &st), 0);

    const uint8_t text[] = "Comment\0made by test_png";
    const uint8_t bad_icc[] = "sRGB\0\0not a zlib stream at all";  // name, method, data
    const uint8_t bad_gamma[] = {0, 0, 0, 0};                         // gamma 0: invalid
    struct { const char *type; const uint8_t *data; uint32_t length; } chunks[] = {
        {"tEXt", text, sizeof text - 1},
        {"iCCP", bad_icc, sizeof bad_icc - 1},
        {"gAMA", bad_gamma, sizeof bad_gamma},
        {"zTXt", bad_icc, sizeof bad_icc - 1},
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        write_with_chunk(path, good, n, chunks[i].type, chunks[i].data, chunks[i].length, 0);
        for (int j = 0; j < W * H; j++) got[j] = -1.0f;
        status_clear(&st);
        CHECK_INT_EQ(png_read_sample(path, 1, H, W, got, &st), 0);
        CHECK(memcmp(got, want, sizeof want) == 0);
    }
    // A zTXt claiming 1.9 GB in a file that ends after it: skipping it runs into the end.
    write_with_chunk(path, good, n, "zTXt", text, 4, 0x70485973u);
    check_bad_input(read_7x5(path, &st), &st, path, "unexpected end of file");
}

// An index at or past the PLTE's entry count was read as black without a word (libpng's
// palette is zero-filled to 256): the image is refused with the largest index and the
// entry count. The bad index sits in each case where libpng's own check (which skips a
// row's last byte) misses it: the last pixel of a row, a 1x1 image, an interlaced image.
static void palette_index_past_the_palette_is_refused(void) {
    char path[512];
    path_in(path, sizeof path, "palette_bad.png");
    struct { int bit_depth, entries, interlace, x, y, index; const char *want; } cases[] = {
        {8, 16, PNG_INTERLACE_NONE, W - 1, 0, 16, "pixel index 16 is past the palette's 16 "
                                                  "entries (indices 0 to 15)"},
        {4, 5, PNG_INTERLACE_ADAM7, W - 1, H - 1, 12, "pixel index 12 is past the palette's 5 "
                                                     "entries"},
        {1, 1, PNG_INTERLACE_NONE, 3, 2, 1, "pixel index 1 is past the palette's 1 entry "
                                            "(indices 0 to 0)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TestImage im = {0};
        make_palette(&im, cases[i].bit_depth, 0);
        im.interlace = cases[i].interlace;
        im.palette_count = cases[i].entries;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) *sample_at(&im, x, y) %= (unsigned)cases[i].entries;
        *sample_at(&im, cases[i].x, cases[i].y) = (unsigned)cases[i].index;
        CHECK_INT_EQ(write_png(path, &im), 0);
        image_free(&im);
        Status st;
        check_bad_input(read_7x5(path, &st), &st, path, cases[i].want);
        CHECK_CONTAINS(st.message, "cannot decode PNG");
        CHECK_CONTAINS(st.hint, "damaged");
        float rgb[3 * W * H];
        status_clear(&st);
        check_bad_input(png_read_sample(path, 3, H, W, rgb, &st), &st, path, cases[i].want);
        // The header alone is fine: a streamed dataset finds this when the batch comes.
        int width = 0, height = 0;
        status_clear(&st);
        CHECK_INT_EQ(png_read_size(path, &width, &height, &st), 0);
    }
}

// Out of host memory while decoding (rc -2, which libpng's and libjpeg's wrappers return):
// the path, bytes from the disk, is printed escaped like any other.
static void out_of_memory_names_the_path_escaped(void) {
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(image_decode_failed("pets/x\x1b[31m\xff.png", -2, "PNG", "libpng", "", &st),
                 STATUS_RUNTIME_ERROR);
    CHECK_CONTAINS(st.message, "out of host memory decoding pets/x\\x1b[31m\\xff.png");
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/trainer-test-png-XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    every_format_decodes_exactly();
    size_mismatch_names_both_sizes();
    unsupported_channel_count_is_refused();
    missing_file_and_folder_are_named();
    not_a_png_is_named_before_libpng();
    truncated_png_reports_libpng_message();
    damaged_chunks_report_libpng_message();
    ancillary_chunks_are_skipped_unread();
    palette_index_past_the_palette_is_refused();
    out_of_memory_names_the_path_escaped();

    const char *names[] = {"gray8.png", "gray16.png", "gray1.png", "gray2.png", "gray4.png",
                           "gray8_trns.png", "gray_alpha.png", "rgb8.png", "rgba8.png",
                           "rgb16.png", "rgba16.png", "rgb8_adam7.png", "gray8_adam7.png",
                           "palette8_trns.png", "palette2.png", "palette4_trns.png", "size.png",
                           "channels.png", "text.png", "cut.png", "damaged.png",
                           "chunks.png", "palette1.png", "palette8_adam7.png",
                           "palette_bad.png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        path_in(path, sizeof path, names[i]);
        unlink(path);
    }
    CHECK_INT_EQ(rmdir(tmp_root), 0);
    return test_exit_code("test_png");
}
