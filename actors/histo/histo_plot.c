/* histo_plot.c: draws a 1D spectrum as a PNG with gnuplot: labelled axes, the range that holds counts, the highest bin marked. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "histo_output.h"
#include "narval.h"

extern char **environ;

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

/* The unit inside the last parentheses of an axis label: "keV" of "core energy (keV)". */
static void unit_of(const char *label, char *out, size_t len)
{
    const char *open = strrchr(label, '('), *close = strrchr(label, ')');
    if (open && close > open)
        snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
    else
        snprintf(out, len, "unit");
}

static void script(FILE *gp, const char *tmp, const char *title, const histo_axis *a,
                   const char *label, const uint64_t *bins, const view *v)
{
    char unit[32];
    double width = ((double)a->hi - a->lo) / a->bins;
    unit_of(label, unit, sizeof unit);
    fprintf(gp, "set terminal pngcairo size 1000,600 noenhanced font 'sans,10'\n"
                "set output '%s'\nset title \"%s\"\nset xlabel '%s'\n"
                "set ylabel 'counts per %.4g %s'\nset grid\nset key off\n",
            tmp, title, label, width, unit);
    fprintf(gp, "set xrange [%.9g:%.9g]\n", a->lo + v->first * width, a->lo + v->last * width);
    if (v->max >= 100)
        fprintf(gp, "set logscale y\nset yrange [0.8:%g]\n", v->max * 3.0);
    else
        fprintf(gp, "set yrange [0:%g]\n", v->max ? v->max * 1.15 : 1.0);
    if (v->total)
        fprintf(gp, "set label 1 'highest bin: %.6g %s, %llu counts' at first %.9g, first %g "
                    "left offset 1,0.5 front\nset arrow 1 from first %.9g, first %g to first "
                    "%.9g, first %g head\n",
                a->lo + (v->peak + 0.5) * width, unit, (unsigned long long)v->max,
                a->lo + (v->peak + 0.5) * width, v->max * (v->max >= 100 ? 1.8 : 1.08),
                a->lo + (v->peak + 0.5) * width, v->max * (v->max >= 100 ? 1.7 : 1.07),
                a->lo + (v->peak + 0.5) * width, (double)v->max);
    else
        fprintf(gp, "set label 1 'no counts in range' at graph 0.5, graph 0.5 center\n");
    fprintf(gp, "plot '-' using 1:2 with steps lw 1.2 lc rgb '#1f4e79'\n");
    for (uint64_t i = v->first; i < v->last; i++)
        fprintf(gp, "%.9g %llu\n", a->lo + i * width, (unsigned long long)bins[i]);
    fprintf(gp, "%.9g %llu\ne\n", a->lo + v->last * width,
            (unsigned long long)(v->last > v->first ? bins[v->last - 1] : 0));
}

/* Writes the script to a file and runs gnuplot on it: a pipe to a gnuplot
 * that is missing or dies would raise SIGPIPE in the host.  0, or -1 with
 * msg; *missing tells that gnuplot is not installed. */
static int run_gnuplot(const char *tmp, const char *title, const histo_axis *a, const char *label,
                       const uint64_t *bins, bool *missing, char *msg, size_t len)
{
    char gp[PATH_MAX + 16];
    view v = frame(bins, a->bins);
    int status = 0, rc = -1;
    pid_t pid;
    snprintf(gp, sizeof gp, "%s.gp", tmp);
    FILE *fp = fopen(gp, "w");
    if (!fp) {
        snprintf(msg, len, "cannot create '%s': %s", gp, strerror(errno));
        return -1;
    }
    script(fp, tmp, title, a, label, bins, &v);
    if (fclose(fp) != 0) {
        snprintf(msg, len, "cannot write '%s': %s", gp, strerror(errno));
        goto done;
    }
    char *argv[] = { "gnuplot", gp, NULL };
    int err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    *missing = err == ENOENT;
    if (err) {
        snprintf(msg, len, "%s", *missing ? "gnuplot is not installed (apt-get install gnuplot-nox)"
                                          : strerror(err));
        goto done;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        snprintf(msg, len, "gnuplot failed on '%s' (its message is above)", gp);
    else
        rc = 0;
done:
    unlink(gp);
    return rc;
}

int histo_plot_write(const histo_spec *s, const histo_plot *p, const uint64_t *counts,
                     const char *dir, bool *no_gnuplot, char *msg, size_t len)
{
    const histo_decl *d = &s->decl[p->decl];
    const uint64_t n = d->g.slots;
    char path[PATH_MAX], tmp[PATH_MAX + 8], title[256];
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
    snprintf(path, sizeof path, "%s/%s.png", dir, p->file);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (strchr(tmp, '\'') || strchr(tmp, '\\')) {
        snprintf(msg, len, "cannot give gnuplot the path '%s' (it holds a quote or backslash)",
                 path);
        goto done;
    }
    const uint64_t *extra = sum + d->g.ax[0].bins;
    snprintf(title, sizeof title, "%s: %s%s%s\\n%llu in range, underflow %llu, overflow %llu, "
             "NaN %llu", d->name, histo_quantities[d->q].name, p->what[0] ? ", " : "", p->what,
             (unsigned long long)frame(sum, d->g.ax[0].bins).total,
             (unsigned long long)extra[HISTO_UNDER], (unsigned long long)extra[HISTO_OVER],
             (unsigned long long)extra[HISTO_NAN]);
    if (run_gnuplot(tmp, title, &d->g.ax[0], histo_quantities[d->q].label[0], sum, no_gnuplot,
                    msg, len) != 0) {
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        snprintf(msg, len, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto done;
    }
    rc = 0;
done:
    free(sum);
    return rc;
}
