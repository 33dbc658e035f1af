// PNG images written through libpng: `trainer data export` (data/dataset_export.c).
//
// As in data/png.c, libpng reports errors by longjmp-ing to the setjmp in png_jmpbuf;
// that dance stays in encode(), whose only state lives in the caller's PngWriteJob, so
// no local of encode() changes between setjmp and longjmp.
#define _POSIX_C_SOURCE 200809L

#include "data/image.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <string.h>

typedef struct PngWriteJob {
    FILE *file;
    png_structp png;
    png_infop info;
    int channels, height, width;
    const uint8_t *pixels;
    char error[256];  // libpng's message for the failure that longjmp-ed
} PngWriteJob;

static void on_write_error(png_structp png, png_const_charp message) {
    PngWriteJob *job = png_get_error_ptr(png);
    snprintf(job->error, sizeof job->error, "%s", message ? message : "unknown error");
    png_longjmp(png, 1);
}

// Library code never prints; libpng's warnings change nothing in what is written.
static void on_write_warning(png_structp png, png_const_charp message) {}

static int encode(PngWriteJob *job) {
    if (setjmp(png_jmpbuf(job->png))) return 1;
    png_init_io(job->png, job->file);
    png_set_IHDR(job->png, job->info, (png_uint_32)job->width, (png_uint_32)job->height, 8,
                 job->channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(job->png, job->info);
    size_t row = (size_t)job->width * (size_t)job->channels;
    for (int y = 0; y < job->height; y++)
        png_write_row(job->png, (png_const_bytep)(job->pixels + (size_t)y * row));
    png_write_end(job->png, NULL);
    return 0;
}

int image_write_png(const char *path, int channels, int height, int width,
                    const uint8_t *pixels, Status *st) {
    if ((channels != 1 && channels != 3) || height <= 0 || width <= 0)
        return status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot write a PNG of %d "
                              "channels and %dx%d pixels: 1 or 3 channels, at least 1x1",
                              channels, width, height);
    PngWriteJob job = {.channels = channels, .height = height, .width = width,
                       .pixels = pixels};
    job.file = fopen(path, "wb");
    if (!job.file) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot create the image: %s",
                       strerror(errno));
        status_hint(st, "write into a folder you can write to");
        return STATUS_BAD_INPUT;
    }
    job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, on_write_error,
                                      on_write_warning);
    job.info = job.png ? png_create_info_struct(job.png) : NULL;
    int failed = !job.info || encode(&job);
    png_destroy_write_struct(job.png ? &job.png : NULL, job.info ? &job.info : NULL);
    if (fclose(job.file) != 0 && !failed) {
        failed = 1;
        snprintf(job.error, sizeof job.error, "%s", strerror(errno));
    }
    if (!failed) return 0;
    remove(path);  // a cut-short PNG left behind would fail whoever reads the folder
    status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write the image: %s",
                   job.error[0] ? job.error : "libpng could not start");
    status_hint(st, "check the free space of the output's folder");
    return STATUS_RUNTIME_ERROR;
}
