/* psa_backend_cuda.c: the PSA engine's CUDA backend: the layout resident on the device, batches of searches there (kernels/gridsearch.cu); compiled only with CUDA. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gridsearch_gpu.h"
#include "psa_backend.h"
#include "psa_block_gpu.h"

/* GPUPrune on this instance's gs_gpu (the batches' searches and the whole
 * block's: gs_resident_launch launches through it), said after msg; where
 * Mitchell's bound does not hold (p >= 2, a basis value of 64 or more; for
 * geo also a window not of whole groups of four) the fine table prunes
 * instead, and a device without the pruned kernel's shared memory searches
 * unpruned (the same answers every way). */
static void set_prune(psa_engine *e, char *msg, size_t len)
{
    static const char *const name[] = { "off", "exponent", "fine", "log", "byte", "geo" };
    const int mode = e->p.gpu_prune;
    if ((mode == GS_PRUNE_LOG || mode == GS_PRUNE_GEO) && gs_gpu_set_prune(e->gpu, mode) != GPU_OK &&
        gs_gpu_set_prune(e->gpu, GS_PRUNE_FINE) == GPU_OK) {
        size_t at = strlen(msg);
        snprintf(msg + at, len - at, "; full search pruned by the 3-bit bound: GPUPrune %s needs p < 2 and a basis "
                 "of values under 64%s", name[mode], mode == GS_PRUNE_GEO ? ", and a window of whole groups of 4" : "");
        return;
    }
    static const char *const how[] = { "unpruned (GPUPrune off)", "pruned by the exponent bound (GPUPrune exponent)",
                                       "pruned by the 3-bit bound (GPUPrune fine)",
                                       "pruned by Mitchell's logarithm (GPUPrune log)",
                                       "pruned by the byte table (GPUPrune byte)",
                                       "pruned by the geometric mean of Mitchell's logarithms (GPUPrune geo)" };
    const int ok = gs_gpu_set_prune(e->gpu, mode) == GPU_OK;
    size_t at = strlen(msg);
    if (ok)
        snprintf(msg + at, len - at, "; full search %s", how[mode]);
    else
        snprintf(msg + at, len - at, "; full search unpruned: GPUPrune %s needs shared memory this device lacks",
                 name[mode]);
}

/* GPUGuess on this instance's gs_gpu; on is said after msg (off is the default, said by nothing). */
static void set_guess(psa_engine *e, char *msg, size_t len)
{
    gs_gpu_set_guess(e->gpu, e->p.gpu_guess);
    size_t at = strlen(msg);
    if (e->p.gpu_guess && e->p.gpu_prune != GS_PRUNE_OFF)
        snprintf(msg + at, len - at, ", a tile's first step bounded against its own guess (GPUGuess on)");
}

/* Appends a segment's lists (n of them, list c at near[first[c] .. first[c + 1])) to the GPU's arrays. */
static void append_lists(const uint32_t *first, const uint32_t *near, uint32_t n, uint32_t *to_first,
                         uint32_t *to_near, uint64_t *f, uint64_t *k)
{
    for (uint32_t c = 0; c <= n; c++)
        to_first[(*f)++] = (uint32_t)(*k + first[c]);
    memcpy(to_near + *k, near, first[n] * sizeof *near);
    *k += first[n];
}

/* The layout as the GPU takes it: one array of near lists for all segments,
 * each segment's coarse lists followed by its local lists (when it has them). */
static int open_layout(psa_engine *e, char *msg, size_t len)
{
    const psa_layout *l = e->layout;
    gs_segment seg[DET_SEGMENTS];
    uint64_t n_first = 0, n_near = 0;
    for (unsigned s = 0; s < DET_SEGMENTS; s++) {
        const psa_segment *g = &l->seg[s];
        n_first += g->n_coarse + 1;
        n_near += g->near_first[g->n_coarse];
        if (g->local_first) {
            n_first += g->n_points + 1;
            n_near += g->local_first[g->n_points];
        }
    }
    uint32_t *first = malloc(n_first * sizeof *first), *near = malloc((n_near + 1) * sizeof *near);
    int rc = GPU_NOMEM;
    snprintf(msg, len, "no host memory for the GPU's copy of the neighbourhoods");
    if (first && near) {
        uint64_t f = 0, k = 0;
        for (unsigned s = 0; s < DET_SEGMENTS; s++) {
            const psa_segment *g = &l->seg[s];
            seg[s] = (gs_segment){ g->offset, g->pm_offset, g->n_points, g->n_coarse, g->pad,
                                   g->n_mask, (uint32_t)f };
            append_lists(g->near_first, g->near, g->n_coarse, first, near, &f, &k);
            if (g->local_first)
                append_lists(g->local_first, g->local, g->n_points, first, near, &f, &k);
        }
        int i16 = e->p.data == PSA_I16;
        gs_basis b = { DET_SEGMENTS, l->window, l->max_k, seg, i16,
                       i16 ? (const void *)l->i16 : l->f32, i16 ? (const void *)l->i16pm : l->f32pm,
                       l->values, l->pm_values, first, near, n_first, n_near };
        rc = gs_gpu_create((gs_gpu **)&e->gpu, e->p.gpu, &b, e->pw, msg, len);
        if (rc == GPU_OK) {
            set_prune(e, msg, len);
            set_guess(e, msg, len);
        }
    }
    free(first);
    free(near);
    return rc;
}

/* gs_gpu_search's host work (the sort, the copies of measured values, the answers), its parts run by the engine's threads. */
static void run_parts(void *ctx, gs_task *task, void *arg, size_t parts)
{
    const psa_engine *e = ctx;
#pragma omp parallel for schedule(static) num_threads(e->p.threads > 0 ? e->p.threads : omp_get_max_threads())
    for (long k = 0; k < (long)parts; k++)
        task(arg, (size_t)k, parts);
}

static int search(psa_engine *e, psa_batch *b, char *msg, size_t len)
{
    const int mode = b->local ? GS_LOCAL : e->p.mode == PSA_ADAPTIVE ? GS_ADAPTIVE : GS_FULL;
    return gs_gpu_search(e->gpu, b->q, b->n, b->meas, run_parts, e, mode, msg, len);
}

static void close_gpu(psa_engine *e)
{
    pb_gpu_destroy(e->block);
    gs_gpu_destroy(e->gpu);
    e->block = NULL;
    e->gpu = NULL;
}

static void times(const psa_engine *e, psa_gpu_times *t)
{
    gs_gpu_times(e->gpu, t);
}

const psa_backend psa_backend_cuda = {
    .name = "GPU", .search = search, .probe = gpu_probe, .open = open_layout, .close = close_gpu, .times = times,
};
