/* event.c: simulates one event: γ rays from the source, their transport, packing, truth and measured crystal energies. */
#include "event.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces.h"

#define FWHM_PER_SIGMA 2.3548200450309493

/* Running sums of a hit, kept in double until its centre is taken. */
typedef struct sim_hit_sums {
    double e, pos[3], lab[3], first_pos[3], first_lab[3];
} sums;

sim_event *sim_event_new(int n_crystals)
{
    sim_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    ev->fired = calloc((size_t)n_crystals, sizeof *ev->fired);
    ev->sums = calloc(ADF_TRUTH_MAX_INTERACTIONS, sizeof *ev->sums);
    if (!ev->fired || !ev->sums) {
        sim_event_free(ev);
        return NULL;
    }
    return ev;
}

void sim_event_free(sim_event *ev)
{
    if (!ev)
        return;
    free(ev->fired);
    free(ev->sums);
    free(ev);
}

uint64_t sim_event_gap(uint64_t seed, uint32_t number, double rate)
{
    sim_rng r;
    sim_rng_seed(&r, seed, number, SIM_STREAM_TIME);
    double ticks = -log(sim_uniform_pos(&r)) / rate * 1e8;
    return ticks < 1 ? 1 : (uint64_t)ticks;
}

/* The basis of crystal index c's shape, or NULL. */
static const struct sim_traces *basis_of(const sim_physics *ph, int c)
{
    return ph->basis[ph->world->type[c]];
}

/* The segment that collects deposit d's charge. */
static int collecting(const sim_physics *ph, const sim_deposit *d)
{
    const struct sim_traces *b = basis_of(ph, d->crystal);
    return b ? sim_traces_collecting(b, d->pos) : d->segment;
}

/* Index among hits [from, n) of crystal c and segment seg, or -1. */
static int same_segment(const sim_event *ev, int from, int c, int seg)
{
    for (int i = from; i < ev->truth.n_interactions; i++)
        if (ev->hit_crystal[i] == c && ev->truth.hit[i].segment == seg)
            return i;
    return -1;
}

/* Appends a truth hit for deposit d collected by segment seg (its sums start at zero); its index, or -1 when full. */
static int new_hit(const sim_world *w, sim_event *ev, const sim_deposit *d, int seg, char *msg, size_t len)
{
    adf_truth *t = &ev->truth;
    if (t->n_interactions == ADF_TRUTH_MAX_INTERACTIONS) {
        snprintf(msg, len, "event %u has more than %d interactions", ev->number, ADF_TRUTH_MAX_INTERACTIONS);
        return -1;
    }
    int i = t->n_interactions++;
    adf_truth_hit *h = &t->hit[i];
    h->crystal_id = (uint16_t)w->pl[d->crystal].id;
    h->segment = (uint16_t)seg;
    h->geo_segment = (uint16_t)d->segment;
    h->process = (uint16_t)d->process;
    h->deposits = 0;
    h->e = 0;
    h->t = 0;
    ev->hit_crystal[i] = d->crystal;
    return i;
}

static void add_to(sums *s, adf_truth_hit *h, const sim_deposit *d)
{
    if (h->deposits == 0) {
        memcpy(s->first_pos, d->pos, sizeof s->first_pos);
        memcpy(s->first_lab, d->lab, sizeof s->first_lab);
    }
    h->deposits++;
    s->e += d->e;
    for (int k = 0; k < 3; k++) {
        s->pos[k] += d->e * d->pos[k];
        s->lab[k] += d->e * d->lab[k];
    }
}

static void finish_hit(adf_truth_hit *h, const sums *s)
{
    h->e = (float)s->e;
    for (int k = 0; k < 3; k++) {
        h->pos[k] = (float)(s->e > 0 ? s->pos[k] / s->e : s->first_pos[k]);
        h->lab[k] = (float)(s->e > 0 ? s->lab[k] / s->e : s->first_lab[k]);
    }
}

/* Turns the deposits of γ g (deposits [from, to)) into truth hits. */
static int pack_gamma(const sim_physics *ph, sim_event *ev, int from, int to, char *msg, size_t len)
{
    static const sums zero;
    sums *s = ev->sums;
    int first = ev->truth.n_interactions;
    for (int i = from; i < to; i++) {
        const sim_deposit *d = &ev->deposits.d[i];
        int seg = collecting(ph, d);
        int h = ph->packing == SIM_PACK_SEGMENT ? same_segment(ev, first, d->crystal, seg) : -1;
        if (h < 0) {
            if ((h = new_hit(ph->world, ev, d, seg, msg, len)) < 0)
                return -1;
            s[h] = zero;
        }
        add_to(&s[h], &ev->truth.hit[h], d);
    }
    for (int h = first; h < ev->truth.n_interactions; h++)
        finish_hit(&ev->truth.hit[h], &s[h]);
    return ev->truth.n_interactions - first;
}

/* Transports every γ of the event and packs its deposits. */
static int transport_all(const sim_physics *ph, sim_rng *r, sim_event *ev, char *msg, size_t len)
{
    sim_gamma g[SIM_MAX_MULTIPLICITY];
    adf_truth *t = &ev->truth;
    int m = sim_source_draw(&ph->source, r, g);
    t->n_gammas = (uint16_t)m;
    t->n_interactions = 0;
    t->beta = (float)ph->source.beta;
    ev->deposits.n = 0;
    for (int i = 0; i < m; i++) {
        int from = ev->deposits.n;
        int flags = sim_transport(ph->world, r, g[i].e, ph->source.origin, g[i].dir, i, &ev->deposits);
        if (flags < 0) {
            snprintf(msg, len, "event %u: γ %d leaves more than %d deposits", ev->number, i, SIM_MAX_DEPOSITS);
            return -1;
        }
        double sum = 0;
        for (int k = from; k < ev->deposits.n; k++)
            sum += ev->deposits.d[k].e;
        if (fabs(sum - g[i].e) <= 1e-6 * g[i].e)
            flags |= ADF_TRUTH_ABSORBED;
        int n = pack_gamma(ph, ev, from, ev->deposits.n, msg, len);
        if (n < 0)
            return -1;
        adf_truth_gamma *x = &t->gamma[i];
        x->e0 = (float)g[i].e0;
        x->e = (float)g[i].e;
        for (int k = 0; k < 3; k++)
            x->dir[k] = (float)g[i].dir[k];
        x->flags = (uint16_t)flags;
        x->n_interactions = (uint16_t)n;
    }
    return 0;
}

static double smear(const sim_physics *ph, sim_rng *r, double e)
{
    double fwhm = sqrt(ph->fwhm_a + ph->fwhm_b * (e > 0 ? e : 0) / 1000.0);
    return e + fwhm / FWHM_PER_SIGMA * sim_gauss(r);
}

/* Insertion sort by crystal id: an event fires a handful of crystals. */
static void sort_fired(const sim_world *w, sim_fired *f, int n)
{
    for (int a = 1; a < n; a++) {
        sim_fired x = f[a];
        int b = a, id = w->pl[x.crystal].id;
        for (; b > 0 && w->pl[f[b - 1].crystal].id > id; b--)
            f[b] = f[b - 1];
        f[b] = x;
    }
}

/* Groups the hits by crystal, keeps the crystals over threshold, sorted by id. */
static void find_fired(const sim_physics *ph, sim_event *ev)
{
    const adf_truth *t = &ev->truth;
    int used[ADF_TRUTH_MAX_INTERACTIONS] = {0};
    int n_order = 0;
    ev->n_fired = 0;
    for (int i = 0; i < t->n_interactions; i++) {
        if (used[i])
            continue;
        sim_fired *f = &ev->fired[ev->n_fired];
        f->crystal = ev->hit_crystal[i];
        f->first = n_order;
        f->true_energy = 0;
        for (int j = i; j < t->n_interactions; j++)
            if (!used[j] && ev->hit_crystal[j] == f->crystal) {
                used[j] = 1;
                ev->order[n_order++] = j;
                f->true_energy += t->hit[j].e;
            }
        f->count = n_order - f->first;
        if (f->true_energy >= ph->threshold)
            ev->n_fired++;
    }
    sort_fired(ph->world, ev->fired, ev->n_fired);
}

static void measure(const sim_physics *ph, sim_rng *r, sim_event *ev)
{
    for (int c = 0; c < ev->n_fired; c++) {
        sim_fired *f = &ev->fired[c];
        double seg[DET_SEGMENTS] = {0};
        for (int k = 0; k < f->count; k++) {
            const adf_truth_hit *h = &ev->truth.hit[ev->order[f->first + k]];
            seg[h->segment] += h->e;
        }
        for (int s = 0; s < DET_SEGMENTS; s++)
            f->energy[s] = smear(ph, r, seg[s]);
        f->energy[DET_CORE] = smear(ph, r, f->true_energy);
    }
}

/* The array index of every truth hit's crystal id. */
static int index_hits(const sim_world *w, sim_event *ev, char *msg, size_t len)
{
    for (int i = 0; i < ev->truth.n_interactions; i++) {
        int id = ev->truth.hit[i].crystal_id, c = id < w->n_ids ? w->index_of_id[id] : -1;
        if (c < 0) {
            snprintf(msg, len, "event %u: interaction %d is in crystal %d, which the array does not have", ev->number,
                     i, id);
            return -1;
        }
        ev->hit_crystal[i] = c;
    }
    return 0;
}

/* Each hit's segments at its position: the collecting one from the basis and
 * the geometric one (packing by the deposits' segments may leave a centre elsewhere). */
static void assign_segments(const sim_physics *ph, sim_event *ev)
{
    adf_truth *t = &ev->truth;
    for (int i = 0; i < t->n_interactions; i++) {
        adf_truth_hit *h = &t->hit[i];
        const double p[3] = {h->pos[0], h->pos[1], h->pos[2]};
        const struct sim_traces *b = basis_of(ph, ev->hit_crystal[i]);
        if (b) {
            h->segment = (uint16_t)sim_traces_collecting(b, p);
            h->geo_segment = (uint16_t)det_crystal_segment(sim_shape(ph->world, ev->hit_crystal[i]), p);
        } else {
            h->geo_segment = h->segment;
        }
    }
}

int sim_event_respond(const sim_physics *ph, sim_event *ev, char *msg, size_t len)
{
    sim_rng response;
    if (index_hits(ph->world, ev, msg, len))
        return -1;
    assign_segments(ph, ev);
    sim_rng_seed(&response, ph->seed, ev->number, SIM_STREAM_RESPONSE);
    find_fired(ph, ev);
    measure(ph, &response, ev);
    return 0;
}

int sim_event_run(const sim_physics *ph, uint32_t number, sim_event *ev, char *msg, size_t len)
{
    sim_rng physics;
    sim_rng_seed(&physics, ph->seed, number, SIM_STREAM_PHYSICS);
    ev->number = number;
    if (transport_all(ph, &physics, ev, msg, len))
        return -1;
    return sim_event_respond(ph, ev, msg, len);
}
