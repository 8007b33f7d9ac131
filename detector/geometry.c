/* detector geometry: crystal parameters, their text file, point-in-crystal, segment and contact lookup. */
#include "geometry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQRT3_2 0.86602540378443864676

void det_crystal_default(det_crystal *c)
{
    static const double rings[DET_RINGS] = {8, 14, 16, 17, 21, 14};
    memset(c, 0, sizeof *c);
    c->length = 90;
    c->radius = 40;
    c->hex_front = 30;
    c->hex_back = 30 * (235.0 + 90.0) / 235.0; /* the flats point at the target from 235 mm */
    c->bore_radius = 5;
    c->bore_depth = 13;
    memcpy(c->ring, rings, sizeof rings);
    c->bias = 5000;
    c->impurity_front = 0.5;
    c->impurity_back = 1.0;
    c->preamp_rise = 20;
    c->phi110 = 45;
    c->anisotropic = 0;
}

/* ---- the hexagon given by its corners ---- */

#define FACE_PLANARITY 1e-3 /* mm: how far a face's fourth corner may lie off the plane of the other three */

static double cross2(const double a[2], const double b[2]) { return a[0] * b[1] - a[1] * b[0]; }

void det_crystal_set_corners(det_crystal *c, const double front[DET_SECTORS][2], const double back[DET_SECTORS][2])
{
    c->irregular = 1;
    c->hex_front = c->hex_back = 0;
    memcpy(c->corner[0], front, sizeof c->corner[0]);
    memcpy(c->corner[1], back, sizeof c->corner[1]);
    for (int k = 0; k < DET_SECTORS; k++) {
        const double *a = front[k], *b = front[(k + 1) % DET_SECTORS], *e = back[k];
        double u[3] = {b[0] - a[0], b[1] - a[1], 0}, v[3] = {e[0] - a[0], e[1] - a[1], c->length};
        double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        double norm = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        double sign = n[0] * a[0] + n[1] * a[1] >= 0 ? 1 : -1; /* outward: the axis lies inside */
        for (int i = 0; i < 3; i++) c->side[k][i] = sign * n[i] / (norm > 0 ? norm : 1);
        c->side[k][3] = c->side[k][0] * a[0] + c->side[k][1] * a[1];
    }
}

void det_regular_corners(const det_crystal *c, double corner[2][DET_SECTORS][2])
{
    for (int k = 0; k < DET_SECTORS; k++) {
        double a = (60.0 * k - 30.0) * (M_PI / 180.0);
        for (int f = 0; f < 2; f++) {
            double r = (f ? c->hex_back : c->hex_front) / SQRT3_2;
            corner[f][k][0] = r * cos(a);
            corner[f][k][1] = r * sin(a);
        }
    }
}

void det_crystal_side(const det_crystal *c, int k, double s[4])
{
    if (c->irregular) {
        memcpy(s, c->side[k], 4 * sizeof *s);
        return;
    }
    s[0] = cos(k * M_PI / 3);
    s[1] = sin(k * M_PI / 3);
    s[2] = -(c->hex_back - c->hex_front) / c->length;
    s[3] = c->hex_front;
}

/* Convex, counter-clockwise, planar faces, the bore inside every face: 0, or -1 with a message naming the corner. */
static int validate_corners(const det_crystal *c, char *msg, size_t len)
{
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < DET_SECTORS; k++) {
            const double *a = c->corner[f][k], *b = c->corner[f][(k + 1) % DET_SECTORS],
                         *e = c->corner[f][(k + 2) % DET_SECTORS];
            double ab[2] = {b[0] - a[0], b[1] - a[1]}, be[2] = {e[0] - b[0], e[1] - b[1]};
            if (!(cross2(a, b) > 0 && cross2(ab, be) > 0 && hypot(a[0], a[1]) < 1000))
                return snprintf(msg, len, "the %s corners are not a convex hexagon around the axis, counter-clockwise "
                                "(at corner %d), within 1000 mm", f ? "back" : "front", (k + 1) % DET_SECTORS), -1;
        }
    for (int k = 0; k < DET_SECTORS; k++) {
        const double *s = c->side[k], *e = c->corner[1][(k + 1) % DET_SECTORS];
        double off = s[0] * e[0] + s[1] * e[1] + s[2] * c->length - s[3];
        if (fabs(off) > FACE_PLANARITY)
            return snprintf(msg, len, "side face %d is not flat: back corner %d lies %.4f mm off the plane of the "
                            "other three (at most %g)", k, (k + 1) % DET_SECTORS, off, FACE_PLANARITY), -1;
        double nxy = hypot(s[0], s[1]);
        for (int f = 0; f < 2; f++)
            if (!((s[3] - s[2] * f * c->length) / nxy > c->bore_radius))
                return snprintf(msg, len, "side face %d comes nearer the axis than bore_radius", k), -1;
    }
    return 0;
}

int det_crystal_same_shape(const det_crystal *a, const det_crystal *b, double tol)
{
    double d = fmax(fabs(a->length - b->length), fabs(a->radius - b->radius));
    d = fmax(d, fmax(fabs(a->bore_radius - b->bore_radius), fabs(a->bore_depth - b->bore_depth)));
    d = fmax(d, fmax(fabs(a->hex_front - b->hex_front), fabs(a->hex_back - b->hex_back)));
    for (int r = 0; r < DET_RINGS; r++) d = fmax(d, fabs(a->ring[r] - b->ring[r]));
    if (a->irregular != b->irregular) return 0;
    for (int i = 0; a->irregular && i < 2 * DET_SECTORS * 2; i++)
        d = fmax(d, fabs((&a->corner[0][0][0])[i] - (&b->corner[0][0][0])[i]));
    return d <= tol;
}

int det_crystal_validate_shape(const det_crystal *c, char *msg, size_t len)
{
    double sum = 0;
    for (int r = 0; r < DET_RINGS; r++) {
        if (!(c->ring[r] > 0)) {
            snprintf(msg, len, "ring %d thickness %g must be positive", r, c->ring[r]);
            return -1;
        }
        sum += c->ring[r];
    }
    const char *why = NULL;
    if (!(c->length > 0 && c->length < 1000)) why = "length must be in (0, 1000) mm";
    else if (!(c->radius > 0 && c->radius < 1000)) why = "radius must be in (0, 1000) mm";
    else if (!(c->bore_radius > 0 && c->bore_radius < c->radius)) why = "bore_radius must be in (0, radius)";
    else if (!(c->bore_depth > 0 && c->bore_depth < c->length)) why = "bore_depth must be in (0, length)";
    else if (fabs(sum - c->length) > 1e-6) why = "the ring thicknesses must sum to length";
    else if (c->irregular) return validate_corners(c, msg, len);
    else if (!(c->hex_front > c->bore_radius && c->hex_back > c->bore_radius))
        why = "the hexagon apothems must exceed bore_radius";
    else if (!(c->hex_front < 1000 && c->hex_back < 1000)) why = "the hexagon apothems must be below 1000 mm";
    if (why) {
        snprintf(msg, len, "%s", why);
        return -1;
    }
    return 0;
}

int det_crystal_validate(const det_crystal *c, char *msg, size_t len)
{
    const char *why = NULL;
    if (det_crystal_validate_shape(c, msg, len)) return -1;
    if (!(c->bias > 0 && c->bias < 1e5)) why = "bias must be in (0, 100000) V";
    else if (!(c->impurity_front >= 0 && c->impurity_back >= 0 && c->impurity_front < 1e3 && c->impurity_back < 1e3))
        why = "impurities must be in [0, 1000) x 1e10/cm3 (n-type: net donors)";
    else if (!(c->preamp_rise >= 0 && c->preamp_rise < 1e4)) why = "preamp_rise_ns must be in [0, 10000)";
    else if (!(c->phi110 >= -360 && c->phi110 <= 360)) why = "lattice_phi110 must be in [-360, 360] degrees";
    else if (c->anisotropic != 0 && c->anisotropic != 1) why = "anisotropic_drift must be 0 or 1";
    if (why) {
        snprintf(msg, len, "%s", why);
        return -1;
    }
    return 0;
}

/* ---- the text file ---- */

/* The hexagon is given one of two ways: its apothems (regular) or its corners; other keys belong to both. */
enum { FORM_BOTH, FORM_REGULAR, FORM_CORNERS };

typedef struct key_slot {
    const char *name;
    double *value;
    int count; /* numbers on the line */
    int form;
} key_slot;

static int key_slots(det_crystal *c, double corners[2][DET_SECTORS][2], key_slot *k)
{
    int n = 0;
    k[n++] = (key_slot){"length", &c->length, 1, FORM_BOTH};
    k[n++] = (key_slot){"radius", &c->radius, 1, FORM_BOTH};
    k[n++] = (key_slot){"hex_apothem_front", &c->hex_front, 1, FORM_REGULAR};
    k[n++] = (key_slot){"hex_apothem_back", &c->hex_back, 1, FORM_REGULAR};
    k[n++] = (key_slot){"hex_corners_front", &corners[0][0][0], 2 * DET_SECTORS, FORM_CORNERS};
    k[n++] = (key_slot){"hex_corners_back", &corners[1][0][0], 2 * DET_SECTORS, FORM_CORNERS};
    k[n++] = (key_slot){"bore_radius", &c->bore_radius, 1, FORM_BOTH};
    k[n++] = (key_slot){"bore_depth", &c->bore_depth, 1, FORM_BOTH};
    k[n++] = (key_slot){"ring_thickness", c->ring, DET_RINGS, FORM_BOTH};
    k[n++] = (key_slot){"bias", &c->bias, 1, FORM_BOTH};
    k[n++] = (key_slot){"impurity_front", &c->impurity_front, 1, FORM_BOTH};
    k[n++] = (key_slot){"impurity_back", &c->impurity_back, 1, FORM_BOTH};
    k[n++] = (key_slot){"preamp_rise_ns", &c->preamp_rise, 1, FORM_BOTH};
    k[n++] = (key_slot){"lattice_phi110", &c->phi110, 1, FORM_BOTH};
    k[n++] = (key_slot){"anisotropic_drift", &c->anisotropic, 1, FORM_BOTH};
    return n;
}

/* Parses the numbers after a key; -1 with a message if there are too few, too many or bad ones. */
static int parse_numbers(char *rest, double *out, int count, char *why, size_t len)
{
    char *save = NULL;
    char *tok = strtok_r(rest, " \t\r\n", &save);
    for (int i = 0; i < count; i++, tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (!tok) {
            snprintf(why, len, "expects %d number%s, got %d", count, count > 1 ? "s" : "", i);
            return -1;
        }
        char *end;
        errno = 0;
        double v = strtod(tok, &end);
        if (*end || errno || !isfinite(v)) {
            snprintf(why, len, "'%s' is not a number", tok);
            return -1;
        }
        out[i] = v;
    }
    if (tok) {
        snprintf(why, len, "expects %d number%s, got more", count, count > 1 ? "s" : "");
        return -1;
    }
    return 0;
}

/* Which form the keys seen chose; -1 (message) when they mix both. */
static int chosen_form(const key_slot *slot, const int *seen, int n, const char *path, char *msg, size_t len)
{
    int form[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) form[slot[i].form] |= seen[i];
    if (form[FORM_REGULAR] && form[FORM_CORNERS])
        return snprintf(msg, len, "%s: the hexagon is given twice: hex_apothem_front/back (regular) or "
                        "hex_corners_front/back (irregular), not both", path), -1;
    return form[FORM_CORNERS] ? FORM_CORNERS : FORM_REGULAR;
}

int det_crystal_load(det_crystal *c, const char *path, char *msg, size_t len)
{
    key_slot slot[16];
    int seen[16] = {0};
    det_crystal tmp;
    double corners[2][DET_SECTORS][2];
    memset(&tmp, 0, sizeof tmp);
    int n = key_slots(&tmp, corners, slot);
    char line[512], why[200];
    int lineno = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(msg, len, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            goto fail;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *save = NULL;
        char *key = strtok_r(line, " \t\r\n", &save);
        if (!key) continue;
        int i = 0;
        while (i < n && strcmp(slot[i].name, key)) i++;
        if (i == n) {
            snprintf(msg, len, "%s:%d: unknown key '%s'", path, lineno, key);
            goto fail;
        }
        if (seen[i]) {
            snprintf(msg, len, "%s:%d: key '%s' given twice", path, lineno, key);
            goto fail;
        }
        seen[i] = 1;
        if (parse_numbers(save, slot[i].value, slot[i].count, why, sizeof why)) {
            snprintf(msg, len, "%s:%d: %s %s", path, lineno, key, why);
            goto fail;
        }
    }
    if (ferror(f)) {
        snprintf(msg, len, "%s: read error", path);
        goto fail;
    }
    int form = chosen_form(slot, seen, n, path, msg, len);
    if (form < 0) goto fail;
    for (int i = 0; i < n; i++)
        if (!seen[i] && (slot[i].form == FORM_BOTH || slot[i].form == form)) {
            snprintf(msg, len, "%s: key '%s' is missing", path, slot[i].name);
            goto fail;
        }
    if (form == FORM_CORNERS) det_crystal_set_corners(&tmp, corners[0], corners[1]);
    if (det_crystal_validate(&tmp, why, sizeof why)) {
        snprintf(msg, len, "%s: %s", path, why);
        goto fail;
    }
    fclose(f);
    *c = tmp;
    return 0;
fail:
    fclose(f);
    return -1;
}

int det_crystal_save(const det_crystal *c, const char *path, char *msg, size_t len)
{
    det_crystal copy = *c;
    key_slot slot[16];
    int n = key_slots(&copy, copy.corner, slot);
    int form = c->irregular ? FORM_CORNERS : FORM_REGULAR;
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, len, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# narwhal crystal geometry (detector/README.md describes every key)\n");
    for (int i = 0; i < n; i++) {
        if (slot[i].form != FORM_BOTH && slot[i].form != form) continue;
        fprintf(f, "%s", slot[i].name);
        for (int j = 0; j < slot[i].count; j++) fprintf(f, " %.17g", slot[i].value[j]);
        fputc('\n', f);
    }
    if (fclose(f)) {
        snprintf(msg, len, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- shape and segments ---- */

/* Face k's distance from the axis at depth z, in the plane z = const. */
static double face_distance(const det_crystal *c, int k, double z)
{
    const double *s = c->side[k];
    return (s[3] - s[2] * z) / hypot(s[0], s[1]);
}

double det_hex_apothem(const det_crystal *c, double z)
{
    if (!c->irregular) return c->hex_front + (c->hex_back - c->hex_front) * (z / c->length);
    double a = INFINITY;
    for (int k = 0; k < DET_SECTORS; k++) a = fmin(a, face_distance(c, k, z));
    return a;
}

/* Largest projection of (x, y) on the six flat normals (the hexagon's "radius"). */
static double hex_extent(double x, double y)
{
    double ax = fabs(x), ay = fabs(y);
    double diag = 0.5 * ax + SQRT3_2 * ay;
    return ax > diag ? ax : diag;
}

double det_outline_radius(const det_crystal *c, double z, double azimuth)
{
    double r;
    if (!c->irregular) {
        r = det_hex_apothem(c, z) / hex_extent(cos(azimuth), sin(azimuth));
    } else {
        double ux = cos(azimuth), uy = sin(azimuth);
        r = INFINITY;
        for (int k = 0; k < DET_SECTORS; k++) {
            const double *s = c->side[k];
            double along = s[0] * ux + s[1] * uy;
            if (along > 0) r = fmin(r, (s[3] - s[2] * z) / along);
        }
    }
    return r < c->radius ? r : c->radius;
}

/* 1 when (x, y, z) lies inside every side face (the hexagonal prism alone). */
static int inside_hexagon(const det_crystal *c, double x, double y, double z)
{
    if (!c->irregular) return hex_extent(x, y) <= det_hex_apothem(c, z);
    for (int k = 0; k < DET_SECTORS; k++) {
        const double *s = c->side[k];
        if (s[0] * x + s[1] * y + s[2] * z > s[3]) return 0;
    }
    return 1;
}

int det_crystal_contains(const det_crystal *c, const double p[3])
{
    double x = p[0], y = p[1], z = p[2];
    if (!(z >= 0 && z <= c->length)) return 0;
    double r2 = x * x + y * y;
    if (r2 > c->radius * c->radius) return 0;
    if (!inside_hexagon(c, x, y, z)) return 0;
    if (z > c->bore_depth && r2 < c->bore_radius * c->bore_radius) return 0;
    return 1;
}

int det_sector_of(double x, double y)
{
    double deg = atan2(y, x) * (180.0 / M_PI); /* (-180, 180] */
    int s = (int)floor((deg + 30.0) / 60.0);
    return (s % DET_SECTORS + DET_SECTORS) % DET_SECTORS;
}

int det_ring_of(const det_crystal *c, double z)
{
    double edge = 0;
    for (int r = 0; r < DET_RINGS - 1; r++) {
        edge += c->ring[r];
        if (z < edge) return r;
    }
    return DET_RINGS - 1;
}

/* Direction (unit) of the irregular crystal's corner edge k at depth z (clamped to the crystal). */
static void corner_direction(const det_crystal *c, int k, double z, double u[2])
{
    double t = fmin(fmax(z / c->length, 0), 1);
    const double *f = c->corner[0][k % DET_SECTORS], *b = c->corner[1][k % DET_SECTORS];
    double x = f[0] + (b[0] - f[0]) * t, y = f[1] + (b[1] - f[1]) * t, r = hypot(x, y);
    u[0] = x / r;
    u[1] = y / r;
}

int det_crystal_sector(const det_crystal *c, const double p[3])
{
    if (!c->irregular) return det_sector_of(p[0], p[1]);
    if (p[0] == 0 && p[1] == 0) return 0;
    double u[DET_SECTORS + 1][2];
    for (int k = 0; k <= DET_SECTORS; k++) corner_direction(c, k, p[2], u[k]);
    /* the wedges partition the plane (the corners go round the axis once): the first that holds p */
    for (int k = 0; k < DET_SECTORS; k++)
        if (cross2(u[k], p) >= 0 && cross2(p, u[k + 1]) > 0) return k;
    return 0; /* not reached for a valid crystal */
}

int det_crystal_segment(const det_crystal *c, const double p[3])
{
    return DET_RINGS * det_crystal_sector(c, p) + det_ring_of(c, p[2]);
}

/* Distance in the xy plane from (x, y) to the ray from the origin along the unit vector (ux, uy). */
static double ray_distance(double x, double y, double ux, double uy)
{
    double along = x * ux + y * uy;
    return along > 0 ? fabs(x * uy - y * ux) : hypot(x, y);
}

double det_segment_distance(const det_crystal *c, int segment, const double p[3])
{
    int sector = segment / DET_RINGS, ring = segment % DET_RINGS;
    double lo = 0;
    for (int r = 0; r < ring; r++) lo += c->ring[r];
    double hi = lo + c->ring[ring];
    double dz = ring > 0 && p[2] < lo ? lo - p[2] : ring < DET_RINGS - 1 && p[2] > hi ? p[2] - hi : 0;
    double dxy = 0;
    if (det_crystal_sector(c, p) != sector) {
        double u[2][2];
        for (int e = 0; e < 2; e++) {
            if (c->irregular) {
                corner_direction(c, sector + e, p[2], u[e]);
            } else {
                double a = (60.0 * sector - 30.0) * (M_PI / 180.0) + e * (M_PI / 3);
                u[e][0] = cos(a);
                u[e][1] = sin(a);
            }
        }
        dxy = fmin(ray_distance(p[0], p[1], u[0][0], u[0][1]), ray_distance(p[0], p[1], u[1][0], u[1][1]));
    }
    return hypot(dxy, dz);
}

int det_surface_contact(const det_crystal *c, const double p[3])
{
    double r = hypot(p[0], p[1]);
    /* The bore wall and its bottom: anything within a hair of the bore volume. */
    const double hair = 1e-6;
    if (p[2] >= c->bore_depth - hair && r <= c->bore_radius + hair) return DET_CORE;
    return det_crystal_segment(c, p);
}

void det_rotate_sectors(const double p[3], int k, double out[3])
{
    static const double cs[DET_SECTORS][2] = {
        {1, 0}, {0.5, SQRT3_2}, {-0.5, SQRT3_2}, {-1, 0}, {-0.5, -SQRT3_2}, {0.5, -SQRT3_2},
    };
    int m = (k % DET_SECTORS + DET_SECTORS) % DET_SECTORS;
    double x = p[0], y = p[1];
    out[0] = cs[m][0] * x - cs[m][1] * y;
    out[1] = cs[m][1] * x + cs[m][0] * y;
    out[2] = p[2];
}

double det_impurity(const det_crystal *c, double z)
{
    return c->impurity_front + (c->impurity_back - c->impurity_front) * (z / c->length);
}
