/* summary_read.c: `narwhal summary` reads an output file, or an AGATA-readable file and its Narwhal file: truth, PSA hits, built events, tracked γ rays. */
#include "summary_data.h"
#include "ana.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *sum_push(sum_vec *v, size_t size)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        void *p = realloc(v->p, cap * size);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    void *slot = (char *)v->p + v->n++ * size;
    memset(slot, 0, size);
    return slot;
}

void sum_vec_free(sum_vec *v)
{
    free(v->p);
    memset(v, 0, sizeof *v);
}

void sum_data_free(sum_data *d)
{
    sum_vec_free(&d->truth);
    sum_vec_free(&d->truth_points);
    sum_vec_free(&d->hits);
    sum_vec_free(&d->crystals);
    sum_vec_free(&d->built);
    sum_vec_free(&d->tracked_e);
    sum_seen_free(&d->truth_seen);
    free(d->truth_frame);
    d->truth_frame = NULL;
}

static int no_memory(sum_data *d)
{
    return ana_fail(d->err, d->errlen, ANA_E_MEMORY, "%s: out of memory", d->path);
}

static int undecodable(sum_data *d, const adf_frame *f, uint64_t base, int rc)
{
    const char *name = adf_id_name(f->key.id);
    return ana_fail(d->err, d->errlen, ANA_E_INPUT, "%s: the %s frame at offset %llu does not decode: %s", d->path,
                    name ? name : "?", (unsigned long long)(base + f->offset), adf_strerror(rc));
}

/* The emitted energy joins the list of lines, unless there are too many. */
static void add_line(ana_summary *s, double e)
{
    for (int i = 0; i < s->n_lines; i++)
        if (s->line[i].e == e) {
            s->line[i].emitted++;
            return;
        }
    if (s->n_lines == ANA_SUMMARY_LINES) {
        s->continuum = 1;
        return;
    }
    s->line[s->n_lines++] = (ana_summary_line){.e = e, .emitted = 1};
}

/* One point per segment: the energy-weighted centre of the event's deposits there. */
static int add_truth_points(sum_data *d, uint32_t event, const adf_truth *t)
{
    char used[ADF_TRUTH_MAX_INTERACTIONS] = {0};
    for (unsigned i = 0; i < t->n_interactions; i++) {
        if (used[i])
            continue;
        const adf_truth_hit *h = &t->hit[i];
        double e = 0, c[3] = {0, 0, 0};
        for (unsigned j = i; j < t->n_interactions; j++) {
            const adf_truth_hit *o = &t->hit[j];
            if (used[j] || o->crystal_id != h->crystal_id || o->segment != h->segment)
                continue;
            used[j] = 1;
            e += o->e;
            for (int a = 0; a < 3; a++)
                c[a] += (double)o->e * o->pos[a];
        }
        sum_point *p = sum_push(&d->truth_points, sizeof *p);
        if (!p)
            return no_memory(d);
        *p = (sum_point){.event = event, .crystal = h->crystal_id, .segment = h->segment, .e = (float)e};
        for (int a = 0; a < 3; a++)
            p->pos[a] = (float)(e > 0 ? c[a] / e : h->pos[a]);
    }
    return ANA_OK;
}

/* Whether a γ energy is one the spectra can hold (a NaN is not). */
static int energy_in_bounds(float e) { return e >= 0 && e <= ANA_SUMMARY_MAX_KEV; }

/* A truth frame that claims an impossible energy is corrupt: its energies
 * would size the spectra (and beyond 2^32 keV overflow the bin index), so it
 * is counted, the first one named, and nothing else of it is used. */
static int truth_is_corrupt(sum_data *d, const adf_frame *f, uint64_t base, const adf_truth *t)
{
    for (unsigned g = 0; g < t->n_gammas; g++) {
        const adf_truth_gamma *x = &t->gamma[g];
        if (energy_in_bounds(x->e0) && energy_in_bounds(x->e))
            continue;
        if (d->s->truth_ignored++ == 0)
            snprintf(d->s->first_ignored, sizeof d->s->first_ignored,
                     "the narwhal:truth frame of event %u at offset %llu: γ %u of %u claims %g keV",
                     (unsigned)f->key.event, (unsigned long long)(base + f->offset), g, (unsigned)t->n_gammas,
                     (double)(energy_in_bounds(x->e0) ? x->e : x->e0));
        return 1;
    }
    return 0;
}

/* An energy the spectra take: finite and not negative.  Another is counted,
 * the first frame that held one named, and the entry left out. */
static int energy_ok(sum_data *d, const adf_frame *f, uint64_t base, int spectrum, const char *what, float e)
{
    if (e >= 0 && e <= FLT_MAX)
        return 1;
    if (d->s->rejected[0] + d->s->rejected[1] + d->s->rejected[2] == 0) {
        const char *name = adf_id_name(f->key.id);
        snprintf(d->s->first_rejected, sizeof d->s->first_rejected, "the %s frame of event %u at offset %llu: %s %g keV",
                 name ? name : "?", (unsigned)f->key.event, (unsigned long long)(base + f->offset), what, (double)e);
    }
    d->s->rejected[spectrum]++;
    return 0;
}

static int on_truth(sum_data *d, const adf_frame *f, uint64_t base)
{
    adf_truth *t = d->truth_frame;
    int rc = adf_truth_read(f, t);
    if (rc != ADF_OK)
        return undecodable(d, f, base, rc);
    d->s->truth++;
    if (truth_is_corrupt(d, f, base, t))
        return ANA_OK;
    /* Producers that simulate the same events (the same Seed: AGATA's shapes' chain has a
     * producer per shape) may each write their truth: an event is emitted once. */
    int fresh = sum_seen_add(&d->truth_seen, f->key.event, f->key.timestamp);
    if (fresh < 0)
        return no_memory(d);
    if (!fresh) {
        d->s->truth_repeated++;
        return ANA_OK;
    }
    sum_truth *e = sum_push(&d->truth, sizeof *e);
    if (!e)
        return no_memory(d);
    e->event = f->key.event;
    e->gammas = t->n_gammas;
    e->missed = 1;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        e->e_sum += t->gamma[g].e;
        e->missed &= (t->gamma[g].flags & ADF_TRUTH_MISSED) != 0;
        add_line(d->s, t->gamma[g].e0);
        if (t->gamma[g].e0 > d->max_energy)
            d->max_energy = t->gamma[g].e0;
    }
    d->s->gammas_emitted += t->n_gammas;
    return add_truth_points(d, f->key.event, t);
}

/* One data:psa frame of built event b: its crystal and its hits. */
static int on_psa(sum_data *d, const adf_frame *f, uint64_t base, uint32_t b)
{
    adf_psa *p = &d->psa_frame;
    int rc = adf_psa_read(f, p);
    if (rc != ADF_OK)
        return undecodable(d, f, base, rc);
    sum_crystal *c = sum_push(&d->crystals, sizeof *c);
    if (!c)
        return no_memory(d);
    *c = (sum_crystal){.event = f->key.event, .built = b, .crystal = p->crystal_id,
                       .e0 = energy_ok(d, f, base, ANA_SPEC_CRYSTAL, "core energy", p->e0) ? p->e0 : NAN};
    sum_built *ev = &((sum_built *)d->built.p)[b];
    if (ev->first_member == UINT32_MAX)
        ev->first_member = f->key.event;
    else if (ev->first_member != f->key.event)
        ev->mixed = 1;
    for (unsigned h = 0; h < p->n_hits; h++) {
        sum_point *x = sum_push(&d->hits, sizeof *x);
        if (!x)
            return no_memory(d);
        const adf_psa_hit *hit = &p->hit[h];
        *x = (sum_point){.event = f->key.event, .crystal = p->crystal_id, .segment = (uint16_t)hit->segment,
                         .e = hit->e, .pos = {hit->x, hit->y, hit->z}};
    }
    d->s->psa++;
    d->s->hits += p->n_hits;
    return ANA_OK;
}

/* An event:data:psa, or a lone data:psa (the tracker makes it an event of its own). */
static int on_built(sum_data *d, const adf_frame *f, uint64_t base)
{
    sum_built *ev = sum_push(&d->built, sizeof *ev);
    if (!ev)
        return no_memory(d);
    *ev = (sum_built){.event = f->key.event, .timestamp = f->key.timestamp, .status = -1,
                      .first_member = UINT32_MAX};
    uint32_t b = (uint32_t)(d->built.n - 1);
    d->s->built++;
    d->last_built = (long)b;
    if (f->key.id == ADF_ID_DATA_PSA)
        return on_psa(d, f, base, b);
    adf_iter sub;
    adf_frame m;
    int rc = adf_iter_sub(&sub, f);
    if (rc != ADF_OK)
        return undecodable(d, f, base, rc);
    while (rc == ANA_OK && adf_iter_next(&sub, &m) > 0) {
        if (m.key.id == ADF_ID_DATA_PSA)
            rc = on_psa(d, &m, base, b);
        else
            d->s->other++;
    }
    return rc;
}

/* The built event a narwhal:tracked frame of a pair's Narwhal file tracks: the
 * next one, from where the previous match left off, with its event number and
 * timestamp and no status yet (both files keep the stream's order); else NULL. */
static sum_built *pair_event(sum_data *d, const adf_frame *f)
{
    sum_built *b = d->built.p;
    for (size_t i = d->pair_next; i < d->built.n; i++)
        if (b[i].event == f->key.event && b[i].timestamp == f->key.timestamp && b[i].status < 0) {
            d->pair_next = i + 1;
            return &b[i];
        }
    return NULL;
}

/* A narwhal:tracked frame: its γ rays, and the status of the event it tracks:
 * the one right before it in one file; in a pair, the data file's (pair_event). */
static int on_tracked(sum_data *d, const adf_frame *f, uint64_t base)
{
    adf_tracked *t = &d->tracked_frame;
    int rc = adf_tracked_read(f, t);
    if (rc != ADF_OK)
        return undecodable(d, f, base, rc);
    ana_summary *s = d->s;
    s->tracked++;
    s->tracked_status[t->status < 3 ? t->status : 2]++;
    s->gammas += t->n_gammas;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        float v = t->beta != 0 ? t->gamma[g].e_dc : t->gamma[g].e;
        if (!energy_ok(d, f, base, ANA_SPEC_TRACKED, "a γ ray's energy", v))
            continue;
        float *e = sum_push(&d->tracked_e, sizeof *e);
        if (!e)
            return no_memory(d);
        *e = v;
    }
    sum_built *ev = d->in_pair ? pair_event(d, f)
                    : d->last_built >= 0 ? &((sum_built *)d->built.p)[d->last_built] : NULL;
    if (ev && ev->event == f->key.event && ev->timestamp == f->key.timestamp && ev->status < 0)
        ev->status = t->status;
    else if (d->built.n)
        s->unpaired++;
    return ANA_OK;
}

static int on_frame(sum_data *d, const adf_frame *f, uint64_t base)
{
    long built_before = d->last_built;
    int rc = ANA_OK;
    d->s->frames++;
    switch (f->key.id) {
    case ADF_ID_NW_TRUTH: rc = on_truth(d, f, base); break;
    case ADF_ID_EVENT_DATA_PSA:
    case ADF_ID_DATA_PSA: rc = on_built(d, f, base); break;
    case ADF_ID_NW_TRACKED: rc = on_tracked(d, f, base); break;
    case ADF_ID_NW_CRYSTAL: d->s->crystal++; break;
    case ADF_ID_META_EOF: d->s->eof++; break;
    default: d->s->other++; break;
    }
    d->s->ends_with_eof = f->key.id == ADF_ID_META_EOF;
    /* A data:tracked pairs with the built event only when it comes right after it. */
    if (d->last_built == built_before)
        d->last_built = -1;
    return rc;
}

static int on_chunk(void *ctx, const uint8_t *buf, size_t used, uint64_t base)
{
    sum_data *d = ctx;
    adf_iter it;
    adf_frame f;
    adf_iter_init(&it, buf, used);
    while (adf_iter_next(&it, &f) > 0)
        if ((d->rc = on_frame(d, &f, base)) != ANA_OK)
            return 1;
    return 0;
}

/* Every frame of the file at path into d; messages name path. */
static int read_one(sum_data *d, const char *path)
{
    d->path = path;
    d->last_built = -1;
    if (access(path, R_OK) != 0)
        return ana_fail(d->err, d->errlen, ANA_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
    d->rc = ANA_OK;
    int rc = adf_file_scan(path, SUM_MAX_FRAME, on_chunk, d, d->err, d->errlen);
    if (rc != ADF_OK)
        return rc == ADF_E_NOMEM ? ANA_E_MEMORY : ANA_E_INPUT;
    return d->rc;
}

/* The data file, then its Narwhal file: the one named (d->narwhal), else the
 * one adf_narwhal_file names when it exists; s->narwhal_file says which. */
int sum_read_file(sum_data *d)
{
    const char *data = d->path;
    char *beside = d->narwhal ? NULL : adf_narwhal_file(data);
    d->truth_frame = malloc(sizeof *d->truth_frame);
    int rc = d->truth_frame && (d->narwhal || beside) ? read_one(d, data) : no_memory(d);
    const char *pair = d->narwhal ? d->narwhal : access(beside, F_OK) == 0 ? beside : NULL;
    if (rc == ANA_OK && pair) {
        snprintf(d->s->narwhal_file, sizeof d->s->narwhal_file, "%s", pair);
        d->in_pair = 1;
        rc = read_one(d, pair);
    }
    d->path = data;
    free(beside);
    return rc;
}
