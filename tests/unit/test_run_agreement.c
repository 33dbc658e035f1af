// The run agreement record (core/run_record.h, core/run_agreement.h) without MPI: what a
// rank sends reads back as it was, a record cut or padded is refused, the first difference
// is the most telling field (a parameter's shape before the model text's hash, the batch
// named as the batch), and the message names the field, both ranks and both values.
#include "check.h"
#include "core/graph.h"
#include "core/run_agreement.h"

#include <stdlib.h>

static const char *model_text(int units) {
    static char text[512];
    snprintf(text, sizeof text, "input shape=784 dtype=f32\ndense units=%d act=relu\n"
             "dense units=10\nloss softmax_cross_entropy\noptimizer sgd lr=0.05 momentum=0.9\n"
             "train batch=16 epochs=1 seed=3\n", units);
    return text;
}

// The record a rank of a run of this model would send, with `batch` for its batch.
static int describe(int units, int batch, RunRecord *r) {
    Status st;
    status_clear(&st);
    ModelFile file;
    Graph g;
    RunConfig config;
    memset(&g, 0, sizeof g);
    memset(&config, 0, sizeof config);
    run_record_init(r);
    int rc = model_file_parse_text("test.model", model_text(units), &file, &st);
    if (!rc) rc = graph_build(&file, &g, &config, &st);
    config.train.batch = batch;
    RunFacts facts = {"fashion-mnist", 64, -1, 16, PRECISION_FP32};
    if (!rc) rc = run_record_describe(r, &g, &config, &facts, &st);
    if (rc) fprintf(stderr, "describe: %s\n", st.message);
    CHECK_INT_EQ(rc, 0);
    graph_free(&g);
    model_file_free(&file);
    return rc;
}

static void a_record_reads_back_as_it_was_sent(void) {
    RunRecord sent, read;
    if (describe(32, 16, &sent)) return;
    uint8_t *bytes = NULL;
    size_t size = 0;
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(run_record_encode(&sent, &bytes, &size, &st), 0);
    CHECK_INT_EQ(run_record_decode(bytes, size, &read, &st), 0);
    CHECK_INT_EQ(read.count, sent.count);
    CHECK_INT_EQ(run_record_first_difference(&sent, &read), -1);
    run_record_free(&read);
    // Every cut is refused, and so is a byte past the end.
    for (size_t cut = 0; cut < size; cut++) {
        status_clear(&st);
        CHECK_INT_EQ(run_record_decode(bytes, cut, &read, &st), STATUS_BAD_INPUT);
        run_record_free(&read);
    }
    uint8_t *padded = malloc(size + 1);
    memcpy(padded, bytes, size);
    padded[size] = 0;
    CHECK_INT_EQ(run_record_decode(padded, size + 1, &read, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "followed by 1 more bytes");
    run_record_free(&read);
    free(padded);
    free(bytes);
    run_record_free(&sent);
}

static void a_shape_differs_before_the_model_text(void) {
    RunRecord first, other;
    if (describe(32, 16, &first) || describe(16, 16, &other)) return;
    int field = run_record_first_difference(&first, &other);
    CHECK_CONTAINS(run_record_name_at(&first, field), "parameter 1");
    RunField theirs;
    memset(&theirs, 0, sizeof theirs);
    snprintf(theirs.name, sizeof theirs.name, "%s", run_record_name_at(&other, field));
    snprintf(theirs.value, sizeof theirs.value, "%s", run_record_value_at(&other, field));
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(run_record_disagreement(&first, field, 1, 2, &theirs, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "mpirun -np 2: ranks disagree on parameter 1: rank 0 has "
                               "dense1.weight 32x784, rank 1 has dense1.weight 16x784");
    CHECK(st.hint[0] != 0);
    run_record_free(&first);
    run_record_free(&other);
}

static void the_batch_is_named_as_the_batch(void) {
    RunRecord first, other;
    if (describe(32, 16, &first) || describe(32, 32, &other)) return;
    int field = run_record_first_difference(&first, &other);
    CHECK_CONTAINS(run_record_name_at(&first, field), "batch");
    CHECK_CONTAINS(run_record_value_at(&other, field), "32");
    run_record_free(&first);
    run_record_free(&other);
}

// Records of different lengths differ at the shorter one's end; past it there is nothing.
static void a_shorter_record_differs_at_its_end(void) {
    Status st;
    status_clear(&st);
    RunRecord a, b;
    run_record_init(&a);
    run_record_init(&b);
    CHECK_INT_EQ(run_record_add(&a, &st, "batch", "%d", 16), 0);
    CHECK_INT_EQ(run_record_add(&b, &st, "batch", "%d", 16), 0);
    CHECK_INT_EQ(run_record_add(&b, &st, "epochs", "%d", 2), 0);
    CHECK_INT_EQ(run_record_first_difference(&a, &b), 1);
    CHECK_CONTAINS(run_record_value_at(&a, 1), "(nothing)");
    CHECK_INT_EQ(run_record_add(&a, &st, "", "x"), STATUS_BAD_INPUT);
    run_record_free(&a);
    run_record_free(&b);
}

int main(void) {
    a_record_reads_back_as_it_was_sent();
    a_shape_differs_before_the_model_text();
    the_batch_is_named_as_the_batch();
    a_shorter_record_differs_at_its_end();
    return test_exit_code("test_run_agreement");
}
