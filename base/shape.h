// Per-sample shapes: `CxHxW` for images, `N` for feature vectors. The batch dimension
// is never part of a Shape; tensors add it in front.
#ifndef TRAINER_SHAPE_H
#define TRAINER_SHAPE_H

#include <stddef.h>

#define SHAPE_MAX_RANK 4

typedef struct Shape {
    int rank;
    int dims[SHAPE_MAX_RANK];
} Shape;

Shape shape_make1(int n);
Shape shape_make3(int c, int h, int w);
size_t shape_numel(const Shape *s);
int shape_equal(const Shape *a, const Shape *b);
// "1x28x28"; returns buf.
const char *shape_format(const Shape *s, char *buf, size_t size);
// Parses "N", "CxHxW", ... (1 to 4 positive dimensions, each <= 1<<24, product <= 1<<31).
// Returns 0 on success, -1 with a reason in `why` otherwise.
int shape_parse(const char *text, Shape *out, char *why, size_t why_size);

#endif
