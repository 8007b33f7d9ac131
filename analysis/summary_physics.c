/* summary_physics.c: `narwhal summary`'s physics: events by fate, PSA against the truth, spectra, the source. */
#include "summary_data.h"
#include "ana.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const double ebin_edges[ANA_SUMMARY_EBINS + 1] = {0, 100, 250, 500, 1000, INFINITY};

static int cmp_u32(uint32_t a, uint32_t b) { return (a > b) - (a < b); }

static int by_point(const void *pa, const void *pb)
{
    const sum_point *a = pa, *b = pb;
    int c = cmp_u32(a->event, b->event);
    if (!c)
        c = cmp_u32(a->crystal, b->crystal);
    return c ? c : cmp_u32(a->segment, b->segment);
}

static int by_crystal_event(const void *pa, const void *pb)
{
    return cmp_u32(((const sum_crystal *)pa)->event, ((const sum_crystal *)pb)->event);
}

static int by_truth_event(const void *pa, const void *pb)
{
    return cmp_u32(((const sum_truth *)pa)->event, ((const sum_truth *)pb)->event);
}

static int by_float(const void *pa, const void *pb)
{
    float a = *(const float *)pa, b = *(const float *)pb;
    return (a > b) - (a < b);
}

static int by_line(const void *pa, const void *pb)
{
    double a = ((const ana_summary_line *)pa)->e, b = ((const ana_summary_line *)pb)->e;
    return (a > b) - (a < b);
}

/* qsort of a vector that may be empty (and then has no array: qsort's
 * pointer must not be NULL even for no elements). */
static void sort_vec(sum_vec *v, size_t size, int (*cmp)(const void *, const void *))
{
    if (v->n > 1)
        qsort(v->p, v->n, size, cmp);
}

/* An entry of spectrum k: its 1 keV bin, or beyond the last one. */
static void fill(ana_summary *s, int k, double e)
{
    s->total[k]++;
    if (e < s->n_bins)
        s->spectrum[k][(unsigned)e]++;
    else
        s->beyond[k]++;
}

/* The crystals of each generator event added (a calorimeter's answer), NAN
 * for an event without one, into sums[] (one per crystal entry's event, in
 * the order of the sorted crystals): its length. */
static size_t crystal_sums(const sum_data *d, float *sums, uint32_t *events)
{
    const sum_crystal *c = d->crystals.p;
    size_t n = 0;
    for (size_t j = 0; j < d->crystals.n;) {
        double sum = 0;
        size_t first = j;
        for (; j < d->crystals.n && c[j].event == c[first].event; j++)
            sum += isnan(c[j].e0) ? 0 : c[j].e0;
        events[n] = c[first].event;
        sums[n++] = (float)sum;
    }
    return n;
}

/* Each generator event by the truth: what became of it, its multiplicity, and
 * whether its crystals hold all of its γ rays' energy. */
static void events(sum_data *d, const float *sums, const uint32_t *sum_event, size_t n_sums)
{
    ana_summary *s = d->s;
    const sum_truth *t = d->truth.p;
    const sum_crystal *c = d->crystals.p;
    const sum_built *b = d->built.p;
    size_t j = 0, k = 0;
    s->events = d->truth.n;
    for (size_t i = 0; i < d->truth.n; i++) {
        unsigned m = t[i].gammas;
        s->multiplicity[m < ANA_SUMMARY_MULTIPLICITY ? m : ANA_SUMMARY_MULTIPLICITY]++;
        s->max_multiplicity = m > s->max_multiplicity ? m : s->max_multiplicity;
        while (k < n_sums && sum_event[k] < t[i].event)
            k++;
        if (m) {
            s->sum_events++;
            s->sum_full += k < n_sums && sum_event[k] == t[i].event && fabs(sums[k] - t[i].e_sum) <= s->window;
        }
        while (j < d->crystals.n && c[j].event < t[i].event)
            j++;
        int n = 0, worst = 0, piled = 0, untracked = 0;
        for (; j < d->crystals.n && c[j].event == t[i].event; j++, n++) {
            const sum_built *ev = &b[c[j].built];
            worst = ev->status > worst ? ev->status : worst;
            untracked |= ev->status < 0;
            piled |= ev->mixed;
        }
        if (n == 0) {
            s->ev_no_psa++;
            s->ev_missed += t[i].missed;
            continue;
        }
        s->ev_piled += piled;
        if (untracked)
            s->ev_untracked++;
        else if (worst == 1)
            s->ev_not_tracked++;
        else
            s->ev_tracked++;
    }
}

static void add_residual(ana_summary *s, const sum_point *h, const sum_point *t, double sq[3], double ebin_sq[][3])
{
    double d2 = 0;
    int bin = 0;
    while (bin + 1 < ANA_SUMMARY_EBINS && h->e >= ebin_edges[bin + 1])
        bin++;
    s->ebin[bin].n++;
    for (int a = 0; a < 3; a++) {
        double r = (double)h->pos[a] - t->pos[a];
        sq[a] += r * r;
        ebin_sq[bin][a] += r * r;
        d2 += r * r;
        double half_mm = (r + 25) * 2; /* checked before the conversion: a corrupt position may be beyond an int */
        if (half_mm >= 0 && half_mm < 100)
            s->residual[a][(int)half_mm]++;
    }
    s->mean_distance += sqrt(d2);
}

/* Half the width of the central 68 % of the residuals of one axis. */
static double sigma68(const sum_point *hits, const sum_point **truth, size_t n, int axis, float *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (truth[i])
            scratch[m++] = hits[i].pos[axis] - truth[i]->pos[axis];
    if (m < 2)
        return 0;
    qsort(scratch, m, sizeof *scratch, by_float);
    return 0.5 * (scratch[(size_t)(0.8413 * (double)(m - 1))] - scratch[(size_t)(0.1587 * (double)(m - 1))]);
}

static int no_memory(sum_data *d) { return ana_fail(d->err, d->errlen, ANA_E_MEMORY, "%s: out of memory", d->path); }

/* Every PSA hit against the truth's point in the same event, crystal and segment. */
static int positions(sum_data *d)
{
    ana_summary *s = d->s;
    sort_vec(&d->hits, sizeof(sum_point), by_point);
    sort_vec(&d->truth_points, sizeof(sum_point), by_point);
    sum_point *h = d->hits.p, *t = d->truth_points.p;
    const sum_point **match = calloc(d->hits.n ? d->hits.n : 1, sizeof *match);
    float *scratch = malloc((d->hits.n ? d->hits.n : 1) * sizeof *scratch);
    if (!match || !scratch) {
        free(match);
        free(scratch);
        return no_memory(d);
    }
    double sq[3] = {0, 0, 0}, ebin_sq[ANA_SUMMARY_EBINS][3] = {{0}};
    size_t j = 0;
    for (size_t i = 0; i < d->hits.n; i++) {
        while (j < d->truth_points.n && by_point(&t[j], &h[i]) < 0)
            j++;
        if (j < d->truth_points.n && by_point(&t[j], &h[i]) == 0) {
            match[i] = &t[j];
            add_residual(s, &h[i], &t[j], sq, ebin_sq);
            s->matched++;
        } else {
            s->unmatched_hits++;
        }
    }
    for (int a = 0; a < 3 && s->matched; a++) {
        s->rms[a] = sqrt(sq[a] / (double)s->matched);
        s->sigma68[a] = sigma68(h, match, d->hits.n, a, scratch);
    }
    if (s->matched)
        s->mean_distance /= (double)s->matched;
    for (int b = 0; b < ANA_SUMMARY_EBINS; b++) {
        s->ebin[b].lo = ebin_edges[b];
        s->ebin[b].hi = ebin_edges[b + 1];
        for (int a = 0; a < 3 && s->ebin[b].n; a++)
            s->ebin[b].rms[a] = sqrt(ebin_sq[b][a] / (double)s->ebin[b].n);
    }
    free(match);
    free(scratch);
    return ANA_OK;
}

/* True points in a crystal the PSA analysed, in a segment where it found no
 * hit (most lie under its threshold). */
static void missed_deposits(sum_data *d)
{
    const sum_point *t = d->truth_points.p, *h = d->hits.p;
    const sum_crystal *c = d->crystals.p;
    size_t j = 0, k = 0;
    for (size_t i = 0; i < d->truth_points.n; i++) {
        while (j < d->hits.n && by_point(&h[j], &t[i]) < 0)
            j++;
        if (j < d->hits.n && by_point(&h[j], &t[i]) == 0)
            continue;
        while (k < d->crystals.n && c[k].event < t[i].event)
            k++;
        for (size_t m = k; m < d->crystals.n && c[m].event == t[i].event; m++)
            if (c[m].crystal == t[i].crystal) {
                d->s->missed_deposits++;
                break;
            }
    }
}

static double at_least(double a, double b) { return a > b ? a : b; }

/* The highest energy anything in the file has: the spectra reach it (with a
 * margin for the peaks' bands), up to ANA_SUMMARY_SPECTRUM_KEV. */
static int alloc_spectra(sum_data *d, const float *sums, size_t n_sums)
{
    ana_summary *s = d->s;
    const float *g = d->tracked_e.p;
    const sum_crystal *c = d->crystals.p;
    const sum_truth *t = d->truth.p;
    double top = 0;
    for (size_t i = 0; i < d->tracked_e.n; i++)
        top = at_least(top, g[i]);
    for (size_t i = 0; i < d->crystals.n; i++)
        top = isnan(c[i].e0) ? top : at_least(top, c[i].e0);
    for (size_t i = 0; i < n_sums; i++)
        top = at_least(top, sums[i]);
    for (size_t i = 0; i < d->truth.n; i++)
        top = at_least(top, t[i].e_sum);
    for (int i = 0; i < s->n_lines; i++)
        top = at_least(top, s->line[i].e);
    s->highest = top;
    double bins = ceil((top + 100) / 100) * 100;
    s->n_bins = (unsigned)(bins < ANA_SUMMARY_SPECTRUM_KEV ? bins : ANA_SUMMARY_SPECTRUM_KEV);
    for (int k = 0; k < ANA_SPECTRA; k++)
        if (!(s->spectrum[k] = calloc(s->n_bins, sizeof *s->spectrum[k])))
            return no_memory(d);
    return ANA_OK;
}

/* The three spectra, and the distinct crystals that reached the file. */
static void spectra(sum_data *d, const float *sums, size_t n_sums)
{
    ana_summary *s = d->s;
    const float *g = d->tracked_e.p;
    const sum_crystal *c = d->crystals.p;
    uint8_t seen[65536 / 8] = {0};
    for (size_t i = 0; i < d->tracked_e.n; i++)
        fill(s, ANA_SPEC_TRACKED, g[i]);
    for (size_t i = 0; i < d->crystals.n; i++) {
        if (!isnan(c[i].e0))
            fill(s, ANA_SPEC_CRYSTAL, c[i].e0);
        s->crystals += !(seen[c[i].crystal / 8] & (1u << (c[i].crystal % 8)));
        seen[c[i].crystal / 8] |= (uint8_t)(1u << (c[i].crystal % 8));
    }
    for (size_t i = 0; i < n_sums; i++)
        fill(s, ANA_SPEC_SUM, sums[i]);
}

int sum_physics(sum_data *d)
{
    ana_summary *s = d->s;
    qsort(s->line, (size_t)s->n_lines, sizeof s->line[0], by_line);
    sort_vec(&d->truth, sizeof(sum_truth), by_truth_event);
    sort_vec(&d->crystals, sizeof(sum_crystal), by_crystal_event);
    float *sums = malloc((d->crystals.n ? d->crystals.n : 1) * sizeof *sums);
    uint32_t *sum_event = malloc((d->crystals.n ? d->crystals.n : 1) * sizeof *sum_event);
    int rc = sums && sum_event ? ANA_OK : no_memory(d);
    size_t n_sums = rc == ANA_OK ? crystal_sums(d, sums, sum_event) : 0;
    if (rc == ANA_OK)
        rc = alloc_spectra(d, sums, n_sums);
    if (rc == ANA_OK) {
        spectra(d, sums, n_sums);
        events(d, sums, sum_event, n_sums);
        const sum_values v[ANA_SPECTRA] = {
            [ANA_SPEC_TRACKED] = {d->tracked_e.p, d->tracked_e.n, sizeof(float)},
            [ANA_SPEC_CRYSTAL] = {d->crystals.n ? (const char *)d->crystals.p + offsetof(sum_crystal, e0) : NULL,
                                  d->crystals.n, sizeof(sum_crystal)},
            [ANA_SPEC_SUM] = {sums, n_sums, sizeof(float)},
        };
        sum_peaks(s, v);
        sum_name_source(s);
        rc = positions(d);
    }
    if (rc == ANA_OK)
        missed_deposits(d);
    free(sums);
    free(sum_event);
    return rc;
}
