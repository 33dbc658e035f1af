// The JSON of `trainer bench --json` (diagnostics/bench.h): one object with the
// device, its peaks, how the figures were measured, and one member per benchmark run.
#include "diagnostics/bench.h"

#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "base/json.h"
#include "base/lever.h"

// A measured figure or a peak: a positive finite number, or null (unknown). Never 0.
static cJSON *figure(double value) {
    return value > 0.0 && isfinite(value) ? cJSON_CreateNumber(value) : cJSON_CreateNull();
}

static void add_figure(cJSON *object, const char *key, double value) {
    cJSON_AddItemToObject(object, key, figure(value));
}

static void add_fraction(cJSON *object, double measured, double peak) {
    add_figure(object, "fraction_of_peak", peak > 0.0 ? measured / peak : 0.0);
}

static cJSON *device_json(const BenchDevice *d) {
    cJSON *device = cJSON_CreateObject();
    json_add_text(device, "name", d->name);
    json_add_text(device, "kind", d->is_gpu ? "cuda" : "cpu");
    json_add_text(device, "detail", d->detail);
    if (d->is_gpu) {
        char capability[16];
        snprintf(capability, sizeof capability, "%d.%d", d->gpu.compute_major,
                 d->gpu.compute_minor);
        json_add_text(device, "compute_capability", capability);
        cJSON_AddNumberToObject(device, "multiprocessors", d->gpu.multiprocessors);
        add_figure(device, "sm_clock_mhz", d->gpu.clock_khz / 1000.0);
        add_figure(device, "memory_clock_mhz", d->gpu.memory_clock_khz / 1000.0);
        add_figure(device, "memory_bus_bits", d->gpu.memory_bus_bits);
        add_figure(device, "l2_bytes", (double)d->gpu.l2_bytes);
    }
    cJSON *peaks = cJSON_CreateObject();
    for (int p = 0; p < BENCH_PRECISION_COUNT; p++)
        add_figure(peaks, bench_precision_name((BenchPrecision)p), d->peak_tflops[p]);
    cJSON_AddItemToObject(device, "peak_tflops", peaks);
    add_figure(device, "peak_memory_gbs", d->peak_memory_gbs);
    json_add_text(device, "peak_unknown", d->peak_unknown[0] ? d->peak_unknown : NULL);
    return device;
}

static cJSON *gemm_json(const BenchGemmReport *r) {
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; i < r->row_count; i++) {
        const BenchGemmRow *g = &r->rows[i];
        cJSON *row = cJSON_CreateObject();
        json_add_text(row, "precision", bench_precision_name(g->precision));
        cJSON_AddNumberToObject(row, "m", g->size.m);
        cJSON_AddNumberToObject(row, "n", g->size.n);
        cJSON_AddNumberToObject(row, "k", g->size.k);
        cJSON_AddBoolToObject(row, "available", g->available);
        if (!g->available) {
            json_add_text(row, "reason", g->unavailable);
        } else {
            add_figure(row, "median_ms", g->median_ms);
            add_figure(row, "tflops", g->tflops);
            add_figure(row, "peak_tflops", g->peak_tflops);
            add_fraction(row, g->tflops, g->peak_tflops);
            cJSON_AddNumberToObject(row, "gemms_per_repeat", g->per_repeat);
            cJSON_AddNumberToObject(row, "input_sets", g->input_sets);
            cJSON_AddNumberToObject(row, "input_bytes", (double)g->input_bytes);
        }
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

static cJSON *memory_json(const BenchMemoryReport *r) {
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; i < r->row_count; i++) {
        const BenchCopyRow *c = &r->rows[i];
        cJSON *row = cJSON_CreateObject();
        json_add_text(row, "copy", bench_copy_name(c->kind));
        cJSON_AddNumberToObject(row, "bytes", (double)c->bytes);
        cJSON_AddBoolToObject(row, "available", c->available);
        if (!c->available) {
            json_add_text(row, "reason", c->unavailable);
        } else {
            add_figure(row, "median_ms", c->median_ms);
            add_figure(row, "gbs", c->gbs);
            add_figure(row, "peak_gbs", c->peak_gbs);
            add_fraction(row, c->gbs, c->peak_gbs);
            json_add_text(row, "peak_unknown", c->peak_gbs > 0.0 ? NULL : c->peak_unknown);
        }
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

static cJSON *geometry_json(const Conv2dGeometry *g) {
    cJSON *shape = cJSON_CreateObject();
    cJSON_AddNumberToObject(shape, "batch", g->batch);
    cJSON_AddNumberToObject(shape, "in_channels", g->in_channels);
    cJSON_AddNumberToObject(shape, "height", g->in_h);
    cJSON_AddNumberToObject(shape, "width", g->in_w);
    cJSON_AddNumberToObject(shape, "out_channels", g->out_channels);
    cJSON_AddNumberToObject(shape, "kernel", g->kernel_h);
    cJSON_AddNumberToObject(shape, "stride", g->stride_h);
    cJSON_AddNumberToObject(shape, "pad", g->pad_top);
    return shape;
}

static cJSON *conv_json(const BenchConvReport *r) {
    cJSON *conv = cJSON_CreateObject();
    cJSON_AddNumberToObject(conv, "batch", r->batch);
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; i < r->row_count; i++) {
        const BenchConvRow *c = &r->rows[i];
        cJSON *row = cJSON_CreateObject();
        json_add_text(row, "shape", c->shape);
        cJSON_AddItemToObject(row, "geometry", geometry_json(&c->geometry));
        json_add_text(row, "op", bench_conv_op_name(c->op));
        json_add_text(row, "precision", bench_precision_name(c->precision));
        json_add_text(row, "dtype", dtype_name(c->geometry.dtype));
        cJSON_AddBoolToObject(row, "available", c->available);
        if (!c->available) {
            json_add_text(row, "reason", c->unavailable);
        } else {
            json_add_text(row, "algorithm", c->algorithm);
            cJSON_AddNumberToObject(row, "workspace_bytes", (double)c->workspace_bytes);
            add_figure(row, "median_ms", c->median_ms);
            add_figure(row, "tflops", c->tflops);
            add_figure(row, "peak_tflops", c->peak_tflops);
            add_fraction(row, c->tflops, c->peak_tflops);
            cJSON_AddNumberToObject(row, "input_sets", c->input_sets);
        }
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(conv, "rows", rows);
    return conv;
}

// A layer's time below the timer's resolution is null with a flag saying so.
static void add_layer_time(cJSON *object, const char *key, const char *flag, double ms) {
    add_figure(object, key, ms);
    if (ms <= 0.0) cJSON_AddBoolToObject(object, flag, 1);
}

static cJSON *layers_json(const BenchTrainReport *r) {
    cJSON *layers = cJSON_CreateArray();
    for (int i = 0; i < r->layer_count; i++) {
        const BenchLayerTime *l = &r->layers[i];
        cJSON *layer = cJSON_CreateObject();
        json_add_text(layer, "name", l->name);
        json_add_text(layer, "kind", l->kind);
        add_layer_time(layer, "forward_ms", "forward_below_resolution", l->forward_ms);
        add_layer_time(layer, "backward_ms", "backward_below_resolution", l->backward_ms);
        add_figure(layer, "forward_flops_per_sample", l->forward_flops);
        if (l->fused_into[0]) json_add_text(layer, "fused_into", l->fused_into);
        cJSON_AddItemToArray(layers, layer);
    }
    return layers;
}

static cJSON *levers_json(unsigned disabled) {
    cJSON *off = cJSON_CreateArray();
    for (int i = 0; i < LEVER_COUNT; i++)
        if (lever_off(disabled, (Lever)i))
            cJSON_AddItemToArray(off, cJSON_CreateString(lever_names[i]));
    return off;
}

static cJSON *train_json(const BenchTrainReport *r, int repeats, unsigned disabled_levers,
                         int nhwc_layers) {
    cJSON *train = cJSON_CreateObject();
    json_add_text(train, "model", r->model);
    cJSON_AddNumberToObject(train, "batch", r->batch);
    cJSON_AddNumberToObject(train, "steps_per_repeat", r->steps);
    json_add_text(train, "optimizer", r->optimizer);
    add_figure(train, "samples_per_second", r->samples_per_second);
    cJSON *each = cJSON_CreateArray();
    for (int i = 0; i < repeats; i++)
        cJSON_AddItemToArray(each, figure(r->repeat_samples_per_second[i]));
    cJSON_AddItemToObject(train, "repeat_samples_per_second", each);
    add_figure(train, "step_ms", r->step_ms);
    if (r->cuda_graph[0]) json_add_text(train, "cuda_graph", r->cuda_graph);
    cJSON_AddItemToObject(train, "levers_off", levers_json(disabled_levers));
    json_add_text(train, "layout", nhwc_layers ? "nhwc" : "nchw");
    // Only under NHWC: a 0 would read as a figure (the JSON never carries zeros as data).
    if (nhwc_layers) cJSON_AddNumberToObject(train, "nhwc_layers", nhwc_layers);
    add_figure(train, "forward_flops_per_sample", r->forward_flops_per_sample);
    add_figure(train, "tflops", r->tflops);
    json_add_text(train, "precision", bench_precision_name(r->precision));
    // null without fp16 loss scaling, and no counts then: a 0 there would read as measured.
    add_figure(train, "loss_scale", r->loss_scale);
    if (r->loss_scale > 0.0) {
        cJSON_AddNumberToObject(train, "skipped_steps", (double)r->skipped_steps);
        cJSON_AddNumberToObject(train, "steps_run", (double)r->steps_run);
    }
    add_figure(train, "peak_tflops", r->peak_tflops);
    add_fraction(train, r->tflops, r->peak_tflops);
    if (r->layers) {
        cJSON *per_layer = cJSON_CreateObject();
        cJSON_AddNumberToObject(per_layer, "steps", r->per_layer_steps);
        cJSON_AddItemToObject(per_layer, "layers", layers_json(r));
        add_layer_time(per_layer, "update_ms", "update_below_resolution", r->optimizer_ms);
        cJSON_AddItemToObject(train, "per_layer", per_layer);
    }
    return train;
}

cJSON *bench_json(const BenchRun *run) {
    cJSON *root = cJSON_CreateObject();
    json_add_text(root, "trainer_version", TRAINER_VERSION);
    json_add_text(root, "benchmark", run->benchmark);
    cJSON_AddItemToObject(root, "device", device_json(run->device));
    cJSON_AddNumberToObject(root, "repeats", run->options->repeats);
    cJSON_AddNumberToObject(root, "warmup", run->options->warmup);
    json_add_text(root, "statistic", "median of the repeats, device time");
    if (run->gemm) cJSON_AddItemToObject(root, "gemm", gemm_json(run->gemm));
    if (run->memory) cJSON_AddItemToObject(root, "memory", memory_json(run->memory));
    if (run->conv) cJSON_AddItemToObject(root, "conv", conv_json(run->conv));
    if (run->train)
        cJSON_AddItemToObject(root, "train", train_json(run->train, run->options->repeats,
                                                      run->disabled_levers, run->nhwc_layers));
    return root;
}
