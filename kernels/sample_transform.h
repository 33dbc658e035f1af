// How a sample's bytes become the floats a model sees: a scale and shift per channel
// (bytes / 255, then the run's normalization), and for training only, a crop of the image
// padded with zero bytes at a random offset and a random left-right flip.
//
// Header-only and free of any backend, so that the CPU op, the CUDA kernel and the host's
// staged batches (data/batcher.c) compute every value with the same expression. A sample's
// crop and flip come from a hash of (key, the sample's index in its dataset), not from a
// stream of random numbers: any thread can place any value, and a sample is transformed
// the same way whichever device, replica or micro-batch loads it, so a resumed run, or one
// split into smaller passes after running out of memory, sees the same images.
#ifndef TRAINER_SAMPLE_TRANSFORM_H
#define TRAINER_SAMPLE_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SAMPLE_TRANSFORM_FN __host__ __device__ static inline
#else
#define SAMPLE_TRANSFORM_FN static inline
#endif

// Images are gray (1) or RGB (3); one more for a future alpha channel.
#define SAMPLE_TRANSFORM_MAX_CHANNELS 4

typedef struct SampleTransform {
    int channels, height, width;    // the sample's image shape
    // value = byte * channel_scale[c] + channel_shift[c]
    float channel_scale[SAMPLE_TRANSFORM_MAX_CHANNELS];
    float channel_shift[SAMPLE_TRANSFORM_MAX_CHANNELS];
    int crop_padding;               // 0: no crop; else offsets in [-crop_padding, crop_padding]
    int flip;                       // 1: every other sample (by the hash) flipped left-right
    uint64_t augment_key;           // changes every epoch, so a sample's crop does too
} SampleTransform;

// Where a sample's pixels come from: output (y, x) reads input (y + dy, x' + dx), x' the
// flipped column when flip is set. Outside the image it reads a zero byte, as
// torchvision's RandomCrop(padding=P) pads before cropping.
typedef struct SamplePlacement {
    int dy, dx, flip;
} SamplePlacement;

// splitmix64's finalizer over (key, index): well mixed in every bit, so the low bits can
// pick the offsets and the top bit the flip.
SAMPLE_TRANSFORM_FN uint64_t sample_transform_hash(uint64_t key, uint64_t index) {
    uint64_t z = key + (index + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

SAMPLE_TRANSFORM_FN SamplePlacement sample_placement(const SampleTransform *t, uint64_t index) {
    SamplePlacement place = {0, 0, 0};
    if (!t->crop_padding && !t->flip) return place;
    uint64_t h = sample_transform_hash(t->augment_key, index);
    unsigned span = 2u * (unsigned)t->crop_padding + 1u;
    place.dy = (int)((unsigned)(h & 0xffffu) % span) - t->crop_padding;
    place.dx = (int)((unsigned)((h >> 16) & 0xffffu) % span) - t->crop_padding;
    place.flip = t->flip && (h >> 63);
    return place;
}

// The value at position p (channel-major: c, then y, then x) of the transformed sample.
SAMPLE_TRANSFORM_FN float sample_transform_value(const SampleTransform *t, const uint8_t *sample,
                                                 SamplePlacement place, size_t p) {
    size_t plane = (size_t)t->height * (size_t)t->width;
    int c = (int)(p / plane);
    int rest = (int)(p % plane);
    int y = rest / t->width, x = rest % t->width;
    int from_x = (place.flip ? t->width - 1 - x : x) + place.dx;
    int from_y = y + place.dy;
    int inside = from_y >= 0 && from_y < t->height && from_x >= 0 && from_x < t->width;
    uint8_t byte = inside ? sample[c * plane + (size_t)from_y * t->width + from_x] : 0;
    return (float)byte * t->channel_scale[c] + t->channel_shift[c];
}

#ifndef __CUDACC__
// The whole sample into out (channels * height * width floats), row by row: the same
// values as sample_transform_value, without its divisions per value (the host path
// converts every sample of every staged batch).
static inline void sample_transform_apply(const SampleTransform *t, const uint8_t *sample,
                                          uint64_t index, float *out) {
    SamplePlacement place = sample_placement(t, index);
    int width = t->width;
    for (int c = 0; c < t->channels; c++) {
        float scale = t->channel_scale[c], shift = t->channel_shift[c];
        const uint8_t *plane = sample + (size_t)c * t->height * width;
        for (int y = 0; y < t->height; y++, out += width) {
            int from_y = y + place.dy;
            if (from_y < 0 || from_y >= t->height) {
                for (int x = 0; x < width; x++) out[x] = (float)0 * scale + shift;
                continue;
            }
            const uint8_t *row = plane + (size_t)from_y * width;
            if (!place.flip && place.dx == 0) {
                for (int x = 0; x < width; x++) out[x] = (float)row[x] * scale + shift;
                continue;
            }
            for (int x = 0; x < width; x++) {
                int from_x = (place.flip ? width - 1 - x : x) + place.dx;
                uint8_t byte = from_x >= 0 && from_x < width ? row[from_x] : 0;
                out[x] = (float)byte * scale + shift;
            }
        }
    }
}
#endif

#endif
