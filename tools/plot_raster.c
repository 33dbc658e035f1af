#include "tools/plot_raster.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/plot_font.h"

int raster_init(Raster *raster, int width, int height, Rgb background, Status *st) {
    raster->width = width;
    raster->height = height;
    raster->pixels = malloc((size_t)width * (size_t)height * 3);
    if (!raster->pixels) return status_fail(st, STATUS_RUNTIME_ERROR, "out of host memory");
    raster_fill_rect(raster, 0, 0, width, height, background);
    return 0;
}

void raster_free(Raster *raster) {
    free(raster->pixels);
    raster->pixels = NULL;
}

static void set_pixel(Raster *raster, int x, int y, Rgb color) {
    if (x < 0 || y < 0 || x >= raster->width || y >= raster->height) return;
    uint8_t *p = raster->pixels + ((size_t)y * (size_t)raster->width + (size_t)x) * 3;
    p[0] = color.r;
    p[1] = color.g;
    p[2] = color.b;
}

void raster_fill_rect(Raster *raster, int x, int y, int width, int height, Rgb color) {
    for (int row = y; row < y + height; row++)
        for (int column = x; column < x + width; column++) set_pixel(raster, column, row, color);
}

// Bresenham's walk, stamping a thickness-wide square at each point so that steep and flat
// segments come out equally heavy.
void raster_line(Raster *raster, int x0, int y0, int x1, int y1, int thickness, Rgb color) {
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int step_x = x0 < x1 ? 1 : -1, step_y = y0 < y1 ? 1 : -1;
    int error = dx + dy, offset = thickness / 2;
    for (;;) {
        raster_fill_rect(raster, x0 - offset, y0 - offset, thickness, thickness, color);
        if (x0 == x1 && y0 == y1) return;
        int twice = 2 * error;
        if (twice >= dy) {
            error += dy;
            x0 += step_x;
        }
        if (twice <= dx) {
            error += dx;
            y0 += step_y;
        }
    }
}

// One column of space between characters.
static int advance(int scale) { return (FONT_WIDTH + 1) * scale; }

static void draw_glyph(Raster *raster, int x, int y, char character, int scale, Rgb color) {
    const uint8_t *rows = font_glyph(character);
    for (int row = 0; row < FONT_HEIGHT; row++)
        for (int column = 0; column < FONT_WIDTH; column++)
            if (rows[row] >> (FONT_WIDTH - 1 - column) & 1)
                raster_fill_rect(raster, x + column * scale, y + row * scale, scale, scale, color);
}

void raster_text(Raster *raster, int x, int y, const char *text, int scale, Rgb color) {
    for (; *text; text++, x += advance(scale)) draw_glyph(raster, x, y, *text, scale, color);
}

int raster_text_width(const char *text, int scale) {
    int length = (int)strlen(text);
    return length ? length * advance(scale) - scale : 0;
}

int raster_text_height(int scale) { return FONT_HEIGHT * scale; }

// libpng reports errors by longjmp-ing to the setjmp in png_jmpbuf; that dance stays in
// encode(), whose state lives in the caller's PngWrite, as data/png.c does for reading.
typedef struct PngWrite {
    const Raster *raster;
    FILE *file;
    png_structp png;
    png_infop info;
    char error[256];
} PngWrite;

static void on_png_error(png_structp png, png_const_charp message) {
    PngWrite *job = png_get_error_ptr(png);
    snprintf(job->error, sizeof job->error, "%s", message ? message : "unknown error");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp message) {}

static int encode(PngWrite *job) {
    if (setjmp(png_jmpbuf(job->png))) return 1;
    const Raster *raster = job->raster;
    png_init_io(job->png, job->file);
    png_set_IHDR(job->png, job->info, (png_uint_32)raster->width, (png_uint_32)raster->height, 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(job->png, job->info);
    for (int y = 0; y < raster->height; y++)
        png_write_row(job->png, raster->pixels + (size_t)y * (size_t)raster->width * 3);
    png_write_end(job->png, NULL);
    return 0;
}

int raster_write_png(const Raster *raster, const char *path, Status *st) {
    PngWrite job = {.raster = raster};
    job.file = fopen(path, "wb");
    if (!job.file) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot create the image: %s",
                       strerror(errno));
        status_hint(st, "choose an -o path in a directory you can write to");
        return STATUS_BAD_INPUT;
    }
    job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, on_png_error, on_png_warning);
    job.info = job.png ? png_create_info_struct(job.png) : NULL;
    int failed = !job.info || encode(&job);
    png_destroy_write_struct(job.png ? &job.png : NULL, job.info ? &job.info : NULL);
    if (fclose(job.file) != 0 && !failed) {
        failed = 1;
        snprintf(job.error, sizeof job.error, "%s", strerror(errno));
    }
    if (!failed) return 0;
    status_fail_at(st, STATUS_RUNTIME_ERROR, path, 0, 0, "cannot write the image: %s",
                   job.error[0] ? job.error : "libpng could not start");
    status_hint(st, "check the free space of the output's directory");
    return STATUS_RUNTIME_ERROR;
}
