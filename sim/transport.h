/* transport.h: photon transport through the germanium of an array: exact ray/crystal chords, interaction sampling, Klein-Nishina scattering, pairs. */
#ifndef NARWHAL_SIM_TRANSPORT_H
#define NARWHAL_SIM_TRANSPORT_H

#include <stddef.h>

#include "array.h"
#include "geometry.h"
#include "rng.h"

/*
 * The world is the germanium of the array and nothing else (no capsules,
 * cryostats, target chamber or air: vacuum between crystals).  A crystal
 * (geometry.h; each of its own shape: AGATA's A, B, C in agata180-atc.txt)
 * is the intersection of eight half-spaces (front and back
 * faces, six tapered side faces) and a cylinder, minus the bore (a cylinder
 * from bore_depth to the back face).  A ray meets it in at most two
 * intervals, computed exactly: the interval of the convex part by clipping
 * against each surface, minus the interval inside the bore.  Only crystals
 * whose bounding sphere the ray meets are clipped.
 *
 * A photon's path to its next interaction is drawn as an optical depth
 * -ln(u) spent along the germanium it crosses, crystal after crystal, so a
 * photon that leaves one crystal may interact in another.  At the point the
 * process is chosen by the ratio of the three cross sections (xs_ge.h):
 *   photoelectric: the whole energy is deposited there (the photoelectron
 *     and the atom's relaxation are absorbed locally: no fluorescence);
 *   Compton: the electron's energy is deposited there, the photon goes on
 *     with the Klein-Nishina energy and angle (Kahn's rejection method);
 *   pair: E - 1022 keV is deposited there (the electron and positron stop
 *     at once), then the positron annihilates at rest into two 511 keV
 *     photons, back to back in an isotropic direction, both followed.
 * Photons below SIM_CUTOFF_KEV are absorbed where they are (their mean free
 * path in germanium is below a micrometre).
 */
#define SIM_CUTOFF_KEV 1.5
enum { SIM_MAX_DEPOSITS = 4096 };

typedef struct sim_world {
    det_crystal shape[DET_ARRAY_SHAPES]; /* the array's shapes (det_array_shape), or the one crystal given */
    int n_shapes;
    int n;                 /* crystals */
    det_placement *pl;     /* n placements (copies) */
    int *type;             /* n: each crystal's shape, an index into shape[] */
    double (*centre)[3];   /* lab centre of each crystal's bounding sphere */
    double radius;         /* bounding sphere radius, the largest of the shapes' */
    double side[DET_ARRAY_SHAPES][6][4]; /* crystal frame: shape t's side face k is side[t][k][0..2] . p <= side[t][k][3] */
    int *index_of_id;      /* crystal id -> index in the array, -1 for ids it lacks */
    int n_ids;             /* largest id + 1 */
} sim_world;

/* The shape of crystal index i. */
static inline const det_crystal *sim_shape(const sim_world *w, int i) { return &w->shape[w->type[i]]; }

typedef struct sim_deposit {
    int crystal;     /* index in the array (not the id) */
    int gamma;       /* index of the primary γ in the event */
    int process;     /* ADF_TRUTH_PHOTO, _COMPTON, _PAIR */
    int segment;     /* 0..35 */
    double e;        /* keV */
    double pos[3];   /* crystal frame, mm */
    double lab[3];   /* lab frame, mm */
} sim_deposit;

typedef struct sim_deposits {
    sim_deposit d[SIM_MAX_DEPOSITS];
    int n;
} sim_deposits;

/* Builds the world, each crystal of its shape: the array's when it names shapes, else c.  0, or -1 with a message
   (no crystals, no memory). */
int sim_world_init(sim_world *w, const det_array *a, const det_crystal *c, char *msg, size_t len);
void sim_world_free(sim_world *w);

/* Intervals [t_in, t_out] (t >= 0) where the ray o + t d (lab, d a unit
 * vector) lies in crystal i; returns how many (0, 1 or 2). */
int sim_chord(const sim_world *w, int i, const double o[3], const double d[3], double t[2][2]);

/* Follows one primary photon of energy e from o in direction d, appending its
 * deposits (tagged with `gamma`) to dep.  Returns ADF_TRUTH_* flags: MISSED
 * when its first flight crossed no germanium, PAIRED when it made a pair;
 * -1 when dep would exceed SIM_MAX_DEPOSITS (nothing of this γ is kept). */
int sim_transport(const sim_world *w, sim_rng *r, double e, const double o[3], const double d[3], int gamma,
                  sim_deposits *dep);

#endif
