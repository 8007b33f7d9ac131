/* summary_plot.c: `narwhal summary` writes its spectra and PSA residuals as CSV and draws them with gnuplot. */
#include "summary_data.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static FILE *open_in(const char *dir, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    return fopen(path, "w");
}

static int close_checked(FILE *fp) { return (ferror(fp) | fclose(fp)) ? -1 : 0; }

/* The highest bin with counts in any spectrum, plus a margin. */
static unsigned last_bin(const emu_summary *s)
{
    unsigned last = 0;
    for (int k = 0; k < EMU_SPECTRA; k++)
        for (unsigned b = 0; b < s->n_bins; b++)
            if (s->spectrum[k][b] && b + 1 > last)
                last = b + 1;
    last += 50;
    return last < s->n_bins ? last : s->n_bins;
}

static int write_spectra(const emu_summary *s, const char *dir)
{
    char path[4096];
    FILE *fp = open_in(dir, "spectra.csv", path, sizeof path);
    if (!fp)
        return -1;
    fprintf(fp, "# keV (bin low edge, 1 keV bins),tracked gammas,crystal energies,sum per event\n");
    for (unsigned b = 0; b < s->n_bins; b++)
        fprintf(fp, "%u,%u,%u,%u\n", b, s->spectrum[EMU_SPEC_TRACKED][b], s->spectrum[EMU_SPEC_CRYSTAL][b],
                s->spectrum[EMU_SPEC_SUM][b]);
    return close_checked(fp);
}

static int write_residuals(const emu_summary *s, const char *dir)
{
    char path[4096];
    FILE *fp = open_in(dir, "residuals.csv", path, sizeof path);
    if (!fp)
        return -1;
    fprintf(fp, "# PSA - truth, mm (bin centre, 0.5 mm bins),x,y,z\n");
    for (int b = 0; b < 100; b++)
        fprintf(fp, "%.2f,%u,%u,%u\n", -25 + 0.5 * b + 0.25, s->residual[0][b], s->residual[1][b], s->residual[2][b]);
    fclose(fp);
    fp = open_in(dir, "resolution.csv", path, sizeof path);
    if (!fp)
        return -1;
    fprintf(fp, "# hit keV from,to,centre,hits,rms x mm,rms y mm,rms z mm\n");
    for (int b = 0; b < EMU_SUMMARY_EBINS; b++) {
        double hi = isinf(s->ebin[b].hi) ? 2 * s->ebin[b].lo : s->ebin[b].hi;
        if (s->ebin[b].n)
            fprintf(fp, "%g,%g,%g,%llu,%.3f,%.3f,%.3f\n", s->ebin[b].lo, hi, 0.5 * (s->ebin[b].lo + hi), s->ebin[b].n,
                    s->ebin[b].rms[0], s->ebin[b].rms[1], s->ebin[b].rms[2]);
    }
    return close_checked(fp);
}

static int write_scripts(const emu_summary *s, const char *dir)
{
    char path[4096];
    FILE *fp = open_in(dir, "spectra.gp", path, sizeof path);
    if (!fp)
        return -1;
    fprintf(fp, "set terminal pngcairo size 1400,800 noenhanced\nset output 'spectra.png'\nset datafile separator ','\n"
                "set title 'Gamma-ray energies: tracked against untracked (1 keV bins)'\n"
                "set xlabel 'energy (keV)'\nset ylabel 'counts per keV'\nset logscale y\nset xrange [0:%u]\n"
                "set yrange [0.8:*]\nset key top left\nset grid\n"
                "plot 'spectra.csv' using 1:($4>0?$4:1/0) with steps lw 1 lc rgb '#999999' title 'sum of the crystal "
                "energies per event', \\\n"
                "     '' using 1:($3>0?$3:1/0) with steps lw 1 lc rgb '#1f77b4' title 'crystal by crystal (no "
                "tracking)', \\\n"
                "     '' using 1:($2>0?$2:1/0) with steps lw 1.5 lc rgb '#d62728' title 'tracked gamma rays'\n",
            last_bin(s));
    if (close_checked(fp) != 0)
        return -1;
    fp = open_in(dir, "position.gp", path, sizeof path);
    if (!fp)
        return -1;
    fprintf(fp, "set terminal pngcairo size 1400,600 noenhanced\nset output 'position.png'\n"
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
    return close_checked(fp);
}

/* Whether an executable gnuplot lies on the PATH. */
static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char file[4096];
    for (const char *d = path ? path : ""; *d;) {
        size_t n = strcspn(d, ":");
        snprintf(file, sizeof file, "%.*s/gnuplot", (int)n, n ? d : ".");
        if (access(file, X_OK) == 0)
            return 1;
        d += n + (d[n] == ':');
    }
    return 0;
}

/* gnuplot SCRIPT in dir; 0 when it ran and succeeded, -1 when it is not
 * installed, its exit status otherwise. */
static int gnuplot(const char *dir, const char *script)
{
    if (!have_gnuplot())
        return -1;
    char cwd_script[4096];
    snprintf(cwd_script, sizeof cwd_script, "cd '%s' && exec gnuplot '%s'", dir, script);
    char *argv[] = {"sh", "-c", cwd_script, NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "sh", NULL, NULL, argv, environ) != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int make_dir(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

int sum_plot(const emu_summary *s, const char *dir, char *msg, size_t len)
{
    if (strchr(dir, '\'')) {
        snprintf(msg, len, "%s: a directory with a quote in its name is not supported", dir);
        return -1;
    }
    if (make_dir(dir) != 0 || write_spectra(s, dir) != 0 || write_residuals(s, dir) != 0 ||
        write_scripts(s, dir) != 0) {
        snprintf(msg, len, "%s: cannot write the plot data: %s", dir, strerror(errno));
        return -1;
    }
    int a = gnuplot(dir, "spectra.gp"), b = a < 0 ? a : gnuplot(dir, "position.gp");
    if (a < 0 || b < 0)
        snprintf(msg, len, "%s/: spectra.csv, residuals.csv, resolution.csv and the gnuplot scripts spectra.gp, "
                           "position.gp (no gnuplot here: run them where there is one)", dir);
    else if (a || b)
        snprintf(msg, len, "%s/: gnuplot failed (exit %d) on %s; the CSV files and scripts are there", dir, a ? a : b,
                 a ? "spectra.gp" : "position.gp");
    else
        snprintf(msg, len, "%s/spectra.png (tracked against untracked), %s/position.png (PSA residuals and "
                           "resolution); data in spectra.csv, residuals.csv, resolution.csv", dir, dir);
    return a || b ? -1 : 0;
}
