// The finite-difference harness of the gradient-check tests (tests/unit/test_gradcheck*.c):
// a graph built from model text on the CPU backend, random batches, the mean loss over the
// batch, and the comparison of analytic gradients with central differences of that loss.
//
// Every function is `static inline`, so a test that uses only part of the harness still
// compiles cleanly with -Wall -Wextra -Werror.
#ifndef TRAINER_TESTS_GRADCHECK_NET_H
#define TRAINER_TESTS_GRADCHECK_NET_H

#include "check.h"
#include "core/graph.h"
#include "base/rng.h"
#include "kernels/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// An element passes when |analytic - numeric| <= GRAD_ATOL + GRAD_RTOL * max(|a|, |n|);
// test_gradcheck.c explains the choice. The step eps is each test's own.
#define GRAD_ATOL 1e-3
#define GRAD_RTOL 1e-2

// What a test file fixes for all its nets, so that each file keeps its own random draws.
typedef struct NetSetup {
    const char *model_name;   // the file name parse errors of the model text report
    uint64_t seed_mul;        // the batches are drawn from rng_seed(seed * seed_mul + seed_add)
    uint64_t seed_add;
    uint64_t ctx_seed;        // LayerContext.seed of every pass: the same dropout mask each time
} NetSetup;

typedef struct Net {
    ModelFile file;
    Graph g;
    Allocator alloc;
    const Backend *b;
    int batch;
    int training;       // the mode every forward and backward of this net runs in (net_open: 1)
    uint64_t ctx_seed;
    float *x;           // host copy of the batch's inputs
    int32_t *labels;    // host copy of the batch's labels
    Rng rng;
} Net;

static inline LayerContext net_context(Net *n) {
    return (LayerContext){.backend = n->b, .alloc = &n->alloc, .batch = n->batch,
                          .training = n->training, .seed = n->ctx_seed,
                          .labels = (const int32_t *)n->g.labels.data};
}

static inline void report_status(const char *what, const Status *st) {
    char text[2048];
    status_format(st, text, sizeof text);
    fprintf(stderr, "%s failed: %s", what, text);
}

// Builds `text` with parameters from `seed`, activations for `allocated` rows, and a
// batch of `batch` rows. Returns 0 on success; any failure is counted and reported.
// net_close must follow either way.
static inline int net_open(Net *n, const NetSetup *setup, const char *text, int allocated,
                           int batch, uint64_t seed) {
    memset(n, 0, sizeof *n);
    Status st;
    status_clear(&st);
    n->b = cpu_backend();
    n->batch = batch;
    n->training = 1;
    n->ctx_seed = setup->ctx_seed;
    rng_seed(&n->rng, seed * setup->seed_mul + setup->seed_add);
    int rc = model_file_parse_text(setup->model_name, text, &n->file, &st);
    if (!rc) rc = graph_build(&n->file, &n->g, NULL, &st);
    if (rc) {
        report_status("build", &st);
        model_file_free(&n->file);
        test_failures++;
        return rc;
    }
    rc = alloc_init(&n->alloc, n->b, ALLOC_GROW, 0, &st);
    if (!rc) rc = graph_init_params(&n->g, n->b, &n->alloc, seed, &st);
    if (!rc) rc = graph_allocate(&n->g, n->b, &n->alloc, allocated, NULL, &st);
    if (rc) {
        report_status("init", &st);
        test_failures++;
    }
    size_t sample = shape_numel(&n->g.input->out_shape);
    n->x = calloc((size_t)batch * sample, sizeof *n->x);
    n->labels = calloc((size_t)batch, sizeof *n->labels);
    return rc;
}

static inline void net_close(Net *n) {
    graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
    free(n->x);
    free(n->labels);
}

// net_open for the test case `label`: where the net cannot be set up, says which case
// and closes it again. Returns 0 when the net is open (net_close must follow).
static inline int net_open_case(Net *n, const NetSetup *setup, const char *label,
                                const char *text, int allocated, int batch, uint64_t seed) {
    if (!net_open(n, setup, text, allocated, batch, seed)) return 0;
    fprintf(stderr, "%s: could not set up\n", label);
    net_close(n);
    return -1;
}

// New random inputs in [-1, 1) and labels in [0, classes), copied to the device.
static inline int net_draw_batch(Net *n) {
    size_t values = (size_t)n->batch * shape_numel(&n->g.input->out_shape);
    for (size_t i = 0; i < values; i++) n->x[i] = 2.0f * rng_uniform(&n->rng) - 1.0f;
    int classes = graph_classes(&n->g);
    for (int r = 0; r < n->batch; r++)
        n->labels[r] = (int32_t)rng_below(&n->rng, (uint32_t)classes);
    Status st;
    status_clear(&st);
    if (graph_load_batch(&n->g, n->b, n->x, n->labels, n->batch, &st)) {
        report_status("load batch", &st);
        test_failures++;
        return -1;
    }
    return 0;
}

// Fusion of act= activations on or off (graph_fuse_activations), with the activations
// reallocated for `allocated` rows and the current batch loaded again (the input's tensor
// is one of them). With it off, every pre-activation is there to be read.
static inline int net_set_fusion(Net *n, int enabled, int allocated) {
    Status st;
    status_clear(&st);
    graph_fuse_activations(&n->g, enabled);
    if (graph_allocate(&n->g, n->b, &n->alloc, allocated, NULL, &st) ||
        graph_load_batch(&n->g, n->b, n->x, n->labels, n->batch, &st)) {
        report_status("switching fusion", &st);
        test_failures++;
        return -1;
    }
    return 0;
}

// Forward from layer `first` on (1: the whole graph, as graph_forward), then the mean
// loss over the batch, in double. The layers before `first` keep their activations.
static inline double net_loss_from(Net *n, int first) {
    Status st;
    status_clear(&st);
    LayerContext ctx = net_context(n);
    for (int i = first; i < n->g.count; i++) {
        Layer *l = n->g.layers[i];
        if (l->kind->forward(l, &ctx, &st)) {
            char what[128];
            snprintf(what, sizeof what, "forward of layer '%s'", l->name);
            report_status(what, &st);
            test_failures++;
            return NAN;
        }
    }
    double sum = 0.0, correct = 0.0;
    if (graph_read_loss(&n->g, n->b, n->batch, &sum, &correct, &st)) {
        report_status("read loss", &st);
        test_failures++;
        return NAN;
    }
    return sum / n->batch;
}

// The mean loss after a forward pass of the whole graph.
static inline double net_loss(Net *n) { return net_loss_from(n, 1); }

// Backward only, from the activations the last forward left.
static inline int net_backward(Net *n) {
    Status st;
    status_clear(&st);
    LayerContext ctx = net_context(n);
    if (graph_backward(&n->g, &ctx, &st)) {
        report_status("backward", &st);
        test_failures++;
        return -1;
    }
    return 0;
}

// A forward pass of the whole graph, then backward.
static inline int net_forward_backward(Net *n) {
    Status st;
    status_clear(&st);
    LayerContext ctx = net_context(n);
    if (graph_forward(&n->g, &ctx, &st) || graph_backward(&n->g, &ctx, &st)) {
        report_status("forward/backward", &st);
        test_failures++;
        return -1;
    }
    return 0;
}

// The index of the layer called `name`, or -1.
static inline int net_layer_index(const Net *n, const char *name) {
    for (int i = 0; i < n->g.count; i++)
        if (strcmp(n->g.layers[i]->name, name) == 0) return i;
    return -1;
}

// The layer called `name`; NULL, counted as a failure, where there is none.
static inline Layer *net_layer(const Net *n, const char *name) {
    int i = net_layer_index(n, name);
    if (i >= 0) return n->g.layers[i];
    fprintf(stderr, "no layer '%s' in the test model\n", name);
    test_failures++;
    return NULL;
}

// Compares `analytic` with central differences (step +-eps) of the loss in each element
// of `value`, re-running the graph from layer `first` for every evaluation; every
// mismatch counts as a failure, and so does a gradient that is ~0 everywhere (it would
// pass vacuously). Returns the number of mismatches. The activations are left as the last
// evaluation made them, with value[count - 1] at its saved value - eps.
static inline int net_check_elements(Net *n, float eps, const char *label, const char *what,
                                     float *value, const float *analytic, size_t count,
                                     int first) {
    int mismatches = 0;
    double largest = 0.0;
    for (size_t k = 0; k < count; k++) {
        float saved = value[k];
        value[k] = saved + eps;
        double plus = net_loss_from(n, first);
        value[k] = saved - eps;
        double minus = net_loss_from(n, first);
        value[k] = saved;
        // The perturbed value is what f32 actually held, so divide by that step.
        double step = (double)(saved + eps) - (double)(saved - eps);
        double numeric = (plus - minus) / step;
        double a = analytic[k];
        double tol = GRAD_ATOL + GRAD_RTOL * fmax(fabs(a), fabs(numeric));
        if (fabs(numeric) > largest) largest = fabs(numeric);
        if (!(fabs(a - numeric) <= tol)) {
            if (mismatches < 5)
                fprintf(stderr, "%s: %s[%zu]: analytic %.7g vs numeric %.7g "
                        "(diff %.3g, tol %.3g)\n",
                        label, what, k, a, numeric, fabs(a - numeric), tol);
            mismatches++;
        }
    }
    if (mismatches > 5)
        fprintf(stderr, "%s: %s: %d of %zu elements differ\n", label, what, mismatches, count);
    test_failures += mismatches;
    if (!(largest > 1e-3)) {
        fprintf(stderr, "%s: %s: every gradient is ~0 (largest %.3g); the case tests nothing\n",
                label, what, largest);
        test_failures++;
    }
    return mismatches;
}

// Every element of every trainable parameter's gradient (as the last backward left it)
// against a central difference of the whole graph's loss. Buffers (running statistics)
// have no gradient and are skipped. Returns the number of elements compared.
static inline long net_check_param_grads(Net *n, float eps, const char *label) {
    long compared = 0;
    for (int i = 0; i < n->g.count; i++) {
        Layer *l = n->g.layers[i];
        for (int p = 0; p < l->param_count; p++) {
            Param *param = &l->params[p];
            if (param->buffer) {
                if (param->grad.data) {
                    fprintf(stderr, "%s: buffer %s has a gradient allocated\n", label,
                            param->name);
                    test_failures++;
                }
                continue;
            }
            size_t count = tensor_numel(&param->value);
            // The analytic gradient, taken before any perturbation.
            float *analytic = malloc(count * sizeof *analytic);
            memcpy(analytic, tensor_f32(&param->grad), count * sizeof *analytic);
            net_check_elements(n, eps, label, param->name, tensor_f32(&param->value), analytic,
                               count, 1);
            compared += (long)count;
            free(analytic);
        }
    }
    return compared;
}

// One plain SGD step (lr 0.1, no momentum) over every trainable parameter, after a forward
// and a backward of a new batch; *loss is that batch's loss. -1 on a failure (reported and
// counted).
static inline int net_sgd_step(Net *n, double *loss) {
    if (net_draw_batch(n)) return -1;
    *loss = net_loss(n);
    if (isnan(*loss) || net_backward(n)) return -1;
    Status st;
    status_clear(&st);
    SgdHyper h = {.lr = 0.1f, .momentum = 0.0f};
    for (int i = 0; i < n->g.count; i++)
        for (int p = 0; p < n->g.layers[i]->param_count; p++) {
            Param *param = &n->g.layers[i]->params[p];
            if (param->buffer) continue;
            if (n->b->sgd_update(n->b, &(SgdUpdateTensors){.param = tensor_f32(&param->value),
                                 .grad = tensor_f32(&param->grad), .velocity = NULL,
                                 .n = tensor_numel(&param->value)}, &h, &st)) {
                report_status("sgd_update", &st);
                test_failures++;
                return -1;
            }
        }
    return 0;
}

// Trains nets a and b (one model, two ways of running it: `a_way`, `b_way`) `steps` SGD
// steps on the same batches and counts a failure for each step whose loss, and each
// parameter whose bits, then differ: for what must change how a step runs, not what it
// computes (test_fusion.c, test_layouts.c).
static inline void net_train_alike(Net *a, Net *b, int steps, const char *label,
                                   const char *a_way, const char *b_way) {
    for (int step = 0; step < steps; step++) {
        double loss_a, loss_b;
        if (net_sgd_step(a, &loss_a) || net_sgd_step(b, &loss_b)) break;
        if (loss_a != loss_b) {
            fprintf(stderr, "%s: step %d loss %.17g %s vs %.17g %s\n", label, step, loss_a,
                    a_way, loss_b, b_way);
            test_failures++;
        }
    }
    // By name: one way may run layers without parameters that the other lacks
    // (test_layouts.c's to_nhwc).
    for (int i = 0; i < a->g.count; i++) {
        if (a->g.layers[i]->param_count == 0) continue;
        int j = 0;
        while (j < b->g.count && strcmp(b->g.layers[j]->name, a->g.layers[i]->name) != 0) j++;
        if (j == b->g.count || b->g.layers[j]->param_count != a->g.layers[i]->param_count) {
            fprintf(stderr, "%s: %s has no twin %s\n", label, a->g.layers[i]->name, b_way);
            test_failures++;
            continue;
        }
        for (int p = 0; p < a->g.layers[i]->param_count; p++) {
            const Tensor *x = &a->g.layers[i]->params[p].value;
            const Tensor *y = &b->g.layers[j]->params[p].value;
            if (memcmp(x->data, y->data, x->bytes) != 0) {
                fprintf(stderr, "%s: %s.%s differs after %d steps %s and %s\n", label,
                        a->g.layers[i]->name, a->g.layers[i]->params[p].name, steps, a_way,
                        b_way);
                test_failures++;
            }
        }
    }
}

#endif
