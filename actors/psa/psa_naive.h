/* psa_naive.h: the reference grid search: a straight loop over the basis file's own arrays with libm powf, one thread. */
#ifndef NARWHAL_PSA_NAIVE_H
#define NARWHAL_PSA_NAIVE_H

#include "basis.h"
#include "psa_search.h"

/* The exact FoM (powf per sample, summed in double) of column col for query q. */
double psa_naive_fom(const det_basis *b, const psa_layout *l, double p, const psa_batch *batch,
                     const psa_query *q, uint32_t col);
/* Answers every query of batch by the full search (a local batch: over each query's local list, psa_search.h). */
void psa_naive_search(const det_basis *b, const psa_layout *l, double p, psa_batch *batch);

#endif
