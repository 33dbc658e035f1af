// `trainer check`'s report (diagnostics/check_report.h).
#include "diagnostics/check_report.h"

#include <stdio.h>
#include <string.h>

#include "core/layer.h"
#include "core/optimizer.h"
#include "core/run.h"

// A fused pair shows as "dense+relu" and "relu (in dense1)": the first writes the
// second's output and keeps none of its own (its act bytes are its gradient's alone).
static const char *layer_kind_label(const Layer *l, char *buf, size_t size) {
    if (l->kind->variant) snprintf(buf, size, "%s", l->kind->variant(l));
    else snprintf(buf, size, "%s%s", l->kind->is_loss ? "loss " : "", l->kind->name);
    size_t used = strlen(buf);
    if (l->fused_activation && l->fused_activation->kind->variant)
        snprintf(buf + used, size - used, "+%s",
                 l->fused_activation->kind->variant(l->fused_activation));
    else if (l->input_count && l->inputs[0]->fused_activation == l)
        snprintf(buf + used, size - used, " (in %s)", l->inputs[0]->name);
    return buf;
}

static void write_table(const TextOut *out, const Graph *g) {
    char shape[64], count[32], bytes[32], flops[32], kind[160];
    text_printf(out, "%-16s %-26s %-5s %-10s %-5s %12s %16s %14s\n", "layer", "kind", "line",
                "output", "dtype", "parameters", "act bytes/sample", "flops/sample");
    size_t total_bytes = 0;
    double total_flops = 0.0;
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        size_t act = layer_activation_bytes(l, 1);
        double f = l->kind->flops ? l->kind->flops(l) : 0.0;
        total_bytes += act;
        total_flops += f;
        text_printf(out, "%-16s %-26s %-5d %-10s %-5s %12s %16s %14s\n", l->name,
               layer_kind_label(l, kind, sizeof kind), l->line,
               shape_format(&l->out_shape, shape, sizeof shape), dtype_name(l->out_dtype),
               format_count(layer_parameter_count(l), count, sizeof count),
               format_count((long)act, bytes, sizeof bytes),
               format_count((long)f, flops, sizeof flops));
    }
    text_printf(out, "%-16s %-26s %-5s %-10s %-5s %12s %16s %14s\n", "total", "", "", "", "",
           format_count(graph_parameter_count(g), count, sizeof count),
           format_count((long)total_bytes, bytes, sizeof bytes),
           format_count((long)total_flops, flops, sizeof flops));
}

// Which act= activations run inside their layer's op (graph_fuse_activations).
static void write_fusion(const TextOut *out, const Graph *g, const RunConfig *config) {
    char names[512] = "";
    int fused = 0;
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        if (!l->fused_activation) continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", fused ? ", " : "", l->name);
        fused++;
    }
    if (config->train.no_fusion)
        text_printf(out, "fusion: off (--no-fuse or train fuse=false): every activation is its "
                         "own pass\n");
    else if (fused)
        text_printf(out, "fusion: %d act= activation%s computed inside the forward op of %s, whose "
               "pre-activation outputs are not kept (--no-fuse to run them apart)\n", fused,
               fused == 1 ? "" : "s", names);
    else
        text_printf(out, "fusion: none (no dense or conv2d with act=relu, leaky_relu, sigmoid or "
                         "tanh)\n");
}

// Which layers hold NHWC images (graph_set_layouts), or would under train --layout nhwc
// on a GPU. The layers of an NHWC trunk are consecutive in the table.
static int write_layouts(const TextOut *out, Graph *g, const Device *device, Status *st) {
    int here = device->backend->nhwc_activations;
    NhwcPreview nhwc;
    TRY(run_preview_nhwc(g, here, &nhwc, st));
    int count = nhwc.count;
    const char *first = nhwc.first, *last = nhwc.last, *reorders = nhwc.reorders,
               *converts = nhwc.converts;
    if (!count) {
        text_printf(out, "layout: NCHW throughout (NHWC is for the images between convolutions; no "
               "layer here can take it)\n");
        return 0;
    }
    char trunk[2 * LAYER_NAME_MAX + 64], notes[2 * LAYER_NAME_MAX + 128] = "";
    snprintf(trunk, sizeof trunk, "%d layer%s from %s to %s", count, count == 1 ? "" : "s",
             first, last);
    size_t used = 0;
    if (converts[0])
        used += (size_t)snprintf(notes, sizeof notes, " (%s converts the input into NHWC first",
                                 converts);
    if (reorders[0])
        snprintf(notes + used, sizeof notes - used, "%s%s copies them back into NCHW order)",
                 used ? "; " : " (", reorders);
    else if (used)
        snprintf(notes + used, sizeof notes - used, ")");
    if (here)
        text_printf(out, "layout: NHWC for the %s%s (--layout nhwc)\n", trunk, notes);
    else
        text_printf(out, "layout: NCHW; train --layout nhwc on a GPU lays the %s out NHWC, as "
                         "cuDNN's "
               "tensor-core convolutions read it%s\n", trunk, notes);
    return 0;
}

int check_write_model(const TextOut *out, Graph *g, const RunConfig *config,
                      const Device *device, Status *st) {
    char optimizer[160], count[32];
    text_printf(out, "model %s: valid, %s parameters, %d classes\n\n", g->path,
                format_count(graph_parameter_count(g), count, sizeof count), graph_classes(g));
    write_table(out, g);
    text_printf(out, "\noptimizer %s\n",
                optimizer_describe(&config->optimizer, optimizer, sizeof optimizer));
    text_printf(out, "train batch=%d epochs=%d seed=%ld\n", config->train.batch,
                config->train.epochs, config->train.seed);
    write_fusion(out, g, config);
    return write_layouts(out, g, device, st);  // fails only out of host memory
}

// ---- the memory plan -----------------------------------------------------------------------

// "  parameters              1.6 MiB  note"
static void write_category(const TextOut *out, const char *name, size_t bytes,
                           const char *note) {
    char text[32];
    text_printf(out, "  %-22s %12s%s%s\n", name, alloc_format_bytes(bytes, text, sizeof text),
           note[0] ? "  " : "", note);
}

void check_write_plan(const TextOut *out, const RunConfig *config, const MemoryPlan *plan,
                      int have_data) {
    char a[32], b[32], c[32], d[32], e[32];
    size_t per_batch = plan->activations + plan->activation_gradients + plan->layer_state +
                       plan->workspace + plan->labels;
    // The one-line summary (what `trainer check` has always printed), then the detail.
    text_printf(out, "memory at batch %d: %s parameters + %s gradients + %s optimizer state + %s "
           "activations and workspace",
           plan->batch, alloc_format_bytes(plan->parameters, a, sizeof a),
           alloc_format_bytes(plan->gradients, b, sizeof b),
           alloc_format_bytes(plan->optimizer_state, c, sizeof c),
           alloc_format_bytes(per_batch, d, sizeof d));
    if (plan->dataset)
        text_printf(out, " + %s dataset", alloc_format_bytes(plan->dataset, e, sizeof e));
    text_printf(out, " = %s\n", alloc_format_bytes(plan->total, a, sizeof a));

    text_printf(out, "\nmemory plan for %s at batch %d on %s (every tensor rounded up to %d-byte "
                     "blocks, "
           "as the allocator does):\n",
           plan->training ? "training" : "evaluation", plan->batch, plan->device, ALLOC_GRANULE);
    // What the precision does to the bytes, said plainly since bf16 is often read as half
    // the memory: the activations shrink, the parameters and optimizer state do not.
    char kept[160], but[200] = "";
    if (layer_kinds_keeping_f32(kept, sizeof kept)[0])
        snprintf(but, sizeof but, " (but those of %s layers)", kept);
    if (plan->activation_dtype == DTYPE_F32)
        text_printf(out, "  (precision %s: every tensor in f32)\n",
                    precision_name(plan->precision));
    else
        text_printf(out, "  (precision %s: activations and their gradients in %s from the first "
                         "layer to "
               "the last%s, with a 16-bit copy of the weights for the GEMMs and convolutions; "
               "the input, the loss, parameters, gradients and optimizer state in f32)\n",
               precision_name(plan->precision), dtype_name(plan->activation_dtype), but);
    char note[160];
    write_category(out, "parameters", plan->parameters, "values and buffers");
    write_category(out, "parameter gradients", plan->gradients, "");
    snprintf(note, sizeof note, "%s: %d tensor%s per parameter",
             optimizer_names[config->optimizer.kind], plan->optimizer_slots,
             plan->optimizer_slots == 1 ? "" : "s");
    write_category(out, "optimizer state", plan->optimizer_state, note);
    write_category(out, "activations", plan->activations,
                   "every layer's output, kept for backward (a fused dense/conv2d keeps none)");
    write_category(out, "activation gradients", plan->activation_gradients, "");
    write_category(out, "layer state", plan->layer_state,
                   "dropout masks, maxpool argmax, loss rows, batchnorm statistics");
    write_category(out, "workspace", plan->workspace, "conv2d lowering (im2col / cuDNN)");
    write_category(out, "labels and loss sums", plan->labels, "");
    if (!have_data) {
        snprintf(note, sizeof note, "not planned: --data adds the copies training keeps on the "
                 "device");
    } else {
        snprintf(note, sizeof note, "training set %s, test set %s",
                 plan->train_set_on_device ? "on the device" : "staged through the host",
                 plan->test_set_on_device ? "on the device" : "staged through the host");
    }
    write_category(out, "dataset", plan->dataset, note);
    write_category(out, "total", plan->total, "the allocator's peak in use");
    if (plan->unplanned[0])
        text_printf(out, "  (not planned, so missing from the total: what %s allocate%s)\n",
               plan->unplanned, strchr(plan->unplanned, ',') ? "" : "s");

    text_printf(out, "\n%-16s %-22s %12s %12s %12s %12s %12s\n", "layer", "kind", "parameters",
           "activations", "state", "workspace", "total");
    for (int i = 0; i < plan->layer_count; i++) {
        const MemoryPlanLayer *l = &plan->layers[i];
        text_printf(out, "%-16s %-22s %12s %12s %12s %12s %12s\n", l->name, l->kind,
               alloc_format_bytes(l->parameters + l->gradients + l->optimizer_state, a, sizeof a),
               alloc_format_bytes(l->activations + l->activation_gradients, b, sizeof b),
               alloc_format_bytes(l->layer_state, c, sizeof c),
               alloc_format_bytes(l->workspace, d, sizeof d),
               alloc_format_bytes(l->bytes, e, sizeof e));
    }
    text_printf(out, "(parameters: with their gradients and optimizer state; activations: with "
                     "their "
           "gradients)\n");
}

// The largest batch for --memory-limit, or for the device's total memory less a margin.
int check_write_largest_batch(const TextOut *out, const Graph *g, const Device *device,
                              const MemoryPlanOptions *base, Status *st) {
    const Backend *b = device->backend;
    size_t budget;
    char budget_text[32], total_text[32], why[256];
    MemoryPlanOptions options = *base;
    if (device->alloc.limit) {
        budget = device->alloc.limit;
        snprintf(why, sizeof why, "--memory-limit");
    } else {
        size_t total = b->total_memory ? b->total_memory(b) : 0;
        if (total == 0) {
            text_printf(out, "largest batch: unknown (%s does not report its memory; give "
                   "--memory-limit)\n", device->name);
            return 0;
        }
        budget = (size_t)((double)total * (1.0 - MEMORY_PLAN_DEVICE_MARGIN));
        // The op table has no free-memory query, so this is the whole device: what other
        // processes hold is not subtracted.
        snprintf(why, sizeof why, "%s total %s less %.0f%% for what the allocator does not see%s",
                 device->name, alloc_format_bytes(total, total_text, sizeof total_text),
                 100.0 * MEMORY_PLAN_DEVICE_MARGIN,
                 b->kind == BACKEND_CPU
                     ? ""
                     : " (CUDA context, cuBLAS/cuDNN); memory other processes use is not "
                       "known to the plan");
    }
    options.limit = device->alloc.limit;
    int batch = 0;
    TRY(memory_plan_largest_batch_with(g, b, &options, budget, &batch, st));
    alloc_format_bytes(budget, budget_text, sizeof budget_text);
    if (batch == 0) {
        MemoryPlan plan;
        options.batch = 1;
        TRY(memory_plan(g, b, &options, &plan, st));
        char need[32];
        text_printf(out, "largest batch in %s (%s): none; batch 1 needs %s\n", budget_text, why,
               alloc_format_bytes(plan.total, need, sizeof need));
        memory_plan_free(&plan);
        return 0;
    }
    MemoryPlan fit;
    options.batch = batch;
    TRY(memory_plan(g, b, &options, &fit, st));
    char fit_text[32];
    // The plan takes no batch past the training set: a larger one that fits is that set.
    text_printf(out, "largest batch in %s (%s): %d (plan %s)%s\n", budget_text, why, fit.batch,
           alloc_format_bytes(fit.total, fit_text, sizeof fit_text),
           fit.batch < batch                ? ", the whole training set: a larger one fits"
           : batch == MEMORY_PLAN_MAX_BATCH ? ", the most the planner tries"
                                            : "");
    memory_plan_free(&fit);
    return 0;
}

