/* detector signals: carrier mobilities, the drift, Shockley-Ramo charges, the preamplifier and the sampling. */
#include "signals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

void det_signal_config_default(det_signal_config *cfg)
{
    cfg->n_samples = 100;
    cfg->pretrigger = 5;
    cfg->sample_ns = 10;
    cfg->step_ns = 1;
}

int det_signal_config_check(const det_signal_config *cfg, char *msg, size_t len)
{
    double ratio = cfg->sample_ns / cfg->step_ns;
    const char *why = NULL;
    if (cfg->n_samples < 2 || cfg->n_samples > 512) why = "samples must be in [2, 512]";
    else if (cfg->pretrigger < 0 || cfg->pretrigger >= cfg->n_samples) why = "pretrigger must be in [0, samples)";
    else if (!(cfg->step_ns >= 0.01 && cfg->step_ns <= 10)) why = "the drift step must be in [0.01, 10] ns";
    else if (!(cfg->sample_ns >= cfg->step_ns && cfg->sample_ns <= 1000)) why = "the sampling period must be in [step, 1000] ns";
    else if (fabs(ratio - floor(ratio + 0.5)) > 1e-9) why = "the sampling period must be a whole number of drift steps";
    if (!why) return 0;
    snprintf(msg, len, "%s", why);
    return -1;
}

/*
 * Drift velocities: the anisotropic model of B. Bruyneel et al., NIM A 569
 * (2006) 764 (the AGATA Detector Library's), in the crystal's cubic frame
 * (x, y, z along [100], [010], [001]).
 * Along a principal axis the speed follows Caughey and Thomas as extended by
 * L. Mihailescu et al., NIM A 447 (2000) 350:
 *   v(E) = mu0 E / (1 + (E / E0)^beta)^(1 / beta) - mun E
 * with Bruyneel's parameters at 78 K (as tabulated in the documentation of
 * SolidStateDetectors.jl, "Drift Fields"; mu in cm2/Vs, E0 in V/cm):
 *   electrons <100>: mu0 38609, beta 0.805, E0 511, mun -171
 *   electrons <111>: mu0 38536, beta 0.641, E0 538, mun  510
 *   holes     <100>: mu0 61824, beta 0.942, E0 185
 *   holes     <111>: mu0 61215, beta 0.662, E0 182
 * Holes (Bruyneel's eqs. 22-26): for a field at polar angle t and azimuth f
 * in the cubic frame, with k0 from v111 / v100 and Lambda, Omega cubic
 * polynomials of k0,
 *   v_r = v100 (1 - Lambda (sin^4 t sin^2 2f + sin^2 2t))          (along E)
 *   v_t = v100 Omega (2 sin^3 t cos t sin^2 2f + sin 4t)           (along e_theta)
 *   v_f = v100 Omega sin^3 t sin 4f                                 (along e_phi)
 * so that the speed is v100 along <100>, v111 along <111>, and the drift
 * leaves the field line elsewhere.
 * Electrons: the four L valleys along <111>, inverse mass tensors
 * g_j = I / mt + (1 / ml - 1 / mt) u_j u_j^T (ml = 1.64, mt = 0.0819 electron
 * masses); each valley drifts along g_j e with weight s_j = (e.g_j e)^(-1/2),
 * its population repartitioned by the field so that the speeds along <100>
 * and <111> are the measured ones (Mihailescu's and Bruyneel's model).
 */
typedef struct axis_law {
    double mu0, beta, e0, mun; /* cm2/Vs, 1, V/cm, cm2/Vs */
} axis_law;

static const axis_law ELECTRON_100 = {38609, 0.805, 511, -171}, ELECTRON_111 = {38536, 0.641, 538, 510},
                      HOLE_100 = {61824, 0.942, 185, 0}, HOLE_111 = {61215, 0.662, 182, 0};
#define MASS_L 1.64
#define MASS_T 0.0819

/* Speed (mm/ns) along one axis in a field of e V/mm. */
static double axis_speed(const axis_law *a, double e)
{
    double ecm = 10 * e; /* V/mm -> V/cm */
    if (ecm <= 0) return 0;
    double v = a->mu0 * ecm / pow(1 + pow(ecm / a->e0, a->beta), 1 / a->beta) - a->mun * ecm; /* cm/s */
    return v > 0 ? v * 1e-8 : 0;
}

double det_drift_speed(int hole, int axis111, double e)
{
    return axis_speed(hole ? (axis111 ? &HOLE_111 : &HOLE_100) : (axis111 ? &ELECTRON_111 : &ELECTRON_100), e);
}

/* Holes: velocity (mm/ns) in the cubic frame for the unit field direction u and field strength e (V/mm). */
static void hole_velocity(const double u[3], double e, double v[3])
{
    double v100 = axis_speed(&HOLE_100, e), v111 = axis_speed(&HOLE_111, e);
    if (v100 <= 0) {
        v[0] = v[1] = v[2] = 0;
        return;
    }
    double r = v111 / v100, k0 = 9.2652 - 26.3467 * r + 29.6137 * r * r - 12.3689 * r * r * r;
    double lambda = k0 * (-0.01322 + k0 * (0.41145 + k0 * (-0.23657 + k0 * 0.04077)));
    double omega = k0 * (0.006550 + k0 * (-0.19946 + k0 * (0.09859 + k0 * -0.01559)));
    double ct = u[2], st = sqrt(u[0] * u[0] + u[1] * u[1]);
    double cf = st > 0 ? u[0] / st : 1, sf = st > 0 ? u[1] / st : 0;
    double s2f = 2 * sf * cf, c2f = cf * cf - sf * sf, s2t = 2 * st * ct, c2t = ct * ct - st * st;
    double vr = v100 * (1 - lambda * (st * st * st * st * s2f * s2f + s2t * s2t));
    double vt = v100 * omega * (2 * st * st * st * ct * s2f * s2f + 2 * s2t * c2t);
    double vf = v100 * omega * st * st * st * 2 * s2f * c2f;
    const double er[3] = {st * cf, st * sf, ct}, et[3] = {ct * cf, ct * sf, -st}, ef[3] = {-sf, cf, 0};
    for (int k = 0; k < 3; k++) v[k] = vr * er[k] + vt * et[k] + vf * ef[k];
}

/* Electrons: velocity (mm/ns) in the cubic frame for the unit field direction u and field strength e (V/mm). */
static void electron_velocity(const double u[3], double e, double v[3])
{
    static const double axis[4][3] = {{1, 1, 1}, {-1, 1, 1}, {1, -1, 1}, {-1, -1, 1}}; /* the L valleys, x sqrt 3 */
    const double il = 1 / MASS_L, it = 1 / MASS_T, b = sqrt(8 * it + il) / 3;
    const double g0 = sqrt(2 * it / 3 + il / 3), g1 = (-4 * sqrt(il) - 4 * b / 3) / ((sqrt(il) - b) * (sqrt(il) - b)),
                 g2 = g1 * (sqrt(il) + 3 * b) / -4;
    double a = axis_speed(&ELECTRON_100, e) / g0, repop = g1 * axis_speed(&ELECTRON_111, e) / a + g2;
    double gu[4][3], s[4], sum = 0;
    for (int j = 0; j < 4; j++) {
        double along = (axis[j][0] * u[0] + axis[j][1] * u[1] + axis[j][2] * u[2]) / 3; /* (u_j . u) / sqrt 3 */
        for (int k = 0; k < 3; k++) gu[j][k] = it * u[k] + (il - it) * along * axis[j][k];
        s[j] = 1 / sqrt(gu[j][0] * u[0] + gu[j][1] * u[1] + gu[j][2] * u[2]);
        sum += s[j];
    }
    v[0] = v[1] = v[2] = 0;
    for (int j = 0; j < 4; j++) {
        double n = repop * (s[j] / sum - 0.25) + 0.25;
        for (int k = 0; k < 3; k++) v[k] -= a * n * s[j] * gu[j][k];
    }
}

/*
 * The isotropic model (anisotropic_drift 0): along the field with the <100>
 * law of L. Mihailescu et al., NIM A 447 (2000) 350 (77 K), the values the
 * common HPGe signal codes use:
 *   electrons mu0 40180 cm2/Vs, beta 0.72, E0 493 V/cm, mun 589 cm2/Vs
 *   holes     mu0 66333 cm2/Vs, beta 0.744, E0 181 V/cm
 */
static const axis_law ISO_ELECTRON = {40180, 0.72, 493, 589}, ISO_HOLE = {66333, 0.744, 181, 0};

void det_drift_velocity(const det_crystal *c, int hole, const double field[3], double v[3])
{
    double e = sqrt(field[0] * field[0] + field[1] * field[1] + field[2] * field[2]);
    if (!c->anisotropic) {
        double s = e > 0 ? axis_speed(hole ? &ISO_HOLE : &ISO_ELECTRON, e) / e : 0;
        for (int k = 0; k < 3; k++) v[k] = (hole ? s : -s) * field[k];
        return;
    }
    if (!(e > 0)) {
        v[0] = v[1] = v[2] = 0;
        return;
    }
    /* the crystal frame turned so that x is [100]: [110] lies at phi110, [100] 45 degrees before it */
    double turn = (c->phi110 - 45) * (M_PI / 180), ct = cos(turn), st = sin(turn);
    double u[3] = {(ct * field[0] + st * field[1]) / e, (-st * field[0] + ct * field[1]) / e, field[2] / e}, w[3];
    if (hole) hole_velocity(u, e, w);
    else electron_velocity(u, e, w);
    v[0] = ct * w[0] - st * w[1];
    v[1] = st * w[0] + ct * w[1];
    v[2] = w[2];
}

/* Velocity (mm/ns) of a carrier at p. */
static void velocity(const det_fields *f, int hole, const double p[3], double v[3])
{
    float e[3];
    det_fields_efield(f, p, e);
    const double field[3] = {e[0], e[1], e[2]};
    det_drift_velocity(&f->crystal, hole, field, v);
}

typedef struct carrier {
    int hole;
    double p[3];
    int contact;   /* -1 while drifting */
    double arrival;
    float w[DET_CHANNELS];
} carrier;

/* The passivated back face lets no charge through: a carrier pushed past it slides along it. */
static void keep_off_back(const det_crystal *c, double p[3])
{
    if (p[2] > c->length) p[2] = c->length;
}

/* One step of dt ns; on leaving the crystal the carrier is collected by the contact where it crossed. */
static void step_carrier(const det_fields *f, carrier *cr, double dt, double t)
{
    const det_crystal *c = &f->crystal;
    double v[3], mid[3], next[3];
    velocity(f, cr->hole, cr->p, v);
    for (int i = 0; i < 3; i++) mid[i] = cr->p[i] + 0.5 * dt * v[i];
    keep_off_back(c, mid);
    if (det_crystal_contains(c, mid)) velocity(f, cr->hole, mid, v);
    for (int i = 0; i < 3; i++) next[i] = cr->p[i] + dt * v[i];
    keep_off_back(c, next);
    if (det_crystal_contains(c, next)) {
        memcpy(cr->p, next, sizeof next);
        det_fields_weighting(f, cr->p, cr->w);
        return;
    }
    double lo = 0, hi = 1, q[3];
    for (int it = 0; it < 30; it++) {
        double m = 0.5 * (lo + hi);
        for (int i = 0; i < 3; i++) q[i] = cr->p[i] + m * (next[i] - cr->p[i]);
        if (det_crystal_contains(c, q)) lo = m;
        else hi = m;
    }
    for (int i = 0; i < 3; i++) q[i] = cr->p[i] + hi * (next[i] - cr->p[i]);
    cr->contact = det_surface_contact(c, q);
    cr->arrival = t - dt + hi * dt;
    for (int i = 0; i < 3; i++) cr->p[i] = q[i];
    memset(cr->w, 0, sizeof cr->w);
    cr->w[cr->contact] = 1;
}

/* First-order low-pass with the given 10-90 % rise time, in place. */
static void preamp(float *x, long n, double rise_ns, double step_ns)
{
    if (rise_ns <= 0) return;
    double tau = rise_ns / log(9.0);
    float a = (float)(1 - exp(-step_ns / tau)), y = 0;
    for (long i = 0; i < n; i++) {
        y += a * (x[i] - y);
        x[i] = y;
    }
}

int det_signal_compute(const det_fields *f, const det_signal_config *cfg, const double p[3], float *out,
                       det_drift_info *info)
{
    const det_crystal *c = &f->crystal;
    if (!det_crystal_contains(c, p)) return -1;
    int per_sample = (int)floor(cfg->sample_ns / cfg->step_ns + 0.5);
    long fine = (long)(cfg->n_samples - cfg->pretrigger) * per_sample;
    float *trace = malloc((size_t)fine * DET_CHANNELS * sizeof *trace); /* [channel][fine step] */
    if (!trace) return -1;
    carrier cr[2] = {{.hole = 1, .contact = -1}, {.hole = 0, .contact = -1}};
    for (int k = 0; k < 2; k++) memcpy(cr[k].p, p, sizeof cr[k].p);
    det_fields_weighting(f, p, cr[0].w);
    memcpy(cr[1].w, cr[0].w, sizeof cr[1].w);
    for (long n = 0; n < fine; n++) {
        double t = n * cfg->step_ns;
        for (int k = 0; k < 2; k++)
            if (n > 0 && cr[k].contact < 0) step_carrier(f, &cr[k], cfg->step_ns, t);
        for (int ch = 0; ch < DET_CHANNELS; ch++) trace[ch * fine + n] = cr[0].w[ch] - cr[1].w[ch];
    }
    for (int ch = 0; ch < DET_CHANNELS; ch++) {
        float *x = trace + ch * fine, *o = out + (long)ch * cfg->n_samples;
        preamp(x, fine, c->preamp_rise, cfg->step_ns);
        for (int s = 0; s < cfg->pretrigger; s++) o[s] = 0;
        for (int s = cfg->pretrigger; s < cfg->n_samples; s++) {
            const float *b = x + (long)(s - cfg->pretrigger) * per_sample;
            double sum = 0;
            for (int m = 0; m < per_sample; m++) sum += b[m];
            o[s] = (float)(sum / per_sample);
        }
    }
    if (info) {
        info->hole_contact = cr[0].contact;
        info->electron_contact = cr[1].contact;
        info->hole_ns = cr[0].contact >= 0 ? cr[0].arrival : -1;
        info->electron_ns = cr[1].contact >= 0 ? cr[1].arrival : -1;
    }
    free(trace);
    return 0;
}
