/* summary_peaks.c: `narwhal summary`'s photopeaks (a background-subtracted window and its moments) and the source's name. */
#include "summary_data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decay.h"

#define FWHM_PER_SIGMA 2.3548200450309493

/* Bins [lo, hi] of spectrum k, clipped to the spectrum: their counts. */
static double counts(const ana_summary *s, int k, long lo, long hi)
{
    double n = 0;
    for (long b = lo < 0 ? 0 : lo; b <= hi && b < (long)s->n_bins; b++)
        n += s->spectrum[k][b];
    return n;
}

/* The peak of spectrum k in the window [e - w, e + w] (model in summary.h). */
static ana_summary_peak measure(const ana_summary *s, int k, double e, double w)
{
    ana_summary_peak p = {0};
    long lo = (long)floor(e - w), hi = (long)floor(e + w), width = hi - lo + 1;
    if (lo < 0 || hi >= (long)s->n_bins)
        return p;
    /* the mean counts per bin in each band, at the band's centre: a straight line between them */
    double left = counts(s, k, lo - width, lo - 1) / (double)width, right = counts(s, k, hi + 1, hi + width) / (double)width;
    double x_left = lo - width / 2.0, x_right = hi + 1 + width / 2.0, slope = (right - left) / (x_right - x_left);
    double net = 0, first = 0, second = 0;
    for (long b = lo; b <= hi; b++) {
        double x = b + 0.5, c = s->spectrum[k][b] - (left + slope * (x - x_left));
        p.background += left + slope * (x - x_left);
        net += c;
        first += c * x;
        second += c * x * x;
    }
    p.area = net;
    if (net <= 0)
        return p;
    p.centroid = first / net;
    double var = second / net - p.centroid * p.centroid - 1.0 / 12;
    p.fwhm = net >= 10 && var > 0 ? FWHM_PER_SIGMA * sqrt(var) : 0;
    return p;
}

/* Another line within a's window or its bands (2 w either side). */
static int blended(const ana_summary *s, int i)
{
    for (int j = 0; j < s->n_lines; j++)
        if (j != i && fabs(s->line[j].e - s->line[i].e) < 2 * s->line[i].window + 1)
            return 1;
    return 0;
}

void sum_peaks(ana_summary *s)
{
    if (s->continuum)
        return;
    for (int i = 0; i < s->n_lines; i++) {
        ana_summary_line *l = &s->line[i];
        l->minor = l->emitted < 100 || (double)l->emitted < ANA_SUMMARY_MINOR * (double)s->gammas_emitted;
        /* a first pass at --window; the window then widens to 1.5 FWHM where the peak is wider */
        ana_summary_peak first = measure(s, ANA_SPEC_CRYSTAL, l->e, s->window);
        l->window = first.fwhm * 1.5 > s->window ? first.fwhm * 1.5 : s->window;
        for (int k = 0; k < ANA_SPECTRA; k++) {
            l->peak[k] = measure(s, k, l->e, l->window);
            l->peak[k].efficiency = l->emitted ? l->peak[k].area / (double)l->emitted : 0;
        }
    }
    for (int i = 0; i < s->n_lines; i++)
        s->line[i].blend = blended(s, i);
}

/* Whether energy e is one of scheme c's γ lines. */
static int in_scheme(const sim_scheme *c, double e)
{
    for (int t = 0; t < c->n; t++)
        if (fabs(c->t[t].e - e) < 0.01)
            return 1;
    return 0;
}

void sum_name_source(ana_summary *s)
{
    s->source[0] = '\0';
    if (s->continuum || !s->n_lines)
        return;
    for (const sim_scheme *c = sim_schemes; c->name; c++) {
        int strongest = 0, all = 1;
        for (int t = 1; t < c->n; t++)
            strongest = c->t[t].intensity > c->t[strongest].intensity ? t : strongest;
        for (int i = 0; i < s->n_lines && all; i++)
            all = in_scheme(c, s->line[i].e);
        int has_strongest = 0;
        for (int i = 0; i < s->n_lines; i++)
            has_strongest |= fabs(s->line[i].e - c->t[strongest].e) < 0.01;
        if (all && has_strongest) {
            snprintf(s->source, sizeof s->source, "%s", c->name);
            return;
        }
    }
}
