/* gridsearch_resident.h: the grid search for searches whose records and measured values are already on the device (the PSA's GPU block, kernels/psa_block.cu); CUDA C++ only. */
#ifndef NARWHAL_GRIDSEARCH_RESIDENT_H
#define NARWHAL_GRIDSEARCH_RESIDENT_H

#include <cuda_runtime.h>

#include "gridsearch_gpu.h"

/* Float values only: false for an int16 basis (Data int16 searches round by round). */
bool gs_resident_ok(const gs_gpu *g);

/* The CUDA device g's basis lives on. */
int gs_resident_device(const gs_gpu *g);

/* A bound on the bytes of the tile plan of n searches. */
size_t gs_resident_plan_bytes(const gs_gpu *g, size_t n);

/* The tiles of n searches sorted by segment (full search, or the coarse
 * stage of the adaptive one; GS_LOCAL has none), written into plan;
 * returns their count.  -1 (as size_t) when there is no host memory. */
size_t gs_resident_plan(const gs_gpu *g, const gs_query *sorted, size_t n, int mode, void *plan);

/*
 * Some of a planned list's searches picked out on the device, in order (so
 * still sorted by segment): n of them; segment s's were searches first0[s]
 * .. first0[s + 1] of the planned list and are now searches first[s] ..
 * first[s] + count[s].  A tile of the plan then takes the searches at the
 * same places of its segment's part, and tiles past the part's end stop at
 * once.
 */
typedef struct gs_remap {
    uint32_t n;
    uint32_t first0[GS_MAX_SEGMENTS + 1], first[GS_MAX_SEGMENTS], count[GS_MAX_SEGMENTS];
} gs_remap;

/* Queues on st the search of the n sorted searches d_q (their measured
 * values at d_meas), tiled by d_plan (n_tiles of gs_resident_plan's, copied
 * to the device): answer[i] = FoM bits << 32 | column, the lower FoM, then
 * the lower column, as gs_gpu_search finds it (pruned as gs_gpu_set_prune
 * set g, the full search only; mode: gridsearch_gpu.h's GS_*, GS_LOCAL
 * around each d_q[i].column).  With d_remap (on the
 * device), d_plan is the plan of a longer list and d_q the searches picked
 * out of it (n: that list's length, a bound). */
cudaError_t gs_resident_launch(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                               const gs_query *d_q, size_t n, const float *d_meas,
                               unsigned long long *d_answer, int mode, const gs_remap *d_remap);

/* gs_resident_launch of a full search (GS_FULL) whose searches each name a
 * column on input (d_q[i].column; one past the segment's: none): every
 * answer starts as that column's FoM, not as none, so the pruned search has
 * a bound from its first step (the PSA's refinement: a search again at a
 * moved start, seeded with the column it answered before).  The seed is one
 * of the columns, computed as the search computes it: the same answers and
 * bits as gs_resident_launch. */
cudaError_t gs_resident_launch_seeded(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                                      const gs_query *d_q, size_t n, const float *d_meas,
                                      unsigned long long *d_answer, const gs_remap *d_remap);

#endif
