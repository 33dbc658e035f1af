// A small seeded generator (splitmix64-seeded xoshiro128+-style 64-bit state) so that
// shuffling, initialisation and dropout are reproducible from one `seed=` and do not
// depend on the C library's rand().
#ifndef TRAINER_RNG_H
#define TRAINER_RNG_H

#include <stdint.h>

typedef struct Rng {
    uint64_t state[2];
} Rng;

void rng_seed(Rng *rng, uint64_t seed);
uint64_t rng_next_u64(Rng *rng);
// Uniform in [0, 1) with 24 bits of mantissa, the resolution a float can hold.
float rng_uniform(Rng *rng);
// Uniform integer in [0, n).
uint32_t rng_below(Rng *rng, uint32_t n);
// Standard normal (Box-Muller).
float rng_normal(Rng *rng);

#endif
