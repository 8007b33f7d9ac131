/* detector signals: drift of the electron and hole from a point, induced charge on the 37 contacts (Shockley-Ramo), preamp, sampling. */
#ifndef NARWHAL_DET_SIGNAL_H
#define NARWHAL_DET_SIGNAL_H

#include "field.h"

/*
 * Conventions (detector/README.md says more)
 * ------------------------------------------
 * A signal is the charge collected by a contact, in units of the charge of
 * one carrier pair:  s_k(t) = W_k(r_h(t)) - W_k(r_e(t)),  W_k the weighting
 * potential of contact k, r_h and r_e the hole's and the electron's positions
 * (Shockley-Ramo; this is minus the mirror charge induced on the contact).
 * In this n-type crystal the holes drift to the outer segments and the
 * electrons to the core, so at the end the hit segment reads +1, the core -1,
 * every other segment 0.  Transients on the other segments return to 0.
 *
 * Timing: the pair is created at t = 0, which is the start of sample
 * `pretrigger` (samples before it are the baseline, 0).  The drift is
 * integrated in steps of `step_ns` (midpoint rule); the preamplifier (a
 * first-order low-pass whose 10-90 % rise time is the crystal's preamp_rise)
 * filters the fine signal, and each sample is the mean of the fine values in
 * its interval [t, t + sample_ns).
 */
typedef struct det_signal_config {
    int n_samples;    /* per channel (default 100) */
    int pretrigger;   /* baseline samples before the interaction (default 5) */
    double sample_ns; /* sampling period (default 10); a whole multiple of step_ns */
    double step_ns;   /* drift step (default 1) */
} det_signal_config;

void det_signal_config_default(det_signal_config *cfg);
/* 0, or -1 with a message when the numbers do not fit together. */
int det_signal_config_check(const det_signal_config *cfg, char *msg, size_t len);

typedef struct det_drift_info {
    int hole_contact;     /* contact that collected the hole (0..36), -1 if it had not arrived by the window's end */
    int electron_contact; /* same for the electron */
    double hole_ns, electron_ns; /* arrival times */
} det_drift_info;

/* Drift speed (mm/ns) of holes (hole = 1) or electrons in a field of e V/mm
 * along a <100> axis of the lattice (axis111 = 0) or a <111> axis (1). */
double det_drift_speed(int hole, int axis111, double e);
/* Drift velocity (mm/ns, crystal frame) of a hole or an electron in the field
 * (V/mm, crystal frame): with c->anisotropic, along the lattice's axes turned
 * as c->phi110 says; else isotropic, along the field (signals.c gives both
 * models and their sources). */
void det_drift_velocity(const det_crystal *c, int hole, const double field[3], double v[3]);

/* The 37 signals of a pair created at p (crystal frame, mm, inside the
 * crystal): out[channel * n_samples + sample].  Fills *info when not NULL.
 * 0, or -1 when p is outside the crystal or memory runs out. */
int det_signal_compute(const det_fields *f, const det_signal_config *cfg, const double p[3], float *out,
                       det_drift_info *info);

#endif
