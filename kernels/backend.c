#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"

// Every op by name, so a backend that lacks some can be reported before a model runs.
#define OP(field) {#field, offsetof(Backend, field)},
static const struct {
    const char *name;
    size_t offset;
} backend_ops[] = {BACKEND_OPS(OP)};

// A slot added to the table but to neither list would escape both the completeness check
// and the parity test's coverage; the table is its header and then function pointers only.
#define ONE(field) +1
_Static_assert(offsetof(Backend, supports) + (0 BACKEND_OPS(ONE) BACKEND_OTHER_OPS(ONE)) *
                       sizeof(void (*)(void)) ==
                   sizeof(Backend),
               "every op of Backend is in BACKEND_OPS or BACKEND_OTHER_OPS");

int backend_missing_ops(const Backend *b, char *names, size_t size) {
    int missing = 0;
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < sizeof backend_ops / sizeof backend_ops[0]; i++) {
        void *fn;
        memcpy(&fn, (const char *)b + backend_ops[i].offset, sizeof fn);
        if (fn) continue;
        if (used < size)
            used += (size_t)snprintf(names + used, size - used, "%s%s", missing ? ", " : "",
                                     backend_ops[i].name);
        missing++;
    }
    return missing;
}

const char *layout_name(Layout layout) {
    return layout == LAYOUT_NCHW ? "NCHW" : layout == LAYOUT_NHWC ? "NHWC" : "?";
}

int backend_layout_check(Layout layout, const char *op, Status *st) {
    if (layout == LAYOUT_NCHW || layout == LAYOUT_NHWC) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "%s: unknown activation layout %d (NCHW is %d, NHWC "
                "%d)", op, (int)layout, (int)LAYOUT_NCHW, (int)LAYOUT_NHWC);
    // graph_set_layouts gives layers only those two: another reached an op through a bug.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}

int backend_layout_convert_check(const Backend *b, DType dtype, int n, int channels,
                                 int pixels, Layout from, Status *st) {
    TRY(backend_dtype_check(b, dtype, "layout_convert", st));
    TRY(backend_layout_check(from, "layout_convert", st));
    if (n >= 0 && channels >= 0 && pixels >= 0) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "layout_convert: %d images of %d channels x %d "
                "pixels", n, channels, pixels);
    // flatten passes its batch and its input's shape, never negative: a bug upstream.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}

static int stored_dtype(DType dtype) {
    return dtype == DTYPE_F32 || dtype == DTYPE_BF16 || dtype == DTYPE_F16;
}

// What a GEMM on operands stored as `dtype` (a stored one) computes in.
static Precision operand_precision(DType dtype) {
    if (dtype == DTYPE_BF16) return PRECISION_BF16;
    return dtype == DTYPE_F16 ? PRECISION_FP16 : PRECISION_FP32;
}

int backend_supports_on(int compute, OpFamily family, DType dtype, Layout layout) {
    if (layout != LAYOUT_NCHW && layout != LAYOUT_NHWC) return 0;
    if (!stored_dtype(dtype)) return 0;
    if (family == OP_FAMILY_STORAGE) return 1;
    if (family != OP_FAMILY_MATMUL) return 0;
    if (dtype == DTYPE_F32) return 1;
    return compute > 0 && compute >= precision_min_compute(operand_precision(dtype));
}

int backend_precision_supported_on(int compute, Precision p) {
    if (p != PRECISION_BF16 && p != PRECISION_FP16) return 1;
    return backend_supports_on(compute, OP_FAMILY_MATMUL, precision_activation_dtype(p),
                               LAYOUT_NCHW);
}

int backend_dtype_check(const Backend *b, DType dtype, const char *op, Status *st) {
    if (b->supports(b, OP_FAMILY_STORAGE, dtype, LAYOUT_NCHW)) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "%s: activations cannot be stored as %s (f32, bf16 "
                "or f16)", op, dtype_name(dtype));
    // graph_set_storage gives layers only those three: another reached an op through a bug.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}

int backend_matmul_check(const Backend *b, DType dtype, const char *op, Status *st) {
    if (b->supports(b, OP_FAMILY_MATMUL, dtype, LAYOUT_NCHW)) return 0;
    int floor = precision_min_compute(operand_precision(dtype));
    char device[96];
    if (b->compute)
        snprintf(device, sizeof device, "%s (compute capability %d.%d)", b->name,
                 b->compute / 10, b->compute % 10);
    else snprintf(device, sizeof device, "%s", b->name);
    status_fail(st, STATUS_NO_DEVICE, "%s: %s cannot multiply operands stored as %s (that "
                "needs compute capability %d.%d or newer)", op, device, dtype_name(dtype),
                floor / 10, floor % 10);
    // run_open refuses the precision on such a GPU first (precision_check, the device
    // opener): a caller of the op table that skipped that check reaches this.
    status_hint(st, "use precision fp32 on this GPU, or a GPU of compute capability %d.%d+",
                floor / 10, floor % 10);
    return STATUS_NO_DEVICE;
}

int backend_accumulate_check(const Backend *b, DType dtype, int count, Status *st) {
    TRY(backend_dtype_check(b, dtype, "accumulate", st));
    if (count >= 1 && count <= BACKEND_ACCUMULATE_MAX) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR, "accumulate: %d sources, where it sums 1 to %d",
                count, BACKEND_ACCUMULATE_MAX);
    // `add` asserts at compile time that its inputs fit one call: another count is a bug.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}
