/* gammaevents.c: writes narwhal:truth events as GammaEvents text and reads such files back (format in gammaevents.h). */
#include "gammaevents.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channels.h"

enum { LINE_MAX_CHARS = 1024, MAX_COLUMNS = 16 };

/* ---- SUMMARY of an array */

/* Distance range from the origin to a sampled surface of one crystal: the
 * front and back faces on a polar grid and the side on a z-azimuth grid
 * (0.5 mm and 1 degree steps: the bounds are good to about 0.5 mm). */
static void crystal_range(const det_placement *pl, const det_crystal *c, double *lo, double *hi)
{
    const int n_az = 360;
    for (int a = 0; a < n_az; a++) {
        double az = 2 * M_PI * a / n_az, ca = cos(az), sa = sin(az);
        for (double z = 0; z <= c->length + 1e-9; z += 0.5) {
            double rmax = det_outline_radius(c, z, az);
            int face = z == 0 || z + 0.5 > c->length + 1e-9;
            for (double r = face ? 0 : rmax; r <= rmax + 1e-9; r += face ? 0.5 : 1.0) {
                double p[3] = {r * ca, r * sa, face && z > 0 ? c->length : z}, lab[3];
                det_to_lab(pl, p, lab);
                double d = sqrt(lab[0] * lab[0] + lab[1] * lab[1] + lab[2] * lab[2]);
                *lo = d < *lo ? d : *lo;
                *hi = d > *hi ? d : *hi;
            }
        }
    }
}

void gev_summary_of(const det_array *a, const det_crystal *c, gev_summary *s)
{
    memset(s, 0, sizeof *s);
    s->r_inner = a->n > 0 ? INFINITY : 0;
    s->n_crystals = a->n;
    s->n_segments = DET_SEGMENTS;
    for (int i = 0; i < a->n; i++) {
        crystal_range(&a->crystal[i], det_array_shape(a, i, c), &s->r_inner, &s->r_outer);
        if (a->crystal[i].id > s->max_crystal_id)
            s->max_crystal_id = a->crystal[i].id;
    }
}

/* ---- writing */

struct gev_writer {
    FILE *fp;
    char *path;
};

static int write_failed(gev_writer *w, char *msg, size_t len)
{
    snprintf(msg, len, "%s: write error: %s", w->path, strerror(errno));
    return -1;
}

int gev_create(gev_writer **out, FILE *fp, const char *name, const gev_summary *s, const char *generator,
               char *msg, size_t len)
{
    gev_writer *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w || !(w->path = strdup(name))) {
        snprintf(msg, len, "%s: out of memory", name);
        goto fail;
    }
    w->fp = fp;
    fprintf(w->fp, "NARWHAL GammaEvents 1\nGENERATOR %s\n", generator);
    fprintf(w->fp, "SUMMARY %.3f %.3f %d %d %d\n$\n", s->r_inner, s->r_outer, s->n_crystals,
            s->max_crystal_id, s->n_segments);
    if (ferror(w->fp)) {
        write_failed(w, msg, len);
        goto fail;
    }
    *out = w;
    return 0;
fail:
    if (w)
        free(w->path);
    free(w);
    return -1;
}

int gev_write(gev_writer *w, uint32_t event, const adf_truth *t, char *msg, size_t len)
{
    unsigned i = 0;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        const adf_truth_gamma *x = &t->gamma[g];
        fprintf(w->fp, "-1 %.3f %.6f %.6f %.6f %u %.3f %.6f %u\n", x->e, x->dir[0], x->dir[1], x->dir[2],
                (unsigned)event, x->e0, t->beta, (unsigned)x->flags);
        for (unsigned k = 0; k < x->n_interactions && i < t->n_interactions; k++, i++) {
            const adf_truth_hit *h = &t->hit[i];
            fprintf(w->fp, "%u %.3f %.3f %.3f %.3f %u %u %u %.2f\n", (unsigned)h->crystal_id, h->e, h->lab[0],
                    h->lab[1], h->lab[2], (unsigned)h->segment, (unsigned)h->process, (unsigned)h->deposits, h->t);
        }
    }
    return ferror(w->fp) ? write_failed(w, msg, len) : 0;
}

int gev_finish(gev_writer *w, char *msg, size_t len)
{
    if (!w)
        return 0;
    int rc = ferror(w->fp) || fflush(w->fp) ? write_failed(w, msg, len) : 0;
    free(w->path);
    free(w);
    return rc;
}

/* ---- reading */

typedef struct row {
    double v[MAX_COLUMNS];
    int n;
} row;

struct gev_reader {
    FILE *fp;
    char *path;
    const det_array *array;
    gev_summary summary;
    unsigned line;   /* number of the line in `pending` (or the last read) */
    row pending;     /* a γ line read ahead: it starts the next event */
    int has_pending;
    int extras;      /* the header says NARWHAL: columns past the sixth are ours */
};

static int fail_at(const gev_reader *r, char *msg, size_t len, const char *why)
{
    snprintf(msg, len, "%s:%u: %s", r->path, r->line, why);
    return -1;
}

/* The next line that is neither blank nor a '#' comment, into text: 1, 0 at the end, -1 on error. */
static int next_line(gev_reader *r, char *text, size_t cap, char *msg, size_t len)
{
    while (fgets(text, (int)cap, r->fp)) {
        r->line++;
        if (!strchr(text, '\n') && !feof(r->fp))
            return fail_at(r, msg, len, "line too long");
        char *p = text + strspn(text, " \t\r\n");
        if (*p && *p != '#')
            return 1;
    }
    if (ferror(r->fp)) {
        snprintf(msg, len, "%s: read error: %s", r->path, strerror(errno));
        return -1;
    }
    return 0;
}

static int parse_row(gev_reader *r, char *text, row *out, char *msg, size_t len)
{
    char *save = NULL, why[96];
    out->n = 0;
    for (char *tok = strtok_r(text, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *end;
        errno = 0;
        double v = strtod(tok, &end);
        if (*end || errno || !isfinite(v)) {
            snprintf(why, sizeof why, "'%.40s' is not a number", tok);
            return fail_at(r, msg, len, why);
        }
        if (out->n < MAX_COLUMNS)
            out->v[out->n++] = v;
    }
    return 0;
}

static int read_header(gev_reader *r, char *msg, size_t len)
{
    char text[LINE_MAX_CHARS];
    int rc;
    while ((rc = next_line(r, text, sizeof text, msg, len)) == 1) {
        char *p = text + strspn(text, " \t");
        if (*p == '$')
            return 0;
        if (strncmp(p, "NARWHAL GammaEvents", 19) == 0)
            r->extras = 1;
        if (strncmp(p, "SUMMARY", 7) == 0) {
            gev_summary *s = &r->summary;
            if (sscanf(p + 7, "%lf %lf %d %d %d", &s->r_inner, &s->r_outer, &s->n_crystals, &s->max_crystal_id,
                       &s->n_segments) < 2)
                return fail_at(r, msg, len, "SUMMARY needs at least r_inner and r_outer");
        }
    }
    return rc < 0 ? rc : fail_at(r, msg, len, "no '$' line ends the header");
}

int gev_open(gev_reader **out, const char *path, const det_array *array, char *msg, size_t len)
{
    gev_reader *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r || !(r->path = strdup(path))) {
        snprintf(msg, len, "%s: out of memory", path);
        goto fail;
    }
    r->array = array;
    if (!(r->fp = fopen(path, "r"))) {
        snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (read_header(r, msg, len))
        goto fail;
    *out = r;
    return 0;
fail:
    gev_close_reader(r);
    return -1;
}

const gev_summary *gev_header(const gev_reader *r) { return &r->summary; }

void gev_close_reader(gev_reader *r)
{
    if (!r)
        return;
    if (r->fp)
        fclose(r->fp);
    free(r->path);
    free(r);
}

/* The next data row (the one read ahead first), skipping codes below -1. */
static int next_row(gev_reader *r, row *out, char *msg, size_t len)
{
    char text[LINE_MAX_CHARS];
    if (r->has_pending) {
        *out = r->pending;
        r->has_pending = 0;
        return 1;
    }
    for (;;) {
        int rc = next_line(r, text, sizeof text, msg, len);
        if (rc <= 0)
            return rc;
        if (parse_row(r, text, out, msg, len))
            return -1;
        if (out->v[0] >= -1)
            return 1;
    }
}

static int whole_in(double v, double lo, double hi) { return v == floor(v) && v >= lo && v <= hi; }

/* The columns of a row that count: the first six only, unless the file is ours. */
static int columns(const gev_reader *r, const row *x) { return r->extras || x->n < 6 ? x->n : 6; }

static int start_gamma(gev_reader *r, const row *full, adf_truth *t, char *msg, size_t len)
{
    row cut = *full, *x = &cut;
    cut.n = columns(r, full);
    if (x->n < 6)
        return fail_at(r, msg, len, "a γ line needs -1 E dx dy dz n");
    if (t->n_gammas == ADF_TRUTH_MAX_GAMMAS)
        return fail_at(r, msg, len, "more γ rays in one event than a truth frame holds (64)");
    adf_truth_gamma *g = &t->gamma[t->n_gammas++];
    memset(g, 0, sizeof *g);
    g->e = (float)x->v[1];
    for (int k = 0; k < 3; k++)
        g->dir[k] = (float)x->v[2 + k];
    g->e0 = x->n > 6 ? (float)x->v[6] : g->e;
    if (x->n > 7)
        t->beta = (float)x->v[7];
    if (x->n > 8) {
        if (!whole_in(x->v[8], 0, 65535))
            return fail_at(r, msg, len, "the flags column is not an integer 0..65535");
        g->flags = (uint16_t)x->v[8];
    } else {
        g->flags = 0xFFFFu; /* to be inferred when the γ is complete */
    }
    return 0;
}

static int add_hit(gev_reader *r, const row *full, adf_truth *t, char *msg, size_t len)
{
    row cut = *full, *x = &cut;
    cut.n = columns(r, full);
    if (t->n_gammas == 0)
        return fail_at(r, msg, len, "an interaction line before any γ line");
    if (x->n < 6)
        return fail_at(r, msg, len, "an interaction line needs crystal E x y z segment");
    if (!whole_in(x->v[0], 0, 65535))
        return fail_at(r, msg, len, "the crystal id is not an integer 0..65535");
    if (!whole_in(x->v[5], 0, DET_SEGMENTS - 1))
        return fail_at(r, msg, len, "the segment is not an integer 0..35");
    if (x->n > 6 && !whole_in(x->v[6], ADF_TRUTH_PHOTO, ADF_TRUTH_PAIR))
        return fail_at(r, msg, len, "the process column is not 1, 2 or 3");
    if (x->n > 7 && !whole_in(x->v[7], 1, 65535))
        return fail_at(r, msg, len, "the deposits column is not an integer 1..65535");
    if (t->n_interactions == ADF_TRUTH_MAX_INTERACTIONS)
        return fail_at(r, msg, len, "more interactions in one event than a truth frame holds (1024)");
    adf_truth_hit *h = &t->hit[t->n_interactions++];
    memset(h, 0, sizeof *h);
    h->crystal_id = (uint16_t)x->v[0];
    h->e = (float)x->v[1];
    for (int k = 0; k < 3; k++)
        h->lab[k] = (float)x->v[2 + k];
    h->segment = h->geo_segment = (uint16_t)x->v[5];
    h->process = x->n > 6 ? (uint16_t)x->v[6] : 0;
    h->deposits = x->n > 7 ? (uint16_t)x->v[7] : 1;
    h->t = x->n > 8 ? (float)x->v[8] : 0.0f;
    if (r->array) {
        int idx = det_array_find(r->array, h->crystal_id);
        if (idx < 0)
            return fail_at(r, msg, len, "a crystal id the array does not have");
        double lab[3] = {x->v[2], x->v[3], x->v[4]}, c[3];
        det_to_crystal(&r->array->crystal[idx], lab, c);
        for (int k = 0; k < 3; k++)
            h->pos[k] = (float)c[k];
    }
    t->gamma[t->n_gammas - 1].n_interactions++;
    return 0;
}

/* Fills what a file without Narwhal's extra columns leaves open (see the header). */
static void infer_missing(adf_truth *t)
{
    unsigned i = 0;
    for (unsigned g = 0; g < t->n_gammas; g++) {
        adf_truth_gamma *x = &t->gamma[g];
        double sum = 0;
        for (unsigned k = 0; k < x->n_interactions; k++, i++) {
            adf_truth_hit *h = &t->hit[i];
            sum += h->e;
            if (h->process == 0)
                h->process = k + 1 == x->n_interactions ? ADF_TRUTH_PHOTO : ADF_TRUTH_COMPTON;
        }
        if (x->flags == 0xFFFFu)
            x->flags = (uint16_t)(x->n_interactions == 0 ? ADF_TRUTH_MISSED
                                  : fabs(sum - x->e) <= 0.01 ? ADF_TRUTH_ABSORBED : 0);
    }
}

int gev_next(gev_reader *r, adf_truth *t, uint32_t *event, char *msg, size_t len)
{
    row x;
    int rc = next_row(r, &x, msg, len);
    if (rc <= 0)
        return rc;
    t->n_gammas = t->n_interactions = 0;
    t->beta = 0;
    if (x.v[0] != -1)
        return fail_at(r, msg, len, "an interaction line before any γ line");
    if (x.n < 6 || !whole_in(x.v[5], 0, 4294967295.0))
        return fail_at(r, msg, len, "a γ line needs -1 E dx dy dz n, n an integer 0..4294967295");
    double number = x.v[5];
    *event = (uint32_t)number;
    do {
        if (x.v[0] == -1) {
            if (x.n < 6 || x.v[5] != number) {
                r->pending = x;
                r->has_pending = 1;
                break;
            }
            rc = start_gamma(r, &x, t, msg, len);
        } else {
            rc = add_hit(r, &x, t, msg, len);
        }
        if (rc)
            return -1;
    } while ((rc = next_row(r, &x, msg, len)) == 1);
    if (rc < 0)
        return -1;
    infer_missing(t);
    return 1;
}
