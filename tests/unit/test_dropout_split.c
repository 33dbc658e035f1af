// Dropout draws its mask from each sample's place in the step (LayerContext.sample_offset),
// so a step cut into micro-batches (after out of memory) or replicas' shares drops exactly
// the units the whole step drops: the split run then trains the same model. Checked bit for
// bit on the CPU; the CUDA op uses the same hash (test_cuda_parity_elementwise compares the two).
#include <stdlib.h>

#include "check.h"
#include "core/graph.h"
#include "kernels/cpu/cpu_ops.h"

enum { BATCH = 12, FEATURES = 10 };

static const char *const model_text =
    "input shape=10\n"
    "dropout rate=0.5\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n";

typedef struct Net {
    ModelFile file;
    Graph g;
    Allocator alloc;
    const Backend *b;
    const Layer *dropout;
} Net;

static int net_open(Net *n, Status *st) {
    memset(n, 0, sizeof *n);
    n->b = cpu_backend();
    TRY(model_file_parse_text("dropout.model", model_text, &n->file, st));
    TRY(graph_build(&n->file, &n->g, NULL, st));
    TRY(alloc_init(&n->alloc, n->b, ALLOC_GROW, 0, st));
    TRY(graph_init_params(&n->g, n->b, &n->alloc, 3, st));
    TRY(graph_allocate(&n->g, n->b, &n->alloc, BATCH, NULL, st));
    for (int i = 0; i < n->g.count; i++)
        if (!strcmp(n->g.layers[i]->kind->name, "dropout")) n->dropout = n->g.layers[i];
    return n->dropout ? 0 : status_fail(st, STATUS_RUNTIME_ERROR, "no dropout layer");
}

// Dropout's output for samples [first, first + count) of the step, run as one pass.
static int pass_output(Net *n, const float *step_inputs, int first, int count, float *out,
                       Status *st) {
    int32_t labels[BATCH] = {0};
    TRY(graph_load_batch(&n->g, n->b, step_inputs + (size_t)first * FEATURES, labels, count, st));
    LayerContext ctx = {.backend = n->b, .alloc = &n->alloc, .batch = count, .training = 1,
                        .seed = 0x5eed, .sample_offset = first,
                        .labels = (const int32_t *)n->g.labels.data};
    TRY(graph_forward(&n->g, &ctx, st));
    memcpy(out, n->dropout->output.data, (size_t)count * FEATURES * sizeof *out);
    return 0;
}

static void split_passes_drop_what_the_whole_step_drops(Net *n) {
    float inputs[BATCH * FEATURES], whole[BATCH * FEATURES], split[BATCH * FEATURES];
    for (int i = 0; i < BATCH * FEATURES; i++) inputs[i] = 1.0f + (float)i;
    Status st;
    status_clear(&st);
    int rc = pass_output(n, inputs, 0, BATCH, whole, &st);
    // Uneven pieces, as three replicas of a 12-sample step with one micro-batch split.
    static const int starts[] = {0, 5, 7, BATCH};
    for (int p = 0; !rc && p < 3; p++)
        rc = pass_output(n, inputs, starts[p], starts[p + 1] - starts[p],
                         split + starts[p] * FEATURES, &st);
    if (rc) fprintf(stderr, "forward: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    int dropped = 0, differing = 0;
    for (int i = 0; i < BATCH * FEATURES; i++) {
        dropped += whole[i] == 0.0f;
        if (memcmp(&whole[i], &split[i], sizeof whole[i])) {
            if (!differing) fprintf(stderr, "element %d: whole step %g, split %g\n", i,
                                    (double)whole[i], (double)split[i]);
            differing++;
        }
    }
    CHECK_INT_EQ(differing, 0);
    // A mask that drops nothing or everything would pass the comparison trivially.
    CHECK(dropped > BATCH * FEATURES / 4 && dropped < BATCH * FEATURES * 3 / 4);
}

int main(void) {
    Net n;
    Status st;
    status_clear(&st);
    if (net_open(&n, &st)) {
        fprintf(stderr, "setup: %s\n", st.message);
        return 1;
    }
    split_passes_drop_what_the_whole_step_drops(&n);
    graph_free(&n.g);
    alloc_destroy(&n.alloc);
    model_file_free(&n.file);
    return test_exit_code("test_dropout_split");
}
