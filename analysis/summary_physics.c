/* summary_physics.c: `narwhal summary`'s physics: events by fate, PSA against the truth, spectra, photopeaks. */
#include "summary_data.h"
#include "ana.h"

#include <math.h>
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

/* An entry of spectrum k: its 1 keV bin, and the line whose window holds it. */
static void fill(ana_summary *s, int k, double e)
{
    s->total[k]++;
    if (e >= 0 && e < s->n_bins)
        s->spectrum[k][(unsigned)e]++;
    for (int i = 0; i < s->n_lines && !s->continuum; i++)
        if (fabs(e - s->line[i].e) <= s->window)
            s->line[i].peak[k]++;
}

/* Each generator event: its crystals' energies summed (a calorimeter's
 * answer: all of an M = 1 γ), and what became of it. */
static void events(sum_data *d)
{
    ana_summary *s = d->s;
    const sum_truth *t = d->truth.p;
    const sum_crystal *c = d->crystals.p;
    const sum_built *b = d->built.p;
    size_t j = 0;
    s->events = d->truth.n;
    for (size_t i = 0; i < d->truth.n; i++) {
        while (j < d->crystals.n && c[j].event < t[i].event)
            j++;
        double sum = 0;
        int n = 0, worst = 0, piled = 0, untracked = 0;
        for (; j < d->crystals.n && c[j].event == t[i].event; j++, n++) {
            const sum_built *ev = &b[c[j].built];
            sum += c[j].e0;
            worst = ev->status > worst ? ev->status : worst;
            untracked |= ev->status < 0;
            piled |= ev->mixed;
        }
        if (n == 0) {
            s->ev_no_psa++;
            s->ev_missed += t[i].missed;
            continue;
        }
        fill(s, ANA_SPEC_SUM, sum);
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

/* Every PSA hit against the truth's point in the same event, crystal and segment. */
static int positions(sum_data *d)
{
    ana_summary *s = d->s;
    sum_point *h = d->hits.p, *t = d->truth_points.p;
    qsort(h, d->hits.n, sizeof *h, by_point);
    qsort(t, d->truth_points.n, sizeof *t, by_point);
    const sum_point **match = calloc(d->hits.n ? d->hits.n : 1, sizeof *match);
    float *scratch = malloc((d->hits.n ? d->hits.n : 1) * sizeof *scratch);
    if (!match || !scratch) {
        free(match);
        free(scratch);
        return ana_fail(d->err, d->errlen, ANA_E_MEMORY, "%s: out of memory", d->path);
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
    sum_crystal *c = d->crystals.p;
    size_t j = 0, k = 0;
    qsort(c, d->crystals.n, sizeof *c, by_crystal_event);
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

static int alloc_spectra(sum_data *d)
{
    ana_summary *s = d->s;
    double top = d->max_energy > 0 ? d->max_energy * 1.1 + 50 : 4096;
    s->n_bins = (unsigned)(ceil(top / 100) * 100);
    for (int k = 0; k < ANA_SPECTRA; k++)
        if (!(s->spectrum[k] = calloc(s->n_bins, sizeof *s->spectrum[k])))
            return ana_fail(d->err, d->errlen, ANA_E_MEMORY, "%s: out of memory", d->path);
    return ANA_OK;
}

static int by_line(const void *pa, const void *pb)
{
    double a = ((const ana_summary_line *)pa)->e, b = ((const ana_summary_line *)pb)->e;
    return (a > b) - (a < b);
}

int sum_physics(sum_data *d)
{
    ana_summary *s = d->s;
    int rc = alloc_spectra(d);
    if (rc != ANA_OK)
        return rc;
    qsort(s->line, (size_t)s->n_lines, sizeof s->line[0], by_line);
    qsort(d->truth.p, d->truth.n, sizeof(sum_truth), by_truth_event);
    qsort(d->crystals.p, d->crystals.n, sizeof(sum_crystal), by_crystal_event);
    const float *g = d->tracked_e.p;
    for (size_t i = 0; i < d->tracked_e.n; i++)
        fill(s, ANA_SPEC_TRACKED, g[i]);
    const sum_crystal *c = d->crystals.p;
    for (size_t i = 0; i < d->crystals.n; i++)
        fill(s, ANA_SPEC_CRYSTAL, c[i].e0);
    events(d);
    rc = positions(d);
    if (rc == ANA_OK)
        missed_deposits(d);
    return rc;
}
