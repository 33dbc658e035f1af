// Out-of-host-memory statuses name the size that failed and what it was for. This test is
// linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (tests/CMakeLists.txt), so the trainer's own
// calls come here first: the next request of a chosen size fails, as a full host fails it.
#include "check.h"
#include "base/text_out.h"
#include "core/graph.h"
#include "data/image.h"

#include <stdlib.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);

// bytes of the next request to fail; 0: none
static size_t malloc_fails_at, calloc_fails_at, realloc_fails_at;

void *__wrap_malloc(size_t size) {
    if (malloc_fails_at && size == malloc_fails_at) {
        malloc_fails_at = 0;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size) {
    if (calloc_fails_at && count * size == calloc_fails_at) {
        calloc_fails_at = 0;
        return NULL;
    }
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t size) {
    if (realloc_fails_at && size == realloc_fails_at) {
        realloc_fails_at = 0;
        return NULL;
    }
    return __real_realloc(p, size);
}

// ---- the internal layers graph_set_storage and graph_set_layouts put in ----
// Each of two allocations can fail: the graph's longer list of layers, and the new layer.

static const char *const gray_text = "input shape=1x8x8\n"
                                     "conv2d filters=2 kernel=3 pad=same\n"
                                     "flatten\n"
                                     "dense units=3\n"
                                     "loss softmax_cross_entropy\n";

// Three channels: graph_set_layouts converts the input for the convolution.
static const char *const rgb_text = "input shape=3x8x8\n"
                                    "conv2d filters=2 kernel=3 pad=same\n"
                                    "flatten\n"
                                    "dense units=3\n"
                                    "loss softmax_cross_entropy\n";

static int build(const char *text, ModelFile *f, Graph *g) {
    Status st;
    status_clear(&st);
    memset(g, 0, sizeof *g);
    int rc = model_file_parse_text("oom.model", text, f, &st);
    if (!rc) rc = graph_build(f, g, NULL, &st);
    if (rc) fprintf(stderr, "build failed: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    return rc;
}

// "out of host memory: <bytes> <what>", the bytes as status_out_of_host_memory words them.
static void check_message(const Status *st, size_t bytes, const char *what) {
    char amount[32], expected[256];
    snprintf(expected, sizeof expected, "out of host memory: %s %s",
             format_bytes(bytes, amount, sizeof amount), what);
    CHECK_CONTAINS(st->message, expected);
}

// `pass` puts one internal layer after input1; the chosen allocation of it fails.
static void internal_layer_fails(const char *text, int (*pass)(Graph *g, Status *st),
                                 int list_fails, const char *what) {
    ModelFile f;
    Graph g;
    if (build(text, &f, &g)) return;
    Status st;
    status_clear(&st);
    size_t bytes = list_fails ? (size_t)(g.count + 1) * sizeof *g.layers : sizeof(Layer);
    if (list_fails) realloc_fails_at = bytes;
    else calloc_fails_at = bytes;
    CHECK_INT_EQ(pass(&g, &st), STATUS_RUNTIME_ERROR);
    CHECK(!calloc_fails_at && !realloc_fails_at);  // the chosen request was made
    calloc_fails_at = realloc_fails_at = 0;
    char expected[128];
    if (list_fails)
        snprintf(expected, sizeof expected, "for the graph's list of %d layers, adding %s",
                 g.count + 1, what);
    else snprintf(expected, sizeof expected, "for %s", what);
    check_message(&st, bytes, expected);
    // Nothing was put in: the pass runs again when memory is back.
    status_clear(&st);
    CHECK_INT_EQ(pass(&g, &st), 0);
    graph_free(&g);
    model_file_free(&f);
}

static int storage_bf16(Graph *g, Status *st) { return graph_set_storage(g, DTYPE_BF16, st); }
static int layouts_nhwc(Graph *g, Status *st) { return graph_set_layouts(g, 1, st); }

// ---- image_resize ----

// Each of its five allocations fails in turn: the message names that request's bytes, and
// the sizes worded HxW, as --resize and the rest of the CLI spell them. The sides are chosen
// so that no two requests have one size.
static void resize_names_each_failed_size(void) {
    enum { IN_H = 9, IN_W = 5, OUT_H = 4, OUT_W = 3 };
    // data/image.c's Taps: an output coordinate's first tap, tap count and weights.
    typedef struct { int first, count; float *weights; } Taps;
    // Taps an output pixel reads: the scale (rounded up) each side of it, and itself.
    int across_max = 2 * 2 + 1, down_max = 3 * 2 + 1;  // 5/3 and 9/4 rounded up
    const size_t sizes[] = {
        OUT_W * sizeof(Taps), (size_t)OUT_W * across_max * sizeof(float),  // along a row
        OUT_H * sizeof(Taps), (size_t)OUT_H * down_max * sizeof(float),    // down a column
        (size_t)IN_H * OUT_W * sizeof(float),  // rows resized, columns not yet
    };
    float in[IN_H * IN_W] = {0}, out[OUT_H * OUT_W];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        Status st;
        status_clear(&st);
        malloc_fails_at = sizes[i];
        CHECK_INT_EQ(image_resize(in, 1, IN_H, IN_W, out, OUT_H, OUT_W, &st),
                     STATUS_RUNTIME_ERROR);
        CHECK(!malloc_fails_at);  // the chosen request was made
        malloc_fails_at = 0;
        check_message(&st, sizes[i], "resizing a 9x5 image to 4x3 (HxW)");
    }
    // Memory back, the same resize runs.
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(image_resize(in, 1, IN_H, IN_W, out, OUT_H, OUT_W, &st), 0);
}

int main(void) {
    internal_layer_fails(gray_text, storage_bf16, 1, "a cast layer after input1");
    internal_layer_fails(gray_text, storage_bf16, 0, "a cast layer after input1");
    internal_layer_fails(rgb_text, layouts_nhwc, 1, "a to_nhwc layer after input1");
    internal_layer_fails(rgb_text, layouts_nhwc, 0, "a to_nhwc layer after input1");
    resize_names_each_failed_size();
    return test_exit_code("test_host_alloc_failures");
}
