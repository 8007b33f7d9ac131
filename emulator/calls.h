/* calls.h: the process_* calls of a topology's actors, timed, counted, checked and reported; what both run loops share. */
#ifndef NARWHAL_CALLS_H
#define NARWHAL_CALLS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "run.h"

#include "buffer.h"
#include "live.h"

/* One session's actors.  In the pipelined loop every actor's thread touches
 * only its own entries of the per-actor arrays and of res->actors (the
 * producer's thread all of them while the others wait, drained, for a
 * pause); the failure fields and res->end are shared and go through lock. */
struct emu_counter;

/* An output block counted on the counter's thread while the next actor
 * works on it (sequential loop): whose, where, and what the count found. */
typedef struct emu_pending {
    struct emu_calls *s;
    size_t k;
    const uint8_t *data;
    unsigned size;
    int posted, settled;
    emu_live_out out;
    int malformed;
    char why[256];
} emu_pending;

/* A block's frame count that is still being made (emu_calls_settle gives it). */
#define EMU_FRAMES_PENDING (~0ull)

typedef struct emu_calls {
    const emu_chain *c;
    const emu_run_options *o;
    emu_run_result *res;
    size_t n;
    void **instance;
    char *registered; /* process_register succeeded: process_unload is owed */
    unsigned *size;   /* per actor but the consumer: the output size it is handed */
    char *warned;     /* a malformed-output warning was printed for this actor */
    emu_cycle_stats *cycle; /* the run in hand: res->cycle[res->runs - 1] */
    struct emu_flow *flow;  /* where each actor's output goes (flow.h); reset at each run */
    struct emu_counter *counter; /* sequential: outputs counted beside the next call (NULL: on the loop's thread) */
    emu_pending pending;         /* the output counted last there */
    pthread_mutex_t lock;
    int failed;
    char *err;
    size_t errlen;
} emu_calls;

/* The lifecycle calls a host makes on every actor at once, in topology order. */
enum emu_call {
    EMU_CALL_INITIALISE,
    EMU_CALL_START,
    EMU_CALL_PAUSE,
    EMU_CALL_RESUME,
    EMU_CALL_STOP,
    EMU_CALL_RESET,
    EMU_CALL_UNLOAD,
};

/* Seconds on a monotonic clock. */
double emu_now(void);

/* Allocates the per-actor state; a failure is reported like an actor's. */
int emu_calls_init(emu_calls *s, const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err,
                   size_t errlen);
/* Frees it, leaving each actor's final output size in res. */
void emu_calls_free(emu_calls *s);

/* Logs a failure (one line on o->log), keeps the first in err, marks the run
 * failed and ended by an error; returns EMU_E_RUN.  Any thread may call it. */
int emu_calls_fail(emu_calls *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How the run ended, unless a failure already said so. */
void emu_calls_end(emu_calls *s, enum emu_end end);

/* Register and initialise each actor in turn, in topology order; stops at the
 * first failure (those registered are owed their unload). */
int emu_calls_register(emu_calls *s);
/* One lifecycle call on every actor, in topology order.  The first failure
 * ends it, but for EMU_CALL_STOP (the run was ending normally: the others
 * still stop) and EMU_CALL_UNLOAD, which goes to every registered actor
 * and leaves none registered. */
int emu_calls_every(emu_calls *s, enum emu_call call);

/* One process_block of producer k (no input) or of filter k into
 * out, called again with a larger buffer for as long as the actor asks for
 * one, so that no frame is lost or emitted twice; with o->strict the
 * request stops the run instead, naming the topology's <size> to raise.
 * A non-empty producer block is counted in res and in the run in hand.
 * With s->counter, *out_frames is EMU_FRAMES_PENDING for a non-empty output:
 * it is counted beside the next call, which may take it as in_frames (then
 * settled once that call returns) or emu_calls_settle gives it. */
int emu_calls_block(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames,
                    emu_buffer *out, unsigned *used, unsigned long long *out_frames);
/* Filter k's flush: the same with an empty input (never with o->strict). */
int emu_calls_flush(emu_calls *s, size_t k, emu_buffer *out, unsigned *used, unsigned long long *out_frames);
/* One process_block of the consumer k. */
int emu_calls_consume(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames);
/* The output counted last on s->counter: waited for, added to its actor's
 * frames (and a malformed one named, once per actor); its frames.  At once
 * when it was settled already; 0 when none was posted. */
unsigned long long emu_calls_settle(emu_calls *s);

/* The signal dispositions the session replaced. */
typedef struct emu_saved_signals {
    struct sigaction old[4];
} emu_saved_signals;

/* SIGINT and SIGTERM ask the producer to stop before its next block (a
 * second one while the chain winds down ends the process); SIGTSTP asks
 * for a pause at the next block boundary, SIGCONT ends it. */
void emu_calls_catch_signals(emu_saved_signals *saved);
void emu_calls_restore_signals(const emu_saved_signals *saved);
/* Whether SIGINT or SIGTERM came; then it also records how the run ended. */
int emu_calls_signalled(emu_calls *s);
/* Whether a producer that made `blocks` non-empty blocks this run is to
 * stop before its next one: a signal came or it made o->max_blocks; then
 * it also records how. */
int emu_calls_producer_done(emu_calls *s, unsigned long long blocks);

/* Whether a pause is due now, after round `round` of the run (a round: one
 * block of every producer still producing): SIGTSTP came (*wait set: the
 * pause lasts until SIGCONT) or round is a multiple of o->pause_every. */
int emu_calls_pause_due(emu_calls *s, unsigned long long round, int *wait);
/* The pause: process_pause on every actor in topology order; with wait, the
 * process stops itself (SIGSTOP, as a shell's Ctrl-Z expects) until a
 * SIGCONT; then process_resume on every actor.  Every actor must be
 * between blocks. */
int emu_calls_pause(emu_calls *s, int wait);

#endif
