/* builder.c: the Builder filter: data:psa frames of several crystals within a time window become one event:data:psa frame. */
#define NARVAL_FILTER
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_core.h"
#include "kit.h"

typedef struct builder_conf {
    int64_t window, delay, max_held;
} builder_conf;

static const kit_key builder_keys[] = {
    { "Window", KIT_INT, offsetof(builder_conf, window), "50", KIT_RANGE(0, 1e15),
      .help = "10 ns ticks: frames within this of an event's first frame join it" },
    { "Delay", KIT_INT, offsetof(builder_conf, delay), "100000", KIT_RANGE(0, 1e15),
      .help = "10 ns ticks a frame may come late (after later ones) and still join its event" },
    { "MaxHeld", KIT_INT, offsetof(builder_conf, max_held), "100000", KIT_RANGE(1, 1e9),
      .help = "frames waiting at most; beyond, the oldest events close early (counted)" },
};

static const kit_spec builder_kit = {
    "Builder", "filter",
    "merges data:psa frames of several crystals within a time window into event:data:psa events",
    builder_keys, KIT_COUNT(builder_keys), sizeof(builder_conf),
};

static builder_conf conf;

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
    uint64_t passed, passed_block; /* other frames passed on */
    uint64_t eofs, eofs_block;     /* meta:eof frames passed on */
} builder;

/* Builds what is due from base and the fresh frames into w; flush closes everything. */
static unsigned build(builder *b, bool flush, adf_writer *w)
{
    if (bld_block(b->base, b->fresh, b->n_fresh, flush, w, &b->pending) != 0)
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
    b->eofs_block++;
    return KIT_PASS;
}

static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    builder *b = ctx;
    if (f->key.id == ADF_ID_META_EOF)
        return on_eof(b, out);
    if (f->key.id != ADF_ID_DATA_PSA) {
        b->passed_block++;
        return KIT_PASS;
    }
    if (b->n_fresh == b->cap_fresh) {
        size_t cap = b->cap_fresh ? 2 * b->cap_fresh : 1024;
        bld_frame *fresh = realloc(b->fresh, cap * sizeof *fresh);
        if (!fresh)
            return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory for %zu frames of a block", cap);
        b->fresh = fresh;
        b->cap_fresh = cap;
    }
    if (bld_frame_of(f, &b->fresh[b->n_fresh]) != 0)
        return kit_fail(b->k.name, NARVAL_E_INPUT, "data:psa at offset %zu: payload of %u bytes is "
                        "shorter than the %u-byte global part", f->offset, f->payload_size, ADF_PSA_GLOBAL);
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
            "%llu other frames passed on; %llu meta:eof passed on",
            (unsigned long long)c->events, (unsigned long long)c->frames, (long long)conf.window,
            (long long)conf.delay, (unsigned long long)c->late, (unsigned long long)c->forced,
            (unsigned long long)b->passed, (unsigned long long)b->eofs);
    log_folds(b);
    log_held(b, "stop");
    return 0;
}

/* A run's state, fresh: what start sets up and reset and unload discard. */
static void clear_run(builder *b)
{
    bld_conf c = { (uint64_t)conf.window, (uint64_t)conf.delay, (size_t)conf.max_held };
    bld_free(&b->state);
    bld_init(&b->state, &c);
    b->passed = 0;
    b->eofs = 0;
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
    b->passed_block = 0;
    b->eofs_block = 0;
    unsigned code = kit_filter_block(b->k.name, &ops, b, input_buffer, size_of_input_buffer, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
    if (code == 0)
        code = commit(b);
    if (code != 0 && code != NARVAL_E_OUTPUT_SIZE)
        *used_size_of_output_buffer = 0;
    *error_code = kit_leave(algo_data, KIT_BLOCK, code);
}

KIT_LIFECYCLE(NULL, builder_start, builder_stop, builder_reset, builder_release)
