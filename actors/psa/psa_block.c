/* psa_block.c: a block's data:crystal frames through the rounds of searches, and their data:psa frames. */
#include "psa_block.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit.h"

const char *psa_phase_name(psa_phase p)
{
    static const char *names[PSA_PHASES] = { "decode", "align", "gather", "search", "refine",
                                             "subtract", "write" };
    return p < PSA_PHASES ? names[p] : "?";
}

double psa_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Adds the time since *t to phase p and restarts *t. */
static void lap(psa_block *w, psa_phase p, double *t)
{
    double t1 = psa_now();
    w->phase_s[p] += t1 - *t;
    *t = t1;
}

static int reserve(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    void *q = realloc(*p, need * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = need;
    return 0;
}

static int threads(const psa_setup *s)
{
    return s->engine->p.threads > 0 ? s->engine->p.threads : omp_get_max_threads();
}

/* The block's data:crystal frames, in order. */
static unsigned list_frames(psa_block *w, const void *in, unsigned size)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    adf_iter_init(&it, in, size);
    while (adf_iter_next(&it, &f) > 0)
        n += f.key.id == ADF_ID_DATA_CRYSTAL;
    if (reserve((void **)&w->frame, &w->cap_frame, n + 1, sizeof *w->frame))
        return NARVAL_E_NOMEM;
    w->n_ev = 0;
    adf_iter_init(&it, in, size);
    while (adf_iter_next(&it, &f) > 0)
        if (f.key.id == ADF_ID_DATA_CRYSTAL)
            w->frame[w->n_ev++] = f;
    return 0;
}

static unsigned decode_all(psa_block *w, const psa_setup *s, const void *in, unsigned size)
{
    size_t window = (size_t)PSA_CHANNELS * s->layout->window;
    unsigned code = list_frames(w, in, size);
    if (code || reserve((void **)&w->ev, &w->cap_ev, w->n_ev + 1, sizeof *w->ev) ||
        reserve((void **)&w->resid, &w->cap_resid, w->n_ev * window + 1, sizeof *w->resid))
        return NARVAL_E_NOMEM;
    long n = (long)w->n_ev;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long k = 0; k < n; k++) {
        psa_event *ev = &w->ev[k];
        psa_event_decode(&w->frame[k], ev, s->timing);
        ev->offset = w->frame[k].offset;
        ev->resid = w->resid + (size_t)k * window;
    }
    return 0;
}

/* A batch of round r's searches for the events that have an r-th net-charge
 * segment (only the marked ones when marked is not NULL). */
static unsigned gather(psa_block *w, const psa_setup *s, int r, const bool *marked)
{
    double t = psa_now();
    psa_batch_clear(&w->batch);
    if (reserve((void **)&w->owner, &w->cap_owner, w->n_ev + 1, sizeof *w->owner))
        return NARVAL_E_NOMEM;
    for (size_t k = 0; k < w->n_ev; k++) {
        const psa_event *ev = &w->ev[k];
        if (ev->reject || ev->n_net <= r || (marked && !marked[k]))
            continue;
        w->owner[w->batch.n] = (uint32_t)k;
        if (psa_event_query(ev, r, s->layout, &w->batch))
            return NARVAL_E_NOMEM;
    }
    long n = (long)w->batch.n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long i = 0; i < n; i++)
        psa_event_fill(&w->ev[w->owner[i]], r, s->layout, w->batch.meas + w->batch.q[i].meas);
    lap(w, PSA_PHASE_GATHER, &t);
    return 0;
}

static unsigned run(psa_block *w, const psa_setup *s)
{
    bool fell_back;
    char msg[512];
    double t = psa_now();
    unsigned code = psa_engine_run(s->engine, &w->batch, &fell_back, msg, sizeof msg);
    lap(w, PSA_PHASE_SEARCH, &t);
    if (fell_back) {
        kit_log(s->who, KIT_WARN, "%s", msg);
        w->fell_back++;
    }
    w->searches += w->batch.n;
    return code;
}

/* Each search's answer as round r's hit of its event (not yet subtracted). */
static void answer(psa_block *w, const psa_setup *s, int r)
{
    for (size_t i = 0; i < w->batch.n; i++) {
        const psa_query *q = &w->batch.q[i];
        psa_event *ev = &w->ev[w->owner[i]];
        const psa_segment *g = &s->layout->seg[q->segment];
        ev->hit_status[r] = q->use ? 0 : PSA_HIT_NO_MASK;
        ev->point[r] = g->point[q->use ? q->column : g->centre];
        ev->fom[r] = q->fom;
    }
}

/* Round 0's start times: each event's best point tried at shifted starts;
 * where the start moves, the event is searched again, and where that search
 * finds another point, the start is tried again with it (at most
 * REFINE_PASSES times), so that start and point agree.  After the first
 * pass, a move of less than half a ShiftStep is kept without a search. */
enum { REFINE_PASSES = 3 };

static unsigned refine(psa_block *w, const psa_setup *s)
{
    bool *todo = malloc((w->n_ev + 1) * sizeof *todo);
    uint32_t *before = malloc((w->n_ev + 1) * sizeof *before);
    unsigned code = 0;
    if (!todo || !before) {
        free(todo);
        free(before);
        return NARVAL_E_NOMEM;
    }
    for (size_t k = 0; k < w->n_ev; k++)
        todo[k] = !w->ev[k].reject && w->ev[k].n_net > 0;
    for (int pass = 0; pass < REFINE_PASSES && !code; pass++) {
        long moved = 0, n = (long)w->n_ev;
        double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : moved) num_threads(threads(s))
        for (long k = 0; k < n; k++) {
            psa_event *ev = &w->ev[k];
            if (!todo[k])
                continue;
            double shift = psa_event_refine(ev, ev->point[0], s->basis, s->layout, s->timing);
            todo[k] = pass == 0 ? shift != ev->shift
                                : fabs(shift - ev->shift) >= 0.5 * s->timing->shift_step;
            before[k] = ev->point[0];
            if (shift != ev->shift) {
                ev->shift = shift;
                psa_event_align(ev, s->basis, s->layout, s->timing);
            }
            moved += todo[k];
        }
        lap(w, PSA_PHASE_REFINE, &t);
        if (!moved)
            break;
        if ((code = gather(w, s, 0, todo)) || (code = run(w, s)))
            break;
        answer(w, s, 0);
        w->refined += moved;
        for (size_t k = 0; k < w->n_ev; k++)
            todo[k] = todo[k] && w->ev[k].point[0] != before[k];
    }
    free(todo);
    free(before);
    return code;
}

unsigned psa_block_run(psa_block *w, const psa_setup *s, const void *in, unsigned size)
{
    unsigned code;
    int rounds = 0;
    double t = psa_now();
    w->searches = w->refined = w->fell_back = 0;
    if ((code = decode_all(w, s, in, size)) != 0)
        return code;
    lap(w, PSA_PHASE_DECODE, &t);
    long n = (long)w->n_ev;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : rounds) num_threads(threads(s))
    for (long k = 0; k < n; k++) {
        psa_event *ev = &w->ev[k];
        if (ev->reject || ev->n_net == 0)
            continue;
        psa_event_align(ev, s->basis, s->layout, s->timing);
        rounds = ev->n_net > rounds ? ev->n_net : rounds;
    }
    lap(w, PSA_PHASE_ALIGN, &t);
    for (int r = 0; r < rounds; r++) {
        if ((code = gather(w, s, r, NULL)) || (code = run(w, s)))
            return code;
        answer(w, s, r);
        if (r == 0 && s->timing->shift_range > 0 && (code = refine(w, s)))
            return code;
        t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
        for (long k = 0; k < n; k++) {
            psa_event *ev = &w->ev[k];
            if (!ev->reject && ev->n_net > r)
                psa_event_subtract(ev, r, s->basis, s->layout);
        }
        lap(w, PSA_PHASE_SUBTRACT, &t);
    }
    return 0;
}

void psa_block_write(const psa_event *ev, const psa_setup *s, adf_writer *out)
{
    adf_psa p;
    double t0 = ev->t0 * 10.0, t1 = (ev->t0 + ev->shift) * 10.0;
    memset(&p, 0, sizeof p);
    p.crystal_id = ev->crystal_id;
    p.status = ev->crystal_status;
    p.e0 = p.e1 = ev->core_e;
    p.t0 = (float)t0;
    p.t1 = (float)t1;
    p.psa_status = ev->psa_status;
    p.n_hits = (uint16_t)ev->n_net;
    for (int r = 0; r < ev->n_net; r++) {
        adf_psa_hit *h = &p.hit[r];
        const float *pos = &s->basis->pos[3 * (size_t)ev->point[r]];
        h->status = ev->hit_status[r];
        h->segment = ev->net[r];
        h->crystal_id = (int16_t)ev->crystal_id;
        h->x = pos[0];
        h->y = pos[1];
        h->z = pos[2];
        h->e = ev->e[r];
        h->t = (float)t1;
    }
    adf_psa_write(out, ev->key.event, ev->key.timestamp, &p);
}

void psa_block_free(psa_block *w)
{
    free(w->ev);
    free(w->resid);
    free(w->owner);
    free(w->frame);
    psa_batch_free(&w->batch);
    memset(w, 0, sizeof *w);
}
