#include <stdio.h>
#include <string.h>

#include "core/optimizer.h"
#include "tools/cli.h"

static const OptionSpec check_options[] = {
    {"--batch", "N", "batch size for the memory estimate (default: the model's train batch=)"},
    {NULL, NULL, NULL},
};

const Command check_command = {
    .name = "check",
    .usage = "MODEL [--batch N]",
    .summary = "validate a model file and print its layers, shapes, parameters and memory",
    .options = check_options,
    .run = run_check,
};

static long layer_parameters(const Layer *l) {
    long total = 0;
    for (int p = 0; p < l->param_count; p++)
        if (!l->params[p].buffer) total += (long)shape_numel(&l->params[p].shape);
    return total;
}

static const char *layer_kind_label(const Layer *l, char *buf, size_t size) {
    if (l->kind->variant) snprintf(buf, size, "%s", l->kind->variant(l));
    else snprintf(buf, size, "%s%s", l->kind->is_loss ? "loss " : "", l->kind->name);
    return buf;
}

static void print_table(const Graph *g) {
    char shape[64], count[32], bytes[32], flops[32], kind[64];
    printf("%-16s %-26s %-5s %-10s %-5s %12s %16s %14s\n", "layer", "kind", "line", "output",
           "dtype", "parameters", "act bytes/sample", "flops/sample");
    size_t total_bytes = 0;
    double total_flops = 0.0;
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        size_t act = layer_activation_bytes(l, 1);
        double f = l->kind->flops ? l->kind->flops(l) : 0.0;
        total_bytes += act;
        total_flops += f;
        printf("%-16s %-26s %-5d %-10s %-5s %12s %16s %14s\n", l->name,
               layer_kind_label(l, kind, sizeof kind), l->line,
               shape_format(&l->out_shape, shape, sizeof shape), dtype_name(l->out_dtype),
               format_count(layer_parameters(l), count, sizeof count),
               format_count((long)act, bytes, sizeof bytes), format_count((long)f, flops, sizeof flops));
    }
    printf("%-16s %-26s %-5s %-10s %-5s %12s %16s %14s\n", "total", "", "", "", "",
           format_count(graph_parameter_count(g), count, sizeof count),
           format_count((long)total_bytes, bytes, sizeof bytes),
           format_count((long)total_flops, flops, sizeof flops));
}

// What training at `batch` holds on the device: parameters with gradients and optimizer
// state, and activations with their gradients. Enough to tell whether a batch will fit.
static void print_memory_estimate(const Graph *g, int batch) {
    size_t params = (size_t)graph_parameter_count(g) * sizeof(float);
    int state_slots = g->optimizer.kind == OPTIMIZER_SGD ? (g->optimizer.momentum != 0.0) : 2;
    size_t activations = 0;
    for (int i = 0; i < g->count; i++) activations += layer_activation_bytes(g->layers[i], 1);
    size_t total = params * (size_t)(2 + state_slots) + activations * (size_t)batch;
    char p[32], gr[32], s[32], a[32], t[32];
    printf("memory at batch %d: %s parameters + %s gradients + %s optimizer state + %s "
           "activations = %s\n",
           batch, alloc_format_bytes(params, p, sizeof p), alloc_format_bytes(params, gr, sizeof gr),
           alloc_format_bytes(params * (size_t)state_slots, s, sizeof s),
           alloc_format_bytes(activations * (size_t)batch, a, sizeof a),
           alloc_format_bytes(total, t, sizeof t));
}

int run_check(const Command *cmd, const ParsedArgs *args) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    if (load_model(cmd, args, &file, &g, &st)) return report_failure(&st);
    long batch = g.train.batch;
    int rc = args_int(cmd, args, "--batch", 1, 1 << 20, &batch, NULL, &st);
    if (!rc) {
        char optimizer[160], count[32];
        printf("model %s: valid, %s parameters, %d classes\n\n", g.path,
               format_count(graph_parameter_count(&g), count, sizeof count), graph_classes(&g));
        print_table(&g);
        printf("\noptimizer %s\n", optimizer_describe(&g.optimizer, optimizer, sizeof optimizer));
        printf("train batch=%d epochs=%d seed=%ld\n", g.train.batch, g.train.epochs, g.train.seed);
        print_memory_estimate(&g, (int)batch);
    }
    int exit_code = rc ? report_failure(&st) : 0;
    graph_free(&g);
    model_file_free(&file);
    return exit_code;
}
