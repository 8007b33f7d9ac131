/* pipeline.c: `narwhal run --pipeline`: the blocks, flushes and pauses with every actor on its own thread, rings between. */
#include "pipeline.h"
#include "emu.h"
#include "ring.h"

#include <stdlib.h>

/* drained counts the pause marks that reached the consumer: the producer
 * waits on it, under lock, before it pauses the actors. */
typedef struct pipeline {
    emu_calls *s;
    emu_ring *ring; /* ring k carries actor k's output to actor k + 1 */
    size_t n_rings;
    pthread_mutex_t lock;
    pthread_cond_t drain;
    unsigned long long drained;
    int aborted;
} pipeline;

typedef struct worker {
    pipeline *p;
    size_t k;
    pthread_t thread;
} worker;

static emu_actor_stats *stats(pipeline *p, size_t k) { return &p->s->res->actors[k]; }

static void abort_all(pipeline *p)
{
    for (size_t i = 0; i < p->n_rings; i++)
        emu_ring_abort(&p->ring[i]);
    pthread_mutex_lock(&p->lock);
    p->aborted = 1;
    pthread_cond_broadcast(&p->drain);
    pthread_mutex_unlock(&p->lock);
}

/* An end or pause mark from actor k to the next: no frames. */
static int send_mark(pipeline *p, size_t k, enum emu_mark mark)
{
    emu_slot *slot = emu_ring_acquire(&p->ring[k], &stats(p, k)->wait_output);
    if (!slot)
        return EMU_E_RUN;
    slot->used = 0;
    slot->frames = 0;
    slot->mark = mark;
    emu_ring_publish(&p->ring[k]);
    return EMU_OK;
}

/* The consumer took the pause mark: every block before it went through. */
static void report_drained(pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->drained++;
    pthread_cond_signal(&p->drain);
    pthread_mutex_unlock(&p->lock);
}

/* A pause between blocks of every actor: the producer sends a pause mark
 * down the chain, each filter passes it on once it has finished every
 * block before it, and when the consumer has it every thread is waiting
 * for input and every ring is empty.  The producer's thread then makes the
 * pause and resume calls of every actor, the others still waiting. */
static int drain_and_pause(pipeline *p, int wait)
{
    unsigned long long want;
    pthread_mutex_lock(&p->lock);
    want = p->drained + 1;
    pthread_mutex_unlock(&p->lock);
    if (send_mark(p, 0, EMU_MARK_PAUSE) != EMU_OK)
        return EMU_E_RUN;
    pthread_mutex_lock(&p->lock);
    while (p->drained < want && !p->aborted)
        pthread_cond_wait(&p->drain, &p->lock);
    int aborted = p->aborted;
    pthread_mutex_unlock(&p->lock);
    return aborted ? EMU_E_RUN : emu_calls_pause(p->s, wait);
}

/* A slot that emu_calls_block left empty stays acquired: the next block
 * goes into it, and an empty block never travels (to the next filter it
 * would mean "flush"). */
static void publish_unless_empty(pipeline *p, size_t k, emu_slot *slot)
{
    if (slot->used == 0)
        return;
    slot->mark = EMU_MARK_NONE;
    emu_ring_publish(&p->ring[k]);
}

static int produce(pipeline *p)
{
    emu_calls *s = p->s;
    while (!emu_calls_producer_done(s)) {
        int wait;
        emu_slot *slot = emu_ring_acquire(&p->ring[0], &stats(p, 0)->wait_output);
        if (!slot)
            return EMU_E_RUN;
        if (emu_calls_block(s, 0, NULL, 0, 0, &slot->buf, &slot->used, &slot->frames) != EMU_OK)
            return EMU_E_RUN;
        if (slot->used == 0) {
            emu_calls_end(s, EMU_END_DATA);
            break;
        }
        publish_unless_empty(p, 0, slot);
        if (emu_calls_pause_due(s, &wait) && drain_and_pause(p, wait) != EMU_OK)
            return EMU_E_RUN;
    }
    return send_mark(p, 0, EMU_MARK_END);
}

/* Filter k's call on one input block, or its flush (in NULL). */
static int filter_block(pipeline *p, size_t k, const emu_slot *in)
{
    emu_slot *out = emu_ring_acquire(&p->ring[k], &stats(p, k)->wait_output);
    if (!out)
        return EMU_E_RUN;
    int rc = in ? emu_calls_block(p->s, k, in->buf.data, in->used, in->frames, &out->buf, &out->used, &out->frames)
                : emu_calls_flush(p->s, k, &out->buf, &out->used, &out->frames);
    if (rc != EMU_OK)
        return rc;
    publish_unless_empty(p, k, out);
    return EMU_OK;
}

/* Filter k's blocks until the end mark, passing pause marks on; then its
 * flush (not with --strict) and the end mark. */
static int filter(pipeline *p, size_t k)
{
    emu_ring *input = &p->ring[k - 1];
    for (;;) {
        emu_slot *in = emu_ring_peek(input, &stats(p, k)->wait_input);
        if (!in)
            return EMU_E_RUN;
        enum emu_mark mark = in->mark;
        int rc = mark == EMU_MARK_NONE ? filter_block(p, k, in) : EMU_OK;
        emu_ring_release(input);
        if (rc == EMU_OK && mark == EMU_MARK_PAUSE)
            rc = send_mark(p, k, EMU_MARK_PAUSE);
        if (rc != EMU_OK)
            return rc;
        if (mark == EMU_MARK_END)
            break;
    }
    if (!p->s->o->strict && filter_block(p, k, NULL) != EMU_OK)
        return EMU_E_RUN;
    return send_mark(p, k, EMU_MARK_END);
}

static int consume(pipeline *p, size_t k)
{
    emu_ring *input = &p->ring[k - 1];
    for (;;) {
        emu_slot *in = emu_ring_peek(input, &stats(p, k)->wait_input);
        if (!in)
            return EMU_E_RUN;
        enum emu_mark mark = in->mark;
        int rc = mark == EMU_MARK_NONE ? emu_calls_consume(p->s, k, in->buf.data, in->used, in->frames) : EMU_OK;
        emu_ring_release(input);
        if (mark == EMU_MARK_PAUSE)
            report_drained(p);
        if (rc != EMU_OK || mark == EMU_MARK_END)
            return rc;
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    size_t last = p->n_rings;
    int rc = w->k == 0 ? produce(p) : w->k == last ? consume(p, w->k) : filter(p, w->k);
    if (rc != EMU_OK)
        abort_all(p);
    return NULL;
}

/* Starts one thread per actor and waits for them all; a thread that cannot
 * be started fails the run, and those already started are aborted. */
static void run_threads(pipeline *p, worker *w, size_t n)
{
    size_t started = 0;
    for (; started < n; started++) {
        w[started] = (worker){.p = p, .k = started};
        if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0) {
            emu_calls_fail(p->s, "cannot start the thread of '%s'", p->s->c->topology->actors[started].name);
            abort_all(p);
            break;
        }
    }
    for (size_t k = 0; k < started; k++)
        pthread_join(w[k].thread, NULL);
}

int emu_pipeline_run(emu_calls *s, unsigned depth)
{
    pipeline p = {.s = s, .n_rings = s->n - 1};
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.drain, NULL);
    worker *w = calloc(s->n, sizeof *w);
    p.ring = calloc(p.n_rings, sizeof *p.ring);
    int rc = EMU_OK;
    if (!w || !p.ring) {
        rc = emu_calls_fail(s, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < p.n_rings; i++)
        if (emu_ring_init(&p.ring[i], depth) != EMU_OK) {
            rc = emu_calls_fail(s, "out of memory for a ring of %u buffers", depth);
            goto fail;
        }
    run_threads(&p, w, s->n);
    rc = s->failed ? EMU_E_RUN : EMU_OK;
fail:
    for (size_t i = 0; p.ring && i < p.n_rings; i++)
        emu_ring_destroy(&p.ring[i]);
    free(p.ring);
    free(w);
    pthread_cond_destroy(&p.drain);
    pthread_mutex_destroy(&p.lock);
    return rc;
}
