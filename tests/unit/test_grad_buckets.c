// The gradient buckets' books (core/grad_buckets.c), shared by CPU ranks (MPI) and GPU ranks
// (NCCL), against a fake GradSums that records every stretch it is asked to sum and "sums"
// it by doubling it (two ranks holding the same gradients), on the CPU backend:
// - slots follow backward: the last layer's parameters first, buffers left out;
// - a bucket starts once its layers have reached the bucket size, the rest after backward;
// - bucket size 0 is one sum after backward;
// - a step redone after running out of memory does not start a bucket twice;
// - a rank with no samples in a step (backward never ran) starts the same buckets as one
//   whose backward did, or the collectives of the ranks would not match.
#include "check.h"
#include "core/grad_buckets.h"

#include <string.h>

// Layer 0 is the input; layers 1, 2 and 3 hold 12 (8 + 4), 25 (20 + 5, and a buffer of 5
// that is not summed) and 18 (15 + 3) gradient values; layer 4 (the loss) none.
enum { LAYERS = 5, MAX_STARTS = 16 };
static const int sizes[LAYERS][3] = {{0}, {8, 4}, {20, 5, -5}, {15, 3}, {0}};

typedef struct Net {
    Allocator alloc;
    Layer layer[LAYERS];
    Layer *layers[LAYERS];
    Graph g;
} Net;

typedef struct Recorder {
    size_t offset[MAX_STARTS], count[MAX_STARTS];
    int starts, finishes;
} Recorder;

static void make_net(Net *n, Status *st) {
    memset(n, 0, sizeof *n);
    CHECK_INT_EQ(alloc_init(&n->alloc, cpu_backend(), ALLOC_GROW, 0, st), 0);
    for (int i = 0; i < LAYERS; i++) {
        Layer *l = &n->layer[i];
        snprintf(l->name, sizeof l->name, "layer%d", i);
        for (int k = 0; k < 3 && sizes[i][k]; k++) {
            Param *p = &l->params[l->param_count++];
            if (sizes[i][k] < 0) {
                p->buffer = 1;
                continue;
            }
            Shape shape = {.rank = 1, .dims = {sizes[i][k]}};
            tensor_set_shape(&p->grad, DTYPE_F32, 0, &shape);
            CHECK_INT_EQ(tensor_alloc(&p->grad, &n->alloc, st), 0);
            // Value j of parameter k of layer i: 100 i + 10 k + j, each one distinct.
            for (int j = 0; j < sizes[i][k]; j++)
                tensor_f32(&p->grad)[j] = (float)(100 * i + 10 * k + j);
        }
        n->layers[i] = l;
    }
    n->g.layers = n->layers;
    n->g.count = LAYERS;
}

static void free_net(Net *n) {
    for (int i = 0; i < LAYERS; i++)
        for (int k = 0; k < n->layer[i].param_count; k++)
            if (!n->layer[i].params[k].buffer) tensor_free(&n->layer[i].params[k].grad);
    alloc_destroy(&n->alloc);
}

static int record_start(GradSums *s, size_t offset, size_t count, Status *st) {
    Recorder *r = s->impl;
    (void)st;
    CHECK(r->starts < MAX_STARTS);
    if (r->starts < MAX_STARTS) {
        r->offset[r->starts] = offset;
        r->count[r->starts] = count;
    }
    r->starts++;
    for (size_t i = offset; i < offset + count; i++) s->flat[i] *= 2.0f;
    return 0;
}

static int record_finish(GradSums *s, Status *st) {
    (void)st;
    ((Recorder *)s->impl)->finishes++;
    return 0;
}

static float flat_values[64];

// Buckets over `net` of `bucket_values` floats, summed by `recorder`.
static void open_buckets(GradBuckets *gb, Net *net, size_t bucket_values, Recorder *recorder,
                         Status *st) {
    memset(recorder, 0, sizeof *recorder);
    double mb = (double)bucket_values * sizeof(float) / (1024.0 * 1024.0);
    CHECK_INT_EQ(grad_buckets_open(gb, &net->g, cpu_backend(), mb, st), 0);
    CHECK(gb->bucket_values == bucket_values);
    gb->sums = (GradSums){.flat = flat_values, .impl = recorder, .start = record_start,
                          .finish = record_finish};
}

// Backward over layers last .. first (the input, layer 0, is not run).
static void backward(GradBuckets *gb, Net *net, int last, int first, Status *st) {
    for (int i = last; i >= first; i--)
        CHECK_INT_EQ(grad_buckets_after_layer(gb, net->layers[i], st), 0);
}

// The starts recorded, against `expected` pairs of (offset, count).
static void expect_starts(const Recorder *r, const size_t *expected, int count,
                          const char *what) {
    if (r->starts != count) {
        fprintf(stderr, "%s: %d sums started, expected %d\n", what, r->starts, count);
        test_failures++;
        return;
    }
    for (int k = 0; k < count; k++)
        if (r->offset[k] != expected[2 * k] || r->count[k] != expected[2 * k + 1]) {
            fprintf(stderr, "%s: sum %d over [%zu, +%zu), expected [%zu, +%zu)\n", what, k,
                    r->offset[k], r->count[k], expected[2 * k], expected[2 * k + 1]);
            test_failures++;
        }
}

// Every gradient came back summed once: twice its value.
static void expect_gradients_summed_once(Net *n, const char *what) {
    for (int i = 0; i < LAYERS; i++)
        for (int k = 0; k < n->layer[i].param_count; k++) {
            const Param *p = &n->layer[i].params[k];
            if (p->buffer) continue;
            for (int j = 0; j < sizes[i][k]; j++) {
                float want = 2.0f * (float)(100 * i + 10 * k + j);
                if (tensor_f32(&p->grad)[j] != want) {
                    fprintf(stderr, "%s: layer %d param %d value %d is %g, expected %g\n", what,
                            i, k, j, (double)tensor_f32(&p->grad)[j], (double)want);
                    test_failures++;
                    return;
                }
            }
        }
}

static void slots_follow_backward_and_leave_buffers_out(void) {
    Status st;
    status_clear(&st);
    Net net;
    make_net(&net, &st);
    GradBuckets gb;
    Recorder r;
    open_buckets(&gb, &net, 20, &r, &st);
    CHECK_INT_EQ(gb.slot_count, 6);
    CHECK(gb.total == 55);
    static const int layer_of[6] = {3, 3, 2, 2, 1, 1};
    static const size_t offset_of[6] = {0, 15, 18, 38, 43, 51};
    for (int s = 0; s < gb.slot_count && s < 6; s++) {
        CHECK(gb.slots[s].layer == net.layers[layer_of[s]]);
        CHECK(gb.slots[s].offset == offset_of[s]);
    }
    grad_buckets_close(&gb);
    free_net(&net);
}

// Bucket 20: layer 3 (18) is not enough; with layer 2 (43 in all) the first bucket starts;
// layer 1's 12 are short of a bucket and start after backward.
static void buckets_start_when_full_and_the_rest_after_backward(void) {
    Status st;
    status_clear(&st);
    Net net;
    make_net(&net, &st);
    GradBuckets gb;
    Recorder r;
    open_buckets(&gb, &net, 20, &r, &st);
    grad_buckets_start_step(&gb);
    backward(&gb, &net, 4, 3, &st);
    CHECK_INT_EQ(r.starts, 0);
    backward(&gb, &net, 2, 2, &st);
    CHECK_INT_EQ(r.starts, 1);
    backward(&gb, &net, 1, 1, &st);
    CHECK_INT_EQ(r.starts, 1);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 43, 43, 12}, 2, "bucket 20");
    CHECK_INT_EQ(r.finishes, 1);
    expect_gradients_summed_once(&net, "bucket 20");
    // Bucket 10: every layer fills one; nothing is left for after backward.
    grad_buckets_close(&gb);
    free_net(&net);
    make_net(&net, &st);
    open_buckets(&gb, &net, 10, &r, &st);
    grad_buckets_start_step(&gb);
    backward(&gb, &net, 4, 1, &st);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 18, 18, 25, 43, 12}, 3, "bucket 10");
    grad_buckets_close(&gb);
    free_net(&net);
}

static void bucket_size_zero_is_one_sum_after_backward(void) {
    Status st;
    status_clear(&st);
    Net net;
    make_net(&net, &st);
    GradBuckets gb;
    Recorder r;
    open_buckets(&gb, &net, 0, &r, &st);
    grad_buckets_start_step(&gb);
    backward(&gb, &net, 4, 1, &st);
    CHECK_INT_EQ(r.starts, 0);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 55}, 1, "bucket 0");
    expect_gradients_summed_once(&net, "bucket 0");
    grad_buckets_close(&gb);
    free_net(&net);
}

// The last pass ran out of memory after layer 2's backward (its bucket started); the step is
// redone in smaller passes, whose last pass runs backward over every layer again.
static void a_redo_after_out_of_memory_starts_no_bucket_twice(void) {
    Status st;
    status_clear(&st);
    Net net;
    make_net(&net, &st);
    GradBuckets gb;
    Recorder r;
    open_buckets(&gb, &net, 20, &r, &st);
    grad_buckets_start_step(&gb);
    backward(&gb, &net, 4, 2, &st);
    CHECK_INT_EQ(r.starts, 1);
    backward(&gb, &net, 4, 1, &st);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 43, 43, 12}, 2, "redo");
    expect_gradients_summed_once(&net, "redo");
    // The next step starts afresh.
    memset(&r, 0, sizeof r);
    grad_buckets_start_step(&gb);
    backward(&gb, &net, 4, 1, &st);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 43, 43, 12}, 2, "the step after a redo");
    CHECK_INT_EQ(gb.steps, 2);
    grad_buckets_close(&gb);
    free_net(&net);
}

// Fewer samples than ranks: this rank's backward never runs, and finish alone must start the
// buckets a rank with samples starts, in the same order.
static void a_rank_with_no_samples_starts_the_same_buckets(void) {
    Status st;
    status_clear(&st);
    Net net;
    make_net(&net, &st);
    GradBuckets gb;
    Recorder r;
    open_buckets(&gb, &net, 20, &r, &st);
    grad_buckets_start_step(&gb);
    CHECK_INT_EQ(grad_buckets_finish(&gb, &st), 0);
    expect_starts(&r, (const size_t[]){0, 43, 43, 12}, 2, "no samples");
    expect_gradients_summed_once(&net, "no samples");
    grad_buckets_close(&gb);
    free_net(&net);
}

int main(void) {
    slots_follow_backward_and_leave_buffers_out();
    buckets_start_when_full_and_the_rest_after_backward();
    bucket_size_zero_is_one_sum_after_backward();
    a_redo_after_out_of_memory_starts_no_bucket_twice();
    a_rank_with_no_samples_starts_the_same_buckets();
    return test_exit_code("test_grad_buckets");
}
