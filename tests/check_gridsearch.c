/* check_gridsearch.c: Check suite for the grid search's lower bounds (kernels/gridsearch_fom.h): the fixed-point and byte tables, Mitchell's logarithm and the geometric mean of its groups the GPU prunes with, that their sums never exceed a point's own FoM's threshold, and the int16 quantiser. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gridsearch_fom.h"
#include "psa/psa_pow.h"
#include "testkit.h"

enum { N_MASK = 8, WINDOW = 40, K = N_MASK * WINDOW };

/* The s of gs_lb_fixed's factor 2^s (1 + 2^-12). */
static int factor_exponent(float factor)
{
    int s;
    double m = frexp(factor / (1.0 + 1.0 / 4096), &s);
    ck_assert_msg(m == 0.5, "factor %.9g is not 2^s (1 + 2^-12)", factor);
    return s - 1;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Values as the searches see them: basis signals in [0, 1), measured = a nearby signal plus noise of `noise`. */
static void make_pair(float *meas, float *basis, double spread, double noise)
{
    for (int k = 0; k < K; k++) {
        basis[k] = (float)uniform();
        meas[k] = (float)(basis[k] + spread * (uniform() - 0.5) + noise * (uniform() + uniform() - 1));
    }
}

/* The two integer tables of GS_PRUNE_FINE and GS_PRUNE_BYTE: how each is
 * filled (returning its threshold's factor 2^s (1 + 2^-12)) and read. */
typedef struct table_kind {
    const char *name;
    float (*fill)(const gs_pow *pw, void *table);
    uint32_t (*entry)(const void *table, float d);
} table_kind;

static float fill_fixed(const gs_pow *pw, void *table) { return gs_lb_fixed(pw->lb, table); }
static uint32_t fixed_entry(const void *table, float d) { return ((const uint16_t *)table)[gs_lb_index(d)]; }
static float fill_byte(const gs_pow *pw, void *table) { return gs_lb_byte(pw, table); }
static uint32_t byte_entry(const void *table, float d) { return ((const uint8_t *)table)[gs_byte_index(d)]; }
static const table_kind fixed_kind = { "fixed-point", fill_fixed, fixed_entry };
static const table_kind byte_kind = { "byte", fill_byte, byte_entry };
static uint16_t table_room[(int)GS_BYTE_TABLE > (int)GS_LB_TABLE ? (int)GS_BYTE_TABLE : (int)GS_LB_TABLE]; /* either table */

/* A table's bound of the point, summed exactly over the used channels, as search_tiles_pruned sums it. */
static uint64_t table_bound(const float *meas, const float *basis, uint32_t use, const table_kind *k,
                            const void *table)
{
    uint64_t sum = 0;
    for (int ch = 0; ch < N_MASK; ch++)
        for (int i = 0; use >> ch & 1u && i < WINDOW; i++)
            sum += k->entry(table, meas[ch * WINDOW + i] - basis[ch * WINDOW + i]);
    return sum;
}

/* The pruning rule: a point is dropped when its bound exceeds floor(U x factor).
 * Against its own FoM (U = FoM) it must never be dropped, whatever the
 * differences: noise-sized, large, beyond the table's saturation, tiny. */
static void keeps_its_own_fom(const table_kind *k)
{
    static const struct { double p, spread, noise; } cases[] = {
        { 0.3, 0.0, 0.004 }, { 0.3, 0.2, 0.004 }, { 0.3, 600.0, 0.0 }, { 0.3, 1e-9, 0.0 },
        { 2.0, 0.05, 0.004 }, { 2.0, 40.0, 0.0 }, { 1.0, 0.1, 0.01 },
    };
    static float meas[K], basis[K];
    static gs_pow pw;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ck_assert_int_eq(psa_pow_fit(cases[c].p, &pw, NULL), 0);
        const float factor = k->fill(&pw, table_room);
        for (int n = 0; n < 400; n++) {
            make_pair(meas, basis, cases[c].spread, cases[c].noise);
            uint32_t use = (uint32_t)(uniform() * 255) + 1;
            float fom = gs_fom_point(meas, basis, 1, N_MASK, WINDOW, use, pw.c, pw.scale);
            float x = fom * factor;
            uint64_t limit = x >= 4294967040.0f ? UINT32_MAX : (uint32_t)x;
            uint64_t bound = table_bound(meas, basis, use, k, table_room);
            ck_assert_msg(bound <= limit, "%s, p %g, case %zu, pair %d: bound %llu > %llu", k->name, cases[c].p, c, n,
                          (unsigned long long)bound, (unsigned long long)limit);
        }
    }
}

/* At p = 0.3 and noise-sized differences the bound is within 5 % of the FoM. */
static void is_tight(const table_kind *k)
{
    static float meas[K], basis[K];
    static gs_pow pw;
    ck_assert_int_eq(psa_pow_fit(0.3, &pw, NULL), 0);
    const float factor = k->fill(&pw, table_room);
    double worst = 1;
    for (int n = 0; n < 200; n++) {
        make_pair(meas, basis, 0.0, 0.004);
        float fom = gs_fom_point(meas, basis, 1, N_MASK, WINDOW, 0xffu, pw.c, pw.scale);
        double ratio = table_bound(meas, basis, 0xffu, k, table_room) / (fom * (double)factor);
        worst = ratio < worst ? ratio : worst;
    }
    ck_assert_msg(worst > 0.95, "the %s bound fell to %.4f of the FoM", k->name, worst);
}

/* Every entry is floor(lb x 2^s), saturated, and s is the largest that keeps |d| < 4 unsaturated. */
START_TEST(test_fixed_table)
{
    static const double exponents[] = { 0.3, 1.0, 2.0 };
    for (size_t e = 0; e < sizeof exponents / sizeof *exponents; e++) {
        static gs_pow pw;
        static uint16_t lbi[GS_LB_TABLE];
        ck_assert_int_eq(psa_pow_fit(exponents[e], &pw, NULL), 0);
        int s = factor_exponent(gs_lb_fixed(pw.lb, lbi));
        const double ref = pw.lb[GS_LB_FIXED_REF << GS_LB_BITS | ((1 << GS_LB_BITS) - 1)];
        ck_assert(ldexp(ref, s) <= GS_LB_FIXED_MAX);
        ck_assert(ldexp(ref, s + 1) > GS_LB_FIXED_MAX);
        for (int i = 0; i < GS_LB_TABLE; i++) {
            double v = floor(ldexp(pw.lb[i], s));
            ck_assert_uint_eq(lbi[i], v > GS_LB_FIXED_MAX ? GS_LB_FIXED_MAX : (uint16_t)v);
        }
    }
}
END_TEST

/* The fixed-point table's pruning rule never drops a point against its own FoM. */
START_TEST(test_fixed_bound_keeps_its_own_fom) { keeps_its_own_fom(&fixed_kind); }
END_TEST

/* At p = 0.3 and noise-sized differences the bound is within a few per cent of
 * the FoM (what makes pruning pay: 0.087 % of a segment's points survive it). */
START_TEST(test_fixed_bound_is_tight) { is_tight(&fixed_kind); }
END_TEST

/* GS_PRUNE_LOG's sum of a pair as search_tiles_pruned makes it: per used
 * channel from 0 in sample order, the parts added in mask order, in float. */
static float log_bound(const float *meas, const float *basis, uint32_t use, const gs_log_bound *l)
{
    float total = 0.0f;
    for (int ch = 0; ch < N_MASK; ch++) {
        float part = 0.0f;
        for (int i = 0; i < WINDOW; i++)
            part += gs_log_term(meas[ch * WINDOW + i] - basis[ch * WINDOW + i], l->mul, l->add);
        if (use >> ch & 1u)
            total += part;
    }
    return total;
}

/* One value's bound, c x gs_log_term(d), is at most the FoM's own term for
 * that d (gs_acc_pow, within the rule's margins: 2^-12 relative, `zero`
 * absolute) over the float line: zero, subnormals, 2,048 values of each
 * binade up to |d| = 128 (two values under GS_LOG_VALUE_MAX), both signs. */
START_TEST(test_log_term_is_below_the_term)
{
    static const double exponents[] = { 0.05, 0.3, 1.0, 1.9 };
    static gs_pow pw;
    for (size_t e = 0; e < sizeof exponents / sizeof *exponents; e++) {
        gs_log_bound l;
        ck_assert_int_eq(psa_pow_fit(exponents[e], &pw, NULL), 0);
        ck_assert_int_eq(gs_log_bound_make(&l, pw.c, pw.p, 1.5f), 0);
        const double c = 0.942084; /* the least of 2^f / (1 + f) */
        ck_assert(1.0 / l.inv_c <= c);
        for (uint32_t bits = 0; bits < 0x43000000u; bits += 1u << 12) { /* |d| < 128: two values under 64 */
            for (int sign = 0; sign < 2; sign++) {
                const float d = gs_float(bits | (uint32_t)sign << 31);
                const double bound = gs_log_term(d, l.mul, l.add) / (double)l.inv_c;
                const double term = gs_acc_pow(0.0f, d, pw.c, pw.scale);
                if (!(bound <= term * (1 + 1.0 / 4096) + l.zero))
                    ck_abort_msg("p %g, d %a: bound %.9g above the term %.9g", exponents[e], d, bound, term);
            }
        }
    }
}
END_TEST

/* The two logarithmic bounds (GS_PRUNE_LOG, GS_PRUNE_GEO): how each makes
 * its constants and sums a pair. */
typedef struct log_kind {
    int (*make)(gs_log_bound *l, const float *c, float p, float basis_max);
    float (*sum)(const float *meas, const float *basis, uint32_t use, const gs_log_bound *l);
} log_kind;

/* The pruning rule of kind k, against a point's own FoM: never dropped, for
 * noise-sized, large (values up to 20), tiny and exactly zero differences. */
static void log_rule_keeps_its_own_fom(const log_kind *k)
{
    static const struct { double p, spread, noise; } cases[] = {
        { 0.3, 0.0, 0.004 }, { 0.3, 0.2, 0.004 }, { 0.3, 40.0, 0.0 }, { 0.3, 1e-9, 0.0 }, { 0.3, 0.0, 0.0 },
        { 1.9, 0.05, 0.004 }, { 1.9, 40.0, 0.0 }, { 1.0, 0.1, 0.01 }, { 0.05, 0.0, 0.004 },
    };
    static float meas[K], basis[K];
    static gs_pow pw;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gs_log_bound l;
        ck_assert_int_eq(psa_pow_fit(cases[c].p, &pw, NULL), 0);
        ck_assert_int_eq(k->make(&l, pw.c, pw.p, 1.0f), 0);
        for (int n = 0; n < 400; n++) {
            make_pair(meas, basis, cases[c].spread, cases[c].noise);
            uint32_t use = (uint32_t)(uniform() * 255) + 1;
            float fom = gs_fom_point(meas, basis, 1, N_MASK, WINDOW, use, pw.c, pw.scale);
            float limit = gs_log_limit(&l, fom, K);
            float bound = k->sum(meas, basis, use, &l);
            ck_assert_msg(bound <= limit, "p %g, case %zu, pair %d: bound %.9g > %.9g", cases[c].p, c, n, bound,
                          limit);
        }
    }
}

/* The worst ratio of kind k's sum to the FoM's threshold over 200 pairs of
 * noise-sized differences at p = 0.3; l gets the constants. */
static double log_rule_worst_ratio(const log_kind *k, gs_log_bound *l)
{
    static float meas[K], basis[K];
    static gs_pow pw;
    ck_assert_int_eq(psa_pow_fit(0.3, &pw, NULL), 0);
    ck_assert_int_eq(k->make(l, pw.c, pw.p, 1.0f), 0);
    double worst = 1;
    for (int n = 0; n < 200; n++) {
        make_pair(meas, basis, 0.0, 0.004);
        float fom = gs_fom_point(meas, basis, 1, N_MASK, WINDOW, 0xffu, pw.c, pw.scale);
        double ratio = k->sum(meas, basis, 0xffu, l) / gs_log_limit(l, fom, K);
        worst = ratio < worst ? ratio : worst;
    }
    return worst;
}

static const log_kind log_kind_log = { gs_log_bound_make, log_bound };

/* The pruning rule with Mitchell's logarithm, against a point's own FoM: never dropped. */
START_TEST(test_log_bound_keeps_its_own_fom) { log_rule_keeps_its_own_fom(&log_kind_log); }
END_TEST

/* At p = 0.3 and noise-sized differences the bound is within about 7 % of the
 * FoM (bench-psa's events: 0.975 of it on average); its constants are p's. */
START_TEST(test_log_bound_is_tight)
{
    gs_log_bound l;
    const double worst = log_rule_worst_ratio(&log_kind_log, &l);
    ck_assert_msg(worst > 0.93, "the bound fell to %.4f of the FoM's threshold", worst);
    ck_assert_uint_eq(l.mul, (uint32_t)floor(0.3f / 2.0 * 65536.0));
    ck_assert_uint_eq(l.add, (uint32_t)floor(127 * 8388608.0 * (1 - 0.3f / 2.0)));
    ck_assert_float_eq(gs_log_limit(&l, INFINITY, K), INFINITY);
}
END_TEST

/* Where the bound does not hold it is refused: p of 2 or more, a basis value of 64 or more. */
START_TEST(test_log_bound_refused)
{
    static gs_pow pw;
    gs_log_bound l;
    ck_assert_int_eq(psa_pow_fit(2.0, &pw, NULL), 0);
    ck_assert_int_eq(gs_log_bound_make(&l, pw.c, pw.p, 1.0f), -1);
    ck_assert_int_eq(psa_pow_fit(0.3, &pw, NULL), 0);
    ck_assert_int_eq(gs_log_bound_make(&l, pw.c, pw.p, GS_LOG_VALUE_MAX), -1);
    ck_assert_int_eq(gs_log_bound_make(&l, pw.c, pw.p, NAN), -1);
    ck_assert_int_eq(gs_log_bound_make(&l, pw.c, pw.p, 63.0f), 0);
    float c[GS_POW_DEGREE + 1];
    memcpy(c, pw.c, sizeof c);
    c[0] *= 0.999f; /* a polynomial 0.1 % under m^p: the margins do not cover it */
    ck_assert_int_eq(gs_log_bound_make(&l, c, pw.p, 1.0f), -1);
}
END_TEST

/* GS_PRUNE_GEO's sum of a pair as search_tiles_pruned makes it: per used
 * channel, groups of GS_GEO_GROUP samples in order, each group's F added
 * to the total as it ends, in float. */
static float geo_bound(const float *meas, const float *basis, uint32_t use, const gs_log_bound *l)
{
    float total = 0.0f;
    for (int ch = 0; ch < N_MASK; ch++)
        for (int i0 = 0; use >> ch & 1u && i0 < WINDOW; i0 += GS_GEO_GROUP) {
            uint32_t sum = 0;
            for (int i = i0; i < i0 + GS_GEO_GROUP; i++)
                sum += gs_geo_bits(meas[ch * WINDOW + i] - basis[ch * WINDOW + i]);
            total += gs_geo_group(sum, l->mul, l->add);
        }
    return total;
}

/* One group's bound, F / inv_c, is at most its values' FoM terms (gs_acc_pow,
 * within the rule's margins: 2^-12 relative, `zero` absolute a value) for
 * groups mixing values across the float line (zero, subnormals, every binade
 * up to |d| = 64, both signs), and within 10 % of them for four values of
 * one size (where the means agree: Mitchell's errors alone); below them too when
 * the group's sum of B wraps. */
START_TEST(test_geo_group_is_below_its_terms)
{
    static const double exponents[] = { 0.05, 0.3, 1.0, 1.9 };
    static gs_pow pw;
    for (size_t e = 0; e < sizeof exponents / sizeof *exponents; e++) {
        gs_log_bound l;
        ck_assert_int_eq(psa_pow_fit(exponents[e], &pw, NULL), 0);
        ck_assert_int_eq(gs_geo_bound_make(&l, pw.c, pw.p, 1.5f), 0);
        ck_assert_uint_eq(l.mul, (uint32_t)floor(pw.p / 2.0 / GS_GEO_GROUP * 4294967296.0));
        for (int n = 0; n < 200000; n++) {
            float d[GS_GEO_GROUP];
            double terms = 0;
            uint32_t sum = 0;
            for (int i = 0; i < GS_GEO_GROUP; i++) {
                const uint32_t bits = (uint32_t)(uniform() * 0x42800000u); /* |d| < 64 */
                d[i] = gs_float(n % 7 == i ? 0u : bits | (uniform() < 0.5 ? 0x80000000u : 0u));
                terms += gs_acc_pow(0.0f, d[i], pw.c, pw.scale);
                sum += gs_geo_bits(d[i]);
            }
            const double bound = gs_geo_group(sum, l.mul, l.add) / (double)l.inv_c;
            if (!(bound <= terms * (1 + 1.0 / 4096) + GS_GEO_GROUP * l.zero))
                ck_abort_msg("p %g, d %a %a %a %a: bound %.9g above the terms %.9g", exponents[e], d[0], d[1], d[2],
                             d[3], bound, terms);
        }
        const float same = 0.0123f;
        uint32_t sum = 0;
        for (int i = 0; i < GS_GEO_GROUP; i++)
            sum += gs_geo_bits(i % 2 ? same : -same);
        const double ratio = gs_geo_group(sum, l.mul, l.add) / (double)l.inv_c /
                             (GS_GEO_GROUP * gs_acc_pow(0.0f, same, pw.c, pw.scale));
        ck_assert_msg(ratio > 0.9 && ratio <= 1, "p %g: equal values' bound %.4f of their terms", exponents[e], ratio);
        const float big = 40.0f; /* a group of equal differences whose B sum past 2^32: S wraps, the bound stays below */
        ck_assert((uint64_t)GS_GEO_GROUP * gs_geo_bits(big) > UINT32_MAX);
        const double wrapped = gs_geo_group(GS_GEO_GROUP * gs_geo_bits(big), l.mul, l.add) / (double)l.inv_c,
                     big_terms = GS_GEO_GROUP * gs_acc_pow(0.0f, big, pw.c, pw.scale);
        ck_assert_msg(wrapped <= big_terms, "p %g: a wrapped sum's bound %.9g above %.9g", exponents[e], wrapped, big_terms);
    }
}
END_TEST

static const log_kind log_kind_geo = { gs_geo_bound_make, geo_bound };

/* The pruning rule with the geometric mean, against a point's own FoM: never dropped. */
START_TEST(test_geo_bound_keeps_its_own_fom) { log_rule_keeps_its_own_fom(&log_kind_geo); }
END_TEST

/* At p = 0.3 and noise-sized differences the geometric-mean bound is within
 * about 12 % of the FoM's threshold (bench-psa's events: about 0.93 of the
 * FoM near the best point); for p of 2 or more it is refused. */
START_TEST(test_geo_bound_is_tight)
{
    gs_log_bound l;
    static gs_pow pw;
    const double worst = log_rule_worst_ratio(&log_kind_geo, &l);
    ck_assert_msg(worst > 0.85, "the bound fell to %.4f of the FoM's threshold", worst);
    ck_assert_int_eq(psa_pow_fit(2.0, &pw, NULL), 0);
    ck_assert_int_eq(gs_geo_bound_make(&l, pw.c, pw.p, 1.0f), -1);
}
END_TEST

/* Every byte entry, over 2^-s, is at most every FoM term of its bucket
 * (both signs, every binade, 64 values of each bucket), and |d| just under
 * 1 is not saturated while 2 is. */
START_TEST(test_byte_table_is_below_every_term)
{
    static const double exponents[] = { 0.3, 1.0, 2.0 };
    static gs_pow pw;
    static uint8_t table[GS_BYTE_TABLE];
    for (size_t e = 0; e < sizeof exponents / sizeof *exponents; e++) {
        ck_assert_int_eq(psa_pow_fit(exponents[e], &pw, NULL), 0);
        const double unit = ldexp(1.0, -factor_exponent(gs_lb_byte(&pw, table)));
        for (uint32_t bits = 0; bits < 0x7f800000u; bits += 1u << (GS_BYTE_SHIFT - 6))
            for (int sign = 0; sign < 2; sign++) {
                const float d = gs_float(bits | (uint32_t)sign << 31);
                const double bound = table[gs_byte_index(d)] * unit, term = gs_acc_pow(0.0f, d, pw.c, pw.scale);
                if (!(bound <= term))
                    ck_abort_msg("p %g, d %a: entry %.9g above the term %.9g", exponents[e], d, bound, term);
            }
        ck_assert_uint_lt(table[gs_byte_index(0.999f)], GS_BYTE_MAX);
        ck_assert_uint_eq(table[gs_byte_index(-2.0f)], GS_BYTE_MAX);
        ck_assert_uint_eq(table[gs_byte_index(0.3f)], table[gs_byte_index(-0.3f)]);
    }
}
END_TEST

/* The pruning rule with the byte table, against a point's own FoM: never dropped. */
START_TEST(test_byte_bound_keeps_its_own_fom) { keeps_its_own_fom(&byte_kind); }
END_TEST

/* At p = 0.3 and noise-sized differences the byte bound is within 5 % of the FoM. */
START_TEST(test_byte_bound_is_tight) { is_tight(&byte_kind); }
END_TEST

/* The eight-at-a-time quantiser gives gs_quantise's int16 for every value:
 * the ends of the range and of the rounding, signed zeros, subnormals,
 * infinities and NaNs, and random bit patterns and samples, at every offset
 * of its eight-value steps and with a scalar tail. */
START_TEST(test_quantise_run_is_gs_quantise)
{
    enum { N = 1 << 20 };
    float *v = malloc(N * sizeof *v);
    int16_t *got = malloc((N + 1) * sizeof *got);
    ck_assert(v && got);
    const float edge[] = { 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, INFINITY, -INFINITY, NAN, -NAN,
                           7.99987793f, 7.99993896f, 8.0f, 1e6f, -7.99987793f, -7.99993896f, -8.0f, -1e6f };
    size_t n = 0;
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        v[n++] = edge[i];
    for (int k = -70000; k <= 70000; k++) { /* each multiple of half a step, and its neighbours */
        float x = (float)k * 0.5f / GS_I16_SCALE;
        v[n++] = x;
        v[n++] = nextafterf(x, INFINITY);
        v[n++] = nextafterf(x, -INFINITY);
    }
    while (n < N / 2) {
        uint32_t u = (uint32_t)(uniform() * 4294967296.0);
        memcpy(&v[n++], &u, sizeof u);
    }
    while (n < N)
        v[n++] = (float)(uniform() * 4 - 2);
    for (size_t off = 0; off < 8; off++) {
        const size_t len = N - off - 3;
        got[len] = 0x5a5a;
        gs_quantise_run(v + off, got, len);
        ck_assert_int_eq(got[len], 0x5a5a); /* nothing written past the run */
        size_t i = 0;
        while (i < len && got[i] == gs_quantise(v[off + i]))
            i++;
        if (i < len) {
            uint32_t u;
            memcpy(&u, &v[off + i], sizeof u);
            ck_abort_msg("value 0x%08x: %d, gs_quantise %d", u, got[i], gs_quantise(v[off + i]));
        }
    }
    ck_assert_int_eq(gs_quantise(NAN), 0);
    ck_assert_int_eq(gs_quantise(1e6f), 32767);
    ck_assert_int_eq(gs_quantise(-1e6f), -32767);
    ck_assert_int_eq(gs_quantise(0.5f / GS_I16_SCALE), 1);
    ck_assert_int_eq(gs_quantise(-0.5f / GS_I16_SCALE), -1);
    free(v);
    free(got);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gridsearch");
    TCase *tc = tcase_create("bounds");
    tcase_add_test(tc, test_fixed_table);
    tcase_add_test(tc, test_fixed_bound_keeps_its_own_fom);
    tcase_add_test(tc, test_fixed_bound_is_tight);
    tcase_add_test(tc, test_log_term_is_below_the_term);
    tcase_add_test(tc, test_log_bound_keeps_its_own_fom);
    tcase_add_test(tc, test_log_bound_is_tight);
    tcase_add_test(tc, test_log_bound_refused);
    tcase_add_test(tc, test_byte_table_is_below_every_term);
    tcase_add_test(tc, test_byte_bound_keeps_its_own_fom);
    tcase_add_test(tc, test_byte_bound_is_tight);
    tcase_add_test(tc, test_geo_group_is_below_its_terms);
    tcase_add_test(tc, test_geo_bound_keeps_its_own_fom);
    tcase_add_test(tc, test_geo_bound_is_tight);
    tcase_add_test(tc, test_quantise_run_is_gs_quantise);
    suite_add_tcase(s, tc);
    return tk_run_suite(s);
}
