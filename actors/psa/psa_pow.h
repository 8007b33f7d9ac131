/* psa_pow.h: the tables of the fast |d|^p (kernels/gridsearch_fom.h) for a given p, and their measured error. */
#ifndef NARWHAL_PSA_POW_H
#define NARWHAL_PSA_POW_H

#include "gridsearch_fom.h"

/* Fills the polynomial and exponent table of *pw for exponent p in
 * (0, PSA_POW_MAX].  *max_error, when not NULL, receives the largest relative
 * error of the mantissa polynomial over all 2^23 mantissas, measured against
 * libm's pow in double.  0, or -1 when p is out of range. */
#define PSA_POW_MAX 8.0
int psa_pow_fit(double p, gs_pow *pw, double *max_error);

#endif
