// An RGB raster for `trainer plot`: filled rectangles, thick lines, text in the 5x7 font
// (data/plot_font.h), and the finished image written as a PNG through libpng.
#ifndef TRAINER_PLOT_RASTER_H
#define TRAINER_PLOT_RASTER_H

#include <stdint.h>

#include "base/status.h"

typedef struct Rgb {
    uint8_t r, g, b;
} Rgb;

typedef struct Raster {
    int width, height;
    uint8_t *pixels;  // rows top first, 3 bytes per pixel
} Raster;

int raster_init(Raster *raster, int width, int height, Rgb background, Status *st);
void raster_free(Raster *raster);
// Everything below clips to the raster: drawing off its edge is not an error.
void raster_fill_rect(Raster *raster, int x, int y, int width, int height, Rgb color);
// A line `thickness` pixels wide from (x0, y0) to (x1, y1), both ends included.
void raster_line(Raster *raster, int x0, int y0, int x1, int y1, int thickness, Rgb color);
// Text with its top-left corner at (x, y), each font pixel drawn as scale x scale.
void raster_text(Raster *raster, int x, int y, const char *text, int scale, Rgb color);
int raster_text_width(const char *text, int scale);
int raster_text_height(int scale);
int raster_write_png(const Raster *raster, const char *path, Status *st);

#endif
