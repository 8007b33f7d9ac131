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

/* Bytes of frames kept for later: the stream's meta:eof frames, written after the last events. */
typedef struct bytes {
    uint8_t *data;
    size_t n, cap;
} bytes;

typedef struct builder {
    kit_instance k;
    bld_state state;
    bld_pending pending;
    bld_frame *fresh;
    size_t n_fresh, cap_fresh;
    bytes eof;             /* held meta:eof frames */
    size_t eof_block;      /* bytes of eof added by this block (dropped again if it fails) */
    uint64_t passed, passed_block;
} builder;

static bool append(bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d)
            return false;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->n, data, n);
    b->n += n;
    return true;
}

static unsigned on_frame(void *ctx, const adf_frame *f, adf_writer *out)
{
    builder *b = ctx;
    (void)out;
    if (f->key.id == ADF_ID_META_EOF) {
        if (!append(&b->eof, f->data, f->key.length))
            return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory to hold a meta:eof frame");
        b->eof_block += f->key.length;
        return 0;
    }
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

static unsigned on_end(void *ctx, bool flush, adf_writer *w)
{
    builder *b = ctx;
    if (bld_block(&b->state, b->fresh, b->n_fresh, flush, w, &b->pending) != 0)
        return kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory to sort %zu frames",
                        b->state.n_held + b->n_fresh);
    if (flush && b->eof.n) {
        adf_iter it;
        adf_frame f;
        adf_iter_init(&it, b->eof.data, b->eof.n);
        while (adf_iter_next(&it, &f) > 0)
            adf_put_frame(w, f.data, f.key.length);
    }
    return 0;
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
            "%llu other frames passed on",
            (unsigned long long)c->events, (unsigned long long)c->frames, (long long)conf.window,
            (long long)conf.delay, (unsigned long long)c->late, (unsigned long long)c->forced,
            (unsigned long long)b->passed);
    log_folds(b);
    if (b->state.n_held)
        kit_log(b->k.name, KIT_WARN, "%zu frames still held at stop: the host did not flush", b->state.n_held);
    return 0;
}

static unsigned builder_start(void *algo_data)
{
    builder *b = algo_data;
    bld_conf c = { (uint64_t)conf.window, (uint64_t)conf.delay, (size_t)conf.max_held };
    bld_free(&b->state);
    bld_init(&b->state, &c);
    b->eof.n = 0;
    b->passed = 0;
    return 0;
}

static void builder_release(void *algo_data)
{
    builder *b = algo_data;
    bld_free(&b->state);
    bld_pending_free(&b->pending);
    free(b->fresh);
    free(b->eof.data);
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
    b->n_fresh = 0;
    b->eof_block = 0;
    b->passed_block = 0;
    bool flush = size_of_input_buffer == 0;
    unsigned code = kit_filter_block(b->k.name, &ops, b, input_buffer, size_of_input_buffer, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
    if (code == 0 && bld_commit(&b->state, &b->pending) != 0)
        code = kit_fail(b->k.name, NARVAL_E_NOMEM, "no memory to hold %zu frames",
                        b->pending.n_all - b->pending.closed);
    if (code == 0) {
        b->passed += b->passed_block;
        if (flush)
            b->eof.n = 0;
    } else {
        b->eof.n -= b->eof_block;
        if (code != NARVAL_E_OUTPUT_SIZE)
            *used_size_of_output_buffer = 0;
    }
    *error_code = kit_leave(algo_data, KIT_BLOCK, code);
}

KIT_LIFECYCLE(NULL, builder_start, builder_stop, builder_start, builder_release)
