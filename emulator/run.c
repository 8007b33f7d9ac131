/* run.c: drives a loaded chain through NARVAL's lifecycle and its blocks, one thread, in data-flow order. */
#include "run.h"
#include "adf.h"
#include "emu.h"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum phase { PHASE_NONE, PHASE_REGISTERED, PHASE_STARTED };

typedef struct run_state {
    const emu_chain *c;
    const emu_run_options *o;
    emu_run_result *res;
    size_t n;
    void **instance;
    enum phase *phase;
    uint8_t **buf; /* the output buffer of every actor but the consumer */
    unsigned *cap;
    char *warned;  /* a malformed-output warning was printed for this actor */
    int failed;
    char *err;
    size_t errlen;
} run_state;

/* Set by SIGINT/SIGTERM; the block loop looks at it between blocks. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const emu_library *library_of(const emu_chain *c, size_t k) { return &c->libraries[c->library_of[k]]; }

static const emu_actor_spec *spec_of(const run_state *s, size_t k) { return &s->c->topology->actors[k]; }

static int actor_message(char *msg, size_t len, const emu_actor_spec *a, const char *call, unsigned code)
{
    return emu_fail(msg, len, EMU_E_RUN, "actor '%s' (%s): %s returned error code %u: %s", a->name, a->library, call,
                    code, narval_strerror(code));
}

/* Every failure goes to the log as it happens (so that those met while
 * stopping the other actors come in order); err keeps the first. */
static int fail(run_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(run_state *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (s->o->log)
        fprintf(s->o->log, "narwhal: %s\n", line);
    if (!s->failed)
        snprintf(s->err, s->errlen, "%s", line);
    s->failed = 1;
    s->res->end = EMU_END_ERROR;
    return EMU_E_RUN;
}

static int actor_error(run_state *s, size_t k, const char *call, unsigned code)
{
    char line[1024];
    actor_message(line, sizeof line, spec_of(s, k), call, code);
    return fail(s, "%s", line);
}

static void trace(const run_state *s, size_t k, const char *call)
{
    if (s->o->trace)
        fprintf(s->o->trace, "narwhal: %s: %s\n", spec_of(s, k)->name, call);
}

int emu_configure(const emu_chain *c, const char *conf_dir, emu_run_result *res, FILE *trace_to, char *err,
                  size_t errlen)
{
    for (size_t lib = 0; lib < c->n_libraries; lib++) {
        size_t k = 0;
        while (c->library_of[k] != lib)
            k++;
        const emu_actor_spec *a = &c->topology->actors[k];
        if (trace_to)
            fprintf(trace_to, "narwhal: %s: process_config %s\n", a->name, conf_dir);
        unsigned code = 0;
        double t0 = now();
        c->libraries[lib].config(conf_dir, &code);
        res->actors[k].seconds += now() - t0;
        if (code)
            return actor_message(err, errlen, a, "process_config", code);
    }
    return EMU_OK;
}

/* An optional lifecycle call; a library without it succeeds at once. */
static int lifecycle(run_state *s, size_t k, narval_lifecycle_fn *fn, const char *call)
{
    trace(s, k, call);
    if (!fn)
        return EMU_OK;
    unsigned code = 0;
    double t0 = now();
    fn(s->instance[k], &code);
    s->res->actors[k].seconds += now() - t0;
    return code ? actor_error(s, k, call, code) : EMU_OK;
}

static int register_actor(run_state *s, size_t k)
{
    const emu_library *lib = library_of(s->c, k);
    unsigned code = 0;
    trace(s, k, "process_register");
    double t0 = now();
    s->instance[k] = lib->register_instance(&code);
    s->res->actors[k].seconds += now() - t0;
    if (code)
        return actor_error(s, k, "process_register", code);
    s->phase[k] = PHASE_REGISTERED;
    return lifecycle(s, k, lib->initialise, "process_initialise");
}

static int bring_up(run_state *s)
{
    for (size_t k = 0; k < s->n; k++)
        if (register_actor(s, k) != EMU_OK)
            return EMU_E_RUN;
    for (size_t k = 0; k < s->n; k++) {
        if (lifecycle(s, k, library_of(s->c, k)->start, "process_start") != EMU_OK)
            return EMU_E_RUN;
        s->phase[k] = PHASE_STARTED;
    }
    return EMU_OK;
}

/* Stop what was started, unload what was registered, in chain order; a
 * failure here is reported and the others still get their calls. */
static void wind_down(run_state *s)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->phase[k] == PHASE_STARTED)
            lifecycle(s, k, library_of(s->c, k)->stop, "process_stop");
    for (size_t k = 0; k < s->n; k++)
        if (s->phase[k] != PHASE_NONE) {
            lifecycle(s, k, library_of(s->c, k)->unload, "process_unload");
            s->phase[k] = PHASE_NONE;
        }
}

/* Top-level frames of a buffer; a malformed one is reported once per actor
 * (the next actor will refuse it) and counting stops there. */
static unsigned long long count_frames(run_state *s, size_t k, const uint8_t *data, unsigned size)
{
    adf_iter it;
    adf_frame f;
    unsigned long long n = 0;
    int rc;
    adf_iter_init(&it, data, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        n++;
    if (rc < 0 && !s->warned[k] && s->o->log) {
        char why[256];
        adf_iter_describe(&it, why, sizeof why);
        fprintf(s->o->log, "narwhal: warning: the output of '%s' is not well-formed ADF: %s\n", spec_of(s, k)->name,
                why);
        s->warned[k] = 1;
    }
    return n;
}

static int grow(run_state *s, size_t k, unsigned needed)
{
    const emu_actor_spec *a = spec_of(s, k);
    unsigned cap = s->cap[k];
    if (needed <= cap)
        return fail(s, "actor '%s' (%s): process_block asked for a larger output buffer but needs %u bytes, no more "
                       "than the %u it has",
                    a->name, a->library, needed, cap);
    if (needed > EMU_MAX_BUFFER)
        return fail(s, "actor '%s' (%s): process_block needs an output buffer of %u bytes, more than the emulator's "
                       "limit of %u (1 GiB)",
                    a->name, a->library, needed, EMU_MAX_BUFFER);
    unsigned size = cap >= EMU_MAX_BUFFER / 2 ? EMU_MAX_BUFFER : 2 * cap;
    if (size < needed)
        size = needed;
    uint8_t *grown = realloc(s->buf[k], size);
    if (!grown)
        return fail(s, "out of memory growing the output buffer of '%s' to %u bytes", a->name, size);
    if (s->o->trace)
        fprintf(s->o->trace, "narwhal: %s: output buffer grown from %u to %u bytes (it needed %u)\n", a->name, cap,
                size, needed);
    s->buf[k] = grown;
    s->cap[k] = size;
    s->res->actors[k].grown++;
    return EMU_OK;
}

static void account(run_state *s, size_t k, unsigned in_size, unsigned long long in_frames, unsigned used,
                    unsigned long long out_frames)
{
    emu_actor_stats *st = &s->res->actors[k];
    st->blocks++;
    st->bytes_in += in_size;
    st->frames_in += in_frames;
    st->bytes_out += used;
    st->frames_out += out_frames;
}

static void call_producer_or_filter(run_state *s, size_t k, uint8_t *in, unsigned in_size, unsigned *used,
                                    unsigned *code)
{
    void *block = library_of(s->c, k)->block;
    if (k == 0) {
        narval_producer_block_fn *fn;
        memcpy(&fn, &block, sizeof fn);
        fn(s->instance[k], s->buf[k], s->cap[k], used, code);
    } else {
        narval_filter_block_fn *fn;
        memcpy(&fn, &block, sizeof fn);
        fn(s->instance[k], in, in_size, s->buf[k], s->cap[k], used, code);
    }
}

/* One process_block of the producer (k == 0) or a filter, called again with
 * a larger output buffer for as long as the actor asks for one, so that no
 * frame is lost or emitted twice. */
static int call_block(run_state *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames,
                      unsigned *used, unsigned long long *out_frames)
{
    for (;;) {
        unsigned code = 0;
        *used = 0;
        double t0 = now();
        call_producer_or_filter(s, k, in, in_size, used, &code);
        s->res->actors[k].seconds += now() - t0;
        if (code == NARVAL_E_OUTPUT_SIZE) {
            if (grow(s, k, *used) != EMU_OK)
                return EMU_E_RUN;
            continue;
        }
        if (code)
            return actor_error(s, k, "process_block", code);
        if (*used > s->cap[k])
            return fail(s, "actor '%s' (%s): process_block reported %u bytes used in its %u-byte output buffer",
                        spec_of(s, k)->name, spec_of(s, k)->library, *used, s->cap[k]);
        *out_frames = count_frames(s, k, s->buf[k], *used);
        account(s, k, in_size, in_frames, *used, *out_frames);
        return EMU_OK;
    }
}

static int consume(run_state *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames)
{
    narval_consumer_block_fn *fn;
    void *block = library_of(s->c, k)->block;
    unsigned code = 0;
    memcpy(&fn, &block, sizeof fn);
    double t0 = now();
    fn(s->instance[k], in, in_size, &code);
    s->res->actors[k].seconds += now() - t0;
    if (code)
        return actor_error(s, k, "process_block", code);
    account(s, k, in_size, in_frames, 0, 0);
    return EMU_OK;
}

/* Hands a block to actor k and on down the chain.  It stops early when a
 * filter emits nothing: an empty input would tell the next one to flush. */
static int pass_down(run_state *s, size_t k, uint8_t *data, unsigned size, unsigned long long frames)
{
    for (; k + 1 < s->n; k++) {
        unsigned used;
        unsigned long long out_frames;
        if (call_block(s, k, data, size, frames, &used, &out_frames) != EMU_OK)
            return EMU_E_RUN;
        if (used == 0)
            return EMU_OK;
        data = s->buf[k];
        size = used;
        frames = out_frames;
    }
    return consume(s, s->n - 1, data, size, frames);
}

static int run_blocks(run_state *s)
{
    for (;;) {
        if (stop_signal) {
            s->res->end = EMU_END_SIGNAL;
            s->res->signal = stop_signal;
            return EMU_OK;
        }
        if (s->o->max_blocks && s->res->blocks >= s->o->max_blocks) {
            s->res->end = EMU_END_LIMIT;
            return EMU_OK;
        }
        unsigned used;
        unsigned long long frames;
        if (call_block(s, 0, NULL, 0, 0, &used, &frames) != EMU_OK)
            return EMU_E_RUN;
        if (used == 0) {
            s->res->end = EMU_END_DATA;
            return EMU_OK;
        }
        s->res->blocks++;
        if (pass_down(s, 1, s->buf[0], used, frames) != EMU_OK)
            return EMU_E_RUN;
    }
}

/* Every filter, in order, gets one call with an empty input; what it emits
 * then goes down the chain like any block.  Done however the run ended, short
 * of an error, so that frames an actor held back reach the outputs. */
static int flush(run_state *s)
{
    for (size_t k = 1; k + 1 < s->n; k++) {
        unsigned used;
        unsigned long long frames;
        trace(s, k, "process_block (flush: empty input)");
        if (call_block(s, k, s->buf[k - 1], 0, 0, &used, &frames) != EMU_OK)
            return EMU_E_RUN;
        if (used && pass_down(s, k + 1, s->buf[k], used, frames) != EMU_OK)
            return EMU_E_RUN;
    }
    return EMU_OK;
}

static int run_with_signals(run_state *s)
{
    struct sigaction act, old_int, old_term;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_signal;
    sigemptyset(&act.sa_mask);
    /* A second Ctrl-C while the chain winds down ends the process at once. */
    act.sa_flags = SA_RESTART | SA_RESETHAND;
    stop_signal = 0;
    sigaction(SIGINT, &act, &old_int);
    sigaction(SIGTERM, &act, &old_term);
    int rc = run_blocks(s);
    if (rc == EMU_OK)
        rc = flush(s);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

static int allocate(run_state *s)
{
    s->instance = calloc(s->n, sizeof *s->instance);
    s->phase = calloc(s->n, sizeof *s->phase);
    s->buf = calloc(s->n, sizeof *s->buf);
    s->cap = calloc(s->n, sizeof *s->cap);
    s->warned = calloc(s->n, 1);
    if (!s->instance || !s->phase || !s->buf || !s->cap || !s->warned)
        return fail(s, "out of memory");
    for (size_t k = 0; k + 1 < s->n; k++) {
        s->cap[k] = spec_of(s, k)->output_size;
        s->buf[k] = malloc(s->cap[k]);
        if (!s->buf[k])
            return fail(s, "out of memory allocating the %u-byte output buffer of '%s'", s->cap[k],
                        spec_of(s, k)->name);
    }
    return EMU_OK;
}

static void release(run_state *s)
{
    for (size_t k = 0; s->buf && s->cap && k < s->n; k++) {
        s->res->actors[k].buffer_size = s->cap[k];
        free(s->buf[k]);
    }
    free(s->instance);
    free(s->phase);
    free(s->buf);
    free(s->cap);
    free(s->warned);
}

int emu_run(const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err, size_t errlen)
{
    run_state s = {.c = c, .o = o, .res = res, .n = c->topology->n_actors, .err = err, .errlen = errlen};
    double t0 = now();
    res->end = EMU_END_DATA;
    int rc = allocate(&s);
    if (rc == EMU_OK) {
        char why[1024];
        rc = emu_configure(c, o->conf_dir, res, o->trace, why, sizeof why);
        if (rc != EMU_OK)
            fail(&s, "%s", why);
    }
    if (rc == EMU_OK)
        rc = bring_up(&s);
    if (rc == EMU_OK)
        rc = run_with_signals(&s);
    if (s.phase)
        wind_down(&s);
    res->wall_seconds = now() - t0;
    release(&s);
    return s.failed ? EMU_E_RUN : EMU_OK;
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
    memset(res, 0, sizeof *res);
}
