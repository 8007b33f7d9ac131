/* lifecycle.h: what the lifecycle test actors share: the call log, the call sequence check, injected failures, test frames. */
#ifndef NARWHAL_TESTS_LIFECYCLE_H
#define NARWHAL_TESTS_LIFECYCLE_H

/*
 * Three test actors (lifecycle_producer.so, lifecycle_filter.so,
 * lifecycle_consumer.so) append one line per call to the file named by
 * LIFECYCLE_LOG:  "<who> <call> [details]", who being P, F<n> or C (F for
 * the filter library's process_config; filter instances are numbered in
 * registration order).  Every instance call is checked against NARVAL's
 * sequence as DESIGN.md states it (lc_moves below): a call out of sequence
 * is logged with "out of sequence (state S)" appended and answered
 * NARVAL_E_STATE.  They are steered by environment variables, read when
 * called:
 *
 *   LIFECYCLE_FRAMES=N     the producer emits N frames per run (default 10)
 *   LIFECYCLE_PER_BLOCK=K  at most K frames per producer block (default 4)
 *   LIFECYCLE_EOF=1        the producer ends each run's frames with a meta:eof
 *                          frame (in the last block if it fits, else alone)
 *   LIFECYCLE_FAIL=WHO:CALL:NTH:CODE   the NTH call (1-based) of CALL by WHO
 *                          returns CODE, e.g. F0:process_block:2:8
 *   LIFECYCLE_HOLD=WHO     that filter keeps every frame until its flush call
 *                          or a meta:eof, then emits them all (meta:eof last)
 *   LIFECYCLE_OVERCLAIM=WHO  that filter reports one byte more than its buffer
 *   LIFECYCLE_NEED=WHO:BYTES  that filter always answers NARVAL_E_OUTPUT_SIZE, needing BYTES
 *   LIFECYCLE_SLOW=WHO:MICROSECONDS  that actor sleeps so long in every process_block
 *   LIFECYCLE_SIGNAL=N     the producer raises SIGINT during its Nth block
 *                          (N:TERM raises SIGTERM, N:STOP SIGSTOP: a process that
 *                          stops answering, for check_mpi)
 *
 * A test frame is a meta:sync key whose event number is its sequence number
 * (0, 1, 2, ...) followed by that number again as a u32: 24 bytes.  The
 * producer starts again from 0 after process_reset (each run its data).
 * These are test fixtures, so the only global state is the instance counter
 * and the call counters of process_config/process_register.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adf.h"
#include "narval.h"

#define LC_FRAME_SIZE (ADF_KEY_SIZE + 4u)

enum lc_call {
    LC_CONFIG,
    LC_REGISTER,
    LC_INITIALISE,
    LC_START,
    LC_BLOCK,
    LC_PAUSE,
    LC_RESUME,
    LC_STOP,
    LC_RESET,
    LC_UNLOAD,
    LC_N_CALLS
};

static const char *const lc_call_names[LC_N_CALLS] = {
    "process_config", "process_register", "process_initialise", "process_start", "process_block",
    "process_pause",  "process_resume",   "process_stop",       "process_reset", "process_unload",
};

/* An instance's place in NARVAL's sequence. */
enum lc_state { LC_REGISTERED, LC_INITIALISED, LC_RUNNING, LC_PAUSED, LC_STOPPED, LC_WAS_RESET, LC_N_STATES };

static const char *const lc_state_names[LC_N_STATES] = {
    "registered", "initialised", "running", "paused", "stopped", "reset",
};

#define LC_FROM(s) (1u << (s))
#define LC_AFTER_INITIALISE                                                                                            \
    (LC_FROM(LC_INITIALISED) | LC_FROM(LC_RUNNING) | LC_FROM(LC_PAUSED) | LC_FROM(LC_STOPPED))

/* For each instance call: the states it is allowed in and the state it
 * leads to.  Initialise again after reset, start after reset or stop,
 * pause/resume between blocks, stop from running or paused, reset in any
 * state after initialise, unload in any. */
static const struct {
    unsigned from;
    enum lc_state to;
} lc_moves[LC_N_CALLS] = {
    [LC_REGISTER] = {LC_FROM(LC_REGISTERED), LC_REGISTERED}, /* a new instance starts registered */
    [LC_INITIALISE] = {LC_FROM(LC_REGISTERED) | LC_FROM(LC_WAS_RESET), LC_INITIALISED},
    [LC_START] = {LC_FROM(LC_INITIALISED) | LC_FROM(LC_STOPPED) | LC_FROM(LC_WAS_RESET), LC_RUNNING},
    [LC_BLOCK] = {LC_FROM(LC_RUNNING), LC_RUNNING},
    [LC_PAUSE] = {LC_FROM(LC_RUNNING), LC_PAUSED},
    [LC_RESUME] = {LC_FROM(LC_PAUSED), LC_RUNNING},
    [LC_STOP] = {LC_FROM(LC_RUNNING) | LC_FROM(LC_PAUSED), LC_STOPPED},
    [LC_RESET] = {LC_AFTER_INITIALISE, LC_WAS_RESET},
    [LC_UNLOAD] = {~0u, LC_REGISTERED},
};

static inline unsigned lc_env_unsigned(const char *name, unsigned fallback)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : fallback;
}

static inline int lc_env_names(const char *name, const char *who)
{
    const char *v = getenv(name);
    return v && strcmp(v, who) == 0;
}

static inline void lc_log(const char *who, enum lc_call call, const char *fmt, ...)
{
    const char *path = getenv("LIFECYCLE_LOG");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%s %s", who, lc_call_names[call]);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputc(' ', f);
        vfprintf(f, fmt, ap);
        va_end(ap);
    }
    fputc('\n', f);
    fclose(f);
}

/* N of the variable name=WHO:N when WHO is who, else 0. */
static inline unsigned lc_env_for(const char *name, const char *who)
{
    const char *v = getenv(name);
    char spec_who[16];
    unsigned n;
    if (!v || sscanf(v, "%15[^:]:%u", spec_who, &n) != 2 || strcmp(spec_who, who) != 0)
        return 0;
    return n;
}

static inline unsigned lc_need(const char *who) { return lc_env_for("LIFECYCLE_NEED", who); }

/* LIFECYCLE_SLOW: a slow actor, so that the rings of a pipelined run fill up. */
static inline void lc_slow(const char *who)
{
    unsigned us = lc_env_for("LIFECYCLE_SLOW", who);
    struct timespec t = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000L};
    if (us)
        nanosleep(&t, NULL);
}

/* The code LIFECYCLE_FAIL injects into the nth call of `call` by `who`, or 0. */
static inline unsigned lc_injected(const char *who, enum lc_call call, unsigned nth)
{
    const char *v = getenv("LIFECYCLE_FAIL");
    char spec_who[16], spec_call[32];
    unsigned spec_nth, code;
    if (!v || sscanf(v, "%15[^:]:%31[^:]:%u:%u", spec_who, spec_call, &spec_nth, &code) != 4)
        return 0;
    return strcmp(spec_who, who) == 0 && strcmp(spec_call, lc_call_names[call]) == 0 && spec_nth == nth ? code : 0;
}

/* One instance of any of the three actors. */
typedef struct lc_instance {
    char who[8];
    enum lc_state state;
    unsigned calls[LC_N_CALLS];
    unsigned next_seq; /* producer: the next frame of the run to emit */
    int eof_sent;      /* producer: this run's meta:eof was emitted */
    uint8_t *held;     /* filter in hold mode: frames kept for the flush or meta:eof */
    size_t held_size;
} lc_instance;

/* Counts and logs a call of an instance, checks it against the sequence,
 * and moves the instance on; returns NARVAL_E_STATE out of sequence, else
 * the injected code, if any (a failed call leaves the state as it was). */
static inline unsigned lc_enter(lc_instance *in, enum lc_call call, const char *fmt, ...)
{
    char details[256] = "";
    int allowed = (lc_moves[call].from & LC_FROM(in->state)) != 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(details, sizeof details, fmt, ap);
        va_end(ap);
    }
    if (!allowed) {
        size_t n = strlen(details);
        snprintf(details + n, sizeof details - n, "%sout of sequence (state %s)", n ? " " : "",
                 lc_state_names[in->state]);
    }
    lc_log(in->who, call, details[0] ? "%s" : NULL, details);
    if (!allowed)
        return NARVAL_E_STATE;
    if (call == LC_BLOCK)
        lc_slow(in->who);
    unsigned code = lc_injected(in->who, call, ++in->calls[call]);
    if (!code)
        in->state = lc_moves[call].to;
    return code;
}

static inline lc_instance *lc_register(const char *prefix, unsigned *counter, unsigned *error_code)
{
    lc_instance *in = calloc(1, sizeof *in);
    if (!in) {
        *error_code = NARVAL_E_NOMEM;
        return NULL;
    }
    if (prefix[0] == 'F')
        snprintf(in->who, sizeof in->who, "F%u", (*counter)++);
    else
        snprintf(in->who, sizeof in->who, "%s", prefix);
    *error_code = lc_enter(in, LC_REGISTER, NULL);
    if (*error_code) {
        free(in);
        return NULL;
    }
    return in;
}

static inline void lc_config(const char *who, unsigned *count, const char *directory_path, unsigned *error_code)
{
    lc_log(who, LC_CONFIG, "%s", directory_path);
    *error_code = lc_injected(who, LC_CONFIG, ++*count);
}

/* A lifecycle call; process_reset also ends the run's data: the producer
 * starts again from frame 0, the filter forgets what it held. */
static inline void lc_lifecycle(void *algo_data, enum lc_call call, unsigned *error_code)
{
    lc_instance *in = algo_data;
    if (!in) {
        *error_code = NARVAL_E_STATE;
        return;
    }
    *error_code = lc_enter(in, call, NULL);
    if (*error_code || call != LC_RESET)
        return;
    in->next_seq = 0;
    in->eof_sent = 0;
    free(in->held);
    in->held = NULL;
    in->held_size = 0;
}

static inline void lc_unload(void *algo_data, unsigned *error_code)
{
    lc_instance *in = algo_data;
    if (!in) {
        *error_code = NARVAL_E_STATE;
        return;
    }
    *error_code = lc_enter(in, LC_UNLOAD, NULL);
    free(in->held);
    free(in);
}

static inline size_t lc_range(char *out, size_t len, size_t n, long first, long last, const char *sep)
{
    if (n >= len)
        return n;
    if (first == last)
        return n + (size_t)snprintf(out + n, len - n, "%ld%s", first, sep);
    return n + (size_t)snprintf(out + n, len - n, "%ld-%ld%s", first, last, sep);
}

/* Writes a compact list of the sequence numbers in buf: "0-3" or "0-3,7";
 * a meta:eof adds ",eof" (or "eof" alone) and counts as a frame. */
static inline void lc_sequences(const uint8_t *buf, size_t size, char *out, size_t len, unsigned *frames)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    long first = -1, last = -1;
    int eof = 0;
    *frames = 0;
    out[0] = '\0';
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0) {
        long seq = (long)f.key.event;
        (*frames)++;
        if (f.key.id == ADF_ID_META_EOF) {
            eof = 1;
            continue;
        }
        if (first >= 0 && seq == last + 1) {
            last = seq;
            continue;
        }
        if (first >= 0)
            n = lc_range(out, len, n, first, last, ",");
        first = last = seq;
    }
    if (first >= 0)
        n = lc_range(out, len, n, first, last, "");
    if (eof && n < len)
        snprintf(out + n, len - n, "%seof", n ? "," : "");
}

/* Whether buf holds a meta:eof frame at its top level. */
static inline int lc_has_eof(const uint8_t *buf, size_t size)
{
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0)
        if (f.key.id == ADF_ID_META_EOF)
            return 1;
    return 0;
}

#endif
