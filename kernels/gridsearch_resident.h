/* gridsearch_resident.h: the grid search for searches whose records and measured values are already on the device (the PSA's GPU block, kernels/psa_block.cu); CUDA C++ only. */
#ifndef NARWHAL_GRIDSEARCH_RESIDENT_H
#define NARWHAL_GRIDSEARCH_RESIDENT_H

#include <cuda_runtime.h>

#include "gridsearch_gpu.h"

/* Float values only: false for an int16 basis (Data int16 searches round by round). */
bool gs_resident_ok(const gs_gpu *g);

/* A bound on the bytes of the tile plan of n searches. */
size_t gs_resident_plan_bytes(const gs_gpu *g, size_t n);

/* The tiles of n searches sorted by segment (full search, or the coarse
 * stage of the adaptive one), written into plan; returns their count.  -1
 * (as size_t) when there is no host memory. */
size_t gs_resident_plan(const gs_gpu *g, const gs_query *sorted, size_t n, int adaptive, void *plan);

/* Queues on st the search of the n sorted searches d_q (their measured
 * values at d_meas), tiled by d_plan (n_tiles of gs_resident_plan's, copied
 * to the device): answer[i] = FoM bits << 32 | column, the lower FoM, then
 * the lower column, as gs_gpu_search finds it. */
cudaError_t gs_resident_launch(const gs_gpu *g, cudaStream_t st, const void *d_plan, size_t n_tiles,
                               const gs_query *d_q, size_t n, const float *d_meas,
                               unsigned long long *d_answer, int adaptive);

#endif
