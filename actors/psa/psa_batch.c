/* psa_batch.c: growing arrays of searches and their measured values. */
#include <stdint.h>
#include <stdlib.h>

#include "gridsearch_fom.h"
#include "psa_search.h"

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

float *psa_batch_add(psa_batch *b, const psa_layout *l, unsigned segment, unsigned use)
{
    size_t k = (size_t)l->seg[segment].n_mask * l->window;
    if (b->n_meas + k > UINT32_MAX) /* a query's offset is 32-bit (the GPU's layout): no room, as for memory */
        return NULL;
    if (grow((void **)&b->q, &b->cap, b->n + 1, sizeof *b->q) ||
        grow((void **)&b->meas, &b->cap_meas, b->n_meas + k, sizeof *b->meas))
        return NULL;
    b->q[b->n++] = (psa_query){ .segment = (uint16_t)segment, .use = (uint16_t)use,
                                .meas = (uint32_t)b->n_meas, .column = UINT32_MAX };
    float *m = b->meas + b->n_meas;
    b->n_meas += k;
    return m;
}

int psa_batch_quantise(psa_batch *b)
{
    if (grow((void **)&b->meas16, &b->cap_meas16, b->n_meas, sizeof *b->meas16))
        return -1;
    const size_t n = b->n_meas, each = 65536;
    const long pieces = (long)((n + each - 1) / each);
#pragma omp parallel for schedule(static) if (pieces > 1)
    for (long k = 0; k < pieces; k++) {
        const size_t at = (size_t)k * each;
        gs_quantise_run(b->meas + at, b->meas16 + at, n - at < each ? n - at : each);
    }
    return 0;
}

void psa_batch_clear(psa_batch *b)
{
    b->n = 0;
    b->n_meas = 0;
    b->local = 0;
}

void psa_batch_free(psa_batch *b)
{
    free(b->q);
    free(b->meas);
    free(b->meas16);
    *b = (psa_batch){ 0 };
}
