/* tracker_truth.h: simulation truth as tracker input: each interaction's position smeared by a resolution model, as data:psa hits. */
#ifndef NARWHAL_TRACKER_TRUTH_H
#define NARWHAL_TRACKER_TRUTH_H

#include <stdint.h>

#include "adf.h"
#include "rng.h"

/*
 * Each axis of the crystal frame moves by a Gaussian whose FWHM is
 * a + b sqrt(100 keV / e) mm (sigma = FWHM / 2.3548), drawn from a random
 * stream seeded by (seed, event number), so that an event is smeared the same
 * way whatever block or tool it goes through.
 *
 * a = 2.7 mm, b = 6.2 mm is AGATA's energy-dependent position resolution
 * (Söderström et al., NIM A 638 (2011) 96), a FWHM: 4.66 mm at 1 MeV, 8.9 mm
 * at 100 keV, in line with the ~5 mm FWHM around 1 MeV that AGATA's in-beam
 * measurements quote; public forward-tracking code citing that paper scales
 * its Gaussian the same way (FWHM / 2.35).  Read as a sigma it would be a
 * FWHM of 11 mm at 1 MeV, twice what the detectors achieve.
 */
#define TRACKER_FWHM_PER_SIGMA 2.3548200450309493 /* 2 sqrt(2 ln 2) */

typedef struct tracker_smear {
    double a, b; /* mm, FWHM */
    uint64_t seed;
} tracker_smear;

/* Interaction i of truth t, smeared, as a data:psa hit; the hits of one event
 * must be asked for in order i = 0, 1, ... (one stream per event). */
typedef struct tracker_smearer {
    const tracker_smear *s;
    sim_rng rng;
} tracker_smearer;

void tracker_smearer_start(tracker_smearer *r, const tracker_smear *s, uint32_t event);
void tracker_smear_hit(tracker_smearer *r, const adf_truth_hit *h, adf_psa_hit *out);

/* Working memory of tracker_truth_write_psa (large: allocate it). */
typedef struct tracker_truth_scratch {
    adf_psa psa;
    adf_psa_hit hit[ADF_TRUTH_MAX_INTERACTIONS];
    uint8_t done[ADF_TRUTH_MAX_INTERACTIONS];
} tracker_truth_scratch;

/* Writes the event as one event:data:psa frame: one data:psa member per
 * crystal, in order of first appearance, its hits smeared (in the order of
 * the truth); the member's core energy is the sum of its hits.  ADF_E_*
 * codes; ADF_E_LIMIT when a crystal has more than ADF_PSA_MAX_HITS hits. */
int tracker_truth_write_psa(adf_writer *w, uint32_t event, uint64_t timestamp, const adf_truth *t,
                            const tracker_smear *s, tracker_truth_scratch *x);

#endif
