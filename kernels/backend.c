#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"

// Every op by name, so a backend that lacks some can be reported before a model runs.
#define OP(field) {#field, offsetof(Backend, field)}
static const struct {
    const char *name;
    size_t offset;
} backend_ops[] = {
    OP(raw_alloc), OP(raw_free), OP(total_memory), OP(copy_to_device), OP(copy_to_host),
    OP(copy_on_device), OP(fill), OP(synchronize), OP(gather_samples), OP(gemm), OP(add_bias_rows), OP(sum_rows),
    OP(accumulate), OP(activation_forward), OP(activation_backward), OP(dropout_forward),
    OP(dropout_backward), OP(softmax_cross_entropy_forward), OP(softmax_cross_entropy_backward),
    OP(mse_forward), OP(mse_backward), OP(batchnorm_forward_training),
    OP(batchnorm_forward_inference), OP(batchnorm_backward), OP(conv2d_workspace_size),
    OP(conv2d_forward), OP(conv2d_backward_data), OP(conv2d_backward_filter),
    OP(maxpool_forward), OP(maxpool_backward), OP(avgpool_forward), OP(avgpool_backward),
    OP(sgd_update), OP(adam_update),
};

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
