/* writer.c: building frames with begin/put/end that never write past the capacity given. */
#include "adf.h"

#include <string.h>

/*
 * Two coordinate systems: `used` counts bytes really in buf, `needed` counts
 * bytes the calls asked for.  While the writer is healthy both grow together,
 * so their difference (the bytes of frames rolled back since init) maps an
 * open frame's start from needed-space to buf.
 */
static size_t lag(const adf_writer *w) { return w->needed - w->used; }

static void count(adf_writer *w, size_t n) { w->needed = n > SIZE_MAX - w->needed ? SIZE_MAX : w->needed + n; }

/* Records the first failure and drops every open frame, so buf keeps only complete frames. */
static int fail(adf_writer *w, int code)
{
    if (w->status == ADF_OK) {
        if (w->depth > 0)
            w->used = w->open[0] - lag(w);
        w->status = code;
    }
    return w->status;
}

/* Claims n bytes at the end of buf; NULL once the writer has failed or they do not fit. */
static uint8_t *claim(adf_writer *w, size_t n)
{
    if (w->status == ADF_OK && n > w->cap - w->used)
        fail(w, ADF_E_NOSPACE);
    if (w->status != ADF_OK) {
        count(w, n);
        return NULL;
    }
    uint8_t *p = w->buf + w->used;
    w->used += n;
    count(w, n);
    return p;
}

/* Children may only go into a composite; the parent's id is read back from its key in buf. */
static int parent_takes_children(const adf_writer *w)
{
    if (w->depth == 0)
        return 1;
    return adf_id_is_composite(adf_get_u32(w->buf + (w->open[w->depth - 1] - lag(w)) + 4));
}

void adf_writer_init(adf_writer *w, void *buf, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->buf = buf;
    w->cap = buf ? cap : 0;
}

int adf_begin(adf_writer *w, uint32_t id, uint32_t event, uint64_t timestamp)
{
    if (!w)
        return ADF_E_ARG;
    if (w->depth == ADF_MAX_DEPTH)
        return fail(w, ADF_E_NESTING);
    if (w->status == ADF_OK && !parent_takes_children(w))
        fail(w, ADF_E_NESTING);
    size_t start = w->needed;
    uint8_t *p = claim(w, ADF_KEY_SIZE);
    w->open[w->depth++] = start;
    if (!p)
        return w->status;
    adf_key key = {0, id, event, timestamp}; /* length patched by adf_end */
    adf_key_encode(p, &key);
    return ADF_OK;
}

uint8_t *adf_reserve(adf_writer *w, size_t n)
{
    if (!w)
        return NULL;
    if (w->depth == 0) {
        fail(w, ADF_E_NESTING);
        return NULL;
    }
    return claim(w, n);
}

int adf_put(adf_writer *w, const void *data, size_t n)
{
    if (!w)
        return ADF_E_ARG;
    if (!data && n > 0)
        return fail(w, ADF_E_ARG);
    uint8_t *p = adf_reserve(w, n);
    if (!p)
        return w->status;
    if (n > 0)
        memcpy(p, data, n);
    return ADF_OK;
}

int adf_put_le16(adf_writer *w, uint16_t v)
{
    uint8_t b[2];
    adf_put_u16(b, v);
    return adf_put(w, b, sizeof b);
}

int adf_put_le32(adf_writer *w, uint32_t v)
{
    uint8_t b[4];
    adf_put_u32(b, v);
    return adf_put(w, b, sizeof b);
}

int adf_put_le64(adf_writer *w, uint64_t v)
{
    uint8_t b[8];
    adf_put_u64(b, v);
    return adf_put(w, b, sizeof b);
}

int adf_put_lef32(adf_writer *w, float v)
{
    uint8_t b[4];
    adf_put_f32(b, v);
    return adf_put(w, b, sizeof b);
}

int adf_end(adf_writer *w)
{
    if (!w)
        return ADF_E_ARG;
    if (w->depth == 0)
        return w->status != ADF_OK ? w->status : fail(w, ADF_E_NESTING);
    size_t start = w->open[w->depth - 1];
    if (w->status == ADF_OK && w->needed - start > UINT32_MAX)
        fail(w, ADF_E_LIMIT);
    if (w->status == ADF_OK)
        adf_put_u32(w->buf + (start - lag(w)), (uint32_t)(w->needed - start));
    w->depth--;
    return w->status;
}

/* The frame must be one whole valid frame that may sit at the writer's depth. */
static int check_frame(const adf_writer *w, const void *frame, size_t length)
{
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, frame, length);
    it.depth = w->depth;
    int rc = adf_iter_next(&it, &f);
    if (rc < 0)
        return rc;
    return f.key.length == length ? ADF_OK : ADF_E_ARG;
}

int adf_put_frame(adf_writer *w, const void *frame, size_t length)
{
    if (!w)
        return ADF_E_ARG;
    if (!frame || length < ADF_KEY_SIZE)
        return fail(w, ADF_E_ARG);
    if (w->status == ADF_OK && !parent_takes_children(w))
        fail(w, ADF_E_NESTING);
    if (w->status == ADF_OK) {
        int rc = check_frame(w, frame, length);
        if (rc != ADF_OK)
            return fail(w, rc);
    }
    uint8_t *p = claim(w, length);
    if (!p)
        return w->status;
    memcpy(p, frame, length);
    return ADF_OK;
}

size_t adf_writer_needed(const adf_writer *w) { return w ? w->needed : 0; }

void adf_writer_clear_error(adf_writer *w)
{
    if (!w || w->status == ADF_OK)
        return;
    w->status = ADF_OK;
    w->depth = 0;
}
