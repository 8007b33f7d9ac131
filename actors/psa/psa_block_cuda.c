/* psa_block_cuda.c: whole blocks on the GPU (GPUWork block): the PSA block's CUDA backend, the same steps as psa_block.c's on the device (kernels/psa_block.cu); compiled only with CUDA. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "psa_backend.h"
#include "psa_block_gpu.h"
#include "psa_pair.h"
#include "psa_refine.h"

/* Each segment's sparse coarse points (psa_pair_sparse) into p's segments; sparse: room for every coarse point. */
static bool sparse_points(const psa_setup *s, pb_setup *p, uint32_t *sparse, char *msg, size_t len)
{
    for (int g = 0; g < DET_SEGMENTS; g++) {
        const int n = psa_pair_sparse(&s->layout->seg[g], s->basis, sparse);
        if (n < 0) {
            snprintf(msg, len, "no host memory for the segments' sparse points");
            return false;
        }
        p->seg[g].sparse = sparse;
        p->seg[g].n_sparse = (uint32_t)n;
        sparse += n;
    }
    return true;
}

static bool open_block(const psa_setup *s, char *msg, size_t len)
{
    const psa_layout *l = s->layout;
    const psa_timing *tm = s->timing;
    pb_setup p = { .n_points = s->basis->n_points, .n_samples = s->basis->n_samples,
                   .signal = s->basis->signal, .point_edge = tm->point_edge,
                   .window = { l->window_start, l->window, s->basis->pretrigger, tm->ratio },
                   .basis_edge = tm->basis_edge, .shift_step = tm->shift_step,
                   .half_step = 0.5 * tm->shift_step,
                   .steps = pr_steps(tm->shift_range, tm->shift_step), .pow = s->engine->pw,
                   .column = l->column };
    size_t coarse = 0;
    for (int g = 0; g < DET_SEGMENTS; g++) {
        const psa_segment *x = &l->seg[g];
        p.seg[g] = (pb_segment){ .n_points = x->n_points, .n_mask = x->n_mask, .centre = x->centre,
                                 .n_coarse = x->n_coarse, .point = x->point, .local_first = x->local_first,
                                 .local = x->local };
        memcpy(p.seg[g].mask, x->mask, sizeof p.seg[g].mask);
        coarse += x->n_coarse;
    }
    uint32_t *sparse = malloc((coarse + 1) * sizeof *sparse);
    pb_gpu *gpu;
    bool made = sparse && sparse_points(s, &p, sparse, msg, len) &&
                pb_gpu_create(&gpu, s->engine->gpu, &p, msg, len) == GPU_OK;
    if (!sparse)
        snprintf(msg, len, "no host memory for the segments' sparse points");
    free(sparse);
    if (!made)
        return false;
    s->engine->block = gpu;
    const char *fault = getenv("NARWHAL_PSA_GPU_FAULT");
    s->engine->fault_at = fault ? strtoul(fault, NULL, 10) : 0;
    return true;
}

/* The device workspace block w runs in: its own (a part's, fork_block), else the engine's. */
static pb_gpu *dev(const psa_block *w, const psa_setup *s)
{
    return w->gpu ? w->gpu : s->engine->block;
}

static void *fork_block(const psa_setup *s, char *msg, size_t len)
{
    pb_gpu *p;
    return pb_gpu_fork(&p, s->engine->block, msg, len) == GPU_OK ? p : NULL;
}

static void free_fork(void *p) { pb_gpu_destroy(p); }

static bool block_times(const psa_block *const *w, size_t n_w, const psa_setup *s, char *text, size_t len)
{
    double t[PB_STEPS] = { 0 }, total = 0;
    size_t n = 0;
    for (size_t i = 0; i < n_w; i++) {
        double one[PB_STEPS];
        pb_gpu_steps(dev(w[i], s), one);
        for (int k = 0; k < PB_STEPS; k++)
            t[k] += one[k];
    }
    for (int k = 0; k < PB_STEPS; k++)
        total += t[k];
    n += (size_t)snprintf(text, len, "%.3f s", total);
    for (int k = 0; k < PB_STEPS && n < len; k++)
        n += (size_t)snprintf(text + n, len - n, "%s %s %.3f", k ? "," : ":", pb_step_name(k), t[k]);
    return true;
}

/* The host's OpenMP threads (the setup's, psa_block_threads). */
static int host_threads(const psa_setup *s) { return s->threads > 0 ? s->threads : omp_get_max_threads(); }

/* Every round's searches of the GPU's events, round after round from
 * w->gq and w->gowner (round r's from first[r] to first[r + 1]): each round's
 * those of the events with an r-th net-charge segment, sorted by segment,
 * events in order within one, their measured values one after the other.
 * The events are cut into one run per thread: each counts its run's
 * searches per round and segment, the runs' places follow from the counts
 * (run after run within a segment, so events stay in order), and each
 * writes its own.  0, or -1 without host memory. */
static int gather(psa_block *w, const psa_setup *s, size_t n_gev, int rounds, size_t *first)
{
    const psa_layout *l = s->layout;
    const int runs = host_threads(s), cells = rounds * DET_SEGMENTS;
    const size_t n_at = (size_t)runs * cells;
    size_t *at = calloc(n_at + 1, sizeof *at);          /* a run's searches, then its next place */
    uint32_t *meas = malloc((n_at + 1) * sizeof *meas); /* where a run's next values go */
    size_t total = 0;
    int rc = -1;
    if (!at || !meas)
        goto done;
#pragma omp parallel for schedule(static, 1) num_threads(runs)
    for (int t = 0; t < runs; t++)
        for (size_t j = n_gev * t / runs; j < n_gev * (t + 1) / runs; j++)
            for (int r = 0; r < (int)w->gev[j].n_net; r++)
                at[(size_t)t * cells + r * DET_SEGMENTS + w->gev[j].net[r]]++;
    for (int r = 0; r < rounds; r++) {
        uint32_t values = 0;
        first[r] = total;
        for (int g = 0; g < DET_SEGMENTS; g++)
            for (int t = 0; t < runs; t++) {
                const size_t c = (size_t)t * cells + r * DET_SEGMENTS + g, k = at[c];
                at[c] = total;
                meas[c] = values;
                total += k;
                values += (uint32_t)k * l->seg[g].n_mask * l->window;
            }
    }
    first[rounds] = total;
    if (psa_block_reserve((void **)&w->gq, &w->cap_gq, total + 1, sizeof *w->gq) ||
        psa_block_reserve((void **)&w->gowner, &w->cap_gowner, total + 1, sizeof *w->gowner))
        goto done;
#pragma omp parallel for schedule(static, 1) num_threads(runs)
    for (int t = 0; t < runs; t++)
        for (size_t j = n_gev * t / runs; j < n_gev * (t + 1) / runs; j++) {
            const psa_event *ev = &w->ev[w->gidx[j]];
            for (int r = 0; r < (int)w->gev[j].n_net; r++) {
                const unsigned g = ev->net[r];
                const size_t c = (size_t)t * cells + r * DET_SEGMENTS + g, i = at[c]++;
                w->gowner[i] = (uint32_t)j;
                w->gq[i] = (gs_query){ .segment = (uint16_t)g,
                                       .use = (uint16_t)psa_event_use(ev, r, l, psa_block_subtracted(s, r, 0)),
                                       .meas = meas[c], .column = UINT32_MAX };
                meas[c] += l->seg[g].n_mask * l->window;
            }
        }
    rc = 0;
done:
    free(at);
    free(meas);
    return rc;
}

/* Event ev as the device takes it. */
static void pack(pb_event *g, const psa_event *ev, const uint8_t *base, const psa_setup *s)
{
    memset(g, 0, sizeof *g);
    g->trace = (uint64_t)(ev->trace - base);
    g->t0 = ev->t0;
    g->shift = ev->shift;
    g->per_kev = ev->per_kev;
    g->n_samples = ev->n_samples;
    g->n_net = (uint32_t)ev->n_net;
    g->neighbours = (uint8_t)(s->neighbour_passes && psa_block_neighbours(ev, s->layout));
    memcpy(g->net, ev->net, sizeof g->net);
    memcpy(g->e, ev->e, sizeof g->e);
}

/* Events [from, to) with net-charge segments, appended to those the GPU
 * takes, packed on the decode's threads straight into the workspace's
 * pinned room (pb_gpu_events: uploaded from there); the block's bytes they
 * lie in go to the device with them. */
static int part(psa_block *w, const psa_setup *s, size_t from, size_t to)
{
    size_t first = w->n_gev, n = w->n_gev;
    const uint8_t *base = w->copy ? w->copy : w->in;
    for (size_t k = from; k < to; k++)
        if (!w->ev[k].reject && w->ev[k].n_net > 0)
            w->gidx[n++] = (uint32_t)k;
    w->n_gev = n;
#pragma omp parallel for schedule(static) num_threads(host_threads(s))
    for (long j = (long)first; j < (long)n; j++)
        pack(&w->gev[j], &w->ev[w->gidx[j]], base, s);
    size_t lo = from ? psa_block_frame_end(w, from - 1) : 0;
    size_t hi = to < w->n_ev ? psa_block_frame_end(w, to - 1) : w->size;
    return pb_gpu_part(dev(w, s), base, lo, hi - lo, first, n - first, w->gpu_msg, sizeof w->gpu_msg);
}

static void send(psa_block *w, const psa_setup *s)
{
    w->gpu_rc = pb_gpu_send(dev(w, s), w->in, w->size, w->gpu_msg, sizeof w->gpu_msg);
}

/* The block goes to the GPU as it is decoded (psa_block_begin, then each
 * part): room for it there, its events in the workspace's pinned room.  0,
 * or -1 without host memory. */
static int begin(psa_block *w, const psa_setup *s)
{
    w->n_gev = 0;
    /* the GPU takes only events that pass their checks: at most the frames of a fitting size, not every key */
    if (psa_block_reserve((void **)&w->gidx, &w->cap_gidx, w->n_sized + 1, sizeof *w->gidx))
        return -1;
    if (!w->gpu_rc)
        w->gpu_rc = pb_gpu_begin(dev(w, s), w->size, w->n_sized, w->sent, w->gpu_msg, sizeof w->gpu_msg);
    w->gev = w->gpu_rc ? NULL : pb_gpu_events(dev(w, s));
    return 0;
}

/* Round r's searches of the neighbour passes into q and owner (sorted by
 * segment, events in order, as device_round's): the hits r of the events
 * with neighbours that touch another, every other hit subtracted (their
 * whole masks); their count returned.  at: room for DET_SEGMENTS + 1. */
static size_t neighbour_round(psa_block *w, const psa_setup *s, int r, gs_query *q, uint32_t *owner, size_t *at)
{
    const psa_layout *l = s->layout;
    size_t n = 0;
    memset(at, 0, (DET_SEGMENTS + 1) * sizeof *at);
    for (size_t j = 0; j < w->n_gev; j++)
        if (w->gev[j].neighbours && psa_block_searched(&w->ev[w->gidx[j]], r, l, 1)) {
            at[w->gev[j].net[r] + 1]++;
            owner[n++] = (uint32_t)j; /* in event order, bucketed below */
        }
    for (int g = 0; g < DET_SEGMENTS; g++)
        at[g + 1] += at[g];
    for (size_t i = 0; i < n; i++)
        q[at[w->gev[owner[i]].net[r]]++].column = owner[i]; /* the event, until the records are written */
    uint32_t meas = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t j = q[i].column;
        const psa_event *ev = &w->ev[w->gidx[j]];
        const unsigned g = ev->net[r];
        owner[i] = j;
        q[i] = (gs_query){ .segment = (uint16_t)g, .use = (uint16_t)psa_event_use(ev, r, l, psa_block_subtracted(s, r, 1)),
                           .meas = meas, .column = UINT32_MAX };
        meas += l->seg[g].n_mask * l->window;
    }
    return n;
}

/* The neighbour passes' work on the device (psa_block.c's neighbour_passes,
 * the same steps): each event with touching hits' first touching pair, and
 * each round's searches of those of its hits that touch another.  0, a
 * gpu_status, or -1 without host memory. */
static int device_neighbours(psa_block *w, const psa_setup *s, pb_gpu *gpu, int rounds, char *msg, size_t len)
{
    const psa_layout *l = s->layout;
    size_t n = w->n_gev, n_pairs = 0, at[DET_SEGMENTS + 1];
    uint32_t max_coarse = 0;
    pb_list round[DET_SEGMENTS];
    uint8_t mode[PB_MAX_PASSES][DET_SEGMENTS];
    pb_pair *pairs = malloc((n + 1) * sizeof *pairs);
    gs_query *q = malloc(((size_t)rounds * n + 1) * sizeof *q);
    uint32_t *owner = malloc(((size_t)rounds * n + 1) * sizeof *owner);
    int rc = -1;
    if (!pairs || !q || !owner)
        goto done;
    for (int g = 0; g < DET_SEGMENTS; g++)
        max_coarse = l->seg[g].n_coarse > max_coarse ? l->seg[g].n_coarse : max_coarse;
    for (size_t j = 0; j < n; j++) {
        int r, t;
        if (w->gev[j].neighbours && psa_pair_of(&w->ev[w->gidx[j]], l, &r, &t))
            pairs[n_pairs++] = (pb_pair){ (uint32_t)j, (uint8_t)r, (uint8_t)t, { 0 } };
    }
    const int whole = s->engine->p.mode == PSA_ADAPTIVE ? GS_ADAPTIVE : GS_FULL;
    for (int pass = 1; pass <= s->neighbour_passes && pass <= PB_MAX_PASSES; pass++)
        for (int r = 0; r < rounds && r < DET_SEGMENTS; r++)
            mode[pass - 1][r] = (uint8_t)(psa_block_local(s, r, pass) ? GS_LOCAL : whole);
    for (int r = 0; r < rounds && r < DET_SEGMENTS; r++) {
        gs_query *qr = q + (size_t)r * n;
        uint32_t *ow = owner + (size_t)r * n;
        int listed = 0; /* the device picks the searches of its local rounds itself */
        for (int pass = 1; pass <= s->neighbour_passes && pass <= PB_MAX_PASSES; pass++)
            listed |= mode[pass - 1][r] != GS_LOCAL;
        round[r] = (pb_list){ qr, ow, listed ? neighbour_round(w, s, r, qr, ow, at) : 0 };
    }
    rc = pb_gpu_neighbours(gpu, pairs, n_pairs, round, rounds, s->neighbour_passes, s->timing->shift_range > 0,
                           whole, mode, max_coarse, msg, len);
done:
    free(pairs);
    free(q);
    free(owner);
    return rc;
}

/* NARWHAL_PSA_GPU_FAULT=N at initialise (open_block reads it), for tests:
 * the engine's N-th whole block on the GPU fails once its first round is
 * queued, as a device fault would (the recovery is otherwise untestable). */
static bool injected_fault(const psa_engine *e, unsigned long block) { return e->fault_at && e->fault_at == block; }

/* psa_block_search's rounds on the GPU (psa_block.c's steps, the same
 * answers).  0, or a gpu_status with msg when the GPU failed. */
static int run(psa_block *w, const psa_setup *s, char *msg, size_t len)
{
    pb_gpu *gpu = dev(w, s);
    const int adaptive = s->engine->p.mode == PSA_ADAPTIVE;
    double t = psa_now();
    size_t n = w->n_gev;
    int rc, rounds = 0;
    if (w->gpu_rc) {
        snprintf(msg, len, "%s", w->gpu_msg);
        return w->gpu_rc;
    }
    for (size_t j = 0; j < n; j++)
        rounds = (int)w->gev[j].n_net > rounds ? (int)w->gev[j].n_net : rounds;
    if ((rc = pb_gpu_loaded(gpu, msg, len)))
        return rc;
    /* the parts of a block (psa_parts.h) count theirs from their threads */
    const unsigned long block = __atomic_add_fetch(&s->engine->blocks, 1, __ATOMIC_RELAXED);
    psa_block_lap(w, PSA_PHASE_ALIGN, &t);
    size_t first[DET_SEGMENTS + 1];
    if (gather(w, s, n, rounds, first))
        return -1;
    psa_block_lap(w, PSA_PHASE_GATHER, &t);
    for (int r = 0; r < rounds; r++) {
        const size_t q = first[r + 1] - first[r];
        if ((rc = pb_gpu_search(gpu, r, w->gq + first[r], w->gowner + first[r], q, adaptive, msg, len)))
            return rc;
        if (r == 0 && injected_fault(s->engine, block)) {
            snprintf(msg, len, "fault injected by NARWHAL_PSA_GPU_FAULT");
            return GPU_FAIL;
        }
        w->searches += q;
        psa_block_lap(w, PSA_PHASE_SEARCH, &t);
        for (int pass = 0; r == 0 && s->timing->shift_range > 0 && pass < PSA_REFINE_PASSES; pass++)
            if ((rc = pb_gpu_refine(gpu, pass, msg, len)))
                return rc;
        psa_block_lap(w, PSA_PHASE_REFINE, &t);
        if ((rc = pb_gpu_subtract(gpu, r, msg, len)))
            return rc;
        psa_block_lap(w, PSA_PHASE_SUBTRACT, &t);
    }
    if (s->neighbour_passes && rounds > 1 && (rc = device_neighbours(w, s, gpu, rounds, msg, len)))
        return rc;
    psa_block_lap(w, PSA_PHASE_GATHER, &t);
    uint64_t researched = 0, neighboured = 0;
    if ((rc = pb_gpu_results(gpu, w->gev, n, &researched, &neighboured, msg, len)))
        return rc;
    w->searches += researched + neighboured;
    w->refined += researched;
    w->neighboured += neighboured;
    for (size_t j = 0; j < n; j++) {
        const pb_event *g = &w->gev[j];
        psa_event *ev = &w->ev[w->gidx[j]];
        ev->shift = g->shift;
        for (int r = 0; r < ev->n_net; r++) {
            ev->point[r] = g->point[r];
            ev->fom[r] = g->fom[r];
            ev->hit_status[r] = g->hit_status[r];
        }
    }
    psa_block_lap(w, PSA_PHASE_SEARCH, &t);
    return 0;
}

static void close_block(psa_engine *e)
{
    pb_gpu_destroy(e->block);
    e->block = NULL;
}

const psa_block_backend psa_block_cuda = {
    .open = open_block, .close = close_block, .times = block_times, .host_alloc = gpu_host_alloc,
    .host_free = gpu_host_free, .pinned = gpu_host_pinned, .fork = fork_block, .free_fork = free_fork,
    .send = send, .begin = begin, .part = part, .run = run,
};
