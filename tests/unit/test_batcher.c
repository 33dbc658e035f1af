// Batcher: every sample once per epoch, an order that depends only on (seed, epoch),
// dataset order when not shuffling, a short last batch, and bytes scaled to [0, 1].
#include "check.h"
#include "data/dataset.h"

#include <stdlib.h>

enum { COUNT = 23, CHANNELS = 2, HEIGHT = 2, WIDTH = 3, SAMPLE = CHANNELS * HEIGHT * WIDTH };

// A dataset whose sample i starts with the byte i, so a batch says which samples it
// holds; the other bytes vary so a mixed-up copy would show.
static Dataset make_dataset(void) {
    Dataset ds = {0};
    snprintf(ds.source, sizeof ds.source, "test");
    ds.count = COUNT;
    ds.channels = CHANNELS;
    ds.height = HEIGHT;
    ds.width = WIDTH;
    ds.images = malloc((size_t)COUNT * SAMPLE);
    ds.labels = malloc(COUNT);
    for (int i = 0; i < COUNT; i++) {
        for (int p = 0; p < SAMPLE; p++) ds.images[i * SAMPLE + p] = (uint8_t)(i + 17 * p);
        ds.labels[i] = (uint8_t)(i % 10);
    }
    ds.label_max = 9;
    return ds;
}

// Runs one epoch and writes the sample indices in the order they came out. Checks that
// every batch's pixels and labels are the ones of the samples it claims.
static int run_epoch(Batcher *b, int epoch, int *order) {
    float images[8 * SAMPLE];
    int32_t labels[8];
    int seen = 0, n;
    batcher_start_epoch(b, epoch);
    while ((n = batcher_next(b, images, labels)) > 0) {
        CHECK(n <= b->batch_size);
        for (int k = 0; k < n && seen < COUNT; k++) {
            int index = (int)(images[k * SAMPLE] * 255.0f + 0.5f);
            order[seen++] = index;
            CHECK_INT_EQ(labels[k], index % 10);
            for (int p = 0; p < SAMPLE; p++)
                CHECK_NEAR(images[k * SAMPLE + p], (uint8_t)(index + 17 * p) / 255.0f, 1e-6);
        }
    }
    return seen;
}

static int same_order(const int *a, const int *b) {
    for (int i = 0; i < COUNT; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static void every_sample_seen_once_per_epoch(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher b;
    CHECK_INT_EQ(batcher_init(&b, ds, 5, 1, 42, &st), 0);
    for (int epoch = 0; epoch < 4; epoch++) {
        int order[COUNT], hits[COUNT] = {0};
        CHECK_INT_EQ(run_epoch(&b, epoch, order), COUNT);
        for (int i = 0; i < COUNT; i++) {
            CHECK(order[i] >= 0 && order[i] < COUNT);
            if (order[i] >= 0 && order[i] < COUNT) hits[order[i]]++;
        }
        for (int i = 0; i < COUNT; i++) CHECK_INT_EQ(hits[i], 1);
    }
    batcher_free(&b);
}

static void same_seed_and_epoch_give_same_order(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher a, b;
    CHECK_INT_EQ(batcher_init(&a, ds, 4, 1, 7, &st), 0);
    CHECK_INT_EQ(batcher_init(&b, ds, 6, 1, 7, &st), 0);  // batch size must not matter
    int first[COUNT], second[COUNT], again[COUNT];
    run_epoch(&a, 3, first);
    run_epoch(&b, 3, second);
    CHECK(same_order(first, second));
    // A run resumed at epoch 3 without epochs 0-2 sees the same order.
    run_epoch(&a, 0, again);
    run_epoch(&a, 3, again);
    CHECK(same_order(first, again));
    batcher_free(&a);
    batcher_free(&b);
}

static void different_epoch_or_seed_gives_different_order(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher a, b;
    CHECK_INT_EQ(batcher_init(&a, ds, 5, 1, 7, &st), 0);
    CHECK_INT_EQ(batcher_init(&b, ds, 5, 1, 8, &st), 0);
    int e0[COUNT], e1[COUNT], other_seed[COUNT], identity[COUNT];
    for (int i = 0; i < COUNT; i++) identity[i] = i;
    run_epoch(&a, 0, e0);
    run_epoch(&a, 1, e1);
    run_epoch(&b, 0, other_seed);
    CHECK(!same_order(e0, e1));
    CHECK(!same_order(e0, other_seed));
    CHECK(!same_order(e0, identity));
    batcher_free(&a);
    batcher_free(&b);
}

static void no_shuffle_keeps_dataset_order(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher b;
    CHECK_INT_EQ(batcher_init(&b, ds, 5, 0, 42, &st), 0);
    for (int epoch = 0; epoch < 3; epoch++) {
        int order[COUNT];
        CHECK_INT_EQ(run_epoch(&b, epoch, order), COUNT);
        for (int i = 0; i < COUNT; i++) CHECK_INT_EQ(order[i], i);
    }
    batcher_free(&b);
}

static void last_batch_is_short(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher b;
    float images[8 * SAMPLE];
    int32_t labels[8];
    CHECK_INT_EQ(batcher_init(&b, ds, 5, 1, 1, &st), 0);
    CHECK_INT_EQ(batcher_steps_per_epoch(&b), 5);
    const int expected[6] = {5, 5, 5, 5, 3, 0};
    for (int step = 0; step < 6; step++) CHECK_INT_EQ(batcher_next(&b, images, labels), expected[step]);
    CHECK_INT_EQ(batcher_next(&b, images, labels), 0);  // stays at the end
    batcher_free(&b);

    // A batch larger than the dataset is one short batch; init readies epoch 0.
    float big[COUNT * SAMPLE];
    int32_t big_labels[COUNT];
    CHECK_INT_EQ(batcher_init(&b, ds, 100, 0, 1, &st), 0);
    CHECK_INT_EQ(batcher_steps_per_epoch(&b), 1);
    CHECK_INT_EQ(batcher_next(&b, big, big_labels), COUNT);
    CHECK_INT_EQ(batcher_next(&b, big, big_labels), 0);
    batcher_free(&b);

    // An exact multiple has no empty extra step.
    CHECK_INT_EQ(batcher_init(&b, ds, 23, 0, 1, &st), 0);
    CHECK_INT_EQ(batcher_steps_per_epoch(&b), 1);
    batcher_free(&b);
}

static void bytes_scale_to_unit_range(void) {
    Dataset ds = {0};
    uint8_t pixels[4] = {0, 255, 128, 1};
    uint8_t labels[1] = {3};
    ds.count = 1;
    ds.channels = 1;
    ds.height = 2;
    ds.width = 2;
    ds.images = pixels;
    ds.labels = labels;
    Status st;
    status_clear(&st);
    Batcher b;
    CHECK_INT_EQ(batcher_init(&b, &ds, 1, 0, 0, &st), 0);
    float out[4];
    int32_t label = -1;
    CHECK_INT_EQ(batcher_next(&b, out, &label), 1);
    CHECK(out[0] == 0.0f);
    CHECK(out[1] == 1.0f);
    CHECK_NEAR(out[2], 128.0 / 255.0, 1e-7);
    CHECK_NEAR(out[3], 1.0 / 255.0, 1e-9);
    CHECK_INT_EQ(label, 3);
    batcher_free(&b);
}

static void bad_arguments_are_statuses(const Dataset *ds) {
    Status st;
    status_clear(&st);
    Batcher b;
    CHECK_INT_EQ(batcher_init(&b, ds, 0, 1, 1, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "batch size must be at least 1, got 0");
    CHECK(b.order == NULL);
    batcher_free(&b);
    Dataset empty = {0};
    status_clear(&st);
    CHECK_INT_EQ(batcher_init(&b, &empty, 4, 1, 1, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "empty dataset");
    batcher_free(&b);
}

int main(void) {
    Dataset ds = make_dataset();
    every_sample_seen_once_per_epoch(&ds);
    same_seed_and_epoch_give_same_order(&ds);
    different_epoch_or_seed_gives_different_order(&ds);
    no_shuffle_keeps_dataset_order(&ds);
    last_batch_is_short(&ds);
    bytes_scale_to_unit_range();
    bad_arguments_are_statuses(&ds);
    dataset_free(&ds);
    return test_exit_code("test_batcher");
}
