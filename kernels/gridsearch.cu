/* gridsearch.cu: the grid search on the GPU: resident basis, searches grouped by segment in tiles, argmin on the device, chunks on two streams. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <type_traits>

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
/* A channel's window is staged at most kStageBytes at a time (gs_gpu.rows):
 * 20 of 40 float samples, the whole window in int16.  Measured on the H200
 * (sample_runs/psa/h200-kernel5): the pruned float kernel 6.36 -> 6.72 M
 * searches/s with half the window staged; int16 with its half 5.65 -> 5.53. */
constexpr size_t kStageBytes = 10240;
/* Resident blocks of search_tiles_pruned the registers allow (96 each); six, at
 * 80, spill and ran 10 % slower (sample_runs/psa/h200-blocks16). */
constexpr int kPrunedBlocks = 5;
constexpr size_t kChunkMin = 4096; /* searches per chunk, at least (but for the first ones of a batch) */
/* A batch's first chunk: the first kernel waits for its packing and upload
 * alone; each later one is half as large again as the one before it, up to
 * the batch over kChunks, so that its packing and upload (on the H200 about
 * 0.6 of the time the device takes to search it) end while the one before
 * it runs.  On the H200 (sample_runs/psa/h200-chunks14) a first chunk of
 * 1,024 searches against 8,192 took the large batch's lead before its first
 * kernel from 0.94-1.8 ms to 0.23-0.52 ms, and its kernels from 0.92 of its
 * call to 0.96-0.99; growing by half, by a quarter or doubling did the same
 * within the spread. */
constexpr size_t kFirstChunk = 1024;
/* The host's work of a gs_gpu_search in at most kMaxParts parts (gs_runner),
 * each of at least kPartMin searches: fewer would not pay for a parallel region. */
constexpr size_t kMaxParts = 64;
constexpr size_t kPartMin = 4096;
/* A chunk's copies in parts of at least kRunsMin searches' measured values (about 75 KB). */
constexpr size_t kRunsMin = 64;
/* Chunks in flight at most: each packed while the kStages - 1 before it run
 * (on the H200 three did no better than two: sample_runs/psa/h200-chunks14). */
constexpr int kStages = 2;
constexpr int kChunks = 8;
/* A tile of at most kFew searches takes few_tile's mapping (a thread per column). */
constexpr uint32_t kFew = 8;
/* A pruned step with more (search, column) pairs left than this computes
 * the whole step as exact_step does (each staged value serving 16 FoMs)
 * instead of each pair's FoM from the point-major copy (score_list), and
 * the tile's later steps too, with no bound pass: searches whose bounds
 * leave that many pairs (a FoM nearly flat over the points: low energies,
 * several interactions in the segment) leave as many in their next steps. */
constexpr uint32_t kDense = kTileQ * kTileC / 4;

/* Every kernel's dynamic shared memory: the |d|^p exponent table first, except
 * in search_tiles_pruned, where its bound table comes first (its reads then
 * index the block's base with no offset; ptxas still adds the base in a
 * register, one IMAD per read: sample_runs/psa/h200-kernel5/). */
extern __shared__ __align__(16) unsigned char smem[];

struct tile {
    uint32_t segment, first, count; /* searches first .. first + count of the chunk (sorted) */
    uint32_t col_begin, col_end;
};

struct args {
    const void *values, *pm;
    const gs_segment *seg;
    const uint32_t *near_first, *near;
    const float *scale, *lb; /* lb: the exponent bound (GS_PRUNE_EXPONENT) */
    const uint16_t *lbi;     /* the fine bound in fixed point (gs_lb_fixed's), lb_fixed its threshold's factor */
    float lb_fixed;
    gs_log_bound log;        /* the mode's: GS_PRUNE_LOG's (gs_log_bound_make) or GS_PRUNE_GEO's (gs_geo_bound_make) */
    const uint8_t *lbb;      /* GS_PRUNE_BYTE's table (gs_lb_byte's), lb_byte its threshold's factor */
    float lb_byte;
    float coef[GS_POW_DEGREE + 1];
    uint32_t window, rows; /* rows: window samples staged at a time (gs_gpu's) */
    const gs_query *q;
    const void *meas;
    unsigned long long *answer;
    const tile *tiles;
    uint32_t n_queries;
    const gs_remap *remap; /* gs_resident_launch's: the tiles' searches picked out on the device */
    bool guess;            /* gs_gpu_set_guess's: search_tiles_pruned bounds a first step from its own guess */
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

/* Copies rows first .. first + rows of a k-major block (kTileC columns from
 * col0) into dst, 16 bytes a copy, by cp.async (sm_80): straight into shared
 * memory, every copy of the thread in flight at once.  Through registers,
 * ptxas gave each load and its store the same four registers (96 a thread),
 * so each store waited for its own load: five memory latencies a piece, 9 %
 * of the pruned kernel's stall samples on those stores (ncu's source page,
 * sample_runs/psa/h200-lanes12/call3-source).  Returns once the thread's
 * copies have landed: the caller's barrier then makes them the block's. */
template <typename T>
__device__ void stage_rows(T *dst, const T *block, uint32_t pad, uint32_t first, uint32_t rows,
                           uint32_t col0)
{
    constexpr int per = 16 / sizeof(T); /* values per 16-byte copy */
    constexpr int vecs = kTileC / per;
    for (uint32_t v = threadIdx.x; v < rows * vecs; v += kThreads) {
        uint32_t row = v / vecs, x = (v % vecs) * per;
        T *to = dst + row * kTileC + x;
        const T *from = block + (size_t)(first + row) * pad + col0 + x;
#if __CUDA_ARCH__ >= 800
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((uint32_t)__cvta_generic_to_shared(to)),
                     "l"(from)
                     : "memory");
#else /* a CUDA_ARCH before sm_80: through registers */
        *reinterpret_cast<int4 *>(to) = __ldg(reinterpret_cast<const int4 *>(from));
#endif
    }
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
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
    T *cols;                 /* shared: `rows` samples of one channel's window, the step's kTileC columns */
    const T *meas, *block;   /* shared: the searches' values, k-major; global: the segment's block */
    uint32_t n_mask, pad, W, rows, use[kQ];
    bool busy;               /* the thread's warp holds searches of the tile */
    const float *coef, *scale;
    int warp, lane;
    uint32_t log_mul, log_add; /* GS_PRUNE_LOG's or GS_PRUNE_GEO's (gs_log_bound) */
};

/* Channel ch's sums over its staged samples i0 .. i0 + rows for the
 * thread's kQ x kR (search, column) pairs, continuing part in sample order:
 * term(sum, measured, basis). */
template <typename T, typename A, typename Term, int kUnroll = std::is_integral<A>::value ? 2 : 1>
__device__ __forceinline__ void channel_sums(const step_in<T> &s, uint32_t ch, uint32_t i0, uint32_t rows, Term term,
                                             A part[kQ][kR])
{
    typedef typename lanes<T>::type V;
    const T *mrow = s.meas + (ch * s.W + i0) * kTileQ + s.warp * kQ;
    const T *brow = s.cols + s.lane * kR;
    /* integer sums: two samples' terms in one three-input add (kUnroll 2; GS_PRUNE_LOG's too: half the loop's
     * overhead a term) */
#pragma unroll(kUnroll)
    for (uint32_t i = 0; i < rows; i++, mrow += kTileQ, brow += kTileC) {
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

/* Channel ch's sums from 0 for the step from col0, its window staged s.rows
 * samples at a time (fewer rows staged, less shared memory, more resident
 * blocks).  Every thread of the block calls it (synced: they have just met
 * at a barrier); those not active only stage. */
template <typename T, typename Rows>
__device__ __forceinline__ void for_staged(const step_in<T> &s, uint32_t ch, uint32_t col0, bool synced, bool active,
                                           Rows sums)
{
    for (uint32_t i0 = 0; i0 < s.W; i0 += s.rows) {
        const uint32_t rows = s.W - i0 < s.rows ? s.W - i0 : s.rows;
        if (i0 || !synced)
            __syncthreads(); /* every read of the last piece is done */
        stage_rows(s.cols, s.block, s.pad, ch * s.W + i0, rows, col0);
        __syncthreads();
        if (active)
            sums(i0, rows);
    }
}
template <typename T, typename A, typename Term, int kUnroll = std::is_integral<A>::value ? 2 : 1>
__device__ __forceinline__ void staged_sums(const step_in<T> &s, uint32_t ch, uint32_t col0, bool synced, bool active,
                                            Term term, A part[kQ][kR])
{
    for_staged(s, ch, col0, synced, active,
               [&](uint32_t i0, uint32_t rows) { channel_sums<T, A, Term, kUnroll>(s, ch, i0, rows, term, part); });
}

/* A sum of the FoM or of a float bound rounds as the CPU's; a fixed-point bound's is exact. */
__device__ __forceinline__ float sum(float a, float b) { return GS_ADD(a, b); }
__device__ __forceinline__ uint32_t sum(uint32_t a, uint32_t b) { return a + b; }

/* total += part for the searches that use channel ch. */
template <typename A>
__device__ __forceinline__ void add_used(const uint32_t use[kQ], uint32_t ch, const A part[kQ][kR], A total[kQ][kR])
{
#pragma unroll
    for (int q = 0; q < kQ; q++)
        if (use[q] >> ch & 1u)
#pragma unroll
            for (int r = 0; r < kR; r++)
                total[q][r] = sum(total[q][r], part[q][r]);
}

/* The FoMs of the step's columns from col0 for the thread's pairs, by the
 * definition (gs_fom_point's operations in its order).  Every thread of the
 * block calls it: it stages the values with the block. */
template <typename T>
__device__ __forceinline__ void fom_step(const step_in<T> &s, uint32_t col0, float total[kQ][kR])
{
    typedef typename lanes<T>::type V;
    for (uint32_t ch = 0; ch < s.n_mask; ch++) {
        float part[kQ][kR] = {};
        staged_sums(s, ch, col0, false, s.busy, [&](float sum, V m, V b) { return acc(sum, m, b, s.coef, s.scale); },
                    part);
        if (s.busy)
            add_used(s.use, ch, part, total);
    }
}

/*
 * A tile of few searches (kFew at most): a thread per column of the tile's
 * range, kThreads columns at a time, each thread summing its column's FoM
 * for the tile's N searches (count rounded up to a power of two; the slots
 * past count repeat the first search) as gs_fom_point sums it (fom_step's
 * bits), the basis read k-major from global memory (consecutive threads,
 * consecutive columns).  The tile kernels' mapping gives a warp four
 * searches: a tile of one search there keeps one warp of four busy, each of
 * its threads summing 16 (search, column) pairs, so a small round (a few
 * searches a segment: the PSA block's later rounds) waits for that one
 * warp's long step.  meas: shared memory for N x n_mask x window values.
 * A warp stops its columns' channels once each of its columns has, for
 * every search, a partial sum above U, the FoM the search's answer held when
 * the tile began (a seed, gs_resident_launch_seeded's, or another tile's
 * posted minimum: a real column's): the parts are sums of terms >= 0 added
 * in order, so the column's FoM is above U too and cannot be the answer,
 * not even tie with it; such columns are not kept.
 */
constexpr int kFewRun = 10; /* few_tile's basis values per thread per round trip to memory */

template <int N, typename T>
__device__ void few_tile(const args &a, const tile &t, const gs_segment &g, const float *coef, const float *scale,
                         T *meas)
{
    typedef typename lanes<T>::type V;
    const uint32_t W = a.window, k_count = g.n_mask * W;
    const T *src = static_cast<const T *>(a.meas);
    for (uint32_t v = threadIdx.x; v < N * k_count; v += kThreads) { /* value k of slot j at k x N + j */
        const uint32_t j = v % N;
        meas[v] = src[a.q[t.first + (j < t.count ? j : 0)].meas + v / N];
    }
    uint32_t use[N];
    float best[N], U[N];
    uint32_t best_col[N];
#pragma unroll
    for (int j = 0; j < N; j++) {
        const uint32_t i = t.first + (j < (int)t.count ? j : 0);
        const unsigned long long posted = __ldcg(a.answer + i);
        use[j] = a.q[i].use;
        U[j] = posted == ~0ull ? __int_as_float(0x7f800000) : __uint_as_float((uint32_t)(posted >> 32));
        best[j] = __int_as_float(0x7f800000);
        best_col[j] = ~0u;
    }
    __syncthreads();
    const T *block = static_cast<const T *>(a.values) + g.offset;
    for (uint32_t c0 = t.col_begin; c0 < t.col_end; c0 += kThreads) {
        const uint32_t col = c0 + threadIdx.x;
        const T *b = block + (col < t.col_end ? col : t.col_begin);
        float total[N] = {};
        bool beaten = false; /* every column of the warp above U for every search */
        for (uint32_t ch = 0, k = 0; ch < g.n_mask && !beaten; ch++) {
            float part[N] = {};
            for (uint32_t i0 = 0; i0 < W; i0 += kFewRun, k += kFewRun) {
                V bv[kFewRun]; /* loaded before use: kFewRun loads in flight, not one */
#pragma unroll
                for (int u = 0; u < kFewRun; u++)
                    bv[u] = i0 + u < W ? __ldg(b + (size_t)(k + u) * g.pad) : T(0);
#pragma unroll
                for (int u = 0; u < kFewRun; u++)
                    if (i0 + u < W)
#pragma unroll
                        for (int j = 0; j < N; j++)
                            part[j] = acc(part[j], (V)meas[(k + u) * N + j], bv[u], coef, scale);
            }
            k -= (W + kFewRun - 1) / kFewRun * kFewRun - W; /* the last piece's unused rows */
            bool above = true;
#pragma unroll
            for (int j = 0; j < N; j++) {
                if (use[j] >> ch & 1u)
                    total[j] = sum(total[j], part[j]);
                above &= total[j] > U[j];
            }
            beaten = __all_sync(0xffffffffu, above || col >= t.col_end);
        }
        if (col < t.col_end && !beaten)
#pragma unroll
            for (int j = 0; j < N; j++)
                keep(total[j], col, best[j], best_col[j]);
    }
#pragma unroll
    for (int j = 0; j < N; j++) {
        warp_best(best[j], best_col[j]);
        if (threadIdx.x % 32 == 0 && j < (int)t.count)
            atomicMin(a.answer + t.first + j, pack(best[j], best_col[j]));
    }
}

/* few_tile for a tile of at most kFew searches (true), else false. */
template <typename T>
__device__ __forceinline__ bool few(const args &a, const tile &t, const gs_segment &g, const float *coef,
                                    const float *scale, T *meas)
{
    static_assert(kFew <= 8, "few_tile's instances go up to 8 searches");
    if (t.count > kFew)
        return false;
    if (t.count <= 1)
        few_tile<1>(a, t, g, coef, scale, meas);
    else if (t.count <= 2)
        few_tile<2>(a, t, g, coef, scale, meas);
    else if (t.count <= 4)
        few_tile<4>(a, t, g, coef, scale, meas);
    else /* 5 to 8 searches: kFew above 4 only */
        few_tile<(kFew > 4 ? 8 : 4)>(a, t, g, coef, scale, meas);
    return true;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) search_tiles(const args a)
{
    float *scale = reinterpret_cast<float *>(smem), coef[GS_POW_DEGREE + 1];
    tile t;
    gs_segment g;
    if (!open_tile(a, t, g, scale, coef))
        return;
    const uint32_t W = a.window, k_count = g.n_mask * W;
    T *meas = reinterpret_cast<T *>(smem + GS_EXP_TABLE * sizeof(float));
    if (few(a, t, g, coef, scale, meas))
        return;
    T *cols = meas + ((k_count * kTileQ * sizeof(T) + 15) / 16 * 16) / sizeof(T);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    stage_meas(meas, a, t, k_count);
    step_in<T> s = { cols, meas, static_cast<const T *>(a.values) + g.offset, g.n_mask, g.pad, W, a.rows, {},
                     warp * kQ < (int)t.count, coef, scale, warp, lane };
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
 * search_pruned takes the same steps on the CPU).  A step while a search of
 * the tile has no FoM yet (neither the block's nor one another tile of its
 * columns has posted in answer[]: the tile's first step, unless such a tile
 * has finished) takes its U from guess_step (gs_gpu_set_guess; off: it is
 * computed as search_tiles computes it).  Every other step
 * first sums, for each (search, column), the lower bound of
 * gridsearch_fom.h (a table read and an add per value: 5 issue slots, not
 * 12) and compares it with U, the search's best FoM when the step began.
 * The channels stop once no bound of the block is at most its U (a
 * block-wide vote: whole steps are skipped, never single lanes); the
 * (search, column) pairs whose complete bound is at most U are listed in
 * shared memory and get their FoM from the point-major copy in
 * gs_fom_point's order, a few lanes each (score_list; more than kDense of them: the whole step as
 * exact_step computes it), merged by a shared 64-bit atomic minimum.  A pair
 * left out has a FoM above U: the answers and their bits are search_tiles'.
 */
__device__ __forceinline__ float diff(float m, float b) { return GS_SUB(m, b); }
__device__ __forceinline__ float diff(int m, int b) { return (float)(m - b) * GS_I16_STEP; }

/*
 * The two bounds (gs_gpu_set_prune's modes): a value's bucket of
 * gs_lb_exponent in a float table, summed as gs_lb_point sums (<= the FoM
 * bit for bit), or its bucket of gs_lb_index in gs_lb_fixed's 2-byte table,
 * summed exactly in integers and compared with a threshold of U (limit()).
 * The fixed point's sums take an IADD3 per two values against a float sum's
 * FADD per value, and its 4 KB table has fewer bank conflicts than 2,048
 * floats: 2 % faster in the kernel than the same table in float, fewer FoMs
 * than the exponent's (sample_runs/psa/h200-kernel5/).  bound<k>: the
 * table's entry type and the sums' type.
 */
template <int kBound> struct bound {
    typedef float entry;
    typedef float acc;
};
template <> struct bound<GS_PRUNE_FINE> {
    typedef uint16_t entry;
    typedef uint32_t acc;
};

template <> struct bound<GS_PRUNE_BYTE> {
    typedef uint8_t entry;
    typedef uint32_t acc;
};

/* GS_PRUNE_BYTE's table in static shared memory: its address is known to
 * ptxas, so a read is one LDS.U8 at the index plus an immediate. */
__device__ __forceinline__ uint8_t *byte_table()
{
    __shared__ uint8_t table[GS_BYTE_TABLE];
    return table;
}

template <int kBound, typename T>
__device__ __forceinline__ typename bound<kBound>::acc acc_lb(typename bound<kBound>::acc a, float d,
                                                              const step_in<T> &s)
{
    if constexpr (kBound == GS_PRUNE_LOG) { /* no table: gs_log_term's five instructions */
        return sum(a, gs_log_term(d, s.log_mul, s.log_add));
    } else if constexpr (kBound == GS_PRUNE_BYTE) {
        return a + byte_table()[gs_byte_index(d)];
    } else {
        const typename bound<kBound>::entry *t = reinterpret_cast<const typename bound<kBound>::entry *>(smem);
        return sum(a, static_cast<typename bound<kBound>::acc>(t[kBound == GS_PRUNE_FINE ? gs_lb_index(d)
                                                                                          : gs_lb_exponent(d)]));
    }
}

/* What a pair's bound is compared with: U itself (the exponent table's float
 * sums), floor(U x gs_lb_fixed's factor) for the fixed-point sums, or
 * gs_log_limit's threshold for GS_PRUNE_LOG's (U infinite: no limit). */
template <int kBound>
__device__ __forceinline__ void limit(float U, const args &a, uint32_t k_count, float &lim)
{
    lim = kBound == GS_PRUNE_LOG || kBound == GS_PRUNE_GEO ? gs_log_limit(&a.log, U, k_count) : U;
}
template <int kBound>
__device__ __forceinline__ void limit(float U, const args &a, uint32_t k_count, uint32_t &lim)
{
    (void)k_count;
    float x = U * (kBound == GS_PRUNE_BYTE ? a.lb_byte : a.lb_fixed);
    lim = x >= 4294967040.0f ? ~0u : (uint32_t)x;
}

/* GS_PRUNE_GEO's sums of channel ch's staged samples i0 .. i0 + rows (whole
 * groups: gs_gpu_set_prune checks) for the thread's pairs: each group's
 * integer sum of gs_geo_bits, then its F added to total where the search
 * uses the channel (times 1 or 0: a fused multiply-add that rounds as the
 * add, no branch), groups in sample order. */
template <typename T>
__device__ __forceinline__ void geo_sums(const step_in<T> &s, uint32_t ch, uint32_t i0, uint32_t rows,
                                         float total[kQ][kR])
{
    typedef typename lanes<T>::type V;
    const T *mrow = s.meas + (ch * s.W + i0) * kTileQ + s.warp * kQ;
    const T *brow = s.cols + s.lane * kR;
    float used[kQ];
#pragma unroll
    for (int q = 0; q < kQ; q++)
        used[q] = (float)(s.use[q] >> ch & 1u);
    for (uint32_t i = 0; i < rows; i += GS_GEO_GROUP) {
        uint32_t sum[kQ][kR] = {};
#pragma unroll
        for (int u = 0; u < GS_GEO_GROUP; u++, mrow += kTileQ, brow += kTileC) {
            V m[kQ], b[kR];
            load4(mrow, m);
            load4(brow, b);
#pragma unroll
            for (int q = 0; q < kQ; q++)
#pragma unroll
                for (int r = 0; r < kR; r++)
                    sum[q][r] += gs_geo_bits(diff(m[q], b[r]));
        }
#pragma unroll
        for (int q = 0; q < kQ; q++)
#pragma unroll
            for (int r = 0; r < kR; r++)
                total[q][r] = __fmaf_rn(gs_geo_group(sum[q][r], s.log_mul, s.log_add), used[q], total[q][r]);
    }
}

/* The bounds of the step from col0 (gs_lb_point's sums, or their fixed-point
 * counterpart) for the pairs the thread holds; false when the block stopped
 * early: then no pair is kept. */
template <typename T, int kBound, typename A>
__device__ __forceinline__ bool bound_step(const step_in<T> &s, uint32_t col0, uint32_t col_end, const A lim[kQ],
                                           uint32_t live, A total[kQ][kR])
{
    typedef typename lanes<T>::type V;
    int alive = s.busy && live;
    for (uint32_t ch = 0; ch < s.n_mask; ch++) {
        if (!__syncthreads_or(alive))
            return false;
        if constexpr (kBound == GS_PRUNE_GEO) {
            for_staged(s, ch, col0, true, alive, [&](uint32_t i0, uint32_t rows) { geo_sums(s, ch, i0, rows, total); });
            if (!alive)
                continue;
        } else {
        A part[kQ][kR] = {};
        auto term = [&](A a, V m, V b) { return acc_lb<kBound>(a, diff(m, b), s); };
        staged_sums<T, A, decltype(term), std::is_integral<A>::value || kBound == GS_PRUNE_LOG ? 2 : 1>(
            s, ch, col0, true, alive, term, part);
        if (!alive)
            continue;
        add_used(s.use, ch, part, total);
        }
        alive = 0;
#pragma unroll
        for (int q = 0; q < kQ; q++)
#pragma unroll
            for (int r = 0; r < kR; r++)
                alive |= (live >> q & 1u) && col0 + s.lane * kR + r < col_end && total[q][r] <= lim[q];
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
 * (exponent), 8 KB (fine) or 4 KB (log; byte: 4 KB and its static 8 KB table). */
__host__ __device__ constexpr size_t bound_bytes(int mode)
{
    return mode == GS_PRUNE_EXPONENT ? GS_EXP_TABLE * sizeof(float)
           : mode == GS_PRUNE_FINE   ? GS_LB_TABLE * sizeof(uint16_t)
                                     : 0; /* GS_PRUNE_LOG: none; GS_PRUNE_BYTE's is static (byte_table) */
}
constexpr size_t prune_extra(int mode)
{
    return bound_bytes(mode) + kTileQ * sizeof(unsigned long long) + 16 + kTileQ * kTileC * sizeof(uint16_t);
}

/* The step from col0 by the definition (fom_step), its minima merged into
 * block_best: a pruned tile's step before any of its searches has a FoM. */
template <typename T>
__device__ __forceinline__ void exact_step(const step_in<T> &s, uint32_t col0, uint32_t col_end, uint32_t live,
                                           unsigned long long *block_best)
{
    float total[kQ][kR] = {};
    fom_step(s, col0, total);
    if (!s.busy)
        return;
    for (int q = 0; q < kQ; q++) {
        float best = __int_as_float(0x7f800000);
        uint32_t best_col = ~0u;
        for (int r = 0; r < kR; r++) {
            uint32_t col = col0 + s.lane * kR + r;
            if (col < col_end)
                keep(total[q][r], col, best, best_col);
        }
        warp_best(best, best_col);
        if (s.lane == 0 && (live >> q & 1u))
            atomicMin(block_best + s.warp * kQ + q, pack(best, best_col));
    }
}

/* Each of the thread's searches' threshold lim[q] (limit()) from its best
 * FoM so far; true when one of them has none yet. */
template <int kBound, typename A>
__device__ __forceinline__ bool limits(const args &a, const tile &t, uint32_t k_count, int warp, uint32_t live,
                                       const unsigned long long *block_best, A lim[kQ])
{
    bool unknown = false;
    for (int q = 0; q < kQ; q++) {
        const uint32_t j = warp * kQ + q;
        const float U = (live >> q & 1u) ? best_so_far(block_best + j, a.answer + t.first + j) : 0.0f;
        unknown |= U == __int_as_float(0x7f800000);
        limit<kBound>(U, a, k_count, lim[q]);
    }
    return unknown;
}

/*
 * The FoM of one point by a group of G lanes (8, 16 or 32; c0 the lane's
 * place in it), a lane a mask channel (and each G-th after it): its part
 * summed from 0 in sample order, the used channels' parts added in mask
 * order by shuffles: gs_fom_point's operations in its order, so its bits.
 * Every lane of the warp calls it with the same n_mask and G; each group's
 * lanes return its point's FoM.
 */
template <typename T>
__device__ __forceinline__ float lanes_fom(const T *m, const T *b, uint32_t n_mask, uint32_t W, uint32_t use,
                                           uint32_t G, uint32_t c0, const float *coef, const float *scale)
{
    typedef typename lanes<T>::type V;
    float total = 0.0f;
    for (uint32_t base = 0; base < n_mask; base += G) {
        const uint32_t ch = base + c0;
        float part = 0.0f;
        if (ch < n_mask && (use >> ch & 1u))
#pragma unroll 4
            for (uint32_t i = 0; i < W; i++)
                part = acc(part, (V)m[ch * W + i], (V)__ldg(b + ch * W + i), coef, scale);
        for (uint32_t c = 0; c < G && base + c < n_mask; c++) {
            const float p = __shfl_sync(0xffffffffu, part, c, G);
            if (use >> (base + c) & 1u)
                total = GS_ADD(total, p);
        }
    }
    return total;
}

/*
 * The FoMs of the n listed pairs (search j << 8 | column - col0) from the
 * segment's point-major copy pm, merged into block_best: lanes_fom, a group
 * of lanes a pair (the mask's channels rounded up to 8, 16 or 32).  A
 * thread a pair left one warp summing a step's few pairs (the guess's 16, a
 * later step's survivors) for n_mask x window terms each while the block's
 * other warps waited at the next barrier (ncu: 27.9 active threads a warp on
 * average).
 */
template <typename T>
__device__ __forceinline__ void score_list(const step_in<T> &s, const args &a, const tile &t, const gs_segment &g,
                                           const T *pm, uint32_t col0, uint32_t n, const uint16_t *list,
                                           unsigned long long *block_best)
{
    const uint32_t k_count = g.n_mask * s.W;
    const uint32_t G = g.n_mask <= 8 ? 8 : g.n_mask <= 16 ? 16 : 32, per_warp = 32 / G;
    const uint32_t sub = s.lane / G, c0 = s.lane % G;
    for (uint32_t e0 = s.warp * per_warp; e0 < n; e0 += kWarps * per_warp) { /* the same trips for the warp */
        const uint32_t e = e0 + sub < n ? e0 + sub : e0;
        const uint32_t j = list[e] >> 8, col = col0 + (list[e] & 0xffu);
        const gs_query q = a.q[t.first + j];
        const float f = lanes_fom(static_cast<const T *>(a.meas) + q.meas, pm + (size_t)col * k_count, g.n_mask,
                                  s.W, q.use, G, c0, s.coef, s.scale);
        if (c0 == 0 && e0 + sub < n)
            atomicMin(block_best + j, pack(f, col));
    }
}

/*
 * A first step while a search of the tile has no FoM yet (GPUGuess on,
 * gs_gpu_set_guess): the bounds of every pair are summed with no limit, each
 * search's column of least bound (its guess) gets its FoM by gs_fom_point,
 * and that FoM is the search's U, so the step's other pairs are listed by
 * their bounds as in any later step.  The step then costs the bound's 5
 * issue slots a value and kTileQ FoMs, not exact_step's 12.6 slots a value
 * (its least FoM is found either way: a pair whose bound exceeds U has a FoM
 * above it).  On return total holds the bounds and block_best the guesses'
 * FoMs; the list is empty.
 */
template <typename T, int kBound>
__device__ __forceinline__ void guess_step(const step_in<T> &s, const args &a, const tile &t, const gs_segment &g,
                                           uint32_t col0, uint32_t live, typename bound<kBound>::acc total[kQ][kR],
                                           unsigned long long *block_best, uint32_t *n_list, uint16_t *list)
{
    typedef typename bound<kBound>::acc A;
    A open[kQ];
    for (int q = 0; q < kQ; q++)
        if constexpr (std::is_integral<A>::value)
            open[q] = ~0u;
        else
            open[q] = __int_as_float(0x7f800000);
    bound_step<T, kBound>(s, col0, t.col_end, open, live, total); /* no pair ends: never stops early */
    if (s.busy)
        for (int q = 0; q < kQ; q++) {
            float least = __int_as_float(0x7f800000);
            uint32_t at = ~0u;
            for (int r = 0; r < kR; r++)
                if (col0 + s.lane * kR + r < t.col_end)
                    keep((float)total[q][r], s.lane * kR + r, least, at);
            warp_best(least, at);
            if (s.lane == 0 && (live >> q & 1u) && at != ~0u)
                list[atomicAdd(n_list, 1u)] = (uint16_t)((s.warp * kQ + q) << 8 | at);
        }
    __syncthreads();
    score_list(s, a, t, g, static_cast<const T *>(a.pm) + g.pm_offset, col0, *n_list, list, block_best);
    __syncthreads();
    if (threadIdx.x == 0)
        *n_list = 0;
    __syncthreads();
}

template <typename T, int kBound>
__global__ void __launch_bounds__(kThreads, kPrunedBlocks) search_tiles_pruned(const args a)
{
    unsigned char *lb = smem;
    float *scale = reinterpret_cast<float *>(lb + bound_bytes(kBound)), coef[GS_POW_DEGREE + 1];
    tile t;
    gs_segment g;
    if (!open_tile(a, t, g, scale, coef))
        return;
    const uint32_t W = a.window, k_count = g.n_mask * W;
    unsigned long long *block_best = reinterpret_cast<unsigned long long *>(scale + GS_EXP_TABLE);
    uint32_t *n_list = reinterpret_cast<uint32_t *>(block_best + kTileQ);
    uint16_t *list = reinterpret_cast<uint16_t *>(n_list + 4); /* search j << 8 | column - col0 */
    T *meas = reinterpret_cast<T *>(list + kTileQ * kTileC);
    if (few(a, t, g, coef, scale, meas))
        return;
    T *cols = meas + ((k_count * kTileQ * sizeof(T) + 15) / 16 * 16) / sizeof(T);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t *table = reinterpret_cast<const uint32_t *>(
        kBound == GS_PRUNE_FINE ? (const void *)a.lbi : (const void *)a.lb);
    if constexpr (bound_bytes(kBound) > 0)
        for (uint32_t i = threadIdx.x; i < bound_bytes(kBound) / 4; i += kThreads)
            reinterpret_cast<uint32_t *>(lb)[i] = table[i];
    if constexpr (kBound == GS_PRUNE_BYTE)
        for (uint32_t i = threadIdx.x; i < GS_BYTE_TABLE / 4; i += kThreads)
            reinterpret_cast<uint32_t *>(byte_table())[i] = reinterpret_cast<const uint32_t *>(a.lbb)[i];
    if (threadIdx.x < kTileQ)
        block_best[threadIdx.x] = ~0ull;
    if (threadIdx.x == 0)
        *n_list = 0;
    stage_meas(meas, a, t, k_count);
    /* GS_PRUNE_LOG bounds |d|^p by its true value, which gs_acc_pow's reads
     * past GS_EXP_TOP would exceed: a tile whose measured values are not all
     * below GS_LOG_VALUE_MAX (gs_log_bound_make checked the basis's) is
     * searched exactly, every step */
    bool absurd = false;
    if ((kBound == GS_PRUNE_LOG || kBound == GS_PRUNE_GEO) && std::is_same<T, float>::value) {
        __syncthreads();
        for (uint32_t v = threadIdx.x; v < k_count * kTileQ; v += kThreads)
            absurd |= !(fabsf((float)meas[v]) < GS_LOG_VALUE_MAX);
        absurd = __syncthreads_or(absurd);
    }
    step_in<T> s = { cols, meas, static_cast<const T *>(a.values) + g.offset, g.n_mask, g.pad, W, a.rows, {},
                     warp * kQ < (int)t.count, coef, scale, warp, lane, a.log.mul, a.log.add };
    uint32_t live = 0; /* bit q: the thread's search q is one of the tile's */
    for (int q = 0; q < kQ; q++) {
        uint32_t j = warp * kQ + q;
        s.use[q] = a.q[t.first + (j < t.count ? j : 0)].use;
        live |= (uint32_t)(j < t.count) << q;
    }
    const T *pm = static_cast<const T *>(a.pm) + g.pm_offset;
    bool dense = false; /* a step had more than kDense pairs left: the rest are computed exactly */
    for (uint32_t col0 = t.col_begin; col0 < t.col_end; col0 += kTileC) {
        __syncthreads(); /* the staging, or the last step's minima and list, complete */
        if (dense) {
            exact_step(s, col0, t.col_end, live, block_best);
            continue;
        }
        typedef typename bound<kBound>::acc A;
        A lim[kQ], total[kQ][kR] = {};
        /* a search of the thread's with no FoM yet: the step is guessed (guess_step) or computed exactly */
        const bool unknown = limits<kBound>(a, t, k_count, warp, live, block_best, lim) || absurd;
        if (__syncthreads_or(unknown)) {
            if (absurd || !a.guess) {
                exact_step(s, col0, t.col_end, live, block_best);
                continue;
            }
            guess_step<T, kBound>(s, a, t, g, col0, live, total, block_best, n_list, list);
            limits<kBound>(a, t, k_count, warp, live, block_best, lim);
        } else if (!bound_step<T, kBound>(s, col0, t.col_end, lim, live, total))
            continue;
        if (s.busy)
            for (int q = 0; q < kQ; q++)
                for (int r = 0; r < kR; r++) {
                    uint32_t at = lane * kR + r;
                    if ((live >> q & 1u) && col0 + at < t.col_end && total[q][r] <= lim[q])
                        list[atomicAdd(n_list, 1u)] = (uint16_t)((warp * kQ + q) << 8 | at);
                }
        __syncthreads();
        const uint32_t n = *n_list;
        dense = n > kDense;
        if (dense)
            exact_step(s, col0, t.col_end, live, block_best);
        else
            score_list(s, a, t, g, pm, col0, n, list, block_best);
        __syncthreads();
        if (threadIdx.x == 0)
            *n_list = 0;
    }
    __syncthreads();
    if (threadIdx.x < t.count)
        atomicMin(a.answer + t.first + threadIdx.x, block_best[threadIdx.x]);
}

/*
 * The answers' first values for gs_resident_launch_seeded: search i's is its
 * column q[i].column with that column's FoM (none, as the memset's, for a
 * column past its segment's or a search past the remap's count).  A warp a
 * search (lanes_fom: the same bits as the tile kernels' FoM of that
 * column).  The seed is one of the columns, so the least of it and the
 * search's own minima is the search's answer; being known from the start, it
 * is the pruned kernel's U from its first step.
 */
__global__ void __launch_bounds__(kThreads) seed_answers(const args a)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t i = blockIdx.x * kWarps + warp;
    if (i >= a.n_queries)
        return;
    /* rows past the remap's count were not written this launch: their segment is not read */
    const bool picked = i < (a.remap ? a.remap->n : a.n_queries);
    const gs_query q = picked ? a.q[i] : gs_query{};
    const gs_segment g = picked ? a.seg[q.segment] : gs_segment{};
    if (!picked || q.column >= g.n_points) {
        if (lane == 0)
            a.answer[i] = ~0ull;
        return;
    }
    float coef[GS_POW_DEGREE + 1];
    for (int c = 0; c <= GS_POW_DEGREE; c++)
        coef[c] = a.coef[c];
    const uint32_t W = a.window, k_count = g.n_mask * W;
    const float *m = static_cast<const float *>(a.meas) + q.meas;
    const float *b = static_cast<const float *>(a.pm) + g.pm_offset + (size_t)q.column * k_count;
    const float total = lanes_fom(m, b, g.n_mask, W, q.use, 32, lane, coef, a.scale);
    if (lane == 0)
        a.answer[i] = pack(total, q.column);
}

/* The fine stage: one warp per search, its lanes over the columns near its
 * best coarse column (answer[] holds it; local: over the local list of the
 * column the search holds, after the segment's coarse lists), 32 at a time.  Each column's values
 * are one point-major run; for each mask channel the warp copies the 32 runs'
 * window into shared memory (consecutive lanes read consecutive values:
 * coalesced; the 32 loads issued before any store), transposed so that lane
 * j then reads column j's samples. */
constexpr int kStagePitch = 33; /* 32 columns + 1: the transposed writes hit 32 banks */

template <typename T>
__global__ void __launch_bounds__(kThreads) search_near(const args a, uint32_t k_max, bool local)
{
    typedef typename lanes<T>::type V;
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
    const uint32_t at = g.near_first + (local ? g.n_coarse + 1 + q.column : (uint32_t)a.answer[qi]);
    const uint32_t *list = a.near + a.near_first[at];
    uint32_t n = a.near_first[at + 1] - a.near_first[at];
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
    size_t cap_in, cap_out, in_bytes; /* in_bytes: the chunk's, to the device */
    size_t first, n; /* the chunk in flight: sorted searches first .. first + n */
    bool busy;
};

} // namespace

/* A search's `values` measured values from src into its chunk's pinned buffer at dst (the basis's type). */
struct gs_copy {
    const float *src;
    void *dst;
    size_t values;
};

struct gs_gpu {
    int device, sms;
    int resident;                  /* search_tiles blocks one multiprocessor holds at once */
    int resident_pruned;           /* the same of search_tiles_pruned (GS_PRUNE_FINE) */
    size_t elem;                   /* bytes per value: 4 or 2 */
    void *values, *pm;
    gs_segment *seg, host_seg[GS_MAX_SEGMENTS];
    uint32_t n_segments, *near_first, *near;
    float *scale, *lb, coef[GS_POW_DEGREE + 1];
    uint16_t *lbi;
    float lb_fixed;
    uint8_t *lbb;                  /* GS_PRUNE_BYTE's table, lb_byte its factor */
    float lb_byte;
    gs_log_bound log, geo;         /* GS_PRUNE_LOG's and GS_PRUNE_GEO's constants (made by their first gs_gpu_set_prune) */
    int log_state, geo_state;      /* 0: not made yet, 1: made, -1: the bound does not hold (gs_log_bound_make) */
    float p, basis_max;            /* the FoM's p; the largest |value| of the basis */
    uint32_t window, rows, max_k; /* rows: window samples the tile kernels stage at a time */
    size_t smem_tiles, smem_near, smem_prune[GS_PRUNE_MODES]; /* search_tiles_pruned's, per mode */
    int prune;                     /* gs_gpu_set_prune's */
    bool guess;                    /* gs_gpu_set_guess's */
    bool can_prune;                /* the device has search_tiles_pruned's shared memory */
    stage st[kStages];
    float kernel_ms; /* of the last gs_gpu_search: its first kernel's start to its last one's end */
    float lead_ms;   /* of the last gs_gpu_search: its call to its first kernel's start */
    gs_gpu_time total;
    gs_copy *runs;                 /* a chunk's measured values, one run per search (launch_chunk) */
    size_t cap_runs, n_runs;
    size_t *idx, cap_idx;          /* gs_gpu_search's sorted position -> search, kept across calls */
    size_t part_at[kMaxParts][GS_MAX_SEGMENTS]; /* the sort's parts: their searches per segment, then places */
    gs_runner *run;                /* the running gs_gpu_search's runner and its context */
    void *run_ctx;
    cudaEvent_t first_k0;          /* before the first chunk's kernels of a gs_gpu_search */
    cudaEvent_t called;            /* at a gs_gpu_search's call, on the first chunk's stream */
};

namespace {

size_t align16(size_t n) { return (n + 15) / 16 * 16; }

/* Each kernel's dynamic shared memory, for values of type T; the resident search_tiles blocks. */
template <typename T> int set_shared(gs_gpu *g, char *msg, size_t len)
{
    const char *what = "cudaFuncSetAttribute";
    const cudaFuncAttribute max = cudaFuncAttributeMaxDynamicSharedMemorySize;
    GPU_CHECK(cudaFuncSetAttribute(search_tiles<T>, max, (int)g->smem_tiles), what);
    GPU_CHECK(cudaFuncSetAttribute(search_near<T>, max, (int)g->smem_near), what);
    if (g->can_prune) {
        GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<T, GS_PRUNE_EXPONENT>, max,
                                       (int)g->smem_prune[GS_PRUNE_EXPONENT]), what);
        GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<T, GS_PRUNE_FINE>, max, (int)g->smem_prune[GS_PRUNE_FINE]),
                  what);
        GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<T, GS_PRUNE_LOG>, max, (int)g->smem_prune[GS_PRUNE_LOG]),
                  what);
        GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<T, GS_PRUNE_BYTE>, max, (int)g->smem_prune[GS_PRUNE_BYTE]),
                  what);
        GPU_CHECK(cudaFuncSetAttribute(search_tiles_pruned<T, GS_PRUNE_GEO>, max, (int)g->smem_prune[GS_PRUNE_GEO]),
                  what);
    }
    GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g->resident, search_tiles<T>, kThreads, g->smem_tiles),
              "cudaOccupancy");
    if (g->can_prune)
        GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&g->resident_pruned, search_tiles_pruned<T, GS_PRUNE_FINE>,
                                                                kThreads, g->smem_prune[GS_PRUNE_FINE]),
                  "cudaOccupancy");
    return GPU_OK;
}

/* Shared memory of the kernels for the largest mask x window. */
int plan_shared(gs_gpu *g, char *msg, size_t len)
{
    cudaDeviceProp prop;
    GPU_CHECK(cudaGetDeviceProperties(&prop, g->device), "cudaGetDeviceProperties");
    g->sms = prop.multiProcessorCount;
    g->smem_tiles = GS_EXP_TABLE * sizeof(float) + align16(g->max_k * kTileQ * g->elem) +
                    (size_t)g->rows * kTileC * g->elem;
    g->smem_near = GS_EXP_TABLE * sizeof(float) +
                   (size_t)kWarps * (g->max_k + g->window * kStagePitch) * g->elem;
    for (int m = GS_PRUNE_EXPONENT; m < GS_PRUNE_MODES; m++)
        g->smem_prune[m] = g->smem_tiles + prune_extra(m);
    size_t most = prop.sharedMemPerBlockOptin;
    g->can_prune = g->smem_prune[GS_PRUNE_FINE] <= most;
    if (g->smem_tiles > most || g->smem_near > most) {
        snprintf(msg, len, "a mask of %u values per search needs %zu bytes of shared memory per block, "
                 "the device has %zu", g->max_k, g->smem_tiles, most);
        return GPU_FAIL;
    }
    int rc = g->elem == 2 ? set_shared<int16_t>(g, msg, len) : set_shared<float>(g, msg, len);
    if (rc)
        return rc;
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

/* task over its parts, by the running gs_gpu_search's runner (one part: on this thread). */
void run_parts(const gs_gpu *g, gs_task *task, void *arg, size_t parts)
{
    if (parts > 1 && g->run)
        g->run(g->run_ctx, task, arg, parts);
    else
        for (size_t k = 0; k < parts; k++)
            task(arg, k, parts);
}

/* Parts for n items of host work: one per `each` (kPartMin searches by default), at most kMaxParts. */
size_t parts_for(size_t n, size_t each = kPartMin)
{
    size_t parts = n / each;
    return parts < 1 ? 1 : parts > kMaxParts ? kMaxParts : parts;
}

size_t part_start(size_t n, size_t k, size_t parts) { return n * k / parts; }

/* The sort's two passes over part k of the searches: count them per segment, then place them. */
struct sorting {
    gs_gpu *g;
    const gs_query *q;
    size_t n, *idx;
};

void count_part(void *arg, size_t k, size_t parts)
{
    const sorting *x = static_cast<const sorting *>(arg);
    size_t *count = x->g->part_at[k];
    memset(count, 0, GS_MAX_SEGMENTS * sizeof *count);
    for (size_t i = part_start(x->n, k, parts), end = part_start(x->n, k + 1, parts); i < end; i++)
        count[x->q[i].segment]++;
}

void place_part(void *arg, size_t k, size_t parts)
{
    const sorting *x = static_cast<const sorting *>(arg);
    size_t *at = x->g->part_at[k];
    for (size_t i = part_start(x->n, k, parts), end = part_start(x->n, k + 1, parts); i < end; i++)
        x->idx[at[x->q[i].segment]++] = i;
}

/* The batch sorted by segment, stably (each segment's searches in their order), into g's kept index. */
int sort_queries(gs_gpu *g, const gs_query *q, size_t n, order *o)
{
    if (n + 1 > g->cap_idx) {
        free(g->idx);
        g->cap_idx = 0;
        if (!(g->idx = (size_t *)malloc((n + 1) * sizeof *g->idx)))
            return -1;
        g->cap_idx = n + 1;
    }
    sorting x{ g, q, n, g->idx };
    const size_t parts = parts_for(n);
    run_parts(g, count_part, &x, parts);
    size_t at = 0;
    for (uint32_t s = 0; s < g->n_segments; s++) {
        o->first[s] = at;
        for (size_t k = 0; k < parts; k++) {
            size_t c = g->part_at[k][s];
            g->part_at[k][s] = at;
            at += c;
        }
    }
    memset(o->first + g->n_segments, 0, (GS_MAX_SEGMENTS + 1 - g->n_segments) * sizeof *o->first);
    o->first[g->n_segments] = at;
    o->idx = g->idx;
    run_parts(g, place_part, &x, parts);
    return 0;
}

/* Tiles of sorted searches [from, to) (whole segments' parts), with the
 * columns split so that a small chunk still fills every multiprocessor's
 * resident blocks `fill` times: shorter blocks, a shorter tail.
 * gs_gpu_search's chunks take kFillChunk (on the H200, when the replay
 * chain's searches went through it, 0.145 s with twice, 0.123 s with four
 * and 0.122 s with eight times); the whole block's rounds (gs_resident_plan)
 * take kFillResident: the replay chain's device search step (64 MB blocks)
 * took 1.29 s at once, 1.12 s at twice, 0.97 s at four, 0.91 s at eight and
 * 0.90 s at sixteen times (sample_runs/psa/h200-blocks16, docs/PERF.md). */
constexpr size_t kFillChunk = 4;
constexpr size_t kFillResident = 16;
size_t make_tiles(const gs_gpu *g, const gs_query *q, const order *o, size_t from, size_t to,
                  bool coarse, size_t fill, tile *out)
{
    size_t base = 0, n = 0;
    for (size_t i = from; i < to;) {
        uint32_t s = q[o->idx[i]].segment;
        size_t end = o->first[s + 1] < to ? o->first[s + 1] : to;
        base += (end - i + kTileQ - 1) / kTileQ;
        i = end;
    }
    size_t want = fill * (size_t)g->resident * (size_t)g->sms;
    /* piece k of every segment's searches before piece k + 1 of any: the
     * blocks start in about that order, so where the pieces outnumber the
     * resident blocks a later piece finds its searches' answers posted by
     * their first piece and the pruned kernel bounds it from its first step
     * (pieces side by side both computed their first step exactly) */
    bool more = true;
    for (uint32_t k = 0; more; k++) {
        more = false;
        for (size_t i = from; i < to;) {
            uint32_t s = q[o->idx[i]].segment;
            size_t end = o->first[s + 1] < to ? o->first[s + 1] : to;
            const gs_segment &seg = g->host_seg[s];
            uint32_t cols = coarse ? seg.n_coarse : seg.n_points;
            uint32_t steps = (cols + kTileC - 1) / kTileC;
            uint32_t split = base >= want ? 1 : (uint32_t)((want + base - 1) / base);
            split = split > steps ? steps : split;
            uint32_t per = (steps + split - 1) / split * kTileC, c0 = k * per;
            for (size_t j = i; c0 < cols && j < end; j += kTileQ)
                out[n++] = tile{ s, (uint32_t)(j - from), (uint32_t)(end - j < (size_t)kTileQ ? end - j : kTileQ), c0,
                                 c0 + per < cols ? c0 + per : cols };
            more |= c0 + per < cols;
            i = end;
        }
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

/* Answers of a finished chunk back into the caller's searches, part k of them;
 * bad[k]: the chunk's first answer there that names no column of its segment
 * (a device that returned garbage is a failed one), else s->n. */
struct unpacking {
    const gs_gpu *g;
    const stage *s;
    const order *o;
    gs_query *q;
    size_t bad[kMaxParts];
};

void unpack_part(void *arg, size_t k, size_t parts)
{
    unpacking *x = static_cast<unpacking *>(arg);
    const stage *s = x->s;
    x->bad[k] = s->n;
    for (size_t j = part_start(s->n, k, parts), end = part_start(s->n, k + 1, parts); j < end; j++) {
        gs_query *y = &x->q[x->o->idx[s->first + j]];
        const uint32_t column = (uint32_t)s->h_out[j];
        if (column >= x->g->host_seg[y->segment].n_points) {
            x->bad[k] = j;
            return;
        }
        y->column = column;
        y->fom = gs_float((uint32_t)(s->h_out[j] >> 32));
    }
}

int unpack(const gs_gpu *g, const stage *s, const order *o, gs_query *q, char *msg, size_t len)
{
    unpacking x{ g, s, o, q, {} };
    const size_t parts = parts_for(s->n);
    run_parts(g, unpack_part, &x, parts);
    for (size_t k = 0; k < parts; k++)
        if (x.bad[k] < s->n) {
            const gs_query &y = q[o->idx[s->first + x.bad[k]]];
            snprintf(msg, len, "search %zu came back with column %u, segment %u has %u", o->idx[s->first + x.bad[k]],
                     (uint32_t)s->h_out[x.bad[k]], y.segment, g->host_seg[y.segment].n_points);
            return GPU_FAIL;
        }
    return GPU_OK;
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
    g->total.kernel_s += 1e-3 * ms;
    s->busy = false;
    return unpack(g, s, o, q, msg, len);
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
    a.lbi = g->lbi;
    a.lb_fixed = g->lb_fixed;
    a.log = g->prune == GS_PRUNE_GEO ? g->geo : g->log;
    a.lbb = g->lbb;
    a.lb_byte = g->lb_byte;
    memcpy(a.coef, g->coef, sizeof a.coef);
    a.window = g->window;
    a.rows = g->rows;
    a.q = q;
    a.meas = meas;
    a.answer = answer;
    a.tiles = tiles;
    a.n_queries = (uint32_t)n;
    a.remap = remap;
    a.guess = g->guess;
    return a;
}

/* Queues on st the tile search of n searches (GS_FULL; GS_ADAPTIVE: of the
 * coarse points, then the search of their neighbours after it), or their
 * local searches alone (GS_LOCAL). */
template <typename T>
void launch_searches(const gs_gpu *g, const args &a, size_t n_tiles, size_t n, int mode, cudaStream_t st)
{
    const size_t smem = g->smem_prune[g->prune];
    if (g->prune == GS_PRUNE_FINE && mode == GS_FULL)
        search_tiles_pruned<T, GS_PRUNE_FINE><<<(unsigned)n_tiles, kThreads, smem, st>>>(a);
    else if (g->prune == GS_PRUNE_EXPONENT && mode == GS_FULL)
        search_tiles_pruned<T, GS_PRUNE_EXPONENT><<<(unsigned)n_tiles, kThreads, smem, st>>>(a);
    else if (g->prune == GS_PRUNE_LOG && mode == GS_FULL)
        search_tiles_pruned<T, GS_PRUNE_LOG><<<(unsigned)n_tiles, kThreads, smem, st>>>(a);
    else if (g->prune == GS_PRUNE_BYTE && mode == GS_FULL)
        search_tiles_pruned<T, GS_PRUNE_BYTE><<<(unsigned)n_tiles, kThreads, smem, st>>>(a);
    else if (g->prune == GS_PRUNE_GEO && mode == GS_FULL)
        search_tiles_pruned<T, GS_PRUNE_GEO><<<(unsigned)n_tiles, kThreads, smem, st>>>(a);
    else if (mode != GS_LOCAL)
        search_tiles<T><<<(unsigned)n_tiles, kThreads, g->smem_tiles, st>>>(a);
    if (mode != GS_FULL)
        search_near<T><<<(unsigned)((n + kWarps - 1) / kWarps), kThreads, g->smem_near, st>>>(a, g->max_k,
                                                                                             mode == GS_LOCAL);
}

/* Part k of a chunk's copies of measured values (g->runs, g->n_runs of them),
 * quantised on the way for an int16 basis (gs_quantise_run: the CPU's values). */
void copy_part(void *arg, size_t k, size_t parts)
{
    const gs_gpu *g = static_cast<const gs_gpu *>(arg);
    for (size_t j = part_start(g->n_runs, k, parts), end = part_start(g->n_runs, k + 1, parts); j < end; j++) {
        const gs_copy &r = g->runs[j];
        if (g->elem == sizeof(float))
            memcpy(r.dst, r.src, r.values * sizeof(float));
        else
            gs_quantise_run(r.src, static_cast<int16_t *>(r.dst), r.values);
    }
}

/* The chunk's searches in s, each with its measured values copied (in parts,
 * by the runner) after the searches, back to back: its meas then counts from there. */
int pack_chunk(gs_gpu *g, stage *s, const gs_query *q, const order *o, size_t from, size_t to, const float *meas,
               size_t off_q, size_t off_m, char *msg, size_t len)
{
    const size_t n = to - from;
    size_t values = 0;
    for (size_t j = from; j < to; j++)
        values += (size_t)g->host_seg[q[o->idx[j]].segment].n_mask * g->window;
    int rc = grow_stage(s, off_m + values * g->elem + 16, n * sizeof(unsigned long long), msg, len);
    if (rc)
        return rc;
    if (n > g->cap_runs) {
        free(g->runs);
        g->cap_runs = 0;
        if (!(g->runs = (gs_copy *)malloc(n * 2 * sizeof *g->runs))) {
            snprintf(msg, len, "no host memory to pack %zu searches", n);
            return GPU_NOMEM;
        }
        g->cap_runs = n * 2;
    }
    gs_query *sq = reinterpret_cast<gs_query *>(s->h_in + off_q);
    unsigned char *dst = s->h_in + off_m;
    for (size_t j = from, at = 0; j < to; j++) {
        const gs_query &x = q[o->idx[j]];
        const size_t k = (size_t)g->host_seg[x.segment].n_mask * g->window;
        sq[j - from] = x;
        sq[j - from].meas = (uint32_t)at;
        g->runs[j - from] = gs_copy{ meas + x.meas, dst + at * g->elem, k };
        at += k;
    }
    g->n_runs = n;
    run_parts(g, copy_part, g, parts_for(n, kRunsMin));
    s->in_bytes = off_m + values * g->elem;
    return GPU_OK;
}

/* Packs sorted searches [from, to) and their measured values into s and queues its work. */
int launch_chunk(gs_gpu *g, stage *s, const gs_query *q, const order *o, size_t from, size_t to,
                 const float *meas, int mode, char *msg, size_t len)
{
    size_t n = to - from;
    size_t max_tiles = tiles_bound(g, n);
    size_t off_q = align16(max_tiles * sizeof(tile)), off_m = off_q + align16(n * sizeof(gs_query));
    int rc = pack_chunk(g, s, q, o, from, to, meas, off_q, off_m, msg, len);
    if (rc)
        return rc;
    size_t n_tiles = mode == GS_LOCAL ? 0
                                      : make_tiles(g, q, o, from, to, mode == GS_ADAPTIVE, kFillChunk,
                                                   reinterpret_cast<tile *>(s->h_in));
    GPU_CHECK(cudaMemcpyAsync(s->d_in, s->h_in, s->in_bytes, cudaMemcpyHostToDevice, s->stream),
              "copying searches and their measured values to the device");
    GPU_CHECK(cudaMemsetAsync(s->d_out, 0xff, n * sizeof(unsigned long long), s->stream),
          "clearing the answers");
    args a = make_args(g, reinterpret_cast<const gs_query *>(s->d_in + off_q), s->d_in + off_m, s->d_out,
                       reinterpret_cast<const tile *>(s->d_in), n, nullptr);
    GPU_CHECK(cudaEventRecord(s->k0, s->stream), "cudaEventRecord");
    if (from == 0)
        GPU_CHECK(cudaEventRecord(g->first_k0, s->stream), "cudaEventRecord");
    if (g->elem == 2)
        launch_searches<int16_t>(g, a, n_tiles, n, mode, s->stream);
    else
        launch_searches<float>(g, a, n_tiles, n, mode, s->stream);
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

/* Chunk boundaries: pieces of about target searches (gs_gpu_search's: the batch over kChunks, at least
 * kChunkMin), cut between tiles. */
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
    for (int i = 0; i < kStages; i++) {
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
    free(g->runs);
    free(g->idx);
    if (g->first_k0)
        cudaEventDestroy(g->first_k0);
    if (g->called)
        cudaEventDestroy(g->called);
    cudaFree(g->values);
    cudaFree(g->pm);
    cudaFree(g->seg);
    cudaFree(g->near_first);
    cudaFree(g->near);
    cudaFree(g->scale);
    cudaFree(g->lb);
    cudaFree(g->lbi);
    cudaFree(g->lbb);
    free(g);
}

/* The largest |value| of a float basis (GS_PRUNE_LOG's condition, gs_log_bound_make). */
static float largest(const gs_basis *b)
{
    const float *v = static_cast<const float *>(b->values);
    float most = 0.0f;
    for (uint64_t i = 0; i < b->n_values; i++) {
        const float x = fabsf(v[i]);
        if (!(x <= most))
            most = x == x ? x : INFINITY; /* NaN: no bound holds */
    }
    return most;
}

/* The bound tables: lb[] coarsened per exponent (GS_PRUNE_EXPONENT), lb[] in fixed point (GS_PRUNE_FINE), the
 * byte table (GS_PRUNE_BYTE: gs_lb_byte tries every mantissa, about 30 ms). */
static int upload_bounds(gs_gpu *g, const gs_pow *pw, char *msg, size_t len)
{
    float exponent[GS_EXP_TABLE];
    uint16_t fixed[GS_LB_TABLE];
    gs_lb_coarsen(pw->lb, exponent);
    g->lb_fixed = gs_lb_fixed(pw->lb, fixed);
    uint8_t bytes[GS_BYTE_TABLE];
    g->lb_byte = gs_lb_byte(pw, bytes);
    int rc = gpu_upload((void **)&g->lb, exponent, sizeof exponent, "uploading the bound tables", msg, len);
    rc = rc ? rc : gpu_upload((void **)&g->lbb, bytes, sizeof bytes, "uploading the bound tables", msg, len);
    return rc ? rc : gpu_upload((void **)&g->lbi, fixed, sizeof fixed, "uploading the bound tables", msg, len);
}

static int create(gs_gpu *g, const gs_basis *b, const gs_pow *pw, char *msg, size_t len)
{
    GPU_SELECT(g->device);
    for (int i = 0; i < kStages; i++) {
        GPU_CHECK(cudaStreamCreateWithFlags(&g->st[i].stream, cudaStreamNonBlocking), "cudaStreamCreate");
        GPU_CHECK(cudaEventCreateWithFlags(&g->st[i].done, cudaEventDisableTiming), "cudaEventCreate");
        GPU_CHECK(cudaEventCreate(&g->st[i].k0), "cudaEventCreate");
        GPU_CHECK(cudaEventCreate(&g->st[i].k1), "cudaEventCreate");
    }
    GPU_CHECK(cudaEventCreate(&g->first_k0), "cudaEventCreate");
    GPU_CHECK(cudaEventCreate(&g->called), "cudaEventCreate");
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
    g->guess = false;
    g->elem = b->i16 ? 2 : 4;
    g->n_segments = b->n_segments;
    memcpy(g->host_seg, b->seg, b->n_segments * sizeof *b->seg);
    memcpy(g->coef, pw->c, sizeof g->coef);
    g->window = b->window;
    g->rows = (uint32_t)(kStageBytes / (kTileC * g->elem));
    g->rows = b->window < g->rows ? b->window : g->rows;
    g->max_k = b->max_k;
    g->p = pw->p;
    g->basis_max = b->i16 ? 8.0f : largest(b);
    int rc = create(g, b, pw, msg, len);
    if (rc) {
        gs_gpu_destroy(g);
        return rc;
    }
    snprintf(msg, len, "%.1f MiB of %s basis resident (k-major and point-major); %d blocks of the tile search "
             "per multiprocessor, %d pruned", (b->n_values + b->n_pm) * g->elem / 1048576.0, b->i16 ? "int16" : "float",
             g->resident, g->resident_pruned);
    *out = g;
    return GPU_OK;
}

extern "C" int gs_gpu_set_prune(gs_gpu *g, int mode)
{
    if (mode < GS_PRUNE_OFF || mode >= GS_PRUNE_MODES || (mode != GS_PRUNE_OFF && !g->can_prune) ||
        (mode >= GS_PRUNE_FINE && g->window + g->max_k / g->window >= 4096))
        return GPU_FAIL;
    if (mode == GS_PRUNE_LOG && g->log_state == 0)
        g->log_state = gs_log_bound_make(&g->log, g->coef, g->p, g->basis_max) ? -1 : 1;
    if (mode == GS_PRUNE_LOG && g->log_state < 0)
        return GPU_FAIL;
    if (mode == GS_PRUNE_GEO && g->geo_state == 0)
        g->geo_state = gs_geo_bound_make(&g->geo, g->coef, g->p, g->basis_max) || g->window % GS_GEO_GROUP ||
                               g->rows % GS_GEO_GROUP
                           ? -1
                           : 1;
    if (mode == GS_PRUNE_GEO && g->geo_state < 0)
        return GPU_FAIL;
    g->prune = mode;
    return GPU_OK;
}

extern "C" void gs_gpu_set_guess(gs_gpu *g, int on) { g->guess = on != 0; }

extern "C" double gs_gpu_kernel_ms(const gs_gpu *g) { return g->kernel_ms; }

extern "C" double gs_gpu_lead_ms(const gs_gpu *g) { return g->lead_ms; }

extern "C" void gs_gpu_times(const gs_gpu *g, gs_gpu_time *t) { *t = g->total; }

extern "C" int gs_gpu_search(gs_gpu *g, gs_query *q, size_t n, const float *meas, gs_runner *run, void *ctx,
                             int mode, char *msg, size_t len)
{
    order o;
    int rc = GPU_OK;
    if (n == 0)
        return GPU_OK;
    GPU_SELECT(g->device);
    g->kernel_ms = g->lead_ms = 0;
    g->total.calls++;
    GPU_CHECK(cudaEventRecord(g->called, g->st[0].stream), "cudaEventRecord");
    g->run = run;
    g->run_ctx = ctx;
    if (sort_queries(g, q, n, &o)) {
        snprintf(msg, len, "no host memory to sort %zu searches", n);
        return GPU_NOMEM;
    }
    const size_t target = n / kChunks > kChunkMin ? n / kChunks : kChunkMin;
    size_t chunks = 0;
    size_t size = kFirstChunk < target ? kFirstChunk : target;
    for (size_t from = 0; from < n && rc == GPU_OK; chunks++) {
        stage *s = &g->st[chunks % kStages];
        size_t to = next_cut(q, &o, from, n, size);
        if ((rc = finish(g, s, &o, q, msg, len)) == GPU_OK) {
            double t = seconds();
            rc = launch_chunk(g, s, q, &o, from, to, meas, mode, msg, len);
            g->total.pack_s += seconds() - t;
            g->total.chunks++;
        }
        from = to;
        size = size + size / 2 < target ? size + size / 2 : target;
    }
    for (int i = 0; i < kStages; i++) {
        int r = finish(g, &g->st[i], &o, q, msg, len);
        rc = rc ? rc : r;
        g->st[i].busy = false;
    }
    g->run = nullptr;
    for (size_t i = 0; i < chunks && i < (size_t)kStages && rc == GPU_OK; i++) { /* the stage that ended last */
        float ms;
        GPU_CHECK(cudaEventElapsedTime(&ms, g->first_k0, g->st[i].k1), "cudaEventElapsedTime");
        g->kernel_ms = ms > g->kernel_ms ? ms : g->kernel_ms;
    }
    if (rc == GPU_OK)
        GPU_CHECK(cudaEventElapsedTime(&g->lead_ms, g->called, g->first_k0), "cudaEventElapsedTime");
    return rc;
}

/* ---- searches already on the device (gridsearch_resident.h) */

bool gs_resident_ok(const gs_gpu *g) { return g->elem == sizeof(float); }

int gs_resident_device(const gs_gpu *g) { return g->device; }

size_t gs_resident_plan_bytes(const gs_gpu *g, size_t n) { return tiles_bound(g, n) * sizeof(tile); }

size_t gs_resident_plan(const gs_gpu *g, const gs_query *sorted, size_t n, int mode, void *plan)
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
    size_t count = n && mode != GS_LOCAL
                       ? make_tiles(g, sorted, &o, 0, n, mode == GS_ADAPTIVE, kFillResident, static_cast<tile *>(plan))
                       : 0;
    free(o.idx);
    return count;
}

/* gs_resident_launch's and gs_resident_launch_seeded's: the answers cleared, or seeded (seed_answers), then the search. */
static cudaError_t launch_resident(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                                   const gs_query *d_q, size_t n, const float *d_meas, unsigned long long *d_answer,
                                   int mode, const gs_remap *d_remap, bool seeded)
{
    if (n == 0)
        return cudaSuccess;
    const args a = make_args(g, d_q, d_meas, d_answer, static_cast<const tile *>(d_plan), n, d_remap);
    if (seeded) {
        seed_answers<<<(unsigned)((n + kWarps - 1) / kWarps), kThreads, 0, st>>>(a);
    } else {
        cudaError_t err = cudaMemsetAsync(d_answer, 0xff, n * sizeof *d_answer, st);
        if (err != cudaSuccess)
            return err;
    }
    launch_searches<float>(g, a, n_tiles, n, mode, st);
    return cudaGetLastError();
}

cudaError_t gs_resident_launch(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                               const gs_query *d_q, size_t n, const float *d_meas,
                               unsigned long long *d_answer, int mode, const gs_remap *d_remap)
{
    return launch_resident(g, st, d_plan, n_tiles, d_q, n, d_meas, d_answer, mode, d_remap, false);
}

cudaError_t gs_resident_launch_seeded(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                                      const gs_query *d_q, size_t n, const float *d_meas,
                                      unsigned long long *d_answer, const gs_remap *d_remap)
{
    return launch_resident(g, st, d_plan, n_tiles, d_q, n, d_meas, d_answer, GS_FULL, d_remap, true);
}
