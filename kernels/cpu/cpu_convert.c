// Activations stored in bf16 or f16 on the CPU: the reference for the CUDA backend's
// 16-bit storage. The CPU computes in f32 only (precision_check refuses bf16 and fp16 for
// runs on it), so each op here widens its 16-bit operands into f32 scratch, runs the f32
// op, and rounds the result once on the store, which is what the CUDA kernels do in
// registers. Tests reach these paths directly; training runs never do.
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_ops.h"

static float load_value(const void *src, DType dtype, size_t i) {
    switch (dtype) {
    case DTYPE_BF16: return bf16_to_f32(((const uint16_t *)src)[i]);
    case DTYPE_F16: return f16_to_f32(((const uint16_t *)src)[i]);
    default: return ((const float *)src)[i];
    }
}

static void store_value(void *dst, DType dtype, size_t i, float value) {
    switch (dtype) {
    case DTYPE_BF16: ((uint16_t *)dst)[i] = f32_to_bf16(value); break;
    case DTYPE_F16: ((uint16_t *)dst)[i] = f32_to_f16(value); break;
    default: ((float *)dst)[i] = value; break;
    }
}

float *cpu_widen(const void *src, DType dtype, size_t n, Status *st) {
    float *out = malloc((n ? n : 1) * sizeof *out);
    if (!out) {
        status_out_of_host_memory(st, n * sizeof *out, "widening %zu values to f32", n);
        return NULL;
    }
    if (dtype == DTYPE_F32) {
        if (n) memcpy(out, src, n * sizeof *out);
    } else {
        for (size_t i = 0; i < n; i++) out[i] = load_value(src, dtype, i);
    }
    return out;
}

float *cpu_wide_room(const void *dst, DType dtype, size_t n, int keep, Status *st) {
    if (keep) return cpu_widen(dst, dtype, n, st);
    float *room = malloc((n ? n : 1) * sizeof *room);
    if (!room) status_out_of_host_memory(st, n * sizeof *room, "for %zu f32 values", n);
    return room;
}

void cpu_narrow(const float *src, void *dst, DType dtype, size_t n) {
    if (dtype == DTYPE_F32) {
        if (n && (const void *)src != dst) memmove(dst, src, n * sizeof *src);
        return;
    }
    for (size_t i = 0; i < n; i++) store_value(dst, dtype, i, src[i]);
}

void cpu_round_values(float *values, DType dtype, size_t n) {
    if (dtype == DTYPE_F32) return;
    for (size_t i = 0; i < n; i++)
        values[i] = dtype == DTYPE_BF16 ? bf16_to_f32(f32_to_bf16(values[i]))
                                        : f16_to_f32(f32_to_f16(values[i]));
}

static int cpu_convert(const Backend *b, const ConvertArgs *args, Status *st) {
    TRY(backend_dtype_check(b, args->src_dtype, "convert", st));
    TRY(backend_dtype_check(b, args->dst_dtype, "convert", st));
    for (size_t i = 0; i < args->n; i++) {
        float value = load_value(args->src, args->src_dtype, i);
        if (args->accumulate) value = load_value(args->dst, args->dst_dtype, i) + value;
        store_value(args->dst, args->dst_dtype, i, value);
    }
    return 0;
}

// Summed in f32 in the sources' order and rounded once: for f32 the bits of adding the
// sources into y one at a time. Starting from x[0] itself rather than 0 + x[0] keeps a
// -0 input's sign, as the copy `add` made before this op took several sources.
static int cpu_accumulate(const Backend *b, const AccumulateArgs *args, Status *st) {
    TRY(backend_accumulate_check(b, args->dtype, args->count, st));
    if (args->dtype == DTYPE_F32) {
        float *out = args->y;
        // A gradient fanning in: keep the loop vectorizable.
        if (args->count == 1 && args->accumulate) {
            const float *in = args->x[0];
            for (size_t i = 0; i < args->n; i++) out[i] += in[i];
            return 0;
        }
        for (size_t i = 0; i < args->n; i++) {
            const float *first = args->x[0];
            float sum = args->accumulate ? out[i] + first[i] : first[i];
            for (int k = 1; k < args->count; k++) sum += ((const float *)args->x[k])[i];
            out[i] = sum;
        }
        return 0;
    }
    for (size_t i = 0; i < args->n; i++) {
        float first = load_value(args->x[0], args->dtype, i);
        float sum = args->accumulate ? load_value(args->y, args->dtype, i) + first : first;
        for (int k = 1; k < args->count; k++) sum += load_value(args->x[k], args->dtype, i);
        store_value(args->y, args->dtype, i, sum);
    }
    return 0;
}

// Where value (channel c, pixel p) of an image sits within it in each layout.
static size_t layout_offset(Layout layout, int channels, int pixels, int c, int p) {
    return layout == LAYOUT_NHWC ? (size_t)p * channels + c : (size_t)c * pixels + p;
}

void cpu_layout_transpose(const void *src, void *dst, size_t value_size, int n, int channels,
                          int pixels, Layout from) {
    Layout to = from == LAYOUT_NHWC ? LAYOUT_NCHW : LAYOUT_NHWC;
    size_t image = (size_t)channels * pixels;
    const char *in = src;
    char *out = dst;
    for (size_t i = 0; i < (size_t)n; i++)
        for (int c = 0; c < channels; c++)
            for (int p = 0; p < pixels; p++)
                memcpy(out + (i * image + layout_offset(to, channels, pixels, c, p)) * value_size,
                       in + (i * image + layout_offset(from, channels, pixels, c, p)) * value_size,
                       value_size);
}

void *cpu_layout_copy(const void *src, size_t value_size, int n, int channels, int pixels,
                      Layout from, Status *st) {
    size_t bytes = (size_t)n * channels * pixels * value_size;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy) {
        status_out_of_host_memory(st, bytes, "transposing images");
        return NULL;
    }
    if (src) cpu_layout_transpose(src, copy, value_size, n, channels, pixels, from);
    return copy;
}

static int cpu_layout_convert(const Backend *b, const LayoutConvertArgs *args, Status *st) {
    TRY(backend_layout_convert_check(b, args->dtype, args->n, args->channels, args->pixels,
                                     args->from, st));
    if (!args->accumulate) {
        cpu_layout_transpose(args->src, args->dst, dtype_size(args->dtype), args->n, args->channels,
                             args->pixels, args->from);
        return 0;
    }
    Layout to = args->from == LAYOUT_NHWC ? LAYOUT_NCHW : LAYOUT_NHWC;
    size_t image = (size_t)args->channels * args->pixels;
    for (size_t i = 0; i < (size_t)args->n; i++)
        for (int c = 0; c < args->channels; c++)
            for (int p = 0; p < args->pixels; p++) {
                size_t s =
                    i * image + layout_offset(args->from, args->channels, args->pixels, c, p);
                size_t d = i * image + layout_offset(to, args->channels, args->pixels, c, p);
                store_value(args->dst, args->dtype, d,
                            load_value(args->dst, args->dtype, d) +
                                load_value(args->src, args->dtype, s));
            }
    return 0;
}

void cpu_register_convert_ops(Backend *table) {
    table->convert = cpu_convert;
    table->accumulate = cpu_accumulate;
    table->layout_convert = cpu_layout_convert;
}
