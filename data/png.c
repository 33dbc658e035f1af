// PNG images through libpng, for `trainer predict` and image-folder datasets.
//
// libpng reports errors by calling an error function and then longjmp-ing back to the
// setjmp in png_jmpbuf. We keep that dance in one small function, decode(), whose only
// state lives in a PngJob owned by its caller: no local of the function that calls
// setjmp is modified between setjmp and a longjmp, so none needs to be volatile, and the
// caller frees whatever the job holds (rows, libpng structs, the FILE) on either path.
//
// The file is user input. Before libpng sees it we check it exists, is a file and starts
// with the 8-byte PNG signature (so a JPEG gets "not a PNG", not a libpng message), and
// we compare the header's size with the model's before any pixel is decoded, so a
// forged header cannot make us allocate more than the model's own sample.
#define _POSIX_C_SOURCE 200809L

#include "data/image.h"

#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct PngJob {
    const char *path;
    FILE *file;
    png_structp png;
    png_infop info;
    char error[256];           // libpng's message for the failure that longjmp-ed
    png_uint_32 width, height; // from the header
    int want_width, want_height;  // <= 0: read the header only, unless any_size
    int any_size;              // decode any size up to IMAGE_MAX_PIXELS (png_decode)
    int size_matches;
    int samples;               // samples per pixel after the transforms: 1 to 4
    unsigned char *pixels;     // height rows of width * samples bytes
    png_bytep *rows;
    int palette;               // colour type 3: rows hold one index a byte, see expand_palette
    unsigned char *indices;    // a palette image's rows before expand_palette
    int largest_index, palette_entries;  // for a palette image whose index runs past PLTE
} PngJob;

static void on_png_error(png_structp png, png_const_charp message) {
    PngJob *job = png_get_error_ptr(png);
    snprintf(job->error, sizeof job->error, "%s",
             message && message[0] ? message : "unknown error");
    png_longjmp(png, 1);
}

// Library code never prints; warnings (a bad ancillary chunk, an odd ICC profile) do not
// stop the image from being read, so they are dropped.
static void on_png_warning(png_structp png, png_const_charp message) {}

// Our own reader, so that a cut-short file says so instead of libpng's "Read Error".
static void read_bytes(png_structp png, png_bytep data, size_t length) {
    PngJob *job = png_get_io_ptr(png);
    if (fread(data, 1, length, job->file) == length) return;
    png_error(png, ferror(job->file) ? "read error" : "unexpected end of file");
}

static const char *other_format(const unsigned char *sig, size_t n) {
    if (n >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF)
        return "; it looks like a JPEG";
    if (n >= 4 && memcmp(sig, "GIF8", 4) == 0) return "; it looks like a GIF";
    if (n >= 2 && memcmp(sig, "BM", 2) == 0) return "; it looks like a BMP";
    return "";
}

// Opens the file, checks the signature and creates libpng's structs.
static int open_png(PngJob *job, Status *st) {
    struct stat sb;
    if (stat(job->path, &sb) != 0) {
        int err = errno;
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0, "cannot open: %s", strerror(err));
        status_hint(st, err == ENOENT ? "check the path" : "check the file's permissions");
        return STATUS_BAD_INPUT;
    }
    if (S_ISDIR(sb.st_mode)) {
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0,
                       "cannot read: is a directory, expected a PNG image");
        status_hint(st, "pass the image files themselves, e.g. DIR/*.png");
        return STATUS_BAD_INPUT;
    }
    // A FIFO or a device would block the read or never end: only regular files, opened
    // without blocking in case the path changed since the stat.
    int fd = S_ISREG(sb.st_mode) ? open(job->path, O_RDONLY | O_NONBLOCK) : -1;
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        fd = -1;
        errno = 0;
    }
    if (fd < 0 && (errno == 0 || !S_ISREG(sb.st_mode))) {
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0,
                       "cannot read: not a regular file, expected a PNG image");
        status_hint(st, "pass a regular file (a FIFO or a device could block or never end)");
        return STATUS_BAD_INPUT;
    }
    job->file = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!job->file) {
        if (fd >= 0) close(fd);
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0, "cannot open: %s", strerror(errno));
        status_hint(st, "check the file's permissions");
        return STATUS_BAD_INPUT;
    }
    unsigned char sig[8];
    size_t n = fread(sig, 1, sizeof sig, job->file);
    if (n < sizeof sig || png_sig_cmp(sig, 0, sizeof sig) != 0) {
        if (n < sizeof sig)
            status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0,
                           "not a PNG file: only %zu bytes long, shorter than the PNG signature",
                           n);
        else
            status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0,
                           "not a PNG file: it does not start with the PNG signature%s",
                           other_format(sig, n));
        status_hint(st, "convert the image to PNG first, e.g. `convert IMAGE out.png` "
                        "(ImageMagick)");
        return STATUS_BAD_INPUT;
    }
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_png_error, on_png_warning);
    if (job->png) job->info = png_create_info_struct(job->png);
    if (!job->png || !job->info) return status_out_of_host_memory(st, 0, "creating libpng's state");
    png_set_read_fn(job->png, job, read_bytes);
    png_set_sig_bytes(job->png, (int)sizeof sig);
    // Every ancillary chunk (text, ICC profile, gamma, ...) is skipped unread: we use none,
    // and libpng allocates a text chunk's claimed length before reading it (a 49-byte file
    // claiming a 1.9 GB zTXt made it ask for 1.9 GB; its 8 MB chunk limit is only a warning).
    // Skipped chunks are read through a small buffer, so a lying length just runs into the
    // end of the file. IHDR, PLTE, tRNS, IDAT and IEND are still libpng's.
    png_set_keep_unknown_chunks(job->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    return 0;
}

// A palette image's indices (one a byte) to RGB, or RGBA when it has tRNS, as
// png_set_expand would make them. libpng 1.6.39 reads an index past the PLTE's entries as
// black (its palette is zero-filled to 256) and only warns; its own count of the largest
// index (png_get_palette_max) is taken after png_set_expand has already replaced the
// indices, and even without it skips each row's last byte. So we expand ourselves, after
// looking at every index. Returns 0, -2 out of memory or -3 an index past the palette.
static int expand_palette(PngJob *job) {
    png_colorp palette = NULL;
    int entries = 0;
    png_get_PLTE(job->png, job->info, &palette, &entries);
    png_bytep alphas = NULL;
    int alpha_count = 0;
    if (!png_get_tRNS(job->png, job->info, &alphas, &alpha_count, NULL)) alpha_count = 0;
    size_t count = (size_t)job->width * job->height;
    int largest = 0;
    for (size_t i = 0; i < count; i++)
        if (job->indices[i] > largest) largest = job->indices[i];
    if (largest >= entries) {
        job->largest_index = largest;
        job->palette_entries = entries;
        return -3;
    }
    job->samples = alpha_count > 0 ? 4 : 3;
    job->pixels = malloc(count * (size_t)job->samples);
    if (!job->pixels) return -2;
    for (size_t i = 0; i < count; i++) {
        int index = job->indices[i];
        unsigned char *px = job->pixels + i * (size_t)job->samples;
        px[0] = palette[index].red;
        px[1] = palette[index].green;
        px[2] = palette[index].blue;
        if (job->samples == 4) px[3] = index < alpha_count ? alphas[index] : 255;
    }
    return 0;
}

// Reads the header and, when the size is the wanted one, every row as 8-bit samples.
// Returns 0 (check job->size_matches), -1 after a libpng error (message in job->error),
// -2 out of memory or -3 a palette index past the palette. The only setjmp in this file;
// see the top of the file.
static int decode(PngJob *job) {
    if (setjmp(png_jmpbuf(job->png))) return -1;
    png_read_info(job->png, job->info);
    job->width = png_get_image_width(job->png, job->info);
    job->height = png_get_image_height(job->png, job->info);
    int fits = job->want_width > 0 ? job->width == (png_uint_32)job->want_width &&
                                         job->height == (png_uint_32)job->want_height
                                   : job->any_size && (long long)job->width * job->height <=
                                                          IMAGE_MAX_PIXELS;
    if (!fits) return 0;
    job->size_matches = 1;
    // Gray below 8 bits -> 8 bits, tRNS -> an alpha channel; 16 bits -> 8 by scaling
    // (v * 255 / 65535, rounded), not by dropping the low byte. A palette image's indices
    // are unpacked to a byte each, for expand_palette.
    job->palette = png_get_color_type(job->png, job->info) == PNG_COLOR_TYPE_PALETTE;
    if (job->palette) png_set_packing(job->png);
    else png_set_expand(job->png);
    png_set_scale_16(job->png);
    png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);
    job->samples = png_get_channels(job->png, job->info);
    size_t row_bytes = png_get_rowbytes(job->png, job->info);
    if (png_get_bit_depth(job->png, job->info) != 8 || job->samples < 1 || job->samples > 4 ||
        row_bytes != (size_t)job->width * (size_t)job->samples)
        png_error(job->png, "unexpected pixel layout after conversion to 8 bits");
    unsigned char *image = malloc(row_bytes * job->height);
    if (job->palette) job->indices = image;
    else job->pixels = image;
    job->rows = malloc(job->height * sizeof *job->rows);
    if (!image || !job->rows) return -2;
    for (png_uint_32 y = 0; y < job->height; y++) job->rows[y] = image + y * row_bytes;
    png_read_image(job->png, job->rows);
    // Read to IEND too, so damage after the pixels (a bad CRC, a cut) is not let through.
    png_read_end(job->png, NULL);
    return job->palette ? expand_palette(job) : 0;
}

static void close_png(PngJob *job) {
    if (job->png) png_destroy_read_struct(&job->png, job->info ? &job->info : NULL, NULL);
    if (job->file) fclose(job->file);
    free(job->rows);
    free(job->pixels);
    free(job->indices);
}

static int decode_failed(const PngJob *job, int rc, Status *st) {
    if (rc == -3) {
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0,
                       "cannot decode PNG: pixel index %d is past the palette's %d %s "
                       "(indices 0 to %d)", job->largest_index, job->palette_entries,
                       job->palette_entries == 1 ? "entry" : "entries",
                       job->palette_entries - 1);
        status_hint(st, "the file is damaged or its writer is faulty (libpng would read "
                        "those pixels as black); export or download it again");
        return STATUS_BAD_INPUT;
    }
    return image_decode_failed(job->path, rc, "PNG", "libpng", job->error, st);
}

static ImagePixels pixels_of(const PngJob *job) {
    return (ImagePixels){(int)job->width, (int)job->height, job->samples, job->pixels};
}

int png_read_sample(const char *path, int channels, int height, int width, float *out,
                    Status *st) {
    if (channels != 1 && channels != 3) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "a PNG image gives 1 (gray) or 3 (RGB) channels, but the model takes %d",
                       channels);
        status_hint(st, "use a model whose input is 1xHxW or 3xHxW");
        return STATUS_BAD_INPUT;
    }
    PngJob job = {.path = path, .want_width = width, .want_height = height};
    int rc = open_png(&job, st);
    if (!rc) {
        int decoded = decode(&job);
        if (decoded) {
            rc = decode_failed(&job, decoded, st);
        } else if (!job.size_matches) {
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                           "image is %lux%lu pixels (WxH), but the model takes %dx%d",
                           (unsigned long)job.width, (unsigned long)job.height, width, height);
            status_hint(st, "resize the image to %dx%d, e.g. `convert IMAGE -resize %dx%d! "
                            "out.png`", width, height, width, height);
            rc = STATUS_BAD_INPUT;
        } else {
            ImagePixels image = pixels_of(&job);
            image_to_planes(&image, channels, out);
        }
    }
    close_png(&job);
    return rc;
}

int png_read_size(const char *path, int *width, int *height, Status *st) {
    PngJob job = {.path = path};
    int rc = open_png(&job, st);
    if (!rc) {
        int decoded = decode(&job);
        if (decoded) rc = decode_failed(&job, decoded, st);
        else if (job.width > 0x7fffffff || job.height > 0x7fffffff) {
            // libpng's own limit (1,000,000) stops this first; kept so the casts are safe.
            status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "image is too large");
            status_hint(st, "resize the image");
            rc = STATUS_BAD_INPUT;
        } else {
            *width = (int)job.width;
            *height = (int)job.height;
        }
    }
    close_png(&job);
    return rc;
}

int png_decode(const char *path, int width, int height, ImagePixels *out, Status *st) {
    PngJob job = {.path = path, .want_width = width, .want_height = height,
                  .any_size = width <= 0};
    memset(out, 0, sizeof *out);
    int rc = open_png(&job, st);
    if (!rc) {
        int decoded = decode(&job);
        if (decoded) {
            rc = decode_failed(&job, decoded, st);
        } else {
            *out = pixels_of(&job);  // libpng's limit (1,000,000 a side) keeps the casts safe
            job.pixels = NULL;       // the caller's now
        }
    }
    close_png(&job);
    return rc;
}
