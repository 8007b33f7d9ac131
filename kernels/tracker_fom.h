/* tracker_fom.h: forward tracking's figure of merit: every ordering of a cluster scored with the Compton formula and interaction probabilities, then greedy selection in up to two passes. */
#ifndef NARWHAL_TRACKER_FOM_H
#define NARWHAL_TRACKER_FOM_H

#include "tracker_geom.h"

/*
 * The figure of merit of an ordering p1 .. pn of a cluster (p0 = the target)
 * is the geometric mean of 2n - 1 factors, taken in this order:
 *
 *   A1, G1, A2, G2, ..., G(n-1), An
 *
 *   Ak = exp(-mu(E) L) * share(E): the photon of energy E (the cluster's sum
 *        less the deposits before pk) crosses L mm of germanium from p(k-1)
 *        to pk (tracker_geom.h), then interacts there by Compton scattering
 *        (k < n) or photoelectric absorption (k = n); share is that process's
 *        part of the total cross-section.
 *   Gk = exp(-(E'c - E')^2 / (2 s^2)) at the vertex pk: E' = E - ek is the
 *        measured scattered energy, E'c = E / (1 + E/mc^2 (1 - cos t)) the
 *        Compton formula's for the angle t between p(k-1)->pk and pk->p(k+1).
 *        s^2 = (E'c^2/mc^2)^2 (sin^2 t st^2 + st^4 / 2) + (n - k + 1) se^2,
 *        where st^2 = a^2 [(sp(k-1)^2 + spk^2) / |pk - p(k-1)|^2
 *                         + (spk^2 + sp(k+1)^2) / |p(k+1) - pk|^2]
 *        carries the position uncertainty sp(e) = A + B sqrt(100 keV / e) of
 *        each point (0 for the target) into the angle, scaled by the angular
 *        uncertainty parameter a; se is one deposit's energy uncertainty.
 *
 * Pair production (clusters above 2 mc^2): p1 is the vertex, where the pair
 * deposited E - 2 mc^2; the other points are where the two 511 keV quanta
 * went.  Factors, n + 1 of them: exp(-mu(E) L01) * share_pair(E); the
 * Gaussian of e1 - (E - 2 mc^2) with variance n se^2; and for each other
 * point exp(-mu(511 keV) L1j), the chance that a quantum got there.
 *
 * All of it is summed as logarithms (the factors never exceed 1, so every
 * term is <= 0 and a partial sum bounds every completion from above: the CPU
 * prunes orderings with it, exactly).  Orderings of one cluster are compared
 * by their sums; among equal sums the first in lexicographic order wins.
 */

/* ---- permutation tables --------------------------------------------------
 * For n = 1 .. 7 the n! orderings of 0 .. n-1 in lexicographic order, each
 * packed 3 bits per position (position k in bits 3k .. 3k+2), starting at
 * entry tr_perm_first(n). */
GPUd() static inline int tr_factorial(int n)
{
    int f = 1;
    for (int i = 2; i <= n; i++)
        f *= i;
    return f;
}

GPUd() static inline int tr_perm_first(int n)
{
    int first = 0;
    for (int k = 1; k < n; k++)
        first += tr_factorial(k);
    return first;
}

GPUd() static inline int tr_perm_at(uint32_t packed, int k) { return (int)((packed >> (3 * k)) & 7u); }

/* The lexicographic rank of the ordering seq of 0 .. n-1. */
GPUd() static inline int tr_perm_rank(const uint8_t *seq, int n)
{
    int rank = 0;
    for (int k = 0; k < n; k++) {
        int smaller = 0;
        for (int j = k + 1; j < n; j++)
            smaller += seq[j] < seq[k];
        rank = rank * (n - k) + smaller;
    }
    return rank;
}

/* ---- physics ---------------------------------------------------------------- */

GPUd() static inline tr_physics tr_phys_load(const tr_physics *t)
{
#ifdef __CUDA_ARCH__
    float4 v = __ldg((const float4 *)t);
    tr_physics r = { v.x, v.y, v.z, v.w };
    return r;
#else
    return *t;
#endif
}

GPUd() static inline float tr_lerp(float a, float b, float f) { return TR_ADD(a, TR_MUL(f, TR_SUB(b, a))); }

/* The table at energy e (keV), interpolated linearly between its 2 keV steps. */
GPUd() static inline tr_physics tr_phys(const tr_physics *tab, float e)
{
    float u = TR_MUL(e, 1.0f / TR_TABLE_STEP_KEV);
    if (!(u > 0.0f))
        u = 0.0f;
    if (u > (float)(TR_TABLE_N - 1))
        u = (float)(TR_TABLE_N - 1);
    int i = (int)u;
    if (i > TR_TABLE_N - 2)
        i = TR_TABLE_N - 2;
    float f = TR_SUB(u, (float)i);
    tr_physics a = tr_phys_load(&tab[i]), b = tr_phys_load(&tab[i + 1]);
    tr_physics r = { tr_lerp(a.mu, b.mu, f), tr_lerp(a.log_compton, b.log_compton, f),
                     tr_lerp(a.log_photo, b.log_photo, f), tr_lerp(a.log_pair, b.log_pair, f) };
    return r;
}

/* ln(exp(-mu L) share): crossing L mm, then the process of log share ls. */
GPUd() static inline float tr_travel(float mu, float len, float ls) { return TR_SUB(ls, TR_MUL(mu, len)); }

/* ---- one cluster, gathered ---------------------------------------------------
 * Index 0 is the target, 1 .. n the members in increasing point order. */
typedef struct tr_clu {
    int n;
    float etot;
    float x[TR_MAX_CLUSTER + 1], y[TR_MAX_CLUSTER + 1], z[TR_MAX_CLUSTER + 1];
    float e[TR_MAX_CLUSTER + 1], s2[TR_MAX_CLUSTER + 1];
    float path[TR_MAX_CLUSTER + 1][TR_MAX_CLUSTER + 1];
} tr_clu;

/* Squared position uncertainty of a deposit of e keV, mm^2. */
GPUd() static inline float tr_pos_var(const tr_params *p, float e)
{
    float s = TR_ADD(p->pos_a, TR_MUL(p->pos_b, TR_SQRT(TR_DIV(100.0f, e))));
    return TR_MUL(s, s);
}

/* Member i (1-based) of c. */
GPUd() static inline void tr_clu_point(const tr_params *p, tr_clu *c, int i, const tr_point *pt)
{
    c->x[i] = pt->x;
    c->y[i] = pt->y;
    c->z[i] = pt->z;
    c->e[i] = pt->e;
    c->s2[i] = tr_pos_var(p, pt->e);
}

GPUd() static inline void tr_clu_begin(tr_clu *c, int n)
{
    c->n = n;
    c->x[0] = c->y[0] = c->z[0] = c->e[0] = c->s2[0] = 0.0f;
}

/* The sum of the member energies, in member order. */
GPUd() static inline void tr_clu_energy(tr_clu *c)
{
    float s = 0.0f;
    for (int i = 1; i <= c->n; i++)
        s = TR_ADD(s, c->e[i]);
    c->etot = s;
}

/* Path entry of the pair number q (0 .. n(n+1)/2 - 1) of indices i < j in 0 .. n. */
GPUd() static inline void tr_clu_pair(int n, int q, int *i, int *j)
{
    int a = 0;
    while (q >= n - a) {
        q -= n - a;
        a++;
    }
    *i = a;
    *j = a + 1 + q;
}

GPUd() static inline void tr_clu_path(const tr_params *p, const tr_geo *geo, tr_clu *c, int i, int j)
{
    float a[3] = { c->x[i], c->y[i], c->z[i] }, b[3] = { c->x[j], c->y[j], c->z[j] };
    float len = tr_ge_path(p, geo, a, b);
    c->path[i][j] = len;
    c->path[j][i] = len;
}

/* Gathers candidate cand of an event's points, path table included. */
GPUd() static inline void tr_clu_gather(const tr_params *p, const tr_geo *geo, const tr_point *pts,
                                        const tr_cand *cand, tr_clu *c)
{
    tr_clu_begin(c, cand->n);
    for (int i = 1; i <= cand->n; i++)
        tr_clu_point(p, c, i, &pts[cand->pt[i - 1]]);
    tr_clu_energy(c);
    int pairs = cand->n * (cand->n + 1) / 2;
    for (int q = 0; q < pairs; q++) {
        int i, j;
        tr_clu_pair(cand->n, q, &i, &j);
        tr_clu_path(p, geo, c, i, j);
    }
}

/* ---- the Compton hypothesis ----------------------------------------------- */

/* ln Gk at vertex b, reached from a, scattering towards d; e_in enters b;
 * rest = points from b to the end of the ordering. */
GPUd() static inline float tr_compton_term(const tr_params *p, const tr_clu *c, int a, int b, int d,
                                           float e_in, int rest)
{
    float ux = TR_SUB(c->x[b], c->x[a]), uy = TR_SUB(c->y[b], c->y[a]), uz = TR_SUB(c->z[b], c->z[a]);
    float vx = TR_SUB(c->x[d], c->x[b]), vy = TR_SUB(c->y[d], c->y[b]), vz = TR_SUB(c->z[d], c->z[b]);
    float uu = tr_dot3(ux, uy, uz, ux, uy, uz), vv = tr_dot3(vx, vy, vz, vx, vy, vz);
    uu = uu > 1e-6f ? uu : 1e-6f;
    vv = vv > 1e-6f ? vv : 1e-6f;
    float cs = TR_DIV(tr_dot3(ux, uy, uz, vx, vy, vz), TR_SQRT(TR_MUL(uu, vv)));
    cs = cs > 1.0f ? 1.0f : cs < -1.0f ? -1.0f : cs;
    float e_out = TR_SUB(e_in, c->e[b]);
    float k = TR_DIV(e_in, TR_MEC2_KEV);
    float e_pred = TR_DIV(e_in, TR_ADD(1.0f, TR_MUL(k, TR_SUB(1.0f, cs))));
    float st2 = TR_MUL(p->theta_scale2, TR_ADD(TR_DIV(TR_ADD(c->s2[a], c->s2[b]), uu),
                                               TR_DIV(TR_ADD(c->s2[b], c->s2[d]), vv)));
    float sin2 = TR_SUB(1.0f, TR_MUL(cs, cs));
    float scos2 = TR_ADD(TR_MUL(sin2, st2), TR_MUL(0.5f, TR_MUL(st2, st2)));
    float g = TR_DIV(TR_MUL(e_pred, e_pred), TR_MEC2_KEV);
    float sig2 = TR_ADD(TR_MUL(TR_MUL(g, g), scos2), TR_MUL((float)rest, p->sigma_e2));
    float diff = TR_SUB(e_pred, e_out);
    return TR_DIV(TR_MUL(diff, diff), TR_MUL(-2.0f, sig2));
}

/* A partial ordering: the sum of its terms so far and what the next step needs. */
typedef struct tr_walk {
    float sum;
    float e_in;      /* energy entering the next point */
    float e_in_last; /* energy that entered the last point placed */
    int last, before;
    int m;           /* points placed */
} tr_walk;

GPUd() static inline void tr_walk_start(const tr_clu *c, tr_walk *w)
{
    w->sum = 0.0f;
    w->e_in = c->etot;
    w->e_in_last = c->etot;
    w->last = 0;
    w->before = 0;
    w->m = 0;
}

/* Places member idx (1-based) next: adds G at the previous vertex, then A. */
GPUd() static inline void tr_walk_place(const tr_params *p, const tr_physics *tab, const tr_clu *c,
                                        tr_walk *w, int idx)
{
    int m = w->m + 1;
    if (m >= 2)
        w->sum = TR_ADD(w->sum, tr_compton_term(p, c, w->before, w->last, idx, w->e_in_last,
                                                c->n - m + 2));
    tr_physics ph = tr_phys(tab, w->e_in);
    float ls = m < c->n ? ph.log_compton : ph.log_photo;
    w->sum = TR_ADD(w->sum, tr_travel(ph.mu, c->path[w->last][idx], ls));
    w->before = w->last;
    w->last = idx;
    w->e_in_last = w->e_in;
    w->e_in = TR_SUB(w->e_in, c->e[idx]);
    w->m = m;
}

/* The log-sum of the ordering packed in perm. */
GPUd() static inline float tr_order_sum(const tr_params *p, const tr_physics *tab, const tr_clu *c,
                                        uint32_t perm)
{
    tr_walk w;
    tr_walk_start(c, &w);
    for (int k = 0; k < c->n; k++)
        tr_walk_place(p, tab, c, &w, 1 + tr_perm_at(perm, k));
    return w.sum;
}

/* ---- the pair-production hypothesis, vertex v (1-based) -------------------- */

GPUd() static inline int tr_pair_possible(const tr_clu *c)
{
    return c->n >= 2 && c->etot > TR_MUL(2.0f, TR_MEC2_KEV);
}

GPUd() static inline float tr_pair_log_fom(const tr_params *p, const tr_physics *tab, const tr_clu *c, int v)
{
    tr_physics ph = tr_phys(tab, c->etot);
    float sum = tr_travel(ph.mu, c->path[0][v], ph.log_pair);
    float diff = TR_SUB(c->e[v], TR_SUB(c->etot, TR_MUL(2.0f, TR_MEC2_KEV)));
    sum = TR_ADD(sum, TR_DIV(TR_MUL(diff, diff), TR_MUL(-2.0f, TR_MUL((float)c->n, p->sigma_e2))));
    float mu511 = tr_phys(tab, TR_MEC2_KEV).mu;
    for (int j = 1; j <= c->n; j++)
        if (j != v)
            sum = TR_SUB(sum, TR_MUL(mu511, c->path[v][j]));
    return TR_DIV(sum, (float)(c->n + 1));
}

/* The better of two readings: higher figure of merit, then lower ordering
 * index, Compton before pair. */
GPUd() static inline int tr_score_better(tr_score a, tr_score b)
{
    if (a.log_fom != b.log_fom)
        return a.log_fom > b.log_fom;
    if (a.hyp != b.hyp)
        return a.hyp < b.hyp;
    return a.perm < b.perm;
}

/* The best pair reading of c, if any is possible (log_fom -inf otherwise). */
GPUd() static inline tr_score tr_best_pair(const tr_params *p, const tr_physics *tab, const tr_clu *c)
{
    tr_score best = { -3.0e38f, 0, TR_HYP_PAIR, 0 };
    if (!tr_pair_possible(c))
        return best;
    int sub = tr_factorial(c->n - 1);
    for (int v = 1; v <= c->n; v++) {
        tr_score s = { tr_pair_log_fom(p, tab, c, v), (uint16_t)((v - 1) * sub), TR_HYP_PAIR, 0 };
        if (tr_score_better(s, best))
            best = s;
    }
    return best;
}

/* Compton sums compared: higher, then the lower ordering index. */
GPUd() static inline int tr_sum_better(float s, int perm, float best_s, int best_perm)
{
    return s > best_s || (s == best_s && perm < best_perm);
}

/* ---- the pruned search ---------------------------------------------------------
 * Depth-first over the orderings in lexicographic order, each prefix's walk
 * shared by its completions.  The orderings are dealt out to `stride`
 * searchers by their first two points (the lexicographic rank of that pair,
 * modulo stride; the first point alone when n = 1): searcher `lane` sees only
 * its own.  A searcher cuts a prefix whose sum is no better than its best
 * complete ordering so far: every further term is <= 0, and since it meets
 * its orderings in lexicographic order, an equal sum loses to the earlier.
 * So each searcher finds the best of its orderings, and the best of the
 * searchers' by tr_sum_better is the best of all: the answer of scoring every
 * ordering (tr_best_exhaustive), bit for bit, as every sum is the same
 * sequence of tr_walk_place.  The CPU runs one searcher; the GPU a group of
 * lanes per candidate, reduced by shuffles.  Iterative, for the GPU.
 *
 * Searchers working at once may share a bound (NULL: none): each raises it to
 * every complete sum it finds, and cuts a prefix whose sum is below it, as no
 * completion of that prefix can reach the best sum; an equal sum is kept, for
 * the earlier ordering may be its own.  A bound read before another raised
 * it only cuts less, so the answer does not depend on the timing. */
GPUd() static inline int tr_search_owns(int n, int first, int second, int lane, int stride)
{
    int at = n < 2 ? first - 1 : (first - 1) * (n - 1) + second - 1 - (second > first);
    return at % stride == lane;
}

/* Raises the shared bound to s (on the GPU atomically: shared memory of a group of lanes). */
GPUd() static inline void tr_bound_raise(float *bound, float s)
{
#ifdef __CUDA_ARCH__
    if (s >= 0.0f)
        atomicMax((int *)bound, __float_as_int(s)); /* non-negative floats order as their bits */
    else
        atomicMin((unsigned *)bound, __float_as_uint(s)); /* negative ones the other way round */
#else
    if (s > *bound)
        *bound = s;
#endif
}

/* Searcher lane's best sum and the rank of its ordering (rank 0x7fffffff and
 * sum -3e38 when it finds none); bound: the searchers' shared bound, or NULL. */
GPUd() static inline void tr_search(const tr_params *p, const tr_physics *tab, const tr_clu *c, int lane, int stride,
                                    float *bound, float *best_sum, int *best_rank)
{
    tr_walk w[TR_MAX_CLUSTER + 1];
    uint8_t seq[TR_MAX_CLUSTER], best_seq[TR_MAX_CLUSTER], next[TR_MAX_CLUSTER + 1];
    unsigned taken = 0;
    int n = c->n, split = n < 2 ? n : 2, found = 0, d = 0;
    float best = -3.0e38f;
    tr_walk_start(c, &w[0]);
    next[0] = 1;
    for (;;) {
        int idx = next[d];
        while (idx <= n && (taken >> idx & 1u))
            idx++;
        if (idx > n) { /* depth d done: back to the prefix before it */
            if (d == 0)
                break;
            d--;
            taken &= ~(1u << (seq[d] + 1));
            continue;
        }
        next[d] = (uint8_t)(idx + 1);
        if (d + 1 == split && !tr_search_owns(n, split == 1 ? idx : seq[0] + 1, idx, lane, stride))
            continue;
        w[d + 1] = w[d];
        tr_walk_place(p, tab, c, &w[d + 1], idx);
        if ((found && w[d + 1].sum <= best) || (bound && w[d + 1].sum < *(volatile const float *)bound))
            continue;
        seq[d] = (uint8_t)(idx - 1);
        if (d + 1 == n) {
            best = w[d + 1].sum;
            if (bound)
                tr_bound_raise(bound, best);
            for (int k = 0; k < n; k++)
                best_seq[k] = seq[k];
            found = 1;
            continue;
        }
        taken |= 1u << idx;
        d++;
        next[d] = 1;
    }
    *best_sum = best;
    *best_rank = found ? tr_perm_rank(best_seq, n) : 0x7fffffff;
}

/* The reading of c from one searcher over every ordering (the CPU's way). */
GPUd() static inline tr_score tr_best_searched(const tr_params *p, const tr_physics *tab, const tr_clu *c)
{
    float s;
    int rank;
    tr_search(p, tab, c, 0, 1, NULL, &s, &rank);
    tr_score best = { TR_DIV(s, (float)(2 * c->n - 1)), (uint16_t)rank, TR_HYP_COMPTON, 0 };
    tr_score pair = tr_best_pair(p, tab, c);
    return tr_score_better(pair, best) ? pair : best;
}

/* The reading of c by scoring every ordering in table order (the reference
 * of the pruned search: bench-tracker's straightforward path). */
GPUd() static inline tr_score tr_best_exhaustive(const tr_params *p, const tr_physics *tab,
                                                 const uint32_t *perms, const tr_clu *c)
{
    int first = tr_perm_first(c->n), count = tr_factorial(c->n);
    float best_s = -3.0e38f;
    int best_perm = 0;
    for (int r = 0; r < count; r++) {
        float s = tr_order_sum(p, tab, c, perms[first + r]);
        if (tr_sum_better(s, r, best_s, best_perm)) {
            best_s = s;
            best_perm = r;
        }
    }
    tr_score best = { TR_DIV(best_s, (float)(2 * c->n - 1)), (uint16_t)best_perm, TR_HYP_COMPTON, 0 };
    tr_score pair = tr_best_pair(p, tab, c);
    return tr_score_better(pair, best) ? pair : best;
}

/* ---- selection --------------------------------------------------------------
 * Candidates are taken in order of their key, ln FoM + (b / N) k, for a
 * cluster in an event of N points (ties: the earlier candidate), where k + 1
 * is the largest group of its points linked by steps no longer than the
 * isolation distance; each is accepted when its figure of merit passes the
 * cluster threshold and none of its points is taken.  The size bonus makes
 * the larger of two nested candidates win when their figures are close, and
 * mostly where points are few: a subset of a γ's points often scores as well
 * as the whole (fewer vertices to disagree, and a photoabsorption claimed at a
 * lower energy is the likelier), which splits the γ, while in a dense event a
 * larger candidate is more often one with a stranger's point.  Counting only
 * points linked by short steps keeps the bonus from joining two γs that hit
 * the array apart.  It orders the candidates and never passes one below the
 * threshold.
 *
 * With retrack on, the points left free are then clustered again on their
 * own (the cone angles of an event of that many points) and their candidates
 * scored and taken the same way: in a dense event single linkage joins a γ's
 * points to a stranger's before they are joined to each other, and once the
 * stranger is taken the γ appears alone.
 *
 * Last, each point left, in index order, is a single-interaction gamma when
 * exp(-mu(e) L) share_photo(e) over its germanium path from the target passes
 * the single-point threshold and the point is isolated: farther than the
 * isolation distance from every other point of the event (taken or not), as
 * forward tracking accepts a full-energy photoabsorption that lies apart and
 * leaves a point near others to the clusters.  Points in neither stay unused. */

/* The size bonus per extra point in an event of n points. */
GPUd() static inline float tr_size_bonus(const tr_params *p, int n)
{
    return n > 0 ? TR_DIV(p->size_bonus, (float)n) : 0.0f;
}

/* Whether points a and b lie within the isolation distance of each other. */
GPUd() static inline int tr_near(const tr_params *p, const tr_point *a, const tr_point *b)
{
    float dx = TR_SUB(b->x, a->x), dy = TR_SUB(b->y, a->y), dz = TR_SUB(b->z, a->z);
    return !(tr_dot3(dx, dy, dz, dx, dy, dz) > p->single_iso2);
}

/* The points of candidate c that earn the size bonus: the largest group of
 * its points linked by steps within the isolation distance, less one. */
GPUd() static inline int tr_cand_extra(const tr_params *p, const tr_point *pts, const tr_cand *c)
{
    uint8_t group[TR_MAX_CLUSTER];
    for (int i = 0; i < c->n; i++)
        group[i] = (uint8_t)i;
    /* each point joins the group of the first earlier point near it; groups met later are merged into it */
    for (int i = 1; i < c->n; i++) {
        for (int j = 0; j < i; j++) {
            if (!tr_near(p, &pts[c->pt[i]], &pts[c->pt[j]]) || group[i] == group[j])
                continue;
            uint8_t from = group[i], to = group[j];
            for (int q = 0; q <= i; q++)
                if (group[q] == from)
                    group[q] = to;
        }
    }
    int largest = 1;
    for (int i = 0; i < c->n; i++) {
        int size = 0;
        for (int q = 0; q < c->n; q++)
            size += group[q] == group[i];
        largest = size > largest ? size : largest;
    }
    return largest - 1;
}

GPUd() static inline float tr_cand_key(const tr_params *p, const tr_point *pts, float bonus, const tr_cand *c,
                                       const tr_score *sc, int a)
{
    return TR_ADD(sc[a].log_fom, TR_MUL(bonus, (float)tr_cand_extra(p, pts, &c[a])));
}

/* The single-point reading of point pt: ln of its figure of merit. */
GPUd() static inline float tr_single_log_fom(const tr_params *p, const tr_physics *tab,
                                             const tr_geo *geo, const tr_point *pt)
{
    float src[3] = { 0.0f, 0.0f, 0.0f }, at[3] = { pt->x, pt->y, pt->z };
    tr_physics ph = tr_phys(tab, pt->e);
    return tr_travel(ph.mu, tr_ge_path(p, geo, src, at), ph.log_photo);
}

/* Whether point i lies farther than the isolation distance from every other of the n points. */
GPUd() static inline int tr_isolated(const tr_params *p, const tr_point *pts, int n, int i)
{
    for (int j = 0; j < n; j++) {
        if (j != i && tr_near(p, &pts[i], &pts[j]))
            return 0;
    }
    return 1;
}

/* Accepts candidate c with reading s as the next gamma of out. */
GPUd() static inline void tr_take(const uint32_t *perms, const tr_cand *c, tr_score s, uint8_t *used,
                                  tr_gamma *g)
{
    uint32_t packed = perms[tr_perm_first(c->n) + s.perm];
    g->log_fom = s.log_fom;
    g->n = c->n;
    g->flags = s.hyp == TR_HYP_PAIR ? TR_GAMMA_PAIR : 0;
    for (int k = 0; k < TR_MAX_CLUSTER; k++)
        g->pt[k] = k < c->n ? c->pt[tr_perm_at(packed, k)] : TR_NONE;
    for (int k = 0; k < c->n; k++)
        used[c->pt[k]] = 1;
}

/* Accepts, in order of their keys, the candidates above the cluster threshold
 * whose points are all free (used: n entries), as gammas out[g], out[g + 1], ...;
 * bonus is tr_size_bonus of the points clustered; order and key (ncand entries)
 * are scratch: each key is computed once, before the sort.  Returns the new
 * number of gammas. */
GPUd() static inline int tr_select_clusters(const tr_params *p, const uint32_t *perms, const tr_point *pts, float bonus,
                                            const tr_cand *cands, const tr_score *sc, int ncand,
                                            uint16_t *order, float *key, uint8_t *used, tr_gamma *out, int g)
{
    for (int i = 0; i < ncand; i++) {
        key[i] = tr_cand_key(p, pts, bonus, cands, sc, i);
        int k = i;
        while (k > 0 && key[i] > key[order[k - 1]]) { /* ties: the earlier candidate first */
            order[k] = order[k - 1];
            k--;
        }
        order[k] = (uint16_t)i;
    }
    for (int r = 0; r < ncand; r++) {
        const tr_cand *c = &cands[order[r]];
        if (sc[order[r]].log_fom < p->log_min_cluster)
            continue;
        int avail = 1;
        for (int k = 0; k < c->n && avail; k++)
            avail = !used[c->pt[k]];
        if (avail)
            tr_take(perms, c, sc[order[r]], used, &out[g++]);
    }
    return g;
}

/* The points of the event left free, into sub, and their indices, into map; their number. */
GPUd() static inline int tr_leftovers(const tr_point *pts, int n, const uint8_t *used, tr_point *sub, uint16_t *map)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (used[i])
            continue;
        sub[m] = pts[i];
        map[m++] = (uint16_t)i;
    }
    return m;
}

/* Candidates of the leftover points renamed to the event's point indices (map increases, so they stay sorted). */
GPUd() static inline void tr_cands_remap(tr_cand *c, int nc, const uint16_t *map)
{
    for (int k = 0; k < nc; k++)
        for (int q = 0; q < c[k].n; q++)
            c[k].pt[q] = map[c[k].pt[q]];
}

/* Then the single points, and the event's counts into info; the number of gammas. */
GPUd() static inline int tr_select_singles(const tr_params *p, const tr_physics *tab, const tr_geo *geo,
                                           const tr_point *pts, int n, const uint8_t *used, tr_gamma *out,
                                           int g, tr_event_info *info)
{
    int unused = 0;
    for (int i = 0; i < n; i++) {
        if (used[i])
            continue;
        float lf = tr_single_log_fom(p, tab, geo, &pts[i]);
        if (lf < p->log_min_single || !tr_isolated(p, pts, n, i)) {
            unused++;
            continue;
        }
        tr_gamma *s = &out[g++];
        s->log_fom = lf;
        s->n = 1;
        s->flags = TR_GAMMA_SINGLE;
        s->pt[0] = (uint16_t)i;
        for (int k = 1; k < TR_MAX_CLUSTER; k++)
            s->pt[k] = TR_NONE;
    }
    info->n_gammas = (uint16_t)g;
    info->unused = (uint16_t)unused;
    return g;
}

#endif
