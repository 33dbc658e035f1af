#include "base/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void rng_seed(Rng *rng, uint64_t seed) {
    uint64_t x = seed;
    rng->state[0] = splitmix64(&x);
    rng->state[1] = splitmix64(&x);
}

// xoroshiro128+: fast, and good enough in its high bits, which are the ones we use.
uint64_t rng_next_u64(Rng *rng) {
    uint64_t s0 = rng->state[0], s1 = rng->state[1];
    uint64_t result = s0 + s1;
    s1 ^= s0;
    rng->state[0] = ((s0 << 24) | (s0 >> 40)) ^ s1 ^ (s1 << 16);
    rng->state[1] = (s1 << 37) | (s1 >> 27);
    return result;
}

float rng_uniform(Rng *rng) { return (float)(rng_next_u64(rng) >> 40) * (1.0f / 16777216.0f); }

uint32_t rng_below(Rng *rng, uint32_t n) {
    // Multiply-shift keeps the bias below 2^-32 for the sizes we shuffle.
    return (uint32_t)(((rng_next_u64(rng) >> 32) * (uint64_t)n) >> 32);
}

float rng_normal(Rng *rng) {
    float u1 = rng_uniform(rng), u2 = rng_uniform(rng);
    if (u1 < 1e-7f) u1 = 1e-7f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
}
