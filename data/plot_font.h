// A 5x7 bitmap font for the labels of `trainer plot`: ASCII letters, digits and the
// punctuation numbers need.
#ifndef TRAINER_PLOT_FONT_H
#define TRAINER_PLOT_FONT_H

#include <stdint.h>

enum { FONT_WIDTH = 5, FONT_HEIGHT = 7 };

// FONT_HEIGHT rows, top first; bit FONT_WIDTH - 1 - x is column x.
const uint8_t *font_glyph(char character);

#endif
