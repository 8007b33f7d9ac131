/* psa_pow.c: fits the mantissa polynomial of the fast |d|^p, fills its exponent table and its lower-bound table, measures the error. */
#include "psa_pow.h"

#include <math.h>
#include <stdint.h>

enum { N_COEF = GS_POW_DEGREE + 1 };

/* Solves a x = b in place (Gauss-Jordan with partial pivoting); a is N_COEF x N_COEF. */
static void solve(double a[N_COEF][N_COEF], double b[N_COEF])
{
    for (int i = 0; i < N_COEF; i++) {
        int piv = i;
        for (int r = i + 1; r < N_COEF; r++)
            if (fabs(a[r][i]) > fabs(a[piv][i]))
                piv = r;
        for (int c = 0; c < N_COEF; c++) {
            double t = a[i][c];
            a[i][c] = a[piv][c];
            a[piv][c] = t;
        }
        double t = b[i];
        b[i] = b[piv];
        b[piv] = t;
        for (int r = 0; r < N_COEF; r++) {
            if (r == i)
                continue;
            double f = a[r][i] / a[i][i];
            for (int c = 0; c < N_COEF; c++)
                a[r][c] -= f * a[i][c];
            b[r] -= f * b[i];
        }
    }
    for (int i = 0; i < N_COEF; i++)
        b[i] /= a[i][i];
}

/* m^p = (1.5 + t)^p, t in [-0.5, 0.5): for integer p up to the degree the
 * binomial expansion (exact in float); otherwise the interpolant at the
 * Chebyshev nodes, within a small factor of the best polynomial. */
static void fit(double p, float c[N_COEF])
{
    double coef[N_COEF];
    if (p == floor(p) && p <= GS_POW_DEGREE) {
        int n = (int)p;
        double binom = 1;
        for (int k = 0; k < N_COEF; k++) {
            coef[k] = k <= n ? binom * pow(1.5, n - k) : 0;
            binom = binom * (n - k) / (k + 1);
        }
    } else {
        double a[N_COEF][N_COEF];
        for (int k = 0; k < N_COEF; k++) {
            double t = 0.5 * cos(3.14159265358979323846 * (k + 0.5) / N_COEF), x = 1;
            for (int j = 0; j < N_COEF; j++, x *= t)
                a[k][j] = x;
            coef[k] = pow(1.5 + t, p);
        }
        solve(a, coef);
    }
    for (int k = 0; k < N_COEF; k++)
        c[k] = (float)coef[k];
}

static double mantissa_error(const gs_pow *pw)
{
    double worst = 0;
    for (uint32_t m = 0; m < (1u << 23); m++) {
        uint32_t bits = 0x3f800000u | m;
        double exact = pow((double)gs_float(bits), pw->p);
        double err = fabs(gs_pow_mantissa(pw->c, bits) / exact - 1);
        worst = err > worst ? err : worst;
    }
    return worst;
}

/* least[j]: the least polynomial value over the mantissas of bucket j (their
 * top 4 bits: gs_pow's least[], the byte table's buckets), as
 * gs_pow_mantissa computes it: every one of the 2^23 is tried, so the bound
 * holds for the rounded polynomial, not only for m^p.  The processor's fused
 * multiply-add when it has one (the same roundings as libm's fmaf, 20 times
 * faster). */
enum { LEAST_BITS = 4 };
#define LEAST_POLY(name, attr) \
    attr static void name(const gs_pow *pw, float least[1 << LEAST_BITS]) \
    { \
        for (uint32_t m = 0; m < (1u << 23); m++) { \
            uint32_t j = m >> (23 - LEAST_BITS); \
            float y = gs_pow_mantissa(pw->c, 0x3f800000u | m); \
            least[j] = (m & ((1u << (23 - LEAST_BITS)) - 1)) == 0 || y < least[j] ? y : least[j]; \
        } \
    }
LEAST_POLY(least_poly_fma, __attribute__((target("fma"))))
LEAST_POLY(least_poly, )
#undef LEAST_POLY

/* lb[e, j] = least[j] x scale[e] rounded down: at most every term of the bucket
 * (gridsearch_fom.h).  -1 when the polynomial goes negative (no such fit for p > 0). */
static int fill_bounds(gs_pow *pw)
{
    _Static_assert(sizeof pw->least / sizeof *pw->least == 1 << LEAST_BITS && (int)LEAST_BITS >= (int)GS_LB_BITS,
                   "gs_pow's least[] holds the finer buckets");
    float least[1 << GS_LB_BITS];
    __builtin_cpu_init();
    if (__builtin_cpu_supports("fma"))
        least_poly_fma(pw, pw->least);
    else
        least_poly(pw, pw->least);
    for (int j = 0; j < (1 << GS_LB_BITS); j++) { /* a coarse bucket's least: the least of its fine ones */
        least[j] = pw->least[j << (LEAST_BITS - GS_LB_BITS)];
        for (int k = 1; k < 1 << (LEAST_BITS - GS_LB_BITS); k++)
            least[j] = fminf(least[j], pw->least[j << (LEAST_BITS - GS_LB_BITS) | k]);
    }
    for (int e = 0; e < GS_EXP_TABLE; e++)
        for (int j = 0; j < (1 << GS_LB_BITS); j++) {
            if (least[j] < 0)
                return -1;
            double exact = (double)least[j] * pw->scale[e]; /* exact: 24 x 24 bits */
            float down = (float)exact;
            pw->lb[e << GS_LB_BITS | j] = (double)down > exact ? nextafterf(down, 0.0f) : down;
        }
    return 0;
}

int psa_pow_fit(double p, gs_pow *pw, double *max_error)
{
    if (!(p > 0 && p <= PSA_POW_MAX))
        return -1;
    pw->p = (float)p;
    fit(p, pw->c);
    for (int e = 0; e < GS_EXP_TABLE; e++) {
        int ee = e > GS_EXP_TOP ? GS_EXP_TOP : e;
        pw->scale[e] = e <= GS_EXP_ZERO ? 0.0f : (float)exp2(p * (ee - 127));
    }
    if (fill_bounds(pw))
        return -1;
    if (max_error)
        *max_error = mantissa_error(pw);
    return 0;
}
