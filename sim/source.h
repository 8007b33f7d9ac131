/* source.h: what the simulated source emits per event: γ energies (lines, cascades, continuum), directions, Doppler shift. */
#ifndef NARWHAL_SIM_SOURCE_H
#define NARWHAL_SIM_SOURCE_H

#include "decay.h"
#include "rng.h"

/*
 * Kinds of source:
 *   lines      one γ per event, one of the lines chosen by intensity
 *              (137Cs: 661.657 keV);
 *   cascade    every energy of the list in each event, M = 1..30 γ rays with
 *              independent directions (60Co: 1173.228 and 1332.492 keV; the
 *              angular correlation of the cascade is not modelled);
 *   continuum  M γ rays per event, each uniform in [e_min, e_max];
 *   decay      one radioactive decay per event (decay.h: 60Co, 152Eu, 133Ba,
 *              56Co, 137Cs): the γ rays of its cascade, 0 to a few, with
 *              the evaluated branchings; a decay that emits none (ground
 *              state fed, or every transition converted) is an event too.
 * Energies are given in the emitter's frame.  With beta > 0 the emitter
 * moves at v/c = beta along +z (the beam axis): a γ emitted isotropically in
 * its frame reaches the lab at the aberrated angle, cos = (cos' + beta) /
 * (1 + beta cos'), with energy e0 / (gamma (1 - beta cos)).  A pencil
 * source emits every γ along one lab direction (Doppler shift included).
 */
enum { SIM_MAX_LINES = 64, SIM_MAX_MULTIPLICITY = 30 };

typedef enum sim_source_kind { SIM_LINES, SIM_CASCADE, SIM_CONTINUUM, SIM_DECAY } sim_source_kind;

typedef struct sim_source {
    sim_source_kind kind;
    int n;                               /* lines or cascade members */
    double energy[SIM_MAX_LINES];        /* keV, emitter frame */
    double cumulative[SIM_MAX_LINES];    /* lines: cumulative normalised intensity */
    double e_min, e_max;                 /* continuum, keV */
    int multiplicity;                    /* continuum */
    sim_decay decay;                     /* decay: sim_decay_prepare's */
    double beta;
    double origin[3];                    /* mm, lab */
    int pencil;
    double direction[3];                 /* pencil: unit vector, lab */
} sim_source;

typedef struct sim_gamma {
    double e0, e;   /* keV: emitter frame, lab */
    double dir[3];  /* lab, unit */
} sim_gamma;

/* Normalises the line intensities into cumulative[] (n lines, intensities in cumulative[]). */
void sim_source_normalise(sim_source *s);
/* The γ rays of one event into out[SIM_MAX_MULTIPLICITY]; returns how many. */
int sim_source_draw(const sim_source *s, sim_rng *r, sim_gamma *out);

#endif
