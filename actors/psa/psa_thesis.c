/* psa_thesis.c: the thesis's CPU grid search (psa_thesis.h): a point's sum abandoned channel by channel once above the best, int16 through a table of |d|^p, float through powf. */
#include "psa_thesis.h"

#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>

float *psa_thesis_metrics(const gs_pow *pw)
{
    float *m = malloc((2 * PSA_THESIS_SPAN + 1) * sizeof *m);
    if (!m)
        return NULL;
    for (int d = -PSA_THESIS_SPAN; d <= PSA_THESIS_SPAN; d++)
        m[d + PSA_THESIS_SPAN] = gs_acc_pow16(0.0f, d, pw->c, pw->scale);
    return m;
}

/* What one search compares: its values, its point's values (point-major), its channels. */
typedef struct probe {
    const float *meas, *basis;
    const int16_t *meas16, *basis16;
    const float *metrics;
    float p;
    uint32_t n_mask, window, use;
} probe;

/* The sum of column col's used channels, abandoned (returned above best) once it exceeds best. */
static float point_sum(const probe *x, uint32_t col, float best)
{
    size_t k0 = (size_t)col * x->n_mask * x->window;
    float sum = 0.0f;
    for (uint32_t ch = 0; ch < x->n_mask; ch++) {
        if (!(x->use >> ch & 1u))
            continue;
        float part = 0.0f;
        uint32_t k = ch * x->window;
        if (x->metrics) {
            const int16_t *s = x->basis16 + k0 + k, *m = x->meas16 + k;
            for (uint32_t i = 0; i < x->window; i++)
                part += x->metrics[m[i] - s[i] + PSA_THESIS_SPAN];
        } else {
            const float *s = x->basis + k0 + k, *m = x->meas + k;
            for (uint32_t i = 0; i < x->window; i++)
                part += powf(fabsf(m[i] - s[i]), x->p);
        }
        sum += part;
        if (sum > best)
            break;
    }
    return sum;
}

typedef struct found {
    float fom;
    uint32_t col;
} found;

static void consider(const probe *x, uint32_t col, found *f)
{
    float s = point_sum(x, col, f->fom);
    if (s < f->fom) {
        f->fom = s;
        f->col = col;
    }
}

/* Every column of g in the basis file's order: the layout puts the coarse
 * columns first, each part in basis order, so the two are merged. */
static found search_all(const probe *x, const psa_segment *g)
{
    found f = { INFINITY, UINT32_MAX };
    uint32_t a = 0, b = g->n_coarse;
    while (a < g->n_coarse || b < g->n_points) {
        bool coarse = b == g->n_points || (a < g->n_coarse && g->point[a] < g->point[b]);
        consider(x, coarse ? a++ : b++, &f);
    }
    return f;
}

static found search_adaptive(const probe *x, const psa_segment *g)
{
    found f = { INFINITY, UINT32_MAX };
    for (uint32_t col = 0; col < g->n_coarse; col++)
        consider(x, col, &f);
    if (f.col == UINT32_MAX) /* no finite sum: nothing to refine */
        return f;
    uint32_t from = g->near_first[f.col], to = g->near_first[f.col + 1];
    f = (found){ INFINITY, UINT32_MAX };
    for (uint32_t j = from; j < to; j++)
        consider(x, g->near[j], &f);
    return f;
}

/* PSA_LOCAL: the local list of the query's column. */
static found search_local(const probe *x, const psa_segment *g, uint32_t start)
{
    found f = { INFINITY, UINT32_MAX };
    for (uint32_t j = g->local_first[start]; j < g->local_first[start + 1]; j++)
        consider(x, g->local[j], &f);
    return f;
}

void psa_thesis_search(const psa_layout *l, const float *metrics, float p, psa_data data, int threads,
                       psa_batch *b, psa_mode mode)
{
    long n = (long)b->n;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (long i = 0; i < n; i++) {
        psa_query *q = &b->q[i];
        const psa_segment *g = &l->seg[q->segment];
        bool i16 = data == PSA_I16;
        probe x = { .meas = b->meas + q->meas, .basis = l->f32pm ? l->f32pm + g->pm_offset : NULL,
                    .meas16 = i16 ? b->meas16 + q->meas : NULL,
                    .basis16 = i16 ? l->i16pm + g->pm_offset : NULL, .metrics = i16 ? metrics : NULL,
                    .p = p, .n_mask = g->n_mask, .window = l->window, .use = q->use };
        found f = mode == PSA_ADAPTIVE ? search_adaptive(&x, g)
                  : mode == PSA_LOCAL  ? search_local(&x, g, q->column)
                                       : search_all(&x, g);
        q->column = f.col;
        q->fom = f.fom;
    }
}
