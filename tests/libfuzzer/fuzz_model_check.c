// libFuzzer target for `trainer check`'s path without its printing: the input is a model
// file's text, tokenized (model_file_parse_text), built into a graph with its optimizer and
// train statements (graph_build), planned for memory on the CPU (memory_plan, as check
// does) and checked against small generated datasets (graph_check_dataset: a 1x28x28 and a
// 3x32x32 image set and a 10-feature table, as --data would load). Whatever the text: no
// crash, no read outside it, no leak, and every refusal is STATUS_BAD_INPUT in words.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "core/memory_plan.h"
#include "data/dataset.h"
#include "kernels/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int rc, const Status *st) {
    if (rc != STATUS_BAD_INPUT || !st->message[0] || strchr(st->message, 0x1b)) abort();
}

// Four samples of the given shape with labels 0..3 (images stay unallocated: the check
// reads only the shape and the label range).
static Dataset tiny_dataset(int channels, int height, int width, int features) {
    static uint8_t labels[4] = {0, 1, 2, 3};
    static float values[4 * 10];
    Dataset ds;
    memset(&ds, 0, sizeof ds);
    strcpy(ds.source, "fuzz");
    ds.count = 4;
    ds.channels = channels;
    ds.height = height;
    ds.width = width;
    ds.labels = labels;
    ds.label_max = 3;
    if (features) ds.features = values;
    return ds;
}

static void check_data(const Graph *g) {
    const Dataset sets[3] = {tiny_dataset(1, 28, 28, 0), tiny_dataset(3, 32, 32, 0),
                             tiny_dataset(1, 1, 10, 1)};
    for (int i = 0; i < 3; i++) {
        Status st;
        status_clear(&st);
        int rc = graph_check_dataset(g, &sets[i], "fuzz train", &st);
        if (rc) check_refusal(rc, &st);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);  // the parser takes a C string: a NUL ends the text
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    int rc = model_file_parse_text("fuzz.model", text, &file, &st);
    free(text);
    if (rc) {
        check_refusal(rc, &st);
        return 0;
    }
    rc = graph_build(&file, &g, &config, &st);
    if (rc) {
        check_refusal(rc, &st);
        model_file_free(&file);
        return 0;
    }
    MemoryPlanOptions options = {.batch = config.train.batch > 0 ? config.train.batch : 1,
                                 .optimizer = &config.optimizer};
    MemoryPlan plan;
    rc = memory_plan(&g, cpu_backend(), &options, &plan, &st);
    if (rc) check_refusal(rc, &st);
    else memory_plan_free(&plan);
    check_data(&g);
    graph_free(&g);
    model_file_free(&file);
    return 0;
}
