/* truth.c: encoder and checked decoder of narwhal:truth frames (simulation truth, layout in adf.h). */
#include "adf.h"

size_t adf_truth_payload_size(unsigned n_gammas, unsigned n_interactions)
{
    return ADF_TRUTH_HEADER + ADF_TRUTH_GAMMA * (size_t)n_gammas + ADF_TRUTH_HIT * (size_t)n_interactions;
}

static void put_floats(uint8_t *p, const float *v, int n)
{
    for (int i = 0; i < n; i++)
        adf_put_f32(p + 4 * i, v[i]);
}

static void get_floats(const uint8_t *p, float *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = adf_get_f32(p + 4 * i);
}

static void encode_gamma(uint8_t *p, const adf_truth_gamma *g)
{
    adf_put_f32(p, g->e0);
    adf_put_f32(p + 4, g->e);
    put_floats(p + 8, g->dir, 3);
    adf_put_u16(p + 20, g->flags);
    adf_put_u16(p + 22, g->n_interactions);
}

static void decode_gamma(const uint8_t *p, adf_truth_gamma *g)
{
    g->e0 = adf_get_f32(p);
    g->e = adf_get_f32(p + 4);
    get_floats(p + 8, g->dir, 3);
    g->flags = adf_get_u16(p + 20);
    g->n_interactions = adf_get_u16(p + 22);
}

static void encode_hit(uint8_t *p, const adf_truth_hit *h)
{
    adf_put_u16(p, h->crystal_id);
    adf_put_u16(p + 2, h->segment);
    adf_put_u16(p + 4, h->process);
    adf_put_u16(p + 6, h->deposits);
    adf_put_f32(p + 8, h->e);
    put_floats(p + 12, h->pos, 3);
    put_floats(p + 24, h->lab, 3);
    adf_put_f32(p + 36, h->t);
    adf_put_u16(p + 40, h->geo_segment);
}

/* hit_size: ADF_TRUTH_HIT, or ADF_TRUTH_HIT_V1 for layout 1 (no geometric segment: the segment's). */
static void decode_hit(const uint8_t *p, adf_truth_hit *h, size_t hit_size)
{
    h->crystal_id = adf_get_u16(p);
    h->segment = adf_get_u16(p + 2);
    h->process = adf_get_u16(p + 4);
    h->deposits = adf_get_u16(p + 6);
    h->e = adf_get_f32(p + 8);
    get_floats(p + 12, h->pos, 3);
    get_floats(p + 24, h->lab, 3);
    h->t = adf_get_f32(p + 36);
    h->geo_segment = hit_size == ADF_TRUTH_HIT ? adf_get_u16(p + 40) : h->segment;
}

static int hit_ok(const adf_truth_hit *h)
{
    return h->segment < 36 && h->geo_segment < 36 && h->process >= ADF_TRUTH_PHOTO && h->process <= ADF_TRUTH_PAIR &&
           h->deposits >= 1;
}

/* The per-γ counts sum to the total and every interaction is well formed. */
static int consistent(const adf_truth *t)
{
    unsigned sum = 0;
    for (unsigned g = 0; g < t->n_gammas; g++)
        sum += t->gamma[g].n_interactions;
    if (sum != t->n_interactions)
        return 0;
    for (unsigned i = 0; i < t->n_interactions; i++)
        if (!hit_ok(&t->hit[i]))
            return 0;
    return 1;
}

static int counts_ok(unsigned n_gammas, unsigned n_interactions)
{
    return n_gammas <= ADF_TRUTH_MAX_GAMMAS && n_interactions <= ADF_TRUTH_MAX_INTERACTIONS;
}

int adf_truth_write(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_truth *t)
{
    if (!w || !t)
        return ADF_E_ARG;
    if (!counts_ok(t->n_gammas, t->n_interactions))
        return ADF_E_LIMIT;
    if (!consistent(t))
        return ADF_E_ARG;
    adf_begin(w, ADF_ID_NW_TRUTH, event, timestamp);
    uint8_t *p = adf_reserve(w, adf_truth_payload_size(t->n_gammas, t->n_interactions));
    if (p) {
        adf_put_u16(p, t->n_gammas);
        adf_put_u16(p + 2, t->n_interactions);
        adf_put_f32(p + 4, t->beta);
        p += ADF_TRUTH_HEADER;
        for (unsigned g = 0; g < t->n_gammas; g++, p += ADF_TRUTH_GAMMA)
            encode_gamma(p, &t->gamma[g]);
        for (unsigned i = 0; i < t->n_interactions; i++, p += ADF_TRUTH_HIT)
            encode_hit(p, &t->hit[i]);
    }
    return adf_end(w);
}

int adf_truth_read(const adf_frame *f, adf_truth *t)
{
    if (!f || !f->payload || !t)
        return ADF_E_ARG;
    if (f->key.id != ADF_ID_NW_TRUTH)
        return ADF_E_WRONG_ID;
    if (f->payload_size < ADF_TRUTH_HEADER)
        return ADF_E_PAYLOAD;
    const uint8_t *p = f->payload;
    unsigned n_gammas = adf_get_u16(p), n_interactions = adf_get_u16(p + 2);
    if (!counts_ok(n_gammas, n_interactions))
        return ADF_E_LIMIT;
    size_t hit_size = ADF_TRUTH_HIT;
    if (f->payload_size != adf_truth_payload_size(n_gammas, n_interactions)) {
        hit_size = ADF_TRUTH_HIT_V1;
        if (f->payload_size != ADF_TRUTH_HEADER + ADF_TRUTH_GAMMA * (size_t)n_gammas + hit_size * n_interactions)
            return ADF_E_PAYLOAD;
    }
    t->n_gammas = (uint16_t)n_gammas;
    t->n_interactions = (uint16_t)n_interactions;
    t->beta = adf_get_f32(p + 4);
    p += ADF_TRUTH_HEADER;
    for (unsigned g = 0; g < n_gammas; g++, p += ADF_TRUTH_GAMMA)
        decode_gamma(p, &t->gamma[g]);
    for (unsigned i = 0; i < n_interactions; i++, p += hit_size)
        decode_hit(p, &t->hit[i], hit_size);
    return consistent(t) ? ADF_OK : ADF_E_PAYLOAD;
}
