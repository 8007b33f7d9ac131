/* tracker_cpu.c: the CPU path of forward tracking: clustering, ordering search and selection per event, over OpenMP threads. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tracker_cluster.h"
#include "tracker_cpu.h"
#include "tracker_fom.h"

enum { PATH_STRIDE = TR_MAX_POINTS + 1 };

/* One thread's working memory for one event at a time. */
typedef struct scratch {
    uint16_t parent[TR_MAX_POINTS], next[TR_MAX_POINTS], tail[TR_MAX_POINTS], size[TR_MAX_POINTS];
    uint8_t dirty[TR_MAX_POINTS], used[TR_MAX_POINTS];
    float norm[TR_MAX_POINTS];
    uint32_t pair[TR_MAX_POINTS * (TR_MAX_POINTS - 1) / 2], first[TR_MAX_STEPS + 1];
    tr_cand cands[TR_MAX_POINTS];
    tr_point sub[TR_MAX_POINTS]; /* the points left free after the first pass */
    uint16_t map[TR_MAX_POINTS]; /* their indices in the event */
    tr_score scores[TR_MAX_POINTS];
    uint16_t order[TR_MAX_POINTS];
    float key[TR_MAX_POINTS];
    /* germanium paths between the event's points (index 0: the target), valid
     * where stamp equals the event's stamp */
    float path[PATH_STRIDE * PATH_STRIDE];
    uint32_t stamp[PATH_STRIDE * PATH_STRIDE];
    uint32_t event_stamp;
} scratch;

struct tracker_cpu {
    int threads;
    scratch *s;
};

tracker_cpu *tracker_cpu_create(int max_threads)
{
    tracker_cpu *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->threads = max_threads > 0 ? max_threads : 1;
    c->s = calloc((size_t)c->threads, sizeof *c->s);
    if (!c->s) {
        free(c);
        return NULL;
    }
    return c;
}

void tracker_cpu_destroy(tracker_cpu *c)
{
    if (!c)
        return;
    free(c->s);
    free(c);
}

/* Optimised: each pair's linking step found once; straightforward: every pair at every step. */
static int cluster(const tr_model *m, scratch *s, const tr_point *pts, int n, tr_cand *out, uint16_t *big,
                   bool optimised)
{
    tr_cluster_scratch cs = { s->parent, s->next, s->tail, s->size, s->dirty, s->norm };
    *big = 0;
    if (n == 0)
        return 0;
    return optimised ? tr_cluster_event_pairs(&m->params, pts, n, &cs, s->pair, s->first, out, big)
                     : tr_cluster_event(&m->params, pts, n, &cs, out, big);
}

/* The path between event points i < j (-1: the target), computed once per event. */
static float cached_path(const tr_model *m, scratch *s, const tr_point *pts, int i, int j)
{
    size_t at = (size_t)(i + 1) * PATH_STRIDE + (size_t)(j + 1);
    if (s->stamp[at] != s->event_stamp) {
        float a[3] = { 0.0f, 0.0f, 0.0f }, b[3] = { pts[j].x, pts[j].y, pts[j].z };
        if (i >= 0) {
            a[0] = pts[i].x;
            a[1] = pts[i].y;
            a[2] = pts[i].z;
        }
        s->path[at] = tr_ge_path(&m->params, &m->geo, a, b);
        s->stamp[at] = s->event_stamp;
    }
    return s->path[at];
}

static void gather_cached(const tr_model *m, scratch *s, const tr_point *pts, const tr_cand *cand,
                          tr_clu *c)
{
    tr_clu_begin(c, cand->n);
    for (int i = 1; i <= cand->n; i++)
        tr_clu_point(&m->params, c, i, &pts[cand->pt[i - 1]]);
    tr_clu_energy(c);
    for (int i = 0; i <= cand->n; i++) {
        for (int j = i + 1; j <= cand->n; j++) {
            float len = cached_path(m, s, pts, i == 0 ? -1 : cand->pt[i - 1], cand->pt[j - 1]);
            c->path[i][j] = len;
            c->path[j][i] = len;
        }
    }
}

/* A new stamp for the path cache; when the counter wraps, the cache is cleared. */
static void next_event(scratch *s)
{
    if (++s->event_stamp == 0) {
        memset(s->stamp, 0, sizeof s->stamp);
        s->event_stamp = 1;
    }
}

/* Scores the nc candidates of s->cands (point indices of pts). */
static void score(const tr_model *m, scratch *s, const tr_point *pts, int nc, bool optimised)
{
    for (int k = 0; k < nc; k++) {
        tr_clu c;
        if (optimised) {
            gather_cached(m, s, pts, &s->cands[k], &c);
            s->scores[k] = tr_best_searched(&m->params, m->physics, &c);
        } else {
            tr_clu_gather(&m->params, &m->geo, pts, &s->cands[k], &c);
            s->scores[k] = tr_best_exhaustive(&m->params, m->physics, m->perms, &c);
        }
    }
}

/* The second pass (retrack): the free points clustered on their own, their
 * candidates renamed to event indices, scored and taken; the new gamma count. */
static int retrack(const tr_model *m, scratch *s, const tr_point *pts, int n, tr_gamma *out, int g,
                   tr_event_info *info, bool optimised)
{
    int left = tr_leftovers(pts, n, s->used, s->sub, s->map);
    if (left < 2 || left == n)
        return g;
    uint16_t big;
    int nc = cluster(m, s, s->sub, left, s->cands, &big, optimised);
    tr_cands_remap(s->cands, nc, s->map);
    score(m, s, pts, nc, optimised);
    info->n_cands = (uint16_t)(info->n_cands + nc);
    info->big_clusters = (uint16_t)(info->big_clusters + big);
    return tr_select_clusters(&m->params, m->perms, pts, tr_size_bonus(&m->params, left), s->cands, s->scores, nc,
                              s->order, s->key, s->used, out, g);
}

static void track_event(const tr_model *m, scratch *s, const tr_point *pts, int n, tr_gamma *out,
                        tr_event_info *info, bool optimised)
{
    const tr_params *p = &m->params;
    uint16_t big;
    if (optimised)
        next_event(s);
    int nc = cluster(m, s, pts, n, s->cands, &big, optimised);
    score(m, s, pts, nc, optimised);
    info->n_cands = (uint16_t)nc;
    info->big_clusters = big;
    for (int i = 0; i < n; i++)
        s->used[i] = 0;
    int g = tr_select_clusters(p, m->perms, pts, tr_size_bonus(p, n), s->cands, s->scores, nc, s->order, s->key, s->used, out, 0);
    if (p->retrack)
        g = retrack(m, s, pts, n, out, g, info, optimised);
    tr_select_singles(p, m->physics, &m->geo, pts, n, s->used, out, g, info);
}

void tracker_cpu_track(tracker_cpu *c, const tr_model *m, const tr_batch *b, tr_out *o, bool optimised)
{
    long n_events = (long)b->n_events;
    int threads = optimised ? c->threads : 1;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (long e = 0; e < n_events; e++) {
        uint32_t first = b->first[e];
        scratch *s = &c->s[omp_get_thread_num()];
        track_event(m, s, &b->points[first], (int)(b->first[e + 1] - first), &o->gammas[first],
                    &o->info[e], optimised);
    }
}

void tracker_cpu_cluster(tracker_cpu *c, const tr_model *m, const tr_batch *b, tr_cand *cands,
                         tr_event_info *info)
{
    long n_events = (long)b->n_events;
#pragma omp parallel for schedule(dynamic, 8) num_threads(c->threads)
    for (long e = 0; e < n_events; e++) {
        uint32_t first = b->first[e];
        scratch *s = &c->s[omp_get_thread_num()];
        uint16_t big;
        info[e].n_cands = (uint16_t)cluster(m, s, &b->points[first], (int)(b->first[e + 1] - first),
                                            &cands[first], &big, true);
        info[e].big_clusters = big;
    }
}
