// Direct 2-D convolution: the definition, written as loops, with double accumulation.
//
// Slow on purpose. Every output (or gradient) element is gathered from the elements that
// touch it, so each function reads like the formula it computes and shares no index
// arithmetic with the im2col path in cpu_conv2d.c, which the tests compare against it.
//
//   y[n][f][oh][ow] = bias[f] + sum_{c, i, j} w[f][c][i][j] * x[n][c0 + c][ih][iw],
//   ih = oh * stride_h - pad_top + i * dilation_h,  iw likewise,
//
// where c0 is the first input channel of f's group, and x is zero outside the input.
#include "kernels/cpu/cpu_ops.h"

// Offsets into NCHW tensors and the [F, C/groups, kh, kw] weights.
static size_t x_at(const Conv2dGeometry *g, int n, int c, int h, int w) {
    return (((size_t)n * g->in_channels + c) * g->in_h + h) * g->in_w + w;
}
static size_t y_at(const Conv2dGeometry *g, int n, int f, int h, int w) {
    return (((size_t)n * g->out_channels + f) * g->out_h + h) * g->out_w + w;
}
static size_t w_at(const Conv2dGeometry *g, int f, int c, int i, int j) {
    int group_channels = g->in_channels / g->groups;
    return (((size_t)f * group_channels + c) * g->kernel_h + i) * g->kernel_w + j;
}

void conv2d_reference_forward(const Conv2dGeometry *g, const float *x, const float *w,
                              const float *bias, float *y) {
    int group_channels = g->in_channels / g->groups;
    int group_filters = g->out_channels / g->groups;
    for (int n = 0; n < g->batch; n++)
        for (int f = 0; f < g->out_channels; f++) {
            int c0 = f / group_filters * group_channels;
            for (int oh = 0; oh < g->out_h; oh++)
                for (int ow = 0; ow < g->out_w; ow++) {
                    double sum = bias ? bias[f] : 0.0;
                    for (int c = 0; c < group_channels; c++)
                        for (int i = 0; i < g->kernel_h; i++) {
                            int ih = oh * g->stride_h - g->pad_top + i * g->dilation_h;
                            if (ih < 0 || ih >= g->in_h) continue;
                            for (int j = 0; j < g->kernel_w; j++) {
                                int iw = ow * g->stride_w - g->pad_left + j * g->dilation_w;
                                if (iw < 0 || iw >= g->in_w) continue;
                                sum += (double)w[w_at(g, f, c, i, j)] * x[x_at(g, n, c0 + c, ih, iw)];
                            }
                        }
                    y[y_at(g, n, f, oh, ow)] = (float)sum;
                }
        }
}

// dx[n][c][ih][iw] = sum over the filters of c's group and the kernel taps (i, j) whose
// window position oh = (ih + pad_top - i * dilation_h) / stride_h is a whole, in-range row
// (and likewise for the column) of dy * w.
void conv2d_reference_backward_data(const Conv2dGeometry *g, const float *dy, const float *w,
                                    float *dx, int accumulate) {
    int group_channels = g->in_channels / g->groups;
    int group_filters = g->out_channels / g->groups;
    for (int n = 0; n < g->batch; n++)
        for (int c = 0; c < g->in_channels; c++) {
            int group = c / group_channels, cg = c % group_channels;
            for (int ih = 0; ih < g->in_h; ih++)
                for (int iw = 0; iw < g->in_w; iw++) {
                    double sum = 0.0;
                    for (int f = group * group_filters; f < (group + 1) * group_filters; f++)
                        for (int i = 0; i < g->kernel_h; i++) {
                            int th = ih + g->pad_top - i * g->dilation_h;
                            if (th < 0 || th % g->stride_h) continue;
                            int oh = th / g->stride_h;
                            if (oh >= g->out_h) continue;
                            for (int j = 0; j < g->kernel_w; j++) {
                                int tw = iw + g->pad_left - j * g->dilation_w;
                                if (tw < 0 || tw % g->stride_w) continue;
                                int ow = tw / g->stride_w;
                                if (ow >= g->out_w) continue;
                                sum += (double)dy[y_at(g, n, f, oh, ow)] * w[w_at(g, f, cg, i, j)];
                            }
                        }
                    size_t at = x_at(g, n, c, ih, iw);
                    dx[at] = (float)(accumulate ? dx[at] + sum : sum);
                }
        }
}

void conv2d_reference_backward_filter(const Conv2dGeometry *g, const float *x, const float *dy,
                                      float *dw, float *dbias, int accumulate) {
    int group_channels = g->in_channels / g->groups;
    int group_filters = g->out_channels / g->groups;
    for (int f = 0; f < g->out_channels; f++) {
        int c0 = f / group_filters * group_channels;
        for (int c = 0; c < group_channels; c++)
            for (int i = 0; i < g->kernel_h; i++)
                for (int j = 0; j < g->kernel_w; j++) {
                    double sum = 0.0;
                    for (int n = 0; n < g->batch; n++)
                        for (int oh = 0; oh < g->out_h; oh++) {
                            int ih = oh * g->stride_h - g->pad_top + i * g->dilation_h;
                            if (ih < 0 || ih >= g->in_h) continue;
                            for (int ow = 0; ow < g->out_w; ow++) {
                                int iw = ow * g->stride_w - g->pad_left + j * g->dilation_w;
                                if (iw < 0 || iw >= g->in_w) continue;
                                sum += (double)dy[y_at(g, n, f, oh, ow)] * x[x_at(g, n, c0 + c, ih, iw)];
                            }
                        }
                    size_t at = w_at(g, f, c, i, j);
                    dw[at] = (float)(accumulate ? dw[at] + sum : sum);
                }
        if (!dbias) continue;
        double sum = 0.0;
        for (int n = 0; n < g->batch; n++)
            for (int oh = 0; oh < g->out_h; oh++)
                for (int ow = 0; ow < g->out_w; ow++) sum += dy[y_at(g, n, f, oh, ow)];
        dbias[f] = (float)(accumulate ? dbias[f] + sum : sum);
    }
}
