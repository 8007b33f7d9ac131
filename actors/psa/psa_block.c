/* psa_block.c: a block's data:crystal frames through the rounds of searches, and their data:psa frames. */
#include "psa_block.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
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

/* A batch of round r's searches for the part's events that have an r-th
 * net-charge segment (only the marked ones when marked is not NULL). */
static unsigned gather(psa_part *p, psa_block *w, const psa_setup *s, int r, const bool *marked)
{
    double t = psa_now();
    psa_batch_clear(&p->batch);
    if (reserve((void **)&p->owner, &p->cap_owner, p->hi - p->lo + 1, sizeof *p->owner))
        return NARVAL_E_NOMEM;
    for (size_t k = p->lo; k < p->hi; k++) {
        const psa_event *ev = &w->ev[k];
        if (ev->reject || ev->n_net <= r || (marked && !marked[k]))
            continue;
        p->owner[p->batch.n] = (uint32_t)k;
        if (psa_event_query(ev, r, s->layout, &p->batch))
            return NARVAL_E_NOMEM;
    }
    long n = (long)p->batch.n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(p->threads)
    for (long i = 0; i < n; i++)
        psa_event_fill(&w->ev[p->owner[i]], r, s->layout, p->batch.meas + p->batch.q[i].meas);
    p->phase_s[PSA_PHASE_GATHER] += psa_now() - t;
    return 0;
}

static unsigned run(psa_part *p, const psa_setup *s)
{
    bool fell_back;
    char msg[512];
    double t = psa_now();
    unsigned code = psa_engine_run(s->engine, p->lane, &p->batch, &fell_back, msg, sizeof msg);
    p->phase_s[PSA_PHASE_SEARCH] += psa_now() - t;
    if (fell_back) {
        kit_log(s->who, KIT_WARN, "%s", msg);
        p->fell_back++;
    }
    p->searches += p->batch.n;
    return code;
}

/* Each search's answer as round r's hit of its event (not yet subtracted). */
static void answer(psa_part *p, psa_block *w, const psa_setup *s, int r)
{
    for (size_t i = 0; i < p->batch.n; i++) {
        const psa_query *q = &p->batch.q[i];
        psa_event *ev = &w->ev[p->owner[i]];
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

static unsigned refine(psa_part *p, psa_block *w, const psa_setup *s)
{
    unsigned code = 0;
    if (reserve((void **)&p->todo, &p->cap_todo, w->n_ev + 1, sizeof *p->todo) ||
        reserve((void **)&p->before, &p->cap_before, w->n_ev + 1, sizeof *p->before))
        return NARVAL_E_NOMEM;
    bool *todo = p->todo;
    for (size_t k = p->lo; k < p->hi; k++)
        todo[k] = !w->ev[k].reject && w->ev[k].n_net > 0;
    for (int pass = 0; pass < REFINE_PASSES && !code; pass++) {
        long moved = 0, lo = (long)p->lo, hi = (long)p->hi;
        double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : moved) num_threads(p->threads)
        for (long k = lo; k < hi; k++) {
            psa_event *ev = &w->ev[k];
            if (!todo[k])
                continue;
            double shift = psa_event_refine(ev, ev->point[0], s->basis, s->layout, s->timing);
            todo[k] = pass == 0 ? shift != ev->shift
                                : fabs(shift - ev->shift) >= 0.5 * s->timing->shift_step;
            p->before[k] = ev->point[0];
            if (shift != ev->shift) {
                ev->shift = shift;
                psa_event_align(ev, s->basis, s->layout, s->timing);
            }
            moved += todo[k];
        }
        p->phase_s[PSA_PHASE_REFINE] += psa_now() - t;
        if (!moved)
            break;
        if ((code = gather(p, w, s, 0, todo)) || (code = run(p, s)))
            break;
        answer(p, w, s, 0);
        p->refined += moved;
        for (size_t k = p->lo; k < p->hi; k++)
            todo[k] = todo[k] && w->ev[k].point[0] != p->before[k];
    }
    return code;
}

/* The part's rounds: alignment, searches, refinement, subtraction. */
static unsigned rounds(psa_part *p, psa_block *w, const psa_setup *s)
{
    unsigned code;
    int last = 0;
    long lo = (long)p->lo, hi = (long)p->hi;
    double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) reduction(max : last) num_threads(p->threads)
    for (long k = lo; k < hi; k++) {
        psa_event *ev = &w->ev[k];
        if (ev->reject || ev->n_net == 0)
            continue;
        psa_event_align(ev, s->basis, s->layout, s->timing);
        last = ev->n_net > last ? ev->n_net : last;
    }
    p->phase_s[PSA_PHASE_ALIGN] += psa_now() - t;
    for (int r = 0; r < last; r++) {
        if ((code = gather(p, w, s, r, NULL)) || (code = run(p, s)))
            return code;
        answer(p, w, s, r);
        if (r == 0 && s->timing->shift_range > 0 && (code = refine(p, w, s)))
            return code;
        t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) num_threads(p->threads)
        for (long k = lo; k < hi; k++) {
            psa_event *ev = &w->ev[k];
            if (!ev->reject && ev->n_net > r)
                psa_event_subtract(ev, r, s->basis, s->layout);
        }
        p->phase_s[PSA_PHASE_SUBTRACT] += psa_now() - t;
    }
    return 0;
}

typedef struct part_job {
    psa_part *p;
    psa_block *w;
    const psa_setup *s;
    unsigned code;
} part_job;

static void *part_main(void *arg)
{
    part_job *j = arg;
    j->code = rounds(j->p, j->w, j->s);
    return NULL;
}

/* Below this many events per part a block is not split: the halves' rounds
 * would be too small to keep the GPU busy. */
enum { PART_MIN_EVENTS = 256 };

/* The parts' rounds at once: the last on this thread, the others on their own. */
static unsigned run_parts(psa_block *w, const psa_setup *s, int parts)
{
    part_job job[PSA_PARTS];
    pthread_t thread[PSA_PARTS];
    bool started[PSA_PARTS] = { false };
    int each = threads(s) / parts;
    unsigned code = 0;
    for (int k = 0; k < parts; k++) {
        psa_part *p = &w->part[k];
        p->lo = w->n_ev * (size_t)k / (size_t)parts;
        p->hi = w->n_ev * (size_t)(k + 1) / (size_t)parts;
        p->lane = k;
        p->threads = each > 0 ? each : 1;
        p->searches = p->refined = p->fell_back = 0;
        job[k] = (part_job){ p, w, s, 0 };
        if (k < parts - 1)
            started[k] = pthread_create(&thread[k], NULL, part_main, &job[k]) == 0;
    }
    part_main(&job[parts - 1]);
    for (int k = 0; k < parts - 1; k++) {
        if (started[k])
            pthread_join(thread[k], NULL);
        else /* no thread to be had: the same work, one part after the other */
            part_main(&job[k]);
    }
    psa_engine_settle(s->engine);
    for (int k = 0; k < parts; k++) {
        const psa_part *p = &w->part[k];
        code = code ? code : job[k].code;
        w->searches += p->searches;
        w->refined += p->refined;
        w->fell_back += p->fell_back;
    }
    return code;
}

unsigned psa_block_run(psa_block *w, const psa_setup *s, const void *in, unsigned size)
{
    unsigned code;
    double t = psa_now();
    w->searches = w->refined = w->fell_back = 0;
    if ((code = decode_all(w, s, in, size)) != 0)
        return code;
    w->phase_s[PSA_PHASE_DECODE] += psa_now() - t;
    int parts = psa_engine_lanes(s->engine);
    parts = parts > PSA_PARTS ? PSA_PARTS : parts;
    if (w->n_ev < (size_t)parts * PART_MIN_EVENTS)
        parts = 1;
    for (int k = 0; k < PSA_PARTS; k++)
        memset(w->part[k].phase_s, 0, sizeof w->part[k].phase_s);
    code = run_parts(w, s, parts);
    for (int k = 0; k < PSA_PARTS; k++)
        for (int ph = 0; ph < PSA_PHASES; ph++)
            w->phase_s[ph] += w->part[k].phase_s[ph];
    return code;
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
    for (int k = 0; k < PSA_PARTS; k++) {
        free(w->part[k].owner);
        free(w->part[k].todo);
        free(w->part[k].before);
        psa_batch_free(&w->part[k].batch);
    }
    free(w->frame);
    memset(w, 0, sizeof *w);
}
