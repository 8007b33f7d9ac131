/* summary_plot.c: `narwhal summary` writes its spectra and PSA residuals as CSV and draws them with gnuplot. */
#include "summary_data.h"
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* dir/name into path; -1 (errno ENAMETOOLONG) when it does not fit. */
static int in_dir(const char *dir, const char *name, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/%s", dir, name) < len)
        return 0;
    errno = ENAMETOOLONG;
    return -1;
}

static int close_checked(FILE *fp) { return (ferror(fp) | fclose(fp)) ? -1 : 0; }

/* The highest bin with counts in any spectrum, plus a margin. */
static unsigned last_bin(const ana_summary *s)
{
    unsigned last = 0;
    for (int k = 0; k < ANA_SPECTRA; k++)
        for (unsigned b = 0; b < s->n_bins; b++)
            if (s->spectrum[k][b] && b + 1 > last)
                last = b + 1;
    last += 50;
    return last < s->n_bins ? last : s->n_bins;
}

static void spectra_csv(FILE *fp, const ana_summary *s)
{
    fprintf(fp, "# keV (bin low edge, 1 keV bins),tracked gammas,crystal energies,sum per event\n");
    for (unsigned b = 0; b < s->n_bins; b++)
        fprintf(fp, "%u,%u,%u,%u\n", b, s->spectrum[ANA_SPEC_TRACKED][b], s->spectrum[ANA_SPEC_CRYSTAL][b],
                s->spectrum[ANA_SPEC_SUM][b]);
}

static void residuals_csv(FILE *fp, const ana_summary *s)
{
    fprintf(fp, "# PSA - truth, mm (bin centre, 0.5 mm bins),x,y,z\n");
    for (int b = 0; b < 100; b++)
        fprintf(fp, "%.2f,%u,%u,%u\n", -25 + 0.5 * b + 0.25, s->residual[0][b], s->residual[1][b], s->residual[2][b]);
}

static void resolution_csv(FILE *fp, const ana_summary *s)
{
    fprintf(fp, "# hit keV from,to,centre,hits,rms x mm,rms y mm,rms z mm\n");
    for (int b = 0; b < ANA_SUMMARY_EBINS; b++) {
        double hi = isinf(s->ebin[b].hi) ? 2 * s->ebin[b].lo : s->ebin[b].hi;
        if (s->ebin[b].n)
            fprintf(fp, "%g,%g,%g,%llu,%.3f,%.3f,%.3f\n", s->ebin[b].lo, hi, 0.5 * (s->ebin[b].lo + hi), s->ebin[b].n,
                    s->ebin[b].rms[0], s->ebin[b].rms[1], s->ebin[b].rms[2]);
    }
}

/* Entries in the bins drawn, [0, last). */
static unsigned long long drawn(const ana_summary *s, unsigned last)
{
    unsigned long long n = 0;
    for (int k = 0; k < ANA_SPECTRA; k++)
        for (unsigned b = 0; b < last; b++)
            n += s->spectrum[k][b];
    return n;
}

/* The scripts draw on gnuplot's standard output ("set output" without a
 * name) and name their data relative to the directory they lie in: the
 * summary runs them there (ana_gnuplot_run), and so may anyone, elsewhere.
 * A spectrum with fewer entries than 5 per bin drawn is sparse: each bin an
 * impulse on a linear scale, so that no lone count is lost or drawn as a
 * plateau; a fuller one is drawn in steps on a log scale with its empty bins
 * at a floor of 0.5, so that a lone bin stands out from it. */
static void spectra_gp(FILE *fp, const ana_summary *s)
{
    static const struct {
        int column;
        const char *colour, *title;
    } series[] = {{4, "#999999", "sum of the event's crystals (calorimeter)"},
                  {3, "#1f77b4", "untracked: each crystal's energy"},
                  {2, "#d62728", "tracked γ rays"}};
    char title[160];
    unsigned last = last_bin(s);
    int sparse = drawn(s, last) < 5ull * last;
    ana_summary_title(s, title, sizeof title);
    fprintf(fp, "# in this directory: gnuplot spectra.gp > spectra.png\n"
                "set terminal pngcairo size 1400,800 noenhanced\nset output\nset datafile separator ','\n"
                "set title '%s: γ-ray energy, tracked and untracked'\n"
                "set xlabel 'Energy (keV)'\nset ylabel 'Counts / keV'\nset xrange [0:%u]\n"
                "set key top right\nset grid\n",
            title, last);
    if (sparse)
        fprintf(fp, "set yrange [0:*]\n");
    else
        fprintf(fp, "set logscale y\nset yrange [0.5:*]\n");
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++) {
        int c = series[i].column;
        if (sparse)
            fprintf(fp, "%s '%s' using ($1+0.5):($%d>0?$%d:1/0) with impulses lw 1.5 lc rgb '%s' title \"%s\"%s",
                    i ? "    " : "plot", i ? "" : "spectra.csv", c, c, series[i].colour, series[i].title,
                    i + 1 < sizeof series / sizeof series[0] ? ", \\\n" : "\n");
        else
            fprintf(fp, "%s '%s' using 1:($%d>0?$%d:0.5) with steps lw 1 lc rgb '%s' title \"%s\"%s", i ? "    " : "plot",
                    i ? "" : "spectra.csv", c, c, series[i].colour, series[i].title,
                    i + 1 < sizeof series / sizeof series[0] ? ", \\\n" : "\n");
    }
}

static void position_gp(FILE *fp, const ana_summary *s)
{
    char title[160];
    ana_summary_title(s, title, sizeof title);
    fprintf(fp, "# in this directory: gnuplot position.gp > position.png\n"
                "set terminal pngcairo size 1400,600 noenhanced\nset output\n"
                "set datafile separator ','\n"
                "set multiplot layout 1,2 title '%s: PSA position against the truth (same event, crystal and "
                "segment)'\n"
                "set title 'Residuals, PSA - truth'\nset xlabel 'Residual (mm)'\nset ylabel 'Hits / 0.5 mm'\n"
                "set grid\nset yrange [0:*]\n"
                "plot 'residuals.csv' using 1:2 with histeps lw 1.5 title 'x', '' using 1:3 with histeps lw 1.5 "
                "title 'y', '' using 1:4 with histeps lw 1.5 title 'z'\n"
                "set title 'Resolution against the hit energy'\nset xlabel 'Hit energy (keV)'\n"
                "set ylabel 'rms residual (mm)'\nset logscale x\nset xrange [20:5000]\n"
                "plot 'resolution.csv' using 3:5 with linespoints pt 7 lw 1.5 title 'x', '' using 3:6 with linespoints "
                "pt 7 lw 1.5 title 'y', '' using 3:7 with linespoints pt 7 lw 1.5 title 'z'\n"
                "unset multiplot\n",
            title);
}

/* The files the summary writes for its plots: data, then the scripts that draw them. */
static const struct {
    const char *name;
    void (*write)(FILE *fp, const ana_summary *s);
} plot_files[] = {
    {"spectra.csv", spectra_csv}, {"residuals.csv", residuals_csv}, {"resolution.csv", resolution_csv},
    {"spectra.gp", spectra_gp},   {"position.gp", position_gp},
};

static int write_files(const ana_summary *s, const char *dir)
{
    char path[4096];
    for (size_t i = 0; i < sizeof plot_files / sizeof plot_files[0]; i++) {
        FILE *fp = in_dir(dir, plot_files[i].name, path, sizeof path) == 0 ? fopen(path, "w") : NULL;
        if (!fp)
            return -1;
        plot_files[i].write(fp, s);
        if (close_checked(fp) != 0)
            return -1;
    }
    return 0;
}

static int make_dir(const char *dir)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* NAME.gp in dir drawn into NAME.png there; a PNG gnuplot did not finish is removed. */
static int draw(const char *dir, const char *name, char *msg, size_t len)
{
    char file[256], script[4096], png[4096];
    snprintf(file, sizeof file, "%s.gp", name);
    int bad = in_dir(dir, file, script, sizeof script);
    snprintf(file, sizeof file, "%s.png", name);
    bad |= in_dir(dir, file, png, sizeof png);
    int in = bad ? -1 : open(script, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return ana_fail(msg, len, ANA_E_PLOT, "%s/%s.gp: %s", dir, name, strerror(errno));
    int out = open(png, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (out < 0) {
        int rc = ana_fail(msg, len, ANA_E_PLOT, "%s: %s", png, strerror(errno));
        close(in);
        return rc;
    }
    int rc = ana_gnuplot_run(in, out, dir, msg, len);
    close(in);
    if (close(out) != 0 && rc == ANA_OK)
        rc = ana_fail(msg, len, ANA_E_PLOT, "%s: %s", png, strerror(errno));
    if (rc != ANA_OK)
        unlink(png);
    return rc;
}

int sum_plot(const ana_summary *s, const char *dir, char *msg, size_t len)
{
    if (make_dir(dir) != 0 || write_files(s, dir) != 0)
        return ana_fail(msg, len, ANA_E_PLOT, "%s: cannot write the plot data: %s", dir, strerror(errno));
    char why[512];
    const char *failed = "spectra.gp";
    int rc = draw(dir, "spectra", why, sizeof why);
    if (rc == ANA_OK) {
        failed = "position.gp";
        rc = draw(dir, "position", why, sizeof why);
    }
    if (rc == ANA_E_NO_GNUPLOT)
        return ana_fail(msg, len, rc,
                        "%s/: spectra.csv, residuals.csv, resolution.csv and the gnuplot scripts spectra.gp, "
                        "position.gp (%s: run them in that directory where there is one)", dir, why);
    if (rc != ANA_OK)
        return ana_fail(msg, len, rc, "%s/: %s on %s; the CSV files and scripts are there", dir, why, failed);
    snprintf(msg, len, "%s/spectra.png (tracked against untracked), %s/position.png (PSA residuals and "
                       "resolution); data in spectra.csv, residuals.csv, resolution.csv", dir, dir);
    return ANA_OK;
}
