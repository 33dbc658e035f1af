#include "data/plot_raster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "data/plot_font.h"

int raster_init(Raster *raster, int width, int height, Rgb background, Status *st) {
    raster->width = width;
    raster->height = height;
    raster->pixels = malloc((size_t)width * (size_t)height * 3);
    if (!raster->pixels)
        return status_out_of_host_memory(st, (size_t)width * (size_t)height * 3,
                                         "for a %dx%d image", width, height);
    raster_fill_rect(raster, 0, 0, width, height, background);
    return 0;
}

void raster_free(Raster *raster) {
    free(raster->pixels);
    raster->pixels = NULL;
}

// Clipped once, and one row filled then copied down: the background alone is 800,000
// pixels an image (checking each against the edges took most of a plot's drawing time). The
// ends are summed in long so that no rectangle's end overflows an int.
void raster_fill_rect(Raster *raster, int x, int y, int width, int height, Rgb color) {
    long left = x > 0 ? x : 0, top = y > 0 ? y : 0;
    long right = (long)x + width < raster->width ? (long)x + width : raster->width;
    long bottom = (long)y + height < raster->height ? (long)y + height : raster->height;
    if (left >= right || top >= bottom) return;
    size_t stride = (size_t)raster->width * 3, bytes = (size_t)(right - left) * 3;
    uint8_t *first = raster->pixels + (size_t)top * stride + (size_t)left * 3;
    for (size_t i = 0; i < bytes; i += 3) {
        first[i] = color.r;
        first[i + 1] = color.g;
        first[i + 2] = color.b;
    }
    for (long row = top + 1; row < bottom; row++)
        memcpy(first + (size_t)(row - top) * stride, first, bytes);
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

// Written by data/png_write.c, the library's one PNG writer; only the hint is the plot's.
int raster_write_png(const Raster *raster, const char *path, Status *st) {
    int rc = image_write_png(path, 3, raster->height, raster->width, raster->pixels, st);
    if (rc == STATUS_BAD_INPUT)
        status_hint(st, "choose an -o path in a directory you can write to");
    return rc;
}
