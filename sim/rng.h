/* rng.h: the simulation's deterministic random numbers (libsim; the tracker's smearing uses them too): xoshiro256** streams seeded through splitmix64. */
#ifndef NARWHAL_SIM_RNG_H
#define NARWHAL_SIM_RNG_H

#include <math.h>
#include <stdint.h>

/*
 * xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 47, 2021) with its state filled by splitmix64
 * (Steele, Lea and Flood, OOPSLA 2014), as its authors recommend.  Every
 * simulated event gets its own stream, seeded from (run seed, event number,
 * purpose), so an event's content does not depend on how events are spread
 * over threads or blocks: the same seed gives the same bytes.
 */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng;

static inline uint64_t sim_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A stream for (seed, index, purpose); distinct triples give unrelated streams. */
static inline void sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t index, uint64_t purpose)
{
    uint64_t x = seed;
    x = sim_splitmix64(&x) ^ index;
    x = sim_splitmix64(&x) ^ (purpose * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = sim_splitmix64(&x);
}

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double sim_uniform(sim_rng *r) { return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in (0, 1]: safe under log(). */
static inline double sim_uniform_pos(sim_rng *r) { return 1.0 - sim_uniform(r); }

/* Standard normal by the polar (Marsaglia) method; the second value is not kept,
 * so a stream's content does not depend on earlier calls' parity. */
static inline double sim_gauss(sim_rng *r)
{
    double u, v, s;
    do {
        u = 2 * sim_uniform(r) - 1;
        v = 2 * sim_uniform(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    return u * sqrt(-2 * log(s) / s);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for n < 2^32). */
static inline uint32_t sim_below(sim_rng *r, uint32_t n)
{
    return (uint32_t)(((sim_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* An isotropic unit vector. */
static inline void sim_isotropic(sim_rng *r, double d[3])
{
    double cz = 2 * sim_uniform(r) - 1, phi = 2 * M_PI * sim_uniform(r), sz = sqrt(1 - cz * cz);
    d[0] = sz * cos(phi);
    d[1] = sz * sin(phi);
    d[2] = cz;
}

#endif
