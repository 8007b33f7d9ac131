/* payload.c: encoders and checked decoders of the typed payloads (data:crystal, data:psa, data:tracked, meta:eof, meta:sync). */
#include "adf.h"

/* Writes one non-composite frame whose payload `encode` fills in place. */
typedef void encode_fn(uint8_t *p, const void *value);

static int write_frame(adf_writer *w, uint32_t id, uint32_t event, uint64_t timestamp, size_t size,
                       encode_fn *encode, const void *value)
{
    adf_begin(w, id, event, timestamp);
    uint8_t *p = adf_reserve(w, size);
    if (p)
        encode(p, value);
    return adf_end(w);
}

/* The checks every decoder starts with: the type, then a payload at least `fixed` long. */
static int check_head(const adf_frame *f, const void *out, uint32_t id, size_t fixed)
{
    if (!f || !f->payload || !out)
        return ADF_E_ARG;
    if (f->key.id != id)
        return ADF_E_WRONG_ID;
    return f->payload_size < fixed ? ADF_E_PAYLOAD : ADF_OK;
}

/* ---- data:crystal */

size_t adf_crystal_payload_size(unsigned n_channels, unsigned n_samples)
{
    return ADF_CRYSTAL_FIXED + 4u * (size_t)n_channels + 2u * (size_t)n_channels * n_samples;
}

static int crystal_counts_ok(unsigned n_channels, unsigned n_samples)
{
    return n_channels >= 1 && n_channels <= ADF_MAX_CHANNELS && n_samples >= 1 && n_samples <= ADF_MAX_SAMPLES;
}

static void crystal_encode(uint8_t *p, const void *value)
{
    const adf_crystal *c = value;
    adf_put_u16(p, c->crystal_id);
    adf_put_u16(p + 2, c->status);
    adf_put_u16(p + 4, c->n_channels);
    adf_put_u16(p + 6, c->n_samples);
    adf_put_f32(p + 8, c->gain);
    p += ADF_CRYSTAL_FIXED;
    for (unsigned ch = 0; ch < c->n_channels; ch++, p += 4)
        adf_put_f32(p, c->energy[ch]);
    for (unsigned ch = 0; ch < c->n_channels; ch++)
        for (unsigned s = 0; s < c->n_samples; s++, p += 2)
            adf_put_u16(p, (uint16_t)c->trace[ch][s]);
}

int adf_crystal_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_crystal *c)
{
    if (!w || !c)
        return ADF_E_ARG;
    if (!crystal_counts_ok(c->n_channels, c->n_samples))
        return ADF_E_LIMIT;
    return write_frame(w, ADF_ID_NW_CRYSTAL, event, timestamp,
                       adf_crystal_payload_size(c->n_channels, c->n_samples), crystal_encode, c);
}

int adf_crystal_read(const adf_frame *f, adf_crystal *c)
{
    int rc = check_head(f, c, ADF_ID_NW_CRYSTAL, ADF_CRYSTAL_FIXED);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned n_channels = adf_get_u16(p + 4), n_samples = adf_get_u16(p + 6);
    if (!crystal_counts_ok(n_channels, n_samples))
        return ADF_E_LIMIT;
    if (f->payload_size != adf_crystal_payload_size(n_channels, n_samples))
        return ADF_E_PAYLOAD;
    c->crystal_id = adf_get_u16(p);
    c->status = adf_get_u16(p + 2);
    c->n_channels = (uint16_t)n_channels;
    c->n_samples = (uint16_t)n_samples;
    c->gain = adf_get_f32(p + 8);
    p += ADF_CRYSTAL_FIXED;
    for (unsigned ch = 0; ch < n_channels; ch++, p += 4)
        c->energy[ch] = adf_get_f32(p);
    for (unsigned ch = 0; ch < n_channels; ch++)
        for (unsigned s = 0; s < n_samples; s++, p += 2)
            c->trace[ch][s] = adf_get_i16(p);
    return ADF_OK;
}

/* ---- data:psa */

size_t adf_psa_payload_size(unsigned n_hits) { return ADF_PSA_GLOBAL + ADF_PSA_HIT * (size_t)n_hits; }

static void psa_encode_hit(uint8_t *p, const adf_psa_hit *h)
{
    adf_put_u16(p, h->status);
    adf_put_u16(p + 2, (uint16_t)h->segment);
    adf_put_u16(p + 4, (uint16_t)h->crystal_id);
    const float v[9] = {h->x, h->y, h->z, h->e, h->t, h->t_cc_e, h->t_cc_h, h->t_sg_e, h->t_sg_h};
    for (int i = 0; i < 9; i++)
        adf_put_f32(p + 6 + 4 * i, v[i]);
}

static void psa_decode_hit(const uint8_t *p, adf_psa_hit *h)
{
    h->status = adf_get_u16(p);
    h->segment = adf_get_i16(p + 2);
    h->crystal_id = adf_get_i16(p + 4);
    float *v[9] = {&h->x, &h->y, &h->z, &h->e, &h->t, &h->t_cc_e, &h->t_cc_h, &h->t_sg_e, &h->t_sg_h};
    for (int i = 0; i < 9; i++)
        *v[i] = adf_get_f32(p + 6 + 4 * i);
}

static void psa_encode(uint8_t *p, const void *value)
{
    const adf_psa *ps = value;
    adf_put_u16(p, ps->crystal_id);
    adf_put_u16(p + 2, ps->status);
    adf_put_f32(p + 4, ps->e0);
    adf_put_f32(p + 8, ps->e1);
    adf_put_f32(p + 12, ps->t0);
    adf_put_f32(p + 16, ps->t1);
    adf_put_u16(p + 20, ps->psa_status);
    adf_put_u16(p + 22, ps->n_hits);
    for (unsigned h = 0; h < ps->n_hits; h++)
        psa_encode_hit(p + ADF_PSA_GLOBAL + ADF_PSA_HIT * h, &ps->hit[h]);
}

int adf_psa_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_psa *p)
{
    if (!w || !p)
        return ADF_E_ARG;
    if (p->n_hits > ADF_PSA_MAX_HITS)
        return ADF_E_LIMIT;
    return write_frame(w, ADF_ID_DATA_PSA, event, timestamp, adf_psa_payload_size(p->n_hits), psa_encode, p);
}

int adf_psa_read(const adf_frame *f, adf_psa *ps)
{
    int rc = check_head(f, ps, ADF_ID_DATA_PSA, ADF_PSA_GLOBAL);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned n_hits = adf_get_u16(p + 22);
    if (n_hits > ADF_PSA_MAX_HITS)
        return ADF_E_LIMIT;
    if (f->payload_size != adf_psa_payload_size(n_hits))
        return ADF_E_PAYLOAD;
    ps->crystal_id = adf_get_u16(p);
    ps->status = adf_get_u16(p + 2);
    ps->e0 = adf_get_f32(p + 4);
    ps->e1 = adf_get_f32(p + 8);
    ps->t0 = adf_get_f32(p + 12);
    ps->t1 = adf_get_f32(p + 16);
    ps->psa_status = adf_get_u16(p + 20);
    ps->n_hits = (uint16_t)n_hits;
    for (unsigned h = 0; h < n_hits; h++)
        psa_decode_hit(p + ADF_PSA_GLOBAL + ADF_PSA_HIT * h, &ps->hit[h]);
    return ADF_OK;
}

/* ---- event:data:psa */

int adf_event_psa_read(const adf_frame *f, adf_psa *out, unsigned max, unsigned *n)
{
    if (!f || !n || (!out && max > 0))
        return ADF_E_ARG;
    *n = 0;
    if (f->key.id != ADF_ID_EVENT_DATA_PSA)
        return ADF_E_WRONG_ID;
    adf_iter it;
    adf_frame member;
    int rc = adf_iter_sub(&it, f);
    while (rc == ADF_OK && (rc = adf_iter_next(&it, &member)) > 0) {
        if (member.key.id != ADF_ID_DATA_PSA)
            return ADF_E_PAYLOAD;
        if (*n == max)
            return ADF_E_LIMIT;
        rc = adf_psa_read(&member, &out[*n]);
        if (rc == ADF_OK)
            ++*n;
    }
    return rc;
}

/* ---- data:tracked */

size_t adf_tracked_payload_size(unsigned n_gammas)
{
    return ADF_TRACKED_HEADER + ADF_TRACKED_GAMMA * (size_t)n_gammas;
}

static void tracked_encode(uint8_t *p, const void *value)
{
    const adf_tracked *t = value;
    adf_put_u16(p, t->n_gammas);
    adf_put_u16(p + 2, t->status);
    adf_put_f32(p + 4, t->beta);
    for (unsigned g = 0; g < t->n_gammas; g++) {
        const adf_gamma *gm = &t->gamma[g];
        uint8_t *q = p + ADF_TRACKED_HEADER + ADF_TRACKED_GAMMA * g;
        const float v[9] = {gm->e, gm->e_dc, gm->fom, gm->x1, gm->y1, gm->z1, gm->x2, gm->y2, gm->z2};
        for (int i = 0; i < 9; i++)
            adf_put_f32(q + 4 * i, v[i]);
        adf_put_u16(q + 36, gm->n_points);
        adf_put_u16(q + 38, gm->n_crystals);
        adf_put_u16(q + 40, gm->first_crystal);
        adf_put_u16(q + 42, gm->flags);
    }
}

int adf_tracked_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_tracked *t)
{
    if (!w || !t)
        return ADF_E_ARG;
    if (t->n_gammas > ADF_TRACKED_MAX)
        return ADF_E_LIMIT;
    return write_frame(w, ADF_ID_NW_TRACKED, event, timestamp, adf_tracked_payload_size(t->n_gammas),
                       tracked_encode, t);
}

int adf_tracked_read(const adf_frame *f, adf_tracked *t)
{
    int rc = check_head(f, t, ADF_ID_NW_TRACKED, ADF_TRACKED_HEADER);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned n_gammas = adf_get_u16(p);
    if (n_gammas > ADF_TRACKED_MAX)
        return ADF_E_LIMIT;
    if (f->payload_size != adf_tracked_payload_size(n_gammas))
        return ADF_E_PAYLOAD;
    t->n_gammas = (uint16_t)n_gammas;
    t->status = adf_get_u16(p + 2);
    t->beta = adf_get_f32(p + 4);
    for (unsigned g = 0; g < n_gammas; g++) {
        adf_gamma *gm = &t->gamma[g];
        const uint8_t *q = p + ADF_TRACKED_HEADER + ADF_TRACKED_GAMMA * g;
        float *v[9] = {&gm->e, &gm->e_dc, &gm->fom, &gm->x1, &gm->y1, &gm->z1, &gm->x2, &gm->y2, &gm->z2};
        for (int i = 0; i < 9; i++)
            *v[i] = adf_get_f32(q + 4 * i);
        gm->n_points = adf_get_u16(q + 36);
        gm->n_crystals = adf_get_u16(q + 38);
        gm->first_crystal = adf_get_u16(q + 40);
        gm->flags = adf_get_u16(q + 42);
    }
    return ADF_OK;
}

/* ---- meta:eof */

static void eof_encode(uint8_t *p, const void *value)
{
    const adf_eof *e = value;
    adf_put_u32(p, e->frames);
    adf_put_u64(p + 4, e->bytes);
}

int adf_eof_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_eof *e)
{
    if (!w || !e)
        return ADF_E_ARG;
    return write_frame(w, ADF_ID_META_EOF, event, timestamp, ADF_EOF_PAYLOAD, eof_encode, e);
}

int adf_eof_read(const adf_frame *f, adf_eof *e)
{
    int rc = check_head(f, e, ADF_ID_META_EOF, ADF_EOF_PAYLOAD);
    if (rc != ADF_OK)
        return rc;
    if (f->payload_size != ADF_EOF_PAYLOAD)
        return ADF_E_PAYLOAD;
    e->frames = adf_get_u32(f->payload);
    e->bytes = adf_get_u64(f->payload + 4);
    return ADF_OK;
}

/* ---- meta:sync */

static void sync_encode(uint8_t *p, const void *value)
{
    const adf_sync *s = value;
    adf_put_u16(p, s->crystal_id);
    adf_put_u16(p + 2, 0);
    adf_put_u32(p + 4, s->frames);
}

int adf_sync_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_sync *s)
{
    if (!w || !s)
        return ADF_E_ARG;
    return write_frame(w, ADF_ID_META_SYNC, event, timestamp, ADF_SYNC_PAYLOAD, sync_encode, s);
}

int adf_sync_read(const adf_frame *f, adf_sync *s)
{
    int rc = check_head(f, s, ADF_ID_META_SYNC, ADF_SYNC_PAYLOAD);
    if (rc != ADF_OK)
        return rc;
    if (f->payload_size != ADF_SYNC_PAYLOAD || adf_get_u16(f->payload + 2) != 0)
        return ADF_E_PAYLOAD;
    s->crystal_id = adf_get_u16(f->payload);
    s->frames = adf_get_u32(f->payload + 4);
    return ADF_OK;
}
