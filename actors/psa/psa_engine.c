/* psa_engine.c: the choice between the GPU, the CPU and the reference, the basis's upload, and the fall back to the CPU. */
#include "psa_engine.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "narval.h"
#include "psa_naive.h"
#ifdef NARWHAL_HAVE_CUDA
#include "gridsearch_gpu.h"
#include "psa_block_gpu.h"
#endif

#ifdef NARWHAL_HAVE_CUDA
/* The layout as the GPU takes it: one array of near lists for all segments. */
static int gpu_upload(psa_engine *e, char *msg, size_t len)
{
    const psa_layout *l = e->layout;
    gs_segment seg[PSA_SEGMENTS];
    uint64_t n_first = 0, n_near = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        n_first += l->seg[s].n_coarse + 1;
        n_near += l->seg[s].near_first[l->seg[s].n_coarse];
    }
    uint32_t *first = malloc(n_first * sizeof *first), *near = malloc((n_near + 1) * sizeof *near);
    int rc = GS_GPU_NOMEM;
    snprintf(msg, len, "no host memory for the GPU's copy of the neighbourhoods");
    if (first && near) {
        uint64_t f = 0, k = 0;
        for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
            const psa_segment *g = &l->seg[s];
            seg[s] = (gs_segment){ g->offset, g->pm_offset, g->n_points, g->n_coarse, g->pad,
                                   g->n_mask, (uint32_t)f };
            for (uint32_t c = 0; c <= g->n_coarse; c++)
                first[f++] = (uint32_t)(k + g->near_first[c]);
            for (uint32_t j = 0; j < g->near_first[g->n_coarse]; j++)
                near[k + j] = g->near[j];
            k += g->near_first[g->n_coarse];
        }
        int i16 = e->p.data == PSA_I16;
        gs_basis b = { PSA_SEGMENTS, l->window, l->max_k, seg, i16,
                       i16 ? (const void *)l->i16 : l->f32, i16 ? (const void *)l->i16pm : l->f32pm,
                       l->values, l->pm_values, first, near, n_first, n_near };
        rc = gs_gpu_create((gs_gpu **)&e->gpu, e->p.gpu, &b, e->pw, msg, len);
    }
    free(first);
    free(near);
    return rc;
}

/* Every answer names a column of its segment (a device that returned garbage is a failed one). */
static bool answered(const psa_engine *e, const psa_batch *b, char *why, size_t len)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->q[i].column >= e->layout->seg[b->q[i].segment].n_points) {
            snprintf(why, len, "search %zu of %zu came back with column %u, segment %u has %u", i, b->n,
                     b->q[i].column, b->q[i].segment, e->layout->seg[b->q[i].segment].n_points);
            return false;
        }
    return true;
}
#endif

/* Picks the GPU when asked or when usable; msg tells the choice. */
static unsigned choose(psa_engine *e, char *msg, size_t len)
{
    char why[512];
#ifdef NARWHAL_HAVE_CUDA
    if (e->p.device == PSA_DEVICE_AUTO || e->p.device == PSA_DEVICE_GPU) {
        char desc[256], up[256];
        int rc = gs_gpu_probe(e->p.gpu, desc, sizeof desc);
        if (rc == GS_GPU_OK && (rc = gpu_upload(e, up, sizeof up)) == GS_GPU_OK) {
            snprintf(msg, len, "GPU %d: %s; %s", e->p.gpu, desc, up);
            return 0;
        }
        snprintf(why, sizeof why, "%s", rc == GS_GPU_NODEV ? desc : up);
        if (e->p.device == PSA_DEVICE_GPU) {
            snprintf(msg, len, "Device gpu is configured but %s", why);
            return rc == GS_GPU_NOMEM ? NARVAL_E_NOMEM : NARVAL_E_DEVICE;
        }
    }
#else
    snprintf(why, sizeof why, "built without CUDA");
    if (e->p.device == PSA_DEVICE_GPU) {
        snprintf(msg, len, "Device gpu is configured but %s", why);
        return NARVAL_E_DEVICE;
    }
#endif
    int threads = e->p.threads > 0 ? e->p.threads : omp_get_max_threads();
    if (e->p.device == PSA_DEVICE_REFERENCE) {
        e->reference = true;
        snprintf(msg, len, "the naive reference (full search, libm powf, one thread; Device reference "
                 "is configured)");
    } else {
        snprintf(msg, len, "CPU, %s, %d OpenMP threads (%s)", psa_simd_name(e->cpu.simd), threads,
                 e->p.device == PSA_DEVICE_CPU ? "Device cpu is configured" : why);
    }
    return 0;
}

unsigned psa_engine_create(psa_engine *e, const det_basis *b, const psa_layout *l, const gs_pow *pw,
                           const psa_engine_params *p, char *msg, size_t len)
{
    *e = (psa_engine){ .basis = b, .layout = l, .pw = pw, .p = *p };
    psa_cpu_init(&e->cpu, l, pw, p->data, p->simd, p->threads);
    return choose(e, msg, len);
}

void psa_engine_destroy(psa_engine *e)
{
#ifdef NARWHAL_HAVE_CUDA
    pb_gpu_destroy(e->block);
    gs_gpu_destroy(e->gpu);
#endif
    e->block = NULL;
    e->gpu = NULL;
}

bool psa_engine_gpu_times(const psa_engine *e, psa_gpu_times *t)
{
    *t = (psa_gpu_times){ 0 };
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        gs_gpu_times(e->gpu, t);
        return true;
    }
#endif
    return false;
}

const char *psa_engine_where(const psa_engine *e)
{
    return e->gpu ? "GPU" : e->reference ? "reference" : "CPU";
}

#ifdef NARWHAL_HAVE_CUDA
/* The batch's measured values copied, in parallel, into the GPU's pinned
 * buffer (one asynchronous transfer from there); where no pinned memory is
 * left, the batch's own arrays (a slower transfer, same answers). */
static const void *pin(psa_engine *e, const psa_batch *b)
{
    const bool i16 = e->p.data == PSA_I16;
    const unsigned char *src = i16 ? (const void *)b->meas16 : (const void *)b->meas;
    size_t bytes = b->n_meas * (i16 ? sizeof *b->meas16 : sizeof *b->meas);
    unsigned char *dst = gs_gpu_pinned(e->gpu, bytes);
    if (!dst)
        return src;
    enum { PIECE = 1 << 16 };
    long pieces = (long)((bytes + PIECE - 1) / PIECE);
#pragma omp parallel for schedule(static) num_threads(e->p.threads > 0 ? e->p.threads : omp_get_max_threads())
    for (long k = 0; k < pieces; k++) {
        size_t at = (size_t)k * PIECE;
        memcpy(dst + at, src + at, bytes - at < PIECE ? bytes - at : PIECE);
    }
    return dst;
}
#endif

unsigned psa_engine_run(psa_engine *e, psa_batch *b, bool *fell_back, char *msg, size_t len)
{
    *fell_back = false;
    if (b->n == 0)
        return 0;
    if (e->p.data == PSA_I16 && psa_batch_quantise(b))
        return NARVAL_E_NOMEM;
    if (e->reference) {
        psa_naive_search(e->basis, e->layout, e->pw->p, b);
        return 0;
    }
#ifdef NARWHAL_HAVE_CUDA
    if (e->gpu) {
        const void *meas = pin(e, b);
        char why[384];
        if (gs_gpu_search(e->gpu, b->q, b->n, meas, e->p.mode == PSA_ADAPTIVE, why, sizeof why) ==
                GS_GPU_OK &&
            answered(e, b, why, sizeof why))
            return 0;
        snprintf(msg, len, "the GPU failed (%s); the searches go on on the CPU (%s)", why,
                 psa_simd_name(e->cpu.simd));
        pb_gpu_destroy(e->block);
        gs_gpu_destroy(e->gpu);
        e->block = NULL;
        e->gpu = NULL;
        *fell_back = true;
    }
#endif
    return psa_cpu_search(&e->cpu, b, e->p.mode) ? NARVAL_E_NOMEM : 0;
}
