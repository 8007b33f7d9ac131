/* builder.c: the Builder filter: data:psa frames of several crystals within a time window become one event:data:psa frame. */
#define NARVAL_FILTER
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_core.h"
#include "kit.h"
#include "kit_crystals.h"

typedef struct builder_conf {
    int64_t window, delay, max_held, max_bad;
    kit_list crystals;
} builder_conf;

static const kit_key builder_keys[] = {
    { "Window", KIT_INT, offsetof(builder_conf, window), "50", KIT_RANGE(0, 1e15),
      .help = "10 ns ticks: frames within this of an event's first frame join it" },
    { "Delay", KIT_INT, offsetof(builder_conf, delay), "100000", KIT_RANGE(0, 1e15),
      .help = "10 ns ticks a frame may come after later ones of its source and still join its event" },
    { "MaxHeld", KIT_INT, offsetof(builder_conf, max_held), "100000", KIT_RANGE(1, 1e9),
      .help = "frames waiting at most; beyond, the oldest events close early (logged once, counted)" },
    { "Crystals", KIT_LIST, offsetof(builder_conf, crystals), "none",
      .help = "crystal ids and ranges (0-2 5) whose streams are waited for from the start, even before "
              "their first frame or meta:sync; none: only the crystals met" },
    KIT_MAX_BAD_FRAMES(builder_conf, max_bad),
};

static unsigned read_crystals(const char *directory_path);

static const kit_spec builder_kit = {
    "Builder", "filter",
    "merges data:psa frames of several crystals within a time window into event:data:psa events",
    builder_keys, KIT_COUNT(builder_keys), sizeof(builder_conf), read_crystals,
};

static builder_conf conf;
static kit_crystals crystals; /* Crystals, read */

__attribute__((destructor)) static void free_crystals(void) { kit_crystals_free(&crystals); }

/* A block builds on `base`: the committed state, or, after a meta:eof in
 * the block, the state that flush leaves (`flushed`, which owns no memory).
 * Nothing of the committed state changes before the block succeeds, since
 * the host may call again with the same input after NARVAL_E_OUTPUT_SIZE. */
typedef struct builder {
    kit_instance k;
    bld_state state;
    bld_state flushed;
    const bld_state *base;
    bld_pending pending;
    bld_frame *fresh;
    size_t n_fresh, cap_fresh;
    bld_mark *marks;               /* the block's meta:sync frames */
    size_t n_marks, cap_marks;
    uint64_t passed, passed_block; /* other frames passed on */
    uint64_t eofs, eofs_block;     /* meta:eof frames passed on */
    uint64_t syncs, syncs_block;   /* meta:sync frames taken */
    bool max_held_said;            /* MaxHeld's warning went out this run */
} builder;

/* Builds what is due from base and the fresh frames into w; flush closes everything. */
static unsigned build(builder *b, bool flush, adf_writer *w)
{
    if (bld_block(b->base, b->fresh, b->n_fresh, b->marks, b->n_marks, flush, w, &b->pending) != 0)
        return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory to sort %zu frames",
                        b->base->n_held + b->n_fresh);
    return 0;
}

/* The end of a stream: every event held goes out before the meta:eof, which
 * the kit then copies on; the frames after it build on an empty state. */
static unsigned on_eof(builder *b, adf_writer *out)
{
    unsigned code = build(b, true, out);
    if (code)
        return code;
    bld_flushed(b->base, &b->pending, &b->flushed);
    b->base = &b->flushed;
    b->n_fresh = 0;
    b->n_marks = 0;
    b->eofs_block++;
    return KIT_PASS;
}

/* Room for one more element in a block's array (*v of *cap elements of size). */
static int grow(void **v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? 2 * *cap : 1024;
    void *bigger = realloc(*v, want * size);
    if (!bigger)
        return -1;
    *v = bigger;
    *cap = want;
    return 0;
}

/* A meta:sync: its crystal's stream has come that far.  It is taken, not
 * passed on: it describes one input stream, and the builder's output is one
 * stream of events whose consumers need no marks. */
static unsigned on_sync(builder *b, const adf_frame *f)
{
    adf_sync sync;
    int rc = adf_sync_read(f, &sync);
    if (rc != ADF_OK)
        return kit_bad_frame(b, f, "%s", adf_strerror(rc));
    if (grow((void **)&b->marks, b->n_marks, &b->cap_marks, sizeof *b->marks) != 0)
        return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory for %zu meta:sync of a block", b->n_marks + 1);
    b->marks[b->n_marks++] = (bld_mark){ sync.crystal_id, f->key.timestamp };
    b->syncs_block++;
    return 0;
}

static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    builder *b = ctx;
    if (f->key.id == ADF_ID_META_EOF)
        return on_eof(b, out);
    if (f->key.id == ADF_ID_META_SYNC)
        return on_sync(b, f);
    if (f->key.id != ADF_ID_DATA_PSA) {
        b->passed_block++;
        return KIT_PASS;
    }
    if (grow((void **)&b->fresh, b->n_fresh, &b->cap_fresh, sizeof *b->fresh) != 0)
        return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory for %zu frames of a block", b->n_fresh + 1);
    if (bld_frame_of(f, &b->fresh[b->n_fresh]) != 0)
        return kit_bad_frame(b, f, "payload of %u bytes, shorter than the %u-byte global part", f->payload_size,
                             ADF_PSA_GLOBAL);
    b->n_fresh++;
    return 0;
}

/* flush: the emulator's empty end-of-data call, a convenience; meta:eof does the same in-band. */
static unsigned on_end(void *ctx, bool flush, adf_writer *w)
{
    return build(ctx, flush, w);
}

/* The block succeeded: its state becomes the builder's. */
static unsigned commit(builder *b)
{
    bld_state *into = b->base == &b->flushed ? &b->flushed : &b->state;
    if (bld_commit(into, &b->pending) != 0)
        return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory to hold %zu frames",
                        b->pending.n_all - b->pending.closed);
    if (into == &b->flushed) {
        bld_free(&b->state);
        b->state = b->flushed;
    }
    b->passed += b->passed_block;
    b->eofs += b->eofs_block;
    b->syncs += b->syncs_block;
    if (b->pending.delta.forced && !b->max_held_said) {
        kit_log(b->k.name, KIT_WARN, "MaxHeld %lld reached: the oldest events go out before every source "
                "has passed them (a source's frames may come late and build events of their own); "
                "said once per run", (long long)conf.max_held);
        b->max_held_said = true;
    }
    return 0;
}

/* Frames still held when a run ends without meta:eof: never dropped without a word. */
static void log_held(const builder *b, const char *when)
{
    const bld_state *s = &b->state;
    if (s->n_held == 0)
        return;
    uint32_t first = s->held[0].event, last = first;
    for (size_t i = 1; i < s->n_held; i++) {
        first = s->held[i].event < first ? s->held[i].event : first;
        last = s->held[i].event > last ? s->held[i].event : last;
    }
    kit_log(b->k.name, KIT_WARN, "%zu frames held at %s (events %u..%u): no meta:eof came to close their "
            "events, so they are not built nor passed on", s->n_held, when, first, last);
}

static void log_folds(const builder *b)
{
    char line[1024] = "";
    size_t at = 0;
    for (int f = 0; f < BLD_FOLD_BINS && at < sizeof line - 40; f++)
        if (b->state.counts.fold[f])
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%d%s: %llu", at ? ", " : "", f + 1,
                                   f == BLD_FOLD_BINS - 1 ? "+" : "",
                                   (unsigned long long)b->state.counts.fold[f]);
    kit_log(b->k.name, KIT_INFO, "fold of the events: %s", at ? line : "none");
}

static unsigned builder_stop(void *algo_data)
{
    builder *b = algo_data;
    const bld_counts *c = &b->state.counts;
    kit_log(b->k.name, KIT_INFO, "built %llu events from %llu data:psa frames (window %lld ticks, delay %lld "
            "ticks); %llu frames came after their time was closed, %llu events closed early by MaxHeld; "
            "%llu other frames passed on; %llu meta:eof passed on; %llu meta:sync taken",
            (unsigned long long)c->events, (unsigned long long)c->frames, (long long)conf.window,
            (long long)conf.delay, (unsigned long long)c->late, (unsigned long long)c->forced,
            (unsigned long long)b->passed, (unsigned long long)b->eofs, (unsigned long long)b->syncs);
    log_folds(b);
    log_held(b, "stop");
    return 0;
}

/* A run's state, fresh: what start sets up and reset and unload discard. */
static void clear_run(builder *b)
{
    bld_conf c = { (uint64_t)conf.window, (uint64_t)conf.delay, (size_t)conf.max_held, crystals.id, crystals.n };
    bld_free(&b->state);
    bld_init(&b->state, &c);
    b->passed = 0;
    b->eofs = 0;
    b->syncs = 0;
    b->max_held_said = false;
}

static unsigned builder_start(void *algo_data)
{
    clear_run(algo_data);
    return 0;
}

static bool in_run(const builder *b) { return b->k.state == KIT_RUNNING || b->k.state == KIT_PAUSED; }

/* A reset in the middle of a run ends it: what is held is named, then discarded
 * (after a stop, the stop's log has named it already). */
static unsigned builder_reset(void *algo_data)
{
    builder *b = algo_data;
    if (in_run(b))
        log_held(b, "reset");
    clear_run(b);
    return 0;
}

static void builder_release(void *algo_data)
{
    builder *b = algo_data;
    if (in_run(b))
        log_held(b, "unload");
    bld_free(&b->state);
    bld_pending_free(&b->pending);
    free(b->fresh);
    free(b->marks);
}

/* Crystals: "none" (the default), or ids and ranges; "all" cannot be waited
 * for (the builder would wait for 65536 crystals). */
static unsigned read_crystals(const char *directory_path)
{
    kit_crystals c = { 0 };
    char msg[1024];
    unsigned code = 0;
    char *path = kit_conf_path(directory_path, builder_kit.actor);
    if (!path)
        return kit_fail(builder_kit.actor, NARVAL_E_NOMEM, "out of memory");
    if (!(conf.crystals.n == 1 && strcmp(conf.crystals.v[0], "none") == 0))
        code = kit_crystals_read(&conf.crystals, path, "Crystals", &c, msg, sizeof msg);
    if (!code && c.all) {
        unsigned line = conf.crystals.line ? conf.crystals.line[0] : 0;
        snprintf(msg, sizeof msg, "%s:%u: key 'Crystals': 'all' cannot be waited for: list the crystal ids "
                 "(0-2 5), or none", path, line);
        code = NARVAL_E_CONFIG;
    }
    free(path);
    if (code)
        return kit_fail(builder_kit.actor, code, "%s", msg);
    kit_crystals_free(&crystals);
    crystals = c;
    return 0;
}

void process_config(const char *directory_path, unsigned int *error_code)
{
    *error_code = kit_config(&builder_kit, directory_path, &conf);
}

const char *process_describe(void) { return kit_describe(&builder_kit); }

void *process_register(unsigned int *error_code) { return kit_register(sizeof(builder), error_code); }

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    static const kit_filter_ops ops = { on_frame, on_end };
    builder *b = algo_data;
    *used_size_of_output_buffer = 0;
    if ((*error_code = kit_enter(algo_data, KIT_BLOCK)) != 0)
        return;
    b->base = &b->state;
    b->n_fresh = 0;
    b->n_marks = 0;
    b->passed_block = 0;
    b->eofs_block = 0;
    b->syncs_block = 0;
    unsigned code = kit_filter_block(b, &ops, b, input_buffer, size_of_input_buffer, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
    if (code == 0)
        code = commit(b);
    if (code != 0 && code != NARVAL_E_OUTPUT_SIZE)
        *used_size_of_output_buffer = 0;
    *error_code = kit_leave(algo_data, KIT_BLOCK, code);
}

KIT_LIFECYCLE(NULL, builder_start, builder_stop, builder_reset, builder_release)
