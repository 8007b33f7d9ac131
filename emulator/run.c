/* run.c: drives a loaded chain through NARVAL's lifecycle and its blocks, sequentially or pipelined. */
#include "run.h"
#include "calls.h"
#include "emu.h"
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

/* The sequential loop's state: one output buffer per actor but the consumer. */
typedef struct sequential {
    emu_calls *s;
    emu_buffer *out;
} sequential;

/* Hands a block to actor k and on down the chain.  It stops early when a
 * filter emits nothing: an empty input would tell the next one to flush. */
static int pass_down(sequential *q, size_t k, uint8_t *data, unsigned size, unsigned long long frames)
{
    emu_calls *s = q->s;
    for (; k + 1 < s->n; k++) {
        unsigned used;
        unsigned long long out_frames;
        if (emu_calls_block(s, k, data, size, frames, &q->out[k], &used, &out_frames) != EMU_OK)
            return EMU_E_RUN;
        if (used == 0)
            return EMU_OK;
        data = q->out[k].data;
        size = used;
        frames = out_frames;
    }
    return emu_calls_consume(s, s->n - 1, data, size, frames);
}

/* The producer's blocks, each down the whole chain before the next, so that
 * between two of them (where a pause goes) every actor is idle. */
static int run_blocks(sequential *q)
{
    emu_calls *s = q->s;
    while (!emu_calls_producer_done(s)) {
        unsigned used;
        unsigned long long frames;
        int wait;
        if (emu_calls_block(s, 0, NULL, 0, 0, &q->out[0], &used, &frames) != EMU_OK)
            return EMU_E_RUN;
        if (used == 0) {
            emu_calls_end(s, EMU_END_DATA);
            return EMU_OK;
        }
        if (pass_down(q, 1, q->out[0].data, used, frames) != EMU_OK)
            return EMU_E_RUN;
        if (emu_calls_pause_due(s, &wait) && emu_calls_pause(s, wait) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

/* Every filter, in order, gets one call with an empty input; what it emits
 * then goes down the chain like any block.  Done however the run ended, short
 * of an error, so that frames an actor held back reach the outputs. */
static int flush(sequential *q)
{
    emu_calls *s = q->s;
    for (size_t k = 1; k + 1 < s->n; k++) {
        unsigned used;
        unsigned long long frames;
        if (emu_calls_flush(s, k, &q->out[k], &used, &frames) != EMU_OK)
            return EMU_E_RUN;
        if (used && pass_down(q, k + 1, q->out[k].data, used, frames) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

static int run_sequential(emu_calls *s)
{
    sequential q = {.s = s, .out = calloc(s->n, sizeof *q.out)};
    if (!q.out)
        return emu_calls_fail(s, "out of memory");
    int rc = run_blocks(&q);
    if (rc == EMU_OK && !s->o->strict)
        rc = flush(&q);
    for (size_t k = 0; k < s->n; k++)
        free(q.out[k].data);
    free(q.out);
    return rc;
}

/* One run: (after the first, reset and initialise), start, the blocks,
 * stop.  What it moved is kept in res->cycle, however it ended. */
static int one_run(emu_calls *s, unsigned run)
{
    if (run > 0 && (emu_calls_every(s, EMU_CALL_RESET) != EMU_OK || emu_calls_every(s, EMU_CALL_INITIALISE) != EMU_OK))
        return EMU_E_RUN;
    emu_run_result *res = s->res;
    emu_actor_stats *producer = &res->actors[0], *consumer = &res->actors[s->n - 1];
    unsigned long long produced = producer->frames_out, consumed = consumer->frames_in;
    s->cycle = &res->cycle[res->runs++];
    emu_calls_end(s, EMU_END_DATA);
    int rc = emu_calls_every(s, EMU_CALL_START);
    if (rc == EMU_OK) {
        double t0 = emu_now();
        rc = s->o->ring_depth ? emu_pipeline_run(s, s->o->ring_depth) : run_sequential(s);
        res->block_seconds += emu_now() - t0;
    }
    if (rc == EMU_OK)
        rc = emu_calls_every(s, EMU_CALL_STOP);
    s->cycle->produced = producer->frames_out - produced;
    s->cycle->consumed = consumer->frames_in - consumed;
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
    if (emu_calls_register(s) == EMU_OK)
        for (unsigned run = 0; run < s->res->cycles && !emu_calls_signalled(s); run++)
            if (one_run(s, run) != EMU_OK)
                break;
    emu_calls_every(s, EMU_CALL_UNLOAD);
    emu_calls_restore_signals(&saved);
}

int emu_run(const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err, size_t errlen)
{
    emu_calls s;
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
    rc = s.failed ? EMU_E_RUN : rc;
    emu_calls_free(&s);
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
