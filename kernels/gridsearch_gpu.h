/* gridsearch_gpu.h: the C interface of the GPU grid search (kernels/gridsearch.cu): resident basis, batches of searches, answers. */
#ifndef NARWHAL_GRIDSEARCH_GPU_H
#define NARWHAL_GRIDSEARCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gridsearch_fom.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* A segment's place in the uploaded arrays (see actors/psa/psa_layout.h). */
typedef struct gs_segment {
    uint64_t offset;     /* k-major block: value (k, col) at values[offset + k * pad + col] */
    uint64_t pm_offset;  /* point-major: value (k, col) at pm[pm_offset + col * n_mask * window + k] */
    uint32_t n_points, n_coarse, pad, n_mask;
    uint32_t near_first; /* this segment's first entry in near_first[] (one per coarse column, plus one) */
} gs_segment;

/* What gs_gpu_create uploads: float values, or int16 values when i16. */
typedef struct gs_basis {
    uint32_t n_segments, window, max_k;
    const gs_segment *seg;
    int i16;
    const void *values, *pm;
    uint64_t n_values, n_pm;
    const uint32_t *near_first, *near; /* columns near each coarse column, per segment */
    uint64_t n_near_first, n_near;
} gs_basis;

enum gs_gpu_status {
    GS_GPU_OK = 0,
    GS_GPU_NODEV = 1, /* no usable CUDA device of that number */
    GS_GPU_NOMEM = 2, /* a device or pinned-host allocation failed */
    GS_GPU_FAIL = 3,  /* any other CUDA error, or a layout the kernels cannot take */
};

typedef struct gs_gpu gs_gpu;

/* GS_GPU_OK and a description of device `device` ("NVIDIA H100 80GB HBM3,
 * 132 SMs, compute 9.0, 79.1 GiB"), or GS_GPU_NODEV and why not. */
int gs_gpu_probe(int device, char *msg, size_t len);

/* Uploads the basis and the |d|^p tables once; msg then says how much is resident. */
int gs_gpu_create(gs_gpu **g, int device, const gs_basis *b, const gs_pow *pw, char *msg,
                  size_t len);
void gs_gpu_destroy(gs_gpu *g);

/*
 * Answers n searches.  meas holds their measured values (float, or int16 for
 * an int16 basis), best in gs_gpu_pinned's buffer: they go to the device in
 * one copy.  The searches are sorted by segment on the host and sent in a
 * few chunks, each one transfer in, one launch per stage (full, or coarse
 * then fine for adaptive), one transfer of the answers back; the chunks
 * alternate between two streams so that copies overlap compute.
 * Only the answers come back: the argmin is taken on the device.
 */
int gs_gpu_search(gs_gpu *g, gs_query *q, size_t n, const void *meas, int adaptive, char *msg,
                  size_t len);
/* A pinned host buffer of at least `bytes`, owned by g and kept for the next
 * calls (grown when asked for more): measured values placed there reach the
 * device in one asynchronous copy.  NULL when pinned memory runs out. */
void *gs_gpu_pinned(gs_gpu *g, size_t bytes);

/* The milliseconds the last gs_gpu_search spent in kernels (summed over its chunks). */
double gs_gpu_kernel_ms(const gs_gpu *g);

/* Totals since gs_gpu_create: calls of gs_gpu_search, chunks launched, seconds
 * packing searches into pinned memory (host), in kernels (device) and waiting
 * for chunks to finish (host). */
typedef struct gs_gpu_time {
    unsigned long long calls, chunks;
    double pack_s, kernel_s, wait_s;
} gs_gpu_time;
void gs_gpu_times(const gs_gpu *g, gs_gpu_time *t);

#ifdef __cplusplus
}
#endif
#endif
