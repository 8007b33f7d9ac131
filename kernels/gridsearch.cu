/* gridsearch.cu: the grid search on the GPU: resident basis, searches grouped by segment in tiles, argmin on the device, chunks on two streams. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gridsearch_gpu.h"
#include "gridsearch_resident.h"
#include "gpu_device.h"

namespace {

/*
 * A block of kThreads threads takes one tile: up to kTileQ searches of one
 * segment and a range of its columns.  Warp w holds searches 4w..4w+3, lane
 * l columns 4l..4l+3 of each step of kTileC columns: every thread sums
 * kQ x kR FoMs at once, so each basis value read from shared memory serves
 * four searches and each measured value four columns.  The columns of a
 * step are staged in shared memory one mask channel at a time (window x
 * kTileC values, read coalesced: the layout is k-major), the searches'
 * measured values once per block (k-major, the 16 searches side by side).
 * Each thread keeps its best column per search; the lanes reduce by
 * shuffles and one atomic minimum per search merges the column ranges
 * (FoM and column packed in 64 bits: lower FoM, then lower column, as on
 * the CPU).
 */
constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kQ = 4;
constexpr int kR = 4;
constexpr int kTileQ = kWarps * kQ;
constexpr int kTileC = 32 * kR;
constexpr size_t kChunkMin = 4096; /* searches per chunk, at least */
constexpr int kChunks = 4;

struct tile {
    uint32_t segment, first, count; /* searches first .. first + count of the chunk (sorted) */
    uint32_t col_begin, col_end;
};

struct args {
    const void *values, *pm;
    const gs_segment *seg;
    const uint32_t *near_first, *near;
    const float *scale, *lb;
    float coef[GS_POW_DEGREE + 1];
    uint32_t window;
    const gs_query *q;
    const void *meas;
    unsigned long long *answer;
    const tile *tiles;
    uint32_t n_queries;
    const gs_remap *remap; /* gs_resident_launch's: the tiles' searches picked out on the device */
};

__device__ __forceinline__ unsigned long long pack(float fom, uint32_t col)
{
    return (unsigned long long)__float_as_uint(fom) << 32 | col;
}

/* Four consecutive values of a k-major row, as floats. */
__device__ __forceinline__ void load4(const float *p, float v[4])
{
    float4 x = *reinterpret_cast<const float4 *>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
}
__device__ __forceinline__ void load4(const int16_t *p, int v[4])
{
    short4 x = *reinterpret_cast<const short4 *>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
}

__device__ __forceinline__ float acc(float a, float m, float b, const float *coef, const float *scale)
{
    return gs_acc_pow(a, GS_SUB(m, b), coef, scale);
}
__device__ __forceinline__ float acc(float a, int m, int b, const float *coef, const float *scale)
{
    return gs_acc_pow16(a, m - b, coef, scale);
}

template <typename T> struct lanes;
template <> struct lanes<float> { typedef float type; };
template <> struct lanes<int16_t> { typedef int type; };

/* Copies rows first .. first + rows of a k-major block (kTileC columns from col0) into dst. */
template <typename T>
__device__ void stage_rows(T *dst, const T *block, uint32_t pad, uint32_t first, uint32_t rows,
                           uint32_t col0)
{
    constexpr int per = 16 / sizeof(T); /* values per 16-byte load */
    constexpr int vecs = kTileC / per;
    for (uint32_t v = threadIdx.x; v < rows * vecs; v += kThreads) {
        uint32_t row = v / vecs, x = (v % vecs) * per;
        *reinterpret_cast<int4 *>(dst + row * kTileC + x) =
            __ldg(reinterpret_cast<const int4 *>(block + (size_t)(first + row) * pad + col0 + x));
    }
}

/* The measured values of the tile's searches, k-major, kTileQ side by side (idle slots repeat the first). */
template <typename T>
__device__ void stage_meas(T *dst, const args &a, const tile &t, uint32_t k_count)
{
    const T *meas = static_cast<const T *>(a.meas);
    for (uint32_t v = threadIdx.x; v < k_count * kTileQ; v += kThreads) {
        uint32_t k = v / kTileQ, j = v % kTileQ;
        dst[v] = meas[a.q[t.first + (j < t.count ? j : 0)].meas + k];
    }
}

__device__ __forceinline__ void keep(float f, uint32_t col, float &best, uint32_t &best_col)
{
    if (gs_better(f, col, best, best_col)) {
        best = f;
        best_col = col;
    }
}

__device__ __forceinline__ void warp_best(float &best, uint32_t &best_col)
{
    for (int off = 16; off > 0; off >>= 1) {
        float f = __shfl_xor_sync(0xffffffffu, best, off);
        uint32_t c = __shfl_xor_sync(0xffffffffu, best_col, off);
        keep(f, c, best, best_col);
    }
}

/* The tile's searches with a remap (gs_resident_launch): false when the tile has none left. */
__device__ __forceinline__ bool remap_tile(const args &a, tile &t)
{
    if (!a.remap)
        return true;
    const uint32_t o = t.first - a.remap->first0[t.segment], live = a.remap->count[t.segment];
    if (o >= live)
        return false;
    t.first = a.remap->first[t.segment] + o;
    t.count = live - o < t.count ? live - o : t.count;
    return true;
}

/* The block's tile (remapped), its segment, and the |d|^p tables every tile
 * kernel keeps (scale in shared memory): false when the tile has no search. */
__device__ __forceinline__ bool open_tile(const args &a, tile &t, gs_segment &g, float *scale,
                                          float coef[GS_POW_DEGREE + 1])
{
    t = a.tiles[blockIdx.x];
    if (!remap_tile(a, t))
        return false;
    g = a.seg[t.segment];
    for (int i = 0; i <= GS_POW_DEGREE; i++)
        coef[i] = a.coef[i];
    for (int i = threadIdx.x; i < GS_EXP_TABLE; i += kThreads)
        scale[i] = a.scale[i];
    return true;
}

/* Everything a step of a tile reads: the staged values, the block's searches, the |d|^p tables. */
template <typename T> struct step_in {
    T *cols;                 /* shared: one channel's window of the step's kTileC columns */
    const T *meas, *block;   /* shared: the searches' values, k-major; global: the segment's block */
    uint32_t n_mask, pad, W, use[kQ];
    bool busy;               /* the thread's warp holds searches of the tile */
    const float *coef, *scale, *lb;
    int warp, lane;
};

/* Channel ch's sums for the thread's kQ x kR (search, column) pairs of the
 * staged step, each from 0 in sample order: term(sum, measured, basis). */
template <typename T, typename Term>
__device__ __forceinline__ void channel_sums(const step_in<T> &s, uint32_t ch, Term term, float part[kQ][kR])
{
    typedef typename lanes<T>::type V;
    const T *mrow = s.meas + ch * s.W * kTileQ + s.warp * kQ;
    const T *brow = s.cols + s.lane * kR;
    for (uint32_t i = 0; i < s.W; i++, mrow += kTileQ, brow += kTileC) {
        V m[kQ], b[kR];
        load4(mrow, m);
        load4(brow, b);
#pragma unroll
        for (int q = 0; q < kQ; q++)
#pragma unroll
            for (int r = 0; r < kR; r++)
                part[q][r] = term(part[q][r], m[q], b[r]);
    }
}

/* total += part for the searches that use channel ch. */
__device__ __forceinline__ void add_used(const uint32_t use[kQ], uint32_t ch, const float part[kQ][kR],
                                         float total[kQ][kR])
{
#pragma unroll
    for (int q = 0; q < kQ; q++)
        if (use[q] >> ch & 1u)
#pragma unroll
            for (int r = 0; r < kR; r++)
                total[q][r] = GS_ADD(total[q][r], part[q][r]);
}

/* The FoMs of the step's columns from col0 for the thread's pairs, by the
 * definition (gs_fom_point's operations in its order).  Every thread of the
 * block calls it: it stages the values with the block. */
template <typename T>
__device__ __forceinline__ void fom_step(const step_in<T> &s, uint32_t col0, float total[kQ][kR])
{
    typedef typename lanes<T>::type V;
    for (uint32_t ch = 0; ch < s.n_mask; ch++) {
        __syncthreads();
        stage_rows(s.cols, s.block, s.pad, ch * s.W, s.W, col0);
        __syncthreads();
        if (!s.busy)
            continue;
        float part[kQ][kR] = {};
        channel_sums(s, ch, [&](float sum, V m, V b) { return acc(sum, m, b, s.coef, s.scale); }, part);
        add_used(s.use, ch, part, total);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) search_tiles(const args a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    float *scale = reinterpret_cast<float *>(smem), coef[GS_POW_DEGREE + 1];
    tile t;
    gs_segment g;
    if (!open_tile(a, t, g, scale, coef))
        return;
    const uint32_t W = a.window, k_count = g.n_mask * W;
    T *meas = reinterpret_cast<T *>(smem + GS_EXP_TABLE * sizeof(float));
    T *cols = meas + ((k_count * kTileQ * sizeof(T) + 15) / 16 * 16) / sizeof(T);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    stage_meas(meas, a, t, k_count);
    step_in<T> s = { cols, meas, static_cast<const T *>(a.values) + g.offset, g.n_mask, g.pad, W, {},
                     warp * kQ < (int)t.count, coef, scale, nullptr, warp, lane };
    float best[kQ];
    uint32_t best_col[kQ];
    for (int q = 0; q < kQ; q++) {
        uint32_t j = warp * kQ + q;
        s.use[q] = a.q[t.first + (j < t.count ? j : 0)].use;
        best[q] = __int_as_float(0x7f800000);
        best_col[q] = ~0u;
    }
    for (uint32_t col0 = t.col_begin; col0 < t.col_end; col0 += kTileC) {
        float total[kQ][kR] = {};
        fom_step(s, col0, total);
#pragma unroll
        for (int q = 0; q < kQ; q++)
#pragma unroll
            for (int r = 0; r < kR; r++) {
                uint32_t col = col0 + lane * kR + r;
                if (col < t.col_end)
                    keep(total[q][r], col, best[q], best_col[q]);
            }
    }
    if (!s.busy)
        return;
    for (int q = 0; q < kQ; q++) {
        warp_best(best[q], best_col[q]);
        uint32_t j = warp * kQ + q;
        if (lane == 0 && j < t.count)
            atomicMin(a.answer + t.first + j, pack(best[q], best_col[q]));
    }
}

/*
 * The pruned tile search (gs_gpu_set_prune; actors/psa/psa_cpu.c's
 * search_pruned takes the same steps on the CPU).  The tile's first step as
 * search_tiles computes it gives each search a best FoM; every later step
 * first sums, for each (search, column), the lower bound of
 * gridsearch_fom.h (a table read and an add per value: 5 issue slots, not
 * 12) and compares it with U, the search's best FoM when the step began (the
 * block's, or one another tile has already posted).  The channels stop once
 * no bound of the block is at most its U (a block-wide vote: whole steps are
 * skipped, never single lanes); the (search, column) pairs whose complete
 * bound is at most U are listed in shared memory and get their FoM by
 * gs_fom_point from the point-major copy, a thread each, merged by a shared
 * 64-bit atomic minimum.  A pair left out has a FoM above U: the answers
 * and their bits are search_tiles'.
 */
__device__ __forceinline__ float fom_point(const float *m, const float *b, uint32_t n_mask, uint32_t W,
                                           uint32_t use, const float *coef, const float *scale)
{
    return gs_fom_point(m, b, 1, n_mask, W, use, coef, scale);
}
__device__ __forceinline__ float fom_point(const int16_t *m, const int16_t *b, uint32_t n_mask, uint32_t W,
                                           uint32_t use, const float *coef, const float *scale)
{
    return gs_fom_point16(m, b, 1, n_mask, W, use, coef, scale);
}

__device__ __forceinline__ float diff(float m, float b) { return GS_SUB(m, b); }
__device__ __forceinline__ float diff(int m, int b) { return (float)(m - b) * GS_I16_STEP; }

/* acc + a value's bound: its bucket of gs_lb_index (kFine) or of gs_lb_exponent. */
template <bool kFine> __device__ __forceinline__ float acc_lb(float acc, float d, const float *lb)
{
    return kFine ? gs_acc_lb(acc, d, lb) : GS_ADD(acc, lb[gs_lb_exponent(d)]);
}

/* The bounds of the step from col0 (gs_lb_point's sums) for the pairs the
 * thread holds; false when the block stopped early: then no pair is kept. */
template <typename T, bool kFine>
__device__ __forceinline__ bool bound_step(const step_in<T> &s, uint32_t col0, uint32_t col_end, const float U[kQ],
                                           uint32_t live, float total[kQ][kR])
{
    typedef typename lanes<T>::type V;
    int alive = s.busy && live;
    for (uint32_t ch = 0; ch < s.n_mask; ch++) {
        if (!__syncthreads_or(alive))
            return false;
        stage_rows(s.cols, s.block, s.pad, ch * s.W, s.W, col0);
        __syncthreads();
        if (!alive)
            continue;
        float part[kQ][kR] = {};
        channel_sums(s, ch, [&](float sum, V m, V b) { return acc_lb<kFine>(sum, diff(m, b), s.lb); }, part);
        add_used(s.use, ch, part, total);
        alive = 0;
#pragma unroll
        for (int q = 0; q < kQ; q++)
#pragma unroll
            for (int r = 0; r < kR; r++)
                alive |= (live >> q & 1u) && col0 + s.lane * kR + r < col_end && total[q][r] <= U[q];
    }
    return true;
}

/* The best FoM so far of the tile's search j: the block's, or another tile's posted answer. */
__device__ __forceinline__ float best_so_far(const unsigned long long *block_best, const unsigned long long *answer)
{
    unsigned long long b = *block_best, o = __ldcg(answer);
    b = o < b ? o : b;
    return b == ~0ull ? __int_as_float(0x7f800000) : __uint_as_float((uint32_t)(b >> 32));
}

/* Shared memory of search_tiles_pruned beyond search_tiles': its bound table,
 * the searches' bests, the list's count and the list (16-bit entries): 5 KB
 * or 12 KB, so that a multiprocessor still holds three blocks. */
__host__ __device__ constexpr int bound_entries(bool fine) { return fine ? GS_LB_TABLE : GS_EXP_TABLE; }
constexpr size_t prune_extra(bool fine)
{
    return bound_entries(fine) * sizeof(float) + kTileQ * sizeof(unsigned long long) + 16 +
           kTileQ * kTileC * sizeof(uint16_t);
}

template <typename T, bool kFine>
__global__ void __launch_bounds__(kThreads) search_tiles_pruned(const args a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    float *scale = reinterpret_cast<float *>(smem), coef[GS_POW_DEGREE + 1];
    tile t;
    gs_segment g;
    if (!open_tile(a, t, g, scale, coef))
        return;
    const uint32_t W = a.window, k_count = g.n_mask * W;
    float *lb = scale + GS_EXP_TABLE;
    unsigned long long *block_best = reinterpret_cast<unsigned long long *>(lb + bound_entries(kFine));
    uint32_t *n_list = reinterpret_cast<uint32_t *>(block_best + kTileQ);
    uint16_t *list = reinterpret_cast<uint16_t *>(n_list + 4); /* search j << 8 | column - col0 */
    T *meas = reinterpret_cast<T *>(list + kTileQ * kTileC);
    T *cols = meas + ((k_count * kTileQ * sizeof(T) + 15) / 16 * 16) / sizeof(T);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float *table = kFine ? a.lb : a.lb + GS_LB_TABLE;
    for (int i = threadIdx.x; i < bound_entries(kFine); i += kThreads)
        lb[i] = table[i];
    if (threadIdx.x < kTileQ)
        block_best[threadIdx.x] = ~0ull;
    if (threadIdx.x == 0)
        *n_list = 0;
    stage_meas(meas, a, t, k_count);
    step_in<T> s = { cols, meas, static_cast<const T *>(a.values) + g.offset, g.n_mask, g.pad, W, {},
                     warp * kQ < (int)t.count, coef, scale, lb, warp, lane };
    uint32_t live = 0; /* bit q: the thread's search q is one of the tile's */
    for (int q = 0; q < kQ; q++) {
        uint32_t j = warp * kQ + q;
        s.use[q] = a.q[t.first + (j < t.count ? j : 0)].use;
        live |= (uint32_t)(j < t.count) << q;
    }
    {
        float total[kQ][kR] = {}, best[kQ];
        uint32_t best_col[kQ];
        fom_step(s, t.col_begin, total);
        if (s.busy)
            for (int q = 0; q < kQ; q++) {
                best[q] = __int_as_float(0x7f800000);
                best_col[q] = ~0u;
                for (int r = 0; r < kR; r++) {
                    uint32_t col = t.col_begin + lane * kR + r;
                    if (col < t.col_end)
                        keep(total[q][r], col, best[q], best_col[q]);
                }
                warp_best(best[q], best_col[q]);
                if (lane == 0 && (live >> q & 1u))
                    atomicMin(block_best + warp * kQ + q, pack(best[q], best_col[q]));
            }
    }
    const T *pm = static_cast<const T *>(a.pm) + g.pm_offset;
    for (uint32_t col0 = t.col_begin + kTileC; col0 < t.col_end; col0 += kTileC) {
        __syncthreads(); /* the last step's minima and list are complete */
        float U[kQ], total[kQ][kR] = {};
        for (int q = 0; q < kQ; q++) {
            uint32_t j = warp * kQ + q;
            U[q] = (live >> q & 1u) ? best_so_far(block_best + j, a.answer + t.first + j) : 0.0f;
        }
        if (!bound_step<T, kFine>(s, col0, t.col_end, U, live, total))
            continue;
        if (s.busy)
            for (int q = 0; q < kQ; q++)
                for (int r = 0; r < kR; r++) {
                    uint32_t at = lane * kR + r;
                    if ((live >> q & 1u) && col0 + at < t.col_end && total[q][r] <= U[q])
                        list[atomicAdd(n_list, 1u)] = (uint16_t)((warp * kQ + q) << 8 | at);
                }
        __syncthreads();
        const uint32_t n = *n_list;
        for (uint32_t e = threadIdx.x; e < n; e += kThreads) {
            const uint32_t j = list[e] >> 8, col = col0 + (list[e] & 0xffu);
            const gs_query q = a.q[t.first + j];
            float f = fom_point(static_cast<const T *>(a.meas) + q.meas, pm + (size_t)col * k_count, g.n_mask, W,
                                q.use, coef, scale);
            atomicMin(block_best + j, pack(f, col));
        }
        __syncthreads();
        if (threadIdx.x == 0)
            *n_list = 0;
    }
    __syncthreads();
    if (threadIdx.x < t.count)
        atomicMin(a.answer + t.first + threadIdx.x, block_best[threadIdx.x]);
}

/* The fine stage: one warp per search, its lanes over the columns near its
 * best coarse column (answer[] holds it), 32 at a time.  Each column's values
 * are one point-major run; for each mask channel the warp copies the 32 runs'
 * window into shared memory (consecutive lanes read consecutive values:
 * coalesced; the 32 loads issued before any store), transposed so that lane
 * j then reads column j's samples. */
constexpr int kStagePitch = 33; /* 32 columns + 1: the transposed writes hit 32 banks */

template <typename T>
__global__ void __launch_bounds__(kThreads) search_near(const args a, uint32_t k_max)
{
    typedef typename lanes<T>::type V;
    extern __shared__ __align__(16) unsigned char smem[];
    float *scale = reinterpret_cast<float *>(smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t W = a.window;
    T *meas = reinterpret_cast<T *>(smem + GS_EXP_TABLE * sizeof(float)) + warp * k_max;
    T *stage = reinterpret_cast<T *>(smem + GS_EXP_TABLE * sizeof(float)) + kWarps * k_max +
               warp * W * kStagePitch;
    const uint32_t qi = blockIdx.x * kWarps + warp;
    for (int i = threadIdx.x; i < GS_EXP_TABLE; i += kThreads)
        scale[i] = a.scale[i];
    __syncthreads();
    if (qi >= (a.remap ? a.remap->n : a.n_queries))
        return;
    float coef[GS_POW_DEGREE + 1];
    for (int i = 0; i <= GS_POW_DEGREE; i++)
        coef[i] = a.coef[i];
    const gs_query q = a.q[qi];
    const gs_segment g = a.seg[q.segment];
    const uint32_t k_count = g.n_mask * W;
    const T *src = static_cast<const T *>(a.meas) + q.meas;
    for (uint32_t k = lane; k < k_count; k += 32)
        meas[k] = src[k];
    uint32_t coarse = (uint32_t)a.answer[qi];
    const uint32_t *list = a.near + a.near_first[g.near_first + coarse];
    uint32_t n = a.near_first[g.near_first + coarse + 1] - a.near_first[g.near_first + coarse];
    const T *pm = static_cast<const T *>(a.pm) + g.pm_offset;
    float best = __int_as_float(0x7f800000);
    uint32_t best_col = ~0u;
    for (uint32_t base = 0; base < n; base += 32) {
        const uint32_t j = base + lane;
        const uint32_t col = list[j < n ? j : base];
        const uint32_t run = col * k_count; /* lane jj's column's run, handed round by shuffles */
        float total = 0.0f;
        for (uint32_t ch = 0; ch < g.n_mask; ch++) {
            __syncwarp();
            for (uint32_t i0 = 0; i0 < W; i0 += 32) { /* every lane takes part in the shuffles */
                const uint32_t i = i0 + lane;
                T v[32]; /* 32 independent loads in flight before the first store */
#pragma unroll
                for (int jj = 0; jj < 32; jj++) {
                    uint32_t at = __shfl_sync(0xffffffffu, run, jj) + ch * W + i;
                    v[jj] = i < W ? pm[at] : T(0);
                }
                if (i < W)
#pragma unroll
                    for (int jj = 0; jj < 32; jj++)
                        stage[i * kStagePitch + jj] = v[jj];
            }
            __syncwarp();
            float part = 0.0f;
            for (uint32_t i = 0; i < W; i++)
                part = acc(part, (V)meas[ch * W + i], (V)stage[i * kStagePitch + lane], coef, scale);
            if (q.use >> ch & 1u)
                total = GS_ADD(total, part);
        }
        if (j < n)
            keep(total, col, best, best_col);
    }
    warp_best(best, best_col);
    if (lane == 0)
        a.answer[qi] = pack(best, best_col);
}

/* Pinned and device buffers of one stream: [tiles | searches | measured values] in, answers out. */
struct stage {
    cudaStream_t stream;
    cudaEvent_t done, k0, k1; /* k0, k1: around the chunk's kernels */
    unsigned char *h_in, *d_in;
    unsigned long long *h_out, *d_out;
    size_t cap_in, cap_out;
    size_t first, n; /* the chunk in flight: sorted searches first .. first + n */
    bool busy;
};

} // namespace

struct gs_gpu {
    int device, sms;
    int resident;                  /* search_tiles blocks one multiprocessor holds at once */
    size_t elem;                   /* bytes per value: 4 or 2 */
    void *values, *pm;
    gs_segment *seg, host_seg[GS_MAX_SEGMENTS];
    uint32_t n_segments, *near_first, *near;
    float *scale, *lb, coef[GS_POW_DEGREE + 1];
    uint32_t window, max_k;
    size_t smem_tiles, smem_near, smem_prune[2]; /* search_tiles_pruned's: exponent bound, fine bound */
    int prune;                     /* gs_gpu_set_prune's */
    bool can_prune;                /* the device has search_tiles_pruned's shared memory */
    stage st[2];
    float kernel_ms; /* of the last gs_gpu_search */
    gs_gpu_time total;
    void *h_meas, *d_meas;         /* gs_gpu_pinned's buffer; the batch's measured values on the device */
    size_t cap_h_meas, cap_d_meas; /* bytes */
    cudaEvent_t meas_done;         /* on st[0]: the measured values are on the device */
};

namespace {

size_t align16(size_t n) { return (n + 15) / 16 * 16; }

/* Shared memory of the two kernels for the largest mask x window. */
int plan_shared(gs_gpu *g, char *msg, size_t len)
{
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, g->device), "cudaGetDeviceProperties");
    g->sms = prop.multiProcessorCount;
    g->smem_tiles = GS_EXP_TABLE * sizeof(float) + align16(g->max_k * kTileQ * g->elem) +
                    (size_t)g->window * kTileC * g->elem;
    g->smem_near = GS_EXP_TABLE * sizeof(float) +
                   (size_t)kWarps * (g->max_k + g->window * kStagePitch) * g->elem;
    g->smem_prune[0] = g->smem_tiles + prune_extra(false);
    g->smem_prune[1] = g->smem_tiles + prune_extra(true);
    size_t most = prop.sharedMemPerBlockOptin;
    g->can_prune = g->smem_prune[1] <= most;
    if (g->smem_tiles > most || g->smem_near > most) {
        snprintf(msg, len, "a mask of %u values per search needs %zu bytes of shared memory per block, "
                 "the device has %zu", g->max_k, g->smem_tiles, most);
        return GPU_FAIL;
    }
    if (g->elem == 2) {
        GPU_CHECK(cudaFuncSetAttribute(search_tiles<int16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)g->smem_tiles), "cudaFuncSetAttribute");
        GPU_CHECK(cudaFuncSetAttribute(search_near<int16_t>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)g->smem_near), "cudaFuncSetAttribute");
        if (g->can_prune) {
            GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<int16_t, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g->smem_prune[1]),
                      "cudaFuncSetAttribute");
            GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<int16_t, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g->smem_prune[0]),
                      "cudaFuncSetAttribute");
        }
    } else {
        GPU_CHECK(cudaFuncSetAttribute(search_tiles<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)g->smem_tiles), "cudaFuncSetAttribute");
        GPU_CHECK(cudaFuncSetAttribute(search_near<float>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)g->smem_near), "cudaFuncSetAttribute");
        if (g->can_prune) {
            GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<float, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g->smem_prune[1]),
                      "cudaFuncSetAttribute");
            GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<float, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)g->smem_prune[0]),
                      "cudaFuncSetAttribute");
        }
    }
    if (g->elem == 2)
        GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g->resident, search_tiles<int16_t>, kThreads,
                                                            g->smem_tiles), "cudaOccupancy");
    else
        GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g->resident, search_tiles<float>, kThreads,
                                                            g->smem_tiles), "cudaOccupancy");
    g->resident = g->resident > 0 ? g->resident : 1;
    return GPU_OK;
}

int grow_stage(stage *s, size_t in, size_t out, char *msg, size_t len)
{
    if (in > s->cap_in) {
        cudaFreeHost(s->h_in);
        cudaFree(s->d_in);
        s->h_in = s->d_in = nullptr;
        s->cap_in = 0;
        GPU_CHECK(cudaMallocHost((void **)&s->h_in, in), "cudaMallocHost of the staging buffer");
        GPU_CHECK(cudaMalloc((void **)&s->d_in, in), "cudaMalloc of the staging buffer");
        s->cap_in = in;
    }
    if (out > s->cap_out) {
        cudaFreeHost(s->h_out);
        cudaFree(s->d_out);
        s->h_out = s->d_out = nullptr;
        s->cap_out = 0;
        GPU_CHECK(cudaMallocHost((void **)&s->h_out, out), "cudaMallocHost of the answers");
        GPU_CHECK(cudaMalloc((void **)&s->d_out, out), "cudaMalloc of the answers");
        s->cap_out = out;
    }
    return GPU_OK;
}

/* The batch sorted by segment, cut into chunks of whole tiles. */
struct order {
    size_t *idx;         /* sorted position -> search */
    size_t first[GS_MAX_SEGMENTS + 1]; /* per segment, in sorted positions */
};

int sort_queries(const gs_gpu *g, const gs_query *q, size_t n, order *o)
{
    size_t at[GS_MAX_SEGMENTS];
    memset(o->first, 0, sizeof o->first);
    if (!(o->idx = (size_t *)malloc((n + 1) * sizeof *o->idx)))
        return -1;
    for (size_t i = 0; i < n; i++)
        o->first[q[i].segment + 1]++;
    for (uint32_t s = 0; s < g->n_segments; s++) {
        o->first[s + 1] += o->first[s];
        at[s] = o->first[s];
    }
    for (size_t i = 0; i < n; i++)
        o->idx[at[q[i].segment]++] = i;
    return 0;
}

/* Tiles of sorted searches [from, to) (whole segments' parts), with the
 * columns split so that a small chunk (a round of the PSA's block: a few
 * hundred searches) still fills every multiprocessor's resident blocks
 * four times: shorter blocks, a shorter tail (on the H200 the replay
 * chain's searches took 0.145 s with twice, 0.123 s with four and 0.122 s
 * with eight times; docs/PERF.md). */
size_t make_tiles(const gs_gpu *g, const gs_query *q, const order *o, size_t from, size_t to,
                  bool coarse, tile *out)
{
    size_t base = 0, n = 0;
    for (size_t i = from; i < to;) {
        uint32_t s = q[o->idx[i]].segment;
        size_t end = o->first[s + 1] < to ? o->first[s + 1] : to;
        base += (end - i + kTileQ - 1) / kTileQ;
        i = end;
    }
    size_t want = 4 * (size_t)g->resident * (size_t)g->sms;
    for (size_t i = from; i < to;) {
        uint32_t s = q[o->idx[i]].segment;
        size_t end = o->first[s + 1] < to ? o->first[s + 1] : to;
        const gs_segment &seg = g->host_seg[s];
        uint32_t cols = coarse ? seg.n_coarse : seg.n_points;
        uint32_t steps = (cols + kTileC - 1) / kTileC;
        uint32_t split = base >= want ? 1 : (uint32_t)((want + base - 1) / base);
        split = split > steps ? steps : split;
        uint32_t per = (steps + split - 1) / split * kTileC;
        for (size_t j = i; j < end; j += kTileQ)
            for (uint32_t c0 = 0; c0 < cols; c0 += per)
                out[n++] = tile{ s, (uint32_t)(j - from),
                                 (uint32_t)(end - j < (size_t)kTileQ ? end - j : kTileQ), c0,
                                 c0 + per < cols ? c0 + per : cols };
        i = end;
    }
    return n;
}

size_t tiles_bound(const gs_gpu *g, size_t n_queries)
{
    size_t most_steps = 1;
    for (uint32_t s = 0; s < g->n_segments; s++) {
        size_t steps = (g->host_seg[s].n_points + kTileC - 1) / kTileC;
        most_steps = steps > most_steps ? steps : most_steps;
    }
    return (n_queries / kTileQ + g->n_segments + 1) * most_steps;
}

/* Answers of a finished chunk back into the caller's searches. */
void unpack(const stage *s, const order *o, gs_query *q)
{
    for (size_t j = 0; j < s->n; j++) {
        gs_query *x = &q[o->idx[s->first + j]];
        x->column = (uint32_t)s->h_out[j];
        x->fom = gs_float((uint32_t)(s->h_out[j] >> 32));
    }
}

double seconds()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int finish(gs_gpu *g, stage *s, const order *o, gs_query *q, char *msg, size_t len)
{
    float ms;
    if (!s->busy)
        return GPU_OK;
    double t = seconds();
    GPU_CHECK(cudaEventSynchronize(s->done), "a grid-search chunk");
    g->total.wait_s += seconds() - t;
    GPU_CHECK(cudaEventElapsedTime(&ms, s->k0, s->k1), "cudaEventElapsedTime");
    g->kernel_ms += ms;
    g->total.kernel_s += 1e-3 * ms;
    s->busy = false;
    unpack(s, o, q);
    return GPU_OK;
}

/* The kernels' arguments for n searches: the grid's tables from g, the searches, their measured values, answers
 * and tiles from the caller (a chunk's stage or gs_resident_launch's). */
args make_args(const gs_gpu *g, const gs_query *q, const void *meas, unsigned long long *answer, const tile *tiles,
               size_t n, const gs_remap *remap)
{
    args a;
    a.values = g->values;
    a.pm = g->pm;
    a.seg = g->seg;
    a.near_first = g->near_first;
    a.near = g->near;
    a.scale = g->scale;
    a.lb = g->lb;
    memcpy(a.coef, g->coef, sizeof a.coef);
    a.window = g->window;
    a.q = q;
    a.meas = meas;
    a.answer = answer;
    a.tiles = tiles;
    a.n_queries = (uint32_t)n;
    a.remap = remap;
    return a;
}

/* Queues on st the tile search of n searches and, when adaptive, the search of their neighbours after it. */
template <typename T>
void launch_searches(const gs_gpu *g, const args &a, size_t n_tiles, size_t n, int adaptive, cudaStream_t st)
{
    if (g->prune == GS_PRUNE_FINE && !adaptive)
        search_tiles_pruned<T, true><<<(unsigned)n_tiles, kThreads, g->smem_prune[1], st>>>(a);
    else if (g->prune == GS_PRUNE_EXPONENT && !adaptive)
        search_tiles_pruned<T, false><<<(unsigned)n_tiles, kThreads, g->smem_prune[0], st>>>(a);
    else
        search_tiles<T><<<(unsigned)n_tiles, kThreads, g->smem_tiles, st>>>(a);
    if (adaptive)
        search_near<T><<<(unsigned)((n + kWarps - 1) / kWarps), kThreads, g->smem_near, st>>>(a, g->max_k);
}

/* Packs sorted searches [from, to) into s and queues its work; their
 * measured values are the batch's, already on their way (g->d_meas). */
int launch_chunk(gs_gpu *g, stage *s, const gs_query *q, const order *o, size_t from, size_t to,
                 int adaptive, char *msg, size_t len)
{
    size_t n = to - from;
    size_t max_tiles = tiles_bound(g, n);
    size_t off_q = align16(max_tiles * sizeof(tile)), off_m = off_q + align16(n * sizeof(gs_query));
    int rc = grow_stage(s, off_m, n * sizeof(unsigned long long), msg, len);
    if (rc)
        return rc;
    tile *tiles = reinterpret_cast<tile *>(s->h_in);
    gs_query *sq = reinterpret_cast<gs_query *>(s->h_in + off_q);
    for (size_t j = from; j < to; j++)
        sq[j - from] = q[o->idx[j]];
    size_t n_tiles = make_tiles(g, q, o, from, to, adaptive != 0, tiles);
    GPU_CHECK(cudaMemcpyAsync(s->d_in, s->h_in, off_m, cudaMemcpyHostToDevice, s->stream),
          "copying searches to the device");
    GPU_CHECK(cudaStreamWaitEvent(s->stream, g->meas_done, 0), "cudaStreamWaitEvent");
    GPU_CHECK(cudaMemsetAsync(s->d_out, 0xff, n * sizeof(unsigned long long), s->stream),
          "clearing the answers");
    args a = make_args(g, reinterpret_cast<const gs_query *>(s->d_in + off_q), g->d_meas, s->d_out,
                       reinterpret_cast<const tile *>(s->d_in), n, nullptr);
    GPU_CHECK(cudaEventRecord(s->k0, s->stream), "cudaEventRecord");
    if (g->elem == 2)
        launch_searches<int16_t>(g, a, n_tiles, n, adaptive, s->stream);
    else
        launch_searches<float>(g, a, n_tiles, n, adaptive, s->stream);
    GPU_CHECK(cudaGetLastError(), "launching the grid search");
    GPU_CHECK(cudaEventRecord(s->k1, s->stream), "cudaEventRecord");
    GPU_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, n * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                          s->stream), "copying the answers back");
    GPU_CHECK(cudaEventRecord(s->done, s->stream), "cudaEventRecord");
    s->first = from;
    s->n = n;
    s->busy = true;
    return GPU_OK;
}

/* The batch's measured values (up to the last search's) to the device in one
 * copy on st[0]; every chunk waits for it. */
int send_meas(gs_gpu *g, const gs_query *q, size_t n, const void *meas, char *msg, size_t len)
{
    size_t values = 0;
    for (size_t i = 0; i < n; i++) {
        size_t end = (size_t)q[i].meas + (size_t)g->host_seg[q[i].segment].n_mask * g->window;
        values = end > values ? end : values;
    }
    size_t bytes = values * g->elem + 16;
    if (bytes > g->cap_d_meas) {
        cudaFree(g->d_meas);
        g->d_meas = nullptr;
        g->cap_d_meas = 0;
        GPU_CHECK(cudaMalloc(&g->d_meas, bytes * 2), "cudaMalloc of the measured values");
        g->cap_d_meas = bytes * 2;
    }
    GPU_CHECK(cudaMemcpyAsync(g->d_meas, meas, values * g->elem, cudaMemcpyHostToDevice, g->st[0].stream),
          "copying the measured values to the device");
    GPU_CHECK(cudaEventRecord(g->meas_done, g->st[0].stream), "cudaEventRecord");
    return GPU_OK;
}

/* Chunk boundaries: about kChunks pieces of at least kChunkMin searches, cut between tiles. */
size_t next_cut(const gs_query *q, const order *o, size_t from, size_t n, size_t target)
{
    size_t to = from + target;
    if (to >= n)
        return n;
    uint32_t s = q[o->idx[to]].segment;
    size_t in_seg = to - o->first[s];
    to += (kTileQ - in_seg % kTileQ) % kTileQ;
    return to < o->first[s + 1] ? to : o->first[s + 1];
}

} // namespace

extern "C" void gs_gpu_destroy(gs_gpu *g)
{
    if (!g)
        return;
    gpu_select(g->device, nullptr, 0);
    for (int i = 0; i < 2; i++) {
        stage *s = &g->st[i];
        if (s->stream)
            cudaStreamSynchronize(s->stream);
        cudaFreeHost(s->h_in);
        cudaFreeHost(s->h_out);
        cudaFree(s->d_in);
        cudaFree(s->d_out);
        if (s->done)
            cudaEventDestroy(s->done);
        if (s->k0)
            cudaEventDestroy(s->k0);
        if (s->k1)
            cudaEventDestroy(s->k1);
        if (s->stream)
            cudaStreamDestroy(s->stream);
    }
    if (g->meas_done)
        cudaEventDestroy(g->meas_done);
    cudaFreeHost(g->h_meas);
    cudaFree(g->d_meas);
    cudaFree(g->values);
    cudaFree(g->pm);
    cudaFree(g->seg);
    cudaFree(g->near_first);
    cudaFree(g->near);
    cudaFree(g->scale);
    cudaFree(g->lb);
    free(g);
}

/* The bound tables side by side: lb[] (GS_PRUNE_FINE), then its coarsening per exponent (GS_PRUNE_EXPONENT). */
static int upload_bounds(gs_gpu *g, const gs_pow *pw, char *msg, size_t len)
{
    float both[GS_LB_TABLE + GS_EXP_TABLE];
    memcpy(both, pw->lb, sizeof pw->lb);
    gs_lb_coarsen(pw->lb, both + GS_LB_TABLE);
    return gpu_upload((void **)&g->lb, both, sizeof both, "uploading the bound tables", msg, len);
}

static int create(gs_gpu *g, const gs_basis *b, const gs_pow *pw, char *msg, size_t len)
{
    GPU_SELECT(g->device);
    for (int i = 0; i < 2; i++) {
        GPU_CHECK(cudaStreamCreateWithFlags(&g->st[i].stream, cudaStreamNonBlocking), "cudaStreamCreate");
        GPU_CHECK(cudaEventCreateWithFlags(&g->st[i].done, cudaEventDisableTiming), "cudaEventCreate");
        GPU_CHECK(cudaEventCreate(&g->st[i].k0), "cudaEventCreate");
        GPU_CHECK(cudaEventCreate(&g->st[i].k1), "cudaEventCreate");
    }
    GPU_CHECK(cudaEventCreateWithFlags(&g->meas_done, cudaEventDisableTiming), "cudaEventCreate");
    int rc;
    const char *what = "uploading the resident basis";
    if ((rc = gpu_upload(&g->values, b->values, b->n_values * g->elem, what, msg, len)) ||
        (rc = gpu_upload(&g->pm, b->pm, b->n_pm * g->elem, what, msg, len)) ||
        (rc = gpu_upload((void **)&g->seg, b->seg, b->n_segments * sizeof *b->seg, what, msg, len)) ||
        (rc = gpu_upload((void **)&g->near_first, b->near_first, b->n_near_first * sizeof(uint32_t), what, msg,
                         len)) ||
        (rc = gpu_upload((void **)&g->near, b->near, b->n_near * sizeof(uint32_t), what, msg, len)) ||
        (rc = gpu_upload((void **)&g->scale, pw->scale, sizeof pw->scale, what, msg, len)) ||
        (rc = upload_bounds(g, pw, msg, len)))
        return rc;
    return plan_shared(g, msg, len);
}

extern "C" int gs_gpu_create(gs_gpu **out, int device, const gs_basis *b, const gs_pow *pw,
                             char *msg, size_t len)
{
    *out = nullptr;
    if (b->n_segments < 1 || b->n_segments > GS_MAX_SEGMENTS) {
        snprintf(msg, len, "%u segments: the GPU kernels take 1 to %d", b->n_segments, GS_MAX_SEGMENTS);
        return GPU_FAIL;
    }
    gs_gpu *g = (gs_gpu *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(msg, len, "no host memory for the GPU state");
        return GPU_NOMEM;
    }
    g->device = device;
    g->elem = b->i16 ? 2 : 4;
    g->n_segments = b->n_segments;
    memcpy(g->host_seg, b->seg, b->n_segments * sizeof *b->seg);
    memcpy(g->coef, pw->c, sizeof g->coef);
    g->window = b->window;
    g->max_k = b->max_k;
    int rc = create(g, b, pw, msg, len);
    if (rc) {
        gs_gpu_destroy(g);
        return rc;
    }
    snprintf(msg, len, "%.1f MiB of %s basis resident (k-major and point-major)",
             (b->n_values + b->n_pm) * g->elem / 1048576.0, b->i16 ? "int16" : "float");
    *out = g;
    return GPU_OK;
}

extern "C" int gs_gpu_set_prune(gs_gpu *g, int mode)
{
    if (mode < GS_PRUNE_OFF || mode > GS_PRUNE_FINE || (mode != GS_PRUNE_OFF && !g->can_prune))
        return GPU_FAIL;
    g->prune = mode;
    return GPU_OK;
}

extern "C" double gs_gpu_kernel_ms(const gs_gpu *g) { return g->kernel_ms; }

extern "C" void gs_gpu_times(const gs_gpu *g, gs_gpu_time *t) { *t = g->total; }

extern "C" void *gs_gpu_pinned(gs_gpu *g, size_t bytes)
{
    if (bytes <= g->cap_h_meas)
        return g->h_meas;
    cudaFreeHost(g->h_meas);
    g->h_meas = nullptr;
    g->cap_h_meas = 0;
    if (gpu_select(g->device, nullptr, 0) != GPU_OK || cudaMallocHost(&g->h_meas, bytes * 2) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: the next launch must not report it */
        g->h_meas = nullptr;
        return nullptr;
    }
    g->cap_h_meas = bytes * 2;
    return g->h_meas;
}

extern "C" int gs_gpu_search(gs_gpu *g, gs_query *q, size_t n, const void *meas, int adaptive,
                             char *msg, size_t len)
{
    order o;
    int rc = GPU_OK;
    if (n == 0)
        return GPU_OK;
    GPU_SELECT(g->device);
    g->kernel_ms = 0;
    g->total.calls++;
    if (sort_queries(g, q, n, &o)) {
        snprintf(msg, len, "no host memory to sort %zu searches", n);
        return GPU_NOMEM;
    }
    size_t target = n / kChunks > kChunkMin ? n / kChunks : kChunkMin;
    double t = seconds();
    rc = send_meas(g, q, n, meas, msg, len);
    g->total.pack_s += seconds() - t;
    for (size_t from = 0, c = 0; from < n && rc == GPU_OK; c++) {
        stage *s = &g->st[c % 2];
        size_t to = next_cut(q, &o, from, n, target);
        if ((rc = finish(g, s, &o, q, msg, len)) == GPU_OK) {
            double t = seconds();
            rc = launch_chunk(g, s, q, &o, from, to, adaptive, msg, len);
            g->total.pack_s += seconds() - t;
            g->total.chunks++;
        }
        from = to;
    }
    for (int i = 0; i < 2; i++) {
        int r = finish(g, &g->st[i], &o, q, msg, len);
        rc = rc ? rc : r;
        g->st[i].busy = false;
    }
    free(o.idx);
    return rc;
}

/* ---- searches already on the device (gridsearch_resident.h) */

bool gs_resident_ok(const gs_gpu *g) { return g->elem == sizeof(float); }

int gs_resident_device(const gs_gpu *g) { return g->device; }

size_t gs_resident_plan_bytes(const gs_gpu *g, size_t n) { return tiles_bound(g, n) * sizeof(tile); }

size_t gs_resident_plan(const gs_gpu *g, const gs_query *sorted, size_t n, int adaptive, void *plan)
{
    order o;
    memset(o.first, 0, sizeof o.first);
    if (!(o.idx = (size_t *)malloc((n + 1) * sizeof *o.idx)))
        return (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        o.idx[i] = i;
        o.first[sorted[i].segment + 1]++;
    }
    for (uint32_t s = 0; s < g->n_segments; s++)
        o.first[s + 1] += o.first[s];
    size_t count = n ? make_tiles(g, sorted, &o, 0, n, adaptive != 0, static_cast<tile *>(plan)) : 0;
    free(o.idx);
    return count;
}

cudaError_t gs_resident_launch(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                               const gs_query *d_q, size_t n, const float *d_meas,
                               unsigned long long *d_answer, int adaptive, const gs_remap *d_remap)
{
    if (n == 0)
        return cudaSuccess;
    cudaError_t err = cudaMemsetAsync(d_answer, 0xff, n * sizeof *d_answer, st);
    if (err != cudaSuccess)
        return err;
    launch_searches<float>(g, make_args(g, d_q, d_meas, d_answer, static_cast<const tile *>(d_plan), n, d_remap),
                           n_tiles, n, adaptive, st);
    return cudaGetLastError();
}
