/* psa_pair_fom.h: the joint search of two touching hits over their segments' coarse points, written once for the CPU (actors/psa/psa_pair.c) and the GPU block (GPUd()): its channels, its values, a pair's FoM, the order that picks the best. */
#ifndef NARWHAL_PSA_PAIR_FOM_H
#define NARWHAL_PSA_PAIR_FOM_H

#include <stddef.h>
#include <stdint.h>

#include "gridsearch_fom.h"
#include "psa_trace.h"

/*
 * Two hits r and q of an event whose segments touch (one in the other's
 * mask) disturb each other's searches: each one's transient signals lie in
 * the other's neighbours.  Searched one after the other, a wrong first
 * answer is compensated by a wrong second one and the neighbour passes
 * (actors/psa/psa_block.h) stay there.  So the pair is first searched
 * jointly on the coarse grid (the adaptive search's, CoarseGrid), against
 * the traces with the event's other hits subtracted, over the two segments
 * themselves and the channels of both masks (pp_channels' order):
 *
 *   FoM(a, b) = sum over channels c, samples i of
 *               |m[c][i] - fa s_a[c][i] - fb s_b[c][i]|^p
 *
 * m: the aligned traces over E = e_r + e_q, fa = e_r / E, fb = e_q / E;
 * |d|^p and the order of the sum as the grid search's (gridsearch_fom.h):
 * each pair's sum taken value after value (pp_less, then pp_acc), k =
 * c * W + i in order.
 *
 * Not every pair (about 89 x 89 of them: 3 ms a crystal on one core).
 * First the pairs of the two segments' sparse coarse points (one per
 * PP_SPARSE_MM cell: psa_pair_sparse, about 23 a segment) give a seed
 * pair (a0, b0); then every coarse point a of r's segment against b0, and
 * every coarse point b of q's against a0, give each coarse point a FoM; the
 * PP_KEEP best of each side (lowest FoM, then lowest index: pp_key) make
 * the PP_KEEP x PP_KEEP pairs searched last, about 1,700 pairs in all.  The
 * best (of the seed's pairs and of the last) is the lowest FoM, then the
 * lowest index a * n_b + b (a, b: coarse indices).  The CPU sums the
 * points of one side side by side in vector lanes, a GPU thread one pair
 * at a time: the same operations, the same bits.
 */
enum { PP_MAX_CHANNELS = DET_CHANNELS, PP_KEEP = 32 };
#define PP_SPARSE_MM 12.0 /* mm: the seed's cells, twice the default CoarseGrid */

typedef struct pp_pair {
    const float *m;     /* n_ch x W values */
    const uint8_t *ch;  /* the channels */
    uint32_t n_ch, W, n_samples;
    float fa, fb;
} pp_pair;

/* The pair's channels into ch (their count returned): the two segments,
 * then the rest of the two masks in channel order. */
GPUd() static inline uint32_t pp_channels(const uint8_t *mask_r, uint32_t n_r, const uint8_t *mask_q, uint32_t n_q,
                                          uint32_t seg_r, uint32_t seg_q, uint8_t *ch)
{
    uint32_t n = 0;
    ch[n++] = (uint8_t)seg_r;
    ch[n++] = (uint8_t)seg_q;
    for (uint32_t c = 0; c < DET_CHANNELS; c++) {
        int in = 0;
        for (uint32_t k = 0; k < n_r; k++)
            in = in || mask_r[k] == c;
        for (uint32_t k = 0; k < n_q; k++)
            in = in || mask_q[k] == c;
        if (in && c != seg_r && c != seg_q)
            ch[n++] = (uint8_t)c;
    }
    return n;
}

/* The energy fraction of a hit of energy e in a pair of energy e + other. */
GPUd() static inline float pp_fraction(float e, float other)
{
    return PT_FDIV(e, PT_FADD(e, other));
}

/* The pair's values: the aligned traces (resid: 37 x W, every hit found so
 * far subtracted) with the two hits' current signals (sr, sq: from the
 * window's first basis sample) put back, over the pair's energy. */
GPUd() static inline void pp_values(const float *resid, const float *sr, const float *sq, const uint8_t *ch,
                                    uint32_t n_ch, uint32_t W, uint32_t n_samples, float er, float eq, float *m)
{
    const float e = PT_FADD(er, eq);
    for (uint32_t v = GPUthread(); v < n_ch * W; v += GPUthreads()) {
        const uint32_t c = ch[v / W], i = v % W;
        const size_t at = (size_t)c * n_samples + i;
        m[v] = pt_fill(pt_restore(pt_restore(resid[(size_t)c * W + i], eq, sq[at]), er, sr[at]), e);
    }
}

/* Value k = c * W + i of a point's signals s (from the window's first basis sample) on the pair's channels. */
GPUd() static inline float pp_value(const pp_pair *p, const float *s, uint32_t k)
{
    return s[(size_t)p->ch[k / p->W] * p->n_samples + k % p->W];
}

/* A pair's value less a's part: m - fa s_a. */
GPUd() static inline float pp_less(float m, float fa, float sa)
{
    return PT_FSUB(m, PT_FMUL(fa, sa));
}

/* Value k of the pair less a's part (a's signals sa). */
GPUd() static inline float pp_less_a(const pp_pair *p, const float *sa, uint32_t k)
{
    return pp_less(p->m[k], p->fa, pp_value(p, sa, k));
}

/* A pair's sum after value k: acc + |x - fb s_b|^p, x = pp_less's, sb = s_b's value k
 * (c, scale: the gs_pow's polynomial and exponent table). */
GPUd() static inline float pp_acc(float acc, float x, float fb, float sb, const float *c, const float *scale)
{
    return gs_acc_pow(acc, PT_FSUB(x, PT_FMUL(fb, sb)), c, scale);
}

/* The pair's order, and each side's: FoM bits (never negative, so ordered as the values) then index. */
GPUd() static inline uint64_t pp_key(float fom, uint32_t index)
{
    return (uint64_t)gs_bits(fom) << 32 | index;
}

/* How many of a side's n coarse points are kept. */
GPUd() static inline uint32_t pp_kept(uint32_t n)
{
    return n < (uint32_t)PP_KEEP ? n : (uint32_t)PP_KEEP;
}

#endif
