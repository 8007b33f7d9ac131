/* histogram.cu: GPU histogramming: resident counts, shared-memory sub-histograms where they fit, warp-aggregated global atomics otherwise. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "histogram_gpu.h"

namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxCopiesLog2 = 5; /* one copy per lane of a warp */
/* A sub-histogram with its copies stays under this so that several blocks
 * share a multiprocessor; a group too large for it is still counted in shared
 * memory, with one copy, while it fits the device's per-block maximum. */
constexpr size_t kCompactBytes = 48 * 1024;
/* Each block flushes its whole sub-histogram, so a launch gets no more blocks
 * than keep every thread busy for this many entries. */
constexpr size_t kEntriesPerThread = 16;
constexpr size_t kAlign = 256;

struct plan {
    bool shared;
    unsigned copies_log2;
    size_t bytes; /* dynamic shared memory per block */
};

struct staging {
    void *host; /* pinned */
    void *dev;
    size_t cap;
    cudaEvent_t done; /* recorded after the last launch that reads it */
};

struct u8_table {
    unsigned slot[256];
};

/* Sums the copies of each slot and adds the non-zero sums to the device
 * counts.  Lane l reads copy (r + l) mod copies first, so that with 32 copies
 * the lanes of a warp read 32 different banks. */
__device__ void flush(const unsigned *sub, unsigned total, unsigned copies_log2,
                      unsigned long long *dst, const unsigned *map)
{
    const unsigned copies = 1u << copies_log2, lane = threadIdx.x & 31;
    for (unsigned s = threadIdx.x; s < total; s += blockDim.x) {
        unsigned sum = 0;
        for (unsigned r = 0; r < copies; r++)
            sum += sub[(s << copies_log2) | ((r + lane) & (copies - 1))];
        if (sum)
            atomicAdd(dst + (map ? map[s] : s), (unsigned long long)sum);
    }
}

/* Per-block private sub-histogram of the whole group.  Thread t increments
 * copy t mod copies of a slot; the copies of one slot are adjacent words, so
 * with 32 copies the lanes of a warp always hit 32 different banks, even when
 * they all count the same hot bin. */
__global__ void __launch_bounds__(kThreads) fill_shared(histo_group g, histo_entries e,
                                                        unsigned long long *counts,
                                                        unsigned copies_log2)
{
    extern __shared__ unsigned sub[];
    const histo_group grp = g;
    const histo_entries ent = e;
    const unsigned total = (unsigned)(grp.instances * grp.slots);
    for (unsigned k = threadIdx.x; k < total << copies_log2; k += blockDim.x)
        sub[k] = 0;
    __syncthreads();
    const unsigned copy = threadIdx.x & ((1u << copies_log2) - 1);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < ent.n; i += stride) {
        unsigned s = (unsigned)histo_entry_slot(&grp, &ent, i);
        atomicAdd(&sub[(s << copies_log2) | copy], 1u);
    }
    __syncthreads();
    flush(sub, total, copies_log2, counts + grp.offset, nullptr);
}

/* Global atomics, one per distinct slot of a warp: lanes holding the same
 * slot elect one of them, which adds their number.  The loop runs warp by
 * warp (the stride is a multiple of 32) so that the ballot sees every lane. */
__global__ void __launch_bounds__(kThreads) fill_global(histo_group g, histo_entries e,
                                                        unsigned long long *counts)
{
    const histo_group grp = g;
    const histo_entries ent = e;
    const unsigned lane = threadIdx.x & 31;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    for (size_t w = first; w < ent.n; w += stride) {
        const size_t i = w + lane;
        const unsigned active = __ballot_sync(0xffffffffu, i < ent.n);
        if (i >= ent.n)
            continue;
        unsigned long long s = grp.offset + histo_entry_slot(&grp, &ent, i);
        unsigned peers = __match_any_sync(active, s);
        if (lane == (unsigned)__ffs(peers) - 1)
            atomicAdd(counts + s, (unsigned long long)__popc(peers));
    }
}

__device__ __forceinline__ void count_word(unsigned *sub, unsigned w, unsigned lane)
{
#pragma unroll
    for (int k = 0; k < 4; k++)
        atomicAdd(&sub[(((w >> (8 * k)) & 0xffu) << kMaxCopiesLog2) | lane], 1u);
}

__device__ __forceinline__ void count_vec(unsigned *sub, uint4 q, unsigned lane)
{
    count_word(sub, q.x, lane);
    count_word(sub, q.y, lane);
    count_word(sub, q.z, lane);
    count_word(sub, q.w, lane);
}

/* Raw bytes: the block counts the 256 byte values (32 interleaved copies,
 * 32 KiB) and maps them to slots only when it flushes, through a table built
 * by histo_u8_table, so the per-byte work is one shift and one shared atomic
 * whatever the axis.  Loads are 16 bytes wide, four in flight per thread. */
__global__ void __launch_bounds__(kThreads) fill_u8(const uint8_t *data, size_t n, u8_table t,
                                                    unsigned long long *dst)
{
    __shared__ unsigned sub[256 << kMaxCopiesLog2];
    for (unsigned k = threadIdx.x; k < 256u << kMaxCopiesLog2; k += blockDim.x)
        sub[k] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31;
    const size_t head = min((size_t)((16 - ((uintptr_t)data & 15)) & 15), n);
    const size_t nvec = (n - head) / 16, tail = head + 16 * nvec;
    const uint4 *vec = (const uint4 *)(data + head);
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    if (tid < head)
        atomicAdd(&sub[((unsigned)data[tid] << kMaxCopiesLog2) | lane], 1u);
    if (tid < n - tail)
        atomicAdd(&sub[((unsigned)data[tail + tid] << kMaxCopiesLog2) | lane], 1u);
    size_t i = tid;
    for (; i + 3 * stride < nvec; i += 4 * stride) {
        uint4 a = __ldcs(vec + i), b = __ldcs(vec + i + stride);
        uint4 c = __ldcs(vec + i + 2 * stride), d = __ldcs(vec + i + 3 * stride);
        count_vec(sub, a, lane);
        count_vec(sub, b, lane);
        count_vec(sub, c, lane);
        count_vec(sub, d, lane);
    }
    for (; i < nvec; i += stride)
        count_vec(sub, __ldcs(vec + i), lane);
    __syncthreads();
    flush(sub, 256, kMaxCopiesLog2, dst, t.slot);
}

} /* namespace */

struct histo_gpu {
    unsigned long long *counts;
    uint64_t slots;
    cudaStream_t stream;
    staging stage[2];
    int next;
    int device, sms;
    size_t smem_max; /* dynamic shared memory a block may opt in to */
};

static plan plan_for(const histo_gpu *g, const histo_group *grp)
{
    plan p = { false, 0, 0 };
    const uint64_t total = (uint64_t)grp->instances * grp->slots;
    const uint64_t word = sizeof(unsigned);
    if (total * word > g->smem_max)
        return p;
    p.shared = true;
    p.copies_log2 = kMaxCopiesLog2;
    while (p.copies_log2 > 0 && (total << p.copies_log2) * word > kCompactBytes)
        p.copies_log2--;
    p.bytes = (size_t)((total << p.copies_log2) * word);
    return p;
}

static unsigned blocks_for(size_t n, int resident_per_sm, int sms)
{
    size_t want = (n + kThreads * kEntriesPerThread - 1) / (kThreads * kEntriesPerThread);
    size_t most = (size_t)(resident_per_sm > 0 ? resident_per_sm : 1) * (size_t)sms;
    return (unsigned)(want < 1 ? 1 : want < most ? want : most);
}

extern "C" int histo_gpu_create(histo_gpu **out, uint64_t slots, char *msg, size_t len)
{
    histo_gpu *g = (histo_gpu *)calloc(1, sizeof *g);
    cudaError_t err = cudaErrorMemoryAllocation;
    int optin = 0, rc;
    *out = nullptr;
    if (!g) {
        snprintf(msg, len, "out of host memory for the GPU context");
        return GPU_NOMEM;
    }
    g->slots = slots;
    if ((err = cudaGetDevice(&g->device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, g->device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, g->device)) !=
            cudaSuccess) {
        rc = GPU_ERROR(err, "reading the CUDA device");
        goto fail;
    }
    g->smem_max = (size_t)optin;
    if ((err = cudaFuncSetAttribute(fill_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    optin)) != cudaSuccess) {
        rc = GPU_ERROR(err, "raising the shared-memory limit");
        goto fail;
    }
    if ((err = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (err = cudaEventCreateWithFlags(&g->stage[0].done, cudaEventDisableTiming)) !=
            cudaSuccess ||
        (err = cudaEventCreateWithFlags(&g->stage[1].done, cudaEventDisableTiming)) !=
            cudaSuccess) {
        rc = GPU_ERROR(err, "creating the stream");
        goto fail;
    }
    if ((err = cudaMalloc(&g->counts, slots * sizeof *g->counts)) != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "allocating %.1f MiB of device counts",
                 (double)slots * sizeof *g->counts / (1 << 20));
        rc = GPU_ERROR(err, what);
        goto fail;
    }
    if ((rc = histo_gpu_clear(g, msg, len)) != GPU_OK)
        goto fail;
    *out = g;
    return GPU_OK;
fail:
    histo_gpu_destroy(g);
    return rc;
}

extern "C" void histo_gpu_destroy(histo_gpu *g)
{
    if (!g)
        return;
    gpu_select(g->device, nullptr, 0);
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    for (int k = 0; k < 2; k++) {
        cudaFreeHost(g->stage[k].host);
        cudaFree(g->stage[k].dev);
        if (g->stage[k].done)
            cudaEventDestroy(g->stage[k].done);
    }
    cudaFree(g->counts);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

extern "C" int histo_gpu_clear(histo_gpu *g, char *msg, size_t len)
{
    GPU_SELECT(g->device);
    cudaError_t err = cudaMemsetAsync(g->counts, 0, g->slots * sizeof *g->counts, g->stream);
    return err == cudaSuccess ? GPU_OK : GPU_ERROR(err, "clearing the counts");
}

static int launch(histo_gpu *g, const histo_group *grp, const histo_entries *e, char *msg,
                  size_t len)
{
    if (e->n == 0)
        return GPU_OK;
    plan p = plan_for(g, grp);
    int per_sm = 0;
    cudaError_t err;
    if (p.shared) {
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_shared, kThreads,
                                                            p.bytes);
        if (err != cudaSuccess)
            return GPU_ERROR(err, "occupancy of the shared-memory kernel");
        fill_shared<<<blocks_for(e->n, per_sm, g->sms), kThreads, p.bytes, g->stream>>>(
            *grp, *e, g->counts, p.copies_log2);
    } else {
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_global, kThreads, 0);
        if (err != cudaSuccess)
            return GPU_ERROR(err, "occupancy of the global-atomics kernel");
        fill_global<<<blocks_for(e->n, per_sm, g->sms), kThreads, 0, g->stream>>>(*grp, *e,
                                                                                 g->counts);
    }
    err = cudaGetLastError();
    return err == cudaSuccess ? GPU_OK : GPU_ERROR(err, "launching a fill");
}

extern "C" int histo_gpu_fill_device(histo_gpu *g, const histo_group *grp,
                                     const histo_entries *dev, char *msg, size_t len)
{
    GPU_SELECT(g->device);
    return launch(g, grp, dev, msg, len);
}

extern "C" int histo_gpu_fill_u8_device(histo_gpu *g, const histo_group *grp, uint32_t inst,
                                        const uint8_t *dev, size_t n, char *msg, size_t len)
{
    u8_table t;
    int per_sm = 0;
    if (n == 0)
        return GPU_OK;
    GPU_SELECT(g->device);
    histo_u8_table(&grp->ax[0], t.slot);
    cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_u8, kThreads, 0);
    if (err != cudaSuccess)
        return GPU_ERROR(err, "occupancy of the 8-bit kernel");
    unsigned long long *dst = g->counts + grp->offset + (uint64_t)inst * grp->slots;
    fill_u8<<<blocks_for(n / 16 + 1, per_sm, g->sms), kThreads, 0, g->stream>>>(dev, n, t, dst);
    err = cudaGetLastError();
    return err == cudaSuccess ? GPU_OK : GPU_ERROR(err, "launching the 8-bit fill");
}

static size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/* Bytes the entries of all groups take in a staging buffer. */
static size_t staged_bytes(const histo_group *groups, const histo_entries *e, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].n == 0)
            continue;
        size_t arrays = 1 + (e[i].inst != nullptr) + (groups[i].dims == 2);
        bytes += arrays * aligned(e[i].n * 4);
    }
    return bytes;
}

/* Makes buffer s hold `bytes`; it is idle (its event has completed). */
static int reserve(staging *s, size_t bytes, char *msg, size_t len)
{
    if (s->cap >= bytes)
        return GPU_OK;
    size_t cap = bytes + bytes / 2;
    cudaFreeHost(s->host);
    cudaFree(s->dev);
    s->host = s->dev = nullptr;
    s->cap = 0;
    cudaError_t err = cudaHostAlloc(&s->host, cap, cudaHostAllocDefault);
    if (err == cudaSuccess)
        err = cudaMalloc(&s->dev, cap);
    if (err != cudaSuccess)
        return GPU_ERROR(err, "allocating staging buffers");
    s->cap = cap;
    return GPU_OK;
}

/* Copies one array into the staging buffer; returns its device address. */
static const void *stage(staging *s, size_t *at, const void *src, size_t bytes)
{
    memcpy((char *)s->host + *at, src, bytes);
    const void *dev = (const char *)s->dev + *at;
    *at += aligned(bytes);
    return dev;
}

extern "C" int histo_gpu_fill_host(histo_gpu *g, const histo_group *groups,
                                   const histo_entries *e, size_t n, char *msg, size_t len)
{
    staging *s = &g->stage[g->next];
    size_t bytes = staged_bytes(groups, e, n), at = 0;
    cudaError_t err;
    int rc;
    if (bytes == 0)
        return GPU_OK;
    GPU_SELECT(g->device);
    if ((err = cudaEventSynchronize(s->done)) != cudaSuccess)
        return GPU_ERROR(err, "waiting for a staging buffer");
    if ((rc = reserve(s, bytes, msg, len)) != GPU_OK)
        return rc;
    histo_entries *dev = (histo_entries *)calloc(n, sizeof *dev);
    if (!dev) {
        snprintf(msg, len, "out of host memory for %zu entry descriptors", n);
        return GPU_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        dev[i].n = e[i].n;
        if (e[i].n == 0)
            continue;
        dev[i].x = (const float *)stage(s, &at, e[i].x, e[i].n * sizeof(float));
        if (groups[i].dims == 2)
            dev[i].y = (const float *)stage(s, &at, e[i].y, e[i].n * sizeof(float));
        if (e[i].inst)
            dev[i].inst = (const uint32_t *)stage(s, &at, e[i].inst, e[i].n * sizeof(uint32_t));
    }
    rc = GPU_OK;
    if ((err = cudaMemcpyAsync(s->dev, s->host, at, cudaMemcpyHostToDevice, g->stream)) !=
        cudaSuccess)
        rc = GPU_ERROR(err, "copying entries to the device");
    for (size_t i = 0; i < n && rc == GPU_OK; i++)
        rc = launch(g, &groups[i], &dev[i], msg, len);
    free(dev);
    if (rc == GPU_OK && (err = cudaEventRecord(s->done, g->stream)) != cudaSuccess)
        rc = GPU_ERROR(err, "recording the staging event");
    g->next ^= 1;
    return rc;
}

extern "C" void histo_gpu_plan_text(const histo_gpu *g, const histo_group *grp, char *out,
                                    size_t len)
{
    plan p = plan_for(g, grp);
    if (p.shared)
        snprintf(out, len, "shared-memory sub-histograms, %u interleaved cop%s, %.1f KiB per block",
                 1u << p.copies_log2, p.copies_log2 ? "ies" : "y", p.bytes / 1024.0);
    else
        snprintf(out, len, "global atomics, warp-aggregated");
}

extern "C" int histo_gpu_sync(histo_gpu *g, char *msg, size_t len)
{
    GPU_SELECT(g->device);
    cudaError_t err = cudaStreamSynchronize(g->stream);
    return err == cudaSuccess ? GPU_OK : GPU_ERROR(err, "GPU work");
}

extern "C" int histo_gpu_download(histo_gpu *g, uint64_t *host, char *msg, size_t len)
{
    int rc = histo_gpu_sync(g, msg, len);
    if (rc != GPU_OK)
        return rc;
    cudaError_t err = cudaMemcpy(host, g->counts, g->slots * sizeof *g->counts,
                                 cudaMemcpyDeviceToHost);
    return err == cudaSuccess ? GPU_OK : GPU_ERROR(err, "copying the counts back");
}
