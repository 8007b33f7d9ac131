/* histo_plot.c: draws a 1D spectrum as a PNG with gnuplot: a physicist's title and axes, the range that holds counts, lone bins kept visible, the highest bin marked. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "gnuplot.h"
#include "histo_output.h"

/* What a plot shows, taken from the summed bins. */
typedef struct view {
    uint64_t first, last; /* bins drawn, [first, last) */
    uint64_t peak;        /* the highest bin */
    uint64_t max, total;
} view;

/* The bins that hold counts, with a margin of a twentieth of their span (at
 * least 8 bins) on each side, so that the peaks fill the picture. */
static view frame(const uint64_t *bins, uint64_t n)
{
    view v = { n, 0, 0, 0, 0 };
    for (uint64_t i = 0; i < n; i++) {
        if (!bins[i])
            continue;
        v.first = i < v.first ? i : v.first;
        v.last = i + 1;
        v.total += bins[i];
        if (bins[i] > v.max) {
            v.max = bins[i];
            v.peak = i;
        }
    }
    if (v.total == 0)
        return (view){ 0, n, 0, 0, 0 };
    uint64_t margin = (v.last - v.first) / 20 > 8 ? (v.last - v.first) / 20 : 8;
    v.first = v.first > margin ? v.first - margin : 0;
    v.last = v.last + margin < n ? v.last + margin : n;
    return v;
}

/* What a physicist calls each quantity: the plot's title and its x axis. */
static const struct {
    const char *title, *axis, *unit;
} quantity_names[HISTO_Q_COUNT] = {
    [HISTO_Q_CRYSTAL_SEGMENT] = {"Segment energy (traces)", "Energy (keV)", "keV"},
    [HISTO_Q_CRYSTAL_CORE] = {"Core energy (traces)", "Energy (keV)", "keV"},
    [HISTO_Q_PSA_E] = {"Interaction energy (PSA hits)", "Energy (keV)", "keV"},
    [HISTO_Q_PSA_X] = {"Interaction x (PSA hits, crystal frame)", "x (mm)", "mm"},
    [HISTO_Q_PSA_Y] = {"Interaction y (PSA hits, crystal frame)", "y (mm)", "mm"},
    [HISTO_Q_PSA_Z] = {"Interaction z (PSA hits, crystal frame)", "z (mm)", "mm"},
    [HISTO_Q_PSA_CORE] = {"Crystal energy, untracked (PSA core e0)", "Energy (keV)", "keV"},
    [HISTO_Q_TRACKED_E] = {"Tracked γ-ray energy", "Energy (keV)", "keV"},
    [HISTO_Q_TRACKED_E_DC] = {"Tracked γ-ray energy, Doppler-corrected", "Energy (keV)", "keV"},
    [HISTO_Q_GG_E] = {"γ-γ coincidences", "Energy (keV)", "keV"},
    [HISTO_Q_GG_E_DC] = {"γ-γ coincidences, Doppler-corrected", "Energy (keV)", "keV"},
    [HISTO_Q_PSA_XY] = {"Interaction x-y (PSA hits)", "x (mm)", "mm"},
};

/* "1", "0.5": a bin width as a per-unit label ("Counts / keV", "Counts / 0.5 keV"). */
static void per_bin(double width, const char *unit, char *out, size_t len)
{
    if (width == 1)
        snprintf(out, len, "Counts / %s", unit);
    else
        snprintf(out, len, "Counts / %.4g %s", width, unit);
}

/* The script draws on gnuplot's standard output ("set output" without a name).
 * A spectrum with fewer counts than 5 per bin drawn is sparse: each bin an
 * impulse on a linear scale, so that no lone count is lost or drawn as a
 * plateau.  A fuller one is drawn in steps, on a log scale when its highest
 * bin has 100 counts or more, its empty bins then at a floor of 0.5 so that
 * a lone bin stands out from it (a log scale drops zeros, and a step needs
 * its neighbours). */
static void script(FILE *gp, const char *title, const histo_axis *a, histo_quantity q, const uint64_t *bins,
                   const view *v)
{
    char ylabel[64];
    double width = ((double)a->hi - a->lo) / a->bins;
    bool sparse = v->total < 5 * (v->last - v->first), log_y = !sparse && v->max >= 100;
    per_bin(width, quantity_names[q].unit, ylabel, sizeof ylabel);
    fprintf(gp, "set terminal pngcairo size 1000,600 noenhanced font 'sans,10'\n"
                "set output\nset title \"%s\"\nset xlabel '%s'\n"
                "set ylabel '%s'\nset grid\nset key off\n",
            title, quantity_names[q].axis, ylabel);
    fprintf(gp, "set xrange [%.9g:%.9g]\n", a->lo + v->first * width, a->lo + v->last * width);
    if (log_y)
        fprintf(gp, "set logscale y\nset yrange [0.5:%g]\n", v->max * 3.0);
    else
        fprintf(gp, "set yrange [0:%g]\n", v->max ? v->max * 1.15 : 1.0);
    if (v->total)
        fprintf(gp, "set label 1 'highest bin: %.6g %s, %llu counts' at first %.9g, first %g "
                    "left offset 1,0.5 front\nset arrow 1 from first %.9g, first %g to first "
                    "%.9g, first %g head\n",
                a->lo + (v->peak + 0.5) * width, quantity_names[q].unit, (unsigned long long)v->max,
                a->lo + (v->peak + 0.5) * width, v->max * (log_y ? 1.8 : 1.08),
                a->lo + (v->peak + 0.5) * width, v->max * (log_y ? 1.7 : 1.07),
                a->lo + (v->peak + 0.5) * width, (double)v->max);
    else
        fprintf(gp, "set label 1 'no counts in range' at graph 0.5, graph 0.5 center\n");
    if (sparse) {
        fprintf(gp, "plot '-' using 1:2 with impulses lw 1.5 lc rgb '#1f4e79'\n");
        for (uint64_t i = v->first; i < v->last; i++)
            if (bins[i])
                fprintf(gp, "%.9g %llu\n", a->lo + (i + 0.5) * width, (unsigned long long)bins[i]);
        fprintf(gp, "e\n");
        return;
    }
    fprintf(gp, "plot '-' using 1:2 with steps lw 1.2 lc rgb '#1f4e79'\n");
    for (uint64_t i = v->first; i < v->last; i++)
        fprintf(gp, "%.9g %.9g\n", a->lo + i * width, bins[i] || !log_y ? (double)bins[i] : 0.5);
    fprintf(gp, "%.9g %.9g\ne\n", a->lo + v->last * width, v->last > v->first ? (double)bins[v->last - 1] : 0.0);
}

/* Runs gnuplot (analysis/gnuplot.h: no shell) with the script on its
 * standard input, from an unnamed temporary file, and the PNG on its
 * standard output, the descriptor of the plot's own temporary: gnuplot is
 * given no path at all.  0, or -1 with msg; *missing tells that gnuplot is
 * not installed. */
static int run_gnuplot(int png_fd, const char *title, const histo_axis *a, histo_quantity q,
                       const uint64_t *bins, bool *missing, char *msg, size_t len)
{
    view v = frame(bins, a->bins);
    int rc = ANA_E_PLOT;
    FILE *gp = tmpfile();
    if (!gp) {
        snprintf(msg, len, "cannot create the gnuplot script: %s", strerror(errno));
        return -1;
    }
    script(gp, title, a, q, bins, &v);
    if (fflush(gp) != 0 || ferror(gp) || fseek(gp, 0, SEEK_SET) != 0)
        snprintf(msg, len, "cannot write the gnuplot script: %s", strerror(errno));
    else
        rc = ana_gnuplot_run(fileno(gp), png_fd, NULL, msg, len);
    fclose(gp);
    *missing = rc == ANA_E_NO_GNUPLOT;
    return rc == ANA_OK ? 0 : -1;
}

int histo_plot_write(const histo_spec *s, const histo_plot *p, const uint64_t *counts,
                     const char *dir, const histo_files *files, bool *no_gnuplot, char *msg, size_t len)
{
    const histo_decl *d = &s->decl[p->decl];
    const uint64_t n = d->g.slots;
    char path[PATH_MAX], title[256];
    FILE *png;
    int rc = -1;
    uint64_t *sum = calloc(n, sizeof *sum);
    *no_gnuplot = false;
    if (!sum) {
        snprintf(msg, len, "out of memory for plot %s", p->file);
        return -1;
    }
    for (uint32_t k = 0; k < p->count; k++) {
        const uint64_t *h = counts + d->g.offset + (uint64_t)(p->first + k) * n;
        for (uint64_t i = 0; i < n; i++)
            sum[i] += h[i];
    }
    const uint64_t *extra = sum + d->g.ax[0].bins;
    snprintf(title, sizeof title, "%s%s%s\\nhistogram '%s' (%s): %llu in range, underflow %llu, overflow %llu, "
             "NaN %llu", quantity_names[d->q].title, p->what[0] ? ", " : "", p->what, d->name,
             histo_quantities[d->q].name,
             (unsigned long long)frame(sum, d->g.ax[0].bins).total,
             (unsigned long long)extra[HISTO_UNDER], (unsigned long long)extra[HISTO_OVER],
             (unsigned long long)extra[HISTO_NAN]);
    if (snprintf(path, sizeof path, "%s/%s.png", dir, p->file) >= (int)sizeof path)
        snprintf(msg, len, "path too long: '%s/%s.png'", dir, p->file);
    else if (files->create(files->ctx, path, &png, msg, len) == HISTO_OK) {
        char ignored[256]; /* gnuplot's reason stays in msg */
        /* gnuplot writes the PNG through the descriptor: nothing passes through png's buffer */
        rc = run_gnuplot(fileno(png), title, &d->g.ax[0], d->q, sum, no_gnuplot, msg, len);
        if (rc != 0)
            files->finish(files->ctx, false, ignored, sizeof ignored);
        else if (files->finish(files->ctx, true, msg, len) != HISTO_OK)
            rc = -1;
    }
    free(sum);
    return rc;
}
