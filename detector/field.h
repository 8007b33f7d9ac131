/* detector fields: electric and weighting potentials of the crystal by red-black SOR, coarse to fine, and their lookup. */
#ifndef NARWHAL_DET_FIELD_H
#define NARWHAL_DET_FIELD_H

#include <stddef.h>

#include "geometry.h"

/*
 * What is solved, on one Cartesian grid in the crystal frame (spacing h):
 *   slot 0           the electric potential divided by the bias, with the
 *                    space charge of the ionised donors:
 *                    lap(V) = -e N(z) / eps_Ge, V = bias on the core, 0 on the segments;
 *   slot 1 + 6 s + r the weighting potential of segment (sector s, ring r) for
 *                    sectors s = 0..3 (A..D): 1 on that contact, 0 on the others;
 *   slot 25          the weighting potential of the core.
 * Symmetry: the crystal is symmetric under the mirror y -> -y, which maps
 * sector s to sector 6 - s, and the grid is too (y nodes at j h, x nodes at
 * (i + 1/2) h so that no node lies on a sector boundary): sectors E and F are
 * sectors C and B seen in the mirror, exactly.  The 60° turns are a symmetry
 * of the crystal but not of a Cartesian grid; using them would put the
 * contacts' discretisation errors into the sum of the 37 potentials (by 4 %
 * near the axis at 1 mm), so they are left to the tests to verify.
 * An irregular crystal (AGATA's shapes A, B, C) has no mirror: a second solve
 * gives sectors E and F their own weighting potentials (det_fields.phi_ef).
 * The back face is passivated: zero normal derivative there.
 *
 * Discretisation: 7-point Laplacian; next to a contact the arm is shortened
 * to the true distance of the surface (Shortley-Weller), so curved and slanted
 * contacts are not staircased.  Solver: red-black successive over-relaxation
 * on grids of 4h, 2h, h, each started from the previous one's solution, all
 * slots at once (OpenMP over grid rows).
 */
enum {
    DET_SLOTS = 28, /* 26 used; 28 keeps a node's record a multiple of 16 bytes */
    DET_SLOT_V = 0,
    DET_SLOT_CORE = 25,
    DET_SOLVED_SECTORS = 4,
    DET_LEVELS = 3,
};

typedef struct det_grid {
    double h;             /* mm */
    int nx, ny, nz;       /* nodes per axis */
    double x0, y0, z0;    /* crystal-frame position of node (0, 0, 0), mm */
} det_grid;

typedef struct det_solve_report {
    int iterations[DET_LEVELS];   /* sweeps on the 4h, 2h, h grids (both solves of an irregular crystal) */
    double residual[DET_SLOTS];   /* final max |Jacobi correction| per slot on the fine grid (V in units of the bias;
                                     an irregular crystal: the larger of its two solves) */
    long free_nodes;              /* unknowns on the fine grid */
    long undepleted_nodes;        /* fine nodes where V lies outside [0, bias] (README: depletion criterion) */
    double undepleted_volume;     /* mm^3 */
    double v_min, v_max;          /* extremes of V inside, volts */
    double seconds;
} det_solve_report;

typedef struct det_fields {
    det_crystal crystal;
    det_grid grid;
    float *phi;    /* DET_SLOTS per node, node index (k * ny + j) * nx + i */
    float *phi_ef; /* irregular crystals (no mirror): a second solve, sectors E, F in slots 1..12; else NULL */
    float *efield; /* 4 per node: Ex, Ey, Ez in V/mm, then |E| */
    det_solve_report report;
} det_fields;

/* Solves the fields of crystal c on a grid of spacing h (mm; 1 by default in
 * basisgen).  tol: the sweeps stop when no value changes by more than tol
 * (units of the bias or of the weighting potential; 1e-5 is plenty).  0 or -1
 * with a message. */
int det_fields_solve(det_fields *f, const det_crystal *c, double h, double tol, char *msg, size_t len);
void det_fields_free(det_fields *f);

/* The 37 weighting potentials at p (crystal frame, mm), channel order. */
void det_fields_weighting(const det_fields *f, const double p[3], float w[DET_CHANNELS]);
/* Electric field at p, V/mm. */
void det_fields_efield(const det_fields *f, const double p[3], float e[3]);
/* Electric potential at p, volts. */
double det_fields_potential(const det_fields *f, const double p[3]);

#endif
