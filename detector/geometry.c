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
    else if (!(c->hex_front > c->bore_radius && c->hex_back > c->bore_radius))
        why = "the hexagon apothems must exceed bore_radius";
    else if (!(c->hex_front < 1000 && c->hex_back < 1000)) why = "the hexagon apothems must be below 1000 mm";
    else if (fabs(sum - c->length) > 1e-6) why = "the ring thicknesses must sum to length";
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

typedef struct key_slot {
    const char *name;
    double *value;
    int count; /* numbers on the line */
} key_slot;

static int key_slots(det_crystal *c, key_slot *k)
{
    int n = 0;
    k[n++] = (key_slot){"length", &c->length, 1};
    k[n++] = (key_slot){"radius", &c->radius, 1};
    k[n++] = (key_slot){"hex_apothem_front", &c->hex_front, 1};
    k[n++] = (key_slot){"hex_apothem_back", &c->hex_back, 1};
    k[n++] = (key_slot){"bore_radius", &c->bore_radius, 1};
    k[n++] = (key_slot){"bore_depth", &c->bore_depth, 1};
    k[n++] = (key_slot){"ring_thickness", c->ring, DET_RINGS};
    k[n++] = (key_slot){"bias", &c->bias, 1};
    k[n++] = (key_slot){"impurity_front", &c->impurity_front, 1};
    k[n++] = (key_slot){"impurity_back", &c->impurity_back, 1};
    k[n++] = (key_slot){"preamp_rise_ns", &c->preamp_rise, 1};
    k[n++] = (key_slot){"lattice_phi110", &c->phi110, 1};
    k[n++] = (key_slot){"anisotropic_drift", &c->anisotropic, 1};
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

int det_crystal_load(det_crystal *c, const char *path, char *msg, size_t len)
{
    key_slot slot[16];
    int seen[16] = {0};
    det_crystal tmp;
    memset(&tmp, 0, sizeof tmp);
    int n = key_slots(&tmp, slot);
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
    for (int i = 0; i < n; i++)
        if (!seen[i]) {
            snprintf(msg, len, "%s: key '%s' is missing", path, slot[i].name);
            goto fail;
        }
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
    int n = key_slots(&copy, slot);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(msg, len, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# narwhal crystal geometry (detector/README.md describes every key)\n");
    for (int i = 0; i < n; i++) {
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

double det_hex_apothem(const det_crystal *c, double z)
{
    return c->hex_front + (c->hex_back - c->hex_front) * (z / c->length);
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
    double r = det_hex_apothem(c, z) / hex_extent(cos(azimuth), sin(azimuth));
    return r < c->radius ? r : c->radius;
}

int det_crystal_contains(const det_crystal *c, const double p[3])
{
    double x = p[0], y = p[1], z = p[2];
    if (!(z >= 0 && z <= c->length)) return 0;
    double r2 = x * x + y * y;
    if (r2 > c->radius * c->radius) return 0;
    if (hex_extent(x, y) > det_hex_apothem(c, z)) return 0;
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

int det_crystal_segment(const det_crystal *c, const double p[3])
{
    return DET_RINGS * det_sector_of(p[0], p[1]) + det_ring_of(c, p[2]);
}

/* Distance in the xy plane from (x, y) to the ray from the origin at angle a (radians). */
static double ray_distance(double x, double y, double a)
{
    double ux = cos(a), uy = sin(a), along = x * ux + y * uy;
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
    if (det_sector_of(p[0], p[1]) != sector) {
        double a = (60.0 * sector - 30.0) * (M_PI / 180.0);
        dxy = fmin(ray_distance(p[0], p[1], a), ray_distance(p[0], p[1], a + M_PI / 3));
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
