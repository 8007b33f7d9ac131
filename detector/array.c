/* detector array: array files (Narwhal's and AGATA's lookup table), lab <-> crystal transforms, the overlap check. */
#include "array.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COS30 0.86602540378443864676
#define ROTATION_TOLERANCE 1e-4

void det_array_free(det_array *a)
{
    free(a->crystal);
    free(a->shape);
    free(a->shape_path);
    memset(a, 0, sizeof *a);
}

int det_array_set_shapes(det_array *a, const char *const *paths, int n, const char *base_dir, char *msg, size_t len)
{
    if (n < 1 || n > DET_ARRAY_SHAPES) return snprintf(msg, len, "%d shapes (1..%d)", n, DET_ARRAY_SHAPES), -1;
    det_crystal *shape = calloc((size_t)n, sizeof *shape);
    char(*path)[DET_ARRAY_PATH] = calloc((size_t)n, sizeof *path);
    if (!shape || !path) {
        snprintf(msg, len, "out of memory");
        goto fail;
    }
    for (int t = 0; t < n; t++) {
        char full[2 * DET_ARRAY_PATH];
        if (strlen(paths[t]) >= DET_ARRAY_PATH) {
            snprintf(msg, len, "shape %d: path longer than %d characters", t, DET_ARRAY_PATH - 1);
            goto fail;
        }
        snprintf(path[t], DET_ARRAY_PATH, "%s", paths[t]);
        snprintf(full, sizeof full, "%s%s%s", paths[t][0] == '/' ? "" : base_dir, paths[t][0] == '/' ? "" : "/",
                 paths[t]);
        if (det_crystal_load(&shape[t], full, msg, len)) goto fail;
    }
    free(a->shape);
    free(a->shape_path);
    a->shape = shape;
    a->shape_path = path;
    a->n_shapes = n;
    return 0;
fail:
    free(shape);
    free(path);
    return -1;
}

const det_crystal *det_array_shape(const det_array *a, int i, const det_crystal *fallback)
{
    return a->n_shapes > 0 ? &a->shape[a->crystal[i].type] : fallback;
}

int det_array_find(const det_array *a, int id)
{
    for (int i = 0; i < a->n; i++)
        if (a->crystal[i].id == id) return i;
    return -1;
}

void det_to_lab(const det_placement *pl, const double c[3], double lab[3])
{
    for (int i = 0; i < 3; i++) lab[i] = pl->R[i][0] * c[0] + pl->R[i][1] * c[1] + pl->R[i][2] * c[2] + pl->T[i];
}

void det_to_crystal(const det_placement *pl, const double lab[3], double c[3])
{
    double d[3] = {lab[0] - pl->T[0], lab[1] - pl->T[1], lab[2] - pl->T[2]};
    for (int i = 0; i < 3; i++) c[i] = pl->R[0][i] * d[0] + pl->R[1][i] * d[1] + pl->R[2][i] * d[2];
}

/* ---- reading and writing ---- */

static const char *rotation_problem(const double R[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double dot = R[0][i] * R[0][j] + R[1][i] * R[1][j] + R[2][i] * R[2][j];
            if (!isfinite(dot) || fabs(dot - (i == j)) > ROTATION_TOLERANCE) return "R is not orthonormal";
        }
    double det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) - R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) +
                 R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
    return det > 0 ? NULL : "R is a reflection (determinant -1)";
}

/* A line split into numbers; returns how many (up to max), -1 if a token is not a number. */
static int split_numbers(char *line, double *out, int max, int *extra)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    int n = 0;
    *extra = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == max) {
            *extra = 1;
            break;
        }
        char *end;
        errno = 0;
        out[n] = strtod(tok, &end);
        if (*end || errno || !isfinite(out[n])) return -1;
        n++;
    }
    return n;
}

static int integral(double v, int lo, int hi) { return v == floor(v) && v >= lo && v <= hi; }

static int append(det_array *a, const det_placement *p, int *cap)
{
    if (a->n == *cap) {
        int ncap = *cap ? 2 * *cap : 64;
        det_placement *np = realloc(a->crystal, (size_t)ncap * sizeof *np);
        if (!np) return -1;
        a->crystal = np;
        *cap = ncap;
    }
    a->crystal[a->n++] = *p;
    return 0;
}

/* Checks a finished placement and appends it; -1 with a message (path:line prefix added by the caller). */
static int accept(det_array *a, const det_placement *p, int *cap, char *why, size_t len)
{
    const char *bad = rotation_problem(p->R);
    if (bad) {
        snprintf(why, len, "crystal %d: %s", p->id, bad);
        return -1;
    }
    if (det_array_find(a, p->id) >= 0) {
        snprintf(why, len, "crystal id %d appears twice", p->id);
        return -1;
    }
    if (a->n >= DET_ARRAY_MAX) {
        snprintf(why, len, "more than %d crystals", DET_ARRAY_MAX);
        return -1;
    }
    if (append(a, p, cap)) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    return 0;
}

typedef struct line_reader {
    FILE *f;
    const char *path;
    int lineno;
    char line[1024];
} line_reader;

/* Next line that holds something besides comments and blanks: numbers in v; -1 at the end, -2 on a bad line. */
static int next_numbers(line_reader *lr, double *v, int max, int *count, char *msg, size_t len)
{
    while (fgets(lr->line, sizeof lr->line, lr->f)) {
        lr->lineno++;
        int extra;
        int n = split_numbers(lr->line, v, max, &extra);
        if (n < 0) {
            snprintf(msg, len, "%s:%d: not a number", lr->path, lr->lineno);
            return -2;
        }
        if (extra) {
            snprintf(msg, len, "%s:%d: more than %d numbers", lr->path, lr->lineno, max);
            return -2;
        }
        if (n == 0) continue;
        *count = n;
        return 0;
    }
    return -1;
}

static int open_reader(line_reader *lr, const char *path, char *msg, size_t len)
{
    lr->f = fopen(path, "r");
    lr->path = path;
    lr->lineno = 0;
    if (!lr->f) {
        snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The first word of the first line that is not blank or a comment ("" when none), into first[64]. */
static void first_word(line_reader *lr, char *first)
{
    first[0] = 0;
    while (fgets(lr->line, sizeof lr->line, lr->f)) {
        lr->lineno++;
        if (sscanf(lr->line, " %63s", first) == 1 && first[0] != '#') return;
        first[0] = 0;
    }
}

/* Adds p to out, or says in msg why not, naming the line it ends on. */
static int place(det_array *out, const det_placement *p, int *cap, const line_reader *lr, const char *path, char *msg,
                 size_t len)
{
    char why[160];
    if (!accept(out, p, cap, why, sizeof why)) return 0;
    snprintf(msg, len, "%s:%d: %s", path, lr->lineno, why);
    return -1;
}

/* Ends a load and closes its file. rc is next_numbers' last answer (-1: the file ended; -2: msg says what went
   wrong): the crystals become *a only when the file ended after at least one, else they are freed. */
static int end_load(line_reader *lr, det_array *out, int rc, det_array *a, const char *path, char *msg, size_t len)
{
    fclose(lr->f);
    if (rc == -1 && out->n == 0) snprintf(msg, len, "%s: no crystals", path);
    if (rc != -1 || out->n == 0) {
        det_array_free(out);
        return -1;
    }
    *a = *out;
    return 0;
}

/* The folder of path ("." when it has none) into dir[DET_ARRAY_PATH]. */
static void folder_of(const char *path, char *dir)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, DET_ARRAY_PATH, ".");
    else snprintf(dir, DET_ARRAY_PATH, "%.*s", (int)(slash - path), path);
}

/* After the header: an optional "shapes GEO..." line (loaded into out), else the reader is left where it was.
   0, or -1 with a message. */
static int read_shapes(line_reader *lr, det_array *out, const char *path, char *msg, size_t len)
{
    long at = ftell(lr->f);
    int lineno = lr->lineno;
    char first[64], why[400], dir[DET_ARRAY_PATH];
    first_word(lr, first);
    if (strcmp(first, "shapes")) {
        lr->lineno = lineno;
        return fseek(lr->f, at, SEEK_SET) ? (snprintf(msg, len, "%s: cannot seek", path), -1) : 0;
    }
    char *hash = strchr(lr->line, '#');
    if (hash) *hash = 0;
    const char *paths[DET_ARRAY_SHAPES + 1];
    int n = 0;
    char *save = NULL;
    strtok_r(lr->line, " \t\r\n", &save);
    for (char *tok = strtok_r(NULL, " \t\r\n", &save); tok && n <= DET_ARRAY_SHAPES;
         tok = strtok_r(NULL, " \t\r\n", &save))
        paths[n++] = tok;
    folder_of(path, dir);
    if (det_array_set_shapes(out, paths, n, dir, why, sizeof why))
        return snprintf(msg, len, "%s:%d: shapes: %s", path, lr->lineno, why), -1;
    return 0;
}

/* With shapes named, every crystal's type must have one. */
static int check_types(const det_array *a, const char *path, char *msg, size_t len)
{
    for (int i = 0; a->n_shapes && i < a->n; i++)
        if (a->crystal[i].type >= a->n_shapes)
            return snprintf(msg, len, "%s: crystal %d is of type %d, but the shapes line names %d shapes", path,
                            a->crystal[i].id, a->crystal[i].type, a->n_shapes), -1;
    return 0;
}

int det_array_load(det_array *a, const char *path, char *msg, size_t len)
{
    det_array out = {0};
    int cap = 0, n;
    double v[14];
    line_reader lr;
    char first[64];
    if (open_reader(&lr, path, msg, len)) return -1;
    first_word(&lr, first);
    if (strcmp(first, "narwhal-array") || !strstr(lr.line, "narwhal-array 1")) {
        snprintf(msg, len, "%s:%d: expected the header line 'narwhal-array 1'", path, lr.lineno);
        goto fail;
    }
    if (read_shapes(&lr, &out, path, msg, len)) goto fail;
    int rc;
    while ((rc = next_numbers(&lr, v, 14, &n, msg, len)) == 0) {
        if (n != 14 || !integral(v[0], 0, 1 << 30) || !integral(v[1], 0, 255)) {
            snprintf(msg, len, "%s:%d: expected 'id type Tx Ty Tz R11 .. R33' (14 numbers, id and type integers)", path,
                     lr.lineno);
            goto fail;
        }
        det_placement p = {.id = (int)v[0], .type = (int)v[1]};
        memcpy(p.T, v + 2, sizeof p.T);
        for (int i = 0; i < 9; i++) p.R[i / 3][i % 3] = v[5 + i];
        if (place(&out, &p, &cap, &lr, path, msg, len)) goto fail;
    }
    if (rc == -1 && check_types(&out, path, msg, len)) goto fail;
    return end_load(&lr, &out, rc, a, path, msg, len);
fail:
    return end_load(&lr, &out, -2, a, path, msg, len);
}

int det_array_load_any(det_array *a, const char *path, char *msg, size_t len)
{
    line_reader lr;
    char first[64];
    if (open_reader(&lr, path, msg, len)) return -1;
    first_word(&lr, first);
    fclose(lr.f);
    return strcmp(first, "narwhal-array") ? det_array_load_lut(a, path, msg, len) : det_array_load(a, path, msg, len);
}

static int finish_write(FILE *f, const char *path, char *msg, size_t len)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        snprintf(msg, len, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int det_array_save(const det_array *a, const char *path, char *msg, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, len, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "narwhal-array 1\n# %d crystals; lab = R * crystal + T (mm, origin at the target)\n", a->n);
    if (a->n_shapes) {
        fprintf(f, "shapes");
        for (int t = 0; t < a->n_shapes; t++) fprintf(f, " %s", a->shape_path[t]);
        fprintf(f, "   # the geometry of crystal types 0..%d, relative to this file's folder\n", a->n_shapes - 1);
    }
    fprintf(f, "# id type Tx Ty Tz R11 R12 R13 R21 R22 R23 R31 R32 R33\n");
    for (int i = 0; i < a->n; i++) {
        const det_placement *p = &a->crystal[i];
        fprintf(f, "%d %d %.10f %.10f %.10f", p->id, p->type, p->T[0], p->T[1], p->T[2]);
        for (int k = 0; k < 9; k++) fprintf(f, " %.12f", p->R[k / 3][k % 3]);
        fputc('\n', f);
    }
    return finish_write(f, path, msg, len);
}

int det_array_load_lut(det_array *a, const char *path, char *msg, size_t len)
{
    det_array out = {0};
    int cap = 0, n, rc;
    double v[5];
    line_reader lr;
    if (open_reader(&lr, path, msg, len)) return -1;
    int row_base = -1; /* AGATA writes the row index k; accept 0..2 or 1..3, the same for every crystal */
    while ((rc = next_numbers(&lr, v, 5, &n, msg, len)) == 0) {
        if (n != 5 || !integral(v[0], 0, 1 << 30) || !integral(v[1], 0, 255)) {
            snprintf(msg, len, "%s:%d: expected 'id type Tx Ty Tz' (id and type integers)", path, lr.lineno);
            goto fail;
        }
        det_placement p = {.id = (int)v[0], .type = (int)v[1]};
        memcpy(p.T, v + 2, sizeof p.T);
        for (int k = 0; k < 3; k++) {
            rc = next_numbers(&lr, v, 5, &n, msg, len);
            if (rc == -2) goto fail;
            if (rc == -1) {
                snprintf(msg, len, "%s: ends inside crystal %d's rotation (row %d of 3 missing)", path, p.id, k + 1);
                goto fail;
            }
            if (row_base < 0 && n == 4 && (v[0] == 0 || v[0] == 1)) row_base = (int)v[0];
            if (n != 4 || v[0] != k + row_base) {
                snprintf(msg, len, "%s:%d: expected rotation row 'k Rk1 Rk2 Rk3' with k = %d", path, lr.lineno,
                         k + (row_base < 0 ? 0 : row_base));
                goto fail;
            }
            memcpy(p.R[k], v + 1, sizeof p.R[k]);
        }
        if (place(&out, &p, &cap, &lr, path, msg, len)) goto fail;
    }
    return end_load(&lr, &out, rc, a, path, msg, len);
fail:
    return end_load(&lr, &out, -2, a, path, msg, len);
}

int det_array_save_lut(const det_array *a, const char *path, char *msg, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, len, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    for (int i = 0; i < a->n; i++) {
        const det_placement *p = &a->crystal[i];
        fprintf(f, "%d %d %.6f %.6f %.6f\n", p->id, p->type, p->T[0], p->T[1], p->T[2]);
        for (int k = 0; k < 3; k++) fprintf(f, "%d %.9f %.9f %.9f\n", k, p->R[k][0], p->R[k][1], p->R[k][2]);
    }
    return finish_write(f, path, msg, len);
}

/* ---- overlap check ---- */

typedef struct body {
    const det_placement *pl;
    const det_crystal *c;
    double centre[3]; /* lab, middle of the axis */
    double normal[DET_SECTORS][3]; /* outward side-face normals, lab */
} body;

static void rotate_to_lab(const det_placement *pl, const double v[3], double out[3])
{
    for (int i = 0; i < 3; i++) out[i] = pl->R[i][0] * v[0] + pl->R[i][1] * v[1] + pl->R[i][2] * v[2];
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void make_body(body *b, const det_placement *pl, const det_crystal *c)
{
    double mid[3] = {0, 0, c->length / 2};
    b->pl = pl;
    b->c = c;
    det_to_lab(pl, mid, b->centre);
    for (int k = 0; k < DET_SECTORS; k++) {
        double s[4];
        det_crystal_side(c, k, s); /* the regular hexagon's normal (cos, sin, -taper) is not yet unit */
        double norm = c->irregular ? 1 : sqrt(1 + s[2] * s[2]);
        double n[3] = {s[0] / norm, s[1] / norm, s[2] / norm};
        rotate_to_lab(pl, n, b->normal[k]);
    }
}

/* Corner k of the crystal's hexagon at the front (end 0) or back face, x and y. */
static void hull_corner(const det_crystal *c, int end, int k, double xy[2])
{
    if (c->irregular) {
        memcpy(xy, c->corner[end][k], 2 * sizeof *xy);
        return;
    }
    double rc = det_hex_apothem(c, end ? c->length : 0) / COS30, a = (30 + 60 * k) * M_PI / 180;
    xy[0] = rc * cos(a);
    xy[1] = rc * sin(a);
}

/* An upper bound of max n.x over the crystal (bore ignored), n a lab unit vector. */
static double support(const body *b, const double n[3])
{
    const det_placement *pl = b->pl;
    const det_crystal *c = b->c;
    double m[3]; /* n in the crystal frame */
    for (int i = 0; i < 3; i++) m[i] = pl->R[0][i] * n[0] + pl->R[1][i] * n[1] + pl->R[2][i] * n[2];
    double hull = -INFINITY;
    for (int end = 0; end < 2; end++) {
        double z = end ? c->length : 0;
        for (int k = 0; k < DET_SECTORS; k++) {
            double xy[2];
            hull_corner(c, end, k, xy);
            double s = m[0] * xy[0] + m[1] * xy[1] + m[2] * z;
            if (s > hull) hull = s;
        }
    }
    double cyl = c->radius * hypot(m[0], m[1]) + (m[2] > 0 ? m[2] * c->length : 0);
    return dot3(n, pl->T) + (hull < cyl ? hull : cyl);
}

/* The widest gap any candidate plane proves between a and b (negative: none separates). */
static double proven_gap(const body *a, const body *b)
{
    double best = -INFINITY;
    double n[3], minus[3];
    for (int cand = 0; cand < 2 * DET_SECTORS + DET_SECTORS * DET_SECTORS + 1; cand++) {
        if (cand < DET_SECTORS) memcpy(n, a->normal[cand], sizeof n);
        else if (cand < 2 * DET_SECTORS)
            for (int i = 0; i < 3; i++) n[i] = -b->normal[cand - DET_SECTORS][i];
        else if (cand < 2 * DET_SECTORS + DET_SECTORS * DET_SECTORS) {
            int k = cand - 2 * DET_SECTORS;
            for (int i = 0; i < 3; i++) n[i] = a->normal[k / DET_SECTORS][i] - b->normal[k % DET_SECTORS][i];
        } else
            for (int i = 0; i < 3; i++) n[i] = b->centre[i] - a->centre[i];
        double norm = sqrt(dot3(n, n));
        if (!(norm > 1e-12)) continue;
        for (int i = 0; i < 3; i++) {
            n[i] /= norm;
            minus[i] = -n[i];
        }
        double g = -(support(a, n) + support(b, minus));
        if (g > best) best = g;
    }
    return best;
}

/* Looks for a point of a (1 mm grid) inside b; 1 and the lab point when found. */
static int sample_overlap(const body *a, const body *b, double reach, double hit[3])
{
    const det_crystal *c = a->c;
    int nr = (int)ceil(c->radius), nz = (int)ceil(c->length);
    for (int k = 0; k <= nz; k++)
        for (int j = -nr; j <= nr; j++)
            for (int i = -nr; i <= nr; i++) {
                double p[3] = {i, j, k}, lab[3], q[3], d[3];
                if (!det_crystal_contains(c, p)) continue;
                det_to_lab(a->pl, p, lab);
                for (int m = 0; m < 3; m++) d[m] = lab[m] - b->centre[m];
                if (dot3(d, d) > reach * reach) continue;
                det_to_crystal(b->pl, lab, q);
                if (det_crystal_contains(b->c, q)) {
                    memcpy(hit, lab, sizeof lab);
                    return 1;
                }
            }
    return 0;
}

/* Radius of a sphere about the middle of the axis that holds the crystal. */
static double bounding_radius(const det_crystal *c)
{
    double corner = 0;
    for (int end = 0; end < 2; end++)
        for (int k = 0; k < DET_SECTORS; k++) {
            double xy[2];
            hull_corner(c, end, k, xy);
            corner = fmax(corner, hypot(xy[0], xy[1]));
        }
    double rmax = corner < c->radius ? corner : c->radius;
    return sqrt(0.25 * c->length * c->length + rmax * rmax);
}

int det_array_check_overlaps(const det_array *a, const det_crystal *c, double gap, double *min_gap, char *msg,
                             size_t len)
{
    double reach = 0;
    for (int i = 0; i < a->n; i++) reach = fmax(reach, bounding_radius(det_array_shape(a, i, c)));
    int status = 0;
    *min_gap = INFINITY;
    body *bodies = malloc((size_t)(a->n > 0 ? a->n : 1) * sizeof *bodies);
    if (!bodies) {
        snprintf(msg, len, "out of memory");
        return 2;
    }
    for (int i = 0; i < a->n; i++) make_body(&bodies[i], &a->crystal[i], det_array_shape(a, i, c));
    msg[0] = 0;
    for (int i = 0; i < a->n && status != 1; i++)
        for (int j = i + 1; j < a->n; j++) {
            double d[3];
            for (int m = 0; m < 3; m++) d[m] = bodies[j].centre[m] - bodies[i].centre[m];
            if (sqrt(dot3(d, d)) > 2 * reach + gap) continue;
            double g = proven_gap(&bodies[i], &bodies[j]);
            if (g < *min_gap) *min_gap = g;
            if (g > gap) continue;
            double hit[3];
            if (sample_overlap(&bodies[i], &bodies[j], reach, hit)) {
                snprintf(msg, len, "crystals %d and %d overlap: both contain the lab point (%.1f, %.1f, %.1f) mm",
                         a->crystal[i].id, a->crystal[j].id, hit[0], hit[1], hit[2]);
                status = 1;
                break;
            }
            if (status == 0)
                snprintf(msg, len, "crystals %d and %d: no plane proves them %.2f mm apart (best %.3f mm), "
                         "and no overlap was seen on a 1 mm grid", a->crystal[i].id, a->crystal[j].id, gap, g);
            status = 2;
        }
    free(bodies);
    return status;
}
