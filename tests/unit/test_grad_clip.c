// Clipping by global norm on the CPU backend: gradients whose joint norm exceeds the limit
// come back scaled by max_norm / (norm + 1e-6) (PyTorch's clip_grad_norm_); a buffer's
// tensor is left out of the norm and untouched; under the limit nothing changes.
#include "check.h"
#include "core/grad_clip.h"

#include <math.h>
#include <string.h>

typedef struct TwoParams {
    Allocator alloc;
    Layer layer;
    Layer *layers[1];
    Graph g;
} TwoParams;

static void set_param(TwoParams *t, int k, const float *values, int n, int buffer, Status *st) {
    Param *p = &t->layer.params[k];
    Shape shape = {.rank = 1, .dims = {n}};
    snprintf(p->name, sizeof p->name, "layer.p%d", k);
    p->buffer = buffer;
    tensor_set_shape(&p->grad, DTYPE_F32, 0, &shape);
    CHECK_INT_EQ(tensor_alloc(&p->grad, &t->alloc, st), 0);
    memcpy(p->grad.data, values, (size_t)n * sizeof *values);
}

// Gradients (3, 4) and (12): norm 13. A buffer holding 100 must not count.
static void make_graph(TwoParams *t, Status *st) {
    memset(t, 0, sizeof *t);
    CHECK_INT_EQ(alloc_init(&t->alloc, cpu_backend(), ALLOC_GROW, 0, st), 0);
    set_param(t, 0, (const float[]){3.0f, 4.0f}, 2, 0, st);
    set_param(t, 1, (const float[]){12.0f}, 1, 0, st);
    set_param(t, 2, (const float[]){100.0f}, 1, 1, st);
    t->layer.param_count = 3;
    t->layers[0] = &t->layer;
    t->g.layers = t->layers;
    t->g.count = 1;
}

static void free_graph(TwoParams *t) {
    for (int k = 0; k < 3; k++) tensor_free(&t->layer.params[k].grad);
    alloc_destroy(&t->alloc);
}

static float grad_at(TwoParams *t, int k, int i) { return tensor_f32(&t->layer.params[k].grad)[i]; }

static void clipping_scales_every_gradient_by_max_over_norm(void) {
    Status st;
    status_clear(&st);
    TwoParams t;
    make_graph(&t, &st);
    double norm = 0.0;
    CHECK_INT_EQ(clip_gradients(&t.g, cpu_backend(), &t.alloc, 6.5, &norm, &st), 0);
    CHECK_NEAR(norm, 13.0, 1e-12);
    double factor = 6.5 / (13.0 + 1e-6);
    CHECK_NEAR(grad_at(&t, 0, 0), 3.0 * factor, 1e-6);
    CHECK_NEAR(grad_at(&t, 0, 1), 4.0 * factor, 1e-6);
    CHECK_NEAR(grad_at(&t, 1, 0), 12.0 * factor, 1e-6);
    CHECK(grad_at(&t, 2, 0) == 100.0f);  // a buffer: neither counted nor scaled
    free_graph(&t);
}

static void gradients_under_the_limit_are_unchanged(void) {
    Status st;
    status_clear(&st);
    TwoParams t;
    make_graph(&t, &st);
    double norm = 0.0;
    CHECK_INT_EQ(clip_gradients(&t.g, cpu_backend(), &t.alloc, 20.0, &norm, &st), 0);
    CHECK_NEAR(norm, 13.0, 1e-12);
    CHECK(grad_at(&t, 0, 0) == 3.0f && grad_at(&t, 0, 1) == 4.0f && grad_at(&t, 1, 0) == 12.0f);
    free_graph(&t);
}

int main(void) {
    clipping_scales_every_gradient_by_max_over_norm();
    gradients_under_the_limit_are_unchanged();
    return test_exit_code("test_grad_clip");
}
