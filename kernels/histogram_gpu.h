/* histogram_gpu.h: the C interface of the GPU histogram path (kernels/histogram.cu): resident counts, fills, download. */
#ifndef NARWHAL_HISTOGRAM_GPU_H
#define NARWHAL_HISTOGRAM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_device.h"
#include "histogram_bin.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One histo_gpu holds a set's counts on the device (64-bit, one per slot of
 * histogram_bin.h), a stream, and two pinned staging buffers.  Counts stay on
 * the device for the whole run and are copied back only by
 * histo_gpu_download.  Fills are asynchronous: errors of a launch may be
 * reported by a later call; histo_gpu_sync and histo_gpu_download report
 * everything that happened before them.
 *
 * Every call returns a gpu_status (gpu_device.h) and, on failure, writes a
 * sentence into msg (len bytes).  Not thread-safe: one caller per histo_gpu.
 */
typedef struct histo_gpu histo_gpu;

/* Counts for `slots` slots, zeroed, on the calling thread's device
 * (gpu_select's; device 0 unless selected), which every later call selects. */
int histo_gpu_create(histo_gpu **g, uint64_t slots, char *msg, size_t len);
void histo_gpu_destroy(histo_gpu *g);
int histo_gpu_clear(histo_gpu *g, char *msg, size_t len);

/* Entries of n groups in host memory (e[i] for groups[i]; empty ones are
 * skipped): copied into a pinned buffer, moved to the device in one transfer
 * and counted with one launch per group.  Returns once the host arrays may be
 * reused; the device work overlaps whatever the caller does next. */
int histo_gpu_fill_host(histo_gpu *g, const histo_group *groups, const histo_entries *e, size_t n,
                        char *msg, size_t len);

/* Entries already in device memory: the launch alone (for benchmarks). */
int histo_gpu_fill_device(histo_gpu *g, const histo_group *grp, const histo_entries *dev,
                          char *msg, size_t len);

/* Raw 8-bit samples in device memory, all for instance `inst` of a 1D group. */
int histo_gpu_fill_u8_device(histo_gpu *g, const histo_group *grp, uint32_t inst,
                             const uint8_t *dev, size_t n, char *msg, size_t len);

/* How a group is counted: "shared memory, 32 interleaved copies, 33 KiB per block" or
 * "global atomics, warp-aggregated". */
void histo_gpu_plan_text(const histo_gpu *g, const histo_group *grp, char *out, size_t len);

/* Waits for all queued work. */
int histo_gpu_sync(histo_gpu *g, char *msg, size_t len);

/* Waits, then copies every slot's count to host[0 .. slots). */
int histo_gpu_download(histo_gpu *g, uint64_t *host, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
