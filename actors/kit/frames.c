/* frames.c: the frame loop of a filter's process_block: validated input, bounded output, size negotiation. */
#include <limits.h>

#include "kit.h"

/* After one call of the actor's code: a frame that did not fit is remembered
 * (the loop goes on to learn the size the block needs); any other writer
 * failure, or a frame left open, is a bug of the actor. */
static unsigned check_writer(const char *who, adf_writer *w, bool *overflow, size_t offset)
{
    if (w->depth != 0)
        return kit_fail(who, NARVAL_E_INTERNAL, "frame at offset %zu: output frame left open",
                        offset);
    if (w->status == ADF_E_NOSPACE) {
        *overflow = true;
        adf_writer_clear_error(w);
    } else if (w->status != ADF_OK) {
        return kit_fail(who, NARVAL_E_INTERNAL, "frame at offset %zu: writing the output: %s",
                        offset, adf_strerror(w->status));
    }
    return 0;
}

static unsigned run_frames(const char *who, const kit_filter_ops *ops, void *ctx, adf_iter *it,
                           adf_writer *w, bool *overflow)
{
    adf_frame f;
    char where[512];
    int rc;
    while ((rc = adf_iter_next(it, &f)) > 0) {
        size_t before = adf_writer_needed(w);
        unsigned code = ops->frame(ctx, &f, w);
        if (code == KIT_PASS) {
            adf_put_frame(w, f.data, f.key.length); /* a failure stays in w->status */
            code = 0;
        }
        if (code == KIT_BAD && adf_writer_needed(w) == before && w->depth == 0)
            continue;
        if (code) {
            kit_where(&f, where, sizeof where);
            return kit_fail(who, code == KIT_BAD ? NARVAL_E_INTERNAL : code, "%s: not processed%s", where,
                            code == KIT_BAD ? " (output written for a bad frame)" : "");
        }
        if ((code = check_writer(who, w, overflow, f.offset)) != 0)
            return code;
    }
    if (rc < 0) {
        char msg[256];
        adf_iter_describe(it, msg, sizeof msg);
        kit_where_at(it->buf, it->size, it->pos, where, sizeof where);
        return kit_fail(who, NARVAL_E_INPUT, "input block of %zu bytes: %s: %s", it->size, where, msg);
    }
    return 0;
}

unsigned kit_filter_block(void *algo_data, const kit_filter_ops *ops, void *ctx, const void *in,
                          unsigned in_size, void *out, unsigned out_size, unsigned *used)
{
    const char *who = kit_name(algo_data);
    adf_iter it;
    adf_writer w;
    bool overflow = false;
    unsigned code;
    *used = 0;
    if (!ops || !ops->frame || (!in && in_size) || (!out && out_size))
        return kit_fail(who, NARVAL_E_INTERNAL, "kit_filter_block called without %s",
                        !ops || !ops->frame ? "a frame function" : "a buffer");
    adf_iter_init(&it, in, in_size);
    adf_writer_init(&w, out, out_size);
    kit_bad_begin(algo_data, in, in_size);
    if ((code = run_frames(who, ops, ctx, &it, &w, &overflow)) != 0) {
        kit_bad_discard(algo_data);
        return code;
    }
    if (ops->end && (code = ops->end(ctx, in_size == 0, &w)) != 0)
        code = kit_fail(who, code, "end of the block of %u bytes not processed", in_size);
    else if (ops->end)
        code = check_writer(who, &w, &overflow, in_size);
    if (!code && overflow) {
        size_t needed = adf_writer_needed(&w);
        if (needed > UINT_MAX)
            code = kit_fail(who, NARVAL_E_DATA, "the output of this block needs %zu bytes, more "
                            "than a NARVAL buffer can hold", needed);
        else {
            kit_log(who, KIT_DEBUG, "output needs %zu bytes, the buffer has %u", needed, out_size);
            *used = (unsigned)needed;
            code = NARVAL_E_OUTPUT_SIZE;
        }
    }
    if (code) {
        kit_bad_discard(algo_data);
        return code;
    }
    if ((code = kit_bad_commit(algo_data)) == 0)
        *used = (unsigned)w.used;
    return code;
}
