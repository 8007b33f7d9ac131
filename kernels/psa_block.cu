/* psa_block.cu: the PSA's GPU block: an input block's traces on the device, aligned, filled, searched, refined and subtracted there, one stream, the host only building each round's list of searches. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_device.h"
#include "gridsearch_resident.h"
#include "psa_block_gpu.h"

namespace {

constexpr int kThreads = 128;

/* A segment on the device: pb_segment with its columns' points at points[point_off]. */
struct dseg {
    uint32_t n_points, n_mask, centre, point_off;
    uint8_t mask[PSA_MAX_MASK];
};

/* What every kernel of the block reads. */
struct kp {
    const uint8_t *block;
    pb_event *ev;
    float *resid; /* per event: 37 x window aligned values */
    uint32_t n_ev;
    const float *signal, *point_edge;
    const dseg *seg;
    const uint32_t *points;
    pt_window w;
    uint32_t n_samples; /* the basis's */
    double basis_edge, shift_step, half_step;
    int steps;
};

__device__ __forceinline__ float *resid_of(const kp &a, uint32_t j)
{
    return a.resid + (size_t)j * DET_CHANNELS * a.w.length;
}

/* The event's 37 channels read at start t into its aligned values, by `lanes` threads from `lane`. */
__device__ void align(const kp &a, uint32_t j, double t, unsigned lane, unsigned lanes)
{
    const pb_event &ev = a.ev[j];
    const uint8_t *trace = a.block + ev.trace;
    float *out = resid_of(a, j);
    for (uint32_t v = lane; v < DET_CHANNELS * a.w.length; v += lanes) {
        uint32_t ch = v / a.w.length, i = v % a.w.length;
        pt_tap tp = pt_tap_at(&a.w, ev.n_samples, t, i);
        out[v] = pt_lerp(pt_raw(trace, ev.n_samples, ev.per_kev, ch, tp.lo),
                         pt_raw(trace, ev.n_samples, ev.per_kev, ch, tp.hi), tp.f);
    }
}

__global__ void __launch_bounds__(kThreads) align_events(const kp a, uint32_t first)
{
    const uint32_t j = first + blockIdx.x;
    align(a, j, PT_DADD(a.ev[j].t0, a.ev[j].shift), threadIdx.x, kThreads);
}

/* Search i's measured values: its event's aligned mask channels over the segment's energy. */
__global__ void __launch_bounds__(kThreads) fill(const kp a, const gs_query *q, const uint32_t *owner, int r,
                                                 float *meas, const gs_remap *picked)
{
    if (picked && blockIdx.x >= picked->n)
        return;
    const gs_query x = q[blockIdx.x];
    const uint32_t j = owner[blockIdx.x], W = a.w.length;
    const dseg &g = a.seg[x.segment];
    const float e = a.ev[j].e[r];
    const float *res = resid_of(a, j);
    for (uint32_t v = threadIdx.x; v < g.n_mask * W; v += kThreads)
        meas[x.meas + v] = pt_fill(res[(size_t)g.mask[v / W] * W + v % W], e);
}

/* Each search's answer as hit r of its event (actors/psa/psa_block.c's answer()). */
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
    ev.hit_status[r] = x.use ? 0 : PSA_HIT_NO_MASK;
    ev.point[r] = a.points[g.point_off + (x.use ? col : g.centre)];
    ev.fom[r] = __uint_as_float((uint32_t)(ans[i] >> 32));
}

/* Channel ch's sum of squares over the window between the traces started
 * at t and the point's signals sig (samples in order, as the CPU sums them). */
__device__ double channel_squares(const kp &a, const pb_event &ev, double t, const float *sig, uint32_t ch,
                                  double inv)
{
    const uint8_t *trace = a.block + ev.trace;
    const float *s = sig + (size_t)ch * a.n_samples + a.w.start;
    double acc = 0;
    for (uint32_t i = 0; i < a.w.length; i++) {
        pt_tap tp = pt_tap_at(&a.w, ev.n_samples, t, i);
        float v = pt_lerp(pt_raw(trace, ev.n_samples, ev.per_kev, ch, tp.lo),
                          pt_raw(trace, ev.n_samples, ev.per_kev, ch, tp.hi), tp.f);
        acc = pt_square(acc, v, inv, s[i]);
    }
    return acc;
}

/* The refinement's channels for an event (psa_event_refine's): the mask's
 * channels that are not other net-charge segments, the segment, and the
 * core for a single net-charge segment; returns their count. */
__device__ int refine_channels(const kp &a, const pb_event &ev, uint8_t *ch)
{
    const dseg &g = a.seg[ev.net[0]];
    int n = 0;
    for (uint32_t c = 0; c < g.n_mask; c++) {
        bool other = false;
        for (uint32_t k = 1; k < ev.n_net; k++)
            other = other || ev.net[k] == g.mask[c];
        if (!other && g.mask[c] != ev.net[0])
            ch[n++] = g.mask[c];
    }
    ch[n++] = ev.net[0];
    if (ev.n_net == 1)
        ch[n++] = DET_CORE;
    return n;
}

/* Whether pass `pass` refines event j: every event in the first pass, then
 * those whose start moved and whose search found another point. */
__device__ __forceinline__ bool refining(const kp &a, uint32_t j, int pass, const uint8_t *todo)
{
    return pass == 0 || (todo[j] && a.ev[j].point[0] != a.ev[j].before);
}

/* The point's own start: the basis's median edge less the point's edge (0 without one). */
__device__ __forceinline__ double own_start(const kp &a, uint32_t point)
{
    const float pe = a.point_edge[point];
    return isfinite(pe) ? PT_DSUB(a.basis_edge, (double)pe) : 0;
}

/* Starts tried side by side in a refinement pass (each with its channels). */
constexpr int kGroup = 7;

/*
 * A refinement pass (psa_event_refine and psa_block.c's refine()), a block
 * per event: for each group of starts, the threads sum a start's channel
 * each; then every thread adds the channels in order and scans the starts
 * in order (a lower sum wins), so that all hold the same best.  The first
 * pass's shifts, then the step halved twice around the best; the new shift,
 * the mark for another search, and the alignment at the new start.
 */
__global__ void __launch_bounds__(kThreads) refine(const kp a, int pass, uint8_t *todo)
{
    __shared__ double part[kGroup][PSA_MAX_MASK + 2];
    const uint32_t j = blockIdx.x;
    if (!refining(a, j, pass, todo)) {
        if (threadIdx.x == 0)
            todo[j] = 0;
        return;
    }
    const pb_event &ev = a.ev[j];
    uint8_t ch[PSA_MAX_MASK + 2];
    const int n = refine_channels(a, ev, ch);
    const uint32_t point = ev.point[0];
    const float *sig = a.signal + (size_t)point * DET_CHANNELS * a.n_samples;
    const double t0 = ev.t0, inv = 1.0 / (double)ev.e[0], own = own_start(a, point), was = ev.shift;
    double best = own, best_sum = INFINITY;
    const int shifts = 2 * a.steps + 1;
    for (int k0 = 0; k0 < shifts; k0 += kGroup) {
        const int m = shifts - k0 < kGroup ? shifts - k0 : kGroup;
        for (int t = threadIdx.x; t < m * n; t += kThreads) {
            const double start = PT_DADD(t0, pt_shift(own, k0 + t / n - a.steps, a.shift_step));
            part[t / n][t % n] = channel_squares(a, ev, start, sig, ch[t % n], inv);
        }
        __syncthreads();
        for (int k = 0; k < m; k++) {
            double sum = 0;
            for (int c = 0; c < n; c++)
                sum = PT_DADD(sum, part[k][c]);
            if (sum < best_sum) {
                best_sum = sum;
                best = pt_shift(own, k0 + k - a.steps, a.shift_step);
            }
        }
        __syncthreads();
    }
    for (double h = a.shift_step / 2; h >= a.shift_step / 4; h /= 2) {
        const double centre = best, tc = PT_DADD(t0, centre);
        for (int t = threadIdx.x; t < 2 * n; t += kThreads)
            part[t / n][t % n] = channel_squares(a, ev, t / n == 0 ? PT_DSUB(tc, h) : PT_DADD(tc, h), sig,
                                                 ch[t % n], inv);
        __syncthreads();
        for (int k = 0; k < 2; k++) {
            double sum = 0;
            for (int c = 0; c < n; c++)
                sum = PT_DADD(sum, part[k][c]);
            if (sum < best_sum) {
                best_sum = sum;
                best = pt_shift(centre, 2 * k - 1, h);
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        todo[j] = pass == 0 ? best != was : fabs(PT_DSUB(best, was)) >= a.half_step;
        a.ev[j].before = point;
        a.ev[j].shift = best;
    }
    if (best != was)
        align(a, j, PT_DADD(t0, best), threadIdx.x, kThreads);
}

/*
 * The searches of a refinement pass: round 0's (q0, sorted by segment) of
 * the events it marked, picked out in order into q and owner by one block
 * (a scan of the per-thread counts), with the segments' new places for the
 * round-0 tile plan (gs_remap).  The count joins stats[0].
 */
constexpr int kPick = 1024;

__global__ void __launch_bounds__(kPick) pick(const gs_query *q0, const uint32_t *owner0, uint32_t n0,
                                              const uint8_t *todo, gs_remap *remap, gs_query *q,
                                              uint32_t *owner, unsigned long long *stats)
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
    const float *sig = a.signal + (size_t)ev.point[r] * DET_CHANNELS * a.n_samples + a.w.start;
    const float e = ev.e[r];
    float *res = resid_of(a, j);
    for (uint32_t v = threadIdx.x; v < DET_CHANNELS * a.w.length; v += kThreads)
        res[v] = pt_subtract(res[v], e, sig[(size_t)(v / a.w.length) * a.n_samples + v % a.w.length]);
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
    hbuf h_ev, h_in[2], h_err;
    int flip, adaptive;
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
                  &p->err, &p->rq, &p->rowner, &p->stats };
    for (dbuf *b : d)
        cudaFree(b->p);
    hbuf *h[] = { &p->h_ev, &p->h_in[0], &p->h_in[1], &p->h_err };
    for (hbuf *b : h) {
        cudaFreeHost(b->p);
        if (b->sent)
            cudaEventDestroy(b->sent);
    }
}

int create(pb_gpu *p, const pb_setup *s, char *msg, size_t len)
{
    GPU_SELECT(p->device);
    GPU_CHECK(cudaStreamCreateWithFlags(&p->st, cudaStreamNonBlocking), "cudaStreamCreate");
    GPU_CHECK(cudaEventCreateWithFlags(&p->idle, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
    for (int i = 0; i < kMarks; i++)
        GPU_CHECK(cudaEventCreate(&p->mark[i]), "cudaEventCreate");
    hbuf *h[] = { &p->h_ev, &p->h_in[0], &p->h_in[1], &p->h_err };
    for (hbuf *b : h) {
        GPU_CHECK(cudaEventCreateWithFlags(&b->sent, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
        GPU_CHECK(cudaEventRecord(b->sent, p->st), "cudaEventRecord");
    }
    dseg seg[DET_SEGMENTS];
    uint32_t off = 0;
    for (int g = 0; g < DET_SEGMENTS; g++) {
        seg[g] = dseg{ s->seg[g].n_points, s->seg[g].n_mask, s->seg[g].centre, off, {} };
        memcpy(seg[g].mask, s->seg[g].mask, sizeof seg[g].mask);
        off += s->seg[g].n_points;
    }
    uint32_t *points = (uint32_t *)malloc((off + 1) * sizeof *points);
    if (!points) {
        snprintf(msg, len, "no host memory for the segments' points");
        return GPU_NOMEM;
    }
    for (int g = 0; g < DET_SEGMENTS; g++)
        memcpy(points + seg[g].point_off, s->seg[g].point, s->seg[g].n_points * sizeof *points);
    int rc = gpu_upload((void **)&p->d_points, points, off * sizeof *points, "uploading the segments' points", msg, len);
    free(points);
    if (rc || (rc = gpu_upload((void **)&p->d_seg, seg, sizeof seg, "uploading the segments", msg, len)) ||
        (rc = gpu_upload((void **)&p->d_signal, s->signal, (size_t)s->n_points * DET_CHANNELS * s->n_samples * sizeof(float),
                      "uploading the basis signals", msg, len)) ||
        (rc = gpu_upload((void **)&p->d_point_edge, s->point_edge, s->n_points * sizeof(float),
                     "uploading the points' edges", msg, len)))
        return rc;
    kp &a = p->a;
    a.signal = p->d_signal;
    a.point_edge = p->d_point_edge;
    a.seg = p->d_seg;
    a.points = p->d_points;
    a.w = s->window;
    a.n_samples = s->n_samples;
    a.basis_edge = s->basis_edge;
    a.shift_step = s->shift_step;
    a.half_step = s->half_step;
    a.steps = s->steps;
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
 * picked, those the pick put there (n: a bound). */
int search(pb_gpu *p, int r, const void *plan, size_t tiles, const gs_query *dq, const uint32_t *down, size_t n,
           const gs_remap *picked, char *msg, size_t len)
{
    fill<<<(unsigned)n, kThreads, 0, p->st>>>(p->a, dq, down, r, (float *)p->meas.p, picked);
    GPU_CHECK(cudaGetLastError(), "launching the fill");
    GPU_CHECK(mark(p, PB_FILL), "cudaEventRecord");
    GPU_CHECK(gs_resident_launch(p->search, p->st, plan, tiles, dq, n, (const float *)p->meas.p,
                             (unsigned long long *)p->answers.p, p->adaptive, picked), "launching the grid search");
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

extern "C" void *pb_host_alloc(size_t bytes)
{
    void *p = nullptr;
    /* portable: pinned for every device, whichever the calling thread has current */
    if (cudaHostAlloc(&p, bytes ? bytes : 16, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return p;
}

extern "C" void pb_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

extern "C" int pb_gpu_begin(pb_gpu *p, size_t bytes, size_t n, char *msg, size_t len)
{
    const size_t values = (size_t)DET_CHANNELS * p->a.w.length;
    GPU_SELECT(p->device);
    GPU_CHECK(grow(&p->block, bytes), "cudaMalloc of the block");
    GPU_CHECK(grow(&p->ev, n * sizeof(pb_event)), "cudaMalloc of the events");
    GPU_CHECK(grow(&p->resid, n * values * sizeof(float)), "cudaMalloc of the aligned traces");
    GPU_CHECK(grow(&p->todo, n), "cudaMalloc of the refinement's marks");
    GPU_CHECK(grow(&p->err, 16), "cudaMalloc");
    GPU_CHECK(grow(&p->stats, 16), "cudaMalloc");
    GPU_CHECK(grow(&p->h_ev, n * sizeof(pb_event)), "cudaMallocHost of the events");
    GPU_CHECK(grow(&p->h_err, 32), "cudaMallocHost");
    p->n_marks = 0;
    GPU_CHECK(mark(p, PB_LOAD), "cudaEventRecord");
    GPU_CHECK(cudaMemsetAsync(p->err.p, 0, 16, p->st), "clearing the error flag");
    GPU_CHECK(cudaMemsetAsync(p->stats.p, 0, 16, p->st), "clearing the counts");
    p->n0 = 0;
    p->a.block = (const uint8_t *)p->block.p;
    p->a.ev = (pb_event *)p->ev.p;
    p->a.resid = (float *)p->resid.p;
    p->a.n_ev = 0;
    return GPU_OK;
}

extern "C" int pb_gpu_part(pb_gpu *p, const void *host, size_t at, size_t bytes, const pb_event *ev,
                           size_t first, size_t n, char *msg, size_t len)
{
    pb_event *h_ev = (pb_event *)p->h_ev.p + first;
    memcpy(h_ev, ev + first, n * sizeof *ev);
    GPU_CHECK(cudaMemcpyAsync((uint8_t *)p->block.p + at, (const uint8_t *)host + at, bytes, cudaMemcpyHostToDevice,
                          p->st), "copying the block");
    GPU_CHECK(cudaMemcpyAsync((pb_event *)p->ev.p + first, h_ev, n * sizeof *ev, cudaMemcpyHostToDevice, p->st),
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
    size_t values = (size_t)last.meas + (size_t)p->a.w.length * PSA_MAX_MASK;
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
    return search(p, r, dp, tiles, dq, down, n, nullptr, msg, len);
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
    pick<<<1, kPick, 0, p->st>>>(p->q0, p->owner0, (uint32_t)p->n0, d_todo, p->remap0, (gs_query *)p->rq.p,
                                 (uint32_t *)p->rowner.p, (unsigned long long *)p->stats.p);
    GPU_CHECK(cudaGetLastError(), "launching the pick");
    GPU_CHECK(mark(p, PB_REFINE), "cudaEventRecord");
    return search(p, 0, p->plan0, p->tiles0, (const gs_query *)p->rq.p, (const uint32_t *)p->rowner.p, p->n0,
                  p->remap0, msg, len);
}

extern "C" int pb_gpu_subtract(pb_gpu *p, int r, char *msg, size_t len)
{
    if (p->a.n_ev)
        subtract<<<p->a.n_ev, kThreads, 0, p->st>>>(p->a, r);
    GPU_CHECK(cudaGetLastError(), "launching the subtraction");
    GPU_CHECK(mark(p, PB_SUBTRACT), "cudaEventRecord");
    return GPU_OK;
}

extern "C" int pb_gpu_results(pb_gpu *p, pb_event *ev, size_t n, uint64_t *researched, char *msg, size_t len)
{
    unsigned char *h = (unsigned char *)p->h_err.p;
    GPU_CHECK(cudaMemcpyAsync(p->h_ev.p, p->ev.p, n * sizeof *ev, cudaMemcpyDeviceToHost, p->st),
          "copying the events back");
    GPU_CHECK(cudaMemcpyAsync(h, p->err.p, sizeof(unsigned), cudaMemcpyDeviceToHost, p->st),
          "copying the error flag back");
    GPU_CHECK(cudaMemcpyAsync(h + 16, p->stats.p, sizeof(unsigned long long), cudaMemcpyDeviceToHost, p->st),
          "copying the counts back");
    GPU_CHECK(mark(p, PB_RESULTS), "cudaEventRecord");
    GPU_CHECK(wait_idle(p), "the block's work");
    for (int i = 1; i < p->n_marks; i++) {
        float ms = 0;
        GPU_CHECK(cudaEventElapsedTime(&ms, p->mark[i - 1], p->mark[i]), "cudaEventElapsedTime");
        p->step_s[p->mark_step[i]] += 1e-3 * ms;
    }
    memcpy(researched, h + 16, sizeof *researched);
    if (*(const unsigned *)h) {
        snprintf(msg, len, "a search answered a column outside its segment");
        return GPU_FAIL;
    }
    memcpy(ev, p->h_ev.p, n * sizeof *ev);
    return GPU_OK;
}

extern "C" void pb_gpu_steps(const pb_gpu *p, double seconds[PB_STEPS])
{
    memcpy(seconds, p->step_s, sizeof p->step_s);
}

extern "C" const char *pb_step_name(int step)
{
    static const char *names[PB_STEPS] = { "upload and align", "fill", "search", "answer", "refine",
                                           "subtract", "results" };
    return step >= 0 && step < PB_STEPS ? names[step] : "?";
}
