/* pipeline.c: `narwhal run --pipeline`: the blocks and flushes with every actor on its own thread, rings between. */
#include "pipeline.h"
#include "emu.h"
#include "ring.h"

#include <stdlib.h>

typedef struct pipeline {
    emu_calls *s;
    emu_ring *ring; /* ring k carries actor k's output to actor k + 1 */
    size_t n_rings;
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
}

static int send_end(pipeline *p, size_t k)
{
    emu_slot *slot = emu_ring_acquire(&p->ring[k], &stats(p, k)->wait_output);
    if (!slot)
        return EMU_E_RUN;
    slot->used = 0;
    slot->frames = 0;
    slot->end = 1;
    emu_ring_publish(&p->ring[k]);
    return EMU_OK;
}

/* A slot that emu_calls_block left empty stays acquired: the next block
 * goes into it, and an empty block never travels (to the next filter it
 * would mean "flush"). */
static void publish_unless_empty(pipeline *p, size_t k, emu_slot *slot)
{
    if (slot->used == 0)
        return;
    slot->end = 0;
    emu_ring_publish(&p->ring[k]);
}

static int produce(pipeline *p)
{
    emu_calls *s = p->s;
    while (!emu_calls_producer_done(s)) {
        emu_slot *slot = emu_ring_acquire(&p->ring[0], &stats(p, 0)->wait_output);
        if (!slot)
            return EMU_E_RUN;
        if (emu_calls_block(s, 0, NULL, 0, 0, &slot->buf, &slot->used, &slot->frames) != EMU_OK)
            return EMU_E_RUN;
        if (slot->used == 0) {
            emu_calls_end(s, EMU_END_DATA);
            break;
        }
        s->res->blocks++;
        publish_unless_empty(p, 0, slot);
    }
    return send_end(p, 0);
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

static int filter(pipeline *p, size_t k)
{
    emu_ring *input = &p->ring[k - 1];
    for (;;) {
        emu_slot *in = emu_ring_peek(input, &stats(p, k)->wait_input);
        if (!in)
            return EMU_E_RUN;
        int end = in->end;
        int rc = end ? EMU_OK : filter_block(p, k, in);
        emu_ring_release(input);
        if (rc != EMU_OK)
            return rc;
        if (end)
            break;
    }
    if (filter_block(p, k, NULL) != EMU_OK)
        return EMU_E_RUN;
    return send_end(p, k);
}

static int consume(pipeline *p, size_t k)
{
    emu_ring *input = &p->ring[k - 1];
    for (;;) {
        emu_slot *in = emu_ring_peek(input, &stats(p, k)->wait_input);
        if (!in)
            return EMU_E_RUN;
        int end = in->end;
        int rc = end ? EMU_OK : emu_calls_consume(p->s, k, in->buf.data, in->used, in->frames);
        emu_ring_release(input);
        if (rc != EMU_OK || end)
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
    return rc;
}
