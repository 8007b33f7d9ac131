/* pipeline.c: `narwhal run --pipeline`: a topology's blocks, flushes and pauses with every actor on its own thread, a ring per input. */
#include "pipeline.h"
#include "emu.h"
#include "flow.h"
#include "mpi.h"
#include "live.h"
#include "ring.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_PAUSE UINT64_MAX
#define LAST_ORIGIN UINT32_MAX

/* The state the producers and consumers share, under lock: the pause in
 * preparation (the round after which every producer stops), who reached
 * it, and how many consumers have drained or finished. */
typedef struct pipeline {
    emu_calls *s;
    emu_flow *f;
    emu_ring *ring;      /* ring ring_of[k] + i carries input i of actor k */
    size_t *ring_of;
    size_t n_rings;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned long long pause_round; /* NO_PAUSE: none in preparation */
    unsigned long long max_started; /* the latest round a producer began */
    int pause_wait;                 /* the pause came from SIGTSTP: wait for SIGCONT */
    size_t live_producers, arrived; /* producers still producing; of them at the pause */
    size_t consumers, drained, finished;
    unsigned long long generation; /* pauses done */
    int pausing;                   /* a producer's thread is making the pause calls */
    int aborted;
} pipeline;

typedef struct worker {
    pipeline *p;
    size_t k;
    pthread_t thread;
    emu_buffer out; /* what the actor emits, copied into its readers' rings */
} worker;

static emu_actor_stats *stats(pipeline *p, size_t k) { return &p->s->res->actors[k]; }

static enum emu_role role(const pipeline *p, size_t k) { return p->s->c->topology->actors[k].role; }

static size_t n_inputs(const pipeline *p, size_t k) { return p->s->c->topology->actors[k].n_sources; }

static emu_ring *input_ring(pipeline *p, size_t k, size_t i) { return &p->ring[p->ring_of[k] + i]; }

static void abort_all(pipeline *p)
{
    for (size_t i = 0; i < p->n_rings; i++)
        emu_ring_abort(&p->ring[i]);
    pthread_mutex_lock(&p->lock);
    p->aborted = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static int key_cmp(const emu_key *a, const emu_key *b)
{
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    if (a->origin != b->origin)
        return a->origin < b->origin ? -1 : 1;
    for (unsigned i = 0; i < a->depth && i < b->depth; i++)
        if (a->path[i] != b->path[i])
            return a->path[i] < b->path[i] ? -1 : 1;
    return a->depth < b->depth ? -1 : a->depth > b->depth;
}

static int extend(pipeline *p, emu_key *key, size_t step)
{
    if (key->depth == EMU_KEY_PATH)
        return emu_calls_fail(p->s, "the topology splits more than %d times along one path: too deep for --pipeline",
                              EMU_KEY_PATH);
    key->path[key->depth++] = (unsigned short)step;
    return EMU_OK;
}

/* One message into input i of actor r: the block, or a mark.  When `own`
 * is given the block is the whole of that buffer and this is its last
 * delivery: the slot takes the buffer and gives the writer its own (empty)
 * one back, which calls.c's fit() sizes before the writer's next call, so
 * a block crosses a link without being copied (7.6 GB a second at the
 * replay chain's rate: a copy on the writer's thread cost it a third of
 * its time).  Otherwise the block is copied. */
static int put(pipeline *p, size_t w, size_t r, size_t i, const emu_key *key, enum emu_mark mark,
               const uint8_t *data, unsigned used, unsigned long long frames, emu_buffer *own)
{
    emu_ring *ring = input_ring(p, r, i);
    emu_slot *slot = emu_ring_acquire(ring, &stats(p, w)->wait_output);
    if (!slot)
        return EMU_E_RUN;
    if (own && used) {
        emu_buffer mine = *own;
        *own = slot->buf;
        slot->buf = mine;
    } else if (used) {
        if (emu_buffer_fit(&slot->buf, used))
            return emu_calls_fail(p->s, "out of memory for a %u-byte block to '%s'", used,
                                  p->s->c->topology->actors[r].name);
        memcpy(slot->buf.data, data, used);
    }
    slot->used = used;
    slot->frames = frames;
    slot->mark = mark;
    slot->key = *key;
    emu_ring_publish(ring);
    return EMU_OK;
}

/* first-free: from the instance whose turn it is, the first with nothing
 * waiting in its ring, else the first with room, else (all full) the one
 * whose turn it is, waited for; the turn passes to the next one. */
static size_t first_free(pipeline *p, emu_outlet *o)
{
    size_t chosen = o->turn;
    unsigned best = UINT32_MAX;
    for (size_t j = 0; j < o->n; j++) {
        size_t at = (o->turn + j) % o->n;
        emu_ring *ring = input_ring(p, o->reader[at], o->input[at]);
        unsigned count = emu_ring_count(ring);
        if (count < best && count < ring->depth) {
            best = count;
            chosen = at;
        }
        if (count == 0)
            break;
    }
    o->turn = (chosen + 1) % o->n;
    return chosen;
}

/* A message to a group of instances.  A block goes to one, the others get
 * its meta:eof alone when it has one, else a skip; a mark goes to all.
 * Each instance's key records its place in the delivery, as sequentially. */
static int put_shared(pipeline *p, size_t w, emu_outlet *o, const emu_key *key, enum emu_mark mark,
                      const uint8_t *data, unsigned used, unsigned long long frames, emu_buffer *own)
{
    unsigned offset = 0, length = 0;
    size_t at = 0;
    int eof = 0;
    if (mark == EMU_MARK_NONE) {
        at = o->share == EMU_SHARE_FIRST_FREE ? first_free(p, o) : emu_flow_next_turn(o);
        eof = emu_flow_find_eof(data, used, &offset, &length);
    }
    for (size_t j = 0; j < o->n; j++) {
        size_t to = (at + j) % o->n;
        emu_key k = *key;
        if (extend(p, &k, j) != EMU_OK)
            return EMU_E_RUN;
        int rc;
        if (mark != EMU_MARK_NONE)
            rc = put(p, w, o->reader[to], o->input[to], &k, mark, NULL, 0, 0, NULL);
        else if (j == 0) /* the others may need its meta:eof: the buffer is given away only without one */
            rc = put(p, w, o->reader[to], o->input[to], &k, mark, data, used, frames, eof ? NULL : own);
        else if (eof)
            rc = put(p, w, o->reader[to], o->input[to], &k, mark, data + offset, length, 1, NULL);
        else
            rc = put(p, w, o->reader[to], o->input[to], &k, EMU_MARK_SKIP, NULL, 0, 0, NULL);
        if (rc != EMU_OK)
            return rc;
    }
    return EMU_OK;
}

/* Writer w's block or mark to every outlet, in order.  `own`: the buffer
 * holding the block (data is its start), given to the last outlet. */
static int send(pipeline *p, size_t w, const emu_key *key, enum emu_mark mark, const uint8_t *data, unsigned used,
                unsigned long long frames, emu_buffer *own)
{
    emu_flow_actor *a = &p->f->actor[w];
    for (size_t o = 0; o < a->n_outlets; o++) {
        emu_outlet *out = &a->outlets[o];
        emu_key k = *key;
        if (a->n_outlets > 1 && extend(p, &k, o) != EMU_OK)
            return EMU_E_RUN;
        emu_buffer *give = o + 1 == a->n_outlets ? own : NULL;
        int rc = out->share == EMU_SHARE_NONE
                     ? put(p, w, out->reader[0], out->input[0], &k, mark, data, used, frames, give)
                     : put_shared(p, w, out, &k, mark, data, used, frames, give);
        if (rc != EMU_OK)
            return rc;
    }
    return EMU_OK;
}

static int send_mark(pipeline *p, size_t w, enum emu_mark mark, unsigned long long round, unsigned origin)
{
    emu_key key = {.round = round, .origin = origin};
    return send(p, w, &key, mark, NULL, 0, 0, NULL);
}

/* The pause, once every producer still producing reached it and every
 * consumer drained or finished: the first thread to see it makes the
 * calls, the others wait for it. */
static int pause_here(pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    unsigned long long generation = p->generation;
    p->arrived++;
    pthread_cond_broadcast(&p->changed);
    for (;;) {
        int ready = p->arrived == p->live_producers && p->drained + p->finished == p->consumers;
        if (p->aborted || p->generation != generation || (ready && !p->pausing))
            break;
        pthread_cond_wait(&p->changed, &p->lock);
    }
    if (p->aborted || p->generation != generation) {
        int aborted = p->aborted;
        pthread_mutex_unlock(&p->lock);
        return aborted ? EMU_E_RUN : EMU_OK;
    }
    p->pausing = 1;
    int wait = p->pause_wait;
    pthread_mutex_unlock(&p->lock);
    int rc = emu_calls_pause(p->s, wait);
    pthread_mutex_lock(&p->lock);
    p->pausing = 0;
    p->pause_round = NO_PAUSE;
    p->pause_wait = 0;
    p->arrived = p->drained = 0;
    p->generation++;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

/* After producer k's round: whether it pauses now.  A pause falls after
 * one round for every producer: when one is called for, after the latest
 * round any producer began. */
static int pause_after(pipeline *p, unsigned long long round)
{
    pthread_mutex_lock(&p->lock);
    int wait;
    if (p->pause_round == NO_PAUSE && emu_calls_pause_due(p->s, round, &wait)) {
        p->pause_round = p->max_started > round ? p->max_started : round;
        p->pause_wait = wait;
    }
    int now = p->pause_round == round;
    pthread_mutex_unlock(&p->lock);
    return now;
}

static void begin_round(pipeline *p, unsigned long long round)
{
    pthread_mutex_lock(&p->lock);
    if (round > p->max_started)
        p->max_started = round;
    pthread_mutex_unlock(&p->lock);
}

static void producer_ended(pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->live_producers--;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

/* Producer k's blocks, round after round, keyed by round and producer, so
 * that every reader takes them in the sequential order; then its end. */
static int produce(pipeline *p, worker *w)
{
    emu_calls *s = p->s;
    size_t k = w->k;
    unsigned long long made = 0;
    int rc = EMU_OK;
    for (unsigned long long round = 1; !emu_calls_producer_done(s, made); round++) {
        unsigned used;
        unsigned long long frames;
        begin_round(p, round);
        if ((rc = emu_calls_block(s, k, NULL, 0, 0, &w->out, &used, &frames)) != EMU_OK)
            break;
        if (used == 0)
            break;
        made++;
        emu_key key = {.round = round, .origin = (unsigned)k};
        if ((rc = send(p, k, &key, EMU_MARK_NONE, w->out.data, used, frames, &w->out)) != EMU_OK)
            break;
        if (pause_after(p, round) &&
            ((rc = send_mark(p, k, EMU_MARK_PAUSE, round, LAST_ORIGIN)) != EMU_OK || (rc = pause_here(p)) != EMU_OK))
            break;
    }
    producer_ended(p);
    return rc == EMU_OK ? send_mark(p, k, EMU_MARK_END, UINT64_MAX, LAST_ORIGIN) : rc;
}

/* The input whose head comes first in the sequential order; NULL once
 * aborted.  Ended inputs are not looked at. */
static int next_input(pipeline *p, size_t k, const char *ended, emu_slot **head, size_t *at)
{
    emu_slot *best = NULL;
    for (size_t i = 0; i < n_inputs(p, k); i++) {
        if (ended[i])
            continue;
        emu_slot *slot = emu_ring_peek(input_ring(p, k, i), &stats(p, k)->wait_input);
        if (!slot)
            return EMU_E_RUN;
        if (!best || key_cmp(&slot->key, &best->key) < 0) {
            best = slot;
            *at = i;
        }
    }
    *head = best;
    return EMU_OK;
}

/* A block for actor k: handed to it (less the meta:eofs the end rule
 * takes out); a filter's output, or a skip when it emitted nothing, goes on
 * under the block's key. */
static int handle_block(pipeline *p, worker *w, size_t i, const emu_slot *in)
{
    size_t k = w->k;
    const uint8_t *data = in->buf.data;
    unsigned size = in->used, used = 0;
    unsigned long long frames = in->frames, out_frames = 0;
    if (emu_flow_take(p->f, k, i, &data, &size, &frames) != EMU_OK)
        return emu_calls_fail(p->s, "out of memory");
    uint8_t *input = (uint8_t *)(uintptr_t)data;
    if (role(p, k) == EMU_CONSUMER)
        return size ? emu_calls_consume(p->s, k, input, size, frames) : EMU_OK;
    if (size && emu_calls_block(p->s, k, input, size, frames, &w->out, &used, &out_frames) != EMU_OK)
        return EMU_E_RUN;
    return used ? send(p, k, &in->key, EMU_MARK_NONE, w->out.data, used, out_frames, &w->out)
                : send(p, k, &in->key, EMU_MARK_SKIP, NULL, 0, 0, NULL);
}

/* The pause comes first: every input that reaches it has it at its head
 * (next_input looked at each), the others have ended or are about to.  It
 * is taken from each; a filter passes it on once, a consumer reports that
 * it drained. */
static int handle_pause(pipeline *p, size_t k, const char *ended, const emu_key *key)
{
    for (size_t i = 0; i < n_inputs(p, k); i++) {
        if (ended[i])
            continue;
        emu_slot *head = emu_ring_peek(input_ring(p, k, i), &stats(p, k)->wait_input);
        if (!head)
            return EMU_E_RUN;
        if (head->mark == EMU_MARK_PAUSE)
            emu_ring_release(input_ring(p, k, i));
    }
    if (role(p, k) == EMU_FILTER)
        return send_mark(p, k, EMU_MARK_PAUSE, key->round, LAST_ORIGIN);
    pthread_mutex_lock(&p->lock);
    p->drained++;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return EMU_OK;
}

/* A filter's or consumer's messages, always the first in the sequential
 * order of the heads of its inputs, until every input ended. */
static int take_inputs(pipeline *p, worker *w)
{
    size_t k = w->k, open = n_inputs(p, k);
    char *ended = calloc(open, 1);
    int rc = ended ? EMU_OK : emu_calls_fail(p->s, "out of memory");
    while (rc == EMU_OK && open > 0) {
        emu_slot *head;
        size_t i = 0;
        if ((rc = next_input(p, k, ended, &head, &i)) != EMU_OK)
            break;
        enum emu_mark mark = head->mark;
        if (mark == EMU_MARK_PAUSE) {
            rc = handle_pause(p, k, ended, &head->key);
            continue;
        }
        if (mark == EMU_MARK_NONE)
            rc = handle_block(p, w, i, head);
        else if (mark == EMU_MARK_SKIP && role(p, k) == EMU_FILTER)
            rc = send(p, k, &head->key, EMU_MARK_SKIP, NULL, 0, 0, NULL);
        emu_ring_release(input_ring(p, k, i));
        if (mark == EMU_MARK_END) {
            ended[i] = 1;
            open--;
        }
    }
    free(ended);
    return rc;
}

/* A filter's inputs, then its flush (not with --strict) and its end. */
static int filter(pipeline *p, worker *w)
{
    size_t k = w->k;
    unsigned used = 0;
    unsigned long long frames = 0;
    if (take_inputs(p, w) != EMU_OK)
        return EMU_E_RUN;
    if (!p->s->o->strict && emu_calls_flush(p->s, k, &w->out, &used, &frames) != EMU_OK)
        return EMU_E_RUN;
    emu_key key = {.round = UINT64_MAX, .origin = (unsigned)k};
    if (used && send(p, k, &key, EMU_MARK_NONE, w->out.data, used, frames, &w->out) != EMU_OK)
        return EMU_E_RUN;
    return send_mark(p, k, EMU_MARK_END, UINT64_MAX, LAST_ORIGIN);
}

static int consume(pipeline *p, worker *w)
{
    int rc = take_inputs(p, w);
    pthread_mutex_lock(&p->lock);
    p->finished++;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static void *work(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    enum emu_role r = role(p, w->k);
    int rc = r == EMU_PRODUCER ? produce(p, w) : r == EMU_CONSUMER ? consume(p, w) : filter(p, w);
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
        w[started].p = p;
        w[started].k = started;
        if (!emu_chain_runs(p->s->c, started)) /* under mpirun: another rank's actor */
            continue;
        if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0) {
            emu_calls_fail(p->s, "cannot start the thread of '%s'", p->s->c->topology->actors[started].name);
            abort_all(p);
            break;
        }
    }
    for (size_t k = 0; k < started; k++)
        if (emu_chain_runs(p->s->c, k))
            pthread_join(w[k].thread, NULL);
}

/* A ring per input of every actor; the producers and consumers counted. */
static int make_rings(pipeline *p, unsigned depth)
{
    emu_calls *s = p->s;
    p->ring_of = calloc(s->n, sizeof *p->ring_of);
    if (!p->ring_of)
        return emu_calls_fail(s, "out of memory");
    for (size_t k = 0; k < s->n; k++) {
        p->ring_of[k] = p->n_rings;
        p->n_rings += n_inputs(p, k);
        p->live_producers += role(p, k) == EMU_PRODUCER && emu_chain_runs(s->c, k);
        p->consumers += role(p, k) == EMU_CONSUMER && emu_chain_runs(s->c, k);
    }
    p->ring = calloc(p->n_rings ? p->n_rings : 1, sizeof *p->ring);
    if (!p->ring)
        return emu_calls_fail(s, "out of memory");
    for (size_t i = 0; i < p->n_rings; i++)
        if (emu_ring_init(&p->ring[i], depth) != EMU_OK)
            return emu_calls_fail(s, "out of memory for a ring of %u buffers", depth);
    return EMU_OK;
}

int emu_pipeline_run(emu_calls *s, unsigned depth)
{
    pipeline p = {.s = s, .f = s->flow, .pause_round = NO_PAUSE};
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.changed, NULL);
    worker *w = calloc(s->n, sizeof *w);
    int rc = w ? make_rings(&p, depth) : emu_calls_fail(s, "out of memory");
    if (rc == EMU_OK) {
        emu_live_set_rings(s->o->live, p.ring, p.ring_of, p.n_rings);
        /* Across ranks a ring between an actor of this rank and one of another is a link (mpi.h). */
        if (s->o->mpi)
            emu_mpi_attach(s->o->mpi, p.ring, p.n_rings, p.ring_of);
        run_threads(&p, w, s->n);
        if (s->o->mpi && emu_mpi_detach(s->o->mpi) != EMU_OK)
            rc = EMU_E_RUN;
        emu_live_set_rings(s->o->live, NULL, NULL, 0);
    }
    rc = s->failed ? EMU_E_RUN : rc;
    for (size_t i = 0; p.ring && i < p.n_rings; i++)
        emu_ring_destroy(&p.ring[i]);
    for (size_t k = 0; w && k < s->n; k++)
        emu_buffer_release(&w[k].out);
    free(p.ring);
    free(p.ring_of);
    free(w);
    pthread_cond_destroy(&p.changed);
    pthread_mutex_destroy(&p.lock);
    return rc;
}
