// --val-split: dataset_split_off holds out round(fraction * count) samples chosen from the
// seed, keeps both parts in the original order, loses and duplicates nothing, gives the
// same split for the same seed, and works on f32 (CSV) datasets as on bytes.
#include "check.h"
#include "data/dataset.h"

#include <stdlib.h>

enum { COUNT = 20, SAMPLE = 3 };

// Sample i holds the values i, i, i (label i % 4), so where a sample went is visible.
static void make(Dataset *ds, int features) {
    memset(ds, 0, sizeof *ds);
    ds->count = COUNT;
    ds->channels = ds->height = 1;
    ds->width = SAMPLE;
    ds->labels = malloc(COUNT);
    if (features) ds->features = malloc(COUNT * SAMPLE * sizeof(float));
    else ds->images = malloc(COUNT * SAMPLE);
    for (int i = 0; i < COUNT; i++) {
        ds->labels[i] = (uint8_t)(i % 4);
        for (int v = 0; v < SAMPLE; v++) {
            if (features) ds->features[i * SAMPLE + v] = (float)i;
            else ds->images[i * SAMPLE + v] = (uint8_t)i;
        }
    }
}

static int sample_id(const Dataset *ds, int i) {
    return ds->features ? (int)ds->features[i * SAMPLE] : ds->images[i * SAMPLE];
}

static void split_keeps_every_sample_once_in_order(int features) {
    Dataset train, val;
    make(&train, features);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(dataset_split_off(&train, 0.25, 7, &val, &st), 0);
    CHECK_INT_EQ(val.count, 5);
    CHECK_INT_EQ(train.count, 15);
    int seen[COUNT] = {0};
    const Dataset *parts[2] = {&train, &val};
    for (int p = 0; p < 2; p++) {
        int previous = -1;
        for (int i = 0; i < parts[p]->count; i++) {
            int id = sample_id(parts[p], i);
            CHECK(id > previous);  // order kept
            previous = id;
            CHECK_INT_EQ(parts[p]->labels[i], id % 4);
            const Dataset *d = parts[p];
            int last = features ? (int)d->features[i * SAMPLE + SAMPLE - 1]
                                : d->images[i * SAMPLE + SAMPLE - 1];
            CHECK_INT_EQ(last, id);  // the whole sample moved, not just its first value
            seen[id]++;
        }
    }
    for (int i = 0; i < COUNT; i++) CHECK_INT_EQ(seen[i], 1);
    // The same seed holds out the same samples.
    Dataset again, val_again;
    make(&again, features);
    CHECK_INT_EQ(dataset_split_off(&again, 0.25, 7, &val_again, &st), 0);
    for (int i = 0; i < val.count; i++) CHECK_INT_EQ(sample_id(&val, i), sample_id(&val_again, i));
    dataset_free(&train);
    dataset_free(&val);
    dataset_free(&again);
    dataset_free(&val_again);
}

static void fractions_that_leave_a_part_empty_are_refused(void) {
    Dataset train, val;
    make(&train, 0);
    Status st;
    status_clear(&st);
    CHECK_INT_EQ(dataset_split_off(&train, 0.01, 1, &val, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "leaves 0 for validation");
    CHECK_INT_EQ(dataset_split_off(&train, 0.99, 1, &val, &st), STATUS_BAD_INPUT);
    CHECK_INT_EQ(train.count, COUNT);  // untouched
    dataset_free(&train);
}

int main(void) {
    split_keeps_every_sample_once_in_order(0);
    split_keeps_every_sample_once_in_order(1);
    fractions_that_leave_a_part_empty_are_refused();
    return test_exit_code("test_dataset_split");
}
