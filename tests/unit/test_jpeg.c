// JPEG reader (data/jpeg.c), resizing (data/image.c) and stratified limits (data/dataset.c).
// JPEGs are written here with libjpeg itself, under a fresh /tmp folder: gray, colour,
// progressive and Adobe CMYK decode; a 12-bit, a cut-short and a non-image file are
// STATUS_BAD_INPUT naming the file; a PNG of a JPEG's own decoded pixels reads the same
// sample as the JPEG; resizing keeps constants and interpolates between pixel centres; a
// stratified limit and validation split keep each class's share. image_read_bytes gives
// image_read_sample's values as bytes.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset.h"
#include "data/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include <jpeglib.h>

static char tmp_root[256];

static const char *tmp_path(const char *name, char *out, size_t size) {
    snprintf(out, size, "%s/%s", tmp_root, name);
    return out;
}

// Writes a width x height JPEG of `components` (1 gray, 3 RGB, 4 CMYK with libjpeg's Adobe
// marker) from interleaved `pixels`.
static void write_jpeg(const char *path, int width, int height, int components,
                       const unsigned char *pixels, int quality, int progressive) {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr errors;
    c.err = jpeg_std_error(&errors);
    jpeg_create_compress(&c);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)width;
    c.image_height = (JDIMENSION)height;
    c.input_components = components;
    c.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    if (progressive) jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)c.next_scanline * width * components);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
}

static unsigned char *gradient(int width, int height, int components) {
    unsigned char *p = malloc((size_t)width * height * components);
    for (int i = 0; i < width * height * components; i++)
        p[i] = (unsigned char)((i * 7 + (i / (width * components)) * 13) % 256);
    return p;
}

static void check_refused(int rc, const Status *st, const char *path, const char *words) {
    CHECK_INT_EQ(rc, STATUS_BAD_INPUT);
    CHECK(strcmp(st->file, path) == 0);
    CHECK_CONTAINS(st->message, words);
    CHECK(st->hint[0] != '\0');
}

// A gray JPEG at quality 100 decodes close to what was written; RGB and progressive too.
static void jpeg_decodes_near_what_was_written(void) {
    char path[512];
    const int W = 16, H = 8;
    unsigned char *flat = malloc(W * H * 3);
    for (int i = 0; i < W * H * 3; i++) flat[i] = (unsigned char)(40 + (i % 3) * 60);
    for (int progressive = 0; progressive <= 1; progressive++) {
        write_jpeg(tmp_path("rgb.jpg", path, sizeof path), W, H, 3, flat, 100, progressive);
        float out[3 * 16 * 8];
        Status st;
        status_clear(&st);
        CHECK_INT_EQ(image_read_sample(path, 3, H, W, 0, out, &st), 0);
        for (int c = 0; c < 3; c++) CHECK_NEAR(out[c * W * H + 5], (40 + c * 60) / 255.0f, 0.02);
        int width = 0, height = 0;
        CHECK_INT_EQ(image_read_size(path, &width, &height, &st), 0);
        CHECK_INT_EQ(width, W);
        CHECK_INT_EQ(height, H);
    }
    free(flat);
}

// Adobe's CMYK is stored inverted (255: no ink): such a file of all 255 is white, and
// C = 255 (full cyan, inverted 0) with no black gives R = 0, G = B = 1.
static void adobe_cmyk_reads_as_rgb(void) {
    char path[512];
    const int W = 8, H = 8;
    unsigned char cmyk[8 * 8 * 4];
    for (int i = 0; i < W * H; i++) {
        cmyk[4 * i + 0] = 0;  // inverted: full cyan
        cmyk[4 * i + 1] = cmyk[4 * i + 2] = cmyk[4 * i + 3] = 255;
    }
    write_jpeg(tmp_path("cmyk.jpg", path, sizeof path), W, H, 4, cmyk, 100, 0);
    float out[3 * 8 * 8];
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(image_read_sample(path, 3, H, W, 0, out, &st), 0);
    CHECK_NEAR(out[0], 0.0f, 0.02);
    CHECK_NEAR(out[W * H], 1.0f, 0.02);
    CHECK_NEAR(out[2 * W * H], 1.0f, 0.02);
}

// The PNG of a JPEG's own decoded pixels gives the same sample, exactly: the decoders
// differ, the values do not.
static void png_of_jpeg_pixels_reads_the_same(void) {
    char jpg[512], png[512];
    const int W = 20, H = 12;
    for (int components = 1; components <= 3; components += 2) {
        unsigned char *pixels = gradient(W, H, components);
        write_jpeg(tmp_path("same.jpg", jpg, sizeof jpg), W, H, components, pixels, 75, 0);
        Status st;
        status_clear(&st);
        ImagePixels decoded;
        CHECK_INT_EQ(image_decode(jpg, W, H, &decoded, &st), 0);
        CHECK(decoded.pixels != NULL);
        CHECK_INT_EQ(decoded.samples, components);
        CHECK_INT_EQ(image_write_png(tmp_path("same.png", png, sizeof png), components, H, W,
                                     decoded.pixels, &st), 0);
        for (int channels = 1; channels <= 3; channels += 2) {
            float a[3 * 20 * 12], b[3 * 20 * 12];
            CHECK_INT_EQ(image_read_sample(jpg, channels, 6, 10, 1, a, &st), 0);
            CHECK_INT_EQ(image_read_sample(png, channels, 6, 10, 1, b, &st), 0);
            CHECK(memcmp(a, b, sizeof(float) * channels * 60) == 0);
            // The bytes a dataset keeps are those values times 255, at the size and resized.
            for (int resize = 0; resize <= 1; resize++) {
                int h = resize ? 6 : H, w = resize ? 10 : W;
                float scratch[3 * 20 * 12];
                uint8_t bytes[3 * 20 * 12];
                CHECK_INT_EQ(image_read_sample(jpg, channels, h, w, resize, a, &st), 0);
                CHECK_INT_EQ(image_read_bytes(jpg, channels, h, w, resize, scratch, bytes, &st),
                             0);
                int same = 1;
                for (int i = 0; i < channels * h * w; i++)
                    same &= bytes[i] == (uint8_t)lrintf(a[i] * 255.0f);
                CHECK(same);
            }
        }
        free(decoded.pixels);
        free(pixels);
    }
}

static void twelve_bit_cut_and_garbage_are_refused(void) {
    char path[512];
    unsigned char *pixels = gradient(8, 8, 1);
    write_jpeg(tmp_path("good.jpg", path, sizeof path), 8, 8, 1, pixels, 90, 0);
    free(pixels);
    FILE *f = fopen(path, "rb");
    unsigned char bytes[4096];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    float out[64];
    Status st;
    // The SOF0 marker's precision byte set to 12.
    char twelve[512];
    for (size_t i = 0; i + 4 < n; i++)
        if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) {
            unsigned char copy[4096];
            memcpy(copy, bytes, n);
            copy[i + 4] = 12;
            f = fopen(tmp_path("twelve.jpg", twelve, sizeof twelve), "wb");
            fwrite(copy, 1, n, f);
            fclose(f);
            break;
        }
    status_clear(&st);
    check_refused(image_read_sample(twelve, 1, 8, 8, 0, out, &st), &st, twelve, "12-bit");
    char cut[512];
    f = fopen(tmp_path("cut.jpg", cut, sizeof cut), "wb");
    fwrite(bytes, 1, n * 2 / 3, f);
    fclose(f);
    status_clear(&st);
    check_refused(image_read_sample(cut, 1, 8, 8, 0, out, &st), &st, cut, "cannot decode JPEG");
    char other[512];
    f = fopen(tmp_path("gif.jpg", other, sizeof other), "wb");
    fputs("GIF89a not an image", f);
    fclose(f);
    status_clear(&st);
    check_refused(image_read_sample(other, 1, 8, 8, 0, out, &st), &st, other, "looks like a GIF");
    status_clear(&st);
    check_refused(image_read_sample(path, 1, 4, 4, 0, out, &st), &st, path, "takes 4x4");
    CHECK_CONTAINS(st.hint, "--resize model");
}

// Upscaling 1x2 -> 1x4 interpolates between pixel centres; a constant stays constant
// shrinking by any factor.
static void resize_interpolates_and_keeps_constants(void) {
    Status st;
    status_clear(&st);
    float in[2] = {0.0f, 1.0f}, out[4];
    CHECK_INT_EQ(image_resize(in, 1, 1, 2, out, 1, 4, &st), 0);
    CHECK_NEAR(out[0], 0.0f, 1e-6);
    CHECK_NEAR(out[1], 0.25f, 1e-6);
    CHECK_NEAR(out[2], 0.75f, 1e-6);
    CHECK_NEAR(out[3], 1.0f, 1e-6);
    float flat[37 * 23], small[5 * 7];
    for (int i = 0; i < 37 * 23; i++) flat[i] = 0.4f;
    CHECK_INT_EQ(image_resize(flat, 1, 37, 23, small, 5, 7, &st), 0);
    for (int i = 0; i < 35; i++) CHECK_NEAR(small[i], 0.4f, 1e-6);
}

static void stratified_limit_keeps_class_shares(void) {
    Dataset ds = {0};
    ds.count = 100;
    ds.channels = ds.height = ds.width = 1;
    ds.images = malloc(100);
    ds.labels = malloc(100);
    for (int i = 0; i < 100; i++) {
        ds.labels[i] = (uint8_t)(i < 50 ? 0 : i < 80 ? 1 : 2);  // sorted by class
        ds.images[i] = (uint8_t)i;
    }
    Status st;
    status_clear(&st);
    int cut = 0;
    CHECK_INT_EQ(dataset_limit(&ds, 15, LIMIT_STRATIFIED, 1, &cut, &st), 0);
    CHECK_INT_EQ(cut, 1);
    CHECK_INT_EQ(ds.count, 15);
    int per_class[3] = {0};
    for (int i = 0; i < ds.count; i++) {
        per_class[ds.labels[i]]++;
        CHECK(ds.labels[i] == (ds.images[i] < 50 ? 0 : ds.images[i] < 80 ? 1 : 2));
        if (i) CHECK(ds.images[i] > ds.images[i - 1]);  // dataset order kept
    }
    // Exact shares 7.5, 4.5 and 3: 8 or 7, 5 or 4, 3, summing to 15.
    CHECK(per_class[0] == 7 || per_class[0] == 8);
    CHECK(per_class[1] == 4 || per_class[1] == 5);
    CHECK_INT_EQ(per_class[2], 3);
    CHECK(ds.images[ds.count - 1] >= 80);  // not the first 15, which are all class 0
    dataset_free(&ds);
}

// --val-split is stratified too: a fifth of 50/30/20 sorted samples holds out 10/6/4.
static void validation_split_keeps_class_shares(void) {
    Dataset train = {0}, val;
    train.count = 100;
    train.channels = train.height = train.width = 1;
    train.images = malloc(100);
    train.labels = malloc(100);
    for (int i = 0; i < 100; i++) {
        train.labels[i] = (uint8_t)(i < 50 ? 0 : i < 80 ? 1 : 2);
        train.images[i] = (uint8_t)i;
    }
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(dataset_split_off(&train, 0.2, 3, &val, &st), 0);
    int held[3] = {0};
    for (int i = 0; i < val.count; i++) held[val.labels[i]]++;
    CHECK_INT_EQ(held[0], 10);
    CHECK_INT_EQ(held[1], 6);
    CHECK_INT_EQ(held[2], 4);
    CHECK_INT_EQ(train.count, 80);
    dataset_free(&train);
    dataset_free(&val);
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "/tmp/trainer-test-jpeg-XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    jpeg_decodes_near_what_was_written();
    adobe_cmyk_reads_as_rgb();
    png_of_jpeg_pixels_reads_the_same();
    twelve_bit_cut_and_garbage_are_refused();
    resize_interpolates_and_keeps_constants();
    stratified_limit_keeps_class_shares();
    validation_split_keeps_class_shares();
    const char *names[] = {"rgb.jpg", "cmyk.jpg", "same.jpg", "same.png", "good.jpg",
                           "twelve.jpg", "cut.jpg", "gif.jpg"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unlink(tmp_path(names[i], path, sizeof path));
    rmdir(tmp_root);
    return test_exit_code("test_jpeg");
}
