/* bad.c: the bad-frame policy every actor shares (reject, count, log with the position, stop past MaxBadFrames) and frame positions in words. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kit.h"

/* The host's table (narval.h), set before process_config and read-only after. */
static const narwhal_host *host;

void kit_set_host(const narwhal_host *h) { host = h; }

const narwhal_host *kit_host(void) { return host; }

/* The crystal id a frame carries first (narwhal:crystal, data:psa, meta:sync), or NARWHAL_NO_CRYSTAL. */
static unsigned crystal_of(uint32_t id, const uint8_t *payload, size_t payload_size)
{
    bool has = id == ADF_ID_NW_CRYSTAL || id == ADF_ID_DATA_PSA || id == ADF_ID_META_SYNC;
    return has && payload_size >= 2 ? adf_get_u16(payload) : NARWHAL_NO_CRYSTAL;
}

/* "event E (NAME of crystal C) at byte X of the input block[, ORIGIN]" */
static void describe(const adf_key *key, unsigned crystal, size_t offset, char *out, size_t len)
{
    const char *name = adf_id_name(key->id);
    char id[32], of[32] = "", origin[512] = "";
    if (!name)
        snprintf(id, sizeof id, "key id 0x%08x", (unsigned)key->id);
    if (crystal != NARWHAL_NO_CRYSTAL)
        snprintf(of, sizeof of, " of crystal %u", crystal);
    if (host && host->locate &&
        host->locate(host->ctx, key->id, key->event, crystal, origin + 2, sizeof origin - 2) == 1)
        memcpy(origin, ", ", 2);
    snprintf(out, len, "event %u (%s%s) at byte %zu of the input block%s", (unsigned)key->event,
             name ? name : id, of, offset, origin);
}

void kit_where(const adf_frame *f, char *out, size_t len)
{
    describe(&f->key, crystal_of(f->key.id, f->payload, f->payload_size), f->offset, out, len);
}

void kit_where_at(const void *block, size_t size, size_t offset, char *out, size_t len)
{
    const uint8_t *p = (const uint8_t *)block + offset;
    if (!block || offset > size || size - offset < ADF_KEY_SIZE) {
        snprintf(out, len, "byte %zu of the input block (%zu bytes left there, less than a key)", offset,
                 offset <= size ? size - offset : 0);
        return;
    }
    adf_key key;
    adf_key_decode(p, &key);
    size_t payload = size - offset - ADF_KEY_SIZE;
    describe(&key, crystal_of(key.id, p + ADF_KEY_SIZE, payload), offset, out, len);
    size_t n = strlen(out);
    snprintf(out + n, len - n, "; its key claims %u bytes", (unsigned)key.length);
}

static kit_bad *bad_of(void *algo_data)
{
    kit_instance *inst = kit_instance_of(algo_data);
    return inst ? &inst->bad : NULL;
}

void kit_bad_begin(void *algo_data, const void *in, unsigned in_size)
{
    kit_bad *b = bad_of(algo_data);
    if (!b)
        return;
    b->block = 0;
    b->in = in;
    b->in_size = in_size;
}

unsigned kit_bad_frame(void *algo_data, const adf_frame *f, const char *fmt, ...)
{
    kit_bad *b = bad_of(algo_data);
    char text[KIT_BAD_TEXT];
    kit_where(f, text, sizeof text - 2);
    size_t n = strlen(text);
    memcpy(text + n, ": ", 3);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n + 2, sizeof text - n - 2, fmt, ap);
    va_end(ap);
    if (!b) /* no instance to count it in: the frame ends the block */
        return kit_fail(kit_name(algo_data), NARVAL_E_INPUT, "%s", text);
    uint64_t seen = b->run + b->block++;
    memcpy(b->last, text, sizeof text);
    if (seen < KIT_BAD_LOGGED)
        snprintf(b->text[seen - b->run], sizeof b->text[0], "%s", b->last);
    return KIT_BAD;
}

unsigned kit_bad_commit(void *algo_data)
{
    kit_bad *b = bad_of(algo_data);
    if (!b || b->block == 0)
        return 0;
    const char *who = kit_name(algo_data);
    for (uint64_t i = b->run; i < b->run + b->block && i < KIT_BAD_LOGGED; i++)
        kit_log(who, KIT_WARN, "bad frame rejected: %s%s", b->text[i - b->run],
                i + 1 == KIT_BAD_LOGGED ? " (further bad frames are only counted)" : "");
    b->run += b->block;
    b->block = 0;
    if (b->run <= b->limit)
        return 0;
    return kit_fail(who, NARVAL_E_INPUT, "%llu bad frames in this run, more than MaxBadFrames %llu: the run "
                    "stops; the last: %s", (unsigned long long)b->run, (unsigned long long)b->limit, b->last);
}

void kit_bad_discard(void *algo_data)
{
    kit_bad *b = bad_of(algo_data);
    if (b)
        b->block = 0;
}
