/* detector fields: grid set-up with cut-cell arms, red-black SOR coarse to fine, the electric field, interpolation. */
#include "field.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* e / eps_Ge for N = 1e10 / cm^3, in V / mm^2: 1.602176634e-19 C * 1e16 m^-3 /
 * (16.0 * 8.8541878128e-12 F/m) = 1.1310e7 V/m^2.  eps_r = 16.0 is the value
 * the common HPGe field codes use (Ge: 15.8 - 16.2 in the literature). */
#define DONOR_PER_1E10 (1.602176634e-19 * 1e16 / (16.0 * 8.8541878128e-12) * 1e-6)
#define MIN_ARM 0.02 /* a node nearer a contact than this (in h) is taken as on it */

enum { DIRS = 6 }; /* -x +x -y +y -z +z */

/* A node next to the surface: each arm's length (in h) and what is at its end:
 * a node index (>= 0) or a contact, -(contact + 1). */
typedef struct cut_node {
    int32_t node;
    int32_t ref[DIRS];
    float arm[DIRS];
    float coef[DIRS]; /* Shortley-Weller weights, divided by their sum */
    float src_scale;  /* 1 / sum of the weights: how the source enters */
} cut_node;

enum { FIXED = -1, REGULAR = -2 }; /* level.role: else the index of the node's cut_node */

typedef struct level {
    det_grid g;
    float *phi;      /* DET_SLOTS per node */
    uint8_t *is_free; /* 1 for unknowns */
    int32_t *role;   /* FIXED, REGULAR (six free neighbours) or a cut_node index */
    cut_node *cut;
    long n_cut;
    float *source;   /* per z plane: h^2 e N(z) / (eps bias) */
} level;

static float contact_value[DET_CHANNELS][DET_SLOTS];

/* The contacts' values in a solve whose slots 1.. hold the weighting potentials of sectors first.. (up to
   DET_SOLVED_SECTORS of them: 0 for A..D; 4 for E, F, the second solve of a crystal without the mirror). */
static void init_contact_values(int first)
{
    memset(contact_value, 0, sizeof contact_value);
    for (int seg = DET_RINGS * first; seg < DET_RINGS * (first + DET_SOLVED_SECTORS) && seg < DET_SEGMENTS; seg++)
        contact_value[seg][1 + seg - DET_RINGS * first] = 1;
    contact_value[DET_CORE][DET_SLOT_V] = 1;
    contact_value[DET_CORE][DET_SLOT_CORE] = 1;
}

static inline long node_index(const det_grid *g, int i, int j, int k) { return ((long)k * g->ny + j) * g->nx + i; }

static void node_pos(const det_grid *g, long n, double p[3])
{
    long i = n % g->nx, j = (n / g->nx) % g->ny, k = n / ((long)g->nx * g->ny);
    p[0] = g->x0 + i * g->h;
    p[1] = g->y0 + j * g->h;
    p[2] = g->z0 + k * g->h;
}

static const int DIR_AXIS[DIRS] = {0, 0, 1, 1, 2, 2};
static const int DIR_SIGN[DIRS] = {-1, 1, -1, 1, -1, 1};

static int on_back_face(const det_crystal *c, const double p[3]) { return fabs(p[2] - c->length) < 1e-9; }

/* An unknown: inside, and not within MIN_ARM of a contact (the back face is no contact). */
static int node_is_free(const det_crystal *c, const double p[3])
{
    if (!det_crystal_contains(c, p)) return 0;
    for (int d = 0; d < DIRS; d++) {
        if (d == 5 && on_back_face(c, p)) continue;
        double q[3] = {p[0], p[1], p[2]};
        q[DIR_AXIS[d]] += DIR_SIGN[d] * MIN_ARM * 1.0001;
        if (!det_crystal_contains(c, q)) return 0;
    }
    return 1;
}

static void make_grid(det_grid *g, const det_crystal *c, double h)
{
    int cx = (int)ceil((c->radius + h) / h - 1e-9);
    int kz = (int)ceil((c->length + h) / h - 1e-9);
    g->h = h;
    g->nx = 2 * cx + 2;
    g->x0 = -(cx + 0.5) * h; /* no x node on x = 0, where sectors B|C and E|F meet */
    g->ny = 2 * cx + 1;
    g->y0 = -cx * h; /* symmetric about y = 0: the mirror maps nodes to nodes */
    g->nz = kz + 2;
    g->z0 = c->length - kz * h; /* the back face is a node plane */
}

/* Finds where the arm from p in direction d leaves the crystal; fraction of h and the contact there. */
static void cut_arm(const det_crystal *c, const double p[3], int d, double h, float *arm, int *contact)
{
    double lo = 0, hi = 1, q[3];
    for (int it = 0; it < 40; it++) {
        double mid = 0.5 * (lo + hi);
        memcpy(q, p, sizeof q);
        q[DIR_AXIS[d]] += DIR_SIGN[d] * mid * h;
        if (det_crystal_contains(c, q)) lo = mid;
        else hi = mid;
    }
    memcpy(q, p, sizeof q);
    q[DIR_AXIS[d]] += DIR_SIGN[d] * hi * h;
    *arm = (float)(lo > MIN_ARM ? lo : MIN_ARM);
    *contact = det_surface_contact(c, q);
}

static void set_weights(cut_node *cn)
{
    double sum = 0, w[DIRS];
    for (int a = 0; a < 3; a++) {
        double l = cn->arm[2 * a], r = cn->arm[2 * a + 1];
        w[2 * a] = 2 / (l * (l + r));
        w[2 * a + 1] = 2 / (r * (l + r));
        sum += w[2 * a] + w[2 * a + 1];
    }
    for (int d = 0; d < DIRS; d++) cn->coef[d] = (float)(w[d] / sum);
    cn->src_scale = (float)(1 / sum);
}

/* Describes one free node's arms; returns 1 if it needs a cut_node (any arm not a plain free neighbour). */
static int describe_node(const det_crystal *c, const level *L, long n, cut_node *cn)
{
    const det_grid *g = &L->g;
    double p[3];
    node_pos(g, n, p);
    const long step[3] = {1, g->nx, (long)g->nx * g->ny};
    int irregular = 0;
    cn->node = (int32_t)n;
    for (int d = 0; d < DIRS; d++) {
        long nb = n + DIR_SIGN[d] * step[DIR_AXIS[d]];
        if (d == 5 && on_back_face(c, p)) { /* passivated: mirror the -z arm, filled below */
            irregular = 1;
            continue;
        }
        if (L->is_free[nb]) {
            cn->ref[d] = (int32_t)nb;
            cn->arm[d] = 1;
            continue;
        }
        int contact;
        cut_arm(c, p, d, g->h, &cn->arm[d], &contact);
        cn->ref[d] = -(contact + 1);
        irregular = 1;
    }
    if (on_back_face(c, p)) {
        cn->ref[5] = cn->ref[4];
        cn->arm[5] = cn->arm[4];
    }
    if (irregular) set_weights(cn);
    return irregular;
}

static void free_level(level *L)
{
    free(L->phi);
    free(L->is_free);
    free(L->role);
    free(L->cut);
    free(L->source);
    memset(L, 0, sizeof *L);
}

static int build_level(level *L, const det_crystal *c, double h)
{
    memset(L, 0, sizeof *L);
    make_grid(&L->g, c, h);
    const det_grid *g = &L->g;
    long nodes = (long)g->nx * g->ny * g->nz;
    L->phi = calloc((size_t)nodes * DET_SLOTS, sizeof *L->phi);
    L->is_free = calloc((size_t)nodes, 1);
    L->role = malloc((size_t)nodes * sizeof *L->role);
    L->source = calloc((size_t)g->nz, sizeof *L->source);
    long cap = 1024;
    L->cut = malloc((size_t)cap * sizeof *L->cut);
    if (!L->phi || !L->is_free || !L->role || !L->source || !L->cut) return -1;
    for (int k = 0; k < g->nz; k++) {
        double z = g->z0 + k * h;
        L->source[k] = (float)(h * h * DONOR_PER_1E10 * det_impurity(c, z < 0 ? 0 : z) / c->bias);
    }
#pragma omp parallel for schedule(dynamic, 4)
    for (long n = 0; n < nodes; n++) {
        double p[3];
        node_pos(g, n, p);
        L->is_free[n] = (uint8_t)node_is_free(c, p);
    }
    for (long n = 0; n < nodes; n++) {
        L->role[n] = FIXED;
        if (!L->is_free[n]) continue;
        cut_node cn;
        if (!describe_node(c, L, n, &cn)) {
            L->role[n] = REGULAR;
            continue;
        }
        if (L->n_cut == cap) {
            cut_node *more = realloc(L->cut, (size_t)cap * 2 * sizeof *more);
            if (!more) return -1;
            L->cut = more;
            cap *= 2;
        }
        L->role[n] = (int32_t)L->n_cut;
        L->cut[L->n_cut++] = cn;
    }
    return 0;
}

/* ---- relaxation ---- */

static inline const float *arm_value(const float *phi, int32_t ref)
{
    return ref >= 0 ? phi + (long)ref * DET_SLOTS : contact_value[-ref - 1];
}

/* The value the discrete Poisson equation asks of a cut node, all slots. */
static inline void cut_relaxed(const float *phi, const cut_node *cn, float source, float nv[DET_SLOTS])
{
    for (int s = 0; s < DET_SLOTS; s++) nv[s] = 0;
    for (int d = 0; d < DIRS; d++) {
        const float *o = arm_value(phi, cn->ref[d]);
        for (int s = 0; s < DET_SLOTS; s++) nv[s] += cn->coef[d] * o[s];
    }
    nv[0] += source * cn->src_scale;
}

/* Moves v towards nv by omega; returns the largest change. */
static inline float over_relax(float *v, const float *nv, float omega)
{
    float worst = 0;
    for (int s = 0; s < DET_SLOTS; s++) {
        float dv = omega * (nv[s] - v[s]);
        v[s] += dv;
        float a = fabsf(dv);
        worst = a > worst ? a : worst;
    }
    return worst;
}

static inline void regular_relaxed(const float *v, long sy, long sz, float source, float nv[DET_SLOTS])
{
    const long sx = DET_SLOTS;
    for (int s = 0; s < DET_SLOTS; s++)
        nv[s] = (v[s - sx] + v[s + sx] + v[s - sy] + v[s + sy] + v[s - sz] + v[s + sz]) * (1.0f / 6);
    nv[DET_SLOT_V] += source * (1.0f / 6);
}

/* One red or black half-sweep, row by row; returns the largest change. */
static float half_sweep(level *L, int col, float omega)
{
    const det_grid *g = &L->g;
    const long sy = (long)g->nx * DET_SLOTS, sz = (long)g->nx * g->ny * DET_SLOTS;
    float worst = 0;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (long row = 0; row < (long)g->ny * g->nz; row++) {
        long k = row / g->ny, j = row % g->ny;
        float source = L->source[k];
        long first = row * g->nx;
        for (long i = (col + j + k) & 1; i < g->nx; i += 2) {
            long n = first + i;
            int32_t role = L->role[n];
            if (role == FIXED) continue;
            float *v = L->phi + n * DET_SLOTS, nv[DET_SLOTS];
            if (role == REGULAR) regular_relaxed(v, sy, sz, source, nv);
            else cut_relaxed(L->phi, &L->cut[role], source, nv);
            float w = over_relax(v, nv, omega);
            worst = w > worst ? w : worst;
        }
    }
    return worst;
}

/* Largest |Jacobi correction| per slot over all free nodes. */
static void residuals(const level *L, double out[DET_SLOTS])
{
    const det_grid *g = &L->g;
    const long sy = (long)g->nx * DET_SLOTS, sz = (long)g->nx * g->ny * DET_SLOTS;
    const long plane = (long)g->nx * g->ny, nodes = plane * g->nz;
    for (int s = 0; s < DET_SLOTS; s++) out[s] = 0;
    for (long n = 0; n < nodes; n++) {
        int32_t role = L->role[n];
        if (role == FIXED) continue;
        const float *v = L->phi + n * DET_SLOTS;
        float nv[DET_SLOTS];
        if (role == REGULAR) regular_relaxed(v, sy, sz, L->source[n / plane], nv);
        else cut_relaxed(L->phi, &L->cut[role], L->source[n / plane], nv);
        for (int s = 0; s < DET_SLOTS; s++) out[s] = fmax(out[s], fabs(nv[s] - v[s]));
    }
}

static int relax(level *L, double tol, int max_sweeps)
{
    int n = L->g.nx > L->g.nz ? L->g.nx : L->g.nz;
    float omega = (float)(2 / (1 + sin(M_PI / n)));
    for (int it = 1; it <= max_sweeps; it++) {
        float a = half_sweep(L, 0, omega);
        float b = half_sweep(L, 1, omega);
        if (fmaxf(a, b) < tol) return it;
    }
    return max_sweeps;
}

/* ---- values outside the crystal, for interpolation near the surface ---- */

/* Each node just outside gets the mean, over its free neighbours, of the
 * straight line from the neighbour through the contact value at the surface
 * (or the contact value itself when the surface is nearer the neighbour than
 * h / 2), so interpolating across a surface cell sees the contact where it is.
 * Nodes beyond an edge or a corner touch no free node: two more layers take
 * the mean of the nodes set beside them, so every cell holding a point of the
 * crystal has its eight corners set.  Everything is linear in the slots, so
 * the 37 weighting potentials still sum to 1. */
static int fill_ghosts(level *L)
{
    const det_grid *g = &L->g;
    long nodes = (long)g->nx * g->ny * g->nz;
    const long step[3] = {1, g->nx, (long)g->nx * g->ny};
    uint8_t *layer = calloc((size_t)nodes, 1); /* 0: not set; 1: beside a free node; 2, 3: later layers */
    float *count = calloc((size_t)nodes, sizeof *count);
    int rc = -1;
    if (!layer || !count) goto done;
    for (long n = 0; n < nodes; n++)
        if (!L->is_free[n]) memset(L->phi + n * DET_SLOTS, 0, DET_SLOTS * sizeof(float));
    for (long m = 0; m < L->n_cut; m++) {
        const cut_node *cn = &L->cut[m];
        const float *v = L->phi + (long)cn->node * DET_SLOTS;
        for (int d = 0; d < DIRS; d++) {
            long nb = cn->node + DIR_SIGN[d] * step[DIR_AXIS[d]];
            if (L->is_free[nb]) continue;
            const float *b = arm_value(L->phi, cn->ref[d]);
            float *o = L->phi + nb * DET_SLOTS;
            float reach = cn->arm[d] >= 0.5f ? 1 / cn->arm[d] : 0;
            for (int s = 0; s < DET_SLOTS; s++) o[s] += reach ? v[s] + (b[s] - v[s]) * reach : b[s];
            count[nb] += 1;
            layer[nb] = 1;
        }
    }
    for (long n = 0; n < nodes; n++)
        if (count[n] > 0)
            for (int s = 0; s < DET_SLOTS; s++) L->phi[n * DET_SLOTS + s] /= count[n];
    for (uint8_t lay = 2; lay <= 3; lay++)
        for (long n = 0; n < nodes; n++) {
            if (L->is_free[n] || layer[n]) continue;
            long idx[3] = {n % g->nx, (n / g->nx) % g->ny, n / step[2]}, lim[3] = {g->nx, g->ny, g->nz};
            float got = 0, *o = L->phi + n * DET_SLOTS;
            for (int d = 0; d < DIRS; d++) {
                long at = idx[DIR_AXIS[d]] + DIR_SIGN[d];
                long nb = n + DIR_SIGN[d] * step[DIR_AXIS[d]];
                if (at < 0 || at >= lim[DIR_AXIS[d]] || !layer[nb] || layer[nb] >= lay) continue;
                for (int s = 0; s < DET_SLOTS; s++) o[s] += L->phi[nb * DET_SLOTS + s];
                got += 1;
            }
            if (got > 0) {
                for (int s = 0; s < DET_SLOTS; s++) o[s] /= got;
                layer[n] = lay;
            }
        }
    rc = 0;
done:
    free(layer);
    free(count);
    return rc;
}

/* ---- interpolation ---- */

/* Trilinear interpolation at p (clamped to the grid) of floats [first, first + count) of nodes `width` floats wide. */
static inline void interp_part(const det_grid *g, const float *data, int width, int first, int count, const double p[3],
                               float *out)
{
    double fx = (p[0] - g->x0) / g->h, fy = (p[1] - g->y0) / g->h, fz = (p[2] - g->z0) / g->h;
    int i = (int)floor(fx), j = (int)floor(fy), k = (int)floor(fz);
    i = i < 0 ? 0 : i > g->nx - 2 ? g->nx - 2 : i;
    j = j < 0 ? 0 : j > g->ny - 2 ? g->ny - 2 : j;
    k = k < 0 ? 0 : k > g->nz - 2 ? g->nz - 2 : k;
    float tx = (float)(fx - i), ty = (float)(fy - j), tz = (float)(fz - k);
    tx = fminf(1, fmaxf(0, tx));
    ty = fminf(1, fmaxf(0, ty));
    tz = fminf(1, fmaxf(0, tz));
    const long sy = (long)g->nx * width, sz = (long)g->nx * g->ny * width;
    const float *b = data + (((long)k * g->ny + j) * g->nx + i) * width + first;
    float w[8] = {(1 - tx) * (1 - ty) * (1 - tz), tx * (1 - ty) * (1 - tz), (1 - tx) * ty * (1 - tz), tx * ty * (1 - tz),
                  (1 - tx) * (1 - ty) * tz,       tx * (1 - ty) * tz,       (1 - tx) * ty * tz,       tx * ty * tz};
    const float *c[8] = {b, b + width, b + sy, b + sy + width, b + sz, b + sz + width, b + sz + sy, b + sz + sy + width};
    for (int s = 0; s < count; s++) out[s] = 0;
    for (int q = 0; q < 8; q++)
        for (int s = 0; s < count; s++) out[s] += w[q] * c[q][s];
}

static inline void interp(const det_grid *g, const float *data, int width, const double p[3], float *out)
{
    interp_part(g, data, width, 0, width, p, out);
}

static void prolong(const level *coarse, level *fine)
{
    const det_grid *g = &fine->g;
    long nodes = (long)g->nx * g->ny * g->nz;
#pragma omp parallel for schedule(static)
    for (long n = 0; n < nodes; n++) {
        if (!fine->is_free[n]) continue;
        double p[3];
        node_pos(g, n, p);
        interp(&coarse->g, coarse->phi, DET_SLOTS, p, fine->phi + n * DET_SLOTS);
    }
}

/* ---- the electric field ---- */

/* d(slot 0)/dx along one axis from the two arms (lengths l, r in h; values vl, v, vr). */
static inline double arm_slope(double vl, double v, double vr, double l, double r, double h)
{
    return ((vr - v) * l / r + (v - vl) * r / l) / ((l + r) * h);
}

static int electric_field(const level *L, const det_crystal *c, float **out)
{
    const det_grid *g = &L->g;
    long nodes = (long)g->nx * g->ny * g->nz;
    const long step[3] = {1, g->nx, (long)g->nx * g->ny};
    float *e = calloc((size_t)nodes * 4, sizeof *e);
    float *count = calloc((size_t)nodes, sizeof *count);
    if (!e || !count) {
        free(e);
        free(count);
        return -1;
    }
    for (long n = 0; n < nodes; n++) {
        if (L->role[n] == REGULAR)
            for (int a = 0; a < 3; a++)
                e[n * 4 + a] = (float)(-c->bias * (L->phi[(n + step[a]) * DET_SLOTS] - L->phi[(n - step[a]) * DET_SLOTS]) /
                                       (2 * g->h));
        if (L->role[n] < 0) continue;
        const cut_node *cn = &L->cut[L->role[n]];
        for (int a = 0; a < 3; a++) {
            double vl = arm_value(L->phi, cn->ref[2 * a])[0], vr = arm_value(L->phi, cn->ref[2 * a + 1])[0];
            double slope = arm_slope(vl, L->phi[n * DET_SLOTS], vr, cn->arm[2 * a], cn->arm[2 * a + 1], g->h);
            e[n * 4 + a] = (float)(-c->bias * slope);
        }
    }
    /* outside nodes next to the crystal take the mean field of their free neighbours */
    for (long n = 0; n < nodes; n++) {
        if (L->is_free[n]) continue;
        for (int d = 0; d < DIRS; d++) {
            long nb = n + DIR_SIGN[d] * step[DIR_AXIS[d]];
            if (nb < 0 || nb >= nodes || !L->is_free[nb]) continue;
            for (int a = 0; a < 3; a++) e[n * 4 + a] += e[nb * 4 + a];
            count[n] += 1;
        }
        if (count[n] > 0)
            for (int a = 0; a < 3; a++) e[n * 4 + a] /= count[n];
    }
    for (long n = 0; n < nodes; n++)
        e[n * 4 + 3] = sqrtf(e[n * 4] * e[n * 4] + e[n * 4 + 1] * e[n * 4 + 1] + e[n * 4 + 2] * e[n * 4 + 2]);
    free(count);
    *out = e;
    return 0;
}

static void depletion(const level *L, const det_crystal *c, det_solve_report *r)
{
    long nodes = (long)L->g.nx * L->g.ny * L->g.nz;
    r->undepleted_nodes = 0;
    r->free_nodes = 0;
    r->v_min = INFINITY;
    r->v_max = -INFINITY;
    const float slack = 1e-4f; /* the solver's own precision, in units of the bias */
    for (long n = 0; n < nodes; n++) {
        if (!L->is_free[n]) continue;
        float v = L->phi[n * DET_SLOTS];
        r->free_nodes++;
        if (v > 1 + slack || v < -slack) r->undepleted_nodes++;
        r->v_min = fmin(r->v_min, v * c->bias);
        r->v_max = fmax(r->v_max, v * c->bias);
    }
    r->undepleted_volume = r->undepleted_nodes * L->g.h * L->g.h * L->g.h;
}

/* Solves every slot on the coarse-to-fine levels lv (built here, freed by the caller), the weighting potentials of
   sectors first..; the fine level's values and report into r.  0, or -1 with a message. */
static int solve_levels(level lv[DET_LEVELS], const det_crystal *c, double h, double tol, int first,
                        det_solve_report *r, char *msg, size_t len)
{
    init_contact_values(first);
    for (int l = 0; l < DET_LEVELS; l++) {
        double hl = h * (1 << (DET_LEVELS - 1 - l));
        if (build_level(&lv[l], c, hl))
            return snprintf(msg, len, "out of memory building the %g mm field grid", hl), -1;
        if (l > 0) prolong(&lv[l - 1], &lv[l]);
        r->iterations[l] += relax(&lv[l], tol, 20000);
        if (fill_ghosts(&lv[l])) return snprintf(msg, len, "out of memory filling the %g mm field grid", hl), -1;
    }
    double res[DET_SLOTS];
    residuals(&lv[DET_LEVELS - 1], res);
    for (int s = 0; s < DET_SLOTS; s++) r->residual[s] = fmax(r->residual[s], res[s]);
    return 0;
}

int det_fields_solve(det_fields *f, const det_crystal *c, double h, double tol, char *msg, size_t len)
{
    memset(f, 0, sizeof *f);
    if (!(h >= 0.1 && h <= 5)) {
        snprintf(msg, len, "field grid spacing %g mm is outside [0.1, 5]", h);
        return -1;
    }
    double t0 = omp_get_wtime();
    level lv[DET_LEVELS];
    memset(lv, 0, sizeof lv);
    if (solve_levels(lv, c, h, tol, 0, &f->report, msg, len)) goto fail;
    level *fine = &lv[DET_LEVELS - 1];
    depletion(fine, c, &f->report);
    if (electric_field(fine, c, &f->efield)) {
        snprintf(msg, len, "out of memory for the electric field");
        goto fail;
    }
    f->crystal = *c;
    f->grid = fine->g;
    f->phi = fine->phi;
    fine->phi = NULL;
    for (int l = 0; l < DET_LEVELS; l++) free_level(&lv[l]);
    if (c->irregular) { /* no mirror: sectors E and F solved for themselves */
        if (solve_levels(lv, c, h, tol, DET_SOLVED_SECTORS, &f->report, msg, len)) goto fail;
        f->phi_ef = fine->phi;
        fine->phi = NULL;
        for (int l = 0; l < DET_LEVELS; l++) free_level(&lv[l]);
    }
    f->report.seconds = omp_get_wtime() - t0;
    return 0;
fail:
    for (int l = 0; l < DET_LEVELS; l++) free_level(&lv[l]);
    det_fields_free(f);
    return -1;
}

void det_fields_free(det_fields *f)
{
    free(f->phi);
    free(f->phi_ef);
    free(f->efield);
    f->phi = NULL;
    f->phi_ef = NULL;
    f->efield = NULL;
}

void det_fields_weighting(const det_fields *f, const double p[3], float w[DET_CHANNELS])
{
    float v[DET_SLOTS];
    interp(&f->grid, f->phi, DET_SLOTS, p, v);
    for (int seg = 0; seg < DET_RINGS * DET_SOLVED_SECTORS; seg++) w[seg] = v[1 + seg];
    w[DET_CORE] = v[DET_SLOT_CORE];
    if (f->phi_ef) { /* sectors E, F solved on their own */
        interp_part(&f->grid, f->phi_ef, DET_SLOTS, 1, 2 * DET_RINGS, p, w + 4 * DET_RINGS);
        return;
    }
    /* sectors E, F: sectors C, B at the mirror point */
    double m[3] = {p[0], -p[1], p[2]};
    interp_part(&f->grid, f->phi, DET_SLOTS, 1 + DET_RINGS, 2 * DET_RINGS, m, v);
    for (int r = 0; r < DET_RINGS; r++) {
        w[4 * DET_RINGS + r] = v[DET_RINGS + r];
        w[5 * DET_RINGS + r] = v[r];
    }
}

void det_fields_efield(const det_fields *f, const double p[3], float e[3])
{
    float v[4];
    interp(&f->grid, f->efield, 4, p, v);
    e[0] = v[0];
    e[1] = v[1];
    e[2] = v[2];
}

double det_fields_potential(const det_fields *f, const double p[3])
{
    float v[DET_SLOTS];
    interp(&f->grid, f->phi, DET_SLOTS, p, v);
    return v[DET_SLOT_V] * f->crystal.bias;
}
