/* psa_cpu.h: the grid search on the CPU: OpenMP over searches, SIMD over basis points (AVX-512, AVX2 or portable C, chosen at run time), exact pruning; or the thesis's algorithm (psa_thesis.h). */
#ifndef NARWHAL_PSA_CPU_H
#define NARWHAL_PSA_CPU_H

#include "gridsearch_fom.h"
#include "psa_search.h"

typedef enum psa_simd { PSA_SIMD_AUTO, PSA_SIMD_SCALAR, PSA_SIMD_AVX2, PSA_SIMD_AVX512, PSA_SIMD_THESIS } psa_simd;

typedef struct psa_cpu {
    const psa_layout *layout;
    const gs_pow *pw;
    psa_data data;
    psa_simd simd;   /* the variant in use */
    int threads;     /* OpenMP threads (0: OpenMP's default) */
    /* The full search prunes (AVX-512 and portable kernels): after the first
     * prune_step columns, each step of as many columns gets the lower bound
     * of gridsearch_fom.h first and only the columns whose bound does not
     * exceed the best FoM so far get their FoM.  Same answers, same bits.
     * prune_step: PSA_PRUNE_STEP, or fewer (a small basis's tests). */
    int prune;
    uint32_t prune_step;
    float rotated[64]; /* scale[] of the exponents GS_EXP_ZERO..GS_EXP_TOP, at index exponent % 64 */
    float rotated_lb[64]; /* the least lb[] of each of those exponents' buckets, the same way */
    float *metrics;  /* the thesis's table (psa_thesis_metrics), with PSA_SIMD_THESIS */
} psa_cpu;

enum { PSA_PRUNE_STEP = 128 }; /* at most; the GPU tile's columns per step (kernels/gridsearch.cu) */

/* want: PSA_SIMD_AUTO picks the widest the processor has; a variant it lacks
 * falls back to the next narrower; PSA_SIMD_THESIS is the thesis's algorithm
 * (its table allocated here: psa_cpu_search fails without it).  Pruning is on.
 * The layout must hold the data path's values. */
void psa_cpu_init(psa_cpu *c, const psa_layout *l, const gs_pow *pw, psa_data data, psa_simd want,
                  int threads);
void psa_cpu_free(psa_cpu *c);
const char *psa_simd_name(psa_simd s);

/* Answers every query of b (b->meas16 filled first for the int16 path) in
 * mode (PSA_LOCAL: around each query's column, psa_search.h).  0, or -1
 * when memory for the plan runs out or PSA_LOCAL finds no local lists
 * (nothing answered). */
int psa_cpu_search(const psa_cpu *c, psa_batch *b, psa_mode mode);

#endif
