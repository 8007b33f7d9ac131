/* tracker_cluster.h: forward tracking's candidate clusters: points linked within a cone angle seen from the target, for growing angles. */
#ifndef NARWHAL_TRACKER_CLUSTER_H
#define NARWHAL_TRACKER_CLUSTER_H

#include "tracker_geom.h"

/*
 * For N points the cone angle alpha grows in 0.05 rad steps up to alpha_max,
 * (1 - cos alpha_max) / 2 = (3 / (N + 2))^0.9, the last step being alpha_max
 * itself.  At each step two points are linked when the angle between their
 * directions from the target is at most alpha, and a cluster is a connected
 * component (single linkage).  Every component that appears at some step is
 * a candidate once: a component that did not change since the previous step
 * is the same candidate.  Components of 2 to 7 points are scored; larger ones
 * are not (counted in *big): their points still take part through the smaller
 * components found at smaller angles, and as single points.  Single points
 * are not candidates here; the selection treats them on their own.
 *
 * Candidates come out in step order, and within a step by their smallest
 * point index, each with its points in increasing order, so that the result
 * does not depend on the order in which links were made.  Angles are compared
 * through dot products, dot(p_i, p_j) >= cos(alpha) |p_i| |p_j|, without any
 * inverse cosine.
 */

/* Scratch of one event, n entries each (caller-owned: thread-local arrays on
 * the CPU, slices of device buffers on the GPU). */
typedef struct tr_cluster_scratch {
    uint16_t *parent, *next, *tail, *size;
    uint8_t *dirty;
    float *norm;
} tr_cluster_scratch;
GPU_LAYOUT(sizeof(tr_cluster_scratch) == 48 && offsetof(tr_cluster_scratch, next) == 8 &&
           offsetof(tr_cluster_scratch, tail) == 16 && offsetof(tr_cluster_scratch, size) == 24 &&
           offsetof(tr_cluster_scratch, dirty) == 32 && offsetof(tr_cluster_scratch, norm) == 40);

GPUd() static inline uint16_t tr_find(uint16_t *parent, uint16_t i)
{
    uint16_t r = i;
    while (parent[r] != r)
        r = parent[r];
    while (parent[i] != r) {
        uint16_t up = parent[i];
        parent[i] = r;
        i = up;
    }
    return r;
}

/* Joins the components of roots a and b (a != b): the larger absorbs the smaller. */
GPUd() static inline void tr_union(const tr_cluster_scratch *s, uint16_t a, uint16_t b)
{
    if (s->size[a] < s->size[b]) {
        uint16_t t = a;
        a = b;
        b = t;
    }
    s->parent[b] = a;
    s->size[a] = (uint16_t)(s->size[a] + s->size[b]);
    s->next[s->tail[a]] = b;
    s->tail[a] = s->tail[b];
    s->dirty[a] = 1;
    s->dirty[b] = 0;
}

/* The members of root r's component, increasing, into c (at most 7 called for). */
GPUd() static inline void tr_members(const tr_cluster_scratch *s, uint16_t r, tr_cand *c)
{
    int n = 0;
    for (uint16_t i = r; i != TR_NONE; i = s->next[i]) {
        int k = n++;
        while (k > 0 && c->pt[k - 1] > i) {
            c->pt[k] = c->pt[k - 1];
            k--;
        }
        c->pt[k] = i;
    }
    c->n = (uint8_t)n;
    c->pad = 0;
    for (int k = n; k < TR_MAX_CLUSTER; k++)
        c->pt[k] = TR_NONE;
}

/* Writes the components that changed during the last step as candidates. */
GPUd() static inline int tr_emit(const tr_cluster_scratch *s, int n, tr_cand *out, int count,
                                 uint16_t *big)
{
    for (uint16_t i = 0; i < n; i++) {
        uint16_t r = tr_find(s->parent, i);
        if (!s->dirty[r])
            continue;
        s->dirty[r] = 0;
        if (s->size[r] <= TR_MAX_CLUSTER)
            tr_members(s, r, &out[count++]);
        else
            ++*big;
    }
    return count;
}

/* The threshold on cos(alpha) of step k (0-based) for an event of n points. */
GPUd() static inline float tr_step_cos(const tr_params *p, int n, int k)
{
    return k < p->steps_below[n] ? p->cos_step[k] : p->cos_alpha_max[n];
}

GPUd() static inline void tr_cluster_start(const tr_cluster_scratch *s, const tr_point *pts, int n)
{
    for (uint16_t i = 0; i < n; i++) {
        s->parent[i] = i;
        s->next[i] = TR_NONE;
        s->tail[i] = i;
        s->size[i] = 1;
        s->dirty[i] = 0;
        s->norm[i] = TR_SQRT(tr_dot3_pts(&pts[i], &pts[i]));
    }
}

/* Whether points i and j are within the cone of threshold c. */
GPUd() static inline int tr_linked(const tr_cluster_scratch *s, const tr_point *pts, int i, int j, float c)
{
    return tr_dot3_pts(&pts[i], &pts[j]) >= TR_MUL(c, TR_MUL(s->norm[i], s->norm[j]));
}

/* Candidates of one event (n <= TR_MAX_POINTS points) into out (room for n - 1:
 * each candidate is born of at least one link); returns their number.  Every
 * step tests every pair still apart (the GPU's way: no memory per pair). */
GPUd() static inline int tr_cluster_event(const tr_params *p, const tr_point *pts, int n,
                                          const tr_cluster_scratch *s, tr_cand *out, uint16_t *big)
{
    int count = 0;
    *big = 0;
    tr_cluster_start(s, pts, n);
    int steps = p->steps_below[n] + 1;
    for (int k = 0; k < steps; k++) {
        float c = tr_step_cos(p, n, k);
        int linked = 0;
        for (uint16_t i = 0; i < n; i++) {
            for (uint16_t j = (uint16_t)(i + 1); j < n; j++) {
                uint16_t ri = tr_find(s->parent, i), rj = tr_find(s->parent, j);
                if (ri == rj)
                    continue;
                if (tr_linked(s, pts, i, j, c)) {
                    tr_union(s, ri, rj);
                    linked = 1;
                }
            }
        }
        if (linked)
            count = tr_emit(s, n, out, count, big);
    }
    return count;
}

/* The same candidates, from each pair's first linking step found once: the
 * pairs linked at all (usually few) are sorted by step, then joined step by
 * step.  pair (room for n (n - 1) / 2) and first (TR_MAX_STEPS + 1) are
 * scratch.  The components at each step, hence the candidates and their
 * order, do not depend on the order of the links. */
GPUd() static inline int tr_cluster_event_pairs(const tr_params *p, const tr_point *pts, int n,
                                                const tr_cluster_scratch *s, uint32_t *pair, uint32_t *first,
                                                tr_cand *out, uint16_t *big)
{
    int count = 0, steps = p->steps_below[n] + 1;
    *big = 0;
    tr_cluster_start(s, pts, n);
    for (int k = 0; k <= steps; k++)
        first[k] = 0;
    /* count per step, then place: pair codes are i * 65536 + j */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                if (!tr_linked(s, pts, i, j, tr_step_cos(p, n, steps - 1)))
                    continue;
                int k = 0;
                while (!tr_linked(s, pts, i, j, tr_step_cos(p, n, k)))
                    k++;
                if (pass == 0)
                    first[k + 1]++;
                else
                    pair[first[k]++] = (uint32_t)i << 16 | (uint32_t)j;
            }
        }
        for (int k = 0; pass == 0 && k < steps; k++)
            first[k + 1] += first[k];
    }
    /* after placing, first[k] is the end of step k's pairs */
    uint32_t at = 0;
    for (int k = 0; k < steps; k++) {
        int joined = 0;
        for (; at < first[k]; at++) {
            uint16_t ri = tr_find(s->parent, (uint16_t)(pair[at] >> 16));
            uint16_t rj = tr_find(s->parent, (uint16_t)(pair[at] & 0xFFFFu));
            if (ri != rj) {
                tr_union(s, ri, rj);
                joined = 1;
            }
        }
        if (joined)
            count = tr_emit(s, n, out, count, big);
    }
    return count;
}

#endif
