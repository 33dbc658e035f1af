// Fault injection in the allocator (alloc_fail_at, TRAINER_FAIL_ALLOC): exactly the chosen
// call fails, as a real out-of-memory does (status, message, statistics, nothing handed
// out), the calls after it succeed, and the count runs across allocators. Then every
// allocation point of graph set-up and a training step is failed in turn: each failure is
// a clean STATUS_OUT_OF_MEMORY, and freeing the graph gives back everything (the
// allocator's mark proves it). The out-of-memory message and the mark are checked too.
#define _POSIX_C_SOURCE 200809L  // setenv
#include "check.h"
#include "core/graph.h"
#include "core/optimizer.h"

#include <stdlib.h>

static void injected_call_fails_and_later_calls_succeed(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    long before = alloc_call_count();
    void *p[5] = {NULL};
    alloc_fail_at(before + 3);  // the third call from here
    CHECK_INT_EQ(alloc_get(&a, 1000, &p[0], &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 2000, &p[1], &st), 0);
    p[2] = (void *)&a;
    CHECK_INT_EQ(alloc_get(&a, 3000, &p[2], &st), STATUS_OUT_OF_MEMORY);
    CHECK(p[2] == NULL);
    CHECK_CONTAINS(st.message, "out of memory on cpu");
    CHECK_CONTAINS(st.message, "injected");
    CHECK_CONTAINS(st.message, "requested 2.9 KiB");
    CHECK_INT_EQ(st.code, STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(a.stats.out_of_memory, 1);
    CHECK_INT_EQ(a.stats.allocations, 2);
    CHECK_INT_EQ(a.stats.in_use, 1024 + 2048);
    status_clear(&st);
    CHECK_INT_EQ(alloc_get(&a, 3000, &p[3], &st), 0);  // the same request, one call later
    CHECK_INT_EQ(alloc_get(&a, 100, &p[4], &st), 0);
    CHECK_INT_EQ(alloc_call_count(), before + 5);
    CHECK_INT_EQ(a.stats.allocations, 4);
    CHECK_INT_EQ(a.stats.out_of_memory, 1);

    // A cache hit fails too when its call is chosen: it is the call that fails.
    alloc_put(&a, p[4]);
    alloc_fail_at(alloc_call_count() + 1);
    void *again = NULL;
    CHECK_INT_EQ(alloc_get(&a, 100, &again, &st), STATUS_OUT_OF_MEMORY);
    CHECK_INT_EQ(a.stats.cache_hits, 0);
    CHECK_INT_EQ(alloc_get(&a, 100, &again, &st), 0);
    CHECK(again == p[4]);
    CHECK_INT_EQ(a.stats.cache_hits, 1);
    alloc_fail_at(0);
    for (int i = 0; i < 4; i++)
        if (i != 2) alloc_put(&a, p[i]);
    alloc_put(&a, again);
    CHECK_INT_EQ(a.stats.in_use, 0);
    alloc_destroy(&a);
}

static void count_runs_across_allocators_and_modes(void) {
    Allocator grow, reserve;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&grow, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    CHECK_INT_EQ(alloc_init(&reserve, cpu_backend(), ALLOC_RESERVE, 1 << 16, &st), 0);
    long first = alloc_call_count() + 1;
    alloc_fail_at(first + 1);
    void *g1 = NULL, *r1 = NULL, *r2 = NULL;
    CHECK_INT_EQ(alloc_get(&grow, 512, &g1, &st), 0);                        // first
    CHECK_INT_EQ(alloc_get(&reserve, 512, &r1, &st), STATUS_OUT_OF_MEMORY);  // first + 1
    CHECK_CONTAINS(st.message, "injected");
    CHECK_INT_EQ(reserve.stats.out_of_memory, 1);
    CHECK_INT_EQ(grow.stats.out_of_memory, 0);
    CHECK_INT_EQ(reserve.stats.in_use, 0);
    CHECK_INT_EQ(alloc_get(&reserve, 512, &r2, &st), 0);
    alloc_put(&grow, g1);
    alloc_put(&reserve, r2);
    alloc_fail_at(0);
    alloc_destroy(&grow);
    alloc_destroy(&reserve);
}

// The message gives what a person needs to judge the failure (issue 6).
static void out_of_memory_message_has_the_numbers(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 64 * 1024, &st), 0);
    void *big = NULL, *small = NULL, *mid = NULL, *over = NULL;
    CHECK_INT_EQ(alloc_get(&a, 32 * 1024, &big, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 8 * 1024, &small, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 16 * 1024, &mid, &st), 0);
    alloc_put(&a, mid);  // 16 KiB cached
    CHECK_INT_EQ(alloc_largest_cached_block(&a), 16 * 1024);
    // 40 KiB in use + 16 KiB cached; 30 KiB more exceeds the limit even after the cache
    // is released (the message then shows what was left).
    CHECK_INT_EQ(alloc_get(&a, 30 * 1024, &over, &st), STATUS_OUT_OF_MEMORY);
    CHECK_CONTAINS(st.message, "requested 30.0 KiB");
    CHECK_CONTAINS(st.message, "40.0 KiB in use");
    CHECK_CONTAINS(st.message, "0 bytes cached");
    CHECK_CONTAINS(st.message, "40.0 KiB reserved by this process");
    CHECK_CONTAINS(st.message, "largest free block 0 bytes");
    CHECK_CONTAINS(st.message, "limit 64.0 KiB (24.0 KiB free under it)");
    CHECK_CONTAINS(st.message, "device total");
    CHECK(st.hint[0] != '\0');
    alloc_put(&a, big);
    alloc_put(&a, small);
    alloc_destroy(&a);

    // Reserve mode: the largest free span of the arena.
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_RESERVE, 16 * 1024, &st), 0);
    void *x = NULL, *y = NULL;
    CHECK_INT_EQ(alloc_get(&a, 4096, &x, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 4096, &y, &st), 0);
    alloc_put(&a, x);  // 4 KiB hole at the start, 8 KiB free at the end
    CHECK_INT_EQ(alloc_largest_cached_block(&a), 8192);
    CHECK_INT_EQ(alloc_get(&a, 10000, &over, &st), STATUS_OUT_OF_MEMORY);
    CHECK_CONTAINS(st.message, "largest free block 8.0 KiB");
    CHECK_CONTAINS(st.message, "12.0 KiB cached");
    alloc_put(&a, y);
    alloc_destroy(&a);
}

static void mark_shows_what_was_given_back(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    void *kept = NULL, *p = NULL, *q = NULL;
    CHECK_INT_EQ(alloc_get(&a, 1000, &kept, &st), 0);
    AllocMark mark = alloc_mark(&a);
    CHECK_INT_EQ(mark.in_use, 1024);
    CHECK_INT_EQ(alloc_get(&a, 5000, &p, &st), 0);
    CHECK_INT_EQ(alloc_get(&a, 300, &q, &st), 0);
    CHECK_INT_EQ(alloc_held_since(&a, mark), 5120 + 512);
    alloc_put(&a, p);
    CHECK_INT_EQ(alloc_held_since(&a, mark), 512);
    alloc_put(&a, q);
    CHECK_INT_EQ(alloc_held_since(&a, mark), 0);
    CHECK(a.stats.reserved > mark.reserved);  // cached, not leaked
    alloc_put(&a, kept);
    alloc_destroy(&a);
}

static const char *const tiny_cnn =
    "input shape=1x8x8\n"
    "conv2d filters=4 kernel=3 pad=same act=relu\n"
    "batchnorm\n"
    "maxpool size=2\n"
    "flatten\n"
    "dense units=16 act=relu\n"
    "dropout rate=0.5\n"
    "dense units=3\n"
    "loss softmax_cross_entropy\n"
    "optimizer sgd lr=0.1 momentum=0.9\n";

// Set-up and one step, as train.c runs them; 0 or the first failure's code.
static int set_up_and_step(Graph *g, const RunConfig *config, Allocator *a, Status *st) {
    const Backend *b = cpu_backend();
    enum { BATCH = 4 };
    TRY(graph_init_params(g, b, a, 1, st));
    TRY(graph_allocate(g, b, a, BATCH, NULL, st));
    TRY(optimizer_prepare(g, &config->optimizer, b, a, st));
    float images[BATCH * 64];
    int32_t labels[BATCH] = {0, 1, 2, 1};
    for (int i = 0; i < BATCH * 64; i++) images[i] = (float)(i % 17) / 17.0f;
    TRY(graph_load_batch(g, b, images, labels, BATCH, st));
    LayerContext ctx = {.backend = b, .alloc = a, .batch = BATCH, .training = 1, .seed = 5,
                        .labels = (const int32_t *)g->labels.data};
    TRY(graph_forward(g, &ctx, st));
    TRY(graph_backward(g, &ctx, st));
    return optimizer_step(g, &config->optimizer, b, 1, st);
}

static void every_allocation_point_fails_cleanly(void) {
    ModelFile file;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(model_file_parse_text("tiny.model", tiny_cnn, &file, &st), 0);
    // Count the allocations of a clean run.
    Graph g;
    RunConfig config;
    CHECK_INT_EQ(graph_build(&file, &g, &config, &st), 0);
    Allocator a;
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    long start = alloc_call_count();
    CHECK_INT_EQ(set_up_and_step(&g, &config, &a, &st), 0);
    long calls = alloc_call_count() - start;
    graph_free(&g);
    alloc_destroy(&a);
    CHECK(calls > 10);
    fprintf(stderr, "tiny cnn: %ld allocations to set up and take a step\n", calls);

    for (long n = 1; n <= calls; n++) {
        CHECK_INT_EQ(graph_build(&file, &g, &config, &st), 0);
        CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
        AllocMark mark = alloc_mark(&a);
        alloc_fail_at(alloc_call_count() + n);
        status_clear(&st);
        int rc = set_up_and_step(&g, &config, &a, &st);
        alloc_fail_at(0);
        if (rc != STATUS_OUT_OF_MEMORY || !strstr(st.message, "injected")) {
            fprintf(stderr, "allocation %ld of %ld: rc %d, %s\n", n, calls, rc, st.message);
            test_failures++;
        }
        CHECK_INT_EQ(a.stats.out_of_memory, 1);
        graph_free(&g);
        if (alloc_held_since(&a, mark) != 0) {
            fprintf(stderr, "allocation %ld failed: %zu bytes still in use after graph_free\n",
                    n, alloc_held_since(&a, mark));
            test_failures++;
        }
        alloc_destroy(&a);
    }
    model_file_free(&file);
}

// TRAINER_FAIL_ALLOC is read once, at the first alloc_get of the process; this test sets
// it before any allocation. "2,4-5": calls 2, 4 and 5 fail.
static void environment_variable_chooses_calls(void) {
    Allocator a;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(alloc_init(&a, cpu_backend(), ALLOC_GROW, 0, &st), 0);
    int want[7] = {0, STATUS_OUT_OF_MEMORY, 0, STATUS_OUT_OF_MEMORY, STATUS_OUT_OF_MEMORY, 0, 0};
    void *p[7] = {NULL};
    for (int i = 0; i < 7; i++) {
        status_clear(&st);
        int rc = alloc_get(&a, 64, &p[i], &st);
        if (rc != want[i]) {
            fprintf(stderr, "call %d: rc %d, want %d (%s)\n", i + 1, rc, want[i], st.message);
            test_failures++;
        }
        if (rc) CHECK_CONTAINS(st.message, "TRAINER_FAIL_ALLOC=2,4-5");
    }
    CHECK_INT_EQ(a.stats.out_of_memory, 3);
    CHECK_INT_EQ(alloc_call_count(), 7);
    for (int i = 0; i < 7; i++) alloc_put(&a, p[i]);
    alloc_destroy(&a);
}

int main(void) {
    setenv("TRAINER_FAIL_ALLOC", "2,4-5", 1);
    environment_variable_chooses_calls();
    injected_call_fails_and_later_calls_succeed();
    count_runs_across_allocators_and_modes();
    out_of_memory_message_has_the_numbers();
    mark_shows_what_was_given_back();
    every_allocation_point_fails_cleanly();
    return test_exit_code("test_alloc_fault");
}
