/* agata_reader.c: reads an ADF file as a reader of AGATA's data would: keys, data:psa and event:data:psa by AGATA's published layouts, stopping at the first unknown id. */
#include "agata_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BYTES 20u
#define ID_DATA_PSA 0xFA010102u
#define ID_EVENT_DATA_PSA 0xCA010102u
#define PSA_GLOBAL 24u
#define PSA_HIT 42u

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) { return (uint32_t)u16(p) | (uint32_t)u16(p + 2) << 16; }
static uint64_t u64(const uint8_t *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }
static float f32(const uint8_t *p)
{
    uint32_t bits = u32(p);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

typedef struct key {
    uint32_t length, id, event;
    uint64_t timestamp;
} key;

static agr_status stop(agr_file *f, agr_status status, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static agr_status stop(agr_file *f, agr_status status, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(f->why, sizeof f->why, "offset %llu: ", (unsigned long long)offset);
    va_start(ap, fmt);
    vsnprintf(f->why + n, sizeof f->why - (size_t)n, fmt, ap);
    va_end(ap);
    f->stop_offset = offset;
    return f->status = status;
}

/* The key at p, with `room` bytes left for its frame; 0 when it fits. */
static int read_key(const uint8_t *p, size_t room, key *k)
{
    if (room < KEY_BYTES)
        return -1;
    *k = (key){ u32(p), u32(p + 4), u32(p + 8), u64(p + 12) };
    return k->length < KEY_BYTES || k->length > room ? -1 : 0;
}

static agr_status read_psa(agr_file *f, const uint8_t *p, const key *k, uint64_t offset, long in_event)
{
    const uint8_t *g = p + KEY_BYTES;
    size_t size = k->length - KEY_BYTES;
    if (size < PSA_GLOBAL)
        return stop(f, AGR_BAD, offset, "a data:psa of %zu payload bytes, under the 24 of its global part", size);
    unsigned n = u16(g + 22);
    if (size != PSA_GLOBAL + PSA_HIT * (size_t)n || n > AGR_MAX_HITS)
        return stop(f, AGR_BAD, offset, "a data:psa of %zu payload bytes claims %u hits", size, n);
    agr_psa *q = realloc(f->psa, (f->n_psa + 1) * sizeof *q);
    if (!q)
        return stop(f, AGR_IO, offset, "out of memory");
    f->psa = q;
    q += f->n_psa++;
    *q = (agr_psa){ .event = k->event, .timestamp = k->timestamp, .in_event = in_event,
                    .crystal = u16(g), .status = u16(g + 2), .e0 = f32(g + 4), .e1 = f32(g + 8),
                    .t0 = f32(g + 12), .t1 = f32(g + 16), .psa_status = u16(g + 20), .n_hits = (uint16_t)n };
    for (unsigned h = 0; h < n; h++) {
        const uint8_t *s = g + PSA_GLOBAL + PSA_HIT * h, *v = s + 6;
        q->hit[h] = (agr_hit){ u16(s), (int16_t)u16(s + 2), (int16_t)u16(s + 4), f32(v), f32(v + 4),
                               f32(v + 8), f32(v + 12), f32(v + 16), f32(v + 20), f32(v + 24),
                               f32(v + 28), f32(v + 32) };
    }
    return AGR_WHOLE;
}

static agr_status unknown(agr_file *f, const key *k, uint64_t offset)
{
    f->stop_id = k->id;
    return stop(f, AGR_UNKNOWN, offset, "key id 0x%08x is not one this reader knows", k->id);
}

/* An event:data:psa: the data:psa frames that fill it. */
static agr_status read_event(agr_file *f, const uint8_t *p, const key *k, uint64_t offset)
{
    long index = (long)f->events++;
    for (size_t at = KEY_BYTES; at < k->length;) {
        key m;
        if (read_key(p + at, k->length - at, &m) != 0)
            return stop(f, AGR_BAD, offset + at, "a frame that does not fit its event:data:psa");
        if (m.id != ID_DATA_PSA)
            return unknown(f, &m, offset + at);
        agr_status s = read_psa(f, p + at, &m, offset + at, index);
        if (s != AGR_WHOLE)
            return s;
        at += m.length;
    }
    return AGR_WHOLE;
}

static agr_status read_frames(agr_file *f, const uint8_t *buf, size_t size)
{
    for (size_t at = 0; at < size; f->frames++) {
        key k;
        agr_status s;
        if (read_key(buf + at, size - at, &k) != 0)
            return stop(f, AGR_BAD, at, "a frame that does not fit the file");
        if (k.id == ID_DATA_PSA)
            s = read_psa(f, buf + at, &k, at, -1);
        else if (k.id == ID_EVENT_DATA_PSA)
            s = read_event(f, buf + at, &k, at);
        else
            s = unknown(f, &k, at);
        if (s != AGR_WHOLE)
            return s;
        at += k.length;
    }
    return AGR_WHOLE;
}

agr_status agr_read(const char *path, agr_file *f)
{
    *f = (agr_file){ 0 };
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size = -1;
    if (fp && fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size + 1)) != NULL && fread(buf, 1, (size_t)size, fp) != (size_t)size)
        size = -1;
    if (fp)
        fclose(fp);
    agr_status s = size >= 0 && buf ? read_frames(f, buf, (size_t)size)
                                    : stop(f, AGR_IO, 0, "%s cannot be read", path);
    free(buf);
    return s;
}

void agr_free(agr_file *f)
{
    free(f->psa);
    *f = (agr_file){ 0 };
}
