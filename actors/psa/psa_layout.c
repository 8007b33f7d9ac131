/* psa_layout.c: builds the per-segment search blocks from a basis: masks, window, coarse points, neighbourhoods, float and int16 values. */
#include "psa_layout.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gridsearch_fom.h"

unsigned psa_default_mask(unsigned s, uint8_t mask[PSA_MAX_MASK])
{
    int sector = (int)s / DET_RINGS, ring = (int)s % DET_RINGS;
    unsigned n = 0;
    for (unsigned c = 0; c < DET_SEGMENTS; c++) {
        int cs = (int)c / DET_RINGS, cr = (int)c % DET_RINGS;
        int ds = (cs - sector + DET_SECTORS) % DET_SECTORS; /* 0, 1 (next), 5 (previous), ... */
        bool near_sector = ds == 0 || ds == 1 || ds == DET_SECTORS - 1;
        bool in = false;
        if (c == s)
            in = false;
        else if (cr == ring)
            in = ring == 0 || ds == 1 || ds == DET_SECTORS - 1;
        else if (cr == ring - 1 || cr == ring + 1)
            in = near_sector;
        if (in)
            mask[n++] = (uint8_t)c;
    }
    return n;
}

/* Sorting key of a point for the choice of coarse points: its cube, then its distance to the cube's centre. */
typedef struct cell_rank {
    int64_t cube;
    double dist;
    uint32_t point;
} cell_rank;

static int by_cube(const void *a, const void *b)
{
    const cell_rank *x = a, *y = b;
    if (x->cube != y->cube)
        return x->cube < y->cube ? -1 : 1;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static cell_rank rank_point(const det_basis *b, uint32_t i, double cube_mm)
{
    const float *p = &b->pos[3 * (size_t)i];
    int64_t idx[3];
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        double x = p[k] / cube_mm;
        idx[k] = (int64_t)floor(x);
        d2 += (x - idx[k] - 0.5) * (x - idx[k] - 0.5);
    }
    /* |coordinates| < 2^20 cubes: one integer key per cube */
    int64_t key = ((idx[2] + (1 << 20)) << 42) | ((idx[1] + (1 << 20)) << 21) | (idx[0] + (1 << 20));
    return (cell_rank){ key, d2, i };
}

/* Columns of segment s: its coarse points, then the others, each in basis order. */
static int order_columns(psa_segment *g, const det_basis *b, unsigned s, uint32_t *points,
                         const psa_layout_params *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->n_points; i++)
        if (b->segment[i] == (int32_t)s)
            points[n++] = i;
    cell_rank *r = malloc((n ? n : 1) * sizeof *r);
    uint32_t *coarse = malloc((n ? n : 1) * sizeof *coarse);
    unsigned char *is_coarse = calloc(n ? n : 1, 1);
    if (!r || !coarse || !is_coarse || !(g->point = malloc((n ? n : 1) * sizeof *g->point))) {
        free(r);
        free(coarse);
        free(is_coarse);
        return -1;
    }
    for (uint32_t j = 0; j < n; j++)
        r[j] = rank_point(b, points[j], p->coarse_mm);
    qsort(r, n, sizeof *r, by_cube);
    uint32_t nc = 0;
    for (uint32_t j = 0; j < n; j++)
        if (j == 0 || r[j].cube != r[j - 1].cube)
            coarse[nc++] = r[j].point;
    qsort(coarse, nc, sizeof *coarse, by_value);
    uint32_t col = 0, k = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (k < nc && coarse[k] == points[j]) {
            is_coarse[j] = 1;
            k++;
        }
    }
    for (uint32_t j = 0; j < n; j++)
        if (is_coarse[j])
            g->point[col++] = points[j];
    for (uint32_t j = 0; j < n; j++)
        if (!is_coarse[j])
            g->point[col++] = points[j];
    g->n_points = n;
    g->n_coarse = nc;
    g->pad = (n + PSA_COLUMN_ALIGN - 1) / PSA_COLUMN_ALIGN * PSA_COLUMN_ALIGN;
    free(r);
    free(coarse);
    free(is_coarse);
    return 0;
}

static double dist2(const det_basis *b, uint32_t i, uint32_t j)
{
    double d = 0;
    for (int k = 0; k < 3; k++) {
        double x = (double)b->pos[3 * (size_t)i + k] - b->pos[3 * (size_t)j + k];
        d += x * x;
    }
    return d;
}

/* For each coarse column, the columns within radius_mm (two passes: count, fill). */
static int neighbourhoods(psa_segment *g, const det_basis *b, double radius_mm)
{
    double r2 = radius_mm * radius_mm + 1e-6;
    if (!(g->near_first = malloc((g->n_coarse + 1) * sizeof *g->near_first)))
        return -1;
    uint32_t total = 0;
    for (uint32_t c = 0; c < g->n_coarse; c++) {
        g->near_first[c] = total;
        for (uint32_t j = 0; j < g->n_points; j++)
            total += dist2(b, g->point[c], g->point[j]) <= r2;
    }
    g->near_first[g->n_coarse] = total;
    if (!(g->near = malloc((total ? total : 1) * sizeof *g->near)))
        return -1;
    for (uint32_t c = 0, k = 0; c < g->n_coarse; c++)
        for (uint32_t j = 0; j < g->n_points; j++)
            if (dist2(b, g->point[c], g->point[j]) <= r2)
                g->near[k++] = j;
    return 0;
}

/* A column and its z, for the local lists' sweep along z. */
typedef struct z_col {
    float z;
    uint32_t col;
} z_col;

static int by_z(const void *a, const void *b)
{
    const z_col *x = a, *y = b;
    return x->z < y->z ? -1 : x->z > y->z ? 1 : x->col < y->col ? -1 : x->col > y->col;
}

/* Appends to *list (grown as needed) the columns within r2 of column c whose
 * z lies from sorted position `from` on, stepping by `step` while |dz| <= mm. */
static int sweep(const psa_segment *g, const det_basis *b, const z_col *zs, long from, int step, uint32_t c, double mm,
                 double r2, uint32_t **list, size_t *n, size_t *cap)
{
    const float z = b->pos[3 * (size_t)g->point[c] + 2];
    for (long k = from; k >= 0 && k < (long)g->n_points && fabs((double)zs[k].z - z) <= mm; k += step) {
        if (dist2(b, g->point[c], g->point[zs[k].col]) > r2)
            continue;
        if (*n == *cap) {
            size_t want = *cap * 2;
            uint32_t *q = realloc(*list, want * sizeof *q);
            if (!q)
                return -1;
            *list = q;
            *cap = want;
        }
        (*list)[(*n)++] = zs[k].col;
    }
    return 0;
}

/* For every column, the columns within local_mm (ascending): a sweep along z. */
static int local_lists(psa_segment *g, const det_basis *b, double local_mm)
{
    const uint32_t n = g->n_points;
    const double r2 = local_mm * local_mm + 1e-6;
    size_t total = 0, cap = (size_t)n * 16 + 16;
    z_col *zs = malloc((n + 1) * sizeof *zs);
    uint32_t *at = malloc((n + 1) * sizeof *at);
    g->local_first = malloc((n + 1) * sizeof *g->local_first);
    g->local = malloc(cap * sizeof *g->local);
    int rc = zs && at && g->local_first && g->local ? 0 : -1;
    for (uint32_t c = 0; !rc && c < n; c++)
        zs[c] = (z_col){ b->pos[3 * (size_t)g->point[c] + 2], c };
    if (!rc)
        qsort(zs, n, sizeof *zs, by_z);
    for (uint32_t k = 0; !rc && k < n; k++)
        at[zs[k].col] = k;
    for (uint32_t c = 0; !rc && c < n; c++) {
        g->local_first[c] = (uint32_t)total;
        rc = sweep(g, b, zs, (long)at[c], -1, c, local_mm, r2, &g->local, &total, &cap) ||
             sweep(g, b, zs, (long)at[c] + 1, 1, c, local_mm, r2, &g->local, &total, &cap);
        if (!rc)
            qsort(g->local + g->local_first[c], total - g->local_first[c], sizeof *g->local, by_value);
    }
    if (!rc && total > UINT32_MAX)
        rc = -1;
    if (!rc)
        g->local_first[n] = (uint32_t)total;
    free(zs);
    free(at);
    return rc;
}

static void centre(psa_segment *g, const det_basis *b)
{
    double sum[3] = { 0, 0, 0 }, best = INFINITY;
    for (uint32_t j = 0; j < g->n_points; j++)
        for (int k = 0; k < 3; k++)
            sum[k] += b->pos[3 * (size_t)g->point[j] + k];
    for (uint32_t j = 0; j < g->n_points; j++) {
        double d = 0;
        for (int k = 0; k < 3; k++) {
            double x = b->pos[3 * (size_t)g->point[j] + k] - sum[k] / g->n_points;
            d += x * x;
        }
        if (d < best) {
            best = d;
            g->centre = j;
        }
    }
}

/* Fills segment g's block in the arrays asked for (padding stays 0). */
static void fill_block(const psa_layout *l, const psa_segment *g, const det_basis *b)
{
    for (uint32_t col = 0; col < g->n_points; col++) {
        const float *sig = det_basis_point(b, g->point[col]);
        for (uint32_t ch = 0; ch < g->n_mask; ch++)
            for (uint32_t i = 0; i < l->window; i++) {
                float v = sig[(size_t)g->mask[ch] * b->n_samples + l->window_start + i];
                uint32_t k = ch * l->window + i;
                uint64_t at = g->offset + (uint64_t)k * g->pad + col;
                uint64_t pm = g->pm_offset + (uint64_t)col * g->n_mask * l->window + k;
                if (l->f32)
                    l->f32[at] = l->f32pm[pm] = v;
                if (l->i16)
                    l->i16[at] = l->i16pm[pm] = gs_quantise(v);
            }
    }
}

static int check(const det_basis *b, const psa_layout_params *p, char *msg, size_t len)
{
    if (b->n_channels != DET_CHANNELS) {
        snprintf(msg, len, "the basis has %u channels; the PSA needs %d (36 segments and the core)",
                 b->n_channels, DET_CHANNELS);
        return -1;
    }
    if (p->window < 1 || (uint64_t)p->window_start + p->window > b->n_samples) {
        snprintf(msg, len, "the window of samples [%u, %u) does not fit the basis's %u samples",
                 p->window_start, p->window_start + p->window, b->n_samples);
        return -1;
    }
    for (unsigned s = 0; s < DET_SEGMENTS; s++)
        if (p->n_mask[s] < 1 || p->n_mask[s] > PSA_MAX_MASK) {
            snprintf(msg, len, "segment %u: a mask of %u channels (1..%d)", s, p->n_mask[s],
                     PSA_MAX_MASK);
            return -1;
        }
    return 0;
}

int psa_layout_build(psa_layout *l, const det_basis *b, const psa_layout_params *p, char *msg,
                     size_t len)
{
    uint32_t *points = NULL;
    memset(l, 0, sizeof *l);
    if (check(b, p, msg, len))
        return -1;
    l->window_start = p->window_start;
    l->window = p->window;
    l->local_mm = p->local_mm;
    if (!(points = malloc((b->n_points ? b->n_points : 1) * sizeof *points)) ||
        !(l->column = malloc((b->n_points ? b->n_points : 1) * sizeof *l->column)))
        goto nomem;
    memset(l->column, 0xff, b->n_points * sizeof *l->column);
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        psa_segment *g = &l->seg[s];
        g->n_mask = p->n_mask[s];
        memcpy(g->mask, p->mask[s], g->n_mask);
        if (order_columns(g, b, s, points, p) || neighbourhoods(g, b, p->radius_mm) ||
            (p->local_mm > 0 && local_lists(g, b, p->local_mm)))
            goto nomem;
        if (g->n_points == 0) {
            snprintf(msg, len, "segment %u has no basis point", s);
            goto fail;
        }
        centre(g, b);
        for (uint32_t col = 0; col < g->n_points; col++)
            l->column[g->point[col]] = col;
        g->offset = l->values;
        uint32_t k = g->n_mask * l->window;
        l->max_k = k > l->max_k ? k : l->max_k;
        l->values += (uint64_t)k * g->pad;
        g->pm_offset = l->pm_values;
        l->pm_values += (uint64_t)k * g->n_points;
    }
    if ((p->f32 && (!(l->f32 = calloc(l->values, sizeof *l->f32)) ||
                    !(l->f32pm = malloc(l->pm_values * sizeof *l->f32pm)))) ||
        (p->i16 && (!(l->i16 = calloc(l->values, sizeof *l->i16)) ||
                    !(l->i16pm = calloc(l->pm_values + PSA_I16_SLACK, sizeof *l->i16pm)))))
        goto nomem;
    for (unsigned s = 0; s < DET_SEGMENTS; s++)
        fill_block(l, &l->seg[s], b);
    free(points);
    return 0;
nomem:
    snprintf(msg, len, "no memory for the search layout of %u basis points", b->n_points);
fail:
    free(points);
    psa_layout_free(l);
    return -1;
}

void psa_layout_free(psa_layout *l)
{
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        free(l->seg[s].point);
        free(l->seg[s].near_first);
        free(l->seg[s].near);
        free(l->seg[s].local_first);
        free(l->seg[s].local);
    }
    free(l->column);
    free(l->f32);
    free(l->i16);
    free(l->f32pm);
    free(l->i16pm);
    memset(l, 0, sizeof *l);
}
