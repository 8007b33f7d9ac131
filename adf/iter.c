/* iter.c: the validating frame iterator; a frame is handed out only once it and all its sub-frames check. */
#include "adf.h"

#include <stdio.h>

static int fail(adf_iter *it, int code, size_t pos, uint32_t length, size_t room, int depth)
{
    it->status = code;
    it->err_offset = it->base_offset + pos;
    it->err_length = length;
    it->err_room = room;
    it->err_depth = depth;
    return code;
}

/*
 * Checks the frame at buf[pos] that may take at most `room` bytes, at nesting
 * depth `depth`.  `overrun` is the code for a length beyond room: the end of
 * the buffer at the top, the end of the parent below it.  Recursion is bounded
 * by ADF_MAX_DEPTH and each sub-frame advances by at least a key, so hostile
 * input costs at most one pass over its keys.
 */
static int check_frame(adf_iter *it, size_t pos, size_t room, int depth, int overrun)
{
    if (room < 4)
        return fail(it, overrun, pos, 0, room, depth);
    const uint8_t *p = it->buf + pos;
    uint32_t length = adf_get_u32(p);
    if (length < ADF_KEY_SIZE)
        return fail(it, ADF_E_SHORT, pos, length, room, depth);
    if (length > room)
        return fail(it, overrun, pos, length, room, depth);
    if (depth >= ADF_MAX_DEPTH)
        return fail(it, ADF_E_TOO_DEEP, pos, length, room, depth);
    if (!adf_id_is_composite(adf_get_u32(p + 4)))
        return ADF_OK;
    size_t end = pos + length;
    for (size_t sub = pos + ADF_KEY_SIZE; sub < end; sub += adf_get_u32(it->buf + sub)) {
        int rc = check_frame(it, sub, end - sub, depth + 1, ADF_E_SUB_OVERRUN);
        if (rc != ADF_OK)
            return rc;
    }
    return ADF_OK;
}

void adf_iter_init(adf_iter *it, const void *buf, size_t size)
{
    *it = (adf_iter){.buf = buf, .size = size};
    if (!buf && size > 0) {
        it->size = 0;
        it->status = ADF_E_ARG;
    }
}

int adf_iter_sub(adf_iter *it, const adf_frame *parent)
{
    if (!it || !parent || !parent->data)
        return ADF_E_ARG;
    if (!adf_id_is_composite(parent->key.id))
        return ADF_E_WRONG_ID;
    adf_iter_init(it, parent->payload, parent->payload_size);
    it->base_offset = parent->offset + ADF_KEY_SIZE;
    it->depth = parent->depth + 1;
    return ADF_OK;
}

int adf_iter_next(adf_iter *it, adf_frame *frame)
{
    if (!it || !frame)
        return ADF_E_ARG;
    if (it->status != ADF_OK)
        return it->status;
    if (it->pos == it->size)
        return 0;
    int overrun = it->depth > 0 ? ADF_E_SUB_OVERRUN : ADF_E_PAST_END;
    int rc = check_frame(it, it->pos, it->size - it->pos, it->depth, overrun);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = it->buf + it->pos;
    adf_key_decode(p, &frame->key);
    frame->data = p;
    frame->payload = p + ADF_KEY_SIZE;
    frame->payload_size = frame->key.length - ADF_KEY_SIZE;
    frame->offset = it->base_offset + it->pos;
    frame->depth = it->depth;
    it->pos += frame->key.length;
    return 1;
}

void adf_iter_describe(const adf_iter *it, char *msg, size_t len)
{
    if (!msg || len == 0)
        return;
    if (!it) {
        snprintf(msg, len, "no iterator");
        return;
    }
    const char *what = it->err_depth > 0 ? "sub-frame" : "frame";
    size_t off = it->err_offset;
    switch (it->status) {
    case ADF_OK:
        snprintf(msg, len, "no error (at offset %zu of %zu bytes)", it->base_offset + it->pos, it->size);
        break;
    case ADF_E_SHORT:
        snprintf(msg, len, "%s at offset %zu: length %u is below the %u-byte key", what, off,
                 (unsigned)it->err_length, ADF_KEY_SIZE);
        break;
    case ADF_E_PAST_END:
    case ADF_E_SUB_OVERRUN:
        if (it->err_room < 4)
            snprintf(msg, len, "%s at offset %zu: only %zu bytes left for a %u-byte key (%s)", what, off,
                     it->err_room, ADF_KEY_SIZE, adf_strerror(it->status));
        else
            snprintf(msg, len, "%s at offset %zu: length %u runs past the end of its %s (%zu bytes left)", what,
                     off, (unsigned)it->err_length, it->status == ADF_E_PAST_END ? "buffer" : "parent",
                     it->err_room);
        break;
    case ADF_E_TOO_DEEP:
        snprintf(msg, len, "%s at offset %zu: nesting level %d exceeds the limit of %d key levels", what, off,
                 it->err_depth + 1, ADF_MAX_DEPTH);
        break;
    default:
        snprintf(msg, len, "frame iterator at offset %zu: %s", it->base_offset + it->pos,
                 adf_strerror(it->status));
        break;
    }
}

/* Bytes ahead of a frame fetched while it is checked: a walk by lengths
 * cannot ask for the next key before it has read this one's length, so the
 * lines of the small frames that follow are asked for by distance. */
#define CHECK_AHEAD 1024

/* Frames [0, size) of p, at depth `depth`, checked as check_frame checks
 * them, in one walk by their lengths (members too); *n counts the frames
 * at this depth.  0 at the first fault (the iterator then says which). */
static int well_formed(const uint8_t *p, size_t size, int depth, size_t *n)
{
    for (size_t at = 0; at < size;) {
        if (size - at < ADF_KEY_SIZE || depth >= ADF_MAX_DEPTH)
            return 0;
        uint32_t length = adf_get_u32(p + at);
        if (length < ADF_KEY_SIZE || length > size - at)
            return 0;
        __builtin_prefetch(p + at + CHECK_AHEAD);
        size_t members = 0;
        if (adf_id_is_composite(adf_get_u32(p + at + 4)) &&
            !well_formed(p + at + ADF_KEY_SIZE, length - ADF_KEY_SIZE, depth + 1, &members))
            return 0;
        ++*n;
        at += length;
    }
    return 1;
}

int adf_validate(const void *buf, size_t size, size_t *bad_offset, size_t *frames)
{
    adf_iter it;
    adf_frame f;
    size_t n = 0;
    int rc;
    if (buf && well_formed(buf, size, 0, &n)) {
        if (frames)
            *frames = n;
        if (bad_offset)
            *bad_offset = size;
        return ADF_OK;
    }
    n = 0;
    adf_iter_init(&it, buf, size);
    while ((rc = adf_iter_next(&it, &f)) > 0)
        n++;
    if (frames)
        *frames = n;
    if (bad_offset)
        *bad_offset = rc < 0 ? it.err_offset : size;
    return rc;
}
