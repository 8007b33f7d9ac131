/* psa_block.c: a block's data:crystal frames through the rounds of searches, and their data:psa frames. */
#include "psa_block.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "psa_backend.h"
#include "psa_pair.h"

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

void psa_block_lap(psa_block *w, psa_phase p, double *t)
{
    double t1 = psa_now();
    w->phase_s[p] += t1 - *t;
    *t = t1;
}

int psa_block_reserve(void **p, size_t *cap, size_t need, size_t elem)
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

static void release_copy(psa_block *w)
{
    if (w->copy_buf)
        w->copy_free(w->copy_buf);
    w->copy_buf = NULL;
    w->copy_cap = 0;
}

int psa_block_threads(const psa_setup *s)
{
    int n = omp_get_max_threads();
    if (s->engine->p.threads > 0)
        return s->engine->p.threads;
    if (!s->engine->block)
        return n;
    return n / 2 < 1 ? 1 : n / 2 > 8 ? 8 : n / 2;
}

/* A warning through the setup's callback, when it has one. */
static void psa_warn(const psa_setup *s, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    if (!s->warn)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->warn(s->log_ctx, msg);
}

/* The count chosen at initialise: the main thread and the worker read it while the worker may give the GPU block up. */
static int threads(const psa_setup *s)
{
    return s->threads > 0 ? s->threads : omp_get_max_threads();
}

/* The block's data:crystal frames, in order, in one walk over its keys
 * (7.6 kB apart in the replay chain's blocks: each walk reads a cache line
 * of every frame).  A key's place is known only once the key before it
 * has been read, so each would wait for memory in turn: the walk asks
 * ahead for the key after the next, where it lies if the next frame is as
 * long as this one or as the last data:crystal (traces of one size follow
 * one another). */
static psa_status list_frames(psa_block *w, const void *in, unsigned size, bool *bad)
{
    adf_iter it;
    adf_frame f;
    int rc;
    size_t crystal = 0; /* the last data:crystal frame's length */
    *bad = false;
    w->n_ev = w->n_sized = 0;
    adf_iter_init(&it, in, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        if (it.pos + f.key.length < size)
            __builtin_prefetch((const uint8_t *)in + it.pos + f.key.length);
        if (crystal != f.key.length && it.pos + crystal < size)
            __builtin_prefetch((const uint8_t *)in + it.pos + crystal);
        if (f.key.id != ADF_ID_NW_CRYSTAL)
            continue;
        crystal = f.key.length;
        if (w->n_ev + 1 >= w->cap_frame &&
            psa_block_reserve((void **)&w->frame, &w->cap_frame, 2 * w->n_ev + 64, sizeof *w->frame))
            return PSA_E_NOMEM;
        w->frame[w->n_ev++] = f;
        w->n_sized += psa_event_sized(&f) == PSA_ACCEPTED;
    }
    *bad = rc < 0;
    return psa_block_reserve((void **)&w->frame, &w->cap_frame, w->n_ev + 1, sizeof *w->frame) ? PSA_E_NOMEM : 0;
}

size_t psa_block_frame_end(const psa_block *w, size_t k)
{
    return w->frame[k].offset + w->frame[k].key.length;
}

/* Frame f of a block at `from` as it lies in the block's copy at `to`. */
static adf_frame rebase(const adf_frame *f, const uint8_t *from, const uint8_t *to)
{
    adf_frame g = *f;
    g.data = to + (f->data - from);
    g.payload = to + (f->payload - from);
    return g;
}

/* Decodes events [from, to) of the listed block; with copy, their bytes
 * (and the other frames before them, the last one's to the block's end) are
 * copied there on the way and the events read the copy. */
static void decode_range(psa_block *w, const psa_setup *s, size_t from, size_t to)
{
    size_t n = w->n_ev;
    const uint8_t *src = w->in;
    uint8_t *copy = w->copy;
    if (copy && n == 0)
        memcpy(copy, src, w->size);
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long k = (long)from; k < (long)to; k++) {
        psa_event *ev = &w->ev[k];
        if (copy) {
            size_t lo = k ? psa_block_frame_end(w, (size_t)k - 1) : 0, hi = (size_t)k + 1 < n ? psa_block_frame_end(w, (size_t)k) : w->size;
            memcpy(copy + lo, src + lo, hi - lo);
            w->frame[k] = rebase(&w->frame[k], src, copy);
        }
        psa_event_decode(&w->frame[k], ev, s->timing);
        ev->offset = w->frame[k].offset;
        ev->resid = NULL; /* place_resid, for the events searched on the host */
    }
}

/* A batch of round r's searches of pass `pass` (psa_block_searched: the
 * rounds, or a neighbour pass) for the events marked (every one when marked
 * is NULL). */
static psa_status gather(psa_block *w, const psa_setup *s, int r, int pass, const uint8_t *marked)
{
    double t = psa_now();
    const int subtracted = psa_block_subtracted(s, r, pass);
    psa_batch_clear(&w->batch);
    if (psa_block_reserve((void **)&w->owner, &w->cap_owner, w->n_ev + 1, sizeof *w->owner))
        return PSA_E_NOMEM;
    for (size_t k = 0; k < w->n_ev; k++) {
        const psa_event *ev = &w->ev[k];
        if (ev->reject || (marked && !marked[k]) || !psa_block_searched(ev, r, s->layout, pass))
            continue;
        w->owner[w->batch.n] = (uint32_t)k;
        if (psa_event_query(ev, r, s->layout, subtracted, &w->batch))
            return PSA_E_NOMEM;
        if (pass) /* where a local search starts (the GPU block's fill_back sets the same) */
            w->batch.q[w->batch.n - 1].column = s->layout->column[ev->point[r]];
    }
    w->batch.local = psa_block_local(s, r, pass);
    long n = (long)w->batch.n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long i = 0; i < n; i++) {
        float *m = w->batch.meas + w->batch.q[i].meas;
        if (pass)
            psa_event_fill_back(&w->ev[w->owner[i]], r, s->basis, s->layout, m);
        else
            psa_event_fill(&w->ev[w->owner[i]], r, s->layout, m);
    }
    psa_block_lap(w, PSA_PHASE_GATHER, &t);
    return 0;
}

static psa_status run(psa_block *w, const psa_setup *s)
{
    bool fell_back;
    char msg[512];
    double t = psa_now();
    psa_status code = psa_engine_run(s->engine, &w->batch, &fell_back, msg, sizeof msg);
    psa_block_lap(w, PSA_PHASE_SEARCH, &t);
    if (fell_back) {
        psa_warn(s, "%s", msg);
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
        pr_answer(q->use, q->column, g->centre, g->point, &ev->hit_status[r], &ev->point[r]);
        ev->fom[r] = q->fom;
    }
}

/* Round 0's start times (PSA_REFINE_PASSES says how): each pass is
 * kernels/psa_refine.h's pr_pass, event by event, as the GPU block runs it;
 * the events it moved are searched again. */
static psa_status refine(psa_block *w, const psa_setup *s)
{
    uint8_t *moved = calloc(w->n_ev + 1, sizeof *moved);
    uint32_t *before = calloc(w->n_ev + 1, sizeof *before);
    const pr_basis b = psa_event_basis(s->basis, s->layout, s->timing);
    psa_status code = PSA_OK;
    if (!moved || !before) {
        free(moved);
        free(before);
        return PSA_E_NOMEM;
    }
    for (int pass = 0; pass < PSA_REFINE_PASSES && !code; pass++) {
        long n_moved = 0, n = (long)w->n_ev;
        double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : n_moved) num_threads(threads(s))
        for (long k = 0; k < n; k++) {
            psa_event *ev = &w->ev[k];
            if (ev->reject || ev->n_net == 0 || (s->neighbour_passes && psa_block_neighbours(ev, s->layout)))
                continue;
            const pr_event v = psa_event_view(ev, s->layout);
            pr_pass(&b, &v, pass, &ev->shift, &before[k], &moved[k], ev->resid);
            n_moved += moved[k];
        }
        psa_block_lap(w, PSA_PHASE_REFINE, &t);
        if (!n_moved)
            break;
        if ((code = gather(w, s, 0, 0, moved)) || (code = run(w, s)))
            break;
        answer(w, s, 0);
        w->refined += n_moved;
    }
    free(moved);
    free(before);
    return code;
}

/* Round r of a neighbour pass: the batch's answers become their events'
 * hits r; where a hit moved, its event's traces are updated (pr_replace)
 * and the event marked in moved.  was: scratch, a point per search. */
static psa_status neighbour_round(psa_block *w, const psa_setup *s, int r, uint32_t *was, uint8_t *moved)
{
    long n = (long)w->batch.n;
    for (long i = 0; i < n; i++)
        was[i] = w->ev[w->owner[i]].point[r];
    psa_status code = run(w, s);
    if (code)
        return code;
    answer(w, s, r);
    w->neighboured += (uint64_t)n;
    double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long i = 0; i < n; i++) {
        psa_event *ev = &w->ev[w->owner[i]];
        if (ev->point[r] != was[i]) {
            psa_event_replace(ev, r, was[i], s->basis, s->layout);
            moved[w->owner[i]] = 1;
        }
    }
    psa_block_lap(w, PSA_PHASE_SUBTRACT, &t);
    return PSA_OK;
}

/* A neighbour pass's start times: kernels/psa_refine.h's pr_joint_pass for
 * each active event (as the GPU block runs it); moved marks those it moved. */
static void joint_starts(psa_block *w, const psa_setup *s, int pass, const uint8_t *active, uint8_t *moved)
{
    const pr_basis b = psa_event_basis(s->basis, s->layout, s->timing);
    long n = (long)w->n_ev;
    double t = psa_now();
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads(s))
    for (long k = 0; k < n; k++) {
        psa_event *ev = &w->ev[k];
        if (!active[k])
            continue;
        const pr_event v = psa_event_view(ev, s->layout);
        pr_joint_pass(&b, &v, pass, &ev->shift, &moved[k], ev->resid);
    }
    psa_block_lap(w, PSA_PHASE_REFINE, &t);
}

/* The neighbour passes' first step: each active event's first pair of
 * touching hits searched jointly (psa_pair.c). */
static psa_status pairs(psa_block *w, const psa_setup *s, const uint8_t *active)
{
    long n = (long)w->n_ev;
    int failed = 0;
    double t = psa_now();
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed) num_threads(threads(s))
    for (long k = 0; k < n; k++) {
        int r, q;
        if (active[k] && psa_pair_of(&w->ev[k], s->layout, &r, &q))
            failed |= psa_pair_search(&w->ev[k], r, q, s->basis, s->layout, s->engine->pw) != 0;
    }
    psa_block_lap(w, PSA_PHASE_SEARCH, &t);
    return failed ? PSA_E_NOMEM : PSA_OK;
}

/* The neighbour passes (psa_block_search), after the rounds: pass after
 * pass, the events one of whose hits or whose start moved in the pass
 * before; first those that have hits that touch. */
static psa_status neighbour_passes(psa_block *w, const psa_setup *s, int rounds)
{
    size_t n = w->n_ev;
    uint8_t *active = calloc(n + 1, 1), *moved = calloc(n + 1, 1);
    uint32_t *was = malloc((n + 1) * sizeof *was);
    psa_status code = PSA_OK;
    if (!active || !moved || !was)
        code = PSA_E_NOMEM;
    for (size_t k = 0; !code && k < n; k++)
        active[k] = psa_block_neighbours(&w->ev[k], s->layout);
    if (!code)
        code = pairs(w, s, active);
    for (int pass = 1; !code && pass <= s->neighbour_passes; pass++) {
        if (s->timing->shift_range > 0)
            joint_starts(w, s, pass, active, moved);
        for (int r = 0; r < rounds && !code; r++)
            if (!(code = gather(w, s, r, pass, active)) && w->batch.n)
                code = neighbour_round(w, s, r, was, moved);
        size_t going = 0;
        for (size_t k = 0; k < n; k++) {
            going += active[k] = moved[k];
            moved[k] = 0;
        }
        if (!going)
            break;
    }
    free(active);
    free(moved);
    free(was);
    return code;
}

/* ---- GPUWork block: the whole block on the GPU, through the engine's block backend */

bool psa_block_gpu_open(const psa_setup *s, char *msg, size_t len)
{
    const psa_block_backend *gpu = PSA_BLOCK_GPU;
    if (!s->engine->gpu || !gpu) {
        snprintf(msg, len, "the searches do not run on the GPU");
        return false;
    }
    if (!gpu->open(s, msg, len))
        return false;
    s->engine->block_be = gpu;
    return true;
}

bool psa_block_gpu_fork(psa_block *w, const psa_setup *s, char *msg, size_t len)
{
    if (!s->engine->block) {
        snprintf(msg, len, "the blocks do not run on the GPU");
        return false;
    }
    return (w->gpu = s->engine->block_be->fork(s, msg, len)) != NULL;
}

bool psa_block_gpu_times(const psa_block *const *w, size_t n, const psa_setup *s, char *text, size_t len)
{
    return s->engine->block && s->engine->block_be->times(w, n, s, text, len);
}

/* The block on the GPU when it is there: *done says whether it was done
 * (not done: no GPU block, or it failed and was given up: the rounds below
 * do the block).  PSA_OK, or PSA_E_NOMEM. */
static psa_status try_device(psa_block *w, const psa_setup *s, bool *done)
{
    char msg[512];
    *done = false;
    if (!s->engine->block || !w->on_gpu)
        return PSA_OK;
    int rc = s->engine->block_be->run(w, s, msg, sizeof msg);
    *done = rc == 0;
    if (rc == 0)
        return PSA_OK;
    if (rc < 0)
        return PSA_E_NOMEM;
    psa_warn(s, "the GPU block failed (%s); this block and the next ones run round by round", msg);
    if (!w->gpu) /* a part's: the engine's block is closed once every part is done (psa_parts_run) */
        s->engine->block_be->close(s->engine);
    w->fell_back++;
    w->searches = w->refined = w->neighboured = 0;
    return PSA_OK;
}

/* Room for a copy of a block of `size` bytes: pinned where the GPU block can have it. */
static uint8_t *copy_room(psa_block *w, const psa_setup *s, unsigned size)
{
    if (w->copy_buf && size <= w->copy_cap)
        return w->copy_buf;
    release_copy(w);
    size_t want = (size_t)size + size / 4;
    const psa_block_backend *gpu = s->engine->block ? s->engine->block_be : NULL;
    if (gpu && (w->copy_buf = gpu->host_alloc(want)))
        w->copy_free = gpu->host_free;
    else if ((w->copy_buf = malloc(want)))
        w->copy_free = free;
    else
        return NULL;
    w->copy_cap = want;
    return w->copy_buf;
}

/* Whether the GPU block may upload the block from where it lies: the host
 * gave it in pinned memory (narwhal does with a usable GPU; a NARVAL host's
 * buffers are not), so the copy into the block's own pinned buffer, the
 * host's largest cost before the device can start, is not needed. */
static bool pinned_by_host(const psa_setup *s, const void *in, unsigned size)
{
    return s->engine->block && s->engine->block_be->pinned(in, size);
}

psa_status psa_block_begin(psa_block *w, const psa_setup *s, const void *in, unsigned size, bool *bad, bool copy)
{
    double t = psa_now();
    w->searches = w->refined = w->neighboured = w->fell_back = 0;
    w->in = in;
    w->copy = NULL;
    w->size = size;
    w->decoded = 0;
    w->gpu_rc = 0;
    w->sent = false;
    w->on_gpu = s->engine->block != NULL;
    double sending = 0;
    if (copy && pinned_by_host(s, in, size)) {
        double t0 = psa_now();
        copy = false;
        w->in_place++;
        /* its bytes need no decoding: they go while the host lists and decodes the frames */
        s->engine->block_be->send(w, s);
        w->sent = w->gpu_rc == 0;
        sending = psa_now() - t0;
        w->send_s += sending;
    }
    if (copy && !(w->copy = copy_room(w, s, size)))
        return PSA_E_NOMEM;
    psa_status code = list_frames(w, in, size, bad);
    w->list_s += psa_now() - t - sending;
    if (code || psa_block_reserve((void **)&w->ev, &w->cap_ev, w->n_ev + 1, sizeof *w->ev))
        return PSA_E_NOMEM;
    if (w->on_gpu && s->engine->block_be->begin(w, s))
        return PSA_E_NOMEM;
    psa_block_lap(w, PSA_PHASE_DECODE, &t);
    return 0;
}

int psa_block_pieces(const psa_block *w, int configured)
{
    return configured > 0 ? configured : w->on_gpu && !w->sent ? 2 : 1;
}

void psa_block_decode_part(psa_block *w, const psa_setup *s, size_t to)
{
    double t = psa_now();
    to = to < w->n_ev ? to : w->n_ev;
    decode_range(w, s, w->decoded, to);
    double sent = psa_now();
    if (w->on_gpu && !w->gpu_rc)
        w->gpu_rc = s->engine->block_be->part(w, s, w->decoded, to);
    w->send_s += psa_now() - sent;
    w->decoded = to;
    psa_block_lap(w, PSA_PHASE_DECODE, &t);
}

psa_status psa_block_decode(psa_block *w, const psa_setup *s, const void *in, unsigned size, bool *bad, bool copy)
{
    psa_status code = psa_block_begin(w, s, in, size, bad, copy);
    if (!code)
        psa_block_decode_part(w, s, w->n_ev);
    return code;
}

/* The aligned traces (37 x window floats) of the events the host searches:
 * only those accepted with a net-charge segment, so that the memory follows
 * the frames that passed their checks (each at least 37 traces of one
 * sample), never a count of keys (a block of bare data:crystal keys asked
 * for 37 x window floats per 20 bytes). */
static psa_status place_resid(psa_block *w, const psa_setup *s)
{
    size_t window = (size_t)DET_CHANNELS * s->layout->window, m = 0;
    for (size_t k = 0; k < w->n_ev; k++)
        m += !w->ev[k].reject && w->ev[k].n_net > 0;
    if (psa_block_reserve((void **)&w->resid, &w->cap_resid, m * window + 1, sizeof *w->resid))
        return PSA_E_NOMEM;
    m = 0;
    for (size_t k = 0; k < w->n_ev; k++)
        if (!w->ev[k].reject && w->ev[k].n_net > 0)
            w->ev[k].resid = w->resid + window * m++;
    return PSA_OK;
}

psa_status psa_block_search(psa_block *w, const psa_setup *s)
{
    psa_status code;
    bool done;
    int rounds = 0;
    if ((code = try_device(w, s, &done)))
        return code;
    if (done)
        return PSA_OK;
    if ((code = place_resid(w, s)))
        return code;
    double t = psa_now();
    long n = (long)w->n_ev;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : rounds) num_threads(threads(s))
    for (long k = 0; k < n; k++) {
        psa_event *ev = &w->ev[k];
        if (ev->reject || ev->n_net == 0)
            continue;
        psa_event_align(ev, s->basis, s->layout, s->timing);
        rounds = ev->n_net > rounds ? ev->n_net : rounds;
    }
    psa_block_lap(w, PSA_PHASE_ALIGN, &t);
    for (int r = 0; r < rounds; r++) {
        if ((code = gather(w, s, r, 0, NULL)) || (code = run(w, s)))
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
        psa_block_lap(w, PSA_PHASE_SUBTRACT, &t);
    }
    return s->neighbour_passes && rounds > 1 ? neighbour_passes(w, s, rounds) : PSA_OK;
}

void psa_block_write(const psa_event *ev, const psa_setup *s, adf_writer *out)
{
    adf_psa p;
    double t0 = ev->t0 * 10.0, t1 = psa_event_start(ev, s->timing) * 10.0;
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

static size_t psa_frame_size(const psa_event *ev)
{
    return ev->reject ? 0 : ADF_KEY_SIZE + adf_psa_payload_size((unsigned)ev->n_net);
}

/* Where each frame's output starts (w->out_at) and the whole output's size. */
static size_t place_output(psa_block *w, unsigned size)
{
    size_t n = w->n_ev, total = 0;
    for (size_t k = 0; k < n; k++) {
        w->out_at[k] = total;
        total += w->frame[k].offset - (k ? psa_block_frame_end(w, k - 1) : 0) + psa_frame_size(&w->ev[k]);
    }
    return total + size - (n ? psa_block_frame_end(w, n - 1) : 0);
}

size_t psa_block_output_size(const psa_block *w, unsigned size)
{
    size_t n = w->n_ev, total = size;
    for (size_t k = 0; k < n; k++)
        total = total - w->frame[k].key.length + psa_frame_size(&w->ev[k]);
    return total;
}

psa_status psa_block_emit(psa_block *w, const psa_setup *s, const void *in, unsigned size, void *out,
                        unsigned out_size, size_t *used)
{
    const uint8_t *src = in;
    size_t n = w->n_ev;
    if (psa_block_reserve((void **)&w->out_at, &w->cap_out_at, n + 1, sizeof *w->out_at))
        return PSA_E_NOMEM;
    size_t total = place_output(w, size), tail = n ? psa_block_frame_end(w, n - 1) : 0;
    *used = total;
    if (total > out_size)
        return PSA_E_OUTPUT_SIZE;
    uint8_t *dst = out;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : failed) num_threads(threads(s))
    for (long k = 0; k < (long)n; k++) {
        /* the other frames before this one, then its data:psa */
        size_t from = k ? psa_block_frame_end(w, k - 1) : 0, gap = w->frame[k].offset - from;
        memcpy(dst + w->out_at[k], src + from, gap);
        if (!w->ev[k].reject) {
            adf_writer wr;
            adf_writer_init(&wr, dst + w->out_at[k] + gap, psa_frame_size(&w->ev[k]));
            psa_block_write(&w->ev[k], s, &wr);
            failed |= wr.used != psa_frame_size(&w->ev[k]);
        }
    }
    memcpy(dst + total - (size - tail), src + tail, size - tail);
    return failed ? PSA_E_INTERNAL : PSA_OK;
}

void psa_block_free(psa_block *w)
{
    const psa_block_backend *gpu = PSA_BLOCK_GPU;
    if (w->gpu && gpu)
        gpu->free_fork(w->gpu);
    release_copy(w);
    free(w->out_at);
    free(w->gidx);
    free(w->gq);
    free(w->gowner);
    free(w->ev);
    free(w->resid);
    free(w->owner);
    free(w->frame);
    psa_batch_free(&w->batch);
    memset(w, 0, sizeof *w);
}
