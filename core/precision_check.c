#include "core/precision_check.h"
#include "core/layer.h"

#include <stdio.h>
#include <string.h>

PrecisionTarget precision_target(const Device *d) {
    return (PrecisionTarget){.device = d->name, .gpu = d->gpu,
                             .compute = d->backend && d->backend->kind == BACKEND_CUDA
                                            ? d->compute : 0};
}

static int on_gpu(const PrecisionTarget *t) { return t->gpu && t->gpu[0]; }

// "--precision bf16", or "train precision=bf16 (line 9)" when the model file chose it.
static void describe_request(const PrecisionConfig *asked, char *buf, size_t size) {
    if (asked->line)
        snprintf(buf, size, "train %s%s (line %d)", asked->source,
                 precision_name(asked->precision), asked->line);
    else
        snprintf(buf, size, "%s %s", asked->source[0] ? asked->source : "--precision",
                 precision_name(asked->precision));
}

// Whether layer l would compute in `p`: a GEMM does; so does a convolution, unless
// convolutions compute in something else under p (TF32 for f32 data under bf16) and it
// keeps f32 activations: one storing 16 bits (graph_set_storage) reads them as stored.
static int computes_in(const Layer *l, Precision p) {
    LayerMatmul m = l->kind->matmul;
    if (m == LAYER_MATMUL_GEMM) return 1;
    if (m != LAYER_MATMUL_CONVOLUTION) return 0;
    return precision_for_convolutions(p) == p ||
           (l->kind->stores_16bit && precision_activation_dtype(p) != DTYPE_F32);
}

// The first layer that would compute in `p`.
static const Layer *first_layer_in(const Graph *g, Precision p) {
    for (int i = 0; i < g->count; i++)
        if (computes_in(g->layers[i], p)) return g->layers[i];
    return NULL;
}

// Names the layer when there is one; a model with no layer in that precision is refused
// all the same (the device cannot do what was asked), at the precision= value that asked
// or, for the command line's, with no place.
static int refuse(const Graph *g, const PrecisionConfig *asked, const char *why,
                  Status *st) {
    char request[96];
    describe_request(asked, request, sizeof request);
    const Layer *l = first_layer_in(g, asked->precision);
    const char *p = precision_name(asked->precision);
    if (l)
        return status_fail_at(st, STATUS_NO_DEVICE, g->path, l->line, l->column,
                              "%s: layer '%s' (%s) would compute in %s, but %s", request,
                              l->name, l->kind->name, p, why);
    return status_fail_at(st, STATUS_NO_DEVICE, asked->line ? g->path : "", asked->line,
                          asked->column, "%s: %s", request, why);
}

static int refuse_on_cpu(const Graph *g, const PrecisionConfig *asked, Status *st) {
    refuse(g, asked, "the CPU backend computes in fp32 only", st);
    status_hint(st, "on the CPU use --precision fp32 (or leave it out), or use a GPU with "
                "--device cuda (%s needs compute capability %d.%d or newer)",
                precision_name(asked->precision), precision_min_compute(asked->precision) / 10,
                precision_min_compute(asked->precision) % 10);
    return STATUS_NO_DEVICE;
}

static int refuse_on_gpu(const Graph *g, const PrecisionConfig *asked,
                         const PrecisionTarget *t, Status *st) {
    int floor = precision_min_compute(asked->precision);
    char why[512];
    snprintf(why, sizeof why, "%s (%s) has compute capability %d.%d; %s needs %d.%d or newer",
             t->device, t->gpu, t->compute / 10, t->compute % 10,
             precision_name(asked->precision), floor / 10, floor % 10);
    refuse(g, asked, why, st);
    if (asked->precision == PRECISION_BF16 && t->compute >= precision_min_compute(PRECISION_FP16))
        status_hint(st, "on this GPU use --precision fp16 (tensor cores from 7.0, with loss "
                    "scaling) or --precision fp32; bf16 needs a GPU of compute capability 8.0+ "
                    "(A100, RTX 30 series, H100 or later)");
    else
        status_hint(st, "use --precision fp32 on this GPU, or a GPU of compute capability "
                    "%d.%d or newer", floor / 10, floor % 10);
    return STATUS_NO_DEVICE;
}

// tf32 asked for by name where there is none: fp32, said once. PyTorch users expect this
// (allow_tf32 is ignored on the CPU and before Ampere), so it is a notice, not an error.
static void tf32_notice(const PrecisionConfig *asked, const PrecisionTarget *t, char *notice,
                        size_t size) {
    char request[96];
    describe_request(asked, request, sizeof request);
    if (!on_gpu(t))
        snprintf(notice, size, "%s on the CPU computes in fp32: the CPU backend has no TF32 "
                 "(PyTorch's allow_tf32 likewise changes nothing there)", request);
    else
        snprintf(notice, size, "%s: %s (%s) has compute capability %d.%d and no TF32 "
                 "(8.0+); computing in fp32", request, t->device, t->gpu, t->compute / 10,
                 t->compute % 10);
}

int precision_check(const Graph *g, const PrecisionConfig *asked, const PrecisionTarget *t,
                    Precision *effective, char *notice, size_t notice_size, Status *st) {
    if (notice_size) notice[0] = '\0';
    Precision p = asked->precision;
    // The backend's own answer (kernels/backend.h), for a device described, not opened:
    // the CPU computes in fp32, a GPU in bf16 or fp16 from its compute capability.
    int compute = on_gpu(t) ? t->compute : 0;
    *effective = PRECISION_FP32;
    if (!backend_precision_supported_on(compute, p))
        return on_gpu(t) ? refuse_on_gpu(g, asked, t, st) : refuse_on_cpu(g, asked, st);
    if (on_gpu(t)) *effective = precision_on_gpu(p, t->compute);
    if (p == PRECISION_TF32 && *effective != PRECISION_TF32)
        tf32_notice(asked, t, notice, notice_size);
    return 0;
}

const char *precision_describe(Precision p, char *buf, size_t size) {
    const char *what;
    switch (p) {
    case PRECISION_TF32:
        what = "GEMM and convolution inputs rounded to TF32 on tensor cores, fp32 sums";
        break;
    case PRECISION_BF16:
        what = "GEMM and convolution inputs rounded to bf16, fp32 sums";
        break;
    case PRECISION_FP16:
        what = "GEMM and convolution inputs rounded to fp16, fp32 sums, dynamic loss scaling";
        break;
    default:
        what = "GEMMs and convolutions in full fp32";
        break;
    }
    // Say where the bytes are, so that nobody reads bf16 as half the memory everywhere:
    // the input, the loss's input and master weights stay f32 (graph_set_storage).
    DType activations = precision_activation_dtype(p);
    char kept[160], but[200] = "";
    if (activations == DTYPE_F32) {
        snprintf(buf, size, "%s; tensors stored in f32", what);
        return buf;
    }
    if (layer_kinds_keeping_f32(kept, sizeof kept)[0])
        snprintf(but, sizeof but, " and %s layers'", kept);
    snprintf(buf, size, "%s; activations stored in %s from the first layer to the last, the "
             "input's, the loss's%s and master weights in f32", what, dtype_name(activations),
             but);
    return buf;
}
