/* tracker_study.h: simulated samples for the tracker (libsim's transport + smearing) and the efficiency / peak-to-total study with and without tracking. */
#ifndef NARWHAL_TRACKER_STUDY_H
#define NARWHAL_TRACKER_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "array.h"
#include "geometry.h"
#include "tracker/tracker_events.h"
#include "tracker/tracker_model.h"
#include "transport.h"

#define TRACKER_STUDY_KEV 1332.492 /* the 60Co line */

typedef struct tracker_study {
    det_array array;
    det_crystal crystal;
    sim_world world;
    tracker_lookup lookup;
    tr_model *model;
    tracker_smear smear;
    uint8_t *neighbour; /* n x n: crystals close enough for add-back */
    double neighbour_mm;
} tracker_study;

/* Events of M γ rays of TRACKER_STUDY_KEV from the target (the physics
 * producer's transport, deposits packed per segment), their truth frames and
 * their smeared points. */
typedef struct tracker_sample {
    int mult;
    tracker_events ev;
    uint8_t *truth;
    size_t truth_size;
} tracker_sample;

int tracker_study_init(tracker_study *st, const char *array, const char *geometry, const tracker_model_conf *mc,
                       char *msg, size_t len);
void tracker_study_free(tracker_study *st);

int tracker_study_sample(const tracker_study *st, int mult, uint32_t events, uint64_t seed, tracker_sample *s,
                         char *msg, size_t len);
void tracker_sample_free(tracker_sample *s);

/*
 * For M = 1 and M = 30 (events[0] and events[1] events), photopeak efficiency
 * (counts within 3 keV of the line per γ emitted) and peak-to-total (those
 * counts over all counts) of four spectra:
 *   ideal     each γ's own deposits summed (the truth tells which are whose):
 *             the limit perfect tracking would reach;
 *   crystal   each fired crystal's energy (at least 10 keV) on its own;
 *   add-back  the energies of neighbouring fired crystals summed;
 *   tracked   the gammas the tracker (GPU when usable) reconstructs.
 * Writes DIR/efficiency.md and DIR/spectra-m1.csv, DIR/spectra-m30.csv
 * (1 keV bins) and prints the table.  Returns 0, or 1 with a message.
 */
int tracker_study_run(const tracker_study *st, const char *dir, const uint32_t events[2], uint64_t seed);

#endif
