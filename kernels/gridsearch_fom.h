/* gridsearch_fom.h: the grid search's figure of merit, written once for the CPU and the GPU: |d|^p without powf, the int16 table, a point's FoM and a lower bound of it for exact pruning. */
#ifndef NARWHAL_GRIDSEARCH_FOM_H
#define NARWHAL_GRIDSEARCH_FOM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpud.h"

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h> /* gs_quantise_run */
#endif

/*
 * FoM of basis point P for one search of net-charge segment s:
 *
 *   FoM = sum over the channels c of s's mask that this search uses,
 *         of  sum over the window samples i of  |m[c][i] - b_P[c][i]|^p
 *
 * m: the measured traces divided by the segment's energy, aligned on the
 * basis's time; b_P: P's basis signals.  The order of the arithmetic is part
 * of the definition: each channel's samples are summed in order into a
 * partial sum that starts at 0, and each used channel's partial is added to
 * the total in mask order.  The CPU (scalar and SIMD) and the GPU follow it
 * with the same roundings (every multiply-add below is fused, nothing else
 * is), so they return the same bits.
 *
 * |d|^p (float path).  d's bits give its biased exponent e and its mantissa
 * m in [1, 2): |d|^p = 2^(p (e - 127)) * m^p.  The first factor is a table of
 * 256 floats (one per exponent), the second a polynomial of degree 5 in
 * t = m - 1.5, fitted to m^p for the configured p.  The table also defines
 * the ends: exponents at or below GS_EXP_ZERO (|d| < 2^-54: at p = 0.3
 * each such term would add less than 2e-5, against about 0.2 for a
 * difference of the noise's size) give 0, and exponents above GS_EXP_TOP
 * (|d| >= 512, absurd data) are read as GS_EXP_TOP, so the CPU can hold
 * the 64 exponents between in four vector registers.  The error of the whole is the polynomial's
 * (psa_pow_fit measures it over every mantissa: about 1e-6 relative for p
 * = 0.3) plus three roundings; integer p up to 5 is exact up to rounding.
 *
 * |d|^p (int16 path).  Signals and measured values are stored as
 * round(value * GS_I16_SCALE) in int16, half the bytes to move; the integer
 * difference, times 1/GS_I16_SCALE (exact: a power of two), goes through
 * the float path.  So the int16 FoM is the float FoM of the values rounded
 * to multiples of 1/4096, bit for bit.
 */
enum {
    GS_POW_DEGREE = 5,
    GS_EXP_TABLE = 256,
    GS_EXP_ZERO = 72, /* [2^-55, 2^-54) and every smaller binade give 0 */
    GS_EXP_TOP = 135, /* [256, 512): larger |d| read this binade's factor */
    GS_I16_SCALE = 4096,
    GS_LB_BITS = 3, /* mantissa bits of a lower bound's bucket (gs_lb_index) */
    GS_LB_TABLE = GS_EXP_TABLE << GS_LB_BITS,
};
#define GS_I16_STEP (1.0f / GS_I16_SCALE)

typedef struct gs_pow {
    float p;
    float c[GS_POW_DEGREE + 1];  /* m^p ~ c0 + c1 t + ... + c5 t^5, t = m - 1.5 */
    float scale[GS_EXP_TABLE];   /* per biased exponent */
    float lb[GS_LB_TABLE];       /* per bucket of |d|: at most any term of the bucket (gs_acc_lb) */
    float least[16];             /* the polynomial's least value over the mantissas of each 4-bit bucket */
} gs_pow;
GPU_LAYOUT(sizeof(gs_pow) == 1052 + 4 * GS_LB_TABLE + 64 && offsetof(gs_pow, c) == 4 &&
           offsetof(gs_pow, scale) == 28 && offsetof(gs_pow, lb) == 1052 &&
           offsetof(gs_pow, least) == 1052 + 4 * GS_LB_TABLE);

#ifdef __CUDA_ARCH__
/* nvcc would fuse a * b + c where it likes; the intrinsics round each step as the CPU does. */
#define GS_FMA(a, b, c) __fmaf_rn((a), (b), (c))
#define GS_ADD(a, b) __fadd_rn((a), (b))
#define GS_SUB(a, b) __fsub_rn((a), (b))
/* A float's bits and back (gs_bits, gs_float): the device reinterprets the register. */
#define GS_PUN(name, from, to, intrinsic) \
    GPUd() static inline to name(from x) { return intrinsic(x); }
#else
/* gcc builds C11 with -ffp-contract=off: a * b + c is never fused behind our back,
 * and __builtin_fmaf becomes one instruction in the functions built for FMA. */
#define GS_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#define GS_ADD(a, b) ((a) + (b))
#define GS_SUB(a, b) ((a) - (b))
/* The host copies the bytes: C11's only defined way, and gcc makes it one move. */
#define GS_PUN(name, from, to, intrinsic) \
    GPUd() static inline to name(from x) \
    { \
        to y; \
        memcpy(&y, &x, sizeof y); \
        return y; \
    }
#endif

GS_PUN(gs_bits, float, uint32_t, __float_as_uint)
GS_PUN(gs_float, uint32_t, float, __uint_as_float)
#undef GS_PUN

/* m^p for the mantissa of d (t = m - 1.5), the polynomial alone. */
GPUd() static inline float gs_pow_mantissa(const float *c, uint32_t bits)
{
    float t = GS_SUB(gs_float((bits & 0x007fffffu) | 0x3f800000u), 1.5f);
    float y = GS_FMA(c[5], t, c[4]);
    y = GS_FMA(y, t, c[3]);
    y = GS_FMA(y, t, c[2]);
    y = GS_FMA(y, t, c[1]);
    return GS_FMA(y, t, c[0]);
}

/* acc + |d|^p, float path: one fused multiply-add of the polynomial by the exponent's factor. */
GPUd() static inline float gs_acc_pow(float acc, float d, const float *c, const float *scale)
{
    uint32_t u = gs_bits(d);
    return GS_FMA(gs_pow_mantissa(c, u), scale[(u >> 23) & 0xffu], acc);
}

/* acc + |d / GS_I16_SCALE|^p for an integer difference of int16 values. */
GPUd() static inline float gs_acc_pow16(float acc, int d, const float *c, const float *scale)
{
    return gs_acc_pow(acc, (float)d * GS_I16_STEP, c, scale);
}

/* The int16 value of a signal or normalised measured sample (rounded half
 * away from zero after the float add, saturated; NaN gives 0). */
GPUd() static inline int16_t gs_quantise(float v)
{
    float x = v * (float)GS_I16_SCALE;
    if (x != x)
        return 0;
    x = x > 32767.0f ? 32767.0f : x < -32767.0f ? -32767.0f : x;
    return (int16_t)(x < 0 ? x - 0.5f : x + 0.5f);
}

/*
 * gs_quantise of n values, eight at a time with SSE2 on the host: gcc does
 * not vectorize gs_quantise's clamps and rounding by itself, and the scalar
 * loop's branch on the sign mispredicts on traces (the GPU's int16 packing
 * of 78.6 M values took 48 ms on 16 threads, sample_runs/psa/h200-chunks14).
 * Each step is gs_quantise's, in its order and rounding: min(32767, x) and
 * max(-32767, x) return x when x is NaN, as the comparisons do; x - 0.5 is
 * x + (-0.5) exactly; the truncation's 0x80000000 for NaN keeps its low 16
 * bits (0) through the shifts, and packing then saturates nothing (every
 * value lies in +-32767).  check_gridsearch compares it with gs_quantise.
 */
static inline void gs_quantise_run(const float *src, int16_t *dst, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
    const __m128 scale = _mm_set1_ps((float)GS_I16_SCALE), hi = _mm_set1_ps(32767.0f), lo = _mm_set1_ps(-32767.0f);
    const __m128 half = _mm_set1_ps(0.5f), sign = _mm_set1_ps(-0.0f), zero = _mm_setzero_ps();
    for (const size_t whole = n & ~(size_t)7; i < whole; i += 8) {
        __m128i w[2];
        for (int h = 0; h < 2; h++) {
            __m128 x = _mm_max_ps(lo, _mm_min_ps(hi, _mm_mul_ps(_mm_loadu_ps(src + i + 4 * h), scale)));
            x = _mm_add_ps(x, _mm_or_ps(half, _mm_and_ps(_mm_cmplt_ps(x, zero), sign)));
            w[h] = _mm_srai_epi32(_mm_slli_epi32(_mm_cvttps_epi32(x), 16), 16);
        }
        _mm_storeu_si128((__m128i *)(dst + i), _mm_packs_epi32(w[0], w[1]));
    }
#endif
    for (; i < n; i++)
        dst[i] = gs_quantise(src[i]);
}

/*
 * The FoM of one point by the definition above, scalar: the CPU's portable
 * path, the adaptive fine stage on both sides, and the check of the SIMD and
 * GPU kernels.  basis points at the point's first value and steps by
 * `stride` from one (channel, sample) to the next (the layouts of
 * psa_layout.h); meas holds n_mask x window values; use has bit c set when
 * mask channel c enters the sum.  gs_fom_point16 is the same for int16 values
 * (gs_quantise's); the two differ only in a sample's term (TERM: the
 * accumulated power of meas - basis), so GS_FOM_POINT writes both.
 */
#define GS_FOM_POINT(name, T, TERM) \
    GPUd() static inline float name(const T *meas, const T *basis, uint32_t stride, uint32_t n_mask, \
                                    uint32_t window, uint32_t use, const float *c, const float *scale) \
    { \
        float total = 0.0f; \
        for (uint32_t ch = 0; ch < n_mask; ch++) { \
            float part = 0.0f; \
            for (uint32_t i = 0; i < window; i++) { \
                uint32_t k = ch * window + i; \
                part = TERM(part, meas[k], basis[(uint64_t)k * stride], c, scale); \
            } \
            if (use >> ch & 1u) \
                total = GS_ADD(total, part); \
        } \
        return total; \
    }
#define GS_TERM(acc, m, b, c, scale) gs_acc_pow(acc, GS_SUB(m, b), c, scale)
#define GS_TERM16(acc, m, b, c, scale) gs_acc_pow16(acc, (int)(m) - (int)(b), c, scale)
GS_FOM_POINT(gs_fom_point, float, GS_TERM)
GS_FOM_POINT(gs_fom_point16, int16_t, GS_TERM16)
#undef GS_FOM_POINT
#undef GS_TERM
#undef GS_TERM16

/*
 * A lower bound of a point's FoM, for exact pruning.  |d| falls in a bucket:
 * its biased exponent and the top GS_LB_BITS bits of its mantissa
 * (gs_lb_index: the bits of d without the sign).  lb[bucket] is at most
 * poly(m) x scale[e] for every d of the bucket, the exact product that
 * gs_acc_pow fuses into its sum (psa_pow_fit takes the least polynomial
 * value over all the bucket's mantissas and rounds the product down).
 * gs_lb_point sums lb[] exactly as GS_FOM_POINT sums the terms (per channel
 * from 0 in sample order, the used channels' parts in mask order), and a
 * rounded sum never decreases when a term or a partial sum grows, so
 *
 *   gs_lb_point(...) <= gs_fom_point(...)     bit for bit, no margin,
 *
 * and the bound after the first used channels is at most the whole bound
 * (lb >= 0).  A point whose bound exceeds the FoM U of any point already
 * computed has a FoM above U: it cannot be the answer, not even tie with it.
 * One bound term is a table read and an add: 5 issue slots on the GPU
 * against the 12 of gs_acc_pow; for p = 0.3 a bucket spans at most 3.6 % of
 * |d|^p.
 */
GPUd() static inline uint32_t gs_lb_index(float d)
{
    return gs_bits(d) << 1 >> (24 - GS_LB_BITS);
}

/* A coarser table of the same kind: 256 entries, one per exponent, each the
 * least of its GS_LB_BITS buckets (gs_lb_coarsen): looser, but its reads hit
 * distinct shared-memory banks for distinct exponents. */
GPUd() static inline uint32_t gs_lb_exponent(float d)
{
    return gs_bits(d) << 1 >> 24;
}

static inline void gs_lb_coarsen(const float *lb, float *lb_exp)
{
    for (int e = 0; e < GS_EXP_TABLE; e++) {
        lb_exp[e] = lb[e << GS_LB_BITS];
        for (int j = 1; j < 1 << GS_LB_BITS; j++)
            lb_exp[e] = lb[e << GS_LB_BITS | j] < lb_exp[e] ? lb[e << GS_LB_BITS | j] : lb_exp[e];
    }
}

GPUd() static inline float gs_acc_lb(float acc, float d, const float *lb)
{
    return GS_ADD(acc, lb[gs_lb_index(d)]);
}

/*
 * The same bound in fixed point, for the GPU's pruning: lbi[bucket] =
 * floor(lb[bucket] x 2^s), saturated at 65535 (2-byte entries: a value
 * below 2^-s counts 0, a huge one 65535; both still at most the term).  Its
 * sums are exact integers in any order, so L = sum of lbi <= 2^s x the exact
 * sum S of the FoM's terms; the FoM as computed is a rounded sum of S's
 * non-negative terms, at least S (1 - D u) with u = 2^-24 and D = window +
 * mask channels (its depth of roundings).  Hence: if L > 2^s x U x (1 +
 * 2^-12), the point's FoM exceeds U (D u < 2^-12 for D < 4096).  gs_lb_fixed
 * fills lbi and returns the threshold's factor 2^s (1 + 2^-12), with s the
 * largest that keeps the bound of |d| < 4 below 65535: every difference the
 * normalised traces make keeps its resolution.
 */
enum { GS_LB_FIXED_MAX = 65535, GS_LB_FIXED_REF = 128 /* the exponent of [2, 4) */ };

static inline float gs_lb_fixed(const float *lb, uint16_t *lbi)
{
    const double ref = lb[GS_LB_FIXED_REF << GS_LB_BITS | ((1 << GS_LB_BITS) - 1)];
    int s = 30;
    while (s > -60 && ldexp(ref, s) > GS_LB_FIXED_MAX)
        s--;
    for (int i = 0; i < GS_LB_TABLE; i++) {
        double v = ldexp(lb[i], s); /* exact: a power of two */
        lbi[i] = (uint16_t)(v >= GS_LB_FIXED_MAX ? (double)GS_LB_FIXED_MAX : v); /* truncation: floor of v >= 0 */
    }
    return (float)ldexp(1.0 + 1.0 / 4096, s);
}

/*
 * GS_PRUNE_LOG's bound, with no table: the GPU's pruning without a
 * shared-memory read per value.  With y = d x d (rounded) and its bits B,
 * Mitchell's logarithm L = B / 2^23 - 127 is at most log2 y (log2(1 + f) >=
 * f on [0, 1)), so z = (p / 2) L is at most log2 |d|^p (up to the product's
 * rounding, 2^-24 relative).  The float whose bits are r = (B >> 16) x
 * mul + floor(127 x 2^23 x (1 - p / 2)), mul = floor(p / 2 x 2^16) (a shift
 * and one IMAD: r is at most (p / 2) B + that, 0.35 % of |d|^p lower at
 * most), is F = 2^n (1 + f) with n + f <= z, and 2^f / (1 + f) >= c =
 * 0.942084 (its least, at f = 1 / ln 2 - 1), so c F <= 2^z <= |d|^p:
 *
 *   gs_log_term(d) x c  <=  |d|^p     (FADD, FMUL, SHF, IMAD, FADD a value)
 *
 * against the table's 5.9 issue slots and a shared read (an IMAD.HI
 * instead of the shift and IMAD ran 5 % slower than the table on the H200:
 * sample_runs/psa/h200-log8).  Its sum S over a
 * pair's values (float adds: at most S_exact (1 + 2^-12) for fewer than
 * 4,096 roundings) gives c S / (1 + 2^-12) <= sum of |d|^p, and the FoM as
 * computed is at least that sum x (1 - 2^-12) (its roundings) x (1 -
 * 2^-14) (the polynomial's error, gs_log_bound_make checks every mantissa),
 * less k x `zero` for the k values whose |d| < 2^-54 count 0 in gs_acc_pow
 * (zero bounds c F there).  Hence S > gs_log_limit(U, k) = (U (1 + 2^-10) + k
 * zero) / c proves the FoM above U: the same answers and bits as the
 * exhaustive search, for values below GS_LOG_VALUE_MAX in magnitude (the
 * basis's, checked once; a tile's measured ones, checked by the kernel),
 * where gs_acc_pow never reads past GS_EXP_TOP.  On bench-psa's events the
 * bound is 0.975 of the FoM on average (the fine table's 0.987) and lets
 * 0.075 % of the points through against the best FoM (0.069 %).
 */
#define GS_LOG_VALUE_MAX 64.0f
typedef struct gs_log_bound {
    uint32_t mul, add; /* r = (B >> 16) x mul + add */
    float inv_c;       /* 1 / c, rounded up */
    float zero;        /* at least c F for any |d| < 2^-54 */
} gs_log_bound;

#ifdef __CUDA_ARCH__
#define GS_MUL(a, b) __fmul_rn((a), (b))
#else
#define GS_MUL(a, b) ((a) * (b))
#endif

GPUd() static inline float gs_log_term(float d, uint32_t mul, uint32_t add)
{
    return gs_float((gs_bits(GS_MUL(d, d)) >> 16) * mul + add);
}

/* The threshold of a pair's sum of gs_log_term over k values for a best FoM U (U infinite: infinite). */
GPUd() static inline float gs_log_limit(const gs_log_bound *l, float U, uint32_t k)
{
    return U < 3.0e38f ? (U * (1.0f + 1.0f / 1024) + (float)k * l->zero) * l->inv_c : U;
}

/* The constants for p and the polynomial c, or -1 where the bound does not hold: p not in
 * (0, 2), a basis value of magnitude basis_max or more than
 * GS_LOG_VALUE_MAX, or a polynomial more than 2^-14 under m^p somewhere
 * (every mantissa is tried: about 0.1 s). */
static inline int gs_log_bound_make(gs_log_bound *l, const float *c, float pf, float basis_max)
{
    const double p = pf;
    if (!(p > 0 && p < 2) || !(basis_max < GS_LOG_VALUE_MAX))
        return -1;
    for (uint32_t m = 0; m < (1u << 23); m++) {
        const uint32_t bits = 0x3f800000u | m;
        if (gs_pow_mantissa(c, bits) < pow((double)gs_float(bits), p) * (1.0 - 1.0 / 16384))
            return -1;
    }
    l->mul = (uint32_t)floor(p / 2 * 65536.0);
    l->add = (uint32_t)floor(127.0 * 8388608.0 * (1.0 - p / 2));
    l->inv_c = 1.0615f; /* 1 / 0.942084 = 1.061477 */
    l->zero = (float)(2.0 * exp2(-54.0 * p));
    return 0;
}

/*
 * GS_PRUNE_GEO's bound: Mitchell's logarithm summed over a group of
 * GS_GEO_GROUP values before one exponential, by the inequality of the
 * arithmetic and geometric means.  With y = d x d (rounded), its bits B and
 * L = B / 2^23 - 127, L is at most log2 max(y, 2^-126) (Mitchell's for a
 * normal y; below 2^-126 L < -126).  For a group of G values, with
 * t = max(y, 2^-126)^(p/2) and z = (p/2) mean(L):
 * G 2^z <= G (prod t)^(1/G) <= sum t.  The group's sum S of B, in 32 bits,
 * gives r = umulhi(S, mul) + add, mul = floor((p/2) / G x 2^32), add as
 * gs_log_bound's: the float F whose bits are r is 2^n (1 + f) with
 * n + f <= z, so c F <= 2^z (c as GS_PRUNE_LOG's).  S wraps when the
 * group's B sum to 2^32 or more (y about 2 or more on average: |d| above
 * 1.4, where normalised traces and basis signals rarely differ); a wrapped
 * S is smaller than the true sum and r grows with S (r < 2^31 for any S and
 * p < 2: F positive and finite), so F is then a lower bound still, only a
 * looser one.  A value costs FADD, FMUL and half a three-input add, a group
 * one IMAD.HI and one FFMA more: 3 issue slots a value (with a shift of B
 * by 2 to keep S from wrapping, session 13's form, 4; GS_PRUNE_LOG's 5),
 * for a looser bound than the log's: on bench-psa's events about 0.93 of
 * the FoM near the best point (the log bound's 0.975), 0.30 % of the points
 * left against the best FoM (0.084 %).  Summed over the groups in float,
 * the sum of F against gs_log_limit's threshold with this struct's inv_c
 * (1 / (c G), rounded up) and zero (gs_log_bound's plus 2^(-63 p), the t of
 * a value under 2^-63, with 2^-10 to spare): the rule's margins are
 * GS_PRUNE_LOG's.  It needs the window and the staged rows in whole groups
 * (gs_gpu_set_prune checks).  Groups of two (tighter, never wrapping, 3.5
 * slots a value) were 7-10 % slower on the H200 (sample_runs/psa/h200-quant15).
 */
enum { GS_GEO_GROUP = 4 };

GPUd() static inline uint32_t gs_geo_bits(float d) { return gs_bits(GS_MUL(d, d)); }

#ifdef __CUDA_ARCH__
#define GS_MULHI(a, b) __umulhi((a), (b))
#else
#define GS_MULHI(a, b) ((uint32_t)(((uint64_t)(a) * (b)) >> 32))
#endif

/* A group's F from its sum S of gs_geo_bits. */
GPUd() static inline float gs_geo_group(uint32_t sum, uint32_t mul, uint32_t add)
{
    return gs_float(GS_MULHI(sum, mul) + add);
}

/* GS_PRUNE_GEO's constants (mul, add, inv_c, zero as above) where GS_PRUNE_LOG's hold (gs_log_bound_make), else -1. */
static inline int gs_geo_bound_make(gs_log_bound *l, const float *c, float pf, float basis_max)
{
    if (gs_log_bound_make(l, c, pf, basis_max))
        return -1;
    const double p = pf;
    l->mul = (uint32_t)floor(p / 2 / GS_GEO_GROUP * 4294967296.0);
    l->inv_c = 1.0615f / GS_GEO_GROUP; /* exact: a power of two */
    l->zero = (float)((l->zero + exp2(-63.0 * p)) * (1.0 + 1.0 / 1024));
    return 0;
}

/*
 * GS_PRUNE_BYTE's bound: a 1-byte table indexed by d's bits shifted once,
 * B >> 19 (sign, exponent and 4 mantissa bits: GS_BYTE_TABLE entries, both
 * signs alike), so that a value's bound is FADD, SHF, a shared byte read at
 * the table's fixed address and half an IADD3 (3.5 issue slots, against
 * the fine table's 5.9: its index's mask and base add are gone).  Entry
 * floor(least x scale[e] x 2^s), saturated at 255, where least is the
 * polynomial's least value over the bucket's mantissas (pw->least: every one
 * tried by psa_pow_fit),
 * s the largest that keeps |d| < 1 unsaturated; summed exactly in integers
 * and compared as gs_lb_fixed's (the same threshold rule, factor 2^s (1 +
 * 2^-12)).  On bench-psa's events (unit 2^-8) it lets 0.078 % of the points
 * through against the best FoM (the fine table: 0.069 %).
 */
enum { GS_BYTE_BITS = 4 /* gs_pow's least[] */, GS_BYTE_SHIFT = 23 - GS_BYTE_BITS, GS_BYTE_TABLE = 2 << (8 + GS_BYTE_BITS), GS_BYTE_MAX = 255 };

GPUd() static inline uint32_t gs_byte_index(float d) { return gs_bits(d) >> GS_BYTE_SHIFT; }

/* Fills table (GS_BYTE_TABLE entries) for pw and returns the threshold's factor 2^s (1 + 2^-12). */
static inline float gs_lb_byte(const gs_pow *pw, uint8_t *table)
{
    const float *least = pw->least;
    const double ref = (double)least[(1 << GS_BYTE_BITS) - 1] * pw->scale[126]; /* the top bucket of [0.5, 1) */
    int s = 30;
    while (s > -60 && ldexp(ref, s) > GS_BYTE_MAX)
        s--;
    for (int e = 0; e < GS_EXP_TABLE; e++)
        for (int j = 0; j < (1 << GS_BYTE_BITS); j++) {
            double v = ldexp((double)(least[j] < 0 ? 0.0f : least[j]) * pw->scale[e], s); /* exact: 24 x 24 bits, x 2^s */
            const uint8_t x = (uint8_t)(v >= GS_BYTE_MAX ? (double)GS_BYTE_MAX : floor(v));
            table[e << GS_BYTE_BITS | j] = x;
            table[GS_BYTE_TABLE / 2 + (e << GS_BYTE_BITS | j)] = x; /* d < 0 */
        }
    return (float)ldexp(1.0 + 1.0 / 4096, s);
}

#define GS_LB_POINT(name, T, DIFF) \
    GPUd() static inline float name(const T *meas, const T *basis, uint32_t stride, uint32_t n_mask, \
                                    uint32_t window, uint32_t use, const float *lb) \
    { \
        float total = 0.0f; \
        for (uint32_t ch = 0; ch < n_mask; ch++) { \
            if (!(use >> ch & 1u)) \
                continue; \
            float part = 0.0f; \
            for (uint32_t i = 0; i < window; i++) { \
                uint32_t k = ch * window + i; \
                part = gs_acc_lb(part, DIFF(meas[k], basis[(uint64_t)k * stride]), lb); \
            } \
            total = GS_ADD(total, part); \
        } \
        return total; \
    }
#define GS_DIFF(m, b) GS_SUB(m, b)
#define GS_DIFF16(m, b) ((float)((int)(m) - (int)(b)) * GS_I16_STEP)
GS_LB_POINT(gs_lb_point, float, GS_DIFF)
GS_LB_POINT(gs_lb_point16, int16_t, GS_DIFF16)
#undef GS_LB_POINT
#undef GS_DIFF
#undef GS_DIFF16

/* The best of two (FoM, column) candidates: the lower FoM, then the lower column. */
GPUd() static inline int gs_better(float fom, uint32_t col, float best_fom, uint32_t best_col)
{
    return fom < best_fom || (fom == best_fom && col < best_col);
}

#endif
