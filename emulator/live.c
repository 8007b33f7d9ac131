/* live.c: a run as other threads see it while it goes (counters, state, producers' progress, rings, spectra), for the progress line and the monitoring page. */
#include "live.h"
#include "calls.h"
#include "emu.h"
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* At most one process_spectra a second per actor: a GPU histogrammer copies
 * its counts back for it. */
#define SPECTRA_PERIOD 1.0

static const char *const state_names[] = {
    [EMU_STATE_LOADING] = "loading", [EMU_STATE_CONFIGURED] = "configured", [EMU_STATE_RUNNING] = "running",
    [EMU_STATE_STOPPING] = "stopping", [EMU_STATE_DONE] = "done",           [EMU_STATE_FAILED] = "failed",
};

const char *emu_state_name(enum emu_state s) { return state_names[s]; }

static unsigned long long now_ns(void) { return (unsigned long long)(emu_now() * 1e9); }

static void sample_free(emu_live_sample *s)
{
    free(s->actor);
    free(s->ring);
    memset(s, 0, sizeof *s);
}

int emu_live_init(emu_live *l, const emu_chain *c, FILE *log)
{
    memset(l, 0, sizeof *l);
    l->c = c;
    l->n = c->topology->n_actors;
    l->log = log;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->wake, NULL);
    size_t n = l->n ? l->n : 1;
    l->actor = calloc(n, sizeof *l->actor);
    l->spectra_at = calloc(n, sizeof *l->spectra_at);
    l->spectra_off = calloc(n, 1);
    l->prev.actor = calloc(n, sizeof *l->prev.actor);
    l->last.actor = calloc(n, sizeof *l->last.actor);
    if (!l->actor || !l->spectra_at || !l->spectra_off || !l->prev.actor || !l->last.actor)
        return EMU_E_RUN;
    l->prev.t = l->last.t = emu_now();
    return EMU_OK;
}

static void spectrum_free(emu_live_spectrum *s)
{
    free(s->name);
    free(s->title);
    free(s->x_label);
    free(s->counts);
}

void emu_live_free(emu_live *l)
{
    emu_live_stop_ticker(l);
    for (size_t i = 0; i < l->n_spectra; i++)
        spectrum_free(&l->spectrum[i]);
    free(l->spectrum);
    free(l->actor);
    free(l->spectra_at);
    free(l->spectra_off);
    sample_free(&l->prev);
    sample_free(&l->last);
    pthread_cond_destroy(&l->wake);
    pthread_mutex_destroy(&l->lock);
    memset(l, 0, sizeof *l);
}

void emu_live_set_state(emu_live *l, enum emu_state s)
{
    if (l)
        atomic_store(&l->state, (int)s);
}

void emu_live_blocks_begin(emu_live *l)
{
    unsigned long long zero = 0;
    if (l)
        atomic_compare_exchange_strong(&l->run_t0_ns, &zero, now_ns());
}

/* ---- the ticker ------------------------------------------------------------------------------ */

static void read_actor(const emu_live_actor *a, emu_live_counts *c, unsigned long long t_ns)
{
    c->blocks = atomic_load_explicit(&a->blocks, memory_order_relaxed);
    c->frames_in = atomic_load_explicit(&a->frames_in, memory_order_relaxed);
    c->frames_out = atomic_load_explicit(&a->frames_out, memory_order_relaxed);
    c->bytes_in = atomic_load_explicit(&a->bytes_in, memory_order_relaxed);
    c->bytes_out = atomic_load_explicit(&a->bytes_out, memory_order_relaxed);
    c->crystals = atomic_load_explicit(&a->crystals, memory_order_relaxed);
    c->events = atomic_load_explicit(&a->events, memory_order_relaxed);
    c->done = atomic_load_explicit(&a->done, memory_order_relaxed);
    c->total = atomic_load_explicit(&a->total, memory_order_relaxed);
    c->unit = atomic_load_explicit(&a->unit, memory_order_relaxed);
    /* A call in hand counts up to now, so that an actor busy in one long
     * block does not look idle. */
    unsigned long long since = atomic_load_explicit(&a->since_ns, memory_order_relaxed);
    c->busy_ns = atomic_load_explicit(&a->busy_ns, memory_order_relaxed) + (since && t_ns > since ? t_ns - since : 0);
}

/* The rings' occupancy now; the lock keeps them from being destroyed meanwhile. */
static int read_rings(emu_live *l, emu_live_sample *s)
{
    if (s->n_rings != l->n_rings) {
        emu_live_ring *grown = realloc(s->ring, (l->n_rings ? l->n_rings : 1) * sizeof *grown);
        if (!grown)
            return EMU_E_RUN;
        s->ring = grown;
    }
    s->n_rings = l->n_rings;
    const emu_topology *t = l->c->topology;
    emu_ring *rings = l->rings;
    for (size_t k = 0; k < t->n_actors && rings; k++)
        for (size_t i = 0; i < t->actors[k].n_sources; i++) {
            emu_ring *r = &rings[l->ring_of[k] + i];
            s->ring[l->ring_of[k] + i] = (emu_live_ring){.writer = t->actors[k].sources[i].from, .reader = k,
                                                          .input = i, .used = emu_ring_count(r), .depth = r->depth};
        }
    return EMU_OK;
}

/* Under the lock: last becomes prev, a new last is read. */
static void take_sample(emu_live *l)
{
    emu_live_sample keep = l->prev;
    l->prev = l->last;
    l->last = keep;
    emu_live_sample *s = &l->last;
    s->t = emu_now();
    unsigned long long t_ns = (unsigned long long)(s->t * 1e9), t0 = atomic_load(&l->run_t0_ns);
    s->run_t0 = t0 ? (double)t0 * 1e-9 : 0;
    s->state = (enum emu_state)atomic_load(&l->state);
    for (size_t k = 0; k < l->n; k++)
        read_actor(&l->actor[k], &s->actor[k], t_ns);
    if (read_rings(l, s) != EMU_OK)
        s->n_rings = 0;
}

static void *tick(void *arg)
{
    emu_live *l = arg;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double at = until.tv_sec + until.tv_nsec * 1e-9 + l->period;
        until.tv_sec = (time_t)at;
        until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
        while (!l->stop_ticker && pthread_cond_timedwait(&l->wake, &l->lock, &until) != ETIMEDOUT)
            ;
        take_sample(l);
        if (l->on_tick)
            l->on_tick(l->tick_ctx, l, &l->prev, &l->last);
        if (l->stop_ticker)
            break;
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int emu_live_start_ticker(emu_live *l, double period, emu_live_tick_fn *on_tick, void *ctx)
{
    l->period = period;
    l->on_tick = on_tick;
    l->tick_ctx = ctx;
    pthread_mutex_lock(&l->lock);
    take_sample(l);
    take_sample(l);
    pthread_mutex_unlock(&l->lock);
    if (pthread_create(&l->ticker, NULL, tick, l) != 0)
        return EMU_E_RUN;
    l->ticking = 1;
    return EMU_OK;
}

void emu_live_stop_ticker(emu_live *l)
{
    if (!l->ticking)
        return;
    pthread_mutex_lock(&l->lock);
    l->stop_ticker = 1;
    pthread_cond_signal(&l->wake);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->ticker, NULL);
    l->ticking = 0;
}

/* ---- the run loops' hooks ---------------------------------------------------------------------- */

static void add(atomic_ullong *a, unsigned long long v)
{
    /* One writer per actor: a load and a store, no contended read-modify-write. */
    atomic_store_explicit(a, atomic_load_explicit(a, memory_order_relaxed) + v, memory_order_relaxed);
}

void emu_live_call_begins(emu_live *l, size_t k)
{
    if (l)
        atomic_store_explicit(&l->actor[k].since_ns, now_ns(), memory_order_relaxed);
}

static void progress(emu_live *l, size_t k, void *instance)
{
    const emu_library *lib = &l->c->libraries[l->c->library_of[k]];
    if (!lib->progress)
        return;
    unsigned long long done = 0, total = 0;
    const char *unit = NULL;
    lib->progress(instance, &done, &total, &unit);
    atomic_store_explicit(&l->actor[k].done, done, memory_order_relaxed);
    atomic_store_explicit(&l->actor[k].total, total, memory_order_relaxed);
    atomic_store_explicit(&l->actor[k].unit, unit ? unit : "", memory_order_relaxed);
}

typedef struct put_ctx {
    emu_live *l;
    size_t k;
    double t;
    int failed;
} put_ctx;

static char *copy_text(const char *s) { return strdup(s ? s : ""); }

/* The lock is held (snapshot): the spectrum replaces its previous copy. */
static void put_spectrum(void *ctx, const narval_spectrum *in)
{
    put_ctx *p = ctx;
    emu_live *l = p->l;
    emu_live_spectrum *s = NULL;
    if (!in->name || in->bins == 0)
        return;
    for (size_t i = 0; i < l->n_spectra && !s; i++)
        if (l->spectrum[i].actor == p->k && strcmp(l->spectrum[i].name, in->name) == 0)
            s = &l->spectrum[i];
    if (!s && l->n_spectra == l->cap_spectra) {
        size_t cap = l->cap_spectra ? 2 * l->cap_spectra : 8;
        emu_live_spectrum *grown = realloc(l->spectrum, cap * sizeof *grown);
        if (!grown) {
            p->failed = 1;
            return;
        }
        l->spectrum = grown;
        l->cap_spectra = cap;
    }
    if (!s) {
        s = &l->spectrum[l->n_spectra++];
        memset(s, 0, sizeof *s);
        s->actor = p->k;
        s->name = copy_text(in->name);
    }
    unsigned long long *counts = s->bins == in->bins ? s->counts : realloc(s->counts, in->bins * sizeof *counts);
    char *title = copy_text(in->title), *x_label = copy_text(in->x_label);
    if (!s->name || !counts || !title || !x_label) {
        free(title);
        free(x_label);
        if (counts)
            s->counts = counts;
        p->failed = 1;
        return;
    }
    free(s->title);
    free(s->x_label);
    s->title = title;
    s->x_label = x_label;
    s->counts = counts;
    s->bins = in->bins;
    s->lo = in->lo;
    s->hi = in->hi;
    s->entries = 0;
    for (unsigned b = 0; b < in->bins; b++)
        s->entries += counts[b] = in->counts[b];
    s->underflow = in->underflow;
    s->overflow = in->overflow;
    s->version++;
    s->t = p->t;
}

/* Actor k's spectra, on the thread that calls it, between its blocks. */
static void snapshot(emu_live *l, size_t k, void *instance, double t)
{
    const emu_library *lib = &l->c->libraries[l->c->library_of[k]];
    unsigned code = 0;
    put_ctx ctx = {.l = l, .k = k, .t = t};
    l->spectra_at[k] = t;
    pthread_mutex_lock(&l->lock);
    lib->spectra(instance, put_spectrum, &ctx, &code);
    pthread_mutex_unlock(&l->lock);
    if (!code && !ctx.failed)
        return;
    l->spectra_off[k] = 1;
    if (l->log)
        fprintf(l->log, "narwhal: warning: '%s': %s; the monitor shows its spectra no more\n",
                l->c->topology->actors[k].name,
                code ? narval_strerror(code) : "out of memory for a copy of its spectra");
}

static int spectra_due(const emu_live *l, size_t k, double t)
{
    return l->spectra_on && l->c->libraries[l->c->library_of[k]].spectra && !l->spectra_off[k] &&
           t - l->spectra_at[k] >= SPECTRA_PERIOD;
}

void emu_live_call_ends(emu_live *l, size_t k, void *instance, unsigned long long ns, unsigned in_size,
                        unsigned long long in_frames, unsigned used, const emu_live_out *out)
{
    if (!l)
        return;
    emu_live_actor *a = &l->actor[k];
    add(&a->busy_ns, ns);
    atomic_store_explicit(&a->since_ns, 0, memory_order_relaxed);
    add(&a->blocks, 1);
    add(&a->frames_in, in_frames);
    add(&a->bytes_in, in_size);
    add(&a->frames_out, out->frames);
    add(&a->bytes_out, used);
    add(&a->crystals, out->crystals);
    add(&a->events, out->events);
    progress(l, k, instance);
    double t = emu_now();
    if (spectra_due(l, k, t))
        snapshot(l, k, instance, t);
}

void emu_live_counted(emu_live *l, size_t k, const emu_live_out *out)
{
    if (!l)
        return;
    emu_live_actor *a = &l->actor[k];
    add(&a->frames_out, out->frames);
    add(&a->crystals, out->crystals);
    add(&a->events, out->events);
}

void emu_live_set_rings(emu_live *l, void *rings, const size_t *ring_of, size_t n_rings)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->lock);
    l->rings = rings;
    l->ring_of = ring_of;
    l->n_rings = rings ? n_rings : 0;
    pthread_mutex_unlock(&l->lock);
}

void emu_live_final_spectra(emu_live *l, void *const *instances)
{
    if (!l || !l->spectra_on)
        return;
    for (size_t k = 0; k < l->n; k++)
        if (l->c->libraries[l->c->library_of[k]].spectra && !l->spectra_off[k] && instances[k])
            snapshot(l, k, instances[k], emu_now());
}
