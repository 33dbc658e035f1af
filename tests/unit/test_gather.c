// Gathering a batch on the device (batcher_next_indices + the gather_samples op) gives the
// same images, labels and order as converting it on the host (batcher_next).
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "data/dataset.h"
#include "data/transform.h"
#include "kernels/backend.h"

int main(void) {
    enum { COUNT = 37, C = 1, H = 3, W = 5, BATCH = 8 };
    const size_t sample = C * H * W;
    uint8_t images[COUNT * C * H * W], labels[COUNT];
    for (size_t i = 0; i < sizeof images; i++) images[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < COUNT; i++) labels[i] = (uint8_t)(i % 10);
    Dataset ds = {.count = COUNT, .channels = C, .height = H, .width = W, .images = images,
                  .labels = labels, .label_max = 9};
    Batcher host, device;
    Status st;
    status_clear(&st);
    CHECK(batcher_init(&host, &ds, BATCH, 1, 42, &st) == 0);
    CHECK(batcher_init(&device, &ds, BATCH, 1, 42, &st) == 0);
    const Backend *b = cpu_backend();
    float want[BATCH * C * H * W], got[BATCH * C * H * W];
    int32_t want_labels[BATCH], got_labels[BATCH], indices[BATCH];
    for (int epoch = 0; epoch < 3; epoch++) {
        batcher_start_epoch(&host, epoch);
        batcher_start_epoch(&device, epoch);
        for (;;) {
            int n = batcher_next(&host, want, want_labels);
            int m = batcher_next_indices(&device, indices);
            CHECK_INT_EQ(n, m);
            if (n == 0 || n != m) break;
            int32_t bad = INT32_MAX;
            GatherArgs gather = {.count = m, .sample_size = sample, .classes = 10};
            data_transform_for_bytes(NULL, &ds, &gather.transform);
            CHECK(b->gather_samples(b, &gather, &(GatherSamplesTensors){.images = images,
                                    .labels = labels, .indices = indices, .out_images = got,
                                    .out_labels = got_labels, .first_bad_sample = &bad}, &st) == 0);
            CHECK_INT_EQ(bad, INT32_MAX);
            for (int k = 0; k < n; k++) CHECK_INT_EQ(got_labels[k], want_labels[k]);
            for (size_t i = 0; i < (size_t)n * sample; i++)
                if (got[i] != want[i]) {
                    CHECK_NEAR(got[i], want[i], 0);
                    break;
                }
        }
    }
    batcher_free(&host);
    batcher_free(&device);

    // Against 7 classes, labels 7-9 are out of range: written as 0, and the smallest
    // dataset index holding one is reported (samples 7, 8, 9, 17, ... have them).
    int32_t some[4] = {21, 17, 3, 9}, bad = INT32_MAX;
    GatherArgs seven_classes = {.count = 4, .sample_size = sample, .classes = 7};
    data_transform_for_bytes(NULL, &ds, &seven_classes.transform);
    CHECK(b->gather_samples(b, &seven_classes, &(GatherSamplesTensors){.images = images,
                            .labels = labels, .indices = some, .out_images = got,
                            .out_labels = got_labels, .first_bad_sample = &bad}, &st) == 0);
    CHECK_INT_EQ(bad, 9);
    CHECK_INT_EQ(got_labels[0], 1);
    CHECK_INT_EQ(got_labels[1], 0);
    CHECK_INT_EQ(got_labels[2], 3);
    CHECK_INT_EQ(got_labels[3], 0);
    return test_exit_code("test_gather");
}
