// 16-bit activation storage on the GPU (--precision bf16 and fp16: graph_set_storage,
// the 16-bit ops of kernels/cuda) against the same storage on the CPU, whose ops widen,
// compute in f32 and round once (tests/unit/test_storage16.c checks those against f32):
// the same model, weights, batch and dropout masks give the same loss and parameter
// gradients. Every op is also checked alone in the parity tests; this is the graph around
// them: the casts, the dense layers' 16-bit weight copies, views, fused activations, and a
// batchnorm that reads and writes 16 bits between two dense layers.
//
// Tolerances, and why: both sides store the same dtype, so they differ only where a sum's
// order (cuBLAS's and cuDNN's trees against the CPU's) moves a value across a rounding
// boundary of the storage type, one unit in the last place of that value (bf16 2^-8
// relative, f16 2^-11), and by what those flips carry downstream. The loss within 1e-2
// (bf16) or 2e-3 (f16) relative; each layer's gradients within 5e-2 or 5e-3 relative (the
// CPU test measures 2.6e-2 and 8.7e-4 between 16-bit and f32 storage, a difference this
// one stays well inside).
//
// Skipped (77) when no CUDA backend opens; bf16 alone is skipped on a GPU older than
// compute capability 8.0 (the backend refuses to open in it).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage16_net.h"
#include "cuda_or_skip.h"

enum { BATCH = 48 };

// The batch is the test's own (uniform in [0, 1)), so input_low is unused.
static const StorageNetSpec spec = {
    .model_name = "storage.model",
    .text = "input shape=3x6x6\n"
            "flatten\n"
            "dense units=64 act=relu name=d1\n"
            "dense units=64 act=gelu name=d2\n"
            "dense units=64 name=d3\n"
            "add from=d1,d3\n"
            "dropout rate=0.25\n"
            "reshape shape=4x16\n"
            "flatten\n"
            "dense units=32 act=tanh name=d4\n"
            "batchnorm\n"
            "dense units=10 name=d5\n"
            "loss softmax_cross_entropy\n",
    .batch = BATCH, .classes = 10, .param_seed = 3, .ctx_seed = 17};

static void report_status(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
    test_failures++;
}

// Builds on b, stores as `storage`, initialises from seed 3, loads the batch and runs one
// training forward and backward.
static int side_run(StorageNet *n, const Backend *b, DType storage, const float *images,
                    const int32_t *labels, double *loss, Status *st) {
    TRY(storage_net_build_on(n, &spec, b, storage, st));
    TRY(graph_load_batch(&n->g, b, images, labels, BATCH, st));
    TRY(storage_net_pass(n, 1, loss, st));
    return b->synchronize(b, st);
}

static float *fetch(const Backend *b, const Tensor *t, Status *st) {
    size_t n = tensor_numel(t);
    float *host = malloc((n ? n : 1) * sizeof *host);
    if (host && b->copy_to_host(b, host, t->data, n * sizeof *host, st)) {
        free(host);
        return NULL;
    }
    return host;
}

// Layer by layer, over its trainable parameters' gradients together.
static void compare_gradients(const StorageNet *gpu, const StorageNet *cpu, double bound,
                              const char *what) {
    for (int i = 0; i < cpu->g.count; i++) {
        const Layer *c = cpu->g.layers[i], *d = gpu->g.layers[i];
        CHECK(strcmp(c->name, d->name) == 0);
        double diff = 0.0, norm = 0.0;
        int trainable = 0;
        for (int p = 0; p < c->param_count; p++) {
            if (c->params[p].buffer) continue;
            trainable = 1;
            Status st;
            status_clear(&st);
            float *got = fetch(gpu->b, &d->params[p].grad, &st);
            const float *want = tensor_f32(&c->params[p].grad);
            if (!got) {
                report_status("copying a gradient back", &st);
                return;
            }
            add_squared_difference(got, want, tensor_numel(&c->params[p].grad), &diff, &norm);
            free(got);
        }
        // A layer whose CPU gradients are all zero is held to the bound absolutely.
        if (trainable) check_within_bound(c->name, what, difference_ratio(diff, norm), bound);
    }
}

// Returns 77 when the GPU cannot open in `precision`, 1 when no GPU opens at all.
static int gpu_matches_cpu(Precision precision, double loss_bound, double grad_bound) {
    const char *what = precision_name(precision);
    DType storage = precision_activation_dtype(precision);
    Status st;
    status_clear(&st);
    const Backend *gpu_backend = NULL;
    if (cuda_open_in_or_skip(precision, 0, what, &gpu_backend)) return 77;
    float images[BATCH * 108];
    int32_t labels[BATCH];
    Rng rng;
    rng_seed(&rng, 9);
    for (int i = 0; i < BATCH * 108; i++) images[i] = rng_uniform(&rng);
    for (int i = 0; i < BATCH; i++) labels[i] = (int32_t)rng_below(&rng, 10);

    StorageNet gpu, cpu;
    double gpu_loss = 0.0, cpu_loss = 0.0;
    memset(&gpu, 0, sizeof gpu);  // side_run may not reach it
    if (side_run(&cpu, cpu_backend(), storage, images, labels, &cpu_loss, &st))
        report_status("the CPU side", &st);
    else if (side_run(&gpu, gpu_backend, storage, images, labels, &gpu_loss, &st))
        report_status("the GPU side", &st);
    else {
        double rel = fabs(gpu_loss - cpu_loss) / fabs(cpu_loss);
        fprintf(stderr, "%s: loss GPU %.6f CPU %.6f (relative %.2e)\n", what, gpu_loss / BATCH,
                cpu_loss / BATCH, rel);
        CHECK(rel < loss_bound);
        CHECK_INT_EQ(gpu.g.count, cpu.g.count);  // the same casts
        if (gpu.g.count == cpu.g.count) compare_gradients(&gpu, &cpu, grad_bound, what);
    }
    storage_net_free(&gpu);
    storage_net_free(&cpu);
    cuda_backend_close(gpu_backend);
    return 0;
}

int main(void) {
    int probe = cuda_probe_or_skip();
    if (probe) return probe;
    int fp16 = gpu_matches_cpu(PRECISION_FP16, 2e-3, 5e-3);
    int bf16 = gpu_matches_cpu(PRECISION_BF16, 1e-2, 5e-2);
    if (fp16 == 77 && bf16 == 77) return 77;
    return test_exit_code("test_cuda_storage16");
}
