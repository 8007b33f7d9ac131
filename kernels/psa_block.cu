/* psa_block.cu: the PSA's GPU block: an input block's traces on the device, aligned, filled, searched, refined and subtracted there, one stream, the host only building each round's list of searches. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_device.h"
#include "gridsearch_resident.h"
#include "psa_block_gpu.h"
#include "psa_refine.h"

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
    const dseg *seg;
    const uint32_t *points;
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
    const float *sig = a.b.signal + (size_t)ev.point[r] * DET_CHANNELS * a.b.n_samples + a.b.w.start;
    pr_subtract(resid_of(a, j), sig, a.b.n_samples, a.b.w.length, ev.e[r]);
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

/* A workspace's own stream and events (pb_gpu_create's and pb_gpu_fork's). */
int open_stream(pb_gpu *p, char *msg, size_t len)
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
    return GPU_OK;
}

int create(pb_gpu *p, const pb_setup *s, char *msg, size_t len)
{
    int rc = open_stream(p, msg, len);
    if (rc)
        return rc;
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
    rc = gpu_upload((void **)&p->d_points, points, off * sizeof *points, "uploading the segments' points", msg, len);
    free(points);
    if (rc || (rc = gpu_upload((void **)&p->d_seg, seg, sizeof seg, "uploading the segments", msg, len)) ||
        (rc = gpu_upload((void **)&p->d_signal, s->signal, (size_t)s->n_points * DET_CHANNELS * s->n_samples * sizeof(float),
                      "uploading the basis signals", msg, len)) ||
        (rc = gpu_upload((void **)&p->d_point_edge, s->point_edge, s->n_points * sizeof(float),
                     "uploading the points' edges", msg, len)))
        return rc;
    kp &a = p->a;
    a.seg = p->d_seg;
    a.points = p->d_points;
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
