/* tracker_gpu.h: the C interface of the GPU tracking path (kernels/tracker.cu): resident model, batched launches, results back. */
#ifndef NARWHAL_TRACKER_GPU_H
#define NARWHAL_TRACKER_GPU_H

#include <stddef.h>

#include "gpu_device.h"
#include "tracker_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A tr_gpu holds the model on the device for its whole life (parameters and
 * crystals in constant memory, the physics and permutation tables in global
 * memory), two streams, and buffers that grow to the largest batch seen.
 * tr_gpu_track moves a batch in chunks alternating between the streams, so
 * that one chunk's copies overlap another's kernels:
 *   clustering   one thread per event, each pair's linking step found once
 *                (events over 33 points: every pair at every step), or
 *                candidates computed by the CPU,
 *   scoring      eight lanes per candidate: its germanium paths, then its
 *                orderings searched depth-first with the exact bound, shared
 *                out among the lanes, which share a bound (tr_search),
 *                reduced by shuffles,
 *   selection    one thread per event; with retrack, then the second pass
 *                (the free points clustered by one thread per event, their
 *                candidates scored as above, taken) and the single points.
 * It returns when the results are in the caller's arrays.  Every call returns
 * a gpu_status (gpu_device.h) and, on failure, a sentence in msg.  Not
 * thread-safe, and one tr_gpu per device at a time (the model lives in its
 * constant memory).
 */

typedef struct tr_gpu tr_gpu;

/* Milliseconds spent in each phase of the last tr_gpu_track with timing on. */
typedef struct tr_gpu_times {
    double upload, cluster, score, select, download;
} tr_gpu_times;
GPU_LAYOUT(sizeof(tr_gpu_times) == 40 && offsetof(tr_gpu_times, cluster) == 8 &&
           offsetof(tr_gpu_times, score) == 16 && offsetof(tr_gpu_times, select) == 24 &&
           offsetof(tr_gpu_times, download) == 32);

/* The model uploaded to the calling thread's device (gpu_select's; device 0
 * unless selected), which every later call selects.  On failure *g may be
 * set: tr_gpu_destroy it. */
int tr_gpu_create(tr_gpu **g, const tr_model *m, char *msg, size_t len);
void tr_gpu_destroy(tr_gpu *g);

/* Tracks batch b into o.  cands/cinfo: candidates already found on the CPU
 * (tracker_cpu_cluster), or NULL to cluster on the GPU.  times: NULL, or
 * per-phase timings (the phases then run one after the other, unoverlapped). */
int tr_gpu_track(tr_gpu *g, const tr_batch *b, const tr_cand *cands, const tr_event_info *cinfo,
                 tr_out *o, tr_gpu_times *times, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
