#include "core/tensor.h"

size_t tensor_numel(const Tensor *t) {
    size_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
    return n;
}

void tensor_set_shape(Tensor *t, DType dtype, int batch, const Shape *sample) {
    t->dtype = dtype;
    t->rank = 0;
    if (batch > 0) t->dims[t->rank++] = batch;
    for (int i = 0; i < sample->rank; i++) t->dims[t->rank++] = sample->dims[i];
    t->bytes = tensor_numel(t) * dtype_size(dtype);
}

int tensor_alloc(Tensor *t, Allocator *a, Status *st) {
    TRY(alloc_get(a, t->bytes, &t->data, st));
    t->owner = a;
    return 0;
}

void tensor_view(Tensor *view, const Tensor *base) {
    view->data = base->data;
    view->owner = NULL;
}

void tensor_free(Tensor *t) {
    if (t->owner) alloc_put(t->owner, t->data);
    t->data = NULL;
    t->owner = NULL;
}
