/* transport.c: photon transport through the germanium of an array (the model is described in transport.h). */
#include "transport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf.h"
#include "xs_ge.h"

enum { MAX_PIECES = 64, MAX_PHOTONS = 16 };
#define FAR_MM 1e9
#define PARALLEL_EPS 1e-14

int sim_world_init(sim_world *w, const det_array *a, const det_crystal *c, char *msg, size_t len)
{
    memset(w, 0, sizeof *w);
    if (a->n <= 0) {
        snprintf(msg, len, "the array has no crystals");
        return -1;
    }
    w->n_shapes = a->n_shapes ? a->n_shapes : 1;
    for (int t = 0; t < w->n_shapes; t++)
        w->shape[t] = a->n_shapes ? a->shape[t] : *c;
    w->n = a->n;
    w->pl = malloc((size_t)a->n * sizeof *w->pl);
    w->centre = malloc((size_t)a->n * sizeof *w->centre);
    w->type = malloc((size_t)a->n * sizeof *w->type);
    if (!w->pl || !w->centre || !w->type) {
        sim_world_free(w);
        snprintf(msg, len, "no memory for %d crystals", a->n);
        return -1;
    }
    memcpy(w->pl, a->crystal, (size_t)a->n * sizeof *w->pl);
    for (int i = 0; i < a->n; i++)
        w->type[i] = a->n_shapes ? a->crystal[i].type : 0;
    for (int i = 0; i < a->n; i++) {
        int id = a->crystal[i].id;
        if (id < 0 || id > 65535) {
            sim_world_free(w);
            snprintf(msg, len, "crystal id %d is outside 0..65535 (frames carry it in 16 bits)", id);
            return -1;
        }
        if (id >= w->n_ids)
            w->n_ids = id + 1;
    }
    if (!(w->index_of_id = malloc((size_t)w->n_ids * sizeof *w->index_of_id))) {
        sim_world_free(w);
        snprintf(msg, len, "no memory for %d crystal ids", w->n_ids);
        return -1;
    }
    for (int i = 0; i < w->n_ids; i++)
        w->index_of_id[i] = -1;
    for (int i = 0; i < a->n; i++)
        w->index_of_id[a->crystal[i].id] = i;
    for (int i = 0; i < a->n; i++) {
        const det_crystal *s = sim_shape(w, i);
        const double mid[3] = {0, 0, s->length / 2};
        det_to_lab(&w->pl[i], mid, w->centre[i]);
        w->radius = fmax(w->radius, sqrt(s->radius * s->radius + mid[2] * mid[2]));
    }
    for (int t = 0; t < w->n_shapes; t++)
        for (int k = 0; k < DET_SECTORS; k++)
            det_crystal_side(&w->shape[t], k, w->side[t][k]);
    return 0;
}

void sim_world_free(sim_world *w)
{
    free(w->pl);
    free(w->type);
    free(w->centre);
    free(w->index_of_id);
    memset(w, 0, sizeof *w);
}

/* ---- chords */

/* Keeps the part of [lo, hi] where n . (o + t d) <= b; 0 when nothing is left. */
static int clip_plane(double no, double nd, double b, double *lo, double *hi)
{
    if (fabs(nd) < PARALLEL_EPS)
        return no <= b && *lo < *hi;
    double t = (b - no) / nd;
    if (nd > 0) {
        if (t < *hi)
            *hi = t;
    } else if (t > *lo) {
        *lo = t;
    }
    return *lo < *hi;
}

/* Keeps the part of [lo, hi] inside the cylinder x^2 + y^2 <= r^2. */
static int clip_cylinder(const double o[3], const double d[3], double r, double *lo, double *hi)
{
    double a = d[0] * d[0] + d[1] * d[1], c = o[0] * o[0] + o[1] * o[1] - r * r;
    if (a < PARALLEL_EPS)
        return c <= 0 && *lo < *hi;
    double b = o[0] * d[0] + o[1] * d[1], disc = b * b - a * c;
    if (disc <= 0)
        return 0;
    double s = sqrt(disc), t0 = (-b - s) / a, t1 = (-b + s) / a;
    if (t0 > *lo)
        *lo = t0;
    if (t1 < *hi)
        *hi = t1;
    return *lo < *hi;
}

/* The convex part of a crystal of shape t: faces, sides and cylinder, from t = 0 on. */
static int convex_interval(const sim_world *w, int t, const double o[3], const double d[3], double *lo, double *hi)
{
    const det_crystal *c = &w->shape[t];
    *lo = 0;
    *hi = FAR_MM;
    if (!clip_plane(-o[2], -d[2], 0, lo, hi) || !clip_plane(o[2], d[2], c->length, lo, hi))
        return 0;
    for (int k = 0; k < DET_SECTORS; k++) {
        const double *s = w->side[t][k];
        if (!clip_plane(s[0] * o[0] + s[1] * o[1] + s[2] * o[2], s[0] * d[0] + s[1] * d[1] + s[2] * d[2], s[3], lo,
                        hi))
            return 0;
    }
    return clip_cylinder(o, d, c->radius, lo, hi);
}

/* The bore of shape t: r < bore_radius and bore_depth < z <= length, over the whole line. */
static int bore_interval(const sim_world *w, int t, const double o[3], const double d[3], double *lo, double *hi)
{
    const det_crystal *c = &w->shape[t];
    *lo = -FAR_MM;
    *hi = FAR_MM;
    return clip_plane(-o[2], -d[2], -c->bore_depth, lo, hi) && clip_plane(o[2], d[2], c->length, lo, hi) &&
           clip_cylinder(o, d, c->bore_radius, lo, hi);
}

int sim_chord(const sim_world *w, int i, const double o[3], const double d[3], double t[2][2])
{
    double oc[3], dc[3], lo, hi, blo, bhi;
    const det_placement *pl = &w->pl[i];
    det_to_crystal(pl, o, oc);
    for (int k = 0; k < 3; k++)
        dc[k] = pl->R[0][k] * d[0] + pl->R[1][k] * d[1] + pl->R[2][k] * d[2];
    if (!convex_interval(w, w->type[i], oc, dc, &lo, &hi))
        return 0;
    if (!bore_interval(w, w->type[i], oc, dc, &blo, &bhi) || bhi <= lo || blo >= hi) {
        t[0][0] = lo;
        t[0][1] = hi;
        return 1;
    }
    int n = 0;
    if (blo > lo) {
        t[n][0] = lo;
        t[n++][1] = blo;
    }
    if (bhi < hi) {
        t[n][0] = bhi;
        t[n++][1] = hi;
    }
    return n;
}

/* ---- flights */

typedef struct piece {
    double t0, t1;
    int crystal;
} piece;

/* Every germanium interval along the ray, sorted by distance. */
static int pieces_along(const sim_world *w, const double o[3], const double d[3], piece *p)
{
    int n = 0;
    double r2 = w->radius * w->radius;
    for (int i = 0; i < w->n; i++) {
        const double *c = w->centre[i];
        double v[3] = {c[0] - o[0], c[1] - o[1], c[2] - o[2]};
        double along = v[0] * d[0] + v[1] * d[1] + v[2] * d[2];
        double miss2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - along * along;
        if (miss2 > r2 || along < -w->radius)
            continue;
        double t[2][2];
        int k = sim_chord(w, i, o, d, t);
        for (int j = 0; j < k && n < MAX_PIECES; j++, n++)
            p[n] = (piece){t[j][0], t[j][1], i};
    }
    for (int a = 1; a < n; a++) {
        piece x = p[a];
        int b = a;
        for (; b > 0 && p[b - 1].t0 > x.t0; b--)
            p[b] = p[b - 1];
        p[b] = x;
    }
    return n;
}

/* The crystal where a flight of `path` mm of germanium ends, and the distance
 * along the ray to that point; -1 if the photon leaves the array first. */
static int fly(const piece *p, int n, double path, double *t)
{
    for (int i = 0; i < n; i++) {
        double len = p[i].t1 - p[i].t0;
        if (path < len) {
            *t = p[i].t0 + path;
            return p[i].crystal;
        }
        path -= len;
    }
    return -1;
}

/* ---- interactions */

/* Kahn's rejection method for the Klein-Nishina distribution of x = E/E'
 * (H. Kahn, "Applications of Monte Carlo", AECU-3259, RAND, 1956; as given by
 * Lux and Koblinger, "Monte Carlo Particle Transport Methods", CRC 1991). */
static double klein_nishina_sample(sim_rng *r, double e, double *cos_theta)
{
    double k = e / XS_ME_KEV, k2 = 1 + 2 * k, split = k2 / (9 + 2 * k), x;
    for (;;) {
        double r1 = sim_uniform(r), r2 = sim_uniform(r), r3 = sim_uniform(r);
        if (r1 <= split) {
            x = 1 + 2 * k * r2;
            if (r3 <= 4 * (1 / x - 1 / (x * x)))
                break;
        } else {
            x = k2 / (1 + 2 * k * r2);
            double c = 1 - (x - 1) / k;
            if (r3 <= 0.5 * (c * c + 1 / x))
                break;
        }
    }
    *cos_theta = 1 - (x - 1) / k;
    return e / x;
}

/* Turns the unit vector d by polar angle acos(c) and azimuth phi about itself. */
static void turn(double d[3], double c, double phi)
{
    double s = sqrt(fmax(0, 1 - c * c)), cp = cos(phi), sp = sin(phi);
    double a = sqrt(d[0] * d[0] + d[1] * d[1]);
    if (a < 1e-9) {
        double sign = d[2] < 0 ? -1 : 1;
        d[0] = s * cp;
        d[1] = s * sp;
        d[2] = sign * c;
        return;
    }
    double x = c * d[0] + s * (d[0] * d[2] * cp - d[1] * sp) / a;
    double y = c * d[1] + s * (d[1] * d[2] * cp + d[0] * sp) / a;
    double z = c * d[2] - s * a * cp;
    double norm = 1 / sqrt(x * x + y * y + z * z);
    d[0] = x * norm;
    d[1] = y * norm;
    d[2] = z * norm;
}

static sim_deposit *deposit(const sim_world *w, sim_deposits *dep, int crystal, int gamma, int process, double e,
                            const double lab[3])
{
    if (dep->n == SIM_MAX_DEPOSITS)
        return NULL;
    sim_deposit *x = &dep->d[dep->n++];
    x->crystal = crystal;
    x->gamma = gamma;
    x->process = process;
    x->e = e;
    memcpy(x->lab, lab, sizeof x->lab);
    det_to_crystal(&w->pl[crystal], lab, x->pos);
    x->segment = det_crystal_segment(sim_shape(w, crystal), x->pos);
    return x;
}

typedef struct photon {
    double e, o[3], d[3];
} photon;

/* A photon's history: the photons still to follow, and what happened. */
typedef struct history {
    const sim_world *w;
    sim_rng *r;
    sim_deposits *dep;
    int gamma, flags;
    photon stack[MAX_PHOTONS];
    int top;
} history;

enum { GONE = 0, GOES_ON = 1, OVERFLOW = -1 };

/* The interaction of ph at point `at` of crystal c: GOES_ON when ph was
 * scattered (ph is updated), GONE when it was absorbed, OVERFLOW when full. */
static int interact(history *h, photon *ph, int c, const double at[3], const xs_mu *mu)
{
    double pick = sim_uniform(h->r) * mu->total;
    if (pick < mu->photo)
        return deposit(h->w, h->dep, c, h->gamma, ADF_TRUTH_PHOTO, ph->e, at) ? GONE : OVERFLOW;
    if (pick < mu->photo + mu->compton) {
        double cos_theta, out = klein_nishina_sample(h->r, ph->e, &cos_theta);
        sim_deposit *x = deposit(h->w, h->dep, c, h->gamma, ADF_TRUTH_COMPTON, ph->e - out, at);
        if (!x)
            return OVERFLOW;
        if (out < SIM_CUTOFF_KEV) {
            x->e = ph->e;
            return GONE;
        }
        turn(ph->d, cos_theta, 2 * M_PI * sim_uniform(h->r));
        memcpy(ph->o, at, sizeof ph->o);
        ph->e = out;
        return GOES_ON;
    }
    if (!deposit(h->w, h->dep, c, h->gamma, ADF_TRUTH_PAIR, ph->e - 2 * XS_ME_KEV, at) || h->top + 2 > MAX_PHOTONS)
        return OVERFLOW;
    h->flags |= ADF_TRUTH_PAIRED;
    photon a = {XS_ME_KEV, {at[0], at[1], at[2]}, {0, 0, 0}}, b;
    sim_isotropic(h->r, a.d);
    b = a;
    for (int k = 0; k < 3; k++)
        b.d[k] = -a.d[k];
    h->stack[h->top++] = b;
    h->stack[h->top++] = a;
    return GONE;
}

/* Follows ph from flight to flight until it is absorbed or leaves the array. */
static int follow(history *h, photon *ph, int primary)
{
    piece p[MAX_PIECES];
    for (;;) {
        int n = pieces_along(h->w, ph->o, ph->d, p);
        if (primary && n == 0)
            h->flags |= ADF_TRUTH_MISSED;
        primary = 0;
        xs_mu mu = xs_ge_mu(ph->e);
        double t, at[3];
        int c = fly(p, n, -log(sim_uniform_pos(h->r)) / mu.total, &t);
        if (c < 0)
            return GONE;
        for (int k = 0; k < 3; k++)
            at[k] = ph->o[k] + t * ph->d[k];
        int rc = interact(h, ph, c, at, &mu);
        if (rc != GOES_ON)
            return rc;
    }
}

int sim_transport(const sim_world *w, sim_rng *r, double e, const double o[3], const double d[3], int gamma,
                  sim_deposits *dep)
{
    history h = {.w = w, .r = r, .dep = dep, .gamma = gamma};
    int start = dep->n;
    photon ph = {e, {o[0], o[1], o[2]}, {d[0], d[1], d[2]}};
    int rc = follow(&h, &ph, 1);
    while (rc != OVERFLOW && h.top > 0) {
        ph = h.stack[--h.top];
        rc = follow(&h, &ph, 0);
    }
    if (rc == OVERFLOW) {
        dep->n = start;
        return -1;
    }
    return h.flags;
}
