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
 * Drift speed along the field, isotropic, with the <100> parameters of
 * B. Bruyneel et al., NIM A 569 (2006) 764, table 1 (77 K):
 *   v(E) = mu0 E / (1 + (E / E0)^beta)^(1 / beta) - mun E
 *   electrons: mu0 = 40180 cm2/Vs, beta = 0.72,  E0 = 493 V/cm, mun = 589 cm2/Vs
 *   holes:     mu0 = 66333 cm2/Vs, beta = 0.744, E0 = 181 V/cm, mun = 0
 * These are the values the common HPGe signal codes use along <100>; the
 * anisotropy of the crystal axes is not modelled.
 */
double det_drift_speed(int hole, double e)
{
    const double mu0 = hole ? 66333 : 40180, beta = hole ? 0.744 : 0.72, e0 = hole ? 181 : 493, mun = hole ? 0 : 589;
    double ecm = 10 * e; /* V/mm -> V/cm */
    if (ecm <= 0) return 0;
    double v = mu0 * ecm / pow(1 + pow(ecm / e0, beta), 1 / beta) - mun * ecm; /* cm/s */
    return v > 0 ? v * 1e-8 : 0;                                                 /* mm/ns */
}

/* Velocity (mm/ns) of a carrier at p: holes along E, electrons against it. */
static void velocity(const det_fields *f, int hole, const double p[3], double v[3])
{
    float e[3];
    det_fields_efield(f, p, e);
    double mag = sqrt((double)e[0] * e[0] + (double)e[1] * e[1] + (double)e[2] * e[2]);
    double s = mag > 0 ? det_drift_speed(hole, mag) / mag : 0;
    if (!hole) s = -s;
    for (int i = 0; i < 3; i++) v[i] = s * e[i];
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
