/* tracker_model.h: builds the tracking model: germanium cross-section tables, cone-angle steps, crystal placements, permutation tables. */
#ifndef NARWHAL_TRACKER_MODEL_H
#define NARWHAL_TRACKER_MODEL_H

#include <stddef.h>

#include "array.h"
#include "geometry.h"
#include "tracker_types.h"

typedef struct tracker_model_conf {
    double pos_a, pos_b;          /* position sigma(e) = pos_a + pos_b sqrt(100 keV / e), mm */
    double energy_sigma;          /* keV, one deposit */
    double theta_scale;           /* angular uncertainty parameter */
    double min_cluster, min_single;
    double single_isolation;      /* mm: a single point's distance to every other point */
    double size_bonus;            /* selection order: ln FoM + size_bonus k / N (tracker_fom.h) */
    int retrack;                  /* 1: a second pass over the points the first left free */
    int path_model;               /* TR_PATH_* */
    double shell_inner, shell_outer; /* mm */
} tracker_model_conf;

/* Fills *m (a heap object: it is large) for array a of crystals shaped like c.
 * 0, or -1 with a message (too many crystals, bad thresholds). */
int tracker_model_build(tr_model *m, const det_array *a, const det_crystal *c,
                        const tracker_model_conf *cf, char *msg, size_t len);

/* Germanium cross-sections, barn per atom, at e keV (NIST XCOM, interpolated
 * log-log between its tabulated energies): photoelectric, incoherent
 * (Compton) and pair production (nuclear and electron fields). */
void tracker_cross_sections(double e, double *photo, double *compton, double *pair);

/* Germanium atoms per mm^3 times 1e-22 mm^2 per barn: barn/atom -> 1/mm. */
#define TRACKER_GE_BARN_TO_MM 0.00441358

#endif
