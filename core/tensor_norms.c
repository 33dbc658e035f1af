#include "core/tensor_norms.h"

#include <stdlib.h>
#include <string.h>

// sum_squares reads f32: a 16-bit activation (--precision bf16|fp16) is widened into
// scratch first. Only the search for a non-finite value meets those, after a step failed.
static int sum_widened(const Backend *b, Allocator *a, const Tensor *t, double *device_sum,
                       Status *st) {
    size_t n = tensor_numel(t);
    void *wide;
    TRY(alloc_get(a, (n ? n : 1) * sizeof(float), &wide, st));
    int rc = b->convert(b, &(ConvertArgs){.src = t->data, .src_dtype = t->dtype, .dst = wide,
                        .dst_dtype = DTYPE_F32, .n = n, .accumulate = 0}, st);
    if (!rc) rc = b->sum_squares(b, wide, n, device_sum, st);
    alloc_put(a, wide);
    return rc;
}

static int launch_sums(const Backend *b, Allocator *a, const Tensor **tensors, int count,
                       double *device_sums, Status *st) {
    for (int i = 0; i < count; i++) {
        const Tensor *t = tensors[i];
        if (!t->data) continue;
        if (t->dtype != DTYPE_F32)
            TRY(sum_widened(b, a, t, device_sums + i, st));
        else
            TRY(b->sum_squares(b, tensor_f32(t), tensor_numel(t), device_sums + i, st));
    }
    return 0;
}

int trainable_gradients_open(const Graph *g, TrainableGradients *out, Status *st) {
    memset(out, 0, sizeof *out);
    size_t capacity = (size_t)g->count * LAYER_MAX_PARAMS;
    out->grads = malloc((capacity ? capacity : 1) * sizeof *out->grads);
    out->sums = malloc((capacity ? capacity : 1) * sizeof *out->sums);
    if (!out->grads || !out->sums) {
        trainable_gradients_close(out);
        return status_out_of_host_memory(
            st, (capacity ? capacity : 1) * (sizeof *out->grads + sizeof *out->sums),
            "listing the gradients");
    }
    for (int i = 0; i < g->count; i++)
        for (int k = 0; k < g->layers[i]->param_count; k++) {
            const Param *p = &g->layers[i]->params[k];
            if (!p->buffer) out->grads[out->count++] = &p->grad;
        }
    return 0;
}

void trainable_gradients_close(TrainableGradients *t) {
    free(t->grads);
    free(t->sums);
    memset(t, 0, sizeof *t);
}

int tensor_sums_of_squares(const Backend *b, Allocator *a, const Tensor **tensors,
                           int count, double *sums, Status *st) {
    if (count == 0) return 0;
    size_t bytes = (size_t)count * sizeof *sums;
    void *device_sums;
    TRY(alloc_get(a, bytes, &device_sums, st));
    int rc = launch_sums(b, a, tensors, count, device_sums, st);
    if (!rc) rc = b->copy_to_host(b, sums, device_sums, bytes, st);
    alloc_put(a, device_sums);
    for (int i = 0; i < count && !rc; i++)
        if (!tensors[i]->data) sums[i] = 0.0;  // its slot was never written
    return rc;
}
