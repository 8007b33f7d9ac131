/* calls.h: the process_* calls of a chain's actors, timed, counted, checked and reported; what both run loops share. */
#ifndef NARWHAL_CALLS_H
#define NARWHAL_CALLS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "run.h"

/* An output buffer.  It is allocated on first use and grown whenever its
 * actor's size (emu_calls.size) has grown past it, so that every buffer an
 * actor is handed has the size the sequential loop would hand it. */
typedef struct emu_buffer {
    uint8_t *data;
    unsigned cap; /* bytes allocated */
} emu_buffer;

enum emu_phase { EMU_PHASE_NONE, EMU_PHASE_REGISTERED, EMU_PHASE_STARTED };

/* One run's actors.  In the pipelined loop every actor's thread touches only
 * its own entries of the per-actor arrays and of res->actors; the failure
 * fields and res->end are shared and go through lock. */
typedef struct emu_calls {
    const emu_chain *c;
    const emu_run_options *o;
    emu_run_result *res;
    size_t n;
    void **instance;
    enum emu_phase *phase;
    unsigned *size; /* per actor but the consumer: the output size it is handed */
    char *warned;   /* a malformed-output warning was printed for this actor */
    pthread_mutex_t lock;
    int failed;
    char *err;
    size_t errlen;
} emu_calls;

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

/* Register and initialise every actor, then start every actor, in chain order. */
int emu_calls_bring_up(emu_calls *s);
/* Stop what was started, then unload what was registered, in chain order;
 * a failure is reported and the others still get their calls. */
void emu_calls_wind_down(emu_calls *s);

/* One process_block of the producer (k == 0, no input) or of filter k into
 * out, called again with a larger buffer for as long as the actor asks for
 * one, so that no frame is lost or emitted twice. */
int emu_calls_block(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames,
                    emu_buffer *out, unsigned *used, unsigned long long *out_frames);
/* Filter k's flush: the same with an empty input. */
int emu_calls_flush(emu_calls *s, size_t k, emu_buffer *out, unsigned *used, unsigned long long *out_frames);
/* One process_block of the consumer k. */
int emu_calls_consume(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames);

/* SIGINT and SIGTERM ask the producer to stop before its next block; a
 * second one while the chain winds down ends the process. */
void emu_calls_catch_signals(struct sigaction old[2]);
void emu_calls_restore_signals(const struct sigaction old[2]);
/* Whether the producer is to stop before its next block: a signal came or
 * o->max_blocks blocks were run; then it also records how the run ended. */
int emu_calls_producer_done(emu_calls *s);

#endif
