/* psa_block.cu: the PSA's GPU block: an input block's traces on the device, aligned, filled, searched, refined and subtracted there, one stream, the host only building each round's list of searches. */
#include <cuda_runtime.h>
#include <math.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_device.h"
#include "gridsearch_resident.h"
#include "psa_block_gpu.h"
#include "psa_pair_fom.h"
#include "psa_refine.h"

namespace {

constexpr int kThreads = 128;

/* A segment on the device: pb_segment with its columns' points at
 * points[point_off], its sparse coarse points' indices at
 * points[sparse_off], and its local lists (local_first's n_points + 1
 * entries at points[local_first_off], counting from points[local_off]). */
struct dseg {
    uint32_t n_points, n_mask, centre, point_off;
    uint8_t mask[PSA_MAX_MASK];
    uint32_t n_coarse, sparse_off, n_sparse, local_first_off, local_off;
};

/* The segments and the joint pair search's |d|^p, one upload (kp's seg
 * points at it: a workspace that shares the tables shares both). */
struct dtab {
    dseg seg[DET_SEGMENTS];
    gs_pow pow;
};

/* What every kernel of the block reads. */
struct kp {
    const uint8_t *block;
    pb_event *ev;
    float *resid; /* per event: 37 x window aligned values */
    uint32_t n_ev;
    const dseg *seg;
    const uint32_t *points;
    const uint32_t *column; /* per basis point: its column in its segment (pb_setup's) */
    pr_basis b;   /* the window, the basis's signals and edges on the device, the shifts */
};

__device__ __forceinline__ float *resid_of(const kp &a, uint32_t j)
{
    return a.resid + (size_t)j * DET_CHANNELS * a.b.w.length;
}

/* Event j as psa_refine.h's steps read it. */
__device__ __forceinline__ pr_event view(const kp &a, uint32_t j)
{
    const pb_event &ev = a.ev[j];
    const dseg &g = a.seg[ev.net[0]];
    return pr_event{ a.block + ev.trace, ev.n_samples, ev.n_net, ev.per_kev, ev.t0, ev.net, ev.e, g.mask, g.n_mask,
                     ev.point[0], ev.point };
}

/* Point p's signals from the window's first basis sample. */
__device__ __forceinline__ const float *signal_of(const kp &a, uint32_t p)
{
    return a.b.signal + (size_t)p * DET_CHANNELS * a.b.n_samples + a.b.w.start;
}

__global__ void __launch_bounds__(kThreads) align_events(const kp a, uint32_t first)
{
    const uint32_t j = first + blockIdx.x;
    const pr_event v = view(a, j);
    pr_align(&a.b.w, &v, PT_DADD(a.ev[j].t0, a.ev[j].shift), resid_of(a, j));
}

/* Search i's measured values: its event's aligned mask channels over the segment's energy. */
__global__ void __launch_bounds__(kThreads) fill(const kp a, const gs_query *q, const uint32_t *owner, int r,
                                                 float *meas, const gs_remap *picked)
{
    if (picked && blockIdx.x >= picked->n)
        return;
    const gs_query x = q[blockIdx.x];
    const uint32_t j = owner[blockIdx.x];
    const dseg &g = a.seg[x.segment];
    pr_fill(resid_of(a, j), g.mask, g.n_mask, a.b.w.length, a.ev[j].e[r], meas + x.meas);
}

/* Each search's answer as hit r of its event (pr_answer, as actors/psa/psa_block.c's answer()). */
__global__ void answer(const kp a, const gs_query *q, const uint32_t *owner, uint32_t n, int r,
                       const unsigned long long *ans, unsigned *err, const gs_remap *picked)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (picked ? picked->n : n))
        return;
    const gs_query x = q[i];
    const dseg &g = a.seg[x.segment];
    pb_event &ev = a.ev[owner[i]];
    const uint32_t col = (uint32_t)ans[i];
    if (x.use && col >= g.n_points) {
        atomicOr(err, 1u);
        return;
    }
    pr_answer(x.use, col, g.centre, a.points + g.point_off, &ev.hit_status[r], &ev.point[r]);
    ev.fom[r] = __uint_as_float((uint32_t)(ans[i] >> 32));
}

/* A refinement pass (pr_pass: psa_block.c's refine() runs the same body), a block per event. */
__global__ void __launch_bounds__(kThreads) refine(const kp a, int pass, uint8_t *todo)
{
    const uint32_t j = blockIdx.x;
    if (a.ev[j].neighbours) { /* as psa_block.c's refine(): neither refined nor searched again */
        if (threadIdx.x == 0)
            todo[j] = 0;
        return;
    }
    const pr_event v = view(a, j);
    pr_pass(&a.b, &v, pass, &a.ev[j].shift, &a.ev[j].before, &todo[j], resid_of(a, j));
}

/*
 * The searches of a refinement pass: round 0's (q0, sorted by segment) of
 * the events it marked, picked out in order into q and owner by one block
 * (a scan of the per-thread counts), with the segments' new places for the
 * round-0 tile plan (gs_remap).  The count joins stats[0].  With ev, each
 * picked search names its event's hit-0 point's column (column[]: the
 * column it answered last) for gs_resident_launch_seeded.
 */
constexpr int kPick = 1024;

__global__ void __launch_bounds__(kPick) pick(const gs_query *q0, const uint32_t *owner0, uint32_t n0,
                                              const uint8_t *todo, gs_remap *remap, gs_query *q,
                                              uint32_t *owner, unsigned long long *stats,
                                              const pb_event *ev = nullptr, const uint32_t *column = nullptr)
{
    __shared__ uint32_t sum[kPick], start[kPick];
    const uint32_t per = (n0 + kPick - 1) / kPick, from = threadIdx.x * per;
    const uint32_t to = from + per < n0 ? from + per : n0;
    uint32_t mine = 0;
    for (uint32_t i = from; i < to; i++)
        mine += todo[owner0[i]] != 0;
    sum[threadIdx.x] = mine;
    for (int off = 1; off < kPick; off <<= 1) {
        __syncthreads();
        const uint32_t add = threadIdx.x >= (unsigned)off ? sum[threadIdx.x - off] : 0;
        __syncthreads();
        sum[threadIdx.x] += add;
    }
    __syncthreads();
    start[threadIdx.x] = sum[threadIdx.x] - mine;
    __syncthreads();
    uint32_t at = start[threadIdx.x];
    for (uint32_t i = from; i < to; i++)
        if (todo[owner0[i]]) {
            q[at] = q0[i];
            if (ev)
                q[at].column = column[ev[owner0[i]].point[0]];
            owner[at++] = owner0[i];
        }
    if (threadIdx.x <= GS_MAX_SEGMENTS) {
        /* where place first0[s] of the list lands: the picks before it (s = GS_MAX_SEGMENTS: all of them) */
        const uint32_t i = remap->first0[threadIdx.x] < n0 ? remap->first0[threadIdx.x] : n0;
        uint32_t pos = sum[kPick - 1];
        if (i < n0) {
            const uint32_t t = i / per;
            pos = start[t];
            for (uint32_t k = t * per; k < i; k++)
                pos += todo[owner0[k]] != 0;
        }
        if (threadIdx.x < GS_MAX_SEGMENTS)
            remap->first[threadIdx.x] = pos;
        else
            remap->n = pos;
    }
    __syncthreads();
    if (threadIdx.x < GS_MAX_SEGMENTS)
        remap->count[threadIdx.x] = (threadIdx.x < GS_MAX_SEGMENTS - 1 ? remap->first[threadIdx.x + 1] : remap->n) -
                                    remap->first[threadIdx.x];
    if (threadIdx.x == 0)
        stats[0] += sum[kPick - 1];
}

/* Hit r's signal times its energy leaves the aligned values. */
__global__ void __launch_bounds__(kThreads) subtract(const kp a, int r)
{
    const uint32_t j = blockIdx.x;
    const pb_event &ev = a.ev[j];
    if ((int)ev.n_net <= r)
        return;
    const float *sig = a.b.signal + (size_t)ev.point[r] * DET_CHANNELS * a.b.n_samples + a.b.w.start;
    pr_subtract(resid_of(a, j), sig, a.b.n_samples, a.b.w.length, ev.e[r]);
}

/* The lowest v of the block's threads, in every thread (blockDim: a multiple of 32, at most kThreads). */
__device__ unsigned long long block_min(unsigned long long v)
{
    __shared__ unsigned long long part[kThreads / 32];
    for (int off = 16; off; off >>= 1) {
        const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
        v = o < v ? o : v;
    }
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = part[0];
    for (unsigned w = 1; w < blockDim.x / 32; w++)
        v = part[w] < v ? part[w] : v;
    __syncthreads();
    return v;
}

/* pairs_min's tiles: kSide points of each side, their values kChunk at a
 * time (a row of kSide + 1 floats: a warp that writes one value of 32
 * points, or of 32 values of one point, hits 32 banks). */
constexpr int kSide = 32, kChunk = 32, kPerThread = kSide * kSide / kThreads, kRow = kSide + 1;
/* side_keys' points: kThreads at a time, their values kSideChunk at a time
 * (a row of kThreads + 2 floats: a warp writes kSideChunk values of two
 * points, 32 banks), in the same shared floats as pairs_min's tiles. */
constexpr int kSideChunk = 16, kSideRow = kThreads + 2, kStage = 2 * kChunk * kRow;
static_assert(kSideChunk * kSideRow <= kStage, "side_keys' values in pairs_min's shared floats");

/* Value k of a point's signals s on the pair's channels: pp_value's, its
 * place off[k] = ch[k / W] * n_samples + k % W taken from the table. */
__device__ __forceinline__ float value_at(const float *s, const uint32_t *off, uint32_t k)
{
    return s[off[k]];
}

/* The lowest pp_key of the pairs (ia[i], ib[j]) of coarse indices, i < na,
 * j < nb, in every thread (a block of kThreads).  Tile by tile of kSide x
 * kSide pairs, a thread's kPerThread pairs summed value after value as
 * psa_pair_fom.h sums them (the same operations and bits), the values staged in
 * shared memory (stage, kStage floats) kChunk at a time: a's less its part
 * (pp_less), b's as they are, each value k of the tile's points read once
 * from the basis (a warp reads kChunk consecutive values of one point)
 * instead of once per pair; off: value_at's places. */
__device__ unsigned long long pairs_min(const kp &a, const pp_pair &p, const uint32_t *off, float *stage,
                                        const float *c, const float *scale, const dseg &ga, const dseg &gb,
                                        const uint32_t *ia, uint32_t na, const uint32_t *ib, uint32_t nb)
{
    __shared__ uint32_t tp[2 * kSide]; /* the tile's points: a's, then b's */
    float(*xa)[kRow] = reinterpret_cast<float(*)[kRow]>(stage), (*xb)[kRow] = xa + kChunk;
    const uint32_t *pa = a.points + ga.point_off, *pb = a.points + gb.point_off, K = p.n_ch * p.W;
    const uint32_t lane = threadIdx.x % kChunk;
    unsigned long long best = ~0ull;
    for (uint32_t i0 = 0; i0 < na; i0 += kSide)
        for (uint32_t j0 = 0; j0 < nb; j0 += kSide) {
            const uint32_t ni = na - i0 < (uint32_t)kSide ? na - i0 : kSide;
            const uint32_t nj = nb - j0 < (uint32_t)kSide ? nb - j0 : kSide;
            float acc[kPerThread];
#pragma unroll
            for (int u = 0; u < kPerThread; u++)
                acc[u] = 0;
            for (uint32_t t = threadIdx.x; t < ni + nj; t += kThreads) /* read once the first chunk's values are */
                tp[t] = t < ni ? pa[ia[i0 + t]] : pb[ib[j0 + t - ni]];
            for (uint32_t k0 = 0; k0 < K; k0 += kChunk) {
                const uint32_t nk = K - k0 < (uint32_t)kChunk ? K - k0 : kChunk, k = k0 + lane;
                __syncthreads(); /* the last chunk's values read */
                if (lane < nk)
                    for (uint32_t row = threadIdx.x / kChunk; row < ni + nj; row += kThreads / kChunk)
                        if (row < ni)
                            xa[lane][row] = pp_less(p.m[k], p.fa, value_at(signal_of(a, tp[row]), off, k));
                        else
                            xb[lane][row - ni] = value_at(signal_of(a, tp[row]), off, k);
                __syncthreads();
#pragma unroll
                for (int u = 0; u < kPerThread; u++) {
                    const uint32_t q = threadIdx.x + (uint32_t)u * kThreads, ii = q / nj, jj = q % nj;
                    if (q < ni * nj)
                        for (uint32_t kk = 0; kk < nk; kk++)
                            acc[u] = pp_acc(acc[u], xa[kk][ii], p.fb, xb[kk][jj], c, scale);
                }
            }
#pragma unroll
            for (int u = 0; u < kPerThread; u++) {
                const uint32_t q = threadIdx.x + (uint32_t)u * kThreads;
                if (q < ni * nj) {
                    const unsigned long long key =
                        pp_key(acc[u], ia[i0 + q / nj] * gb.n_coarse + ib[j0 + q % nj]);
                    best = key < best ? key : best;
                }
            }
        }
    return block_min(best);
}

/* Each side against the seed's other point (psa_pair.c's over_a and
 * over_b): key_a[t] = pp_key(FoM(a's point t, b0), t) for t < na and
 * key_b[t] = pp_key(FoM(a0, b's point t), t) for t < nb, a thread per
 * point, kThreads points at a time, each summed value after value as
 * psa_pair_fom.h sums a pair's (the same bits).  The points' values are staged in stage
 * kSideChunk at a time (a's less its part), half a warp reading consecutive
 * values of one point, instead of each thread walking its own point (a
 * warp's read: 32 scattered points, every value). */
__device__ void side_keys(const kp &a, const pp_pair &p, const uint32_t *off, float *stage, const float *c,
                          const float *scale, const uint32_t *pa, uint32_t na, const uint32_t *pb, uint32_t nb,
                          const float *a0, const float *b0, unsigned long long *key_a, unsigned long long *key_b)
{
    __shared__ float x0[kSideChunk], s0[kSideChunk]; /* a0's values less its part, b0's values */
    __shared__ uint32_t pt[kThreads];                /* the points of this round */
    float(*v)[kSideRow] = reinterpret_cast<float(*)[kSideRow]>(stage);
    const uint32_t K = p.n_ch * p.W, n = na + nb, lane = threadIdx.x % kSideChunk;
    for (uint32_t r0 = 0; r0 < n; r0 += kThreads) {
        const uint32_t nr = n - r0 < (uint32_t)kThreads ? n - r0 : kThreads, t = r0 + threadIdx.x;
        const bool side_a = t < na;
        if (threadIdx.x < nr) /* read once the first chunk's values are */
            pt[threadIdx.x] = side_a ? pa[t] : pb[t - na];
        float acc = 0;
        for (uint32_t k0 = 0; k0 < K; k0 += kSideChunk) {
            const uint32_t nk = K - k0 < (uint32_t)kSideChunk ? K - k0 : kSideChunk, k = k0 + lane;
            __syncthreads(); /* the last chunk's values read */
            if (lane < nk) {
                for (uint32_t row = threadIdx.x / kSideChunk; row < nr; row += kThreads / kSideChunk) {
                    const float x = value_at(signal_of(a, pt[row]), off, k);
                    v[lane][row] = r0 + row < na ? pp_less(p.m[k], p.fa, x) : x;
                }
                if (threadIdx.x < kSideChunk) {
                    x0[lane] = pp_less(p.m[k], p.fa, value_at(a0, off, k));
                    s0[lane] = value_at(b0, off, k);
                }
            }
            __syncthreads();
            if (threadIdx.x < nr)
                for (uint32_t kk = 0; kk < nk; kk++)
                    acc = pp_acc(acc, side_a ? v[kk][threadIdx.x] : x0[kk], p.fb, side_a ? s0[kk] : v[kk][threadIdx.x],
                                 c, scale);
        }
        if (side_a)
            key_a[t] = pp_key(acc, t);
        else if (threadIdx.x < nr)
            key_b[t - na] = pp_key(acc, t - na);
    }
}

/*
 * The joint search of pair blockIdx.x (psa_pair.c's psa_pair_search, the
 * same steps and bits): its values into m (dynamic shared memory, 37 x W:
 * every FoM reads them, then value_at's places, 37 x W), the seed from
 * the sparse points, each side against the seed's other point (their keys
 * into keys, 2 x max_coarse per pair), the PP_KEEP best of each side (by
 * rank: the keys differ) paired; the hits take the best pair's points and
 * the traces follow.
 */
__global__ void __launch_bounds__(kThreads) pair_search(const kp a, const pb_pair *pairs, unsigned long long *keys,
                                                        uint32_t max_coarse)
{
    extern __shared__ float m[];
    __shared__ float c[GS_POW_DEGREE + 1], scale[GS_EXP_TABLE], stage[kStage];
    __shared__ uint8_t ch[PP_MAX_CHANNELS];
    __shared__ uint32_t n_ch, ka[PP_KEEP], kb[PP_KEEP];
    const pb_pair pr = pairs[blockIdx.x];
    pb_event &ev = a.ev[pr.event];
    const dseg &ga = a.seg[ev.net[pr.r]], &gb = a.seg[ev.net[pr.q]];
    const gs_pow &pw = reinterpret_cast<const dtab *>(a.seg)->pow;
    for (uint32_t t = threadIdx.x; t < GS_EXP_TABLE; t += blockDim.x)
        scale[t] = pw.scale[t];
    if (threadIdx.x <= GS_POW_DEGREE)
        c[threadIdx.x] = pw.c[threadIdx.x];
    if (threadIdx.x == 0)
        n_ch = pp_channels(ga.mask, ga.n_mask, gb.mask, gb.n_mask, ev.net[pr.r], ev.net[pr.q], ch);
    __syncthreads();
    const uint32_t W = a.b.w.length, ns = a.b.n_samples, na = ga.n_coarse, nb = gb.n_coarse;
    const uint32_t was_r = ev.point[pr.r], was_q = ev.point[pr.q];
    const float er = ev.e[pr.r], eq = ev.e[pr.q];
    float *resid = resid_of(a, pr.event);
    uint32_t *off = reinterpret_cast<uint32_t *>(m + DET_CHANNELS * W);
    pp_values(resid, signal_of(a, was_r), signal_of(a, was_q), ch, n_ch, W, ns, er, eq, m);
    for (uint32_t k = threadIdx.x; k < n_ch * W; k += blockDim.x)
        off[k] = ch[k / W] * ns + k % W;
    __syncthreads();
    const pp_pair p = { m, ch, n_ch, W, ns, pp_fraction(er, eq), pp_fraction(eq, er) };
    const uint32_t *pa = a.points + ga.point_off, *pb = a.points + gb.point_off;
    const unsigned long long seed = pairs_min(a, p, off, stage, c, scale, ga, gb, a.points + ga.sparse_off,
                                              ga.n_sparse, a.points + gb.sparse_off, gb.n_sparse);
    const float *a0 = signal_of(a, pa[(uint32_t)seed / nb]), *b0 = signal_of(a, pb[(uint32_t)seed % nb]);
    unsigned long long *key_a = keys + (size_t)blockIdx.x * 2 * max_coarse, *key_b = key_a + max_coarse;
    side_keys(a, p, off, stage, c, scale, pa, na, pb, nb, a0, b0, key_a, key_b);
    __syncthreads();
    for (uint32_t t = threadIdx.x; t < na + nb; t += blockDim.x) {
        const bool side_a = t < na;
        const unsigned long long *k = side_a ? key_a : key_b;
        const uint32_t n = side_a ? na : nb, j = side_a ? t : t - na;
        uint32_t rank = 0;
        for (uint32_t i = 0; i < n; i++)
            rank += k[i] < k[j];
        if (rank < pp_kept(n))
            (side_a ? ka : kb)[rank] = j;
    }
    __syncthreads();
    const unsigned long long last = pairs_min(a, p, off, stage, c, scale, ga, gb, ka, pp_kept(na), kb, pp_kept(nb));
    const uint32_t best = (uint32_t)(last < seed ? last : seed), now_r = pa[best / nb], now_q = pb[best % nb];
    pr_replace(resid, signal_of(a, was_r), signal_of(a, now_r), ns, W, er);
    __syncthreads();
    pr_replace(resid, signal_of(a, was_q), signal_of(a, now_q), ns, W, eq);
    if (threadIdx.x == 0) {
        ev.point[pr.r] = now_r;
        ev.point[pr.q] = now_q;
        ev.hit_status[pr.r] = ev.hit_status[pr.q] = 0;
    }
}

/* The neighbour passes' marks at their start: the events with touching hits go, none moved. */
__global__ void neighbours_start(const kp a, uint8_t *going, uint8_t *moved)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= a.n_ev)
        return;
    going[j] = a.ev[j].neighbours;
    moved[j] = 0;
}

/*
 * A neighbour pass's start time (pr_joint_pass, as psa_block.c's
 * joint_starts), a block per event, its reads from shared memory (each
 * start read the traces and the hits' signals from global memory again, a
 * warp's threads, different channels, each its own line).  So the
 * event's trace values (pt_raw's, rows of rs), its first nh hits' window
 * signals (rows of W | 1) and each start's taps are staged once; a thread
 * per start and channel then sums pr_joint_squares' values (joint_value) in
 * sample order, the starts in groups of kJoint / 37, the channels added and
 * the starts scanned in order as pr_scan_best does, and where the start
 * moved the traces less every hit are written as pr_align and pr_subtract
 * leave them (the same value per sample).  An event whose trace is longer
 * than rs takes pr_joint_pass itself.
 */
constexpr int kJoint = 192, kJointHits = 3, kBatch = 8;
constexpr size_t kShared = 48 * 1024; /* dynamic shared memory a kernel has without asking */
struct jtap {
    double f;
    uint32_t lo, hi;
};

/* n values loaded (load(t)) kBatch at a time per thread, all in flight, then stored (store(t, v)). */
template <class L, class S> __device__ __forceinline__ void batched(uint32_t n, L load, S store)
{
    for (uint32_t t0 = threadIdx.x; t0 < n; t0 += kBatch * blockDim.x) {
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; u++)
            if (t0 + u * blockDim.x < n)
                v[u] = load(t0 + u * blockDim.x);
#pragma unroll
        for (int u = 0; u < kBatch; u++)
            if (t0 + u * blockDim.x < n)
                store(t0 + u * blockDim.x, v[u]);
    }
}

/* Channel ch's sample i of the joint sum at taps lo, hi, f: the trace
 * between them less each hit's signal times its energy, hits in order
 * (pr_joint_squares' value); hits from nh on read the basis. */
__device__ __forceinline__ float joint_value(const kp &a, const pb_event &ev, const float *raw, uint32_t rs,
                                             const float *hit, uint32_t nh, const float *e, uint32_t ch, uint32_t i,
                                             uint32_t lo, uint32_t hi, double f)
{
    const uint32_t ws = a.b.w.length | 1u;
    float v = pt_lerp(raw[ch * rs + lo], raw[ch * rs + hi], f);
    uint32_t k = 0;
    for (; k < nh; k++)
        v = pt_subtract(v, e[k], hit[(k * DET_CHANNELS + ch) * ws + i]);
    for (; k < ev.n_net; k++)
        v = pt_subtract(v, e[k], signal_of(a, ev.point[k])[(size_t)ch * a.b.n_samples + i]);
    return v;
}

__global__ void __launch_bounds__(kJoint) joint_start(const kp a, int pass, const uint8_t *going, uint8_t *moved,
                                                      uint32_t rs, uint32_t nh)
{
    extern __shared__ double js[];
    __shared__ float e[DET_SEGMENTS];
    const uint32_t j = blockIdx.x;
    if (!going[j])
        return;
    pb_event &ev = a.ev[j];
    if (ev.n_samples > rs) {
        const pr_event v = view(a, j);
        pr_joint_pass(&a.b, &v, pass, &ev.shift, &moved[j], resid_of(a, j));
        return;
    }
    const uint32_t W = a.b.w.length, ws = W | 1u, ns = ev.n_samples, group = blockDim.x / DET_CHANNELS;
    const uint32_t held = nh < ev.n_net ? nh : ev.n_net;
    const float per_kev = ev.per_kev;
    const uint8_t *trace = a.block + ev.trace;
    jtap *tap = reinterpret_cast<jtap *>(js);
    double *part = js + 2 * group * W;
    float *raw = reinterpret_cast<float *>(part + group * DET_CHANNELS), *hit = raw + DET_CHANNELS * rs;
    for (uint32_t t = threadIdx.x; t < ev.n_net; t += blockDim.x)
        e[t] = ev.e[t];
    batched(
        DET_CHANNELS * ns, [&](uint32_t t) { return pt_raw(trace, ns, per_kev, 0, t); },
        [&](uint32_t t, float v) { raw[t / ns * rs + t % ns] = v; });
    batched(
        held * DET_CHANNELS * W,
        [&](uint32_t t) {
            const uint32_t row = t / W;
            return signal_of(a, ev.point[row / DET_CHANNELS])[(size_t)(row % DET_CHANNELS) * a.b.n_samples + t % W];
        },
        [&](uint32_t t, float v) { hit[t / W * ws + t % W] = v; });
    __syncthreads();
    const double was = ev.shift;
    pr_scan s;
    pr_scan_init(&s, ev.t0, pass == 1 ? pr_own(&a.b, ev.point[0]) : was, a.b.steps, a.b.shift_step);
    while (pr_scan_next(&s))
        for (int k0 = 0; k0 < s.n; k0 += (int)group) {
            const uint32_t m = (uint32_t)(s.n - k0) < group ? (uint32_t)(s.n - k0) : group;
            for (uint32_t t = threadIdx.x; t < m * W; t += blockDim.x) {
                const pt_tap tp = pt_tap_at(&a.b.w, ns, pr_scan_start(&s, k0 + (int)(t / W)), t % W);
                tap[t] = jtap{ tp.f, tp.lo, tp.hi };
            }
            __syncthreads();
            for (uint32_t t = threadIdx.x; t < m * DET_CHANNELS; t += blockDim.x) {
                const jtap *tk = tap + t / DET_CHANNELS * W;
                const uint32_t ch = t % DET_CHANNELS;
                double acc = 0;
#pragma unroll 4
                for (uint32_t i = 0; i < W; i++) {
                    const jtap tp = tk[i];
                    const float v = joint_value(a, ev, raw, rs, hit, held, e, ch, i, tp.lo, tp.hi, tp.f);
                    acc = PT_DADD(acc, PT_DMUL((double)v, (double)v));
                }
                part[t] = acc;
            }
            __syncthreads();
            for (uint32_t k = 0; k < m; k++) {
                double sum = 0;
                for (int c = 0; c < DET_CHANNELS; c++)
                    sum = PT_DADD(sum, part[k * DET_CHANNELS + c]);
                pr_scan_take(&s, k0 + (int)k, sum);
            }
            __syncthreads();
        }
    if (s.best == was)
        return;
    if (threadIdx.x == 0) {
        ev.shift = s.best;
        moved[j] = 1;
    }
    const double t = PT_DADD(ev.t0, s.best);
    float *out = resid_of(a, j);
    for (uint32_t v = threadIdx.x; v < DET_CHANNELS * W; v += blockDim.x) {
        const pt_tap tp = pt_tap_at(&a.b.w, ns, t, v % W);
        out[v] = joint_value(a, ev, raw, rs, hit, held, e, v / W, v % W, tp.lo, tp.hi, tp.f);
    }
}

/* A neighbour pass's search i of hit r (picked): its values with the hit's
 * own signal put back (pr_fill_back), its column the hit's (where a local
 * search starts: psa_block.c's gather). */
__global__ void __launch_bounds__(kThreads) fill_back(const kp a, gs_query *q, const uint32_t *owner, int r,
                                                      float *meas, const gs_remap *picked)
{
    if (blockIdx.x >= picked->n)
        return;
    const gs_query x = q[blockIdx.x];
    const uint32_t j = owner[blockIdx.x];
    const dseg &g = a.seg[x.segment];
    if (threadIdx.x == 0)
        q[blockIdx.x].column = a.column[a.ev[j].point[r]];
    pr_fill_back(resid_of(a, j), signal_of(a, a.ev[j].point[r]), a.b.n_samples, g.mask, g.n_mask, a.b.w.length,
                 a.ev[j].e[r], meas + x.meas);
}

/* Its answer as hit r (pr_answer); where the hit moved, the traces follow
 * (pr_replace) and the event is marked (psa_block.c's neighbour_round). */
__global__ void __launch_bounds__(kThreads) answer_moved(const kp a, const gs_query *q, const uint32_t *owner, int r,
                                                         const unsigned long long *ans, unsigned *err,
                                                         const gs_remap *picked, uint8_t *moved)
{
    if (blockIdx.x >= picked->n)
        return;
    const gs_query x = q[blockIdx.x];
    const uint32_t j = owner[blockIdx.x], col = (uint32_t)ans[blockIdx.x];
    const dseg &g = a.seg[x.segment];
    pb_event &ev = a.ev[j];
    if (x.use && col >= g.n_points) {
        if (threadIdx.x == 0)
            atomicOr(err, 1u);
        return;
    }
    uint16_t status;
    uint32_t now;
    pr_answer(x.use, col, g.centre, a.points + g.point_off, &status, &now);
    const uint32_t was = ev.point[r];
    __syncthreads();
    if (now != was)
        pr_replace(resid_of(a, j), signal_of(a, was), signal_of(a, now), a.b.n_samples, a.b.w.length, ev.e[r]);
    if (threadIdx.x == 0) {
        ev.hit_status[r] = status;
        ev.point[r] = now;
        ev.fom[r] = __uint_as_float((uint32_t)(ans[blockIdx.x] >> 32));
        if (now != was)
            moved[j] = 1;
    }
}

/* Whether hit r of event ev (segment g) touches another: another net-charge segment in g's mask (psa_event_touches). */
__device__ bool touches(const pb_event &ev, const dseg &g, int r)
{
    for (uint32_t c = 0; c < g.n_mask; c++)
        for (uint32_t k = 0; k < ev.n_net; k++)
            if ((int)k != r && ev.net[k] == g.mask[c])
                return true;
    return false;
}

/* The better (gs_better: lower FoM, then lower column) of the block's threads' answers, in every thread. */
__device__ void block_best(float &fom, uint32_t &col)
{
    __shared__ float part_fom[kThreads / 32];
    __shared__ uint32_t part_col[kThreads / 32];
    for (int off = 16; off; off >>= 1) {
        const float f = __shfl_xor_sync(0xffffffffu, fom, off);
        const uint32_t c = __shfl_xor_sync(0xffffffffu, col, off);
        if (gs_better(f, c, fom, col)) {
            fom = f;
            col = c;
        }
    }
    if ((threadIdx.x & 31) == 0) {
        part_fom[threadIdx.x >> 5] = fom;
        part_col[threadIdx.x >> 5] = col;
    }
    __syncthreads();
    fom = part_fom[0];
    col = part_col[0];
    for (unsigned w = 1; w < blockDim.x / 32; w++)
        if (gs_better(part_fom[w], part_col[w], fom, col)) {
            fom = part_fom[w];
            col = part_col[w];
        }
    __syncthreads();
}

/*
 * Rounds [r0, r1) of a neighbour pass that searches them locally, a block
 * per going event, round after round (its rounds depend on each other
 * through its traces, events do not): each of its hits r that touches
 * another filled with its own signal put back (fill_back's), searched over
 * the local list of its point's column as gridsearch.cu's search_near
 * sums it (per mask channel from 0 in sample order, the channels added in
 * mask order, every channel used: every other hit is subtracted; the lower
 * FoM, then the lower column), a thread per column, and answered
 * (answer_moved's).  The searches join stats[1].  Dynamic shared memory:
 * PSA_MAX_MASK x window measured values.
 */
constexpr int kLoads = 8;
__global__ void __launch_bounds__(kThreads) local_rounds(const kp a, int r0, int r1, const uint8_t *going,
                                                         uint8_t *moved, unsigned *err, unsigned long long *stats)
{
    extern __shared__ float meas[];
    __shared__ float scale[GS_EXP_TABLE];
    const uint32_t j = blockIdx.x;
    if (!going[j])
        return;
    const gs_pow &pw = reinterpret_cast<const dtab *>(a.seg)->pow;
    float c[GS_POW_DEGREE + 1];
    for (int i = 0; i <= GS_POW_DEGREE; i++)
        c[i] = pw.c[i];
    for (uint32_t t = threadIdx.x; t < GS_EXP_TABLE; t += blockDim.x)
        scale[t] = pw.scale[t];
    pb_event &ev = a.ev[j];
    float *resid = resid_of(a, j);
    const uint32_t W = a.b.w.length, ns = a.b.n_samples;
    unsigned long long searched = 0;
    for (int r = r0; r < r1 && r < (int)ev.n_net; r++) {
        const dseg &g = a.seg[ev.net[r]];
        if (!touches(ev, g, r))
            continue;
        const uint32_t was = ev.point[r], use = (1u << g.n_mask) - 1u, *cols = a.points + g.point_off;
        const float e = ev.e[r];
        __syncthreads(); /* the last round's traces (and the table) written */
        pr_fill_back(resid, signal_of(a, was), ns, g.mask, g.n_mask, W, e, meas);
        __syncthreads();
        const uint32_t *first = a.points + g.local_first_off + a.column[was];
        const uint32_t *list = a.points + g.local_off + first[0], n = first[1] - first[0];
        float best = __int_as_float(0x7f800000);
        uint32_t best_col = ~0u;
        for (uint32_t t = threadIdx.x; t < n; t += blockDim.x) {
            const uint32_t col = list[t];
            const float *s = signal_of(a, cols[col]);
            float total = 0.0f;
            for (uint32_t ch = 0; ch < g.n_mask; ch++) {
                const float *sc = s + (size_t)g.mask[ch] * ns, *m = meas + ch * W;
                float part = 0.0f;
                for (uint32_t i0 = 0; i0 < W; i0 += kLoads) { /* the chunk's reads in flight at once */
                    float v[kLoads];
#pragma unroll
                    for (int u = 0; u < kLoads; u++)
                        v[u] = i0 + u < W ? sc[i0 + u] : 0.0f;
#pragma unroll
                    for (int u = 0; u < kLoads; u++)
                        if (i0 + u < W)
                            part = gs_acc_pow(part, GS_SUB(m[i0 + u], v[u]), c, scale);
                }
                if (use >> ch & 1u)
                    total = GS_ADD(total, part);
            }
            if (gs_better(total, col, best, best_col)) {
                best = total;
                best_col = col;
            }
        }
        block_best(best, best_col);
        if (best_col >= g.n_points) {
            if (threadIdx.x == 0)
                atomicOr(err, 1u);
            return;
        }
        uint16_t status;
        uint32_t now;
        pr_answer(use, best_col, g.centre, cols, &status, &now);
        if (now != was)
            pr_replace(resid, signal_of(a, was), signal_of(a, now), ns, W, e);
        if (threadIdx.x == 0) {
            ev.hit_status[r] = status;
            ev.point[r] = now;
            ev.fom[r] = best;
            if (now != was)
                moved[j] = 1;
        }
        searched++;
    }
    if (threadIdx.x == 0 && searched)
        atomicAdd(stats + 1, searched);
}

/* After a pass: the events it moved go on, the marks cleared. */
__global__ void neighbours_next(uint32_t n, uint8_t *going, uint8_t *moved)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    going[j] = moved[j];
    moved[j] = 0;
}

/* A device buffer kept from block to block, grown when asked for more. */
struct dbuf {
    void *p;
    size_t cap;
};
/* A pinned host buffer, likewise, and the event after the last copy out of it. */
struct hbuf {
    void *p;
    size_t cap;
    cudaEvent_t sent;
};

} // namespace

/* Timing events recorded after each step of a block, read once it is done. */
constexpr int kMarks = 256;

struct pb_gpu {
    gs_gpu *search;
    int device;
    cudaStream_t st;
    cudaEvent_t idle;              /* blocking: the host sleeps while it waits */
    cudaEvent_t mark[kMarks];
    int mark_step[kMarks], n_marks;
    kp a;
    dseg *d_seg;
    uint32_t *d_points;
    float *d_signal, *d_point_edge;
    dbuf block, ev, resid, todo, in[2], meas, answers, err, rq, rowner, stats;
    dbuf nb, nb_keys, nb_marks; /* the neighbour passes' lists, the pair searches' keys, the marks */
    hbuf h_ev, h_in[2], h_err, h_nb;
    int flip, adaptive;
    bool whole;                    /* the block's bytes all went before its events (pb_gpu_send) */
    /* the block's round 0 (sorted by segment), whose plan the refinement's searches reuse */
    const void *plan0;
    size_t tiles0, n0;
    const gs_query *q0;
    const uint32_t *owner0;
    gs_remap *remap0;
    double step_s[PB_STEPS];
};

namespace {

cudaError_t grow(dbuf *b, size_t bytes)
{
    if (bytes <= b->cap)
        return cudaSuccess;
    cudaFree(b->p);
    b->p = nullptr;
    b->cap = 0;
    size_t want = bytes + bytes / 2 + 256;
    cudaError_t err = cudaMalloc(&b->p, want);
    if (err == cudaSuccess)
        b->cap = want;
    return err;
}

/* Grows a pinned buffer once the copies out of it are done. */
cudaError_t grow(hbuf *b, size_t bytes)
{
    if (bytes <= b->cap)
        return cudaSuccess;
    cudaError_t err = cudaEventSynchronize(b->sent);
    if (err != cudaSuccess)
        return err;
    cudaFreeHost(b->p);
    b->p = nullptr;
    b->cap = 0;
    size_t want = bytes + bytes / 2 + 256;
    if ((err = cudaMallocHost(&b->p, want)) == cudaSuccess)
        b->cap = want;
    return err;
}

void free_bufs(pb_gpu *p)
{
    dbuf *d[] = { &p->block, &p->ev, &p->resid, &p->todo, &p->in[0], &p->in[1], &p->meas, &p->answers,
                  &p->err, &p->rq, &p->rowner, &p->stats, &p->nb, &p->nb_keys, &p->nb_marks };
    for (dbuf *b : d)
        cudaFree(b->p);
    hbuf *h[] = { &p->h_ev, &p->h_in[0], &p->h_in[1], &p->h_err, &p->h_nb };
    for (hbuf *b : h) {
        cudaFreeHost(b->p);
        if (b->sent)
            cudaEventDestroy(b->sent);
    }
}

/* A workspace's own stream and events (pb_gpu_create's and pb_gpu_fork's). */
int open_stream(pb_gpu *p, char *msg, size_t len)
{
    GPU_SELECT(p->device);
    GPU_CHECK(cudaStreamCreateWithFlags(&p->st, cudaStreamNonBlocking), "cudaStreamCreate");
    GPU_CHECK(cudaEventCreateWithFlags(&p->idle, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
    for (int i = 0; i < kMarks; i++)
        GPU_CHECK(cudaEventCreate(&p->mark[i]), "cudaEventCreate");
    hbuf *h[] = { &p->h_ev, &p->h_in[0], &p->h_in[1], &p->h_err, &p->h_nb };
    for (hbuf *b : h) {
        GPU_CHECK(cudaEventCreateWithFlags(&b->sent, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
        GPU_CHECK(cudaEventRecord(b->sent, p->st), "cudaEventRecord");
    }
    return GPU_OK;
}

int create(pb_gpu *p, const pb_setup *s, char *msg, size_t len)
{
    int rc = open_stream(p, msg, len);
    if (rc)
        return rc;
    dtab *tab = (dtab *)calloc(1, sizeof *tab);
    uint32_t off = 0;
    if (!tab) {
        snprintf(msg, len, "no host memory for the segments");
        return GPU_NOMEM;
    }
    dseg *seg = tab->seg;
    tab->pow = *s->pow;
    for (int g = 0; g < DET_SEGMENTS; g++) {
        const pb_segment &x = s->seg[g];
        const uint32_t n_local = x.local_first ? x.n_points + 1 + x.local_first[x.n_points] : 0;
        seg[g] = dseg{ x.n_points, x.n_mask, x.centre, off, {}, x.n_coarse, off + x.n_points, x.n_sparse,
                       off + x.n_points + x.n_sparse, off + x.n_points + x.n_sparse + x.n_points + 1 };
        memcpy(seg[g].mask, x.mask, sizeof seg[g].mask);
        off += x.n_points + x.n_sparse + n_local;
    }
    const uint32_t column_off = off;
    off += s->n_points;
    uint32_t *points = (uint32_t *)malloc((off + 1) * sizeof *points);
    if (!points) {
        free(tab);
        snprintf(msg, len, "no host memory for the segments' points");
        return GPU_NOMEM;
    }
    for (int g = 0; g < DET_SEGMENTS; g++) {
        const pb_segment &x = s->seg[g];
        memcpy(points + seg[g].point_off, x.point, x.n_points * sizeof *points);
        memcpy(points + seg[g].sparse_off, x.sparse, x.n_sparse * sizeof *points);
        if (x.local_first) {
            memcpy(points + seg[g].local_first_off, x.local_first, (x.n_points + 1) * sizeof *points);
            memcpy(points + seg[g].local_off, x.local, x.local_first[x.n_points] * sizeof *points);
        }
    }
    memcpy(points + column_off, s->column, s->n_points * sizeof *points);
    rc = gpu_upload((void **)&p->d_points, points, off * sizeof *points, "uploading the segments' points", msg, len);
    free(points);
    if (!rc)
        rc = gpu_upload((void **)&p->d_seg, tab, sizeof *tab, "uploading the segments", msg, len);
    free(tab);
    if (rc ||
        (rc = gpu_upload((void **)&p->d_signal, s->signal, (size_t)s->n_points * DET_CHANNELS * s->n_samples * sizeof(float),
                      "uploading the basis signals", msg, len)) ||
        (rc = gpu_upload((void **)&p->d_point_edge, s->point_edge, s->n_points * sizeof(float),
                     "uploading the points' edges", msg, len)))
        return rc;
    kp &a = p->a;
    a.seg = p->d_seg;
    a.points = p->d_points;
    a.column = p->d_points + column_off;
    a.b = pr_basis{ s->window, s->n_samples, p->d_signal, p->d_point_edge, s->basis_edge, s->shift_step,
                    s->half_step, s->steps };
    return GPU_OK;
}

unsigned blocks_for(size_t n, unsigned per) { return (unsigned)((n + per - 1) / per); }

/* The time since the previous mark counts as `step` (idle time waiting for
 * the host included); past kMarks a block's later steps merge into its last. */
cudaError_t mark(pb_gpu *p, int step)
{
    if (p->n_marks == kMarks)
        return cudaSuccess;
    p->mark_step[p->n_marks] = step;
    return cudaEventRecord(p->mark[p->n_marks++], p->st);
}

/* Fills, searches and answers searches dq (events down) as hit r; with
 * picked, those the pick put there (n: a bound); seeded: a full search
 * whose records name the column each answered last
 * (gs_resident_launch_seeded). */
int search(pb_gpu *p, int r, const void *plan, size_t tiles, const gs_query *dq, const uint32_t *down, size_t n,
           const gs_remap *picked, bool seeded, char *msg, size_t len)
{
    fill<<<(unsigned)n, kThreads, 0, p->st>>>(p->a, dq, down, r, (float *)p->meas.p, picked);
    GPU_CHECK(cudaGetLastError(), "launching the fill");
    GPU_CHECK(mark(p, PB_FILL), "cudaEventRecord");
    const float *meas = (const float *)p->meas.p;
    unsigned long long *ans = (unsigned long long *)p->answers.p;
    GPU_CHECK(seeded ? gs_resident_launch_seeded(p->search, p->st, plan, tiles, dq, n, meas, ans, picked)
                     : gs_resident_launch(p->search, p->st, plan, tiles, dq, n, meas, ans, p->adaptive, picked),
              "launching the grid search");
    GPU_CHECK(mark(p, PB_SEARCH), "cudaEventRecord");
    answer<<<blocks_for(n, kThreads), kThreads, 0, p->st>>>(p->a, dq, down, (uint32_t)n, r,
                                                            (const unsigned long long *)p->answers.p,
                                                            (unsigned *)p->err.p, picked);
    GPU_CHECK(cudaGetLastError(), "launching the answers");
    GPU_CHECK(mark(p, PB_ANSWER), "cudaEventRecord");
    return GPU_OK;
}

/* Sleeps until everything queued so far is done. */
cudaError_t wait_idle(pb_gpu *p)
{
    cudaError_t err = cudaEventRecord(p->idle, p->st);
    return err != cudaSuccess ? err : cudaEventSynchronize(p->idle);
}

} // namespace

extern "C" int pb_gpu_create(pb_gpu **out, gs_gpu *search, const pb_setup *s, char *msg, size_t len)
{
    *out = nullptr;
    if (!gs_resident_ok(search)) {
        snprintf(msg, len, "the GPU block takes a float basis (Data float)");
        return GPU_FAIL;
    }
    pb_gpu *p = (pb_gpu *)calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, len, "no host memory for the GPU block");
        return GPU_NOMEM;
    }
    p->search = search;
    p->device = gs_resident_device(search);
    int rc = create(p, s, msg, len);
    if (rc) {
        pb_gpu_destroy(p);
        return rc;
    }
    snprintf(msg, len, "%.1f MiB of basis signals resident for the alignment, refinement and subtraction",
             (double)s->n_points * DET_CHANNELS * s->n_samples * sizeof(float) / 1048576.0);
    *out = p;
    return GPU_OK;
}

extern "C" int pb_gpu_fork(pb_gpu **out, const pb_gpu *from, char *msg, size_t len)
{
    *out = nullptr;
    pb_gpu *p = (pb_gpu *)calloc(1, sizeof *p);
    if (!p) {
        snprintf(msg, len, "no host memory for a GPU block workspace");
        return GPU_NOMEM;
    }
    p->search = from->search;
    p->device = from->device;
    int rc = open_stream(p, msg, len);
    if (rc) {
        pb_gpu_destroy(p);
        return rc;
    }
    /* from's tables, read only; this workspace's own d_* stay null, so that pb_gpu_destroy leaves them */
    p->a.seg = from->a.seg;
    p->a.points = from->a.points;
    p->a.column = from->a.column;
    p->a.b = from->a.b;
    *out = p;
    return GPU_OK;
}

extern "C" void pb_gpu_destroy(pb_gpu *p)
{
    if (!p)
        return;
    gpu_select(p->device, nullptr, 0);
    if (p->st)
        cudaStreamSynchronize(p->st);
    free_bufs(p);
    cudaFree(p->d_seg);
    cudaFree(p->d_points);
    cudaFree(p->d_signal);
    cudaFree(p->d_point_edge);
    if (p->idle)
        cudaEventDestroy(p->idle);
    for (int i = 0; i < kMarks; i++)
        if (p->mark[i])
            cudaEventDestroy(p->mark[i]);
    if (p->st)
        cudaStreamDestroy(p->st);
    cudaGetLastError(); /* what failed here must not be reported by the next call */
    free(p);
}

extern "C" int pb_gpu_send(pb_gpu *p, const void *host, size_t bytes, char *msg, size_t len)
{
    GPU_SELECT(p->device);
    GPU_CHECK(grow(&p->block, bytes), "cudaMalloc of the block");
    p->n_marks = 0;
    GPU_CHECK(mark(p, PB_LOAD), "cudaEventRecord");
    GPU_CHECK(cudaMemcpyAsync(p->block.p, host, bytes, cudaMemcpyHostToDevice, p->st), "copying the block");
    return GPU_OK;
}

extern "C" int pb_gpu_begin(pb_gpu *p, size_t bytes, size_t n, bool sent, char *msg, size_t len)
{
    const size_t values = (size_t)DET_CHANNELS * p->a.b.w.length;
    GPU_SELECT(p->device);
    GPU_CHECK(grow(&p->block, bytes), "cudaMalloc of the block");
    GPU_CHECK(grow(&p->ev, n * sizeof(pb_event)), "cudaMalloc of the events");
    GPU_CHECK(grow(&p->resid, n * values * sizeof(float)), "cudaMalloc of the aligned traces");
    GPU_CHECK(grow(&p->todo, n), "cudaMalloc of the refinement's marks");
    GPU_CHECK(grow(&p->err, 16), "cudaMalloc");
    GPU_CHECK(grow(&p->stats, 16), "cudaMalloc");
    GPU_CHECK(grow(&p->h_ev, n * sizeof(pb_event)), "cudaMallocHost of the events");
    GPU_CHECK(grow(&p->h_err, 32), "cudaMallocHost");
    p->whole = sent;
    if (!sent) {
        p->n_marks = 0;
        GPU_CHECK(mark(p, PB_LOAD), "cudaEventRecord");
    }
    GPU_CHECK(cudaMemsetAsync(p->err.p, 0, 16, p->st), "clearing the error flag");
    GPU_CHECK(cudaMemsetAsync(p->stats.p, 0, 16, p->st), "clearing the counts");
    p->n0 = 0;
    p->a.block = (const uint8_t *)p->block.p;
    p->a.ev = (pb_event *)p->ev.p;
    p->a.resid = (float *)p->resid.p;
    p->a.n_ev = 0;
    return GPU_OK;
}

extern "C" pb_event *pb_gpu_events(pb_gpu *p)
{
    return (pb_event *)p->h_ev.p;
}

extern "C" int pb_gpu_part(pb_gpu *p, const void *host, size_t at, size_t bytes, size_t first, size_t n, char *msg,
                           size_t len)
{
    const pb_event *h_ev = (const pb_event *)p->h_ev.p + first;
    if (!p->whole)
        GPU_CHECK(cudaMemcpyAsync((uint8_t *)p->block.p + at, (const uint8_t *)host + at, bytes,
                                  cudaMemcpyHostToDevice, p->st), "copying the block");
    GPU_CHECK(cudaMemcpyAsync((pb_event *)p->ev.p + first, h_ev, n * sizeof *h_ev, cudaMemcpyHostToDevice, p->st),
          "copying the events");
    if (n)
        align_events<<<(unsigned)n, kThreads, 0, p->st>>>(p->a, (uint32_t)first);
    GPU_CHECK(cudaGetLastError(), "launching the alignment");
    p->a.n_ev = (uint32_t)(first + n);
    return GPU_OK;
}

extern "C" int pb_gpu_loaded(pb_gpu *p, char *msg, size_t len)
{
    GPU_CHECK(mark(p, PB_LOAD), "cudaEventRecord");
    return GPU_OK;
}

extern "C" int pb_gpu_search(pb_gpu *p, int r, const gs_query *q, const uint32_t *owner, size_t n,
                             int adaptive, char *msg, size_t len)
{
    if (n == 0) {
        if (r == 0)
            p->n0 = 0;
        return GPU_OK;
    }
    hbuf *h = &p->h_in[p->flip];
    dbuf *d = &p->in[p->flip];
    p->flip ^= 1;
    size_t plan = (gs_resident_plan_bytes(p->search, n) + 15) / 16 * 16;
    size_t remap_at = plan, q_at = remap_at + (sizeof(gs_remap) + 15) / 16 * 16;
    size_t owner_at = q_at + (n * sizeof *q + 15) / 16 * 16, bytes = owner_at + n * sizeof *owner;
    const gs_query &last = q[n - 1];
    size_t values = (size_t)last.meas + (size_t)p->a.b.w.length * PSA_MAX_MASK;
    GPU_CHECK(cudaEventSynchronize(h->sent), "the copy of the round before the last");
    GPU_CHECK(grow(h, bytes), "cudaMallocHost of a round's searches");
    GPU_CHECK(grow(d, bytes), "cudaMalloc of a round's searches");
    GPU_CHECK(grow(&p->meas, values * sizeof(float)), "cudaMalloc of the measured values");
    GPU_CHECK(grow(&p->answers, n * sizeof(unsigned long long)), "cudaMalloc of the answers");
    unsigned char *hp = (unsigned char *)h->p, *dp = (unsigned char *)d->p;
    size_t tiles = gs_resident_plan(p->search, q, n, adaptive, hp);
    if (tiles == (size_t)-1) {
        snprintf(msg, len, "no host memory to plan %zu searches", n);
        return GPU_NOMEM;
    }
    gs_remap *rm = (gs_remap *)(hp + remap_at);
    memset(rm, 0, sizeof *rm);
    for (size_t i = 0, s = 0; s <= GS_MAX_SEGMENTS; s++) {
        while (i < n && q[i].segment < s)
            i++;
        rm->first0[s] = (uint32_t)i;
    }
    memcpy(hp + q_at, q, n * sizeof *q);
    memcpy(hp + owner_at, owner, n * sizeof *owner);
    GPU_CHECK(cudaMemcpyAsync(dp, hp, bytes, cudaMemcpyHostToDevice, p->st), "copying a round's searches");
    GPU_CHECK(cudaEventRecord(h->sent, p->st), "cudaEventRecord");
    const gs_query *dq = (const gs_query *)(dp + q_at);
    const uint32_t *down = (const uint32_t *)(dp + owner_at);
    if (r == 0) {
        p->plan0 = dp;
        p->tiles0 = tiles;
        p->q0 = dq;
        p->owner0 = down;
        p->remap0 = (gs_remap *)(dp + remap_at);
        p->n0 = n;
    }
    p->adaptive = adaptive;
    return search(p, r, dp, tiles, dq, down, n, nullptr, false, msg, len);
}

extern "C" int pb_gpu_refine(pb_gpu *p, int pass, char *msg, size_t len)
{
    size_t n = p->a.n_ev;
    if (n == 0 || p->n0 == 0)
        return GPU_OK;
    uint8_t *d_todo = (uint8_t *)p->todo.p;
    refine<<<(unsigned)n, kThreads, 0, p->st>>>(p->a, pass, d_todo);
    GPU_CHECK(cudaGetLastError(), "launching the refinement");
    GPU_CHECK(grow(&p->rq, p->n0 * sizeof(gs_query)), "cudaMalloc of a pass's searches");
    GPU_CHECK(grow(&p->rowner, p->n0 * sizeof(uint32_t)), "cudaMalloc of a pass's searches");
    /* a full search again from the column it answered: pruned from its first step */
    const bool seeded = p->adaptive == GS_FULL;
    pick<<<1, kPick, 0, p->st>>>(p->q0, p->owner0, (uint32_t)p->n0, d_todo, p->remap0, (gs_query *)p->rq.p,
                                 (uint32_t *)p->rowner.p, (unsigned long long *)p->stats.p,
                                 seeded ? p->a.ev : nullptr, p->a.column);
    GPU_CHECK(cudaGetLastError(), "launching the pick");
    GPU_CHECK(mark(p, PB_REFINE), "cudaEventRecord");
    return search(p, 0, p->plan0, p->tiles0, (const gs_query *)p->rq.p, (const uint32_t *)p->rowner.p, p->n0,
                  p->remap0, seeded, msg, len);
}

namespace {

size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* Where a neighbour round's list lies in the lists' buffer: its tile plan,
 * remap, searches and events, and the pass's picks of them. */
struct nb_round {
    size_t n, tiles, plan, remap, q, owner, picked_q, picked_owner;
};

/* The lists' buffer: the pairs, then each round's list (nb_round); its size returned. */
size_t place_lists(const pb_gpu *p, size_t n_pairs, const pb_list *round, int rounds, nb_round *at)
{
    size_t bytes = round16(n_pairs * sizeof(pb_pair));
    for (int r = 0; r < rounds; r++) {
        const size_t n = round[r].n;
        at[r] = nb_round{ n, 0, bytes, 0, 0, 0, 0, 0 };
        if (!n)
            continue;
        at[r].remap = bytes += round16(gs_resident_plan_bytes(p->search, n));
        at[r].q = bytes += round16(sizeof(gs_remap));
        at[r].owner = bytes += round16(n * sizeof(gs_query));
        at[r].picked_q = bytes += round16(n * sizeof(uint32_t));
        at[r].picked_owner = bytes += round16(n * sizeof(gs_query));
        bytes += round16(n * sizeof(uint32_t));
    }
    return bytes;
}

/* The pairs and round lists into the pinned buffer hp (place_lists' places), each list planned
 * for whole (pb_gpu_neighbours' mode). */
int fill_lists(const pb_gpu *p, unsigned char *hp, const pb_pair *pairs, size_t n_pairs, const pb_list *round,
               int rounds, nb_round *at, int whole, char *msg, size_t len)
{
    memcpy(hp, pairs, n_pairs * sizeof *pairs);
    for (int r = 0; r < rounds; r++) {
        const size_t n = at[r].n;
        if (!n)
            continue;
        const gs_query *q = round[r].q;
        if ((at[r].tiles = gs_resident_plan(p->search, q, n, whole, hp + at[r].plan)) == (size_t)-1) {
            snprintf(msg, len, "no host memory to plan %zu searches", n);
            return GPU_NOMEM;
        }
        gs_remap *rm = (gs_remap *)(hp + at[r].remap);
        memset(rm, 0, sizeof *rm);
        for (size_t i = 0, g = 0; g <= GS_MAX_SEGMENTS; g++) {
            while (i < n && q[i].segment < g)
                i++;
            rm->first0[g] = (uint32_t)i;
        }
        memcpy(hp + at[r].q, q, n * sizeof *q);
        memcpy(hp + at[r].owner, round[r].owner, n * sizeof *round[r].owner);
    }
    return GPU_OK;
}

/* Kernel f's static shared memory, asked once per kernel: a launch's static
 * and dynamic shared memory share the kShared it has without asking. */
template <class F> size_t static_shared(F *f)
{
    cudaFuncAttributes fa;
    return cudaFuncGetAttributes(&fa, f) == cudaSuccess ? fa.sharedSizeBytes : 0;
}

/* Lets kernel f (static shared memory fixed) take `bytes` of dynamic shared
 * memory beyond kShared (a long WindowLength: the pair search stages 37 x W
 * values; Hopper allows up to 227 KiB in all, and a device that cannot
 * fails here, the block then done round by round). */
template <class F> cudaError_t allow_shared(F *f, size_t fixed, size_t bytes)
{
    return fixed + bytes <= kShared ? cudaSuccess
                                    : cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

/* joint_start's staging for this block (its dynamic shared memory returned):
 * rs, the longest trace of its events with touching hits (events with longer
 * ones take pr_joint_pass), and nh, the hits held, within kShared; rs 0
 * where not even the trace fits. */
size_t joint_shared(const pb_gpu *p, uint32_t *rs, uint32_t *nh)
{
    static const size_t fixed = static_shared(joint_start); /* its fallback's */
    const size_t room = fixed < kShared ? kShared - fixed : 0;
    const pb_event *ev = (const pb_event *)p->h_ev.p;
    const size_t W = p->a.b.w.length, group = kJoint / DET_CHANNELS, hit = DET_CHANNELS * (W | 1) * sizeof(float);
    uint32_t ns = 0, most = 0;
    for (size_t j = 0; j < p->a.n_ev; j++)
        if (ev[j].neighbours) {
            ns = std::max(ns, ev[j].n_samples);
            most = std::max(most, ev[j].n_net);
        }
    *rs = ns | 1u;
    *nh = std::min(most, (uint32_t)kJointHits);
    const size_t bytes = group * W * sizeof(jtap) + group * DET_CHANNELS * sizeof(double) + DET_CHANNELS * *rs * sizeof(float);
    if (bytes > room) {
        *rs = *nh = 0;
        return 0;
    }
    while (*nh && bytes + *nh * hit > room)
        --*nh;
    return bytes + *nh * hit;
}

/* Round r of neighbour pass `pass` (lists at dp): the going events' searches picked, filled, searched as mode
 * says, answered. */
int neighbour_round(pb_gpu *p, unsigned char *dp, const nb_round &at, int r, int mode, uint8_t *going,
                    uint8_t *moved, char *msg, size_t len)
{
    gs_remap *remap = (gs_remap *)(dp + at.remap);
    gs_query *q = (gs_query *)(dp + at.picked_q);
    uint32_t *owner = (uint32_t *)(dp + at.picked_owner);
    pick<<<1, kPick, 0, p->st>>>((const gs_query *)(dp + at.q), (const uint32_t *)(dp + at.owner), (uint32_t)at.n,
                                 going, remap, q, owner, (unsigned long long *)p->stats.p + 1);
    GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's pick");
    fill_back<<<(unsigned)at.n, kThreads, 0, p->st>>>(p->a, q, owner, r, (float *)p->meas.p, remap);
    GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's fill");
    GPU_CHECK(mark(p, PB_NB_FILL), "cudaEventRecord");
    GPU_CHECK(gs_resident_launch(p->search, p->st, dp + at.plan, at.tiles, q, at.n, (const float *)p->meas.p,
                                 (unsigned long long *)p->answers.p, mode, remap),
              "launching a neighbour pass's search");
    GPU_CHECK(mark(p, PB_NB_SEARCH), "cudaEventRecord");
    answer_moved<<<(unsigned)at.n, kThreads, 0, p->st>>>(p->a, q, owner, r, (const unsigned long long *)p->answers.p,
                                                        (unsigned *)p->err.p, remap, moved);
    GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's answers");
    GPU_CHECK(mark(p, PB_NB_ANSWER), "cudaEventRecord");
    return GPU_OK;
}

} // namespace

extern "C" int pb_gpu_neighbours(pb_gpu *p, const pb_pair *pairs, size_t n_pairs, const pb_list *round, int rounds,
                                 int passes, int joint, int whole, const uint8_t mode[PB_MAX_PASSES][DET_SEGMENTS],
                                 uint32_t max_coarse, char *msg, size_t len)
{
    const size_t n_ev = p->a.n_ev, W = p->a.b.w.length;
    const size_t pair_bytes = DET_CHANNELS * W * (sizeof(float) + sizeof(uint32_t));
    nb_round at[DET_SEGMENTS];
    size_t values = 0, most = 0;
    if (n_pairs == 0 || n_ev == 0)
        return GPU_OK;
    rounds = rounds < DET_SEGMENTS ? rounds : DET_SEGMENTS;
    passes = passes < PB_MAX_PASSES ? passes : PB_MAX_PASSES;
    const size_t bytes = place_lists(p, n_pairs, round, rounds, at);
    for (int r = 0; r < rounds; r++)
        if (round[r].n) {
            values = std::max(values, (size_t)round[r].q[round[r].n - 1].meas + W * PSA_MAX_MASK);
            most = std::max(most, round[r].n);
        }
    GPU_CHECK(cudaEventSynchronize(p->h_nb.sent), "the copy of the last block's neighbour lists");
    GPU_CHECK(grow(&p->h_nb, bytes), "cudaMallocHost of the neighbour lists");
    GPU_CHECK(grow(&p->nb, bytes), "cudaMalloc of the neighbour lists");
    GPU_CHECK(grow(&p->nb_keys, n_pairs * 2 * max_coarse * sizeof(unsigned long long)), "cudaMalloc of the pairs' keys");
    GPU_CHECK(grow(&p->nb_marks, 2 * n_ev), "cudaMalloc of the neighbour passes' marks");
    GPU_CHECK(grow(&p->meas, values * sizeof(float)), "cudaMalloc of the measured values");
    GPU_CHECK(grow(&p->answers, (most + 1) * sizeof(unsigned long long)), "cudaMalloc of the answers");
    unsigned char *hp = (unsigned char *)p->h_nb.p, *dp = (unsigned char *)p->nb.p;
    int rc = fill_lists(p, hp, pairs, n_pairs, round, rounds, at, whole, msg, len);
    if (rc)
        return rc;
    GPU_CHECK(cudaMemcpyAsync(dp, hp, bytes, cudaMemcpyHostToDevice, p->st), "copying the neighbour lists");
    GPU_CHECK(cudaEventRecord(p->h_nb.sent, p->st), "cudaEventRecord");
    GPU_CHECK(mark(p, PB_LISTS), "cudaEventRecord");
    static const size_t pair_fixed = static_shared(pair_search);
    GPU_CHECK(allow_shared(pair_search, pair_fixed, pair_bytes), "letting the pair search have its shared memory");
    pair_search<<<(unsigned)n_pairs, kThreads, pair_bytes, p->st>>>(
        p->a, (const pb_pair *)dp, (unsigned long long *)p->nb_keys.p, max_coarse);
    GPU_CHECK(cudaGetLastError(), "launching the pair searches");
    GPU_CHECK(mark(p, PB_PAIRS), "cudaEventRecord");
    uint32_t rs, nh;
    const size_t joint_bytes = joint_shared(p, &rs, &nh);
    uint8_t *going = (uint8_t *)p->nb_marks.p, *moved = going + n_ev;
    neighbours_start<<<blocks_for(n_ev, kThreads), kThreads, 0, p->st>>>(p->a, going, moved);
    GPU_CHECK(cudaGetLastError(), "launching the neighbour passes");
    for (int pass = 1; pass <= passes; pass++) {
        if (joint)
            joint_start<<<(unsigned)n_ev, kJoint, joint_bytes, p->st>>>(p->a, pass, going, moved, rs, nh);
        GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's start times");
        GPU_CHECK(mark(p, PB_JOINT), "cudaEventRecord");
        for (int r = 0, to; r < rounds; r = to) {
            for (to = r; to < rounds && mode[pass - 1][to] == GS_LOCAL; to++)
                ;
            if (to > r) {
                local_rounds<<<(unsigned)n_ev, kThreads, PSA_MAX_MASK * W * sizeof(float), p->st>>>(
                    p->a, r, to, going, moved, (unsigned *)p->err.p, (unsigned long long *)p->stats.p);
                GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's local rounds");
                GPU_CHECK(mark(p, PB_NB_LOCAL), "cudaEventRecord");
                continue;
            }
            to = r + 1;
            if (at[r].n && (rc = neighbour_round(p, dp, at[r], r, mode[pass - 1][r], going, moved, msg, len)))
                return rc;
        }
        neighbours_next<<<blocks_for(n_ev, kThreads), kThreads, 0, p->st>>>((uint32_t)n_ev, going, moved);
        GPU_CHECK(cudaGetLastError(), "launching a neighbour pass's end");
    }
    GPU_CHECK(mark(p, PB_NB_ANSWER), "cudaEventRecord");
    return GPU_OK;
}

extern "C" int pb_gpu_subtract(pb_gpu *p, int r, char *msg, size_t len)
{
    if (p->a.n_ev)
        subtract<<<p->a.n_ev, kThreads, 0, p->st>>>(p->a, r);
    GPU_CHECK(cudaGetLastError(), "launching the subtraction");
    GPU_CHECK(mark(p, PB_SUBTRACT), "cudaEventRecord");
    return GPU_OK;
}

extern "C" int pb_gpu_results(pb_gpu *p, pb_event *ev, size_t n, uint64_t *researched, uint64_t *neighboured,
                              char *msg, size_t len)
{
    unsigned char *h = (unsigned char *)p->h_err.p;
    GPU_CHECK(cudaMemcpyAsync(p->h_ev.p, p->ev.p, n * sizeof *ev, cudaMemcpyDeviceToHost, p->st),
          "copying the events back");
    GPU_CHECK(cudaMemcpyAsync(h, p->err.p, sizeof(unsigned), cudaMemcpyDeviceToHost, p->st),
          "copying the error flag back");
    GPU_CHECK(cudaMemcpyAsync(h + 16, p->stats.p, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, p->st),
          "copying the counts back");
    GPU_CHECK(mark(p, PB_RESULTS), "cudaEventRecord");
    GPU_CHECK(wait_idle(p), "the block's work");
    for (int i = 1; i < p->n_marks; i++) {
        float ms = 0;
        GPU_CHECK(cudaEventElapsedTime(&ms, p->mark[i - 1], p->mark[i]), "cudaEventElapsedTime");
        p->step_s[p->mark_step[i]] += 1e-3 * ms;
    }
    memcpy(researched, h + 16, sizeof *researched);
    memcpy(neighboured, h + 24, sizeof *neighboured);
    if (*(const unsigned *)h) {
        snprintf(msg, len, "a search answered a column outside its segment");
        return GPU_FAIL;
    }
    if (ev != p->h_ev.p) /* pb_gpu_events' own room: the answers are there already */
        memcpy(ev, p->h_ev.p, n * sizeof *ev);
    return GPU_OK;
}

extern "C" void pb_gpu_steps(const pb_gpu *p, double seconds[PB_STEPS])
{
    memcpy(seconds, p->step_s, sizeof p->step_s);
}

extern "C" const char *pb_step_name(int step)
{
    static const char *names[PB_STEPS] = { "upload and align", "fill", "search", "answer", "refine", "subtract",
                                           "neighbour lists", "pair searches", "joint starts", "local rounds",
                                           "pass fills", "pass searches", "pass answers", "results" };
    return step >= 0 && step < PB_STEPS ? names[step] : "?";
}
