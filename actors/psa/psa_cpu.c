/* psa_cpu.c: the CPU grid search: searches grouped by segment and spread over OpenMP threads, 16, 8 or 1 basis points per step, the full search pruned by a lower bound. */
#include "psa_cpu.h"
#include "psa_thesis.h"

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each kernel computes the FoM of every column given for up to Q searches of
 * one segment, exactly as gs_fom_point does (same operations, same order:
 * each SIMD lane is one column's sequential sum), and keeps per search the
 * lowest FoM, ties to the lower column.  Q searches share every basis value
 * loaded; the columns are a contiguous range of the segment's block, or a
 * list (the adaptive search's fine stage), read from the point-major copy by
 * gathers whose 16 runs stay in the first-level cache.
 */
enum { Q = 4 };

typedef struct cols {
    const float *f32;    /* the segment's block: k-major, or point-major with a list */
    const int16_t *i16;
    uint32_t pad, n, n_mask, window;
    const uint32_t *list; /* NULL: columns 0..n-1 k-major, pad apart; else list[0..n-1],
                             ascending, point-major: column j's values at j * pad */
    float *tile;          /* with a list: K x 16 values of scratch (the AVX-512 kernel) */
} cols;

typedef struct task {
    int nq;
    const float *m[Q];
    const int16_t *m16[Q];
    uint32_t use[Q];
    uint32_t best[Q];
    float fom[Q];
} task;

typedef void kernel_fn(const cols *c, task *t, const psa_cpu *e);
/* Appends to list[q] the columns of [from, to) (c: k-major, no list) whose
 * lower bound (gs_lb_point) does not exceed t->fom[q]; count[q] says how many. */
typedef void bound_fn(const cols *c, const task *t, const psa_cpu *e, uint32_t from, uint32_t to,
                      uint32_t *list[Q], uint32_t count[Q]);

static void start_task(task *t)
{
    for (int q = 0; q < Q; q++) {
        t->best[q] = UINT32_MAX;
        t->fom[q] = INFINITY;
    }
}

/* Lane results (foms[l], columns[l]) folded into search q's answer. */
static void fold_lanes(task *t, int q, const float *foms, const uint32_t *columns, int lanes)
{
    for (int l = 0; l < lanes; l++)
        if (columns[l] != UINT32_MAX && gs_better(foms[l], columns[l], t->fom[q], t->best[q])) {
            t->fom[q] = foms[l];
            t->best[q] = columns[l];
        }
}

/* ---- portable C: the definition itself */

static void kernel_scalar(const cols *c, task *t, const psa_cpu *e)
{
    start_task(t);
    for (uint32_t j = 0; j < c->n; j++) {
        uint32_t col = c->list ? c->list[j] : j;
        size_t first = c->list ? (size_t)col * c->pad : col; /* point-major or k-major */
        uint32_t stride = c->list ? 1 : c->pad;
        for (int q = 0; q < t->nq; q++) {
            float f = e->data == PSA_I16
                          ? gs_fom_point16(t->m16[q], c->i16 + first, stride, c->n_mask, c->window,
                                           t->use[q], e->pw->c, e->pw->scale)
                          : gs_fom_point(t->m[q], c->f32 + first, stride, c->n_mask, c->window,
                                         t->use[q], e->pw->c, e->pw->scale);
            fold_lanes(t, q, &f, &col, 1);
        }
    }
}

static void bound_scalar(const cols *c, const task *t, const psa_cpu *e, uint32_t from, uint32_t to,
                         uint32_t *list[Q], uint32_t count[Q])
{
    for (uint32_t col = from; col < to; col++)
        for (int q = 0; q < t->nq; q++) {
            float lb = e->data == PSA_I16
                           ? gs_lb_point16(t->m16[q], c->i16 + col, c->pad, c->n_mask, c->window, t->use[q],
                                           e->pw->lb)
                           : gs_lb_point(t->m[q], c->f32 + col, c->pad, c->n_mask, c->window, t->use[q],
                                         e->pw->lb);
            if (lb <= t->fom[q])
                list[q][count[q]++] = col;
        }
}

/* ---- AVX-512: 16 columns per step; the exponent's factor from a 64-entry table in four registers */

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))
#define INLINE512 __attribute__((target("avx512f,avx512bw,avx512vl,fma"), always_inline)) static inline

_Static_assert(GS_EXP_TOP - GS_EXP_ZERO + 1 == 64, "the AVX-512 kernel holds 64 exponents");

typedef struct pow512 {
    __m512 c[GS_POW_DEGREE + 1], t[4]; /* t: the exponents' factors, rotated (psa_cpu.h) */
} pow512;

INLINE512 __m512 acc_pow512(__m512 acc, __m512 d, const pow512 *k)
{
    __m512i u = _mm512_castps_si512(d);
    __m512i e = _mm512_srli_epi32(_mm512_slli_epi32(u, 1), 24);
    e = _mm512_min_epu32(_mm512_max_epu32(e, _mm512_set1_epi32(GS_EXP_ZERO)),
                         _mm512_set1_epi32(GS_EXP_TOP));
    __m512 lo = _mm512_permutex2var_ps(k->t[0], e, k->t[1]); /* index e mod 32 */
    __m512 hi = _mm512_permutex2var_ps(k->t[2], e, k->t[3]);
    __m512 scale = _mm512_mask_blend_ps(_mm512_test_epi32_mask(e, _mm512_set1_epi32(32)), lo, hi);
    __m512i mant = _mm512_ternarylogic_epi32(u, _mm512_set1_epi32(0x007fffff),
                                             _mm512_set1_epi32(0x3f800000), 0xEA); /* (u & b) | c */
    __m512 t = _mm512_sub_ps(_mm512_castsi512_ps(mant), _mm512_set1_ps(1.5f));
    __m512 y = _mm512_fmadd_ps(k->c[5], t, k->c[4]);
    y = _mm512_fmadd_ps(y, t, k->c[3]);
    y = _mm512_fmadd_ps(y, t, k->c[2]);
    y = _mm512_fmadd_ps(y, t, k->c[1]);
    y = _mm512_fmadd_ps(y, t, k->c[0]);
    return _mm512_fmadd_ps(y, scale, acc);
}

/* The 16 columns of step j0: their numbers, and the lanes that hold one. */
INLINE512 __m512i columns512(const cols *c, uint32_t j0, __mmask16 *valid)
{
    uint32_t left = c->n - j0;
    *valid = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
    if (c->list)
        return _mm512_mask_loadu_epi32(_mm512_set1_epi32((int)c->list[j0]), *valid, c->list + j0);
    return _mm512_add_epi32(_mm512_set1_epi32((int)j0),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* r[j] = 16 values of column j becomes r[k] = value k of the 16 columns. */
INLINE512 void transpose16(__m512 r[16])
{
    __m512 t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) /* u[g + m]: rows g..g+3 at k = 4 lane + m */
        for (int h = 0; h < 2; h++) {
            __m512d x = _mm512_castps_pd(t[g + h]), y = _mm512_castps_pd(t[g + 2 + h]);
            u[g + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(x, y));
            u[g + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(x, y));
        }
    for (int m = 0; m < 4; m++) {
        __m512 a = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x44), b = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xEE);
        __m512 c = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x44), d = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xEE);
        r[m] = _mm512_shuffle_f32x4(a, c, 0x88);
        r[4 + m] = _mm512_shuffle_f32x4(a, c, 0xDD);
        r[8 + m] = _mm512_shuffle_f32x4(b, d, 0x88);
        r[12 + m] = _mm512_shuffle_f32x4(b, d, 0xDD);
    }
}

/* The 16 list columns of step j0, copied k-major into c->tile (K x 16, int16
 * values widened to int32) from their point-major runs, 16 x 16 at a time:
 * gathers are slow on some processors, the runs are contiguous. */
INLINE512 void fill_tile512(const cols *c, uint32_t j0, const int i16)
{
    uint32_t kn = c->n_mask * c->window, size = i16 ? 2 : 4;
    size_t first[16];
    for (uint32_t j = 0; j < 16; j++)
        first[j] = (size_t)c->list[j0 + j < c->n ? j0 + j : c->n - 1] * c->pad;
    /* the next step's runs start coming while this one computes */
    for (uint32_t j = j0 + 16; j < j0 + 32 && j < c->n; j++) {
        const char *run = i16 ? (const char *)(c->i16 + (size_t)c->list[j] * c->pad)
                              : (const char *)(c->f32 + (size_t)c->list[j] * c->pad);
        for (uint32_t off = 0; off < kn * size; off += 64)
            _mm_prefetch(run + off, _MM_HINT_T0);
    }
    for (uint32_t k0 = 0; k0 < kn; k0 += 16) {
        uint32_t w = kn - k0 < 16 ? kn - k0 : 16;
        __mmask16 m = (__mmask16)((1u << w) - 1);
        __m512 r[16];
        for (int j = 0; j < 16; j++)
            r[j] = i16 ? _mm512_castsi512_ps(_mm512_cvtepi16_epi32(
                             _mm256_maskz_loadu_epi16(m, c->i16 + first[j] + k0)))
                       : _mm512_maskz_loadu_ps(m, c->f32 + first[j] + k0);
        transpose16(r);
        for (uint32_t k = 0; k < w; k++)
            _mm512_storeu_ps(c->tile + (size_t)(k0 + k) * 16, r[k]);
    }
}

INLINE512 __m512 basis512(const cols *c, uint32_t k, uint32_t j0)
{
    if (c->list)
        return _mm512_loadu_ps(c->tile + (size_t)k * 16);
    return _mm512_loadu_ps(c->f32 + (size_t)k * c->pad + j0);
}

INLINE512 __m512i basis512_16(const cols *c, uint32_t k, uint32_t j0)
{
    if (c->list)
        return _mm512_loadu_si512(c->tile + (size_t)k * 16);
    return _mm512_cvtepi16_epi32(
        _mm256_loadu_si256((const __m256i *)(c->i16 + (size_t)k * c->pad + j0)));
}

INLINE512 void keep_best512(__m512 total, __m512i colv, __mmask16 valid, __m512 *bf, __m512i *bc)
{
    __mmask16 lt = _mm512_mask_cmp_ps_mask(valid, total, *bf, _CMP_LT_OQ);
    *bf = _mm512_mask_mov_ps(*bf, lt, total);
    *bc = _mm512_mask_mov_epi32(*bc, lt, colv);
}

INLINE512 void finish512(task *t, int nq, const __m512 *bf, const __m512i *bc)
{
    float f[16];
    uint32_t col[16];
    start_task(t);
    for (int q = 0; q < nq; q++) {
        _mm512_storeu_ps(f, bf[q]);
        _mm512_storeu_si512(col, bc[q]);
        fold_lanes(t, q, f, col, 16);
    }
}

/* nq and the int16 switch are constants at each call: one specialised loop each. */
INLINE512 void body512(const cols *c, task *t, const psa_cpu *e, const int nq, const int i16)
{
    pow512 k;
    for (int j = 0; j <= GS_POW_DEGREE; j++)
        k.c[j] = _mm512_set1_ps(e->pw->c[j]);
    for (int j = 0; j < 4; j++)
        k.t[j] = _mm512_loadu_ps(e->rotated + 16 * j);
    __m512 bf[Q];
    __m512i bc[Q];
    for (int q = 0; q < nq; q++) {
        bf[q] = _mm512_set1_ps(INFINITY);
        bc[q] = _mm512_set1_epi32(-1);
    }
    for (uint32_t j0 = 0; j0 < c->n; j0 += 16) {
        __mmask16 valid;
        __m512i colv = columns512(c, j0, &valid);
        if (c->list)
            fill_tile512(c, j0, i16);
        __m512 total[Q];
        for (int q = 0; q < nq; q++)
            total[q] = _mm512_setzero_ps();
        for (uint32_t ch = 0; ch < c->n_mask; ch++) {
            __m512 part[Q];
            for (int q = 0; q < nq; q++)
                part[q] = _mm512_setzero_ps();
            for (uint32_t i = 0, kk = ch * c->window; i < c->window; i++, kk++) {
                if (i16) {
                    __m512i b = basis512_16(c, kk, j0);
                    for (int q = 0; q < nq; q++) {
                        __m512i d = _mm512_sub_epi32(_mm512_set1_epi32(t->m16[q][kk]), b);
                        __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_set1_ps(GS_I16_STEP));
                        part[q] = acc_pow512(part[q], x, &k);
                    }
                } else {
                    __m512 b = basis512(c, kk, j0);
                    for (int q = 0; q < nq; q++)
                        part[q] = acc_pow512(part[q], _mm512_sub_ps(_mm512_set1_ps(t->m[q][kk]), b), &k);
                }
            }
            for (int q = 0; q < nq; q++)
                if (t->use[q] >> ch & 1u)
                    total[q] = _mm512_add_ps(total[q], part[q]);
        }
        for (int q = 0; q < nq; q++)
            keep_best512(total[q], colv, valid, &bf[q], &bc[q]);
    }
    finish512(t, nq, bf, bc);
}

AVX512 static void kernel512(const cols *c, task *t, const psa_cpu *e)
{
    if (e->data == PSA_I16)
        t->nq == 1 ? body512(c, t, e, 1, 1) : body512(c, t, e, Q, 1);
    else
        t->nq == 1 ? body512(c, t, e, 1, 0) : body512(c, t, e, Q, 0);
}

/* The bound of 16 columns at a time for nq searches: per value the
 * exponent's least bound (lb of its least bucket, psa_cpu.h's rotated_lb, from
 * four registers as acc_pow512 reads its factor) and an add; a search stops
 * reading its terms once all 16 bounds exceed its best, the step once every
 * search has. */
INLINE512 __m512 lb512(__m512 d, const __m512 *r)
{
    __m512i e = _mm512_srli_epi32(_mm512_slli_epi32(_mm512_castps_si512(d), 1), 24);
    e = _mm512_min_epu32(_mm512_max_epu32(e, _mm512_set1_epi32(GS_EXP_ZERO)), _mm512_set1_epi32(GS_EXP_TOP));
    __m512 lo = _mm512_permutex2var_ps(r[0], e, r[1]), hi = _mm512_permutex2var_ps(r[2], e, r[3]);
    return _mm512_mask_blend_ps(_mm512_test_epi32_mask(e, _mm512_set1_epi32(32)), lo, hi);
}

INLINE512 void bound_body512(const cols *c, const task *t, const psa_cpu *e, uint32_t from, uint32_t to,
                             uint32_t *list[Q], uint32_t count[Q], const int nq, const int i16)
{
    __m512 best[Q], r[4];
    for (int j = 0; j < 4; j++)
        r[j] = _mm512_loadu_ps(e->rotated_lb + 16 * j);
    for (int q = 0; q < nq; q++)
        best[q] = _mm512_set1_ps(t->fom[q]);
    for (uint32_t j0 = from; j0 < to; j0 += 16) {
        __mmask16 valid = to - j0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (to - j0)) - 1), alive[Q];
        __m512 total[Q];
        for (int q = 0; q < nq; q++) {
            alive[q] = valid;
            total[q] = _mm512_setzero_ps();
        }
        for (uint32_t ch = 0; ch < c->n_mask; ch++) {
            unsigned live = 0;
            for (int q = 0; q < nq; q++)
                live |= (unsigned)(alive[q] && (t->use[q] >> ch & 1u)) << q;
            if (!live)
                continue;
            __m512 part[Q];
            for (int q = 0; q < nq; q++)
                part[q] = _mm512_setzero_ps();
            for (uint32_t i = 0, kk = ch * c->window; i < c->window; i++, kk++) {
                __m512 b = i16 ? _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256(
                                     (const __m256i *)(c->i16 + (size_t)kk * c->pad + j0))))
                               : _mm512_loadu_ps(c->f32 + (size_t)kk * c->pad + j0);
                for (int q = 0; q < nq; q++) {
                    if (!(live >> q & 1u))
                        continue;
                    __m512 d = i16 ? _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps((float)t->m16[q][kk]), b),
                                                   _mm512_set1_ps(GS_I16_STEP))
                                   : _mm512_sub_ps(_mm512_set1_ps(t->m[q][kk]), b);
                    part[q] = _mm512_add_ps(part[q], lb512(d, r));
                }
            }
            bool any = false;
            for (int q = 0; q < nq; q++) {
                if (live >> q & 1u) {
                    total[q] = _mm512_add_ps(total[q], part[q]);
                    alive[q] = _mm512_mask_cmp_ps_mask(alive[q], total[q], best[q], _CMP_LE_OQ);
                }
                any |= alive[q] != 0;
            }
            if (!any)
                break;
        }
        __m512i colv = _mm512_add_epi32(_mm512_set1_epi32((int)j0),
                                        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        for (int q = 0; q < nq; q++) {
            _mm512_mask_compressstoreu_epi32(list[q] + count[q], alive[q], colv);
            count[q] += (uint32_t)__builtin_popcount(alive[q]);
        }
    }
}

AVX512 static void bound512(const cols *c, const task *t, const psa_cpu *e, uint32_t from, uint32_t to,
                            uint32_t *list[Q], uint32_t count[Q])
{
    if (e->data == PSA_I16)
        t->nq == 1 ? bound_body512(c, t, e, from, to, list, count, 1, 1)
                   : bound_body512(c, t, e, from, to, list, count, Q, 1);
    else
        t->nq == 1 ? bound_body512(c, t, e, from, to, list, count, 1, 0)
                   : bound_body512(c, t, e, from, to, list, count, Q, 0);
}

/* ---- AVX2: 8 columns per step; the exponent's factor gathered from the 256-entry table */

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE256 __attribute__((target("avx2,fma"), always_inline)) static inline

INLINE256 __m256 acc_pow256(__m256 acc, __m256 d, const __m256 *c, const float *scale)
{
    __m256i u = _mm256_castps_si256(d);
    __m256i e = _mm256_srli_epi32(_mm256_slli_epi32(u, 1), 24);
    __m256 sc = _mm256_i32gather_ps(scale, e, 4);
    __m256i mant = _mm256_or_si256(_mm256_and_si256(u, _mm256_set1_epi32(0x007fffff)),
                                   _mm256_set1_epi32(0x3f800000));
    __m256 t = _mm256_sub_ps(_mm256_castsi256_ps(mant), _mm256_set1_ps(1.5f));
    __m256 y = _mm256_fmadd_ps(c[5], t, c[4]);
    y = _mm256_fmadd_ps(y, t, c[3]);
    y = _mm256_fmadd_ps(y, t, c[2]);
    y = _mm256_fmadd_ps(y, t, c[1]);
    y = _mm256_fmadd_ps(y, t, c[0]);
    return _mm256_fmadd_ps(y, sc, acc);
}

INLINE256 __m256i columns256(const cols *c, uint32_t j0, __m256i *valid)
{
    uint32_t left = c->n - j0;
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    *valid = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left > 8 ? 8 : left)), lane);
    if (c->list)
        return _mm256_blendv_epi8(
            _mm256_set1_epi32((int)c->list[j0]),
            _mm256_maskload_epi32((const int *)(c->list + j0), *valid), *valid);
    return _mm256_add_epi32(_mm256_set1_epi32((int)j0), lane);
}

INLINE256 __m256 basis256(const cols *c, uint32_t k, uint32_t j0, __m256i pm)
{
    if (c->list)
        return _mm256_i32gather_ps(c->f32 + k, pm, 4);
    return _mm256_loadu_ps(c->f32 + (size_t)k * c->pad + j0);
}

/* A list's int16 values are gathered as 32-bit words at 2-byte steps (the
 * point-major array keeps PSA_I16_SLACK values after its end) and sign-extended. */
INLINE256 __m256i basis256_16(const cols *c, uint32_t k, uint32_t j0, __m256i pm)
{
    if (c->list)
        return _mm256_srai_epi32(
            _mm256_slli_epi32(_mm256_i32gather_epi32((const int *)(c->i16 + k), pm, 2), 16), 16);
    return _mm256_cvtepi16_epi32(
        _mm_loadu_si128((const __m128i *)(c->i16 + (size_t)k * c->pad + j0)));
}

INLINE256 void body256(const cols *c, task *t, const psa_cpu *e, const int nq, const int i16)
{
    __m256 k[GS_POW_DEGREE + 1];
    for (int j = 0; j <= GS_POW_DEGREE; j++)
        k[j] = _mm256_set1_ps(e->pw->c[j]);
    __m256 bf[Q];
    __m256i bc[Q];
    for (int q = 0; q < nq; q++) {
        bf[q] = _mm256_set1_ps(INFINITY);
        bc[q] = _mm256_set1_epi32(-1);
    }
    for (uint32_t j0 = 0; j0 < c->n; j0 += 8) {
        __m256i valid, colv = columns256(c, j0, &valid);
        __m256i pm = _mm256_mullo_epi32(colv, _mm256_set1_epi32((int)(c->n_mask * c->window)));
        __m256 total[Q];
        for (int q = 0; q < nq; q++)
            total[q] = _mm256_setzero_ps();
        for (uint32_t ch = 0; ch < c->n_mask; ch++) {
            __m256 part[Q];
            for (int q = 0; q < nq; q++)
                part[q] = _mm256_setzero_ps();
            for (uint32_t i = 0, kk = ch * c->window; i < c->window; i++, kk++) {
                if (i16) {
                    __m256i b = basis256_16(c, kk, j0, pm);
                    for (int q = 0; q < nq; q++) {
                        __m256i d = _mm256_sub_epi32(_mm256_set1_epi32(t->m16[q][kk]), b);
                        __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(GS_I16_STEP));
                        part[q] = acc_pow256(part[q], x, k, e->pw->scale);
                    }
                } else {
                    __m256 b = basis256(c, kk, j0, pm);
                    for (int q = 0; q < nq; q++)
                        part[q] = acc_pow256(part[q], _mm256_sub_ps(_mm256_set1_ps(t->m[q][kk]), b),
                                             k, e->pw->scale);
                }
            }
            for (int q = 0; q < nq; q++)
                if (t->use[q] >> ch & 1u)
                    total[q] = _mm256_add_ps(total[q], part[q]);
        }
        for (int q = 0; q < nq; q++) {
            __m256 lt = _mm256_and_ps(_mm256_cmp_ps(total[q], bf[q], _CMP_LT_OQ),
                                      _mm256_castsi256_ps(valid));
            bf[q] = _mm256_blendv_ps(bf[q], total[q], lt);
            bc[q] = _mm256_blendv_epi8(bc[q], colv, _mm256_castps_si256(lt));
        }
    }
    start_task(t);
    for (int q = 0; q < nq; q++) {
        float f[8];
        uint32_t col[8];
        _mm256_storeu_ps(f, bf[q]);
        _mm256_storeu_si256((__m256i *)col, bc[q]);
        fold_lanes(t, q, f, col, 8);
    }
}

AVX2 static void kernel256(const cols *c, task *t, const psa_cpu *e)
{
    if (e->data == PSA_I16)
        t->nq == 1 ? body256(c, t, e, 1, 1) : body256(c, t, e, Q, 1);
    else
        t->nq == 1 ? body256(c, t, e, 1, 0) : body256(c, t, e, Q, 0);
}

/* ---- choice and drivers */

const char *psa_simd_name(psa_simd s)
{
    switch (s) {
    case PSA_SIMD_AVX512: return "AVX-512, 16 points per step";
    case PSA_SIMD_AVX2: return "AVX2, 8 points per step";
    case PSA_SIMD_SCALAR: return "portable C, 1 point per step";
    case PSA_SIMD_THESIS: return "the thesis's algorithm (int16: table of |d|^p; float: powf; early exit per channel), 1 point per step";
    default: return "auto";
    }
}

void psa_cpu_init(psa_cpu *c, const psa_layout *l, const gs_pow *pw, psa_data data, psa_simd want,
                  int threads)
{
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
    int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    *c = (psa_cpu){ .layout = l, .pw = pw, .data = data, .threads = threads, .prune = 1,
                    .prune_step = PSA_PRUNE_STEP };
    if (want == PSA_SIMD_THESIS) {
        c->simd = PSA_SIMD_THESIS;
        c->metrics = psa_thesis_metrics(pw);
    } else if ((want == PSA_SIMD_AUTO || want == PSA_SIMD_AVX512) && has512)
        c->simd = PSA_SIMD_AVX512;
    else if (want != PSA_SIMD_SCALAR && has2)
        c->simd = PSA_SIMD_AVX2;
    else
        c->simd = PSA_SIMD_SCALAR;
    float lb_exp[GS_EXP_TABLE];
    gs_lb_coarsen(pw->lb, lb_exp);
    for (int e = GS_EXP_ZERO; e <= GS_EXP_TOP; e++) {
        c->rotated[e % 64] = pw->scale[e];
        c->rotated_lb[e % 64] = lb_exp[e];
    }
}

void psa_cpu_free(psa_cpu *c)
{
    free(c->metrics);
    c->metrics = NULL;
}

static kernel_fn *kernel_of(const psa_cpu *c)
{
    return c->simd == PSA_SIMD_AVX512 ? kernel512 : c->simd == PSA_SIMD_AVX2 ? kernel256 : kernel_scalar;
}

static cols segment_cols(const psa_cpu *c, unsigned s, uint32_t n)
{
    const psa_layout *l = c->layout;
    const psa_segment *g = &l->seg[s];
    return (cols){ .f32 = l->f32 ? l->f32 + g->offset : NULL,
                   .i16 = l->i16 ? l->i16 + g->offset : NULL,
                   .pad = g->pad, .n = n, .n_mask = g->n_mask, .window = l->window };
}

static void load_query(task *t, int q, const psa_batch *b, const psa_query *x)
{
    t->m[q] = b->meas + x->meas;
    t->m16[q] = b->meas16 ? b->meas16 + x->meas : NULL;
    t->use[q] = x->use;
}

/* What a search of a batch allocates: the queries sorted by segment (stable;
 * first[s] .. first[s + 1] are segment s's), the tasks of up to Q of them, and
 * a tile per thread for the fine stage. */
typedef struct plan {
    size_t first[DET_SEGMENTS + 1], n_tasks;
    size_t *order, *task_start;
    float *tiles;
    int threads;
} plan;

static int make_plan(const psa_cpu *c, const psa_batch *b, plan *p)
{
    size_t at[DET_SEGMENTS];
    memset(p, 0, sizeof *p);
    p->threads = c->threads > 0 ? c->threads : omp_get_max_threads();
    p->order = malloc((b->n + 1) * sizeof *p->order);
    p->task_start = malloc(((b->n + Q - 1) / Q + DET_SEGMENTS) * sizeof *p->task_start);
    p->tiles = malloc((size_t)c->layout->max_k * 16 * sizeof *p->tiles * (size_t)p->threads);
    if (!p->order || !p->task_start || !p->tiles)
        return -1;
    for (size_t i = 0; i < b->n; i++)
        p->first[b->q[i].segment + 1]++;
    for (int s = 0; s < DET_SEGMENTS; s++) {
        p->first[s + 1] += p->first[s];
        at[s] = p->first[s];
    }
    for (size_t i = 0; i < b->n; i++)
        p->order[at[b->q[i].segment]++] = i;
    for (int s = 0; s < DET_SEGMENTS; s++)
        for (size_t i = p->first[s]; i < p->first[s + 1]; i += Q)
            p->task_start[p->n_tasks++] = i;
    return 0;
}

static void free_plan(plan *p)
{
    free(p->order);
    free(p->task_start);
    free(p->tiles);
}

/* The bound of the kernel in use, or NULL where the full search does not prune. */
static bound_fn *bound_of(const psa_cpu *c)
{
    if (!c->prune)
        return NULL;
    return c->simd == PSA_SIMD_AVX512 ? bound512 : c->simd == PSA_SIMD_SCALAR ? bound_scalar : NULL;
}

/* The columns of a list, point-major, with a thread's scratch tile. */
static cols list_cols(const psa_cpu *c, unsigned s, const uint32_t *list, uint32_t n, float *tile)
{
    const psa_layout *l = c->layout;
    const psa_segment *g = &l->seg[s];
    return (cols){ .f32 = l->f32pm ? l->f32pm + g->pm_offset : NULL,
                   .i16 = l->i16pm ? l->i16pm + g->pm_offset : NULL,
                   .pad = g->n_mask * l->window, .n = n, .n_mask = g->n_mask, .window = l->window,
                   .list = list, .tile = tile };
}

/* The FoMs of list[q]'s count[q] columns folded into search q's answer; the list emptied. */
static void settle(const psa_cpu *c, kernel_fn *kernel, unsigned s, task *t, int q, const uint32_t *list,
                   uint32_t *count, float *tile)
{
    task one = { .nq = 1, .m = { t->m[q] }, .m16 = { t->m16[q] }, .use = { t->use[q] } };
    cols some = list_cols(c, s, list, *count, tile);
    kernel(&some, &one, c);
    fold_lanes(t, q, one.fom, one.best, 1);
    *count = 0;
}

/*
 * The full search of a task, pruned (psa_cpu.h): its first prune_step
 * columns by the kernel, then step by step the bound of every column against
 * the search's best so far, the columns whose bound does not exceed it kept
 * in a list; a list gets its FoMs (the kernel, folded in by gs_better) once
 * it fills a vector of 16, and at the end.  A column left out has a FoM
 * above a FoM already found (gridsearch_fom.h): the answer and its bits are
 * the kernel's.
 */
static void search_pruned(const psa_cpu *c, kernel_fn *kernel, bound_fn *bound, const cols *all, unsigned s,
                          task *t, float *tile)
{
    const uint32_t step = c->prune_step >= 1 && c->prune_step <= PSA_PRUNE_STEP ? c->prune_step : PSA_PRUNE_STEP;
    uint32_t store[Q][PSA_PRUNE_STEP + 16], *list[Q], count[Q] = { 0 };
    cols head = *all;
    head.n = all->n < step ? all->n : step;
    kernel(&head, t, c);
    for (uint32_t from = step; from < all->n; from += step) {
        uint32_t to = all->n - from < step ? all->n : from + step;
        for (int q = 0; q < Q; q++)
            list[q] = store[q] + count[q];
        uint32_t added[Q] = { 0 };
        bound(all, t, c, from, to, list, added);
        for (int q = 0; q < t->nq; q++)
            if ((count[q] += added[q]) >= 16)
                settle(c, kernel, s, t, q, store[q], &count[q], tile);
    }
    for (int q = 0; q < t->nq; q++)
        if (count[q])
            settle(c, kernel, s, t, q, store[q], &count[q], tile);
}

/* Every query against columns [0, n) of its segment, n = all its points or the coarse ones. */
static void search_ranges(const psa_cpu *c, psa_batch *b, const plan *p, int coarse)
{
    kernel_fn *kernel = kernel_of(c);
    bound_fn *bound = coarse ? NULL : bound_of(c);
    long nt = (long)p->n_tasks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(p->threads)
    for (long k = 0; k < nt; k++) {
        size_t i0 = p->task_start[k];
        unsigned s = b->q[p->order[i0]].segment;
        task t = { 0 };
        for (size_t i = i0; i < p->first[s + 1] && t.nq < Q; i++)
            load_query(&t, t.nq++, b, &b->q[p->order[i]]);
        int nq = t.nq;
        for (int q = nq; q < Q; q++) /* idle slots repeat the first search */
            load_query(&t, q, b, &b->q[p->order[i0]]);
        t.nq = Q;
        const psa_segment *g = &c->layout->seg[s];
        cols cl = segment_cols(c, s, coarse ? g->n_coarse : g->n_points);
        if (bound)
            search_pruned(c, kernel, bound, &cl, s, &t,
                          p->tiles + (size_t)c->layout->max_k * 16 * omp_get_thread_num());
        else
            kernel(&cl, &t, c);
        for (int q = 0; q < nq; q++) {
            psa_query *x = &b->q[p->order[i0 + q]];
            x->column = t.best[q];
            x->fom = t.fom[q];
        }
    }
}

/* The fine stage: the columns near each query's column (the best coarse one,
 * or with local its start: its local list), point-major. */
static void search_near(const psa_cpu *c, psa_batch *b, const plan *p, int local)
{
    kernel_fn *kernel = kernel_of(c);
    const psa_layout *l = c->layout;
    long n = (long)b->n;
#pragma omp parallel for schedule(dynamic, 4) num_threads(p->threads)
    for (long i = 0; i < n; i++) {
        psa_query *x = &b->q[i];
        const psa_segment *g = &l->seg[x->segment];
        const uint32_t *first = local ? g->local_first : g->near_first;
        uint32_t from = first[x->column], to = first[x->column + 1];
        task t = { .nq = 1 };
        load_query(&t, 0, b, x);
        cols cl = list_cols(c, x->segment, (local ? g->local : g->near) + from, to - from,
                            p->tiles + (size_t)l->max_k * 16 * omp_get_thread_num());
        kernel(&cl, &t, c);
        x->column = t.best[0];
        x->fom = t.fom[0];
    }
}

int psa_cpu_search(const psa_cpu *c, psa_batch *b, psa_mode mode)
{
    if (mode == PSA_LOCAL && c->layout->local_mm <= 0)
        return -1;
    if (c->simd == PSA_SIMD_THESIS) {
        if (!c->metrics)
            return -1;
        psa_thesis_search(c->layout, c->metrics, c->pw->p, c->data, c->threads, b, mode);
        return 0;
    }
    plan p;
    if (make_plan(c, b, &p)) {
        free_plan(&p);
        return -1;
    }
    if (mode != PSA_LOCAL)
        search_ranges(c, b, &p, mode == PSA_ADAPTIVE);
    if (mode != PSA_FULL)
        search_near(c, b, &p, mode == PSA_LOCAL);
    free_plan(&p);
    return 0;
}
