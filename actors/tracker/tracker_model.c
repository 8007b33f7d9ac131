/* tracker_model.c: the tracking model from the array and the configuration: germanium physics table, clustering steps, crystals, orderings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tracker_model.h"

/*
 * Germanium (Z = 32), NIST XCOM photon cross-sections, barn/atom, above the
 * K edge (11.1 keV).  Columns: energy keV, photoelectric absorption,
 * incoherent scattering, pair production (nuclear + electron field).
 * Rayleigh scattering is left out: it deposits nothing and hardly deflects.
 * Density 5.323 g/cm^3, A = 72.63 g/mol: 4.41358e22 atoms/cm^3.
 */
static const double xcom[][4] = {
    { 15, 1.090e4, 10.91, 0 },       { 20, 4.996e3, 12.38, 0 },
    { 30, 1.610e3, 14.00, 0 },       { 40, 704.5, 14.75, 0 },
    { 50, 367.0, 15.05, 0 },         { 60, 214.0, 15.12, 0 },
    { 80, 90.61, 14.94, 0 },         { 100, 46.24, 14.59, 0 },
    { 150, 13.56, 13.57, 0 },        { 200, 5.706, 12.63, 0 },
    { 300, 1.733, 11.13, 0 },        { 400, 0.7731, 10.03, 0 },
    { 500, 0.4270, 9.188, 0 },       { 600, 0.2699, 8.516, 0 },
    { 800, 0.1379, 7.497, 0 },       { 1000, 0.08585, 6.747, 0 },
    { 1022, 0.08158, 6.676, 0 },     { 1250, 0.05512, 6.038, 0.01073 },
    { 1500, 0.03968, 5.490, 0.05320 }, { 2000, 0.02437, 4.687, 0.1971 },
    { 2044, 0.02353, 4.629, 0.2116 }, { 3000, 0.01314, 3.689, 0.5391 },
    { 4000, 0.008813, 3.077, 0.8579 }, { 5000, 0.006576, 2.658, 1.1405 },
    { 6000, 0.005225, 2.349, 1.3901 }, { 8000, 0.003685, 1.922, 1.8151 },
    { 10000, 0.002839, 1.637, 2.1643 }, { 15000, 0.001797, 1.212, 2.8133 },
    { 20000, 0.001312, 0.9724, 3.2795 }, { 30000, 0.0008516, 0.7079, 3.9313 },
};
enum { XCOM_N = sizeof xcom / sizeof xcom[0], XCOM_PAIR_FIRST = 17 /* 1250 keV */ };
#define PAIR_THRESHOLD_KEV 1021.9979

static double loglog(double e, double e0, double e1, double v0, double v1)
{
    double f = log(e / e0) / log(e1 / e0);
    return exp(log(v0) + f * (log(v1) - log(v0)));
}

void tracker_cross_sections(double e, double *photo, double *compton, double *pair)
{
    if (e < xcom[0][0])
        e = xcom[0][0];
    if (e > xcom[XCOM_N - 1][0])
        e = xcom[XCOM_N - 1][0];
    int i = 0;
    while (i < XCOM_N - 2 && e > xcom[i + 1][0])
        i++;
    const double *a = xcom[i], *b = xcom[i + 1];
    *photo = loglog(e, a[0], b[0], a[1], b[1]);
    *compton = loglog(e, a[0], b[0], a[2], b[2]);
    /* near threshold the pair cross-section grows as (E - 2 mc^2)^3 */
    if (e <= PAIR_THRESHOLD_KEV)
        *pair = 0;
    else if (i < XCOM_PAIR_FIRST)
        *pair = xcom[XCOM_PAIR_FIRST][3] *
                pow((e - PAIR_THRESHOLD_KEV) / (xcom[XCOM_PAIR_FIRST][0] - PAIR_THRESHOLD_KEV), 3);
    else
        *pair = loglog(e, a[0], b[0], a[3], b[3]);
}

static float log_share(double part, double total)
{
    return part > 0 ? (float)log(part / total) : TR_LOG_FLOOR;
}

static void build_physics(tr_physics *t)
{
    for (int i = 0; i < TR_TABLE_N; i++) {
        double ph, co, pa;
        tracker_cross_sections(i * (double)TR_TABLE_STEP_KEV, &ph, &co, &pa);
        double tot = ph + co + pa;
        t[i] = (tr_physics){ (float)(tot * TRACKER_GE_BARN_TO_MM), log_share(co, tot),
                             log_share(ph, tot), log_share(pa, tot) };
    }
}

/* alpha_max(N): (1 - cos alpha_max) / 2 = (3 / (N + 2))^0.9. */
static double alpha_max(int n)
{
    double c = 1.0 - 2.0 * pow(3.0 / (n + 2), 0.9);
    return acos(c < -1.0 ? -1.0 : c);
}

static void build_steps(tr_params *p)
{
    for (int k = 1; k <= TR_MAX_STEPS; k++)
        p->cos_step[k - 1] = (float)cos(k * TR_ALPHA_STEP);
    for (int n = 0; n <= TR_MAX_POINTS; n++) {
        double am = alpha_max(n);
        int below = 0;
        while (below + 1 < TR_MAX_STEPS && (below + 1) * TR_ALPHA_STEP < am - 1e-9)
            below++;
        p->steps_below[n] = (uint8_t)below;
        p->cos_alpha_max[n] = (float)cos(am);
    }
}

static void build_perms(uint32_t *perms)
{
    int at = 0;
    for (int n = 1; n <= TR_MAX_CLUSTER; n++) {
        uint8_t seq[TR_MAX_CLUSTER];
        for (int k = 0; k < n; k++)
            seq[k] = (uint8_t)k;
        for (;;) {
            uint32_t packed = 0;
            for (int k = 0; k < n; k++)
                packed |= (uint32_t)seq[k] << (3 * k);
            perms[at++] = packed;
            /* next permutation in lexicographic order */
            int i = n - 2;
            while (i >= 0 && seq[i] > seq[i + 1])
                i--;
            if (i < 0)
                break;
            int j = n - 1;
            while (seq[j] < seq[i])
                j--;
            uint8_t t = seq[i];
            seq[i] = seq[j];
            seq[j] = t;
            for (int lo = i + 1, hi = n - 1; lo < hi; lo++, hi--) {
                t = seq[lo];
                seq[lo] = seq[hi];
                seq[hi] = t;
            }
        }
    }
}

_Static_assert((int)TR_MAX_SHAPES == (int)DET_ARRAY_SHAPES, "the path model holds every shape an array may name");

static void build_shape(tr_shape *s, const det_crystal *c)
{
    s->length = (float)c->length;
    s->radius2 = (float)(c->radius * c->radius);
    s->bore_radius2 = (float)(c->bore_radius * c->bore_radius);
    s->bore_depth = (float)c->bore_depth;
    /* a hair wider than the crystal, so that float rounding never culls one it touches */
    s->bound2 = (float)((0.25 * c->length * c->length + c->radius * c->radius) * 1.001 + 1.0);
    for (int k = 0; k < 6; k++) {
        double f[4];
        det_crystal_side(c, k, f); /* the regular hexagon's normal is (cos 60k, sin 60k) already */
        double nxy = c->irregular ? hypot(f[0], f[1]) : 1;
        s->side_cos[k] = (float)(f[0] / nxy);
        s->side_sin[k] = (float)(f[1] / nxy);
        s->face_slope[k] = (float)(-f[2] / nxy);
        s->face_front[k] = (float)(f[3] / nxy);
    }
}

static void build_crystal(tr_crystal *k, const det_placement *pl, int shape, double length)
{
    memset(k, 0, sizeof *k);
    k->shape = shape;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            k->rt[3 * i + j] = (float)pl->R[j][i];
        k->t[i] = (float)pl->T[i];
        k->centre[i] = (float)(pl->T[i] + pl->R[i][2] * 0.5 * length);
    }
}

static double dist2(const float *a, const float *b)
{
    double d = 0;
    for (int i = 0; i < 3; i++)
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return d;
}

/* Groups of up to TR_GROUP_SIZE neighbouring crystals: each crystal not yet
 * taken, in array order, with its nearest free ones.  crystal[] is rewritten
 * in group order (the path model needs no ids). */
static void build_groups(tr_geo *geo, int n, double bound)
{
    static tr_crystal placed[TR_MAX_CRYSTALS];
    uint8_t taken[TR_MAX_CRYSTALS] = { 0 };
    int at = 0;
    geo->n_groups = 0;
    for (int i = 0; i < n; i++) {
        if (taken[i])
            continue;
        tr_group *g = &geo->group[geo->n_groups++];
        g->first = (uint16_t)at;
        g->count = 0;
        for (int member = i; member >= 0 && g->count < TR_GROUP_SIZE; g->count++) {
            taken[member] = 1;
            placed[at++] = geo->crystal[member];
            int next = -1;
            for (int j = 0; j < n; j++)
                if (!taken[j] && (next < 0 || dist2(geo->crystal[i].centre, geo->crystal[j].centre) <
                                                  dist2(geo->crystal[i].centre, geo->crystal[next].centre)))
                    next = j;
            member = next;
        }
        double c[3] = { 0, 0, 0 }, reach = 0;
        for (int k = g->first; k < g->first + g->count; k++)
            for (int d = 0; d < 3; d++)
                c[d] += placed[k].centre[d] / g->count;
        for (int d = 0; d < 3; d++)
            g->centre[d] = (float)c[d];
        for (int k = g->first; k < g->first + g->count; k++)
            reach = fmax(reach, sqrt(dist2(g->centre, placed[k].centre)));
        g->r2 = (float)((reach + bound) * (reach + bound) * 1.001 + 1.0);
    }
    memcpy(geo->crystal, placed, (size_t)n * sizeof *placed);
}

int tracker_model_build(tr_model *m, const det_array *a, const det_crystal *c,
                        const tracker_model_conf *cf, char *msg, size_t len)
{
    if (a->n > TR_MAX_CRYSTALS) {
        snprintf(msg, len, "the array has %d crystals; the tracker holds at most %d", a->n,
                 TR_MAX_CRYSTALS);
        return -1;
    }
    if (!(cf->min_cluster > 0 && cf->min_cluster <= 1 && cf->min_single > 0 && cf->min_single <= 1)) {
        snprintf(msg, len, "figure-of-merit thresholds must lie in (0, 1]");
        return -1;
    }
    if (!(cf->single_isolation >= 0 && cf->single_isolation <= 1e4)) {
        snprintf(msg, len, "the single-point isolation (%g mm) must lie in [0, 10000] mm", cf->single_isolation);
        return -1;
    }
    if (!(cf->size_bonus >= 0 && cf->size_bonus <= 100) || (cf->retrack != 0 && cf->retrack != 1)) {
        snprintf(msg, len, "the size bonus (%g) must lie in [0, 100] and Retrack be 0 or 1", cf->size_bonus);
        return -1;
    }
    if (cf->path_model == TR_PATH_SHELL && !(cf->shell_inner >= 0 && cf->shell_outer > cf->shell_inner)) {
        snprintf(msg, len, "the shell's outer radius (%g mm) must exceed its inner radius (%g mm)",
                 cf->shell_outer, cf->shell_inner);
        return -1;
    }
    memset(m, 0, sizeof *m);
    tr_params *p = &m->params;
    p->pos_a = (float)cf->pos_a;
    p->pos_b = (float)cf->pos_b;
    p->sigma_e2 = (float)(cf->energy_sigma * cf->energy_sigma);
    p->theta_scale2 = (float)(cf->theta_scale * cf->theta_scale);
    p->log_min_cluster = (float)log(cf->min_cluster);
    p->log_min_single = (float)log(cf->min_single);
    p->single_iso2 = (float)(cf->single_isolation * cf->single_isolation);
    p->path_model = cf->path_model;
    p->size_bonus = (float)cf->size_bonus;
    p->retrack = cf->retrack;
    p->shell_in2 = (float)(cf->shell_inner * cf->shell_inner);
    p->shell_out2 = (float)(cf->shell_outer * cf->shell_outer);
    build_steps(p);
    /* each crystal its own shape when the array names them (AGATA's A, B, C), else c for all */
    p->n_shapes = a->n_shapes ? a->n_shapes : 1;
    double bound2 = 0;
    for (int t = 0; t < p->n_shapes; t++) {
        build_shape(&p->shape[t], a->n_shapes ? &a->shape[t] : c);
        bound2 = fmax(bound2, p->shape[t].bound2);
    }
    for (int i = 0; i < a->n; i++)
        build_crystal(&m->geo.crystal[i], &a->crystal[i], a->n_shapes ? a->crystal[i].type : 0,
                      det_array_shape(a, i, c)->length);
    build_groups(&m->geo, a->n, sqrt(bound2));
    build_physics(m->physics);
    build_perms(m->perms);
    return 0;
}
