/* histo_output.c: lays the histogram files and plots out under the output directory, one file per histogram and format. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "histo_output.h"
#include "histo_write.h"

histo_status histo_output_mkdir(const char *dir, char *msg, size_t len)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(msg, len, "output directory path too long: '%s'", dir);
        return HISTO_E_IO;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(msg, len, "cannot create directory '%s': %s", path, strerror(errno));
            return HISTO_E_IO;
        }
        if (c == '\0')
            break;
        *p = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, len, "'%s' is not a directory", dir);
        return HISTO_E_IO;
    }
    return 0;
}

/* Counts the file when its writing succeeded; returns code. */
static histo_status counted(histo_status code, histo_written *w)
{
    w->files += code == HISTO_OK;
    return code;
}

static histo_status write_instance(const histo_spec *s, const histo_decl *d, const uint64_t *slots,
                                   const char *base, const char *name, const histo_files *files,
                                   histo_written *w, char *msg, size_t len)
{
    char path[PATH_MAX + 8]; /* base and an extension */
    histo_status code = HISTO_OK;
    bool m4b = d->g.dims == 2 && d->g.ax[0].bins == HISTO_M4B_SIDE &&
               d->g.ax[1].bins == HISTO_M4B_SIDE;
    if (d->g.dims == 1 && (s->formats & HISTO_SPE)) {
        char spe[80];
        snprintf(path, sizeof path, "%s.spe", base);
        snprintf(spe, sizeof spe, "%s.spe", name);
        code = counted(histo_write_spe(files, path, name, slots, d->g.ax[0].bins, msg, len), w);
        snprintf(path, sizeof path, "%s.spe.txt", base);
        if (!code)
            code = counted(histo_write_spe_notes(files, path, spe, name, histo_quantities[d->q].name,
                                                 histo_quantities[d->q].label[0], &d->g.ax[0], slots, msg, len),
                           w);
    }
    if (!code && m4b && (s->formats & HISTO_M4B)) {
        snprintf(path, sizeof path, "%s.m4b", base);
        code = counted(histo_write_m4b(files, path, slots, msg, len), w);
    }
    if (!code && (s->formats & HISTO_CSV)) {
        snprintf(path, sizeof path, "%s.csv", base);
        code = counted(histo_write_csv(files, path, &d->g, slots, msg, len), w);
    }
    return code;
}

static histo_status write_decl(const histo_spec *s, const histo_decl *d, const uint64_t *counts,
                               const char *dir, const histo_files *files, histo_written *w, char *msg,
                               size_t len)
{
    char sub[PATH_MAX], name[64], base[PATH_MAX];
    histo_status code = HISTO_OK;
    if (d->g.instances > 1) {
        snprintf(sub, sizeof sub, "%s/%s", dir, d->name);
        if ((code = histo_output_mkdir(sub, msg, len)) != 0)
            return code;
    } else {
        snprintf(sub, sizeof sub, "%s", dir);
    }
    for (uint32_t i = 0; i < d->g.instances && !code; i++) {
        histo_spec_instance_name(s, d, i, name, sizeof name);
        if (snprintf(base, sizeof base, "%s/%s", sub, name) >= (int)sizeof base) {
            snprintf(msg, len, "path too long under '%s'", sub);
            return HISTO_E_IO;
        }
        code = write_instance(s, d, counts + d->g.offset + (uint64_t)i * d->g.slots, base, name,
                              files, w, msg, len);
    }
    return code;
}

/* The plots, each a warning when it fails; after the first failure for want of gnuplot, none. */
static void write_plots(const histo_spec *s, const uint64_t *counts, const char *dir,
                        const histo_files *files, histo_written *w)
{
    for (size_t i = 0; i < s->n_plot; i++) {
        char why[512], warning[600];
        bool no_gnuplot;
        if (histo_plot_write(s, &s->plot[i], counts, dir, files, &no_gnuplot, why, sizeof why) == 0) {
            w->plots++;
            continue;
        }
        snprintf(warning, sizeof warning, "plot %s skipped: %s", s->plot[i].file, why);
        files->warn(files->ctx, warning);
        w->plot_failed = true;
        if (no_gnuplot)
            break;
    }
}

histo_status histo_output_write(const histo_spec *s, const uint64_t *counts, const char *dir,
                                const histo_files *files, histo_written *w, char *msg, size_t len)
{
    histo_status code = histo_output_mkdir(dir, msg, len);
    for (size_t i = 0; i < s->n_decl && !code; i++)
        code = write_decl(s, &s->decl[i], counts, dir, files, w, msg, len);
    if (!code)
        write_plots(s, counts, dir, files, w);
    if (code)
        *w = (histo_written){ 0 };
    return code;
}
