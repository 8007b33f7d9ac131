/* calls.c: the process_* calls of a chain's actors, timed, counted, checked and reported; what both run loops share. */
#include "calls.h"
#include "counter.h"
#include "adf.h"
#include "emu.h"
#include "live.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by the signal handlers on whichever thread takes the signal, read by
 * the producer's: lock-free atomics are both async-signal-safe and
 * race-free.  SIGCONT is counted rather than flagged, and SIGTSTP notes the
 * count it came at, so that a SIGCONT sent before the pause began still
 * ends it. */
static atomic_int stop_signal, pause_signal;
static atomic_uint continued, continued_at_pause;

/* Said at once, from the handler (write is async-signal-safe), so that the
 * person who pressed Ctrl-C knows it was heard while the blocks in hand end;
 * on a terminal it first clears the progress line. */
static const char stopping[] = "narwhal: stopping: finishing the block in hand… (a second Ctrl-C quits at once)\n";
static int stderr_is_tty;

static void on_signal(int sig)
{
    if (atomic_exchange(&stop_signal, sig) != 0)
        return;
    if (stderr_is_tty && write(STDERR_FILENO, "\r\033[K", 4) < 0)
        return;
    if (write(STDERR_FILENO, stopping, sizeof stopping - 1) < 0)
        return;
}

static void on_pause_signal(int sig)
{
    atomic_store(&continued_at_pause, atomic_load(&continued));
    atomic_store(&pause_signal, sig);
}

static void on_continue_signal(int sig) { atomic_fetch_add(&continued, 1u); }

double emu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const emu_library *library_of(const emu_chain *c, size_t k) { return &c->libraries[c->library_of[k]]; }

static const emu_actor_spec *spec_of(const emu_calls *s, size_t k) { return &s->c->topology->actors[k]; }

static int actor_message(char *msg, size_t len, const emu_actor_spec *a, const char *call, unsigned code)
{
    return emu_fail(msg, len, EMU_E_RUN, "actor '%s' (%s): %s returned error code %u: %s", a->name, a->library, call,
                    code, narval_strerror(code));
}

/* Every failure goes to the log as it happens (so that those met while
 * stopping the other actors come in order); err keeps the first. */
int emu_calls_fail(emu_calls *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s->lock);
    if (s->o->log)
        fprintf(s->o->log, "narwhal: %s\n", line);
    if (!s->failed)
        snprintf(s->err, s->errlen, "%s", line);
    s->failed = 1;
    s->res->end = EMU_END_ERROR;
    pthread_mutex_unlock(&s->lock);
    emu_live_set_state(s->o->live, EMU_STATE_FAILED);
    return EMU_E_RUN;
}

void emu_calls_end(emu_calls *s, enum emu_end end)
{
    pthread_mutex_lock(&s->lock);
    if (!s->failed)
        s->res->end = end;
    pthread_mutex_unlock(&s->lock);
}

static int actor_error(emu_calls *s, size_t k, const char *call, unsigned code)
{
    char line[1024];
    actor_message(line, sizeof line, spec_of(s, k), call, code);
    return emu_calls_fail(s, "%s", line);
}

static void trace(const emu_calls *s, size_t k, const char *call)
{
    if (s->o->trace)
        fprintf(s->o->trace, "narwhal: %s: %s\n", spec_of(s, k)->name, call);
}

static enum emu_role role_of(const emu_calls *s, size_t k) { return spec_of(s, k)->role; }

/* -v: a process_block with what it is handed; a consumer has no output. */
static void trace_block(const emu_calls *s, size_t k, unsigned in_size, const char *note)
{
    if (!s->o->trace)
        return;
    const char *name = spec_of(s, k)->name;
    if (role_of(s, k) == EMU_PRODUCER)
        fprintf(s->o->trace, "narwhal: %s: process_block out=%u\n", name, s->size[k]);
    else if (role_of(s, k) == EMU_FILTER)
        fprintf(s->o->trace, "narwhal: %s: process_block in=%u out=%u%s\n", name, in_size, s->size[k], note);
    else
        fprintf(s->o->trace, "narwhal: %s: process_block in=%u\n", name, in_size);
}

int emu_configure(const emu_chain *c, emu_run_result *res, FILE *trace_to, char *err, size_t errlen)
{
    for (size_t lib = 0; lib < c->n_libraries; lib++) {
        size_t k = emu_chain_first_actor(c, lib);
        while (k < c->topology->n_actors && (c->library_of[k] != lib || !emu_chain_runs(c, k)))
            k++;
        if (k == c->topology->n_actors) /* under mpirun: none of its actors on this rank */
            continue;
        const emu_actor_spec *a = &c->topology->actors[k];
        const char *dir = c->libraries[lib].conf_dir;
        if (trace_to)
            fprintf(trace_to, "narwhal: %s: process_config %s\n", a->name, dir);
        unsigned code = 0;
        double t0 = emu_now();
        c->libraries[lib].config(dir, &code);
        res->actors[k].seconds += emu_now() - t0;
        if (code)
            return actor_message(err, errlen, a, "process_config", code);
    }
    return EMU_OK;
}

int emu_calls_init(emu_calls *s, const emu_chain *c, const emu_run_options *o, emu_run_result *res, char *err,
                   size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->o = o;
    s->res = res;
    s->n = c->topology->n_actors;
    s->err = err;
    s->errlen = errlen;
    pthread_mutex_init(&s->lock, NULL);
    s->instance = calloc(s->n, sizeof *s->instance);
    s->registered = calloc(s->n, 1);
    s->size = calloc(s->n, sizeof *s->size);
    s->warned = calloc(s->n, 1);
    if (!s->instance || !s->registered || !s->size || !s->warned)
        return emu_calls_fail(s, "out of memory");
    for (size_t k = 0; k < s->n; k++)
        s->size[k] = role_of(s, k) == EMU_CONSUMER ? 0 : spec_of(s, k)->output_size;
    return EMU_OK;
}

void emu_calls_free(emu_calls *s)
{
    for (size_t k = 0; s->size && k < s->n; k++)
        s->res->actors[k].buffer_size = s->size[k];
    free(s->instance);
    free(s->registered);
    free(s->size);
    free(s->warned);
    pthread_mutex_destroy(&s->lock);
}

/* An optional lifecycle call; a library without it succeeds at once. */
static int lifecycle(emu_calls *s, size_t k, narval_lifecycle_fn *fn, const char *call)
{
    trace(s, k, call);
    if (!fn)
        return EMU_OK;
    unsigned code = 0;
    double t0 = emu_now();
    fn(s->instance[k], &code);
    s->res->actors[k].seconds += emu_now() - t0;
    return code ? actor_error(s, k, call, code) : EMU_OK;
}

/* After a successful initialise: the device the instance chose, for the table (narval.h: process_device). */
static void ask_device(emu_calls *s, size_t k)
{
    const emu_library *lib = library_of(s->c, k);
    char *device = s->res->actors[k].device;
    device[0] = '\0';
    if (lib->device) {
        lib->device(s->instance[k], device, sizeof s->res->actors[k].device);
        device[sizeof s->res->actors[k].device - 1] = '\0';
    }
}

static int register_actor(emu_calls *s, size_t k)
{
    const emu_library *lib = library_of(s->c, k);
    unsigned code = 0;
    trace(s, k, "process_register");
    double t0 = emu_now();
    s->instance[k] = lib->register_instance(&code);
    s->res->actors[k].seconds += emu_now() - t0;
    if (code)
        return actor_error(s, k, "process_register", code);
    s->registered[k] = 1;
    int rc = lifecycle(s, k, lib->initialise, "process_initialise");
    if (rc == EMU_OK)
        ask_device(s, k);
    return rc;
}

int emu_calls_register(emu_calls *s)
{
    for (size_t k = 0; k < s->n; k++)
        if (emu_chain_runs(s->c, k) && register_actor(s, k) != EMU_OK)
            return EMU_E_RUN;
    return EMU_OK;
}

static const char *const call_names[] = {
    [EMU_CALL_INITIALISE] = "process_initialise", [EMU_CALL_START] = "process_start",
    [EMU_CALL_PAUSE] = "process_pause",           [EMU_CALL_RESUME] = "process_resume",
    [EMU_CALL_STOP] = "process_stop",             [EMU_CALL_RESET] = "process_reset",
    [EMU_CALL_UNLOAD] = "process_unload",
};

static narval_lifecycle_fn *function_of(const emu_library *lib, enum emu_call call)
{
    switch (call) {
    case EMU_CALL_INITIALISE: return lib->initialise;
    case EMU_CALL_START: return lib->start;
    case EMU_CALL_PAUSE: return lib->pause;
    case EMU_CALL_RESUME: return lib->resume;
    case EMU_CALL_STOP: return lib->stop;
    case EMU_CALL_RESET: return lib->reset;
    case EMU_CALL_UNLOAD: break;
    }
    return lib->unload;
}

int emu_calls_every(emu_calls *s, enum emu_call call)
{
    int rc = EMU_OK;
    for (size_t k = 0; k < s->n; k++) {
        if (!emu_chain_runs(s->c, k) || (call == EMU_CALL_UNLOAD && !s->registered[k]))
            continue;
        if (lifecycle(s, k, function_of(library_of(s->c, k), call), call_names[call]) != EMU_OK) {
            rc = EMU_E_RUN;
            if (call != EMU_CALL_STOP && call != EMU_CALL_UNLOAD)
                return rc;
        }
        if (call == EMU_CALL_INITIALISE)
            ask_device(s, k);
        if (call == EMU_CALL_UNLOAD)
            s->registered[k] = 0;
    }
    return rc;
}

static void count_kind(emu_actor_stats *st, uint32_t id, int inside)
{
    unsigned i = 0;
    while (i < st->n_kinds && st->kinds[i].id != id)
        i++;
    if (i == EMU_MAX_KINDS) {
        st->other_kinds++;
        return;
    }
    if (i == st->n_kinds)
        st->kinds[st->n_kinds++] = (emu_kind_count){.id = id};
    if (inside)
        st->kinds[i].inside++;
    else
        st->kinds[i].frames++;
}

/* The sub-frames of a composite payload, at every depth, checked already
 * (adf_validate, adf_iter_next): walked by their lengths alone. */
static void count_members(emu_actor_stats *st, const uint8_t *payload, size_t size)
{
    for (size_t at = 0; at + ADF_KEY_SIZE <= size;) {
        uint32_t length = adf_get_u32(payload + at), id = adf_get_u32(payload + at + 4);
        count_kind(st, id, 1);
        if (adf_id_is_composite(id))
            count_members(st, payload + at + ADF_KEY_SIZE, length - ADF_KEY_SIZE);
        at += length;
    }
}

static void count_top(emu_actor_stats *st, uint32_t id, emu_live_out *out)
{
    out->frames++;
    out->crystals += id == ADF_ID_NW_CRYSTAL || id == ADF_ID_DATA_PSA;
    out->events += (adf_id_is_composite(id) && id != ADF_ID_EVENT_DATA_CRYSTAL) || id == ADF_ID_NW_TRACKED;
    count_kind(st, id, 0);
}

/* Top-level frames of a buffer (all, crystal-events, events: the live
 * view's, counted here so that a block is walked once), and every frame by
 * key id in st; counting stops before a malformed frame, and then the
 * return is -1 with why.  A well-formed buffer (adf_validate's one walk) is
 * counted by its lengths alone; a malformed one through the iterator, for
 * its description.  Touches st, out and why only: the counter's thread
 * runs it too. */
static int count_into(emu_actor_stats *st, const uint8_t *data, unsigned size, emu_live_out *out, char *why,
                      size_t len)
{
    *out = (emu_live_out){ 0 };
    if (adf_validate(data, size, NULL, NULL) == ADF_OK) {
        for (size_t at = 0; at < size;) {
            uint32_t length = adf_get_u32(data + at), id = adf_get_u32(data + at + 4);
            count_top(st, id, out);
            if (adf_id_is_composite(id))
                count_members(st, data + at + ADF_KEY_SIZE, length - ADF_KEY_SIZE);
            at += length;
        }
        return 0;
    }
    adf_iter it;
    adf_frame f;
    int rc;
    adf_iter_init(&it, data, size);
    while ((rc = adf_iter_next(&it, &f)) > 0) {
        count_top(st, f.key.id, out);
        if (adf_id_is_composite(f.key.id))
            count_members(st, f.payload, f.payload_size);
    }
    if (rc >= 0)
        return 0;
    adf_iter_describe(&it, why, len);
    return -1;
}

/* Actor k's output is malformed: said once per actor (the next actor will refuse it). */
static void warn_malformed(emu_calls *s, size_t k, const char *why)
{
    if (s->warned[k] || !s->o->log)
        return;
    fprintf(s->o->log, "narwhal: warning: the output of '%s' is not well-formed ADF: %s\n", spec_of(s, k)->name, why);
    s->warned[k] = 1;
}

/* Actor k's output counted here and now. */
static void count_frames(emu_calls *s, size_t k, const uint8_t *data, unsigned size, emu_live_out *out)
{
    char why[256];
    double t0 = emu_now();
    int rc = count_into(&s->res->actors[k], data, size, out, why, sizeof why);
    s->res->actors[k].count_seconds += emu_now() - t0;
    if (rc < 0)
        warn_malformed(s, k, why);
}

/* The counter's job: s->pending's block into its actor's kinds. */
static void count_pending(void *ctx)
{
    emu_pending *p = ctx;
    p->malformed = count_into(&p->s->res->actors[p->k], p->data, p->size, &p->out, p->why, sizeof p->why) < 0;
}

/* Actor k's output of used bytes to count on the counter's thread. */
static void post_count(emu_calls *s, size_t k, const uint8_t *data, unsigned used)
{
    emu_calls_settle(s); /* one job at a time */
    s->pending = (emu_pending){.s = s, .k = k, .data = data, .size = used, .posted = 1};
    emu_counter_post(s->counter, count_pending, &s->pending);
}

unsigned long long emu_calls_settle(emu_calls *s)
{
    emu_pending *p = &s->pending;
    if (!p->posted)
        return 0;
    if (!p->settled) {
        emu_actor_stats *st = &s->res->actors[p->k];
        double t0 = emu_now();
        emu_counter_wait(s->counter);
        st->count_seconds += emu_now() - t0;
        st->frames_out += p->out.frames;
        emu_live_counted(s->o->live, p->k, &p->out);
        if (p->malformed)
            warn_malformed(s, p->k, p->why);
        p->settled = 1;
    }
    return p->out.frames;
}

/* Makes out as large as actor k's size (emu_buffer_fit: what it held is not kept). */
static int fit(emu_calls *s, size_t k, emu_buffer *out)
{
    if (emu_buffer_fit(out, s->size[k]))
        return emu_calls_fail(s, "out of memory for a %u-byte output buffer of '%s'", s->size[k], spec_of(s, k)->name);
    return EMU_OK;
}

/* --strict: NARVAL gives an actor the topology's size and nothing more. */
static int strict_size_error(emu_calls *s, size_t k, unsigned needed)
{
    const emu_actor_spec *a = spec_of(s, k);
    return emu_calls_fail(s, "actor '%s' (%s): process_block needs an output buffer of %u bytes, more than the %u "
                             "of its <size output_buffer=\"%s\"> (%s:%ld); --strict keeps the topology's sizes: "
                             "raise that <size> to at least %u",
                          a->name, a->library, needed, s->size[k], a->size_buffer ? a->size_buffer : a->output,
                          s->c->topology->path, a->size_line, needed);
}

/* After NARVAL_E_OUTPUT_SIZE: actor k's size becomes what it needs, at
 * least twice the old one (few retries), at most EMU_MAX_BUFFER; with
 * --strict the run stops. */
static int grow(emu_calls *s, size_t k, unsigned needed, emu_buffer *out)
{
    const emu_actor_spec *a = spec_of(s, k);
    unsigned old = s->size[k];
    if (needed <= old)
        return emu_calls_fail(s, "actor '%s' (%s): process_block asked for a larger output buffer but needs %u bytes, "
                                 "no more than the %u it has",
                              a->name, a->library, needed, old);
    if (s->o->strict)
        return strict_size_error(s, k, needed);
    if (needed > EMU_MAX_BUFFER)
        return emu_calls_fail(s, "actor '%s' (%s): process_block needs an output buffer of %u bytes, more than the "
                                 "emulator's limit of %u (1 GiB)",
                              a->name, a->library, needed, EMU_MAX_BUFFER);
    unsigned size = old >= EMU_MAX_BUFFER / 2 ? EMU_MAX_BUFFER : 2 * old;
    s->size[k] = size < needed ? needed : size;
    if (s->o->trace)
        fprintf(s->o->trace, "narwhal: %s: output buffer grown from %u to %u bytes (it needed %u)\n", a->name, old,
                s->size[k], needed);
    s->res->actors[k].grown++;
    return fit(s, k, out);
}

static void account(emu_calls *s, size_t k, unsigned in_size, unsigned long long in_frames, unsigned used,
                    unsigned long long out_frames)
{
    emu_actor_stats *st = &s->res->actors[k];
    st->blocks++;
    st->bytes_in += in_size;
    st->frames_in += in_frames;
    st->bytes_out += used;
    st->frames_out += out_frames;
}

static void call_producer_or_filter(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, emu_buffer *out,
                                    unsigned *used, unsigned *code)
{
    void *block = library_of(s->c, k)->block;
    if (role_of(s, k) == EMU_PRODUCER) {
        narval_producer_block_fn *fn;
        memcpy(&fn, &block, sizeof fn);
        fn(s->instance[k], out->data, s->size[k], used, code);
    } else {
        narval_filter_block_fn *fn;
        memcpy(&fn, &block, sizeof fn);
        fn(s->instance[k], in, in_size, out->data, s->size[k], used, code);
    }
}

static double add_time(emu_calls *s, size_t k, double t0)
{
    double dt = emu_now() - t0;
    s->res->actors[k].seconds += dt;
    s->res->actors[k].block_seconds += dt;
    return dt;
}

/* A non-empty producer block, in the session's count and the run's;
 * pipelined, several producers' threads count. */
static void count_producer_block(emu_calls *s)
{
    pthread_mutex_lock(&s->lock);
    s->res->blocks++;
    s->cycle->blocks++;
    pthread_mutex_unlock(&s->lock);
}

static int call_block(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames,
                      emu_buffer *out, unsigned *used, unsigned long long *out_frames, const char *note)
{
    if (fit(s, k, out) != EMU_OK)
        return EMU_E_RUN;
    for (double spent = 0;;) {
        unsigned code = 0;
        *used = 0;
        trace_block(s, k, in_size, note);
        emu_live_call_begins(s->o->live, k);
        double t0 = emu_now();
        call_producer_or_filter(s, k, in, in_size, out, used, &code);
        spent += add_time(s, k, t0);
        if (in_frames == EMU_FRAMES_PENDING) /* before an error of k's, as the warning it may explain */
            in_frames = emu_calls_settle(s);
        if (code == NARVAL_E_OUTPUT_SIZE) {
            if (grow(s, k, *used, out) != EMU_OK)
                return EMU_E_RUN;
            continue;
        }
        if (code)
            return actor_error(s, k, "process_block", code);
        if (*used > s->size[k])
            return emu_calls_fail(s, "actor '%s' (%s): process_block reported %u bytes used in its %u-byte output "
                                     "buffer",
                                  spec_of(s, k)->name, spec_of(s, k)->library, *used, s->size[k]);
        emu_live_out counted = { 0 };
        int later = s->counter && *used > 0;
        if (!later)
            count_frames(s, k, out->data, *used, &counted);
        account(s, k, in_size, in_frames, *used, counted.frames);
        emu_live_call_ends(s->o->live, k, s->instance[k], (unsigned long long)(spent * 1e9), in_size, in_frames,
                           *used, &counted);
        if (role_of(s, k) == EMU_PRODUCER && *used > 0)
            count_producer_block(s);
        *out_frames = later ? EMU_FRAMES_PENDING : counted.frames;
        if (later) /* the last of k's stats written here: the counter's thread writes its frames and kinds */
            post_count(s, k, out->data, *used);
        return EMU_OK;
    }
}

int emu_calls_block(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames,
                    emu_buffer *out, unsigned *used, unsigned long long *out_frames)
{
    return call_block(s, k, in, in_size, in_frames, out, used, out_frames, "");
}

int emu_calls_flush(emu_calls *s, size_t k, emu_buffer *out, unsigned *used, unsigned long long *out_frames)
{
    /* A valid pointer, as some actors may not expect NULL even with size 0;
     * the input is read-only for them, so one byte serves every thread. */
    static uint8_t no_input[1];
    return call_block(s, k, no_input, 0, 0, out, used, out_frames, " (flush: empty input)");
}

int emu_calls_consume(emu_calls *s, size_t k, uint8_t *in, unsigned in_size, unsigned long long in_frames)
{
    narval_consumer_block_fn *fn;
    void *block = library_of(s->c, k)->block;
    unsigned code = 0;
    memcpy(&fn, &block, sizeof fn);
    trace_block(s, k, in_size, "");
    emu_live_call_begins(s->o->live, k);
    double t0 = emu_now();
    fn(s->instance[k], in, in_size, &code);
    double spent = add_time(s, k, t0);
    if (in_frames == EMU_FRAMES_PENDING)
        in_frames = emu_calls_settle(s);
    if (code)
        return actor_error(s, k, "process_block", code);
    account(s, k, in_size, in_frames, 0, 0);
    emu_live_call_ends(s->o->live, k, s->instance[k], (unsigned long long)(spent * 1e9), in_size, in_frames, 0,
                       &(emu_live_out){ 0 });
    return EMU_OK;
}

static void catch(int sig, void (*handler)(int), int flags, struct sigaction *old)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART | flags;
    sigaction(sig, &act, old);
}

void emu_calls_catch_signals(emu_saved_signals *saved)
{
    atomic_store(&stop_signal, 0);
    atomic_store(&pause_signal, 0);
    stderr_is_tty = isatty(STDERR_FILENO);
    catch(SIGINT, on_signal, SA_RESETHAND, &saved->old[0]);
    catch(SIGTERM, on_signal, SA_RESETHAND, &saved->old[1]);
    catch(SIGTSTP, on_pause_signal, 0, &saved->old[2]);
    catch(SIGCONT, on_continue_signal, 0, &saved->old[3]);
}

void emu_calls_restore_signals(const emu_saved_signals *saved)
{
    sigaction(SIGINT, &saved->old[0], NULL);
    sigaction(SIGTERM, &saved->old[1], NULL);
    sigaction(SIGTSTP, &saved->old[2], NULL);
    sigaction(SIGCONT, &saved->old[3], NULL);
}

int emu_calls_signalled(emu_calls *s)
{
    int sig = atomic_load(&stop_signal);
    if (!sig)
        return 0;
    pthread_mutex_lock(&s->lock);
    s->res->signal = sig;
    pthread_mutex_unlock(&s->lock);
    emu_calls_end(s, EMU_END_SIGNAL);
    if (!s->failed)
        emu_live_set_state(s->o->live, EMU_STATE_STOPPING);
    return 1;
}

int emu_calls_producer_done(emu_calls *s, unsigned long long blocks)
{
    if (emu_calls_signalled(s))
        return 1;
    if (s->o->max_blocks && blocks >= s->o->max_blocks) {
        emu_calls_end(s, EMU_END_LIMIT);
        return 1;
    }
    return 0;
}

int emu_calls_pause_due(emu_calls *s, unsigned long long round, int *wait)
{
    *wait = atomic_exchange(&pause_signal, 0) != 0;
    return *wait || (s->o->pause_every && round % s->o->pause_every == 0);
}

/* Until a SIGCONT that came after the SIGTSTP: stopped by SIGSTOP (the
 * shell sees the job stop, `fg` continues it), then polling, as the
 * SIGCONT handler may run on another thread a little later. */
static void wait_for_continue(emu_calls *s)
{
    unsigned at = atomic_load(&continued_at_pause);
    const struct timespec poll = {.tv_nsec = 10 * 1000 * 1000};
    if (atomic_load(&continued) != at)
        return;
    if (s->o->log) {
        fprintf(s->o->log, "narwhal: paused at SIGTSTP after %llu producer blocks of run %u; SIGCONT resumes\n",
                s->cycle->blocks, s->res->runs);
        fflush(s->o->log);
    }
    raise(SIGSTOP);
    while (atomic_load(&continued) == at)
        nanosleep(&poll, NULL);
}

int emu_calls_pause(emu_calls *s, int wait)
{
    if (emu_calls_every(s, EMU_CALL_PAUSE) != EMU_OK)
        return EMU_E_RUN;
    if (wait)
        wait_for_continue(s);
    if (emu_calls_every(s, EMU_CALL_RESUME) != EMU_OK)
        return EMU_E_RUN;
    s->res->pauses++;
    s->cycle->pauses++;
    return EMU_OK;
}
