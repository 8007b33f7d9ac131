/* psa_pair.c: the joint search of two touching hits on the coarse grid on the CPU (kernels/psa_pair_fom.h, which the GPU block runs too): the pairs of one point of the first hit side by side in vector lanes. */
#include "psa_pair.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int in_mask(const psa_segment *g, unsigned ch)
{
    for (uint32_t c = 0; c < g->n_mask; c++)
        if (g->mask[c] == ch)
            return 1;
    return 0;
}

int psa_pair_of(const psa_event *ev, const psa_layout *l, int *r, int *q)
{
    for (int a = 0; a < ev->n_net; a++)
        for (int b = a + 1; b < ev->n_net; b++)
            if (in_mask(&l->seg[ev->net[a]], ev->net[b]) || in_mask(&l->seg[ev->net[b]], ev->net[a])) {
                *r = a;
                *q = b;
                return 1;
            }
    return 0;
}

/* A scan's working memory: the second hit's coarse signals value-major
 * (sbT[k * nb + b]: value k of coarse point b, so that the pairs of one a
 * read consecutive floats), one a's values less its part, the pairs' sums. */
typedef struct scan {
    const pp_pair *p;
    const gs_pow *pw;
    uint32_t K, nb;
    float *sbT, *x, *acc;
} scan;

/* The sums of the pairs (a, every b), value after value (kernels/psa_pair_fom.h's order). */
static inline __attribute__((always_inline)) void sum_row(const scan *s)
{
    const uint32_t nb = s->nb;
    float *acc = s->acc;
    memset(acc, 0, nb * sizeof *acc);
    for (uint32_t k = 0; k < s->K; k++) {
        const float x = s->x[k], fb = s->p->fb, *sb = s->sbT + (size_t)k * nb;
#pragma omp simd
        for (uint32_t b = 0; b < nb; b++)
            acc[b] = pp_acc(acc[b], x, fb, sb[b], s->pw);
    }
}

static void row_portable(const scan *s) { sum_row(s); }

#if defined(__x86_64__) || defined(__i386__)
/* The same operations in the processor's vectors and fused multiply-adds (fmaf is exact either way). */
__attribute__((target("avx2,fma"))) static void row_avx2(const scan *s) { sum_row(s); }

typedef void row_fn(const scan *s);
static row_fn *row_for_cpu(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? row_avx2 : row_portable;
}
#else
typedef void row_fn(const scan *s);
static row_fn *row_for_cpu(void) { return row_portable; }
#endif

/* The best pair's index: every a's row, the lowest (FoM, index). */
static uint32_t best_pair(scan *s, const psa_segment *ga, const det_basis *b, size_t start)
{
    row_fn *row = row_for_cpu();
    uint64_t best = UINT64_MAX;
    for (uint32_t a = 0; a < ga->n_coarse; a++) {
        const float *sa = det_basis_point(b, ga->point[a]) + start;
        for (uint32_t k = 0; k < s->K; k++)
            s->x[k] = pp_less_a(s->p, sa, k);
        row(s);
        for (uint32_t c = 0; c < s->nb; c++) {
            const uint64_t key = pp_key(s->acc[c], a * s->nb + c);
            best = key < best ? key : best;
        }
    }
    return (uint32_t)best;
}

int psa_pair_search(psa_event *ev, int r, int q, const det_basis *b, const psa_layout *l, const gs_pow *pw)
{
    const psa_segment *ga = &l->seg[ev->net[r]], *gb = &l->seg[ev->net[q]];
    uint8_t ch[PP_MAX_CHANNELS];
    const uint32_t W = l->window, n = pp_channels(ga->mask, ga->n_mask, gb->mask, gb->n_mask, ev->net[r], ev->net[q], ch);
    const uint32_t K = n * W, nb = gb->n_coarse;
    float *m = malloc(((size_t)K * (nb + 2) + nb + 1) * sizeof *m);
    if (!m)
        return -1;
    pp_values(ev->resid, det_basis_point(b, ev->point[r]) + l->window_start,
              det_basis_point(b, ev->point[q]) + l->window_start, ch, n, W, b->n_samples, ev->e[r], ev->e[q], m);
    const pp_pair p = { m, ch, n, W, b->n_samples, pp_fraction(ev->e[r], ev->e[q]), pp_fraction(ev->e[q], ev->e[r]) };
    scan s = { &p, pw, K, nb, m + K, m + K + (size_t)K * nb, m + 2 * (size_t)K + (size_t)K * nb };
    for (uint32_t c = 0; c < nb; c++) {
        const float *sb = det_basis_point(b, gb->point[c]) + l->window_start;
        for (uint32_t k = 0; k < K; k++)
            s.sbT[(size_t)k * nb + c] = sb[(size_t)ch[k / W] * b->n_samples + k % W];
    }
    const uint32_t at = best_pair(&s, ga, b, l->window_start), was_r = ev->point[r], was_q = ev->point[q];
    ev->point[r] = ga->point[at / nb];
    ev->point[q] = gb->point[at % nb];
    ev->hit_status[r] = ev->hit_status[q] = 0;
    psa_event_replace(ev, r, was_r, b, l);
    psa_event_replace(ev, q, was_q, b, l);
    free(m);
    return 0;
}
