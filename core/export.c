// What both exporters share: the walk over the graph that asks each layer for its
// description, refusing a layer that has none.
#include "core/export.h"

#include <stdlib.h>

static int refuse_layer(const Layer *l, Status *st) {
    status_fail_at(st, STATUS_BAD_INPUT, l->path, l->line, l->column,
                   "layer '%s' (%s) cannot be exported", l->name, l->kind->name);
    status_hint(st, "trainer export knows input, dense, conv2d, maxpool, avgpool, "
                "global_avgpool, batchnorm, add, flatten, reshape, dropout and the activations");
    return STATUS_BAD_INPUT;
}

int export_describe(const Graph *g, ExportStep **steps, int *count, Status *st) {
    *steps = calloc((size_t)g->count, sizeof **steps);
    *count = 0;
    if (!*steps)
        return status_out_of_host_memory(st, (size_t)g->count * sizeof **steps,
                                         "describing the layers");
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        if (l == g->input || l == g->loss) continue;
        if (!l->kind->export_node) {
            free(*steps);
            *steps = NULL;
            return refuse_layer(l, st);
        }
        ExportStep *step = &(*steps)[(*count)++];
        step->layer = l;
        step->node.groups = 1;
        l->kind->export_node(l, &step->node);
    }
    return 0;
}

const char *export_value_name(const Graph *g, const Layer *l) {
    return l == g->input ? "input" : l->name;
}
