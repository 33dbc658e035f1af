// Normalization and augmentation of samples (kernels/sample_transform.h, data/transform.h):
// - the host's row-by-row path gives exactly the values of the per-value expression the
//   CUDA kernel uses, for every placement a crop and flip can take;
// - a crop reads the image shifted by (dy, dx) with zero bytes outside, a flip mirrors
//   the columns; offsets cover [-P, P], about half the samples flip, and the choice
//   depends only on (key, index): the same each time, another in another epoch;
// - per-channel mean and std over a dataset, a constant feature kept at std 1;
// - a checkpoint's list of values comes back exactly; transforms that do not fit the
//   data are refused with the numbers.
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "data/dataset.h"
#include "data/transform.h"

enum { C = 3, H = 6, W = 5 };

static void fill_sample(uint8_t *sample) {
    for (int i = 0; i < C * H * W; i++) sample[i] = (uint8_t)(11 + i * 7);
}

static SampleTransform transform_with(int crop_padding, int flip, uint64_t key) {
    SampleTransform t = {.channels = C, .height = H, .width = W, .crop_padding = crop_padding,
                         .flip = flip, .augment_key = key};
    for (int c = 0; c < C; c++) {
        t.channel_scale[c] = 1.0f / (255.0f * (0.2f + 0.1f * (float)c));
        t.channel_shift[c] = -(0.4f + 0.05f * (float)c) / (0.2f + 0.1f * (float)c);
    }
    return t;
}

static void test_rows_match_values(void) {
    uint8_t sample[C * H * W];
    fill_sample(sample);
    float rows[C * H * W];
    for (uint64_t index = 0; index < 200; index++) {
        SampleTransform t = transform_with((int)(index % 4), (int)(index % 3 != 0), 77);
        sample_transform_apply(&t, sample, index, rows);
        SamplePlacement place = sample_placement(&t, index);
        for (size_t p = 0; p < C * H * W; p++) {
            float value = sample_transform_value(&t, sample, place, p);
            if (value != rows[p]) {
                CHECK_NEAR(rows[p], value, 0);
                return;
            }
        }
    }
}

static void test_crop_and_flip_move_pixels(void) {
    uint8_t sample[C * H * W];
    fill_sample(sample);
    SampleTransform t = transform_with(2, 1, 5);
    int seen_dy[5] = {0}, seen_dx[5] = {0}, flips = 0;
    enum { SAMPLES = 4000 };
    for (uint64_t index = 0; index < SAMPLES; index++) {
        SamplePlacement place = sample_placement(&t, index);
        CHECK(place.dy >= -2 && place.dy <= 2 && place.dx >= -2 && place.dx <= 2);
        if (place.dy < -2 || place.dy > 2 || place.dx < -2 || place.dx > 2) return;
        seen_dy[place.dy + 2]++;
        seen_dx[place.dx + 2]++;
        flips += place.flip;
        float out[C * H * W];
        sample_transform_apply(&t, sample, index, out);
        for (int c = 0; c < C; c++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    int from_x = (place.flip ? W - 1 - x : x) + place.dx, from_y = y + place.dy;
                    int inside = from_y >= 0 && from_y < H && from_x >= 0 && from_x < W;
                    uint8_t byte = inside ? sample[(c * H + from_y) * W + from_x] : 0;
                    float want = (float)byte * t.channel_scale[c] + t.channel_shift[c];
                    CHECK_NEAR(out[(c * H + y) * W + x], want, 1e-6);
                }
    }
    for (int i = 0; i < 5; i++) {
        CHECK(seen_dy[i] > SAMPLES / 5 - 250 && seen_dy[i] < SAMPLES / 5 + 250);
        CHECK(seen_dx[i] > SAMPLES / 5 - 250 && seen_dx[i] < SAMPLES / 5 + 250);
    }
    CHECK(flips > SAMPLES / 2 - 200 && flips < SAMPLES / 2 + 200);
    // Off: every sample in place, flip or not asked.
    SampleTransform off = transform_with(0, 0, 5);
    SamplePlacement none = sample_placement(&off, 17);
    CHECK(none.dx == 0 && none.dy == 0 && none.flip == 0);
}

static void test_placement_follows_key_and_index(void) {
    SampleTransform epoch1 = transform_with(4, 1, data_transform_epoch_key(42, 1));
    SampleTransform again = transform_with(4, 1, data_transform_epoch_key(42, 1));
    SampleTransform epoch2 = transform_with(4, 1, data_transform_epoch_key(42, 2));
    int differ = 0;
    for (uint64_t index = 0; index < 100; index++) {
        SamplePlacement a = sample_placement(&epoch1, index), b = sample_placement(&again, index);
        SamplePlacement c = sample_placement(&epoch2, index);
        CHECK(a.dx == b.dx && a.dy == b.dy && a.flip == b.flip);
        differ += a.dx != c.dx || a.dy != c.dy || a.flip != c.flip;
    }
    CHECK(differ > 80);
}

static void test_normalization_of_a_dataset(void) {
    // Two 2x1x2 images: channel 0 holds 0, 51, 102, 153 (values / 255: 0, .2, .4, .6),
    // channel 1 always 255.
    uint8_t images[8] = {0, 51, 255, 255, 102, 153, 255, 255}, labels[2] = {0, 1};
    Dataset ds = {.count = 2, .channels = 2, .height = 1, .width = 2, .images = images,
                  .labels = labels, .label_max = 1};
    snprintf(ds.source, sizeof ds.source, "two images");
    Status st;
    status_clear(&st);
    Normalization n;
    int constant = -1;
    CHECK_INT_EQ(normalization_compute(&ds, &n, &constant, &st), 0);
    CHECK_INT_EQ(n.count, 2);
    CHECK_NEAR(n.mean[0], 0.3, 1e-6);
    CHECK_NEAR(n.std[0], 0.2236068, 1e-6);  // population std of 0, .2, .4, .6
    CHECK_NEAR(n.mean[1], 1.0, 1e-6);
    CHECK_NEAR(n.std[1], 1.0, 0);           // constant: kept at 1
    CHECK_INT_EQ(constant, 1);
    // Gathered through the batcher: (value - mean) / std.
    Batcher b;
    CHECK_INT_EQ(batcher_init(&b, &ds, 2, 0, 1, &st), 0);
    DataTransform t = {.normalization = &n};
    CHECK_INT_EQ(batcher_set_transform(&b, &t, &st), 0);
    float out[8];
    int32_t got_labels[2];
    CHECK_INT_EQ(batcher_next(&b, out, got_labels), 2);
    CHECK_NEAR(out[0], (0.0 - 0.3) / 0.2236068, 1e-5);
    CHECK_NEAR(out[5], (0.6 - 0.3) / 0.2236068, 1e-5);
    CHECK_NEAR(out[2], 0.0, 1e-6);
    batcher_free(&b);

    // A crop wider than the images is refused with the numbers.
    DataTransform wide = {.crop_padding = 2};
    CHECK_INT_EQ(data_transform_check(&wide, &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "crop=2");
    CHECK_CONTAINS(st.message, "1x2");
    // So is a normalization of another channel count.
    double mean[3] = {0.1, 0.2, 0.3}, std[3] = {1, 1, 1};
    Normalization three;
    CHECK_INT_EQ(normalization_from_values(mean, std, 3, 3, &three, &st), 0);
    DataTransform mismatch = {.normalization = &three};
    CHECK_INT_EQ(data_transform_check(&mismatch, &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "3 values");
    CHECK_CONTAINS(st.message, "2 channels");
    normalization_free(&three);
    CHECK_INT_EQ(normalization_from_values(mean, std, 3, 2, &three, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "gives 3 values");
    CHECK_INT_EQ(normalization_from_values(mean, std, 1, 2, &three, &st), 0);
    CHECK_NEAR(three.mean[1], 0.1, 1e-7);  // one value for every channel
    normalization_free(&three);

    // Checkpoint metadata: 9 significant digits give back every float exactly.
    char text[256];
    normalization_format(n.std, n.count, 9, text, sizeof text);
    float back[2];
    CHECK_INT_EQ(normalization_parse(text, back, 2), 0);
    CHECK(back[0] == n.std[0] && back[1] == n.std[1]);
    CHECK_INT_EQ(normalization_parse(text, back, 1), -1);  // one value too many
    CHECK_INT_EQ(normalization_parse("0.5,x", back, 2), -1);
    CHECK_INT_EQ(normalization_parse("0.5,inf", back, 2), -1);
    normalization_free(&n);
}

static void test_features_normalized_not_augmented(void) {
    float features[6] = {1, 10, 3, 10, 5, 10};  // 3 samples, 2 features; the second constant
    uint8_t labels[3] = {0, 1, 0};
    Dataset ds = {.count = 3, .channels = 1, .height = 1, .width = 2, .features = features,
                  .labels = labels, .label_max = 1};
    snprintf(ds.source, sizeof ds.source, "table.csv");
    Status st;
    status_clear(&st);
    Normalization n;
    CHECK_INT_EQ(normalization_compute(&ds, &n, NULL, &st), 0);
    CHECK_INT_EQ(n.count, 2);
    CHECK_NEAR(n.mean[0], 3, 1e-6);
    CHECK_NEAR(n.mean[1], 10, 1e-6);
    float out[2];
    int32_t index = 2, label;
    DataTransform t = {.normalization = &n};
    CHECK_INT_EQ(dataset_gather(&ds, &t, &index, 1, out, &label, &st), 0);
    CHECK_NEAR(out[0], (5 - 3) / 1.6329932, 1e-5);
    CHECK_NEAR(out[1], 0, 0);
    DataTransform flip = {.flip = 1};
    CHECK_INT_EQ(data_transform_check(&flip, &ds, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "CSV features");
    normalization_free(&n);
}

int main(void) {
    test_rows_match_values();
    test_crop_and_flip_move_pixels();
    test_placement_follows_key_and_index();
    test_normalization_of_a_dataset();
    test_features_normalized_not_augmented();
    return test_exit_code("test_sample_transform");
}
