/* run.c: drives a loaded topology through NARVAL's lifecycle and its blocks, sequentially or pipelined. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "run.h"
#include "calls.h"
#include "counter.h"
#include "emu.h"
#include "flow.h"
#include "mpi.h"
#include "live.h"
#include "pipeline.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The sequential loop's state: one output buffer per actor but the
 * consumers, and each producer's count of blocks this run. */
typedef struct sequential {
    emu_calls *s;
    emu_flow *f;
    emu_buffer *out;
    unsigned long long *made;
    char *live;
} sequential;

static int deliver(sequential *q, size_t w, const uint8_t *data, unsigned size, unsigned long long frames);

/* Hands a block that came on input i to actor k, and what it emits on,
 * depth-first.  A filter that emits nothing passes nothing on: an empty
 * input would tell the next one to flush. */
static int feed(sequential *q, size_t k, size_t i, const uint8_t *data, unsigned size, unsigned long long frames)
{
    emu_calls *s = q->s;
    if (frames == EMU_FRAMES_PENDING && s->c->topology->actors[k].n_sources > 1) /* its end-of-data frames may go */
        frames = emu_calls_settle(s);
    if (emu_flow_take(q->f, k, i, &data, &size, &frames) != EMU_OK)
        return emu_calls_fail(s, "out of memory");
    if (size == 0)
        return EMU_OK;
    /* Actors take their input as void *; they only read it. */
    uint8_t *in = (uint8_t *)(uintptr_t)data;
    if (s->c->topology->actors[k].role == EMU_CONSUMER)
        return emu_calls_consume(s, k, in, size, frames);
    unsigned used;
    unsigned long long out_frames;
    if (emu_calls_block(s, k, in, size, frames, &q->out[k], &used, &out_frames) != EMU_OK)
        return EMU_E_RUN;
    return used ? deliver(q, k, q->out[k].data, used, out_frames) : EMU_OK;
}

/* A block to a group of instances: to the one whose turn it is; when it
 * ends the stream, every other instance, in turn, gets its meta:eof alone. */
static int feed_shared(sequential *q, emu_outlet *o, const uint8_t *data, unsigned size, unsigned long long frames)
{
    size_t at = emu_flow_next_turn(o);
    unsigned offset, length;
    if (feed(q, o->reader[at], o->input[at], data, size, frames) != EMU_OK)
        return EMU_E_RUN;
    if (!emu_flow_find_eof(data, size, &offset, &length))
        return EMU_OK;
    for (size_t j = 1; j < o->n; j++) {
        size_t other = (at + j) % o->n;
        if (feed(q, o->reader[other], o->input[other], data + offset, length, 1) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

/* Writer w's block to each of its outlets in turn.  A count still being
 * made (EMU_FRAMES_PENDING) goes to one reader alone, which settles it when
 * its call returns; for several it is settled first; and it is settled
 * before the block's buffer may be written again, whatever happened. */
static int deliver(sequential *q, size_t w, const uint8_t *data, unsigned size, unsigned long long frames)
{
    emu_flow_actor *a = &q->f->actor[w];
    int rc = EMU_OK;
    if (frames == EMU_FRAMES_PENDING && (a->n_outlets > 1 || (a->n_outlets && a->outlets[0].share != EMU_SHARE_NONE)))
        frames = emu_calls_settle(q->s);
    for (size_t o = 0; o < a->n_outlets && rc == EMU_OK; o++) {
        emu_outlet *out = &a->outlets[o];
        rc = out->share == EMU_SHARE_NONE ? feed(q, out->reader[0], out->input[0], data, size, frames)
                                          : feed_shared(q, out, data, size, frames);
    }
    emu_calls_settle(q->s);
    return rc == EMU_OK ? EMU_OK : EMU_E_RUN;
}

/* One block of producer p, delivered through the whole graph; *made says
 * whether it was non-empty (else the producer is done). */
static int produce(sequential *q, size_t p, int *made)
{
    emu_calls *s = q->s;
    unsigned used;
    unsigned long long frames;
    *made = 0;
    if (emu_calls_block(s, p, NULL, 0, 0, &q->out[p], &used, &frames) != EMU_OK)
        return EMU_E_RUN;
    if (used == 0)
        return EMU_OK;
    *made = 1;
    q->made[p]++;
    return deliver(q, p, q->out[p].data, used, frames);
}

/* Rounds: one block of each producer still producing, in topology order,
 * each delivered depth-first through the graph before the next, so that
 * between two rounds (where a pause goes) every actor is idle. */
static int run_rounds(sequential *q)
{
    emu_calls *s = q->s;
    size_t n = s->n, live = 0;
    for (size_t k = 0; k < n; k++)
        live += q->live[k] = s->c->topology->actors[k].role == EMU_PRODUCER;
    for (unsigned long long round = 1; live > 0; round++) {
        int any = 0, wait;
        for (size_t p = 0; p < n; p++) {
            int made = 0;
            if (!q->live[p])
                continue;
            if (!emu_calls_producer_done(s, q->made[p]) && produce(q, p, &made) != EMU_OK)
                return EMU_E_RUN;
            if (!made) {
                q->live[p] = 0;
                live--;
            }
            any |= made;
        }
        if (any && emu_calls_pause_due(s, round, &wait) && emu_calls_pause(s, wait) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

/* Every filter, in topology order, gets one call with an empty input; what
 * it emits then goes on like any block.  Done however the run ended, short
 * of an error, so that frames an actor held back reach the outputs. */
static int flush(sequential *q)
{
    emu_calls *s = q->s;
    for (size_t k = 0; k < s->n; k++) {
        unsigned used;
        unsigned long long frames;
        if (s->c->topology->actors[k].role != EMU_FILTER)
            continue;
        if (emu_calls_flush(s, k, &q->out[k], &used, &frames) != EMU_OK)
            return EMU_E_RUN;
        if (used && deliver(q, k, q->out[k].data, used, frames) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

/* Whether outputs are counted beside the calls: NARWHAL_COUNT_THREAD on or
 * off, else when the process may run on 4 CPUs or more (on fewer, the
 * thread takes a CPU from the actors' own threads: measured on 2). */
static int count_beside(void)
{
    const char *v = getenv("NARWHAL_COUNT_THREAD");
    if (v && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0))
        return strcmp(v, "on") == 0;
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 4;
}

/* Each output is counted (frames, kinds: the report's and the live view's)
 * on a thread of its own while the next actor works on it, off the loop's
 * path (count_beside); the actors' calls stay on the calling thread, in the
 * same order. */
static int run_sequential(emu_calls *s)
{
    sequential q = {.s = s, .f = s->flow, .out = calloc(s->n, sizeof *q.out), .made = calloc(s->n, sizeof *q.made),
                    .live = calloc(s->n, 1)};
    s->pending = (emu_pending){ 0 };
    s->counter = s->o->mpi || !count_beside() ? NULL : emu_counter_start();
    int rc = q.out && q.made && q.live ? run_rounds(&q) : emu_calls_fail(s, "out of memory");
    if (rc == EMU_OK && !s->o->strict)
        rc = flush(&q);
    emu_calls_settle(s);
    emu_counter_stop(s->counter);
    s->counter = NULL;
    for (size_t k = 0; q.out && k < s->n; k++)
        emu_buffer_release(&q.out[k]);
    free(q.out);
    free(q.made);
    free(q.live);
    return rc;
}

/* Frames the run's producers emitted and its consumers were handed. */
static void count_ends(const emu_calls *s, unsigned long long *produced, unsigned long long *consumed)
{
    *produced = *consumed = 0;
    for (size_t k = 0; k < s->n; k++) {
        enum emu_role role = s->c->topology->actors[k].role;
        if (role == EMU_PRODUCER)
            *produced += s->res->actors[k].frames_out;
        if (role == EMU_CONSUMER)
            *consumed += s->res->actors[k].frames_in;
    }
}

static int failed(emu_calls *s)
{
    pthread_mutex_lock(&s->lock);
    int f = s->failed;
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* Whether the blocks are worth pinning (buffer.h): an actor of this process
 * computes on a GPU (process_device), whose uploads then read them where
 * they lie; not under --strict (a NARVAL host's buffers are plain memory),
 * and a chain on the CPU never starts CUDA. */
static int pinned_helps(const emu_calls *s)
{
    if (s->o->strict)
        return 0;
    for (size_t k = 0; k < s->n; k++)
        if (strncmp(s->res->actors[k].device, "GPU", 3) == 0)
            return 1;
    return 0;
}

/* One run: (after the first, reset and initialise), start, the blocks,
 * stop.  What it moved is kept in res->cycle, however it ended. */
static int one_run(emu_calls *s, unsigned run)
{
    if (run > 0 && (emu_calls_every(s, EMU_CALL_RESET) != EMU_OK || emu_calls_every(s, EMU_CALL_INITIALISE) != EMU_OK))
        return EMU_E_RUN;
    emu_run_result *res = s->res;
    unsigned long long produced, consumed, produced_after, consumed_after;
    count_ends(s, &produced, &consumed);
    s->cycle = &res->cycle[res->runs++];
    emu_flow_reset(s->flow);
    emu_calls_end(s, EMU_END_DATA);
    /* Across ranks another rank's abort may have come during the initialisations. */
    int rc = failed(s) ? EMU_E_RUN : emu_calls_every(s, EMU_CALL_START);
    /* before the agreement: once it is reached another rank may send, and this rank's receive buffers follow it */
    emu_buffer_plain(!pinned_helps(s));
    if (rc == EMU_OK && s->o->mpi) /* every rank's actors started before blocks run (mpi.h) */
        rc = emu_mpi_agree(s->o->mpi, EMU_MPI_STARTED);
    if (rc == EMU_OK) {
        double t0 = emu_now();
        emu_live_set_state(s->o->live, EMU_STATE_RUNNING);
        emu_live_blocks_begin(s->o->live);
        rc = s->o->ring_depth ? emu_pipeline_run(s, s->o->ring_depth) : run_sequential(s);
        res->block_seconds += emu_now() - t0;
    }
    if (rc == EMU_OK) {
        emu_live_set_state(s->o->live, EMU_STATE_STOPPING);
        emu_live_final_spectra(s->o->live, s->instance);
    }
    if (rc == EMU_OK && s->o->mpi) /* no rank stops (publishes) before every rank's blocks ended well */
        rc = emu_mpi_agree(s->o->mpi, EMU_MPI_ENDED);
    if (rc == EMU_OK)
        rc = emu_calls_every(s, EMU_CALL_STOP);
    count_ends(s, &produced_after, &consumed_after);
    s->cycle->produced = produced_after - produced;
    s->cycle->consumed = consumed_after - consumed;
    s->cycle->end = res->end;
    return rc;
}

/* The runs, then every registered actor's unload; a signal ends the
 * session after the run in hand (or before the next one starts), an error
 * at once (abort: no stop). */
static void run_cycles(emu_calls *s)
{
    emu_saved_signals saved;
    emu_calls_catch_signals(&saved);
    if (s->o->mpi) /* a pause cannot drain a graph split over ranks, nor one rank stop alone (README) */
        signal(SIGTSTP, SIG_IGN);
    if (emu_calls_register(s) == EMU_OK) {
        emu_live_set_state(s->o->live, EMU_STATE_CONFIGURED);
        for (unsigned run = 0; run < s->res->cycles && !emu_calls_signalled(s); run++)
            if (one_run(s, run) != EMU_OK)
                break;
    }
    emu_calls_every(s, EMU_CALL_UNLOAD);
    emu_live_set_state(s->o->live, s->failed ? EMU_STATE_FAILED : EMU_STATE_DONE);
    emu_calls_restore_signals(&saved);
}

int emu_run(const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err, size_t errlen)
{
    emu_calls s;
    emu_flow flow;
    double t0 = emu_now();
    res->end = EMU_END_DATA;
    res->ring_depth = o->ring_depth;
    res->strict = o->strict;
    res->cycles = o->cycles ? o->cycles : 1;
    int rc = emu_calls_init(&s, c, o, res, err, errlen);
    if (rc == EMU_OK && o->ring_depth > EMU_MAX_RING)
        rc = emu_calls_fail(&s, "a ring of %u buffers is deeper than the limit of %u", o->ring_depth, EMU_MAX_RING);
    if (rc == EMU_OK && res->cycles > EMU_MAX_CYCLES)
        rc = emu_calls_fail(&s, "%u runs are more than the limit of %u", res->cycles, EMU_MAX_CYCLES);
    if (rc == EMU_OK && !(res->cycle = calloc(res->cycles, sizeof *res->cycle)))
        rc = emu_calls_fail(&s, "out of memory");
    if (rc == EMU_OK && o->mpi)
        rc = emu_mpi_watch(o->mpi, &s);
    s.flow = &flow;
    if (emu_flow_init(&flow, c->topology) != EMU_OK && rc == EMU_OK)
        rc = emu_calls_fail(&s, "out of memory");
    if (rc == EMU_OK) {
        char why[1024];
        rc = emu_configure(c, res, o->trace, why, sizeof why);
        if (rc != EMU_OK)
            emu_calls_fail(&s, "%s", why);
    }
    if (rc == EMU_OK)
        run_cycles(&s);
    res->wall_seconds = emu_now() - t0;
    /* A failure while stopping or unloading fails the run too. */
    if (o->mpi)
        emu_mpi_unwatch(o->mpi);
    rc = s.failed ? EMU_E_RUN : rc;
    emu_calls_free(&s);
    emu_flow_free(&flow);
    return rc;
}

int emu_run_result_init(emu_run_result *res, size_t n_actors)
{
    memset(res, 0, sizeof *res);
    res->actors = calloc(n_actors ? n_actors : 1, sizeof *res->actors);
    res->n_actors = n_actors;
    return res->actors ? EMU_OK : EMU_E_RUN;
}

void emu_run_result_free(emu_run_result *res)
{
    free(res->actors);
    free(res->cycle);
    memset(res, 0, sizeof *res);
}
