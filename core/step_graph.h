// The training step as a CUDA Graph (--cuda-graph): which steps are captured, which are
// replayed, and which run as plain launches. The training loop (core/train.c) asks before
// each step; the backend's capture_begin/capture_end/graph_launch/graph_destroy do the
// CUDA part.
//
// A graph replays exactly the launches it recorded, with their shapes and pointers, so one
// is kept per step shape (StepShape): at most STEP_GRAPHS_KEPT, enough for an epoch's
// full steps and its short last one without recapturing every epoch. A shape runs plainly
// once before it is captured: that first step chooses cuDNN's algorithms and lets the
// libraries make their allocations, which a capture would refuse. When the activations are
// reallocated (smaller micro-batches after out of memory) every graph points at freed
// memory: step_graphs_forget drops them all, and the new shape warms up again.
#ifndef TRAINER_STEP_GRAPH_H
#define TRAINER_STEP_GRAPH_H

#include <stdint.h>

#include "core/run_config.h"
#include "kernels/backend.h"

// What a recorded step depends on besides its StepValues.
typedef struct StepShape {
    int samples;           // the step's batch: the last step of an epoch may be short
    int micro_batch;       // samples per pass: smaller after out of memory
    // The epoch's augmentation key when the run augments (a gather kernel's argument),
    // else 0: an augmented run captures again each epoch, after no warm-up step.
    uint64_t augment_key;
} StepShape;

enum { STEP_GRAPHS_KEPT = 2, STEP_GRAPHS_WARMED = 4 };

typedef struct StepGraphs {
    const Backend *backend;
    struct {
        StepShape shape;
        void *graph;       // the backend's; NULL: the slot is empty
        long last_used;
    } kept[STEP_GRAPHS_KEPT];
    StepShape warmed[STEP_GRAPHS_WARMED];  // shapes run plainly once (augment_key unused)
    int warmed_count;
    long uses;
    int disabled;          // a capture failed: plain launches for the rest of the run
    long captures, replays;
} StepGraphs;

typedef enum StepGraphAction {
    STEP_RUN_PLAIN,        // plain launches (a shape's warm-up, or graphs are off)
    STEP_CAPTURE,          // record this step, keep it (step_graphs_keep), then launch it
    STEP_REPLAY            // launch *graph
} StepGraphAction;

void step_graphs_init(StepGraphs *s, const Backend *b);
// What to do with a step of `shape`; *graph is the graph to launch for STEP_REPLAY.
StepGraphAction step_graphs_plan(StepGraphs *s, const StepShape *shape, void **graph);
// A graph just captured for `shape`, in place of the least recently used one (destroyed).
void step_graphs_keep(StepGraphs *s, const StepShape *shape, void *graph);
// Destroys every graph and forgets which shapes warmed up: the memory they used is gone.
void step_graphs_forget(StepGraphs *s);
// After a capture failed: forget, and plan STEP_RUN_PLAIN from now on.
void step_graphs_disable(StepGraphs *s);
void step_graphs_close(StepGraphs *s);

// Why this run must use plain launches even though --cuda-graph asks for graphs, as the
// rest of a sentence ("... : plain launches"); NULL when it can capture. Each names a host
// decision or host work inside the step that a replay would skip.
typedef struct StepGraphRun {
    int has_graph_ops;     // the backend fills capture_begin .. graph_destroy
    int replicas, processes;
    int sync_check;
    int loss_scaling;      // fp16
    int staged;            // the training set is staged through the host
} StepGraphRun;
const char *step_graphs_refusal(const StepGraphRun *run);

// --cuda-graph on where the device has no CUDA Graphs: STATUS_NO_DEVICE (exit 3) naming it.
int step_graphs_check_device(CudaGraphMode mode, const Backend *b, Status *st);
// "off", "auto", "on" into *mode; 1 for anything else.
int cuda_graph_mode_parse(const char *text, CudaGraphMode *mode);
// --cuda-graph's value (NULL: not given, *mode left as it is) into *mode; another word is
// STATUS_BAD_INPUT naming the three.
int cuda_graph_mode_read(const char *text, CudaGraphMode *mode, Status *st);
const char *cuda_graph_mode_name(CudaGraphMode mode);

#endif
