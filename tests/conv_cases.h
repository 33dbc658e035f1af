// Convolution shapes shared by tests/unit/test_conv.c (CPU fast path vs reference) and
// tests/gpu/test_cuda_parity_conv_pool.c (CUDA vs CPU): the case record, the geometry it describes,
// and the runs of cases both lists hold. Each test lists its cases in its own order and
// adds its own, splicing these runs in where they belong.
#ifndef TRAINER_TESTS_CONV_CASES_H
#define TRAINER_TESTS_CONV_CASES_H

#include "kernels/backend.h"

typedef struct ConvCase {
    int n, c, h, w;         // input
    int f, kh, kw;          // filters and kernel
    int sh, sw;             // stride
    int ph, pw;             // padding, top/left (and bottom/right unless same)
    int dh, dw;             // dilation
    int groups;
    int same;               // pad=same: derived padding, the odd extra at the bottom/right
    int bias;
} ConvCase;

// Rows of a `ConvCase[]` initializer:
//  n  c   h   w   f  kh kw sh sw ph pw dh dw g same bias

// Batch 1, strides, padding, dilation and groups.
#define CONV_CASES_BASIC                                                                   \
    {2, 1, 28, 28, 4, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 1},   /* LeNet's first layer, small */ \
    {3, 8, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1, 1, 1, 1},  /* LeNet's second, pad=same */   \
    {1, 3, 7, 7, 5, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 1},     /* batch 1 */                    \
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0},     /* the smallest convolution */   \
    {5, 3, 9, 11, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 1},    /* stride 2, odd non-square */   \
    {2, 2, 13, 10, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 0, 1},   /* stride 3 */                   \
    {3, 2, 10, 9, 3, 3, 2, 3, 2, 0, 1, 1, 1, 1, 0, 1},    /* stride 3x2, kernel 3x2 */     \
    {2, 3, 12, 12, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1, 0, 1},   /* dilation 2 */                 \
    {2, 2, 11, 9, 3, 3, 3, 1, 1, 0, 0, 2, 2, 1, 1, 1},    /* dilation 2, pad=same */       \
    {2, 2, 9, 13, 3, 3, 3, 2, 1, 1, 2, 2, 3, 1, 0, 0},    /* dilation 2x3, stride 2x1 */   \
    {2, 4, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, 0, 1},     /* groups 2 */                   \
    {3, 6, 7, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 3, 0, 1},     /* groups 3, stride 2 */         \
    {2, 4, 10, 10, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, 1},   /* depthwise */                  \
    {2, 5, 9, 7, 10, 3, 3, 1, 1, 0, 0, 1, 1, 5, 1, 0}     /* depthwise, multiplier 2, same */

// Even kernels with pad=same: the extra padding row/column goes at the bottom/right.
#define CONV_CASES_EVEN_SAME                                                               \
    {2, 2, 8, 6, 3, 4, 4, 1, 1, 0, 0, 1, 1, 1, 1, 1},     /* even kernel, pad=same */      \
    {2, 2, 7, 9, 3, 2, 4, 1, 1, 0, 0, 1, 1, 1, 1, 1}      /* even non-square kernel */

// Kernels as large as or larger than the input, wide padding, odd everything, batch 7
// (on the CPU, im2col chunks split unevenly).
#define CONV_CASES_EDGES                                                                   \
    {2, 2, 5, 5, 3, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 1},     /* kernel == input: 1x1 out */   \
    {2, 2, 3, 3, 3, 5, 5, 1, 1, 1, 1, 1, 1, 1, 0, 1},     /* kernel > input, padded */     \
    {2, 2, 4, 4, 2, 3, 3, 1, 1, 3, 3, 1, 1, 1, 0, 1},     /* padding past kernel reach */  \
    {3, 3, 17, 19, 7, 3, 5, 2, 3, 1, 2, 1, 1, 1, 0, 1},   /* odd everything */             \
    {7, 1, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1}      /* batch 7 */

// The geometry a case describes; pad=same as core/layers/conv2d.c derives it: (span - 1)
// / 2 before, the rest after, so the output keeps the input's size.
static inline Conv2dGeometry conv_case_geometry(const ConvCase *c) {
    Conv2dGeometry g = {.batch = c->n, .in_channels = c->c, .in_h = c->h, .in_w = c->w,
                        .out_channels = c->f, .kernel_h = c->kh, .kernel_w = c->kw,
                        .stride_h = c->sh, .stride_w = c->sw, .pad_top = c->ph,
                        .pad_left = c->pw, .dilation_h = c->dh, .dilation_w = c->dw,
                        .groups = c->groups};
    int span_h = c->dh * (c->kh - 1) + 1, span_w = c->dw * (c->kw - 1) + 1;
    if (c->same) {
        g.pad_top = (span_h - 1) / 2;
        g.pad_left = (span_w - 1) / 2;
        g.out_h = c->h;
        g.out_w = c->w;
    } else {
        g.out_h = (c->h + 2 * c->ph - span_h) / c->sh + 1;
        g.out_w = (c->w + 2 * c->pw - span_w) / c->sw + 1;
    }
    return g;
}

#endif
