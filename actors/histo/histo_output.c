/* histo_output.c: lays the histogram files and plots out under the output directory, one file per histogram and format. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "histo_output.h"
#include "histo_write.h"
#include "kit.h"

unsigned histo_output_mkdir(const char *dir, char *msg, size_t len)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(msg, len, "output directory path too long: '%s'", dir);
        return NARVAL_E_IO;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(msg, len, "cannot create directory '%s': %s", path, strerror(errno));
            return NARVAL_E_IO;
        }
        if (c == '\0')
            break;
        *p = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, len, "'%s' is not a directory", dir);
        return NARVAL_E_IO;
    }
    return 0;
}

/* The temporaries of one write, published or discarded together. */
typedef struct staged {
    kit_output *v;
    size_t n, cap;
} staged;

/* A zeroed output at the end of the set; NULL with msg when out of memory. */
static kit_output *stage(staged *st, char *msg, size_t len)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        kit_output *v = realloc(st->v, cap * sizeof *v);
        if (!v) {
            snprintf(msg, len, "out of memory for %zu output files", cap);
            return NULL;
        }
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n] = (kit_output){ .fd = -1 };
    return &st->v[st->n++];
}

/* Keeps the last staged output when its writing succeeded (code 0), else
 * forgets it (it holds nothing); counts the file; returns code. */
static unsigned staged_done(staged *st, unsigned code, histo_written *w)
{
    if (code)
        st->n--;
    else
        w->files++;
    return code;
}

static void discard_all(staged *st)
{
    for (size_t i = 0; i < st->n; i++)
        kit_output_discard(&st->v[i]);
    free(st->v);
}

/* Renames every temporary; after a failure the rest are removed, not published. */
static unsigned publish_all(staged *st, char *msg, size_t len)
{
    unsigned code = 0;
    for (size_t i = 0; i < st->n && !code; i++)
        code = kit_output_publish(&st->v[i], false, msg, len);
    discard_all(st);
    return code;
}

static unsigned write_instance(const histo_spec *s, const histo_decl *d, const uint64_t *slots,
                               const char *base, const char *name, staged *st, histo_written *w,
                               char *msg, size_t len)
{
    char path[PATH_MAX + 8]; /* base and an extension */
    unsigned code = 0;
    kit_output *o;
    bool m4b = d->g.dims == 2 && d->g.ax[0].bins == HISTO_M4B_SIDE &&
               d->g.ax[1].bins == HISTO_M4B_SIDE;
    if (d->g.dims == 1 && (s->formats & HISTO_SPE)) {
        snprintf(path, sizeof path, "%s.spe", base);
        if (!(o = stage(st, msg, len)))
            return NARVAL_E_NOMEM;
        code = staged_done(st, histo_write_spe(o, path, name, slots, d->g.ax[0].bins, msg, len), w);
    }
    if (!code && m4b && (s->formats & HISTO_M4B)) {
        snprintf(path, sizeof path, "%s.m4b", base);
        if (!(o = stage(st, msg, len)))
            return NARVAL_E_NOMEM;
        code = staged_done(st, histo_write_m4b(o, path, slots, msg, len), w);
    }
    if (!code && (s->formats & HISTO_CSV)) {
        snprintf(path, sizeof path, "%s.csv", base);
        if (!(o = stage(st, msg, len)))
            return NARVAL_E_NOMEM;
        code = staged_done(st, histo_write_csv(o, path, &d->g, slots, msg, len), w);
    }
    return code;
}

static unsigned write_decl(const histo_spec *s, const histo_decl *d, const uint64_t *counts,
                           const char *dir, staged *st, histo_written *w, char *msg, size_t len)
{
    char sub[PATH_MAX], name[64], base[PATH_MAX];
    unsigned code = 0;
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
            return NARVAL_E_IO;
        }
        code = write_instance(s, d, counts + d->g.offset + (uint64_t)i * d->g.slots, base, name,
                              st, w, msg, len);
    }
    return code;
}

/* The plots, each a warning when it fails; after the first failure for want of gnuplot, none. */
static unsigned write_plots(const histo_spec *s, const uint64_t *counts, const char *dir,
                            const char *who, staged *st, histo_written *w, char *msg, size_t len)
{
    for (size_t i = 0; i < s->n_plot; i++) {
        char why[512];
        bool no_gnuplot;
        kit_output *o = stage(st, msg, len);
        if (!o)
            return NARVAL_E_NOMEM;
        if (histo_plot_write(s, &s->plot[i], counts, dir, o, &no_gnuplot, why, sizeof why) == 0) {
            w->plots++;
            continue;
        }
        st->n--;
        kit_log(who, KIT_WARN, "plot %s skipped: %s", s->plot[i].file, why);
        w->plot_failed = true;
        if (no_gnuplot)
            break;
    }
    return 0;
}

unsigned histo_output_write(const histo_spec *s, const uint64_t *counts, const char *dir,
                            const char *who, histo_written *w, char *msg, size_t len)
{
    staged st = { 0 };
    unsigned code = histo_output_mkdir(dir, msg, len);
    for (size_t i = 0; i < s->n_decl && !code; i++)
        code = write_decl(s, &s->decl[i], counts, dir, &st, w, msg, len);
    if (!code)
        code = write_plots(s, counts, dir, who, &st, w, msg, len);
    if (code)
        discard_all(&st);
    else
        code = publish_all(&st, msg, len);
    if (code)
        *w = (histo_written){ 0 };
    return code;
}
