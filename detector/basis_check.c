/* basis_check.c: checks of a basis against its crystal: the grid its points lie on, labels far from their segment. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"

#define GRID_TOLERANCE 1e-3 /* of a spacing, as the generator's interpolation asks */
#define MIN_GRID_MM 0.25    /* basisgen's smallest --grid: finer would not fit the generator's node table */

static int by_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The smallest gap between distinct coordinates of one axis (INFINITY with one value). */
static double smallest_gap(const det_basis *b, int axis, float *scratch)
{
    for (uint32_t i = 0; i < b->n_points; i++) scratch[i] = b->pos[3 * (size_t)i + axis];
    qsort(scratch, b->n_points, sizeof *scratch, by_float);
    double gap = INFINITY;
    for (uint32_t i = 1; i < b->n_points; i++) {
        double d = (double)scratch[i] - scratch[i - 1];
        if (d > 1e-4 && d < gap) gap = d;
    }
    return gap;
}

int det_basis_check_grid(const det_basis *b, double h, char *why, size_t len)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY};
    for (uint32_t i = 0; i < b->n_points; i++)
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], b->pos[3 * (size_t)i + k]);
    for (uint32_t i = 0; i < b->n_points; i++)
        for (int k = 0; k < 3; k++) {
            double f = (b->pos[3 * (size_t)i + k] - lo[k]) / h;
            if (fabs(f - round(f)) > GRID_TOLERANCE)
                return snprintf(why, len, "point %u at (%g, %g, %g) mm is off the %g mm grid", i, b->pos[3 * (size_t)i],
                                b->pos[3 * (size_t)i + 1], b->pos[3 * (size_t)i + 2], h), -1;
        }
    return 0;
}

double det_basis_detect_grid(const det_basis *b, char *why, size_t len)
{
    float *scratch = malloc((b->n_points ? b->n_points : 1) * sizeof *scratch);
    if (!scratch) return snprintf(why, len, "out of memory"), 0;
    double h = INFINITY;
    for (int k = 0; k < 3; k++) h = fmin(h, smallest_gap(b, k, scratch));
    free(scratch);
    why[0] = 0;
    if (!isfinite(h)) return snprintf(why, len, "the points do not span a grid in any direction"), 0;
    if (h < MIN_GRID_MM) return snprintf(why, len, "points %g mm apart: finer than a %g mm grid", h, MIN_GRID_MM), 0;
    char off[200];
    if (det_basis_check_grid(b, h, off, sizeof off)) return snprintf(why, len, "no grid: %s", off), 0;
    return h;
}

/* ---- labels */

int det_basis_check_labels(const det_basis *b, double reach_mm, det_label_report *r)
{
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < b->n_points; i++) {
        const float *p = b->pos + 3 * (size_t)i;
        double q[3] = {p[0], p[1], p[2]}, d = det_segment_distance(&b->crystal, b->segment[i], q);
        r->other += b->segment[i] != det_crystal_segment(&b->crystal, q);
        if (d > reach_mm) {
            if (r->far < DET_IMPORT_LISTED) r->far_point[r->far] = i;
            r->far++;
        }
        if (d > r->max_distance) r->max_distance = d;
    }
    return 0;
}
