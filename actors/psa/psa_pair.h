/* psa_pair.h: the joint search of two touching hits of an event on the coarse grid, on the CPU (kernels/psa_pair_fom.h's steps): the neighbour passes' first step. */
#ifndef NARWHAL_PSA_PAIR_H
#define NARWHAL_PSA_PAIR_H

#include "psa_event.h"
#include "psa_pair_fom.h"

/* The event's first pair of hits r < q whose segments touch (either in the
 * other's mask): 1 with *r and *q set, else 0. */
int psa_pair_of(const psa_event *ev, const psa_layout *l, int *r, int *q);

/* Segment g's sparse coarse points (kernels/psa_pair_fom.h): the coarse
 * indices, in order, of the coarse points nearest the centres of the
 * PP_SPARSE_MM cells they fill (ties: the lower index), into out (n_coarse
 * at most); their count, or -1 without memory.  The GPU block takes them
 * from here too. */
int psa_pair_sparse(const psa_segment *g, const det_basis *b, uint32_t *out);

/* Hits r and q searched jointly (kernels/psa_pair_fom.h): each takes its point
 * of the best pair, and ev->resid (every hit subtracted) follows.  0, or -1
 * without memory. */
int psa_pair_search(psa_event *ev, int r, int q, const det_basis *b, const psa_layout *l, const gs_pow *pw);

#endif
