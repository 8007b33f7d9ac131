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

/* The scripts draw on gnuplot's standard output ("set output" without a
 * name) and name their data relative to the directory they lie in: the
 * summary runs them there (ana_gnuplot_run), and so may anyone, elsewhere. */
static void spectra_gp(FILE *fp, const ana_summary *s)
{
    fprintf(fp, "# in this directory: gnuplot spectra.gp > spectra.png\n"
                "set terminal pngcairo size 1400,800 noenhanced\nset output\nset datafile separator ','\n"
                "set title 'Gamma-ray energies: tracked against untracked (1 keV bins)'\n"
                "set xlabel 'energy (keV)'\nset ylabel 'counts per keV'\nset logscale y\nset xrange [0:%u]\n"
                "set yrange [0.8:*]\nset key top left\nset grid\n"
                "plot 'spectra.csv' using 1:($4>0?$4:1/0) with steps lw 1 lc rgb '#999999' title 'sum of the crystal "
                "energies per event', \\\n"
                "     '' using 1:($3>0?$3:1/0) with steps lw 1 lc rgb '#1f77b4' title 'crystal by crystal (no "
                "tracking)', \\\n"
                "     '' using 1:($2>0?$2:1/0) with steps lw 1.5 lc rgb '#d62728' title 'tracked gamma rays'\n",
            last_bin(s));
}

static void position_gp(FILE *fp, const ana_summary *s)
{
    fprintf(fp, "# in this directory: gnuplot position.gp > position.png\n"
                "set terminal pngcairo size 1400,600 noenhanced\nset output\n"
                "set datafile separator ','\n"
                "set multiplot layout 1,2 title 'PSA position against the truth (same event, crystal and segment)'\n"
                "set title 'residuals, PSA - truth'\nset xlabel 'mm'\nset ylabel 'hits per 0.5 mm'\nset grid\n"
                "plot 'residuals.csv' using 1:2 with steps lw 1.5 title 'x', '' using 1:3 with steps lw 1.5 title 'y', "
                "'' using 1:4 with steps lw 1.5 title 'z'\n"
                "set title 'resolution against the hit energy'\nset xlabel 'hit energy (keV)'\n"
                "set ylabel 'rms (mm)'\nset yrange [0:*]\nset logscale x\nset xrange [20:5000]\n"
                "plot 'resolution.csv' using 3:5 with linespoints pt 7 lw 1.5 title 'x', '' using 3:6 with linespoints "
                "pt 7 lw 1.5 title 'y', '' using 3:7 with linespoints pt 7 lw 1.5 title 'z'\n"
                "unset multiplot\n");
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
