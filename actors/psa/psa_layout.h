/* psa_layout.h: the basis rearranged for the grid search: per segment, its mask channels' window samples, k-major, coarse points first. */
#ifndef NARWHAL_PSA_LAYOUT_H
#define NARWHAL_PSA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "basis.h"
#include "psa_trace.h"

/*
 * A segment's block holds, for each of its columns (its basis points,
 * coarse points first), the n_mask x window values the FoM reads:
 * value (k, col) at block[k * pad + col], k = channel-of-mask * window + i.
 * A search reads one k for many columns at once, so consecutive columns are
 * consecutive in memory (the GPU's loads coalesce, the CPU's are vectors).
 * pad rounds the columns up to PSA_COLUMN_ALIGN; padding values are 0 and
 * never searched.
 *
 * The same values are also kept point-major (column col's K values at
 * pm[pm_offset + col * K]): the adaptive search's fine stage reads a few
 * scattered columns, each then one contiguous run.
 *
 * Coarse points (adaptive search): the crystal is cut into cubes of
 * coarse_mm; in each cube, the segment's point nearest the cube's centre.
 * Each coarse column lists the columns within radius_mm of it (itself
 * included): the fine stage searches that list around the best coarse point.
 *
 * Local lists (local_mm > 0): every column lists the columns within
 * local_mm of it (itself included, ascending): a local search (PSA_LOCAL,
 * the neighbour passes') runs the fine stage over the list of a column it
 * is given instead of the coarse stage's.
 */
enum {
    PSA_COLUMN_ALIGN = 128,
    PSA_I16_SLACK = 8, /* int16 values after i16pm: the AVX2 fine stage gathers 32-bit words */
};

typedef struct psa_segment {
    uint32_t n_points, n_coarse, pad;
    uint32_t n_mask;
    uint8_t mask[PSA_MAX_MASK]; /* channels, in the order the FoM sums them */
    uint64_t offset;            /* of the block in f32 / i16 */
    uint64_t pm_offset;         /* of the point-major block in f32pm / i16pm */
    uint32_t *point;            /* basis point of each column */
    uint32_t *near_first;       /* n_coarse + 1 entries: near[near_first[c] .. near_first[c + 1]) */
    uint32_t *near;             /* columns near coarse column c */
    uint32_t *local_first;      /* n_points + 1 entries (local_mm > 0, else NULL): local[local_first[col] ..) */
    uint32_t *local;            /* columns within local_mm of column col */
    uint32_t centre;            /* the column nearest the mean position of the segment's points */
} psa_segment;

typedef struct psa_layout_params {
    uint32_t window_start, window; /* basis samples [window_start, window_start + window) */
    double coarse_mm, radius_mm;
    double local_mm;               /* radius of the local lists (0: none) */
    int f32, i16;                  /* which value arrays to build */
    uint8_t n_mask[DET_SEGMENTS];
    uint8_t mask[DET_SEGMENTS][PSA_MAX_MASK];
} psa_layout_params;

typedef struct psa_layout {
    uint32_t window_start, window;
    uint32_t max_k;      /* the largest n_mask x window */
    uint64_t values;     /* in each of f32, i16 */
    uint64_t pm_values;  /* in each of f32pm, i16pm */
    psa_segment seg[DET_SEGMENTS];
    double local_mm;     /* the local lists' radius (0: none) */
    uint32_t *column;    /* per basis point: its column in its segment's block (a point is in one segment) */
    float *f32;          /* NULL unless asked for */
    int16_t *i16;
    float *f32pm;        /* point-major copies, with f32 and i16 */
    int16_t *i16pm;
} psa_layout;

/* The default mask of segment s (AGATA's neighbourhood): the two neighbours in
 * its ring, the three nearest segments of each adjacent ring; a front-ring
 * segment takes its whole ring and the three of ring 1.  Returns the count. */
unsigned psa_default_mask(unsigned s, uint8_t mask[PSA_MAX_MASK]);

/* 0, or -1 with a message: a basis without 37 channels, a window outside its
 * samples, a segment without points, no memory. */
int psa_layout_build(psa_layout *l, const det_basis *b, const psa_layout_params *p, char *msg,
                     size_t len);
void psa_layout_free(psa_layout *l);

#endif
