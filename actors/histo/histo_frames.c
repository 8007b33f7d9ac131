/* histo_frames.c: decodes data:crystal, data:psa and data:tracked frames (inside composites too) into histogram entries. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "histo_frames.h"

static histo_status fail(histo_decoder *dec, histo_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* code, with the sentence in dec->msg. */
static histo_status fail(histo_decoder *dec, histo_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dec->msg, sizeof dec->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* The instance of declaration `d` for a crystal and a segment (-1: none). */
static histo_status instance(histo_decoder *dec, const histo_decl *d, const adf_frame *f,
                             unsigned crystal, int segment, uint32_t *inst)
{
    const histo_spec *s = dec->spec;
    if (d->scope == HISTO_SUM) {
        *inst = 0;
        return 0;
    }
    if (crystal >= s->crystals)
        return fail(dec, HISTO_E_DATA, "%s at byte %zu: crystal id %u, but Crystals is %u (histogram '%s')",
                    adf_id_name(f->key.id), f->offset, crystal, s->crystals, d->name);
    if (d->scope == HISTO_PER_CRYSTAL) {
        *inst = crystal;
        return 0;
    }
    if (segment < 0 || (unsigned)segment >= s->segments)
        return fail(dec, HISTO_E_DATA, "%s at byte %zu: crystal %u segment %d, but Segments is %u (histogram "
                    "'%s')", adf_id_name(f->key.id), f->offset, crystal, segment, s->segments, d->name);
    *inst = crystal * s->segments + (unsigned)segment;
    return 0;
}

static histo_status put(histo_decoder *dec, size_t k, const adf_frame *f, unsigned crystal,
                        int segment, float x, float y)
{
    uint32_t inst = 0;
    histo_status code = instance(dec, &dec->spec->decl[k], f, crystal, segment, &inst);
    if (!code && (code = histo_engine_put(&dec->stage[k], inst, x, y)) != 0)
        fail(dec, code, "no memory to stage histogram entries");
    return code;
}

/* libadf's reading failures are all of a malformed frame. */
static histo_status decode_failure(histo_decoder *dec, const adf_frame *f, int rc)
{
    const char *name = adf_id_name(f->key.id);
    return fail(dec, HISTO_E_INPUT, "%s at byte %zu: %s", name ? name : "frame of an unknown id", f->offset,
                adf_strerror(rc));
}

static histo_status crystal_frame(histo_decoder *dec, const adf_frame *f)
{
    adf_crystal *c = &dec->crystal;
    int rc = adf_crystal_read(f, c);
    histo_status code = HISTO_OK;
    if (rc != ADF_OK)
        return decode_failure(dec, f, rc);
    const int core = c->n_channels - 1;
    for (size_t k = 0; k < dec->spec->n_decl && !code; k++) {
        histo_quantity q = dec->spec->decl[k].q;
        if (q == HISTO_Q_CRYSTAL_CORE)
            code = put(dec, k, f, c->crystal_id, -1, c->energy[core], 0);
        for (int s = 0; q == HISTO_Q_CRYSTAL_SEGMENT && s < core && !code; s++)
            code = put(dec, k, f, c->crystal_id, s, c->energy[s], 0);
    }
    return code;
}

/* The value of a 1D hit quantity, or 0 for a quantity that is not one. */
static int hit_value(histo_quantity q, const adf_psa_hit *h, float *v)
{
    switch (q) {
    case HISTO_Q_PSA_E: *v = h->e; return 1;
    case HISTO_Q_PSA_X: *v = h->x; return 1;
    case HISTO_Q_PSA_Y: *v = h->y; return 1;
    case HISTO_Q_PSA_Z: *v = h->z; return 1;
    default: return 0;
    }
}

static histo_status psa_frame(histo_decoder *dec, const adf_frame *f)
{
    adf_psa *p = &dec->psa;
    int rc = adf_psa_read(f, p);
    histo_status code = HISTO_OK;
    if (rc != ADF_OK)
        return decode_failure(dec, f, rc);
    for (size_t k = 0; k < dec->spec->n_decl && !code; k++) {
        histo_quantity q = dec->spec->decl[k].q;
        float v;
        if (q == HISTO_Q_PSA_CORE)
            code = put(dec, k, f, p->crystal_id, -1, p->e0, 0);
        for (unsigned h = 0; h < p->n_hits && !code; h++) {
            const adf_psa_hit *hit = &p->hit[h];
            if (q == HISTO_Q_PSA_XY)
                code = put(dec, k, f, p->crystal_id, hit->segment, hit->x, hit->y);
            else if (hit_value(q, hit, &v))
                code = put(dec, k, f, p->crystal_id, hit->segment, v, 0);
        }
    }
    return code;
}

/* Every ordered pair (i, j), i != j, so the matrix is symmetric. */
static histo_status pairs(histo_decoder *dec, size_t k, const adf_frame *f, bool dc)
{
    const adf_tracked *t = &dec->tracked;
    histo_status code = HISTO_OK;
    for (unsigned i = 0; i < t->n_gammas && !code; i++)
        for (unsigned j = 0; j < t->n_gammas && !code; j++)
            if (i != j)
                code = put(dec, k, f, 0, -1, dc ? t->gamma[i].e_dc : t->gamma[i].e,
                           dc ? t->gamma[j].e_dc : t->gamma[j].e);
    return code;
}

static histo_status tracked_frame(histo_decoder *dec, const adf_frame *f)
{
    const adf_tracked *t = &dec->tracked;
    int rc = adf_tracked_read(f, &dec->tracked);
    histo_status code = HISTO_OK;
    if (rc != ADF_OK)
        return decode_failure(dec, f, rc);
    for (size_t k = 0; k < dec->spec->n_decl && !code; k++) {
        histo_quantity q = dec->spec->decl[k].q;
        if (q == HISTO_Q_GG_E || q == HISTO_Q_GG_E_DC)
            code = pairs(dec, k, f, q == HISTO_Q_GG_E_DC);
        for (unsigned g = 0; (q == HISTO_Q_TRACKED_E || q == HISTO_Q_TRACKED_E_DC) &&
                             g < t->n_gammas && !code; g++)
            code = put(dec, k, f, 0, -1,
                       q == HISTO_Q_TRACKED_E ? t->gamma[g].e : t->gamma[g].e_dc, 0);
    }
    return code;
}

/* Stages and counts a frame's entries, sub-frames included; stops at the first problem. */
static histo_status decode(histo_decoder *d, const adf_frame *f)
{
    const histo_spec *s = d->spec;
    switch (f->key.id) {
    case ADF_ID_NW_CRYSTAL:
        d->seen[HISTO_SEEN_CRYSTAL]++;
        return s->needs[HISTO_FROM_CRYSTAL] ? crystal_frame(d, f) : 0;
    case ADF_ID_DATA_PSA:
        d->seen[HISTO_SEEN_PSA]++;
        return s->needs[HISTO_FROM_PSA] ? psa_frame(d, f) : 0;
    case ADF_ID_NW_TRACKED:
        d->seen[HISTO_SEEN_TRACKED]++;
        return s->needs[HISTO_FROM_TRACKED] ? tracked_frame(d, f) : 0;
    default:
        break;
    }
    if (!adf_id_is_composite(f->key.id)) {
        d->seen[HISTO_SEEN_OTHER]++;
        return 0;
    }
    adf_iter it;
    adf_frame sub;
    histo_status code = HISTO_OK;
    int rc = adf_iter_sub(&it, f);
    if (rc != ADF_OK)
        return decode_failure(d, f, rc);
    while (!code && (rc = adf_iter_next(&it, &sub)) > 0)
        code = decode(d, &sub);
    return code ? code : rc < 0 ? decode_failure(d, f, rc) : 0;
}

/* A bad frame (the policy of kit.h) stages nothing: one pass stages as it
 * decodes, and a problem found half way drops what the frame staged and
 * counted (decoding each frame once, not a checking pass and a staging one). */
histo_status histo_decode(histo_decoder *d, const adf_frame *f)
{
    uint64_t seen[HISTO_SEEN_KINDS];
    memcpy(seen, d->seen, sizeof seen);
    for (size_t k = 0; k < d->spec->n_decl; k++)
        d->stage[k].mark = d->stage[k].n;
    histo_status code = decode(d, f);
    if (code) {
        for (size_t k = 0; k < d->spec->n_decl; k++)
            d->stage[k].n = d->stage[k].mark;
        memcpy(d->seen, seen, sizeof seen);
    }
    return code;
}
