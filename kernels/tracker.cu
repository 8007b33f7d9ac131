/* tracker.cu: forward tracking on the GPU: clustering, ordering-scoring and selection kernels over batches of events (a second pass over the points left free), copies overlapped on two streams. */
#include <cuda_runtime.h>
#include <new>
#include <stdio.h>
#include <string.h>

#include "tracker_cluster.h"
#include "tracker_fom.h"
#include "tracker_gpu.h"

__constant__ tr_params c_params;
__constant__ tr_geo c_geo;

enum {
    GROUP = 8,                          /* lanes scoring one candidate */
    BLOCK = 128,
    GROUPS_PER_BLOCK = BLOCK / GROUP,
    STREAMS = 2,
    CHUNKS = 4,                         /* per batch, when it is large enough */
    MIN_CHUNK_POINTS = 16384,
    PAIR_SLOTS = 16,                    /* clustering scratch per point for the pairs of its event */
};

/* ---- kernels ------------------------------------------------------------------ */

/* slot_event[i] = the chunk-local event owning point slot i. */
__global__ void k_slots(const uint32_t *first, uint32_t base, uint32_t n_events, uint32_t *slot_event)
{
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_events)
        return;
    for (uint32_t i = first[e] - base; i < first[e + 1] - base; i++)
        slot_event[i] = e;
}

struct cluster_bufs {
    uint16_t *parent, *next, *tail, *size;
    uint8_t *dirty;
    float *norm;
    uint32_t *pair; /* PAIR_SLOTS per point */
};

/* The candidates of one event's n points (the first at offset off of the
 * chunk's scratch), as the CPU finds them: each pair's linking step found
 * once (tr_cluster_event_pairs), where its pairs fit in the event's
 * PAIR_SLOTS n slots, that is up to 2 PAIR_SLOTS + 1 points; a larger event
 * tests every pair at every step (tr_cluster_event).  The same candidates
 * either way; the first is several times shorter for the few largest events
 * of a block, which bound the kernel's time. */
__device__ static int cluster_event(const tr_point *pts, int n, const cluster_bufs &sb, uint32_t off, tr_cand *out,
                                    uint16_t *big)
{
    tr_cluster_scratch s = { sb.parent + off, sb.next + off, sb.tail + off, sb.size + off,
                             sb.dirty + off, sb.norm + off };
    if (n - 1 <= 2 * PAIR_SLOTS) {
        uint32_t first[TR_MAX_STEPS + 1];
        return tr_cluster_event_pairs(&c_params, pts, n, &s, sb.pair + (size_t)off * PAIR_SLOTS, first, out, big);
    }
    return tr_cluster_event(&c_params, pts, n, &s, out, big);
}

__global__ void k_cluster(const uint32_t *first, uint32_t base, uint32_t n_events, const tr_point *pts,
                          cluster_bufs sb, tr_cand *cands, tr_event_info *info)
{
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_events)
        return;
    uint32_t off = first[e] - base;
    int n = (int)(first[e + 1] - first[e]);
    uint16_t big = 0;
    int nc = n > 0 ? cluster_event(pts + off, n, sb, off, cands + off, &big) : 0;
    info[e].n_cands = (uint16_t)nc;
    info[e].big_clusters = big;
}

/* Reduces the (sum, ordering) pairs of a group of lanes onto its first lane. */
__device__ static void reduce_group(unsigned mask, float *best, int *best_perm, tr_score *pair)
{
    for (int o = GROUP / 2; o > 0; o >>= 1) {
        float os = __shfl_down_sync(mask, *best, o, GROUP);
        int op = __shfl_down_sync(mask, *best_perm, o, GROUP);
        if (tr_sum_better(os, op, *best, *best_perm)) {
            *best = os;
            *best_perm = op;
        }
        tr_score other;
        other.log_fom = __shfl_down_sync(mask, pair->log_fom, o, GROUP);
        other.perm = (uint16_t)__shfl_down_sync(mask, (int)pair->perm, o, GROUP);
        other.hyp = TR_HYP_PAIR;
        other.pad = 0;
        if (tr_score_better(other, *pair))
            *pair = other;
    }
}

/* One group of GROUP lanes per candidate slot: gather, paths, the orderings searched (tr_search: the
 * lanes share them out by their first two points, and a bound). */
__global__ void __launch_bounds__(BLOCK)
k_score(const uint32_t *first, uint32_t base, const uint32_t *slot_event, uint32_t n_slots,
        const tr_point *pts, const tr_event_info *info, const tr_cand *cands, const tr_physics *tab,
        tr_score *scores)
{
    __shared__ tr_clu clu[GROUPS_PER_BLOCK];
    __shared__ float bound[GROUPS_PER_BLOCK]; /* the lanes' shared bound (tr_search) */
    int group = threadIdx.x / GROUP, lane = threadIdx.x % GROUP;
    uint32_t slot = blockIdx.x * GROUPS_PER_BLOCK + group;
    if (slot >= n_slots)
        return;
    uint32_t ev = slot_event[slot];
    uint32_t off = first[ev] - base;
    if (slot - off >= info[ev].n_cands)
        return; /* the whole group leaves together */
    unsigned mask = 0xFFu << ((threadIdx.x & 31) & ~(GROUP - 1));
    tr_cand cand = cands[slot];
    tr_clu *c = &clu[group];
    int n = cand.n;
    if (lane == 0)
        tr_clu_begin(c, n);
    if (lane < n)
        tr_clu_point(&c_params, c, lane + 1, &pts[off + cand.pt[lane]]);
    __syncwarp(mask);
    if (lane == 0) {
        tr_clu_energy(c);
        bound[group] = -3.0e38f;
    }
    int pairs = n * (n + 1) / 2;
    for (int q = lane; q < pairs; q += GROUP) {
        int i, j;
        tr_clu_pair(n, q, &i, &j);
        tr_clu_path(&c_params, &c_geo, c, i, j);
    }
    __syncwarp(mask);
    float best;
    int best_perm;
    tr_search(&c_params, tab, c, lane, GROUP, &bound[group], &best, &best_perm);
    tr_score pair = { -3.0e38f, 0, TR_HYP_PAIR, 0 };
    if (lane < n && tr_pair_possible(c)) {
        pair.log_fom = tr_pair_log_fom(&c_params, tab, c, lane + 1);
        pair.perm = (uint16_t)(lane * tr_factorial(n - 1));
    }
    reduce_group(mask, &best, &best_perm, &pair);
    if (lane == 0) {
        tr_score s = { TR_DIV(best, (float)(2 * n - 1)), (uint16_t)best_perm, TR_HYP_COMPTON, 0 };
        scores[slot] = tr_score_better(pair, s) ? pair : s;
    }
}

/* Takes the first pass's clusters; without retrack, the single points too. */
__global__ void k_select(const uint32_t *first, uint32_t base, uint32_t n_events, const tr_point *pts,
                         const tr_cand *cands, const tr_score *scores, const tr_physics *tab,
                         const uint32_t *perms, uint16_t *order, float *key, uint8_t *used, tr_event_info *info,
                         tr_gamma *gammas)
{
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_events)
        return;
    uint32_t off = first[e] - base;
    int n = (int)(first[e + 1] - first[e]);
    tr_event_info in = info[e];
    for (int i = 0; i < n; i++)
        used[off + i] = 0;
    int g = tr_select_clusters(&c_params, perms, pts + off, tr_size_bonus(&c_params, n), cands + off, scores + off,
                               in.n_cands, order + off, key + off, used + off, gammas + off, 0);
    if (c_params.retrack)
        in.n_gammas = (uint16_t)g; /* the singles come after the second pass */
    else
        tr_select_singles(&c_params, tab, &c_geo, pts + off, n, used + off, gammas + off, g, &in);
    info[e] = in;
}

/* The second pass's candidates: the points left free, clustered on their own
 * into cands (event indices); their count, components over 7 points and the
 * points left go to again[e] (n_cands, big_clusters, unused). */
__global__ void k_recluster(const uint32_t *first, uint32_t base, uint32_t n_events, const tr_point *pts,
                            const uint8_t *used, tr_point *sub, uint16_t *map, cluster_bufs sb, tr_cand *cands,
                            tr_event_info *again)
{
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_events)
        return;
    uint32_t off = first[e] - base;
    int n = (int)(first[e + 1] - first[e]);
    int left = tr_leftovers(pts + off, n, used + off, sub + off, map + off), nc = 0;
    uint16_t big = 0;
    if (left >= 2 && left < n) {
        nc = cluster_event(sub + off, left, sb, off, cands + off, &big);
        tr_cands_remap(cands + off, nc, map + off);
    }
    tr_event_info a = { 0, (uint16_t)nc, big, (uint16_t)left };
    again[e] = a;
}

/* Takes the second pass's clusters, then the single points; the counts of both passes into info. */
__global__ void k_select_again(const uint32_t *first, uint32_t base, uint32_t n_events, const tr_point *pts,
                               const tr_cand *cands, const tr_score *scores, const tr_physics *tab,
                               const uint32_t *perms, uint16_t *order, float *key, uint8_t *used,
                               const tr_event_info *again,
                               tr_event_info *info, tr_gamma *gammas)
{
    uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_events)
        return;
    uint32_t off = first[e] - base;
    int n = (int)(first[e + 1] - first[e]);
    tr_event_info in = info[e], a = again[e];
    int g = tr_select_clusters(&c_params, perms, pts + off, tr_size_bonus(&c_params, a.unused), cands + off, scores + off,
                               a.n_cands, order + off, key + off, used + off, gammas + off, in.n_gammas);
    in.n_cands = (uint16_t)(in.n_cands + a.n_cands);
    in.big_clusters = (uint16_t)(in.big_clusters + a.big_clusters);
    tr_select_singles(&c_params, tab, &c_geo, pts + off, n, used + off, gammas + off, g, &in);
    info[e] = in;
}

/* ---- host side ------------------------------------------------------------------ */

struct dev_buffers {
    size_t cap_events, cap_points;
    uint32_t *first, *slot_event;
    tr_point *points;
    tr_cand *cands;
    tr_score *scores;
    tr_event_info *info, *again;
    tr_gamma *gammas;
    cluster_bufs cl;
    uint16_t *order, *map;
    float *key;
    uint8_t *used;
    tr_point *sub;
};

struct tr_gpu {
    int device;
    cudaStream_t stream[STREAMS];
    dev_buffers buf[STREAMS];
    tr_physics *physics;
    uint32_t *perms;
    bool retrack;                    /* the model's second pass (c_params.retrack, read on the host) */
    size_t hcap_events, hcap_points; /* pinned staging */
    uint32_t *h_first;
    tr_point *h_points;
    tr_cand *h_cands;
    tr_event_info *h_info;
    tr_gamma *h_gammas;
    cudaEvent_t mark[6];
};

static void free_buffers(dev_buffers *d)
{
    cudaFree(d->first);
    cudaFree(d->slot_event);
    cudaFree(d->points);
    cudaFree(d->cands);
    cudaFree(d->scores);
    cudaFree(d->info);
    cudaFree(d->gammas);
    cudaFree(d->cl.parent);
    cudaFree(d->cl.next);
    cudaFree(d->cl.tail);
    cudaFree(d->cl.size);
    cudaFree(d->cl.dirty);
    cudaFree(d->cl.norm);
    cudaFree(d->cl.pair);
    cudaFree(d->order);
    cudaFree(d->key);
    cudaFree(d->used);
    cudaFree(d->again);
    cudaFree(d->map);
    cudaFree(d->sub);
    memset(d, 0, sizeof *d);
}

static void free_host(tr_gpu *g)
{
    cudaFreeHost(g->h_first);
    cudaFreeHost(g->h_points);
    cudaFreeHost(g->h_cands);
    cudaFreeHost(g->h_info);
    cudaFreeHost(g->h_gammas);
    g->h_first = NULL;
    g->h_points = NULL;
    g->h_cands = NULL;
    g->h_info = NULL;
    g->h_gammas = NULL;
    g->hcap_events = g->hcap_points = 0;
}

extern "C" void tr_gpu_destroy(tr_gpu *g)
{
    if (!g)
        return;
    gpu_select(g->device, nullptr, 0);
    for (int s = 0; s < STREAMS; s++) {
        if (g->stream[s])
            cudaStreamSynchronize(g->stream[s]);
        free_buffers(&g->buf[s]);
        if (g->stream[s])
            cudaStreamDestroy(g->stream[s]);
    }
    for (int i = 0; i < 6; i++)
        if (g->mark[i])
            cudaEventDestroy(g->mark[i]);
    free_host(g);
    cudaFree(g->physics);
    cudaFree(g->perms);
    delete g;
}

extern "C" int tr_gpu_create(tr_gpu **out, const tr_model *m, char *msg, size_t len)
{
    *out = NULL;
    tr_gpu *g = new (std::nothrow) tr_gpu();
    if (!g) {
        snprintf(msg, len, "no host memory for the GPU state");
        return GPU_NOMEM;
    }
    *out = g;
    g->retrack = m->params.retrack != 0;
    GPU_CHECK(cudaGetDevice(&g->device), "reading the CUDA device");
    GPU_CHECK(cudaMemcpyToSymbol(c_params, &m->params, sizeof m->params), "uploading the parameters");
    GPU_CHECK(cudaMemcpyToSymbol(c_geo, &m->geo, sizeof m->geo), "uploading the crystals");
    GPU_CHECK(cudaMalloc(&g->physics, sizeof m->physics), "allocating the physics table");
    GPU_CHECK(cudaMemcpy(g->physics, m->physics, sizeof m->physics, cudaMemcpyHostToDevice),
       "uploading the physics table");
    GPU_CHECK(cudaMalloc(&g->perms, sizeof m->perms), "allocating the permutation tables");
    GPU_CHECK(cudaMemcpy(g->perms, m->perms, sizeof m->perms, cudaMemcpyHostToDevice),
       "uploading the permutation tables");
    for (int s = 0; s < STREAMS; s++)
        GPU_CHECK(cudaStreamCreateWithFlags(&g->stream[s], cudaStreamNonBlocking), "creating a stream");
    for (int i = 0; i < 6; i++)
        GPU_CHECK(cudaEventCreate(&g->mark[i]), "creating a timing event");
    return GPU_OK;
}

/* Grows one stream's buffers to hold a chunk of ne events and np points. */
static int reserve_device(dev_buffers *d, size_t ne, size_t np, char *msg, size_t len)
{
    if (ne <= d->cap_events && np <= d->cap_points)
        return GPU_OK;
    size_t ce = ne > d->cap_events ? ne + ne / 2 + 64 : d->cap_events;
    size_t cp = np > d->cap_points ? np + np / 2 + 1024 : d->cap_points;
    free_buffers(d);
    GPU_CHECK(cudaMalloc(&d->first, (ce + 1) * sizeof *d->first), "allocating event offsets");
    GPU_CHECK(cudaMalloc(&d->info, ce * sizeof *d->info), "allocating event results");
    GPU_CHECK(cudaMalloc(&d->slot_event, cp * sizeof *d->slot_event), "allocating slot owners");
    GPU_CHECK(cudaMalloc(&d->points, cp * sizeof *d->points), "allocating points");
    GPU_CHECK(cudaMalloc(&d->cands, cp * sizeof *d->cands), "allocating candidates");
    GPU_CHECK(cudaMalloc(&d->scores, cp * sizeof *d->scores), "allocating scores");
    GPU_CHECK(cudaMalloc(&d->gammas, cp * sizeof *d->gammas), "allocating gammas");
    GPU_CHECK(cudaMalloc(&d->cl.parent, cp * sizeof(uint16_t)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.next, cp * sizeof(uint16_t)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.tail, cp * sizeof(uint16_t)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.size, cp * sizeof(uint16_t)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.dirty, cp), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.norm, cp * sizeof(float)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->cl.pair, cp * PAIR_SLOTS * sizeof(uint32_t)), "allocating clustering scratch");
    GPU_CHECK(cudaMalloc(&d->order, cp * sizeof(uint16_t)), "allocating selection scratch");
    GPU_CHECK(cudaMalloc(&d->key, cp * sizeof(float)), "allocating selection scratch");
    GPU_CHECK(cudaMalloc(&d->used, cp), "allocating selection scratch");
    GPU_CHECK(cudaMalloc(&d->again, ce * sizeof *d->again), "allocating second-pass counts");
    GPU_CHECK(cudaMalloc(&d->map, cp * sizeof(uint16_t)), "allocating second-pass scratch");
    GPU_CHECK(cudaMalloc(&d->sub, cp * sizeof *d->sub), "allocating second-pass scratch");
    d->cap_events = ce;
    d->cap_points = cp;
    return GPU_OK;
}

static int reserve_host(tr_gpu *g, size_t ne, size_t np, char *msg, size_t len)
{
    if (ne <= g->hcap_events && np <= g->hcap_points)
        return GPU_OK;
    size_t ce = ne > g->hcap_events ? ne + ne / 2 + 64 : g->hcap_events;
    size_t cp = np > g->hcap_points ? np + np / 2 + 1024 : g->hcap_points;
    free_host(g);
    GPU_CHECK(cudaMallocHost(&g->h_first, (ce + 1) * sizeof *g->h_first), "allocating pinned offsets");
    GPU_CHECK(cudaMallocHost(&g->h_info, ce * sizeof *g->h_info), "allocating pinned results");
    GPU_CHECK(cudaMallocHost(&g->h_points, cp * sizeof *g->h_points), "allocating pinned points");
    GPU_CHECK(cudaMallocHost(&g->h_cands, cp * sizeof *g->h_cands), "allocating pinned candidates");
    GPU_CHECK(cudaMallocHost(&g->h_gammas, cp * sizeof *g->h_gammas), "allocating pinned gammas");
    g->hcap_events = ce;
    g->hcap_points = cp;
    return GPU_OK;
}

static unsigned blocks(size_t n, unsigned per) { return (unsigned)((n + per - 1) / per); }

/* Records timing mark i on the stream when timing. */
static void mark(tr_gpu *g, cudaStream_t st, bool timing, int i)
{
    if (timing)
        cudaEventRecord(g->mark[i], st);
}

/* Events e0 .. e1-1 on stream s: upload, kernels, download, all asynchronous. */
static int run_chunk(tr_gpu *g, int s, uint32_t e0, uint32_t e1, bool have_cands, bool timing,
                     char *msg, size_t len)
{
    dev_buffers *d = &g->buf[s];
    cudaStream_t st = g->stream[s];
    uint32_t ne = e1 - e0, base = g->h_first[e0], np = g->h_first[e1] - base;
    int rc = reserve_device(d, ne, np, msg, len);
    if (rc != GPU_OK)
        return rc;
    mark(g, st, timing, 0);
    GPU_CHECK(cudaMemcpyAsync(d->first, g->h_first + e0, (ne + 1) * sizeof(uint32_t), cudaMemcpyHostToDevice, st),
       "uploading event offsets");
    GPU_CHECK(cudaMemcpyAsync(d->points, g->h_points + base, np * sizeof(tr_point), cudaMemcpyHostToDevice, st),
       "uploading points");
    if (have_cands) {
        GPU_CHECK(cudaMemcpyAsync(d->cands, g->h_cands + base, np * sizeof(tr_cand), cudaMemcpyHostToDevice, st),
           "uploading candidates");
        GPU_CHECK(cudaMemcpyAsync(d->info, g->h_info + e0, ne * sizeof(tr_event_info), cudaMemcpyHostToDevice, st),
           "uploading candidate counts");
    }
    mark(g, st, timing, 1);
    k_slots<<<blocks(ne, BLOCK), BLOCK, 0, st>>>(d->first, base, ne, d->slot_event);
    if (!have_cands)
        k_cluster<<<blocks(ne, BLOCK), BLOCK, 0, st>>>(d->first, base, ne, d->points, d->cl, d->cands,
                                                       d->info);
    mark(g, st, timing, 2);
    if (np > 0)
        k_score<<<blocks(np, GROUPS_PER_BLOCK), BLOCK, 0, st>>>(d->first, base, d->slot_event, np,
                                                                d->points, d->info, d->cands,
                                                                g->physics, d->scores);
    mark(g, st, timing, 3);
    k_select<<<blocks(ne, BLOCK), BLOCK, 0, st>>>(d->first, base, ne, d->points, d->cands, d->scores,
                                                  g->physics, g->perms, d->order, d->key, d->used, d->info,
                                                  d->gammas);
    if (g->retrack) {
        k_recluster<<<blocks(ne, BLOCK), BLOCK, 0, st>>>(d->first, base, ne, d->points, d->used, d->sub, d->map,
                                                         d->cl, d->cands, d->again);
        if (np > 0)
            k_score<<<blocks(np, GROUPS_PER_BLOCK), BLOCK, 0, st>>>(d->first, base, d->slot_event, np,
                                                                    d->points, d->again, d->cands,
                                                                    g->physics, d->scores);
        k_select_again<<<blocks(ne, BLOCK), BLOCK, 0, st>>>(d->first, base, ne, d->points, d->cands, d->scores,
                                                            g->physics, g->perms, d->order, d->key, d->used, d->again,
                                                            d->info, d->gammas);
    }
    GPU_CHECK(cudaGetLastError(), "launching the tracking kernels");
    mark(g, st, timing, 4);
    GPU_CHECK(cudaMemcpyAsync(g->h_info + e0, d->info, ne * sizeof(tr_event_info), cudaMemcpyDeviceToHost, st),
       "downloading event results");
    GPU_CHECK(cudaMemcpyAsync(g->h_gammas + base, d->gammas, np * sizeof(tr_gamma), cudaMemcpyDeviceToHost, st),
       "downloading gammas");
    mark(g, st, timing, 5);
    return GPU_OK;
}

static double elapsed(tr_gpu *g, int a, int b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, g->mark[a], g->mark[b]);
    return ms;
}

/* Chunk ends: about CHUNKS chunks of equal points, never splitting an event. */
static int plan_chunks(const tr_batch *b, bool timing, uint32_t *ends)
{
    uint32_t n_points = b->first[b->n_events];
    int chunks = timing || n_points < CHUNKS * MIN_CHUNK_POINTS ? 1 : CHUNKS;
    int c = 0;
    uint32_t e = 0;
    for (int k = 1; k < chunks; k++) {
        uint32_t target = (uint32_t)((uint64_t)n_points * k / chunks);
        while (e < b->n_events && b->first[e] < target)
            e++;
        if (e > (c ? ends[c - 1] : 0))
            ends[c++] = e;
    }
    ends[c++] = b->n_events;
    return c;
}

extern "C" int tr_gpu_track(tr_gpu *g, const tr_batch *b, const tr_cand *cands, const tr_event_info *cinfo,
                            tr_out *o, tr_gpu_times *times, char *msg, size_t len)
{
    uint32_t ne = b->n_events, np = b->first[ne];
    if (ne == 0)
        return GPU_OK;
    GPU_SELECT(g->device);
    int rc = reserve_host(g, ne, np, msg, len);
    if (rc != GPU_OK)
        return rc;
    memcpy(g->h_first, b->first, (ne + 1) * sizeof(uint32_t));
    memcpy(g->h_points, b->points, np * sizeof(tr_point));
    if (cands) {
        memcpy(g->h_cands, cands, np * sizeof(tr_cand));
        memcpy(g->h_info, cinfo, ne * sizeof(tr_event_info));
    }
    uint32_t ends[CHUNKS];
    int chunks = plan_chunks(b, times != NULL, ends);
    uint32_t e0 = 0;
    for (int k = 0; k < chunks; k++) {
        if ((rc = run_chunk(g, k % STREAMS, e0, ends[k], cands != NULL, times != NULL, msg, len)) != GPU_OK)
            return rc;
        e0 = ends[k];
    }
    for (int s = 0; s < STREAMS; s++)
        GPU_CHECK(cudaStreamSynchronize(g->stream[s]), "running the tracking kernels");
    if (times) {
        times->upload = elapsed(g, 0, 1);
        times->cluster = elapsed(g, 1, 2);
        times->score = elapsed(g, 2, 3);
        times->select = elapsed(g, 3, 4);
        times->download = elapsed(g, 4, 5);
    }
    memcpy(o->info, g->h_info, ne * sizeof(tr_event_info));
    memcpy(o->gammas, g->h_gammas, np * sizeof(tr_gamma));
    return GPU_OK;
}
