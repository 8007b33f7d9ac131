/* decay.h: radioactive sources as decay schemes (levels, γ branchings, internal conversion) from evaluated data. */
#ifndef NARWHAL_SIM_DECAY_H
#define NARWHAL_SIM_DECAY_H

/*
 * A scheme is the list of γ transitions of the daughter nucleus that matter
 * for a calibration source, each with the energies of its initial and final
 * levels, its γ energy, its γ intensity (photons per 100 decays) and its
 * total internal-conversion coefficient alpha.  The values are the evaluated
 * ones of ENSDF (as NNDC's NuDat 3 gives them) and of the Decay Data
 * Evaluation Project (LNHB's Table de Radionucléides, the IAEA's x- and
 * γ-ray standards); decay.c names the evaluation of each nuclide.
 *
 * What a decay does is derived from the transitions alone, so that the γ
 * intensities per decay come out as evaluated:
 *   - a transition's intensity is I_gamma (1 + alpha); it carries a γ ray
 *     with probability 1 / (1 + alpha), a conversion electron otherwise
 *     (electrons, X rays and Auger electrons are not emitted);
 *   - a level leaves by each of its transitions in proportion to their
 *     intensities;
 *   - the β or EC feeding of a level is what leaves it less what reaches
 *     it from above (never below zero), and what the levels' feedings leave
 *     short of 100 feeds the ground state: a decay without any γ ray.
 * The γ rays of one decay are emitted together (one event), each in its own
 * isotropic direction: the angular correlations of the cascades are not
 * modelled, nor the annihilation photons of a β+ branch.
 */
enum { SIM_DECAY_LEVELS = 24, SIM_DECAY_TRANSITIONS = 32 };

typedef struct sim_transition {
    double from, to;  /* level energies, keV */
    double e;         /* γ energy, keV */
    double intensity; /* γ rays per 100 decays */
    double alpha;     /* total conversion coefficient */
} sim_transition;

typedef struct sim_scheme {
    const char *name;     /* "60Co" */
    const char *alias;    /* "co60": the older spelling Source also takes */
    const char *daughter; /* "60Ni" or "152Sm and 152Gd" */
    int n;
    const sim_transition *t;
} sim_scheme;

/* The decay draws, prepared once from a scheme (sim_decay_prepare). */
typedef struct sim_decay {
    const sim_scheme *scheme;
    int n_levels;                           /* level 0 is the ground state */
    double level[SIM_DECAY_LEVELS];         /* keV, ascending */
    double feeding[SIM_DECAY_LEVELS];       /* cumulative, normalised: level of the decay */
    int first[SIM_DECAY_LEVELS], count[SIM_DECAY_LEVELS]; /* a level's transitions in out[] */
    int out[SIM_DECAY_TRANSITIONS];         /* transition indices grouped by initial level */
    double branch[SIM_DECAY_TRANSITIONS];   /* cumulative within its level, by out[] position */
    int to[SIM_DECAY_TRANSITIONS];          /* final level of each transition */
} sim_decay;

/* The schemes Narwhal knows, ending with a NULL name. */
extern const sim_scheme sim_schemes[];

/* The scheme named name (its name or alias, case aside), or NULL. */
const sim_scheme *sim_scheme_find(const char *name);

/* Fills d from s: 0, or -1 when s is not a scheme (a transition that does
 * not go down, more levels or transitions than the tables hold). */
int sim_decay_prepare(sim_decay *d, const sim_scheme *s);

#endif
