#include "core/nonfinite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/tensor_norms.h"

// One place a value may have gone non-finite: a layer's tensor and what to call it.
typedef struct Candidate {
    const Layer *layer;
    const Tensor *tensor;
    const char *param_name;  // NULL: the layer's output or its gradient
    int is_value;            // the parameter itself, not its gradient
} Candidate;

// A parameter an update made non-finite comes before every output: the forward that read
// it went non-finite because of it (blaming the first layer's output hid the update).
static int add_values(const Layer *l, Candidate *list, int count) {
    for (int k = 0; k < l->param_count; k++)
        if (!l->params[k].buffer && l->params[k].value.data)
            list[count++] = (Candidate){.layer = l, .tensor = &l->params[k].value,
                                        .param_name = l->params[k].name, .is_value = 1};
    return count;
}

// A view shares its input's memory, so its producer is named instead.
static int add_output(const Layer *l, Candidate *list, int count) {
    if (l->kind->output_is_view || !l->output.data) return count;
    list[count] = (Candidate){.layer = l, .tensor = &l->output};
    return count + 1;
}

static int add_gradients(const Layer *l, Candidate *list, int count) {
    if (!l->kind->output_is_view && l->grad.data)
        list[count++] = (Candidate){.layer = l, .tensor = &l->grad};
    for (int k = 0; k < l->param_count; k++)
        if (!l->params[k].buffer && l->params[k].grad.data)
            list[count++] = (Candidate){.layer = l, .tensor = &l->params[k].grad,
                                        .param_name = l->params[k].name};
    return count;
}

// `gradients` 0 after a forward pass alone: no backward wrote them, so they hold whatever
// their memory held.
static int candidates_in_order(const Graph *g, int gradients, Candidate *list) {
    int count = 0;
    for (int i = 0; i < g->count; i++) count = add_values(g->layers[i], list, count);
    for (int i = 0; i < g->count; i++) count = add_output(g->layers[i], list, count);
    for (int i = g->count - 1; gradients && i >= 0; i--)
        count = add_gradients(g->layers[i], list, count);
    return count;
}

static void describe(const Candidate *c, NonfiniteSite *site) {
    site->layer = c->layer;
    if (c->is_value)
        snprintf(site->what, sizeof site->what, "the value of parameter '%s'", c->param_name);
    else if (c->param_name)
        snprintf(site->what, sizeof site->what, "the gradient of parameter '%s'", c->param_name);
    else if (c->tensor == &c->layer->output)
        snprintf(site->what, sizeof site->what, "the output");
    else
        snprintf(site->what, sizeof site->what, "the gradient of the output");
}

// Every parameter non-finite (the loss is read every few steps: by then the updates have
// spread a NaN through the whole model): which went first is not known, and naming the
// first layer's would read as the culprit.
static int all_values_nonfinite(const Candidate *list, const double *sums, int count) {
    int values = 0;
    for (int i = 0; i < count && list[i].is_value; i++) {
        if (isfinite(sums[i])) return 0;
        values++;
    }
    return values >= 2;
}

static int search(const Graph *g, int gradients, const Backend *b, Allocator *a,
                  Candidate *list, const Tensor **tensors, double *sums, NonfiniteSite *site,
                  Status *st) {
    int count = candidates_in_order(g, gradients, list);
    for (int i = 0; i < count; i++) tensors[i] = list[i].tensor;
    TRY(tensor_sums_of_squares(b, a, tensors, count, sums, st));
    site->everywhere = all_values_nonfinite(list, sums, count);
    if (site->everywhere) return 0;
    for (int i = 0; i < count; i++)
        if (!isfinite(sums[i])) {
            describe(&list[i], site);
            return 0;
        }
    return 0;
}

static int find(const Graph *g, int gradients, const Backend *b, Allocator *a,
                NonfiniteSite *site, Status *st) {
    site->layer = NULL;
    site->everywhere = 0;
    site->what[0] = '\0';
    size_t capacity = (size_t)g->count * (2 + 2 * LAYER_MAX_PARAMS) + 1;
    Candidate *list = malloc(capacity * sizeof *list);
    const Tensor **tensors = malloc(capacity * sizeof *tensors);
    double *sums = malloc(capacity * sizeof *sums);
    int rc = list && tensors && sums
                 ? search(g, gradients, b, a, list, tensors, sums, site, st)
                 : status_out_of_host_memory(
                       st, capacity * (sizeof *list + sizeof *tensors + sizeof *sums),
                       "searching for the non-finite value");
    free(list);
    free(tensors);
    free(sums);
    return rc;
}

int find_first_nonfinite(const Graph *g, const Backend *b, Allocator *a, NonfiniteSite *site,
                         Status *st) {
    return find(g, 1, b, a, site, st);
}

int find_first_nonfinite_forward(const Graph *g, const Backend *b, Allocator *a,
                                 NonfiniteSite *site, Status *st) {
    return find(g, 0, b, a, site, st);
}
