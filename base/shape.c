#include "base/shape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Shape shape_make1(int n) { return (Shape){.rank = 1, .dims = {n}}; }
Shape shape_make3(int c, int h, int w) { return (Shape){.rank = 3, .dims = {c, h, w}}; }

size_t shape_numel(const Shape *s) {
    size_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
    return n;
}

int shape_equal(const Shape *a, const Shape *b) {
    if (a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

const char *shape_format(const Shape *s, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->rank && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? "x%d" : "%d", s->dims[i]);
    if (s->rank == 0) snprintf(buf, size, "(scalar)");
    return buf;
}

int shape_parse(const char *text, Shape *out, char *why, size_t why_size) {
    Shape s = {0};
    const char *p = text;
    size_t total = 1;
    if (!*p) {
        snprintf(why, why_size, "empty shape");
        return -1;
    }
    while (*p) {
        if (s.rank == SHAPE_MAX_RANK) {
            snprintf(why, why_size, "more than %d dimensions", SHAPE_MAX_RANK);
            return -1;
        }
        if (*p < '0' || *p > '9') {
            snprintf(why, why_size, "expected a number at '%.20s'", p);
            return -1;
        }
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || v <= 0 || v > (1L << 24)) {
            snprintf(why, why_size, "dimension %.*s must be between 1 and %ld", (int)(end - p), p,
                     1L << 24);
            return -1;
        }
        total *= (size_t)v;
        if (total > (1UL << 31)) {
            snprintf(why, why_size, "more than 2^31 elements per sample");
            return -1;
        }
        s.dims[s.rank++] = (int)v;
        p = end;
        if (*p == 'x') {
            p++;
            if (!*p) {
                snprintf(why, why_size, "shape ends with 'x'");
                return -1;
            }
        } else if (*p) {
            snprintf(why, why_size, "unexpected '%c'; write dimensions as CxHxW", *p);
            return -1;
        }
    }
    *out = s;
    return 0;
}
