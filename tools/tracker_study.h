/* tracker_study.h: the tracker's simulated inputs (libsim's transport or a GammaEvents file, packed, smeared, thresholded as issue 16 defines them) and the efficiency / peak-to-total study. */
#ifndef NARWHAL_TRACKER_STUDY_H
#define NARWHAL_TRACKER_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "array.h"
#include "geometry.h"
#include "tracker/tracker_events.h"
#include "tracker/tracker_model.h"
#include "transport.h"

/*
 * What the tracker is given, from each event's simulated deposits (every
 * Compton scattering, photoabsorption and pair vertex of libsim's transport:
 * what the generator writes to a GammaEvents file with Packing none):
 *
 *   1. packing: the deposits of one crystal closer than pack_mm become one
 *      point at their energy-weighted centre (the closest pair first, again
 *      until no two are that close); packing SIM_PACK_SEGMENT instead takes
 *      the transport's points packed per γ and segment (what a PSA finds);
 *   2. energy: each point's energy gets a Gaussian of FWHM
 *      sqrt(e_fwhm_a + e_fwhm_b E/MeV) keV (its own stream per event);
 *   3. threshold: points under `threshold` keV are dropped, and the energy of
 *      their crystal (the sum of its points, as its core measures it) is
 *      shared by its other points in proportion to their energies (AGATA's
 *      core scaling); a crystal with no point left loses its energy;
 *   4. position: each axis of each point moves by a Gaussian whose FWHM is
 *      smear.a + smear.b sqrt(100 keV / e) mm (tracker_truth.h: the FWHM of
 *      the AGATA position-resolution measurement).
 *
 * tracker_input_issue16 is issue 16's input: deposits packed within 5 mm,
 * FWHM 2.7 + 6.2 sqrt(0.1 MeV / E) mm, energies FWHM sqrt(1 + 3.7 E/MeV)
 * keV, 15 keV threshold; its "ideal" input has smear.a = smear.b = 0.
 */
typedef struct tracker_input {
    int packing;               /* SIM_PACK_NONE (then pack_mm) or SIM_PACK_SEGMENT */
    double pack_mm;
    double e_fwhm_a, e_fwhm_b; /* keV^2, keV^2 per MeV; 0 0: exact energies */
    double threshold;          /* keV */
    tracker_smear smear;       /* position FWHM (mm) and the seed of every stream */
} tracker_input;

extern const tracker_input tracker_input_issue16;

typedef struct tracker_study {
    det_array array;
    det_crystal crystal;
    sim_world world;
    tracker_lookup lookup;
    tr_model *model;
} tracker_study;

/* A sample: its events as the tracker takes them, and what the source emitted. */
typedef struct tracker_sample {
    double line;         /* keV: the γ energy (the photopeak) */
    int mult;            /* γ rays per event */
    uint64_t emitted;    /* γ rays */
    uint64_t absorbed;   /* of them, fully absorbed in the germanium (the limit of tracking) */
    tracker_events ev;
} tracker_sample;

int tracker_study_init(tracker_study *st, const char *array, const char *geometry, const tracker_model_conf *mc,
                       char *msg, size_t len);
void tracker_study_free(tracker_study *st);

/* events events of mult γ rays of `line` keV from the target, isotropic,
 * made by libsim's transport (seeded by seed) and prepared as *in says. */
int tracker_study_sample(const tracker_study *st, const tracker_input *in, double line, int mult, uint32_t events,
                         uint64_t seed, tracker_sample *s, char *msg, size_t len);
/* The events of a GammaEvents file (actors/sim/gammaevents.h), prepared as
 * *in says (packing by distance only); the line is the first γ's energy, M
 * the γ rays of the first event. */
int tracker_study_sample_file(const tracker_study *st, const tracker_input *in, const char *path,
                              tracker_sample *s, char *msg, size_t len);
void tracker_sample_free(tracker_sample *s);

/*
 * Tracks s (the GPU when usable) and measures, with ±3 keV around the line,
 * efficiency = photopeak counts per γ emitted and peak-to-total = photopeak
 * counts over all tracked counts.  Prints one table row labelled `label`
 * (efficiency, P/T, their binomial errors, the counts, the fully absorbed
 * fraction, points per event) on stdout, and writes the tracked spectrum
 * (1 keV bins) to csv when it is not NULL.  0, or -1 with a message.
 */
int tracker_study_measure(const tracker_study *st, const tracker_sample *s, const char *label, const char *csv,
                          char *msg, size_t len);

/* The header of measure's rows. */
void tracker_study_header(void);

#endif
