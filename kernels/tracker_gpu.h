/* tracker_gpu.h: the C interface of the GPU tracking path (kernels/tracker.cu): resident model, batched launches, results back. */
#ifndef NARWHAL_TRACKER_GPU_H
#define NARWHAL_TRACKER_GPU_H

#include <stddef.h>

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
 *   clustering   one thread per event (or candidates computed by the CPU),
 *   scoring      eight lanes per candidate: its germanium paths, then all its
 *                orderings from the permutation table, reduced by shuffles,
 *   selection    one thread per event.
 * It returns when the results are in the caller's arrays.  Every call returns
 * a TR_GPU_* status and, on failure, a sentence in msg.  Not thread-safe, and
 * one tr_gpu per process at a time (the model lives in constant memory).
 */
enum tr_gpu_status {
    TR_GPU_OK = 0,
    TR_GPU_NODEV = 1, /* no usable CUDA device */
    TR_GPU_NOMEM = 2, /* a device or pinned allocation failed */
    TR_GPU_FAIL = 3,  /* any other CUDA error */
};

typedef struct tr_gpu tr_gpu;

/* Milliseconds spent in each phase of the last tr_gpu_track with timing on. */
typedef struct tr_gpu_times {
    double upload, cluster, score, select, download;
} tr_gpu_times;

/* TR_GPU_OK and a description of device 0, or TR_GPU_NODEV and why not. */
int tr_gpu_probe(char *msg, size_t len);
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
