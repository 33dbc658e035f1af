#include "core/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "core/collective.h"
#include "core/lr_schedule.h"
#include "core/optimizer.h"
#include "core/layer.h"
#include "core/step_graph.h"

int run_build_model(const char *path, int no_fuse, ModelFile *file, Graph *g,
                    RunConfig *config, Status *st) {
    TRY(model_file_read(path, file, st));
    int rc = graph_build(file, g, config, st);
    if (rc) {
        model_file_free(file);
        return rc;
    }
    if (no_fuse) {
        config->train.no_fusion = 1;
        graph_fuse_activations(g, 0);
    }
    return 0;
}

static RunDeviceFacts device_facts(const Device *d) {
    return (RunDeviceFacts){.target = precision_target(d),
                            .is_cpu = d->backend->kind == BACKEND_CPU,
                            .is_cuda = d->backend->kind == BACKEND_CUDA};
}

// The device runs out first, and the plan (--batch auto, check) is made against a budget
// that is not there.
static void notice_limit_over_memory(const Device *d, const RunNotice *notice) {
    size_t total = d->backend->total_memory ? d->backend->total_memory(d->backend) : 0;
    if (!d->alloc.limit || !total || d->alloc.limit <= total) return;
    char limit[32], memory[32];
    run_notice_say(notice, "--memory-limit %s is more than %s's %s of memory: it limits "
                   "nothing", alloc_format_bytes(d->alloc.limit, limit, sizeof limit), d->name,
                   alloc_format_bytes(total, memory, sizeof memory));
}

static int open_device(Run *run, const RunSetup *s, int i, Status *st) {
    const RunOptions *o = s->options;
    DeviceOptions options = s->device;
    options.spec = o->devices[i];
    options.precision = o->precision.precision;
    options.default_ordinal = o->default_ordinal;
    options.disabled_levers = o->disabled_levers;
    options.nhwc = o->nhwc;
    // A --gpus device's errors name the list, not --device, which the user did not type.
    char gpus[400];
    snprintf(gpus, sizeof gpus, "--gpus %s", o->gpus ? o->gpus : "");
    options.named_by = o->from_gpus ? gpus : NULL;
    Device *d = &run->devices[i];
    char fallback[512];
    TRY(device_open(&options, d, fallback, sizeof fallback, st));
    run->devices_open++;
    if (fallback[0]) run_notice_say(&s->fallback, "%s", fallback);
    notice_limit_over_memory(d, &s->notice);
    RunDeviceFacts facts = device_facts(d);
    if (o->disabled_levers && facts.is_cuda) {
        char names[256];
        run_notice_say(&s->notice, "%s: CUDA levers off (--without): %s", d->name,
                       lever_set_format(o->disabled_levers, names, sizeof names));
    }
    return run_options_check_device(o, &facts, st);
}

// Step 1: one device per --gpus entry; the replicas of --replicas share the one device.
static int open_devices(Run *run, const RunSetup *s, Status *st) {
    const RunOptions *o = s->options;
    run->count = s->purpose == RUN_TRAIN ? o->replicas : 1;
    for (int i = 0; i < o->device_count; i++) TRY(open_device(run, s, i, st));
    for (int i = 0; i < run->count; i++)
        run->device_list[i] = &run->devices[o->device_count > 1 ? i : 0];
    return 0;
}

// The graph's activations stored as `computed` stores them, and laid out as device `d`
// prefers; how many layers hold NHWC images is said.
static int store_and_lay_out(Graph *g, Precision computed, const Device *d,
                             const RunNotice *notice, Status *st) {
    TRY(graph_set_storage(g, precision_activation_dtype(computed), st));
    TRY(graph_set_layouts(g, d->backend->nhwc_activations, st));
    int nhwc = graph_nhwc_layers(g);
    if (nhwc)
        run_notice_say(notice, "%s: %d layer%s NHWC images (--layout nhwc)", d->name, nhwc,
                       nhwc == 1 ? " holds" : "s hold");
    else if (d->backend->nhwc_activations)
        run_notice_say(notice, "--layout nhwc: no layer here can take NHWC images, so every "
                       "activation stays NCHW (trainer check shows the layout)");
    return 0;
}

// check on a CPU it chose itself: the plan stays what was asked for (a GPU's), a refusal
// kept for check to show.
static int keep_precision_refusal(Run *run, const RunSetup *s, Graph *g, Status *st) {
    const RunOptions *o = s->options;
    RunDeviceFacts facts = device_facts(&run->devices[0]);
    RunNotice silent = {0};
    status_clear(s->refusal);
    if (run_options_precision(o, g, &facts, &silent, &run->precision, s->refusal))
        run->precision = o->precision.precision;
    return graph_set_storage(g, precision_activation_dtype(run->precision), st);
}

// Step 3: every device can compute in the precision asked for, checked before the first
// kernel; replica 0's graph is stored and laid out for each in turn.
static int apply_precision(Run *run, const RunSetup *s, Graph *g, Status *st) {
    if (s->keep_refusal && run->devices[0].backend->kind == BACKEND_CPU)
        return keep_precision_refusal(run, s, g, st);
    for (int i = 0; i < run->devices_open; i++) {
        RunDeviceFacts facts = device_facts(&run->devices[i]);
        Precision computed;
        TRY(run_options_precision(s->options, g, &facts, &s->notice, &computed, st));
        TRY(store_and_lay_out(g, computed, &run->devices[i], &s->notice, st));
        if (i == 0) run->precision = computed;
    }
    return 0;
}

// Step 4: replicas past the first are built from the same file, fused, stored and laid
// out as the first (train_replicas makes their parameters equal).
static int build_replicas(Run *run, const RunSetup *s, Status *st) {
    for (int i = 1; i < run->count; i++) {
        Graph *g = &run->graphs[i];
        TRY(graph_build(s->file, g, NULL, st));
        run->graphs_built++;
        graph_fuse_activations(g, !s->config->train.no_fusion);
        TRY(graph_set_storage(g, precision_activation_dtype(run->precision), st));
        TRY(graph_set_layouts(g, run->device_list[i]->backend->nhwc_activations, st));
    }
    for (int i = 0; i < run->count; i++) run->graph_list[i] = &run->graphs[i];
    return 0;
}

// Step 5: eval and predict start from the weights file's parameters.
static int load_run_weights(Run *run, const RunSetup *s, Status *st) {
    Device *d = &run->devices[0];
    Graph *g = &run->graphs[0];
    TRY(graph_init_params(g, d->backend, &d->alloc, 0, st));
    return checkpoint_load_weights(g, d->backend, s->weights, &run->loaded, st);
}

// Step 5, bench train: the parameters as train's start, and the optimizer's state, so that
// a timed step is a training step.
static int init_bench_params(Run *run, const RunSetup *s, Status *st) {
    Device *d = &run->devices[0];
    Graph *g = &run->graphs[0];
    TRY(graph_init_params(g, d->backend, &d->alloc, (uint64_t)s->config->train.seed, st));
    return optimizer_prepare(g, &s->config->optimizer, d->backend, &d->alloc, st);
}

int run_open(Run *run, const RunSetup *s, Graph *first, Status *st) {
    memset(run, 0, sizeof *run);
    run->purpose = s->purpose;
    if (first) {
        run->graphs[0] = *first;
        run->graphs_built = 1;
        run->graph_list[0] = &run->graphs[0];
    }
    // A run that trains trains at the resolved batch; eval's and check's is theirs alone
    // (check reports the model file's train batch= beside its plan's).
    run->batch = s->options->batch;
    run->batch_auto = s->options->batch_auto;
    if (s->config && (s->purpose == RUN_TRAIN || s->purpose == RUN_BENCH))
        s->config->train.batch = s->options->batch;
    TRY(run_options_check_spec(s->options, st));
    TRY(open_devices(run, s, st));
    if (s->purpose == RUN_DEVICE_ONLY) return 0;
    if (s->purpose == RUN_TRAIN) {
        TRY(collective_check_choice((CollectiveChoice)s->config->world.collective,
                                    run->device_list, run->count, st));
        TRY(step_graphs_check_device(s->config->cuda_graph, run->devices[0].backend, st));
    }
    TRY(apply_precision(run, s, &run->graphs[0], st));
    TRY(build_replicas(run, s, st));
    if (s->purpose == RUN_EVAL || s->purpose == RUN_PREDICT) TRY(load_run_weights(run, s, st));
    if (s->purpose == RUN_BENCH) TRY(init_bench_params(run, s, st));
    return 0;
}

int run_init_params(Run *run, uint64_t seed, Status *st) {
    for (int i = 0; i < run->count; i++) {
        Device *d = run->device_list[i];
        if (d->backend->make_current) TRY(d->backend->make_current(d->backend, st));
        TRY(graph_init_params(run->graph_list[i], d->backend, &d->alloc, seed, st));
    }
    return 0;
}

// A resume may change the learning rate, schedule or clipping on purpose (the options are
// the user's), so it is said rather than refused: a PyTorch user would expect the
// checkpoint's own to be restored.
static void notice_changed_settings(const CheckpointPlace *p, const RunConfig *config,
                                    const RunNotice *notice) {
    char optimizer[sizeof p->optimizer_settings], schedule[sizeof p->schedule];
    optimizer_describe(&config->optimizer, optimizer, sizeof optimizer);
    schedule_describe(&config->schedule, schedule, sizeof schedule);
    const char *names[2] = {"optimizer", "schedule"};
    const char *recorded[2] = {p->optimizer_settings, p->schedule};
    const char *current[2] = {optimizer, schedule};
    for (int i = 0; i < 2; i++) {
        if (!recorded[i][0] || strcmp(recorded[i], current[i]) == 0) continue;
        char escaped[300];
        text_escape(recorded[i], strlen(recorded[i]), escaped, sizeof escaped);
        run_notice_say(notice, "resuming with %s %s; the checkpoint's run had %s", names[i],
                       current[i], escaped);
    }
}

// The checkpoint's place: its seed and batch (the data order and dropout masks depend on
// them) over the run's, and where training starts.
static void resume_place(const CheckpointPlace *p, const char *path, RunConfig *config,
                         const RunNotice *notice) {
    if (p->seed != config->train.seed || p->batch != config->train.batch)
        run_notice_say(notice, "resuming with the checkpoint's seed %ld and batch %d (the data "
                       "order and dropout masks depend on them)", p->seed, p->batch);
    config->train.seed = p->seed;
    config->train.batch = p->batch;
    config->start = (TrainStart){.epochs_done = p->epochs_done,
                                 .step_in_epoch = p->step_in_epoch,
                                 .evaluate_first = p->step_in_epoch == 0 &&
                                                   p->epochs_done > 0 && !p->epoch_evaluated};
    run_notice_say(notice, "resuming from %s: %d epoch%s and %d step%s done, %ld optimizer "
                   "step%s", path, p->epochs_done, p->epochs_done == 1 ? "" : "s",
                   p->step_in_epoch, p->step_in_epoch == 1 ? "" : "s", p->optimizer_steps,
                   p->optimizer_steps == 1 ? "" : "s");
    if (config->start.evaluate_first)
        run_notice_say(notice, "epoch %d's evaluation did not finish before the checkpoint was "
                       "written: evaluating it first", p->epochs_done);
    if (p->epochs_done >= config->train.epochs)
        run_notice_say(notice, "the checkpoint already has %d epoch%s; nothing %sto train (raise "
                       "--epochs)", p->epochs_done, p->epochs_done == 1 ? "" : "s",
                       config->start.evaluate_first ? "else " : "");
}

// Every replica's parameters and optimizer state from the one checkpoint `file`, read
// once: each replica's graph is checked against it and its tensors copied from its bytes.
// Then the run's inputs the file records, into loaded->inputs.
static int resume_replicas(Run *run, const OptimizerConfig *optimizer, const Safetensors *file,
                           const char *path, CheckpointLoaded *loaded, Status *st) {
    for (int i = 0; i < run->count; i++) {
        const Backend *b = run->device_list[i]->backend;
        if (b->make_current) TRY(b->make_current(b, st));
        TRY(optimizer_prepare(run->graph_list[i], optimizer, b, &run->device_list[i]->alloc,
                              st));
        TRY(checkpoint_load_resume_parsed(run->graph_list[i], optimizer, b, file, path, loaded,
                                          st));
        run->graph_list[i]->optimizer_steps = loaded->place.optimizer_steps;
    }
    return checkpoint_inputs_read(file, path, &loaded->inputs, st);
}

int run_resume(Run *run, RunConfig *config, const char *path, LoadedInputs *resumed,
               const RunNotice *notice, Status *st) {
    Safetensors file;
    TRY(safetensors_read_file(path, &file, st));
    CheckpointLoaded loaded;
    memset(&loaded, 0, sizeof loaded);
    int rc = resume_replicas(run, &config->optimizer, &file, path, &loaded, st);
    safetensors_free(&file);
    if (rc) return rc;
    *resumed = loaded.inputs;
    notice_changed_settings(&loaded.place, config, notice);
    // An edit of epochs= or lr= changes the text as well, so a notice, not a refusal.
    if (loaded.model_changed)
        run_notice_say(notice, "%s is not the text %s was trained from (its model_hash differs): "
                       "the layers match by name and shape; the file's model_text holds that "
                       "text", run->graph_list[0]->path, path);
    resume_place(&loaded.place, path, config, notice);
    return 0;
}

int run_init_from(Run *run, const char *path, const RunNotice *notice, Status *st) {
    char skipped[600] = "";
    int loaded = 0;
    for (int i = 0; i < run->count; i++) {
        const Backend *b = run->device_list[i]->backend;
        if (b->make_current) TRY(b->make_current(b, st));
        TRY(checkpoint_init_from(run->graph_list[i], b, path, &loaded, skipped, sizeof skipped,
                                 st));
    }
    run_notice_say(notice, "initialised %d parameter tensor%s from %s; %s%s", loaded,
                   loaded == 1 ? "" : "s", path,
                   skipped[0] ? "kept fresh (new or reshaped): " : "every parameter matched",
                   skipped);
    return 0;
}

int run_choose_batch(Run *run, RunConfig *config, const Dataset *train, const Dataset *test,
                     BatchChoice *choice, int *shared, Status *st) {
    Device *d = run->device_list[0];
    Graph *sharing[RUN_MAX_REPLICAS];
    *shared = 0;
    for (int i = 0; i < run->count; i++)
        if (run->device_list[i] == d) sharing[(*shared)++] = run->graph_list[i];
    TRY(batch_auto_choose(sharing, *shared, config, d, train, test, train->count, choice, st));
    int batch = choice->batch * run->count;
    config->train.batch = batch > train->count ? train->count : batch;
    return 0;
}

int run_allocate(Run *run, int batch, Status *st) {
    Device *d = &run->devices[0];
    free(run->labels);
    run->labels = calloc((size_t)batch, sizeof *run->labels);
    if (!run->labels)
        return status_out_of_host_memory(st, (size_t)batch * sizeof *run->labels,
                                         "for a batch's labels");
    return graph_allocate(&run->graphs[0], d->backend, &d->alloc, batch, NULL, st);
}

int run_forward_batch(Run *run, const float *images, int n, int sync_check, float *scores,
                      Status *st) {
    Graph *g = &run->graphs[0];
    const Backend *b = run->devices[0].backend;
    LayerContext ctx = {.backend = b, .alloc = &run->devices[0].alloc, .batch = n,
                        .training = 0, .labels = (const int32_t *)g->labels.data,
                        .sync_check = sync_check};
    int rc = graph_load_batch(g, b, images, run->labels, n, st);
    if (!rc) rc = graph_forward(g, &ctx, st);
    const Tensor *logits = &g->loss->inputs[0]->output;
    size_t bytes = (size_t)n * graph_classes(g) * sizeof *scores;
    if (!rc) rc = b->copy_to_host(b, scores, logits->data, bytes, st);
    return rc;
}

int run_preview_nhwc(Graph *g, int here, NhwcPreview *out, Status *st) {
    memset(out, 0, sizeof *out);
    TRY(graph_set_layouts(g, 1, st));
    out->count = graph_nhwc_layers(g);
    // Copied: the second graph_set_layouts takes the conversion out, its name with it.
    for (int i = 0; i < g->count; i++) {
        const Layer *l = g->layers[i];
        if (l->layout == LAYOUT_NHWC) {
            if (!out->first[0]) snprintf(out->first, sizeof out->first, "%s", l->name);
            snprintf(out->last, sizeof out->last, "%s", l->name);
        }
        if (layer_reorders_input(l)) snprintf(out->reorders, sizeof out->reorders, "%s", l->name);
        if (l->kind->layout_use == LAYOUT_USE_TO_NHWC)
            snprintf(out->converts, sizeof out->converts, "%s", l->name);
    }
    return graph_set_layouts(g, here, st);
}

void run_close(Run *run) {
    checkpoint_loaded_free(&run->loaded);
    free(run->labels);
    for (int i = 0; i < run->graphs_built; i++) graph_free(&run->graphs[i]);
    for (int i = 0; i < run->devices_open; i++) device_close(&run->devices[i]);
    memset(run, 0, sizeof *run);
}
