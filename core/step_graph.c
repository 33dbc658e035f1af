#include "core/step_graph.h"

#include <string.h>

void step_graphs_init(StepGraphs *s, const Backend *b) {
    memset(s, 0, sizeof *s);
    s->backend = b;
}

static int same_pass_shape(const StepShape *a, const StepShape *b) {
    return a->samples == b->samples && a->micro_batch == b->micro_batch;
}

static int warmed_up(const StepGraphs *s, const StepShape *shape) {
    for (int i = 0; i < s->warmed_count; i++)
        if (same_pass_shape(&s->warmed[i], shape)) return 1;
    return 0;
}

// More shapes than the list holds (micro-batches that shrank several times) start over:
// a shape forgotten only warms up again.
static void note_warmed(StepGraphs *s, const StepShape *shape) {
    if (s->warmed_count == STEP_GRAPHS_WARMED) s->warmed_count = 0;
    s->warmed[s->warmed_count++] = *shape;
}

StepGraphAction step_graphs_plan(StepGraphs *s, const StepShape *shape, void **graph) {
    *graph = NULL;
    if (s->disabled) return STEP_RUN_PLAIN;
    s->uses++;
    for (int i = 0; i < STEP_GRAPHS_KEPT; i++)
        if (s->kept[i].graph && same_pass_shape(&s->kept[i].shape, shape) &&
            s->kept[i].shape.augment_key == shape->augment_key) {
            s->kept[i].last_used = s->uses;
            s->replays++;
            *graph = s->kept[i].graph;
            return STEP_REPLAY;
        }
    if (warmed_up(s, shape)) return STEP_CAPTURE;
    note_warmed(s, shape);
    return STEP_RUN_PLAIN;
}

static void destroy_slot(StepGraphs *s, int i) {
    if (s->kept[i].graph && s->backend && s->backend->graph_destroy)
        s->backend->graph_destroy(s->backend, s->kept[i].graph);
    memset(&s->kept[i], 0, sizeof s->kept[i]);
}

void step_graphs_keep(StepGraphs *s, const StepShape *shape, void *graph) {
    int slot = 0;
    for (int i = 0; i < STEP_GRAPHS_KEPT; i++) {
        if (!s->kept[i].graph) {
            slot = i;
            break;
        }
        if (s->kept[i].last_used < s->kept[slot].last_used) slot = i;
    }
    destroy_slot(s, slot);
    s->kept[slot].shape = *shape;
    s->kept[slot].graph = graph;
    s->kept[slot].last_used = s->uses;
    s->captures++;
}

void step_graphs_forget(StepGraphs *s) {
    for (int i = 0; i < STEP_GRAPHS_KEPT; i++) destroy_slot(s, i);
    s->warmed_count = 0;
}

void step_graphs_disable(StepGraphs *s) {
    step_graphs_forget(s);
    s->disabled = 1;
}

void step_graphs_close(StepGraphs *s) { step_graphs_forget(s); }

const char *step_graphs_refusal(const StepGraphRun *run) {
    if (!run->has_graph_ops) return "this device has no CUDA Graphs";
    if (run->replicas > 1)
        return "--gpus trains several replicas, whose gradients are summed between the "
               "backward pass and the update";
    if (run->processes > 1)
        return "the processes of an mpirun launch sum their gradients between the backward "
               "pass and the update";
    if (run->sync_check) return "--sync-check waits for the device after every layer";
    if (run->loss_scaling)
        return "fp16 loss scaling reads the gradients on the host every step to decide "
               "whether to skip it";
    if (run->staged)
        return "the training set is staged through the host, each batch from a different "
               "pinned buffer";
    return NULL;
}

int step_graphs_check_device(CudaGraphMode mode, const Backend *b, Status *st) {
    if (mode != CUDA_GRAPH_ON || b->capture_begin) return 0;
    status_fail(st, STATUS_NO_DEVICE, "--cuda-graph on: %s has no CUDA Graphs; they capture "
                "a GPU's launches", b->name);
    status_hint(st, "train on a GPU (--device cuda), or use --cuda-graph auto (graphs where "
                    "the device has them) or off");
    return STATUS_NO_DEVICE;
}

static const char *const mode_names[] = {"off", "auto", "on"};

int cuda_graph_mode_parse(const char *text, CudaGraphMode *mode) {
    for (int i = 0; i < 3; i++)
        if (strcmp(text, mode_names[i]) == 0) {
            *mode = (CudaGraphMode)i;
            return 0;
        }
    return 1;
}

int cuda_graph_mode_read(const char *text, CudaGraphMode *mode, Status *st) {
    if (!text || !cuda_graph_mode_parse(text, mode)) return 0;
    status_fail(st, STATUS_BAD_INPUT, "--cuda-graph %s: expected off, auto or on", text);
    status_hint(st, "off (the default) launches every kernel; auto replays the training step "
                    "from a CUDA Graph where the run allows it; on also refuses a device "
                    "without CUDA Graphs");
    return STATUS_BAD_INPUT;
}

const char *cuda_graph_mode_name(CudaGraphMode mode) {
    return mode >= CUDA_GRAPH_OFF && mode <= CUDA_GRAPH_ON ? mode_names[mode] : "?";
}
