// A memory limit that holds the parameters and a few samples' activations, but not the
// workspace the convolutions' fastest algorithms ask for, must not stop training: the
// run gives that workspace up (graph_limit_workspace: the least the ops run in), says so
// in its one split notice, stays under the limit, and learns what the unlimited run
// learns. On a GPU the workspace is cuDNN's (17.5 MiB for LeNet at one sample on an
// H200, where a 24 MiB limit stopped tests/gpu/test_cuda_train); here a variant of the
// CPU backend asks for 8 MiB more than its im2col lowering needs, as cuDNN does, and its
// ops, like cuDNN's, run in anything down to their least (one sample's lowering). Where
// nothing can be given up (the plain CPU backend) the run still stops, saying what does not
// fit: tests/e2e/lab.sh.
#include <stdint.h>

#include "train_harness.h"

#include "core/memory_plan.h"
#include "kernels/cpu/cpu_ops.h"

#define FAST_ALGORITHM_BYTES ((size_t)8 << 20)

static int asks_for_more_workspace(const Backend *b, const Conv2dGeometry *g, size_t *bytes,
                                   Status *st) {
    TRY(cpu_backend()->conv2d_workspace_size(b, g, bytes, st));
    *bytes += FAST_ALGORITHM_BYTES;
    return 0;
}

static Backend greedy_backend;

static const Backend *greedy_cpu(void) {
    greedy_backend = *cpu_backend();
    greedy_backend.name = "cpu";
    greedy_backend.conv2d_workspace_size = asks_for_more_workspace;
    return &greedy_backend;
}

static size_t plan_workspace(const Graph *g, int batch) {
    MemoryPlanOptions options = {.batch = batch};
    MemoryPlan plan;
    Status st;
    status_clear(&st);
    if (memory_plan(g, &greedy_backend, &options, &plan, &st)) {
        report_status("memory_plan", &st);
        test_failures++;
        return 0;
    }
    size_t workspace = plan.workspace;
    memory_plan_free(&plan);
    return workspace;
}

// The cap reaches the plan: the least workspace while capped, the backend's ask again
// once lifted.
static void the_plan_counts_the_cap(void) {
    ModelFile file;
    Graph g;
    Status st;
    status_clear(&st);
    if (model_file_parse_text("workspace.model", model_text, &file, &st) ||
        graph_build(&file, &g, NULL, &st)) {
        report_status("building the model", &st);
        test_failures++;
        return;
    }
    size_t full = plan_workspace(&g, 40);
    CHECK(full > FAST_ALGORITHM_BYTES);
    CHECK(!graph_workspace_limited(&g));
    graph_limit_workspace(&g, 0);
    CHECK(graph_workspace_limited(&g));
    size_t least = 0;
    const Layer *conv = g.layers[1];
    Conv2dGeometry geometry = {.batch = 40, .in_channels = 1, .in_h = SIDE, .in_w = SIDE,
                               .out_channels = 4, .out_h = SIDE, .out_w = SIDE, .kernel_h = 3,
                               .kernel_w = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1,
                               .pad_left = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1};
    CHECK(strcmp(conv->kind->name, "conv2d") == 0);
    CHECK_INT_EQ(cpu_backend()->conv2d_least_workspace(&greedy_backend, &geometry, &least, &st), 0);
    CHECK(least > 0 && least < FAST_ALGORITHM_BYTES);
    CHECK_INT_EQ((long)plan_workspace(&g, 40), (long)alloc_charged_bytes(least));
    graph_limit_workspace(&g, SIZE_MAX);
    CHECK(!graph_workspace_limited(&g));
    CHECK_INT_EQ((long)plan_workspace(&g, 40), (long)full);
    graph_free(&g);
    model_file_free(&file);
}

static void a_limit_below_the_workspace_trains_without_it(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Run reference;
    int rc = train_run_on_backend("cpu", greedy_cpu(), &reference, 1, 0, ds, NULL, &st);
    if (rc) report_status("unlimited run", &st);
    CHECK_INT_EQ(rc, 0);
    CHECK_INT_EQ(reference.notices, 0);
    size_t peak = reference.device.alloc.stats.peak_in_use;
    // Everything but half of the extra workspace: one sample does not fit beside the
    // workspace the backend asks for, the whole batch fits without it.
    size_t limit = peak - FAST_ALGORITHM_BYTES / 2;
    Run run;
    status_clear(&st);
    rc = rc ? rc : train_run_on_backend("cpu", greedy_cpu(), &run, 1, limit, ds, NULL, &st);
    if (rc) report_status("run under the limit", &st);
    CHECK_INT_EQ(rc, 0);
    if (!rc) {
        printf("limit %zu (unlimited peak %zu): %s\n", limit, peak, run.last_notice);
        CHECK_INT_EQ(run.notices, 1);
        CHECK_CONTAINS(run.last_notice, "out of memory at batch 40 on cpu");
        CHECK_CONTAINS(run.last_notice, "convolutions in their least workspace");
        CHECK_CONTAINS(run.last_notice, "did not fit");
        CHECK(run.device.alloc.stats.peak_in_use <= limit);
        CHECK(graph_workspace_limited(&run.graphs[0]));
        double d = parameter_difference(&reference, 0, &run, 0);
        if (!(d <= 1e-5)) {
            fprintf(stderr, "the run without workspace differs from the unlimited one by %.3g\n",
                    d);
            test_failures++;
        }
        free_run(&run);
    }
    free_run(&reference);
}

int main(void) {
    greedy_cpu();
    the_plan_counts_the_cap();
    Dataset ds = synthetic_dataset();
    a_limit_below_the_workspace_trains_without_it(&ds);
    dataset_free(&ds);
    return test_exit_code("test_workspace_limit");
}
