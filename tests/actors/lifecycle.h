/* lifecycle.h: what the lifecycle test actors share: the call log, injected failures, their test frames. */
#ifndef NARWHAL_TESTS_LIFECYCLE_H
#define NARWHAL_TESTS_LIFECYCLE_H

/*
 * Three test actors (lifecycle_producer.so, lifecycle_filter.so,
 * lifecycle_consumer.so) append one line per call to the file named by
 * LIFECYCLE_LOG:  "<who> <call> [details]", who being P, F<n> or C (F for
 * the filter library's process_config; filter instances are numbered in
 * registration order).  They are steered by environment variables, read
 * when called:
 *
 *   LIFECYCLE_FRAMES=N     the producer emits N frames in all (default 10)
 *   LIFECYCLE_PER_BLOCK=K  at most K frames per producer block (default 4)
 *   LIFECYCLE_FAIL=WHO:CALL:NTH:CODE   the NTH call (1-based) of CALL by WHO
 *                          returns CODE, e.g. F0:process_block:2:8
 *   LIFECYCLE_HOLD=WHO     that filter keeps every frame until its flush call
 *   LIFECYCLE_OVERCLAIM=WHO  that filter reports one byte more than its buffer
 *   LIFECYCLE_NEED=WHO:BYTES  that filter always answers NARVAL_E_OUTPUT_SIZE, needing BYTES
 *   LIFECYCLE_SLOW=WHO:MICROSECONDS  that actor sleeps so long in every process_block
 *   LIFECYCLE_SIGNAL=N     the producer raises SIGINT during its Nth block
 *                          (N:TERM raises SIGTERM)
 *
 * A test frame is a meta:sync key whose event number is its sequence number
 * (0, 1, 2, ...) followed by that number again as a u32: 24 bytes.
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

enum lc_call { LC_CONFIG, LC_REGISTER, LC_INITIALISE, LC_START, LC_BLOCK, LC_STOP, LC_UNLOAD, LC_N_CALLS };

static const char *const lc_call_names[LC_N_CALLS] = {
    "process_config", "process_register", "process_initialise", "process_start",
    "process_block",  "process_stop",     "process_unload",
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
    unsigned calls[LC_N_CALLS];
    unsigned next_seq; /* producer: the next frame to emit */
    uint8_t *held;     /* filter in hold mode: frames kept for the flush */
    size_t held_size;
} lc_instance;

/* Counts and logs a call of an instance; returns the injected code, if any. */
static inline unsigned lc_enter(lc_instance *in, enum lc_call call, const char *fmt, ...)
{
    char details[256] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(details, sizeof details, fmt, ap);
        va_end(ap);
    }
    lc_log(in->who, call, fmt ? "%s" : NULL, details);
    if (call == LC_BLOCK)
        lc_slow(in->who);
    return lc_injected(in->who, call, ++in->calls[call]);
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

static inline void lc_lifecycle(void *algo_data, enum lc_call call, unsigned *error_code)
{
    lc_instance *in = algo_data;
    if (!in) {
        *error_code = NARVAL_E_STATE;
        return;
    }
    *error_code = lc_enter(in, call, NULL);
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

/* Writes a compact list of the sequence numbers in buf: "0-3" or "0-3,7". */
static inline void lc_sequences(const uint8_t *buf, size_t size, char *out, size_t len, unsigned *frames)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    long first = -1, last = -1;
    *frames = 0;
    out[0] = '\0';
    adf_iter_init(&it, buf, size);
    while (adf_iter_next(&it, &f) > 0) {
        long seq = (long)f.key.event;
        (*frames)++;
        if (first >= 0 && seq == last + 1) {
            last = seq;
            continue;
        }
        if (first >= 0)
            n = lc_range(out, len, n, first, last, ",");
        first = last = seq;
    }
    if (first >= 0)
        lc_range(out, len, n, first, last, "");
}

#endif
