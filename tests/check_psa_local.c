/* check_psa_local.c: Check suite for the neighbour passes' local search (psa_layout.h's local lists, PSA_LOCAL): the lists on a 6 mm basis, and a local search's answers on the CPU kernels, the thesis's and the naive reference. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "narwhal_exec.h"
#include "psa/psa_cpu.h"
#include "psa/psa_layout.h"
#include "psa/psa_naive.h"
#include "psa/psa_pow.h"
#include "psa/psa_thesis.h"
#include "testkit.h"

/* 1.5 grid steps of the 6 mm basis: the 6 nearest points and the 12 at 8.5 mm, of a segment's about 50. */
#define LOCAL_MM 9.0

static char dir[1024], path[1100];
static det_basis basis;
static psa_layout layout;
static gs_pow pw;

static void build(double local_mm)
{
    char msg[512];
    psa_layout_params p = { .window_start = basis.pretrigger - 1, .window = 40, .coarse_mm = 18, .radius_mm = 24,
                            .local_mm = local_mm, .f32 = 1, .i16 = 1 };
    for (unsigned s = 0; s < DET_SEGMENTS; s++)
        p.n_mask[s] = (uint8_t)psa_default_mask(s, p.mask[s]);
    ck_assert_msg(psa_layout_build(&layout, &basis, &p, msg, sizeof msg) == 0, "%s", msg);
}

static void setup(void)
{
    char why[3300], msg[512];
    tk_make_tmpdir(dir, sizeof dir, "check_psa_local");
    snprintf(path, sizeof path, "%s/coarse.basis", dir);
    int rc = nw_coarse_basis(path, why, sizeof why);
    if (rc < 0)
        TK_SKIP("%s", why);
    ck_assert_msg(rc == 0, "%s", why);
    ck_assert_msg(det_basis_load(&basis, path, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(psa_pow_fit(0.3, &pw, NULL), 0);
    build(LOCAL_MM);
}

static void teardown(void)
{
    psa_layout_free(&layout);
    det_basis_free(&basis);
    tk_remove_tree(dir);
}

static double distance(uint32_t i, uint32_t j)
{
    double d = 0;
    for (int k = 0; k < 3; k++) {
        double x = (double)basis.pos[3 * (size_t)i + k] - basis.pos[3 * (size_t)j + k];
        d += x * x;
    }
    return sqrt(d);
}

/* Each column's list: the columns of its segment within LOCAL_MM, ascending, itself among them; the
 * columns of the basis points. */
START_TEST(local_lists_are_the_balls)
{
    uint64_t listed = 0, points = 0;
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        const psa_segment *g = &layout.seg[s];
        ck_assert_ptr_nonnull(g->local_first);
        points += g->n_points;
        for (uint32_t c = 0; c < g->n_points; c++) {
            const uint32_t *l = g->local + g->local_first[c], n = g->local_first[c + 1] - g->local_first[c];
            uint32_t within = 0, self = 0;
            ck_assert_uint_eq(layout.column[g->point[c]], c);
            for (uint32_t j = 0; j < g->n_points; j++)
                within += distance(g->point[c], g->point[j]) <= LOCAL_MM;
            ck_assert_uint_eq(n, within);
            for (uint32_t k = 0; k < n; k++) {
                ck_assert(k == 0 || l[k] > l[k - 1]);
                ck_assert_double_le(distance(g->point[c], g->point[l[k]]), LOCAL_MM);
                self += l[k] == c;
            }
            ck_assert_uint_eq(self, 1);
            listed += n;
        }
    }
    ck_assert_uint_eq(points, basis.n_points);
    /* local, not the whole segment: about 12 points each (fewer at the segments' faces) */
    ck_assert_msg(listed > 6 * points && listed < 19 * points, "%llu listed for %llu points",
                  (unsigned long long)listed, (unsigned long long)points);
}
END_TEST

/* A batch of local searches: segment s's point `want` exactly (noiseless), each started from
 * column `from`. */
static void add_search(psa_batch *b, unsigned s, uint32_t want, uint32_t from)
{
    const psa_segment *g = &layout.seg[s];
    const uint32_t k = g->n_mask * layout.window;
    float *m = psa_batch_add(b, &layout, s, (1u << g->n_mask) - 1);
    ck_assert_ptr_nonnull(m);
    memcpy(m, layout.f32pm + g->pm_offset + (size_t)want * k, k * sizeof *m);
    b->q[b->n - 1].column = from;
}

static bool listed(unsigned s, uint32_t from, uint32_t col)
{
    const psa_segment *g = &layout.seg[s];
    for (uint32_t k = g->local_first[from]; k < g->local_first[from + 1]; k++)
        if (g->local[k] == col)
            return true;
    return false;
}

/* Every segment's points searched from a column within the radius (found) and from one beyond it (an answer of the
 * start's list, not the point): on each CPU kernel, the thesis's and the reference, the same columns. */
START_TEST(local_searches_stay_local)
{
    static const psa_simd kernels[] = { PSA_SIMD_SCALAR, PSA_SIMD_AVX2, PSA_SIMD_AVX512 };
    psa_batch b = { 0 }, ref = { 0 }, tried = { 0 };
    size_t n_in = 0, n_out = 0;
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        const psa_segment *g = &layout.seg[s];
        for (uint32_t want = 0; want < g->n_points; want += 5) {
            uint32_t in = g->local[g->local_first[want + 1] - 1], out = want;
            for (uint32_t c = 0; c < g->n_points && out == want; c++)
                if (distance(g->point[c], g->point[want]) > 2 * LOCAL_MM)
                    out = c;
            add_search(&b, s, want, in);
            add_search(&ref, s, want, in);
            n_in++;
            if (out != want) {
                add_search(&b, s, want, out);
                add_search(&ref, s, want, out);
                n_out++;
            }
        }
    }
    ref.local = 1;
    psa_naive_search(&basis, &layout, 0.3, &ref);
    tried = b;
    ck_assert_ptr_nonnull(tried.q = malloc(b.n * sizeof *tried.q));
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
        psa_cpu c;
        size_t found = 0;
        psa_cpu_init(&c, &layout, &pw, PSA_F32, kernels[k], 1);
        memcpy(tried.q, b.q, b.n * sizeof *b.q);
        ck_assert_int_eq(psa_cpu_search(&c, &tried, PSA_LOCAL), 0);
        for (size_t i = 0; i < b.n; i++) {
            const psa_query *q = &b.q[i];
            const psa_segment *g = &layout.seg[q->segment];
            const uint32_t k_n = g->n_mask * layout.window;
            ck_assert_msg(listed(q->segment, q->column, tried.q[i].column), "%s: search %zu left its list",
                          psa_simd_name(c.simd), i);
            ck_assert_uint_eq(tried.q[i].column, ref.q[i].column);
            found += memcmp(layout.f32pm + g->pm_offset + (size_t)tried.q[i].column * k_n, b.meas + q->meas,
                            k_n * sizeof *b.meas) == 0;
        }
        /* each point found from within the radius, none from beyond it */
        ck_assert_msg(found == n_in && b.n == n_in + n_out && n_out > 0, "%s: %zu found of %zu + %zu",
                      psa_simd_name(c.simd), found, n_in, n_out);
        psa_cpu_free(&c);
    }
    memcpy(tried.q, b.q, b.n * sizeof *b.q);
    psa_thesis_search(&layout, NULL, 0.3f, PSA_F32, 1, &tried, PSA_LOCAL);
    for (size_t i = 0; i < b.n; i++)
        ck_assert_uint_eq(tried.q[i].column, ref.q[i].column);
    free(tried.q);
    psa_batch_free(&b);
    psa_batch_free(&ref);
}
END_TEST

/* Without local lists (NeighbourRadius 0 builds none) a local search is refused, nothing answered. */
START_TEST(local_search_needs_lists)
{
    psa_batch b = { 0 };
    psa_cpu c;
    psa_layout_free(&layout);
    build(0);
    ck_assert_ptr_null(layout.seg[0].local_first);
    add_search(&b, 0, 1, 0);
    psa_cpu_init(&c, &layout, &pw, PSA_F32, PSA_SIMD_AUTO, 1);
    ck_assert_int_eq(psa_cpu_search(&c, &b, PSA_LOCAL), -1);
    ck_assert_uint_eq(b.q[0].column, 0);
    psa_cpu_free(&c);
    psa_batch_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("psa_local");
    TCase *tc = tcase_create("local");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, local_lists_are_the_balls);
    tcase_add_test(tc, local_searches_stay_local);
    tcase_add_test(tc, local_search_needs_lists);
    suite_add_tcase(s, tc);
    return tk_run_suite(s);
}
