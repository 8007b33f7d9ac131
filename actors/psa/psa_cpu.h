/* psa_cpu.h: the grid search on the CPU: OpenMP over searches, SIMD over basis points (AVX-512, AVX2 or portable C, chosen at run time). */
#ifndef NARWHAL_PSA_CPU_H
#define NARWHAL_PSA_CPU_H

#include "gridsearch_fom.h"
#include "psa_search.h"

typedef enum psa_simd { PSA_SIMD_AUTO, PSA_SIMD_SCALAR, PSA_SIMD_AVX2, PSA_SIMD_AVX512 } psa_simd;

typedef struct psa_cpu {
    const psa_layout *layout;
    const gs_pow *pw;
    psa_data data;
    psa_simd simd;   /* the variant in use */
    int threads;     /* OpenMP threads (0: OpenMP's default) */
    float rotated[64]; /* scale[] of the exponents GS_EXP_ZERO..GS_EXP_TOP, at index exponent % 64 */
} psa_cpu;

/* want: PSA_SIMD_AUTO picks the widest the processor has; a variant it lacks
 * falls back to the next narrower.  The layout must hold the data path's values. */
void psa_cpu_init(psa_cpu *c, const psa_layout *l, const gs_pow *pw, psa_data data, psa_simd want,
                  int threads);
const char *psa_simd_name(psa_simd s);

/* Answers every query of b (b->meas16 filled first for the int16 path).
 * 0, or -1 when memory for the plan runs out (nothing answered). */
int psa_cpu_search(const psa_cpu *c, psa_batch *b, psa_mode mode);

#endif
