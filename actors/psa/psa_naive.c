/* psa_naive.c: the reference full grid search, kept to check the fast paths: the basis as the file has it, powf per sample. */
#include "psa_naive.h"

#include <math.h>

/* The layout gives only the point of each column and the mask: the values
 * come from the basis file's point-major arrays, so the check covers the
 * layouts too. */
double psa_naive_fom(const det_basis *b, const psa_layout *l, double p, const psa_batch *batch,
                     const psa_query *q, uint32_t col)
{
    const psa_segment *g = &l->seg[q->segment];
    const float *sig = det_basis_point(b, g->point[col]), *meas = batch->meas + q->meas;
    float pf = (float)p;
    double fom = 0;
    for (uint32_t ch = 0; ch < g->n_mask; ch++) {
        if (!(q->use >> ch & 1u))
            continue;
        const float *s = sig + (size_t)g->mask[ch] * b->n_samples + l->window_start;
        for (uint32_t i = 0; i < l->window; i++)
            fom += powf(fabsf(meas[ch * l->window + i] - s[i]), pf);
    }
    return fom;
}

void psa_naive_search(const det_basis *b, const psa_layout *l, double p, psa_batch *batch)
{
    for (size_t i = 0; i < batch->n; i++) {
        psa_query *q = &batch->q[i];
        const psa_segment *g = &l->seg[q->segment];
        /* local: the start's list (ascending columns, so ties go to the lower column as in the full search) */
        const uint32_t *list = batch->local ? g->local + g->local_first[q->column] : NULL;
        const uint32_t n = batch->local ? g->local_first[q->column + 1] - g->local_first[q->column] : g->n_points;
        double best = INFINITY;
        q->column = UINT32_MAX;
        for (uint32_t j = 0; j < n; j++) {
            const uint32_t col = list ? list[j] : j;
            double f = psa_naive_fom(b, l, p, batch, q, col);
            if (f < best) {
                best = f;
                q->column = col;
            }
        }
        q->fom = (float)best;
    }
}
