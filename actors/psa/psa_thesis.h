/* psa_thesis.h: the CPU grid search of the AGATA GPU-PSA thesis (section 4.1, Listing 2), kept as the baseline its speed ladder started from. */
#ifndef NARWHAL_PSA_THESIS_H
#define NARWHAL_PSA_THESIS_H

#include "gridsearch_fom.h"
#include "psa_search.h"

/*
 * The thesis's algorithm, as its section 4.1 describes it: for every point
 * of the segment, in the basis file's order, the sum over the used channels
 * of |measured - basis|^p, each channel's samples summed in order and the
 * channel's sum added to the point's; the point is abandoned as soon as its
 * sum exceeds the best complete sum so far (exact: every term is >= 0).
 * int16: |d|^p read from a table indexed by the integer difference
 * (metrics[real - basis]); float: libm powf per sample (a float difference
 * indexes no table).  One search per OpenMP iteration.
 */
enum { PSA_THESIS_SPAN = 2 * 32767 }; /* int16 values lie in +-32767 (gs_quantise) */

/* metrics[d + PSA_THESIS_SPAN] for d in +-PSA_THESIS_SPAN: our |d / 4096|^p
 * (gs_acc_pow16's term, rounded to float); NULL without memory. */
float *psa_thesis_metrics(const gs_pow *pw);

/* Answers every query of b (b->meas16 filled first for int16): every point
 * (PSA_FULL), or the coarse points and then the points near the best
 * (PSA_ADAPTIVE), or the local list of each query's column (PSA_LOCAL).
 * Ties go to the point met first, the lower basis point. */
void psa_thesis_search(const psa_layout *l, const float *metrics, float p, psa_data data, int threads,
                       psa_batch *b, psa_mode mode);

#endif
