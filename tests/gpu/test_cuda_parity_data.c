// The CUDA backend against the CPU reference, the data ops (gather_samples)
// (kernels/backend.h); parity_harness.c says how each op is checked and in which passes.

#include "parity_harness.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A batch gathered from a byte dataset on the device: `count` random sample indices
// (repeats included) into `samples` samples of `sample_size` bytes. Labels run 0-9 against
// 8 classes, so the bad-label check (labels 8 and 9 become 0, the smallest such sample
// index is reported) is compared too.
// t: the sample's geometry, per-channel scale and shift, and augmentation.
static void gather_case(int samples, const SampleTransform *t, int count) {
    size_t sample_size = (size_t)t->channels * t->height * t->width;
    snprintf(shape, sizeof shape, "%d samples of %dx%dx%d, batch %d, scale %g shift %g, crop %d "
             "flip %d", samples, t->channels, t->height, t->width, count,
             (double)t->channel_scale[0], (double)t->channel_shift[0], t->crop_padding, t->flip);
    Status st;
    status_clear(&st);
    size_t bytes = (size_t)samples * sample_size, n = (size_t)count * sample_size;
    uint8_t *images = host_alloc(bytes), *labels = host_alloc((size_t)samples);
    int32_t *indices = host_alloc((size_t)count * sizeof *indices + 1);
    for (size_t i = 0; i < bytes; i++) images[i] = (uint8_t)rng_below(&rng, 256);
    for (int i = 0; i < samples; i++) labels[i] = (uint8_t)rng_below(&rng, 10);
    for (int k = 0; k < count; k++) indices[k] = (int32_t)rng_below(&rng, (uint32_t)samples);
    if (count > 1) indices[count - 1] = indices[0];
    uint8_t *d_images = dev_copy(images, bytes), *d_labels = dev_copy(labels, (size_t)samples);
    int32_t *d_indices = dev_copy(indices, (size_t)count * sizeof *indices);
    float *d_out = dev_poison_floats(n + 1);
    int32_t *d_out_labels = dev_poisoned(((size_t)count + 1) * sizeof(int32_t));
    const int classes = 8;
    int32_t want_bad = INT32_MAX, got_bad = 0;
    int32_t *d_bad = dev_copy(&want_bad, sizeof want_bad);
    GatherArgs gather = {.count = count, .sample_size = sample_size, .classes = classes,
                         .transform = *t};
    if (GPU_CALL(gather_samples, &gather, &(GatherSamplesTensors){.images = d_images,
                 .labels = d_labels, .indices = d_indices, .out_images = d_out,
                 .out_labels = d_out_labels, .first_bad_sample = d_bad}))
        return;
    float *want = poisoned(n + 1);
    int32_t *want_labels = host_alloc(((size_t)count + 1) * sizeof *want_labels);
    int32_t *got_labels = host_alloc(((size_t)count + 1) * sizeof *got_labels);
    memset(want_labels, POISON_BYTE, ((size_t)count + 1) * sizeof *want_labels);
    CPU_CALL(gather_samples, &gather, &(GatherSamplesTensors){.images = images, .labels = labels,
             .indices = indices, .out_images = want, .out_labels = want_labels,
             .first_bad_sample = &want_bad});
    download(got_labels, d_out_labels, ((size_t)count + 1) * sizeof *got_labels);
    download(&got_bad, d_bad, sizeof got_bad);
    compare_exact("gather_samples", "first bad-label sample", &got_bad, &want_bad, 1, 1, 0);
    // A byte times the scale plus the shift: a rounding or two, relative to itself; a crop
    // or flip misplaced would be off by whole bytes. The element after the batch must keep
    // its poison.
    compare("gather_samples", "images", fetch(d_out, n + 1), want, NULL, n + 1);
    compare_exact("gather_samples", "labels", got_labels, want_labels, (size_t)count + 1, 1, 0);
}

static SampleTransform plain_transform(int channels, int height, int width) {
    SampleTransform t = {.channels = channels, .height = height, .width = width};
    for (int c = 0; c < channels; c++) t.channel_scale[c] = 1.0f / 255.0f;
    return t;
}

static void test_gather_samples(void) {
    REQUIRE(gather_samples);
    static const struct { int samples, channels, height, width, count; } cases[] = {
        {1, 1, 1, 1, 1}, {10, 1, 1, 5, 0}, {37, 1, 3, 5, 8}, {1000, 1, 28, 28, 128},
        {600, 3, 32, 32, 1}, {5000, 1, 28, 28, 1024}, {300, 1, 1, 1, 257},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        SampleTransform t = plain_transform(cases[i].channels, cases[i].height, cases[i].width);
        gather_case(cases[i].samples, &t, cases[i].count);
        end_case();
    }
    SampleTransform half = plain_transform(1, 28, 28);
    half.channel_scale[0] = 0.5f;
    gather_case(50, &half, 64);
    end_case();
    // Normalized per channel (CIFAR-10's mean and std), then cropped and flipped as
    // training does: every sample's offsets come from the key and its index alone.
    static const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, std[3] = {0.2470f, 0.2435f,
                                                                         0.2616f};
    SampleTransform cifar = plain_transform(3, 32, 32);
    for (int c = 0; c < 3; c++) {
        cifar.channel_scale[c] = 1.0f / (255.0f * std[c]);
        cifar.channel_shift[c] = -mean[c] / std[c];
    }
    gather_case(600, &cifar, 256);
    end_case();
    cifar.crop_padding = 4;
    cifar.flip = 1;
    cifar.augment_key = 0x1234567890abcdefull;
    gather_case(600, &cifar, 256);
    end_case();
    SampleTransform odd = plain_transform(1, 7, 5);  // not square, padding past half of it
    odd.crop_padding = 3;
    odd.flip = 1;
    odd.augment_key = 99;
    gather_case(100, &odd, 64);
    end_case();
}

static void run(const ParityPass *pass) {
    (void)pass;
    if (section("gather_samples")) test_gather_samples();
}

PARITY_MAIN("test_cuda_parity_data", BACKEND_DATA_OPS, 0, run)
