/* summary_peaks.c: `narwhal summary`'s photopeaks (a background-subtracted window and its moments, unbinned) and the source's name. */
#include "summary_data.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decay.h"

#define FWHM_PER_SIGMA 2.3548200450309493

/* The energies of one spectrum as it was filled, unbinned. */
static float value(const sum_values *v, size_t i) { return *(const float *)((const char *)v->p + i * v->stride); }

/* The peak of the energies v in the window [e - w, e + w] (model in summary.h):
 * counts and moments of the window, less those of the straight background
 * through the two bands' densities (u = x - e, so that sums stay small). */
static ana_summary_peak measure(const sum_values *v, double e, double w)
{
    ana_summary_peak p = {0};
    double n = 0, su = 0, su2 = 0, left = 0, right = 0;
    for (size_t i = 0; i < v->n; i++) {
        double u = value(v, i) - e;
        if (u >= -w && u <= w) {
            n++;
            su += u;
            su2 += u * u;
        } else if (u >= -2 * w && u < -w) {
            left++;
        } else if (u > w && u <= 2 * w) {
            right++;
        }
    }
    /* densities (counts per keV) at the bands' centres, -1.5 w and +1.5 w: b(u) = c0 + slope u */
    double c0 = (left + right) / (2 * w), slope = (right - left) / w / (3 * w);
    double w3 = 2 * w * w * w / 3;
    p.background = 2 * w * c0;
    p.area = n - p.background;
    if (p.area <= 0)
        return p;
    double mean = (su - slope * w3) / p.area, var = (su2 - c0 * w3) / p.area - mean * mean;
    p.centroid = e + mean;
    p.fwhm = p.area >= 10 && var > 0 ? FWHM_PER_SIGMA * sqrt(var) : 0;
    return p;
}

/* Another line within line i's window or its bands (2 w either side), or within --window. */
static int blended(const ana_summary *s, int i)
{
    double reach = 2 * s->line[i].window > s->window ? 2 * s->line[i].window : s->window;
    for (int j = 0; j < s->n_lines; j++)
        if (j != i && fabs(s->line[j].e - s->line[i].e) < reach)
            return 1;
    return 0;
}

/* A peak measured in a window that follows it: --window first, then twice the
 * FWHM found (4.7 sigma: a Gaussian loses nothing that matters), a few times;
 * a window much wider than the peak lets the background's moments swamp its own. */
static ana_summary_peak follow(const sum_values *v, double e, double window, double *w)
{
    ana_summary_peak p = measure(v, e, *w = window);
    for (int pass = 0; pass < 3 && p.fwhm > 0; pass++)
        p = measure(v, e, *w = 2 * p.fwhm > 1 ? 2 * p.fwhm : 1);
    return p;
}

void sum_peaks(ana_summary *s, const sum_values v[ANA_SPECTRA])
{
    if (s->continuum)
        return;
    for (int i = 0; i < s->n_lines; i++) {
        ana_summary_line *l = &s->line[i];
        l->minor = l->emitted < 100 || (double)l->emitted < ANA_SUMMARY_MINOR * (double)s->gammas_emitted;
        l->window = s->window;
        for (int k = ANA_SPECTRA - 1; k >= 0; k--) {
            double w;
            l->peak[k] = follow(&v[k], l->e, s->window, &w);
            l->peak[k].efficiency = l->emitted ? l->peak[k].area / (double)l->emitted : 0;
            l->window = l->peak[k].area > 0 ? w : l->window; /* the untracked spectrum's, else the tracked one's */
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
