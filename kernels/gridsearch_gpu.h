/* gridsearch_gpu.h: the C interface of the GPU grid search (kernels/gridsearch.cu): resident basis, batches of searches, answers. */
#ifndef NARWHAL_GRIDSEARCH_GPU_H
#define NARWHAL_GRIDSEARCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_device.h"
#include "gridsearch_fom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every call returns a gpu_status (gpu_device.h) and, on failure, a sentence in msg. */

/* Segments the kernels take (a crystal has DET_SEGMENTS). */
enum { GS_MAX_SEGMENTS = 64 };

/*
 * One search (the CPU path uses the same record): segment, the mask
 * channels it uses (bit c: mask channel c), the offset of its n_mask x
 * window measured values in the batch's value array; the answer is the best
 * column of the segment and its FoM.
 */
typedef struct gs_query {
    uint16_t segment;
    uint16_t use;
    uint32_t meas;
    uint32_t column;
    float fom;
} gs_query;
GPU_LAYOUT(sizeof(gs_query) == 16 && offsetof(gs_query, use) == 2 && offsetof(gs_query, meas) == 4 &&
           offsetof(gs_query, column) == 8 && offsetof(gs_query, fom) == 12);

/* A segment's place in the uploaded arrays (see actors/psa/psa_layout.h). */
typedef struct gs_segment {
    uint64_t offset;     /* k-major block: value (k, col) at values[offset + k * pad + col] */
    uint64_t pm_offset;  /* point-major: value (k, col) at pm[pm_offset + col * n_mask * window + k] */
    uint32_t n_points, n_coarse, pad, n_mask;
    uint32_t near_first; /* this segment's first entry in near_first[] (one per coarse column, plus one;
                            then, with local lists, one per column, plus one) */
} gs_segment;
GPU_LAYOUT(sizeof(gs_segment) == 40 && offsetof(gs_segment, pm_offset) == 8 &&
           offsetof(gs_segment, n_points) == 16 && offsetof(gs_segment, n_coarse) == 20 &&
           offsetof(gs_segment, pad) == 24 && offsetof(gs_segment, n_mask) == 28 &&
           offsetof(gs_segment, near_first) == 32);

/* What gs_gpu_create uploads: float values, or int16 values when i16. */
typedef struct gs_basis {
    uint32_t n_segments, window, max_k;
    const gs_segment *seg;
    int i16;
    const void *values, *pm;
    uint64_t n_values, n_pm;
    const uint32_t *near_first, *near; /* columns near each coarse column, then the local lists, per segment */
    uint64_t n_near_first, n_near;
} gs_basis;
GPU_LAYOUT(sizeof(gs_basis) == 96 && offsetof(gs_basis, window) == 4 && offsetof(gs_basis, max_k) == 8 &&
           offsetof(gs_basis, seg) == 16 && offsetof(gs_basis, i16) == 24 &&
           offsetof(gs_basis, values) == 32 && offsetof(gs_basis, pm) == 40 &&
           offsetof(gs_basis, n_values) == 48 && offsetof(gs_basis, n_pm) == 56 &&
           offsetof(gs_basis, near_first) == 64 && offsetof(gs_basis, near) == 72 &&
           offsetof(gs_basis, n_near_first) == 80 && offsetof(gs_basis, n_near) == 88);

typedef struct gs_gpu gs_gpu;

/* Uploads the basis (1 to GS_MAX_SEGMENTS segments) and the |d|^p tables
 * once to device `device`; msg then says how much is resident. */
int gs_gpu_create(gs_gpu **g, int device, const gs_basis *b, const gs_pow *pw, char *msg,
                  size_t len);
void gs_gpu_destroy(gs_gpu *g);

/* Work cut in parts: task(arg, k, parts) for each k in [0, parts), every
 * part apart from the others.  gs_gpu_search hands its runner its host work
 * of many searches (the sort, the copies of measured values, the answers),
 * to run the parts in parallel where the caller can. */
typedef void gs_task(void *arg, size_t part, size_t parts);
typedef void gs_runner(void *ctx, gs_task *task, void *arg, size_t parts);

/* What a search computes (gs_gpu_search's and gs_resident_launch's mode):
 * every point (GS_FULL); the coarse points, then the points near the best
 * (GS_ADAPTIVE); the points of the local list of the column each search
 * holds on input (GS_LOCAL: the PSA's PSA_LOCAL, psa_layout.h). */
enum { GS_FULL, GS_ADAPTIVE, GS_LOCAL };

/*
 * Answers n searches; meas holds their measured values at each search's
 * offset (for an int16 basis quantised as they are packed: gs_quantise, the
 * values the CPU's int16 search takes).  The searches are sorted by
 * segment on the host and sent in a few chunks (the first ones small, so
 * that the device starts early), each packed with its
 * measured values into pinned memory (run(ctx, ...) runs the host's parts
 * of that work; NULL: the calling thread does), one transfer in, one launch per stage
 * (full, coarse then fine for adaptive, fine for local), one transfer of the answers back;
 * the chunks alternate between two streams, so that one chunk's packing and
 * copies overlap the previous one's kernels.  Only the answers come back:
 * the argmin is taken on the device.
 */
int gs_gpu_search(gs_gpu *g, gs_query *q, size_t n, const float *meas, gs_runner *run, void *ctx, int mode,
                  char *msg, size_t len);

/* The full search pruned (kernels/gridsearch.cu's search_tiles_pruned; off
 * after gs_gpu_create): the same answers and bits, fewer FoMs computed.  A
 * setting of g alone (instances keep their own gs_gpu), for gs_gpu_search's
 * and gs_resident_launch's full searches alike (the PSA's GPUPrune).  The
 * bound per value from gridsearch_fom.h's table of its exponent (256 floats,
 * summed as the FoM sums) or of its exponent and top mantissa bits (2,048
 * entries in fixed point, gs_lb_fixed, summed exactly in integers: tighter,
 * fewer FoMs; for a window of under 4,000 samples), or with no table
 * (GS_PRUNE_LOG: gs_log_term, Mitchell's logarithm, four instructions a
 * value and no shared-memory read; for p < 2 and a basis of values under
 * GS_LOG_VALUE_MAX, its first setting checks the polynomial, about 0.1 s),
 * or a 1-byte table read with no index arithmetic (GS_PRUNE_BYTE, gs_lb_byte),
 * or Mitchell's logarithms summed over groups of samples, one exponential a
 * group (GS_PRUNE_GEO: the means' inequality, gs_geo_bound_make; as
 * GS_PRUNE_LOG's conditions, and a window and staged rows of whole groups).
 * GPU_FAIL for another mode, where the bound does not hold, or when the
 * device lacks the kernel's shared memory (nothing changes). */
enum { GS_PRUNE_OFF, GS_PRUNE_EXPONENT, GS_PRUNE_FINE, GS_PRUNE_LOG, GS_PRUNE_BYTE, GS_PRUNE_GEO, GS_PRUNE_MODES };
int gs_gpu_set_prune(gs_gpu *g, int mode);

/* The pruned full search's first step (off after gs_gpu_create): while a
 * search of a tile has no FoM yet, the tile sums its step's bounds with no
 * limit, gives each search's column of least bound its FoM, and bounds the
 * step's other columns against it (search_tiles_pruned's guess_step); off:
 * such a step is computed exactly, every column's FoM.  The same answers and
 * bits either way.  On the H200 (sample_runs/psa/h200-lanes12, since the
 * listed pairs are scored a few lanes each) on makes large batches faster
 * with GS_PRUNE_LOG (9.22-9.78 M searches/s in the kernels against
 * 8.70-9.00 M) and leaves the replay chain's device search step a little
 * slower with GS_PRUNE_BYTE (1.078-1.080 s against 1.040-1.041 s). */
void gs_gpu_set_guess(gs_gpu *g, int on);

/* The milliseconds of the last gs_gpu_search's kernels: from its first
 * chunk's kernel start to its last chunk's kernel end (the chunks' kernels
 * overlap on the two streams, so their sum would count time twice). */
double gs_gpu_kernel_ms(const gs_gpu *g);

/* The milliseconds of the last gs_gpu_search from its call to its first
 * chunk's kernel start (sorting, the first chunk's packing and upload), on
 * the device's clock. */
double gs_gpu_lead_ms(const gs_gpu *g);

/* Totals since gs_gpu_create: calls of gs_gpu_search, chunks launched, seconds
 * packing searches into pinned memory (host), in kernels (device) and waiting
 * for chunks to finish (host). */
typedef struct gs_gpu_time {
    unsigned long long calls, chunks;
    double pack_s, kernel_s, wait_s;
} gs_gpu_time;
GPU_LAYOUT(sizeof(gs_gpu_time) == 40 && offsetof(gs_gpu_time, chunks) == 8 &&
           offsetof(gs_gpu_time, pack_s) == 16 && offsetof(gs_gpu_time, kernel_s) == 24 &&
           offsetof(gs_gpu_time, wait_s) == 32);
void gs_gpu_times(const gs_gpu *g, gs_gpu_time *t);

#ifdef __cplusplus
}
#endif
#endif
