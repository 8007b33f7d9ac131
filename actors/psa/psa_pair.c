/* psa_pair.c: the joint search of two touching hits on the coarse grid on the CPU (kernels/psa_pair_fom.h, which the GPU block runs too): the points of one side side by side in vector lanes. */
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

/* What a sum over n points side by side reads: the pair, the |d|^p
 * constants, and n points' values value-major (sT[k * n + j]: value k of
 * point j, so that the lanes read consecutive floats). */
typedef struct lanes {
    const pp_pair *p;
    const gs_pow *pw;
    const float *sT;
    uint32_t n;
} lanes;

/* The FoMs of the pairs (a, each point j as b): x, a's K values less its part (pp_less_a). */
static inline __attribute__((always_inline)) void sum_b(const lanes *s, const float *x, float *acc)
{
    const uint32_t n = s->n, K = s->p->n_ch * s->p->W;
    memset(acc, 0, n * sizeof *acc);
    for (uint32_t k = 0; k < K; k++) {
        const float xk = x[k], fb = s->p->fb, *sb = s->sT + (size_t)k * n;
#pragma omp simd
        for (uint32_t j = 0; j < n; j++)
            acc[j] = pp_acc(acc[j], xk, fb, sb[j], s->pw->c, s->pw->scale);
    }
}

/* The FoMs of the pairs (each point j as a, b): y, b's K values (pp_value). */
static inline __attribute__((always_inline)) void sum_a(const lanes *s, const float *y, float *acc)
{
    const uint32_t n = s->n, K = s->p->n_ch * s->p->W;
    memset(acc, 0, n * sizeof *acc);
    for (uint32_t k = 0; k < K; k++) {
        const float m = s->p->m[k], fa = s->p->fa, fb = s->p->fb, yk = y[k], *sa = s->sT + (size_t)k * n;
#pragma omp simd
        for (uint32_t j = 0; j < n; j++)
            acc[j] = pp_acc(acc[j], pp_less(m, fa, sa[j]), fb, yk, s->pw->c, s->pw->scale);
    }
}

typedef void sum_fn(const lanes *s, const float *v, float *acc);
static void sum_b_portable(const lanes *s, const float *x, float *acc) { sum_b(s, x, acc); }
static void sum_a_portable(const lanes *s, const float *y, float *acc) { sum_a(s, y, acc); }

#if defined(__x86_64__) || defined(__i386__)
/* The same operations in the processor's vectors and fused multiply-adds (fmaf is exact either way). */
__attribute__((target("avx2,fma"))) static void sum_b_avx2(const lanes *s, const float *x, float *acc) { sum_b(s, x, acc); }
__attribute__((target("avx2,fma"))) static void sum_a_avx2(const lanes *s, const float *y, float *acc) { sum_a(s, y, acc); }

static int avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static sum_fn *sum_b_for_cpu(void) { return avx2() ? sum_b_avx2 : sum_b_portable; }
static sum_fn *sum_a_for_cpu(void) { return avx2() ? sum_a_avx2 : sum_a_portable; }
#else
static sum_fn *sum_b_for_cpu(void) { return sum_b_portable; }
static sum_fn *sum_a_for_cpu(void) { return sum_a_portable; }
#endif

/* Points pt[0..n) of a segment's columns, their K values on the pair's
 * channels value-major into sT: eight points at a time, so that the writes
 * of a value are one run and each point is read in order. */
static void transpose(const pp_pair *p, const det_basis *b, size_t start, const uint32_t *pt, uint32_t n, float *sT)
{
    enum { STRIP = 8 };
    for (uint32_t j0 = 0; j0 < n; j0 += STRIP) {
        const uint32_t m = n - j0 < STRIP ? n - j0 : STRIP;
        const float *s[STRIP];
        for (uint32_t j = 0; j < m; j++)
            s[j] = det_basis_point(b, pt[j0 + j]) + start;
        for (uint32_t c = 0, k = 0; c < p->n_ch; c++) {
            const size_t at = (size_t)p->ch[c] * p->n_samples;
            for (uint32_t i = 0; i < p->W; i++, k++)
                for (uint32_t j = 0; j < m; j++)
                    sT[(size_t)k * n + j0 + j] = s[j][at + i];
        }
    }
}

/* The columns idx[0..m) of a side's values value-major (all: n of them) into sub, value-major. */
static void pick_columns(const float *all, uint32_t n, uint32_t K, const uint32_t *idx, uint32_t m, float *sub)
{
    for (uint32_t k = 0; k < K; k++)
        for (uint32_t j = 0; j < m; j++)
            sub[(size_t)k * m + j] = all[(size_t)k * n + idx[j]];
}

/* The kept of a side (pp_kept(n) of them): the indices of the lowest pp_key(fom[j], j), into kept. */
static uint32_t keep_best(const float *fom, uint32_t n, uint32_t *kept)
{
    const uint32_t m = pp_kept(n);
    uint64_t last = 0;
    for (uint32_t t = 0; t < m; t++) {
        uint64_t best = UINT64_MAX;
        for (uint32_t j = 0; j < n; j++) {
            const uint64_t key = pp_key(fom[j], j);
            if (key < best && (t == 0 || key > last))
                best = key;
        }
        kept[t] = (uint32_t)best;
        last = best;
    }
    return m;
}

/* A PP_SPARSE_MM cell's key and a point's squared distance to its centre (in cells). */
static int64_t cell_of(const det_basis *b, uint32_t point, double *d2)
{
    int64_t idx[3];
    *d2 = 0;
    for (int k = 0; k < 3; k++) {
        const double x = b->pos[3 * (size_t)point + k] / PP_SPARSE_MM;
        idx[k] = (int64_t)floor(x);
        *d2 += (x - idx[k] - 0.5) * (x - idx[k] - 0.5);
    }
    return ((idx[2] + (1 << 20)) << 42) | ((idx[1] + (1 << 20)) << 21) | (idx[0] + (1 << 20));
}

int psa_pair_sparse(const psa_segment *g, const det_basis *b, uint32_t *out)
{
    int64_t *cell = malloc((g->n_coarse + 1) * sizeof *cell);
    double *d2 = malloc((g->n_coarse + 1) * sizeof *d2);
    int n = 0;
    if (!cell || !d2)
        n = -1;
    for (uint32_t j = 0; n >= 0 && j < g->n_coarse; j++)
        cell[j] = cell_of(b, g->point[j], &d2[j]);
    for (uint32_t j = 0; n >= 0 && j < g->n_coarse; j++) {
        int first = 1;
        for (uint32_t i = 0; i < g->n_coarse && first; i++)
            first = i == j || cell[i] != cell[j] || d2[i] > d2[j] || (d2[i] == d2[j] && i > j);
        if (first)
            out[n++] = j;
    }
    free(cell);
    free(d2);
    return n;
}

/* Working memory of one pair search: the pair's values, both sides'
 * values value-major, the b's paired value-major, one point's values, one
 * side's FoMs, index lists. */
typedef struct work {
    float *m, *saT, *sbT, *sub, *x, *fom;
    uint32_t *ia, *ib;
} work;

static int work_alloc(work *w, uint32_t K, uint32_t na, uint32_t nb)
{
    const uint32_t most = na > nb ? na : nb;
    w->m = malloc(((size_t)K * (na + 2 * nb + 2) + most + 1) * sizeof *w->m);
    w->ia = malloc(((size_t)na + nb + 1) * sizeof *w->ia);
    if (!w->m || !w->ia) {
        free(w->m);
        free(w->ia);
        return -1;
    }
    w->saT = w->m + K;
    w->sbT = w->saT + (size_t)K * na;
    w->sub = w->sbT + (size_t)K * nb;
    w->x = w->sub + (size_t)K * nb;
    w->fom = w->x + K;
    w->ib = w->ia + na;
    return 0;
}

/* The best of the pairs of a's coarse points ia[0..na) with b's ib[0..nb)
 * (its key, pp_key(FoM, a * gb->n_coarse + b)), from w->saT and w->sbT. */
static uint64_t best_of(const pp_pair *p, const gs_pow *pw, work *w, sum_fn *over_b, const psa_segment *ga,
                        const psa_segment *gb, const uint32_t *ia, uint32_t na, const uint32_t *ib, uint32_t nb)
{
    const uint32_t K = p->n_ch * p->W;
    lanes lb = { p, pw, w->sub, nb };
    pick_columns(w->sbT, gb->n_coarse, K, ib, nb, w->sub);
    uint64_t best = UINT64_MAX;
    for (uint32_t i = 0; i < na; i++) {
        for (uint32_t k = 0; k < K; k++)
            w->x[k] = pp_less(p->m[k], p->fa, w->saT[(size_t)k * ga->n_coarse + ia[i]]);
        over_b(&lb, w->x, w->fom);
        for (uint32_t j = 0; j < nb; j++) {
            const uint64_t key = pp_key(w->fom[j], ia[i] * gb->n_coarse + ib[j]);
            best = key < best ? key : best;
        }
    }
    return best;
}

/* The best pair's index a * n_b + b (kernels/psa_pair_fom.h's steps): the
 * seed from the sparse points, each side against the seed's other point,
 * the kept of each side paired.  -1 without memory. */
static int64_t best_pair(const pp_pair *p, const gs_pow *pw, work *w, const det_basis *b, size_t start,
                         const psa_segment *ga, const psa_segment *gb)
{
    const uint32_t K = p->n_ch * p->W, na = ga->n_coarse, nb = gb->n_coarse;
    sum_fn *over_a = sum_a_for_cpu(), *over_b = sum_b_for_cpu(); /* the CPU's features, once a search */
    const int sa = psa_pair_sparse(ga, b, w->ia), sb = psa_pair_sparse(gb, b, w->ib);
    if (sa < 0 || sb < 0)
        return -1;
    transpose(p, b, start, ga->point, na, w->saT);
    transpose(p, b, start, gb->point, nb, w->sbT);
    const uint64_t seed = best_of(p, pw, w, over_b, ga, gb, w->ia, (uint32_t)sa, w->ib, (uint32_t)sb);
    const float *a0 = det_basis_point(b, ga->point[(uint32_t)seed / nb]) + start;
    const float *b0 = det_basis_point(b, gb->point[(uint32_t)seed % nb]) + start;
    lanes la = { p, pw, w->saT, na }, lb = { p, pw, w->sbT, nb };
    for (uint32_t k = 0; k < K; k++)
        w->x[k] = pp_value(p, b0, k);
    over_a(&la, w->x, w->fom);
    const uint32_t ka = keep_best(w->fom, na, w->ia);
    for (uint32_t k = 0; k < K; k++)
        w->x[k] = pp_less_a(p, a0, k);
    over_b(&lb, w->x, w->fom);
    const uint32_t kb = keep_best(w->fom, nb, w->ib);
    const uint64_t last = best_of(p, pw, w, over_b, ga, gb, w->ia, ka, w->ib, kb);
    return (uint32_t)(last < seed ? last : seed);
}

int psa_pair_search(psa_event *ev, int r, int q, const det_basis *b, const psa_layout *l, const gs_pow *pw)
{
    const psa_segment *ga = &l->seg[ev->net[r]], *gb = &l->seg[ev->net[q]];
    uint8_t ch[PP_MAX_CHANNELS];
    const uint32_t W = l->window, n = pp_channels(ga->mask, ga->n_mask, gb->mask, gb->n_mask, ev->net[r], ev->net[q], ch);
    const uint32_t nb = gb->n_coarse, was_r = ev->point[r], was_q = ev->point[q];
    work w;
    if (work_alloc(&w, n * W, ga->n_coarse, nb))
        return -1;
    pp_values(ev->resid, det_basis_point(b, was_r) + l->window_start, det_basis_point(b, was_q) + l->window_start, ch,
              n, W, b->n_samples, ev->e[r], ev->e[q], w.m);
    const pp_pair p = { w.m, ch, n, W, b->n_samples, pp_fraction(ev->e[r], ev->e[q]), pp_fraction(ev->e[q], ev->e[r]) };
    const int64_t at = best_pair(&p, pw, &w, b, l->window_start, ga, gb);
    free(w.m);
    free(w.ia);
    if (at < 0)
        return -1;
    ev->point[r] = ga->point[(uint32_t)at / nb];
    ev->point[q] = gb->point[(uint32_t)at % nb];
    ev->hit_status[r] = ev->hit_status[q] = 0;
    psa_event_replace(ev, r, was_r, b, l);
    psa_event_replace(ev, q, was_q, b, l);
    return 0;
}
