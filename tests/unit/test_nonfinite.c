// find_first_nonfinite names the layer where values stopped being finite: a NaN planted in
// a weight shows first in that layer's output (outputs are searched in execution order,
// so the later layers it spreads to are not named), an infinity in a parameter gradient
// alone is found among the gradients, and a finite step names nothing.
#include "check.h"
#include "core/nonfinite.h"

#include <math.h>
#include <string.h>

static const char *const model_text =
    "input shape=6\n"
    "dense units=5 act=tanh name=first\n"
    "dense units=4 name=second\n"
    "dense units=3 name=third\n"
    "loss softmax_cross_entropy\n";

enum { BATCH = 2 };

typedef struct Net {
    ModelFile file;
    Graph g;
    RunConfig config;
    Allocator alloc;
} Net;

static int build(Net *n, Status *st) {
    const Backend *b = cpu_backend();
    TRY(model_file_parse_text("net.model", model_text, &n->file, st));
    TRY(graph_build(&n->file, &n->g, &n->config, st));
    TRY(alloc_init(&n->alloc, b, ALLOC_GROW, 0, st));
    TRY(graph_init_params(&n->g, b, &n->alloc, 1, st));
    return graph_allocate(&n->g, b, &n->alloc, BATCH, NULL, st);
}

static int step(Net *n, Status *st) {
    const Backend *b = cpu_backend();
    float images[BATCH * 6];
    int32_t labels[BATCH] = {0, 2};
    for (int i = 0; i < BATCH * 6; i++) images[i] = (float)i / 10.0f;
    TRY(graph_load_batch(&n->g, b, images, labels, BATCH, st));
    LayerContext ctx = {.backend = b, .alloc = &n->alloc, .batch = BATCH, .training = 1,
                        .labels = (const int32_t *)n->g.labels.data};
    TRY(graph_forward(&n->g, &ctx, st));
    return graph_backward(&n->g, &ctx, st);
}

static Layer *layer_named(Net *n, const char *name) {
    for (int i = 0; i < n->g.count; i++)
        if (strcmp(n->g.layers[i]->name, name) == 0) return n->g.layers[i];
    return NULL;
}

static void release(Net *n) {
    graph_free(&n->g);
    alloc_destroy(&n->alloc);
    model_file_free(&n->file);
}

static void finite_step_names_nothing(void) {
    Status st;
    status_clear(&st);
    Net n;
    CHECK_INT_EQ(build(&n, &st) || step(&n, &st), 0);
    NonfiniteSite site;
    CHECK_INT_EQ(find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st), 0);
    CHECK(site.layer == NULL);
    release(&n);
}

// A weight gone NaN (as an update leaves it) is named itself, before the outputs it made
// non-finite: the divergence error blamed the first layer's output, hiding the update.
static void nan_weight_names_the_parameter(void) {
    Status st;
    status_clear(&st);
    Net n;
    CHECK_INT_EQ(build(&n, &st), 0);
    tensor_f32(&layer_named(&n, "second")->params[0].value)[3] = NAN;
    CHECK_INT_EQ(step(&n, &st), 0);
    NonfiniteSite site;
    CHECK_INT_EQ(find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st), 0);
    CHECK(site.layer == layer_named(&n, "second"));
    CHECK_CONTAINS(site.what, "the value of parameter 'second.");
    release(&n);
}

// Every parameter NaN (the updates between two loss reads spread it): no layer is named,
// as which went first is not known (the first layer's was blamed).
static void every_weight_nan_names_no_layer(void) {
    Status st;
    status_clear(&st);
    Net n;
    CHECK_INT_EQ(build(&n, &st) || step(&n, &st), 0);
    for (int i = 0; i < n.g.count; i++)
        for (int k = 0; k < n.g.layers[i]->param_count; k++)
            tensor_f32(&n.g.layers[i]->params[k].value)[0] = NAN;
    NonfiniteSite site;
    CHECK_INT_EQ(find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st), 0);
    CHECK(site.everywhere);
    CHECK(site.layer == NULL);
    release(&n);
}

static void infinite_gradient_alone_is_found(void) {
    Status st;
    status_clear(&st);
    Net n;
    CHECK_INT_EQ(build(&n, &st) || step(&n, &st), 0);
    tensor_f32(&layer_named(&n, "first")->params[1].grad)[0] = INFINITY;
    NonfiniteSite site;
    CHECK_INT_EQ(find_first_nonfinite(&n.g, cpu_backend(), &n.alloc, &site, &st), 0);
    CHECK(site.layer == layer_named(&n, "first"));
    CHECK_CONTAINS(site.what, "the gradient of parameter 'first.");
    release(&n);
}

int main(void) {
    finite_step_names_nothing();
    nan_weight_names_the_parameter();
    every_weight_nan_names_no_layer();
    infinite_gradient_alone_is_found();
    return test_exit_code("test_nonfinite");
}
